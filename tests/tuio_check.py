#!/usr/bin/env python3
"""Turns `oscdump -L PORT` output (liblo-tools: a TUIO client nobody here
wrote) into per-fseq states and checks them against a truth.json written by
build/tabletrack-scenes, or just prints them.

    tuio_check.py states OSCDUMP.txt                 # one JSON line per fseq
    tuio_check.py score OSCDUMP.txt TRUTH.json REPEAT BLANK [--min-recall R]
        [--max-fp N] [--max-wrong N] [--max-pos-p95 PX] [--max-angle-p95 DEG] [--min-finger-recall R]
        [--min-edge-recall R]

Scoring follows ../shared/spec/testing.md §3: a fiducial is found when an
object with the right ID lies within 0.3 x its size of the true centre; the
state of scene i is the one after its REPEAT-th copy (fseq = (REPEAT+BLANK)*i
+ REPEAT). A symbol marked "occluded" in truth (a hand over its ring) is left
out: not counted in recall, and an object reported on it is neither found
nor a false positive. A symbol marked "shadow_edge" (a hard shadow's edge
crosses it) also counts in "edge_symbols" and "edge_recall", the recall of
exactly those symbols. Standard library only.
"""
import json, math, shlex, sys


def parse(path):
    state = {"2Dobj": {}, "2Dcur": {}, "2Dblb": {}}
    alive = {k: set() for k in state}
    frames = {}
    for line in open(path, errors="replace"):
        parts = line.split(None, 3)
        if len(parts) < 4 or not parts[1].startswith("/tuio/"):
            continue
        prof = parts[1][6:]
        if prof not in state:
            continue
        tags = parts[2]
        args = shlex.split(parts[3])
        kind = args[0]
        if kind == "alive":
            alive[prof] = set(int(a) for a in args[1:])
            for sid in list(state[prof]):
                if sid not in alive[prof]:
                    del state[prof][sid]
        elif kind == "set":
            # 2Dblb set: TUIO 1.1's 11 floats (x y a w h f X Y A m r), as the
            # daemon sends them (README, "Note on 2Dblb").
            expect = {"2Dobj": "siiffffffff", "2Dcur": "sifffff", "2Dblb": "si" + "f" * 11}[prof]
            if tags != expect:
                raise SystemExit("bad type tags %s for %s set" % (tags, prof))
            sid = int(args[1])
            vals = [float(a) for a in args[2:]]
            state[prof][sid] = vals
        elif kind == "fseq":
            f = int(args[1])
            if f == -1:
                continue
            snap = frames.setdefault(f, {"obj": {}, "cur": {}, "blb": {}})
            key = {"2Dobj": "obj", "2Dcur": "cur", "2Dblb": "blb"}[prof]
            snap[key] = {sid: list(v) for sid, v in state[prof].items() if sid in alive[prof]}
    return frames


def pct(xs, q):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def score(frames, truth, repeat, blank):
    W, H = truth["w"], truth["h"]
    found = total = fp = wrong = occluded = 0
    e_found = e_total = 0
    pos, ang = [], []
    f_found = f_total = f_fp = 0
    for i, tf in enumerate(truth["frames"]):
        st = frames.get((repeat + blank) * i + repeat, {"obj": {}, "cur": {}})
        objs = [(int(v[0]), v[1] * W, v[2] * H, v[3]) for v in st["obj"].values()]
        used = set()
        for t in tf["fiducials"]:
            if t.get("occluded"):
                occluded += 1
                for k, (cid, x, y, a) in enumerate(objs):
                    if k not in used and math.hypot(x - t["x"], y - t["y"]) <= 0.3 * t["size"]:
                        used.add(k)
                        break
                continue
            total += 1
            e_total += bool(t.get("shadow_edge"))
            best = None
            for k, (cid, x, y, a) in enumerate(objs):
                d = math.hypot(x - t["x"], y - t["y"])
                if d <= 0.3 * t["size"] and k not in used:
                    if cid == t["id"]:
                        best = (k, d, a)
                        break
                    wrong += 1
            if best:
                k, d, a = best
                used.add(k)
                found += 1
                e_found += bool(t.get("shadow_edge"))
                pos.append(d)
                da = abs((a - t["angle"] + math.pi) % (2 * math.pi) - math.pi)
                ang.append(math.degrees(da))
        fp += len([k for k in range(len(objs)) if k not in used])
        curs = [(v[0] * W, v[1] * H) for v in st["cur"].values()]
        cused = set()
        for t in tf.get("fingers", []):
            f_total += 1
            for k, (x, y) in enumerate(curs):
                if k not in cused and math.hypot(x - t["x"], y - t["y"]) <= t["r"]:
                    cused.add(k)
                    f_found += 1
                    break
        f_fp += len(curs) - len(cused)
    return {"symbols": total, "occluded": occluded, "recall": found / total if total else 0.0, "wrong_id": wrong,
            "edge_symbols": e_total, "edge_recall": e_found / e_total if e_total else None,
            "false_pos": fp, "pos_median": pct(pos, 0.5), "pos_p95": pct(pos, 0.95),
            "angle_median": pct(ang, 0.5), "angle_p95": pct(ang, 0.95),
            "fingers": f_total, "finger_recall": f_found / f_total if f_total else None,
            "finger_fp": f_fp}


def main():
    if sys.argv[1] == "states":
        for f, st in sorted(parse(sys.argv[2]).items()):
            print(json.dumps({"fseq": f, **st}))
        return 0
    frames = parse(sys.argv[2])
    truth = json.load(open(sys.argv[3]))
    r = score(frames, truth, int(sys.argv[4]), int(sys.argv[5]))
    print(json.dumps(r))
    opts = sys.argv[6:]
    ok = True
    def arg(name):
        return float(opts[opts.index(name) + 1]) if name in opts else None
    checks = [("--min-recall", lambda v: r["recall"] >= v, "recall"),
              ("--max-fp", lambda v: r["false_pos"] <= v, "false_pos"),
              ("--max-wrong", lambda v: r["wrong_id"] <= v, "wrong_id"),
              ("--max-pos-p95", lambda v: r["pos_p95"] < v, "pos_p95"),
              ("--max-angle-p95", lambda v: r["angle_p95"] < v, "angle_p95"),
              ("--min-finger-recall", lambda v: (r["finger_recall"] or 0) >= v, "finger_recall"),
              ("--min-edge-recall", lambda v: r["edge_recall"] is not None and r["edge_recall"] >= v, "edge_recall")]
    for name, fn, key in checks:
        v = arg(name)
        if v is not None and not fn(v):
            print("FAIL: %s = %s, wanted %s %s" % (key, r[key], name, v))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
