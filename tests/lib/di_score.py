"""Scores touch versus hover, palms and outlines on a DI scene set
(tabletrack-scenes --preset di) against the daemon's --dump output.
Standard library only.

    di_score.py TRUTH DUMPDIR [--min-precision P] [--min-recall R]
                [--max-palm N] [--max-contour-median PX]

A dump frame N (NNNNNN-detections.txt, from 1) is scene frame N - 1.
Per frame, every finger the daemon reports touching (hover=0, or no
touch test) is matched to the nearest truth fingertip within its radius
(each truth tip taken once):
  touch precision = touching reports on a touching truth tip / touching reports
  touch recall    = touching truth tips with a touching report / touching truth tips
  hover as touch  = touching reports on a hovering truth tip
  palm cursors    = touching reports on no truth tip but inside a hand
                    (palm, arm or a finger's length: within 2 px of the
                    union of its strokes)
  contour median  = median distance of the outline points (every contour
                    line) to the truth outline (the boundary of the union of
                    all hands' strokes and lone tips); points within 1.5 px
                    of the frame edge are left out (an arm cut by the edge).
Prints one line of figures; exits 1 when a floor is not met.
"""
import json
import math
import os
import re
import sys


def seg_dist(s, x, y):
    x0, y0, x1, y1, r = s
    dx, dy = x1 - x0, y1 - y0
    l2 = dx * dx + dy * dy
    t = ((x - x0) * dx + (y - y0) * dy) / l2 if l2 > 0 else 0.0
    t = 0.0 if t < 0 else 1.0 if t > 1 else t
    return math.hypot(x - x0 - t * dx, y - y0 - t * dy) - r


def union_dist(shapes, x, y):
    return min(seg_dist(s, x, y) for s in shapes) if shapes else 1e9


def parse_dump(path):
    fingers, contours = [], []
    kv = re.compile(r"(\w+)=(\S+)")
    for line in open(path):
        if line.startswith("finger "):
            d = dict(kv.findall(line))
            fingers.append((float(d["x"]), float(d["y"]), d.get("hover", "0") == "1"))
        elif line.startswith("contour "):
            pts = line.split("points=", 1)[1].split()
            contours.append([tuple(float(v) for v in p.split(",")) for p in pts])
    return fingers, contours


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    truth = json.load(open(argv[1]))
    dump = argv[2]
    floors = {"--min-precision": None, "--min-recall": None, "--max-palm": None, "--max-contour-median": None}
    i = 3
    while i + 1 < len(argv):
        floors[argv[i]] = float(argv[i + 1])
        i += 2
    w, h = truth["w"], truth["h"]
    tp = fp_hover = fp_palm = fp_other = n_touch_rep = n_touch_truth = n_touch_found = 0
    n_hover_truth = n_hover_found = 0
    errs = []
    frames = 0
    for fr in truth["frames"]:
        path = os.path.join(dump, "%06d-detections.txt" % (fr["frame"] + 1))
        if not os.path.exists(path):
            continue
        frames += 1
        rep, contours = parse_dump(path)
        tips = fr["fingers"]
        hands = [hd["segments"] for hd in fr.get("hands", [])]
        shapes = [s for hd in hands for s in hd] + [[t["x"], t["y"], t["x"], t["y"], t["r"]] for t in tips if t["hand"] < 0]
        n_touch_truth += sum(1 for t in tips if t["touch"])
        n_hover_truth += sum(1 for t in tips if not t["touch"])
        taken = set()
        pairs = []
        for k, (x, y, hover) in enumerate(rep):
            for j, t in enumerate(tips):
                d = math.hypot(x - t["x"], y - t["y"])
                if d <= t["r"]:
                    pairs.append((d, k, j))
        pairs.sort()
        match = {}
        for d, k, j in pairs:
            if k in match or j in taken:
                continue
            match[k] = j
            taken.add(j)
        for k, (x, y, hover) in enumerate(rep):
            j = match.get(k)
            if j is not None and not hover:
                n_touch_rep += 1
                if tips[j]["touch"]:
                    tp += 1
                    n_touch_found += 1
                else:
                    fp_hover += 1
            elif j is not None:
                n_hover_found += not tips[j]["touch"]
            elif not hover:
                n_touch_rep += 1
                if any(union_dist(hd, x, y) <= 2.0 for hd in hands):
                    fp_palm += 1
                else:
                    fp_other += 1
        for c in contours:
            for (x, y) in c:
                if x < 1.5 or y < 1.5 or x > w - 2.5 or y > h - 2.5:
                    continue
                errs.append(abs(union_dist(shapes, x, y)))
    prec = tp / n_touch_rep if n_touch_rep else 1.0
    rec = n_touch_found / n_touch_truth if n_touch_truth else 1.0
    errs.sort()
    med = errs[len(errs) // 2] if errs else float("nan")
    p90 = errs[int(len(errs) * 0.9)] if errs else float("nan")
    print("di: %d frames, touch precision %.3f recall %.3f (%d/%d tips, %d reports), hovering tips reported "
          "touching %d, cursors on palms/arms %d, other false touches %d, hovering tips found hovering %d/%d, "
          "contour points %d: median %.3f px, p90 %.3f px"
          % (frames, prec, rec, n_touch_found, n_touch_truth, n_touch_rep, fp_hover, fp_palm, fp_other,
             n_hover_found, n_hover_truth, len(errs), med, p90))
    bad = []
    if frames == 0:
        bad.append("no dump frames")
    if floors["--min-precision"] is not None and prec < floors["--min-precision"]:
        bad.append("touch precision %.3f < %.3f" % (prec, floors["--min-precision"]))
    if floors["--min-recall"] is not None and rec < floors["--min-recall"]:
        bad.append("touch recall %.3f < %.3f" % (rec, floors["--min-recall"]))
    if floors["--max-palm"] is not None and fp_palm > floors["--max-palm"]:
        bad.append("%d cursors on palms/arms > %d" % (fp_palm, floors["--max-palm"]))
    if floors["--max-contour-median"] is not None and not (med <= floors["--max-contour-median"]):
        bad.append("contour median %.3f px > %.3f" % (med, floors["--max-contour-median"]))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
