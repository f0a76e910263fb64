#!/bin/sh
# Tracking behaviour people rely on, on synthesised sequences watched through
# oscdump (a TUIO client nobody here wrote):
#  - objects drifting 7 px a frame, sharp for 10 frames, then streaked by
#    motion blur for 10 (their trees destroyed), then sharp again, keep one
#    session each and stay reported through the blur;
#  - objects at rest under sensor noise send no `set` after they appear
#    (dead band), while alive bundles go on every frame.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
command -v oscdump >/dev/null || { echo "oscdump missing (liblo-tools)"; exit 77; }
T=$(mktemp -d); trap 'kill $e2e_dump 2>/dev/null; rm -rf "$T"' EXIT
S="$B/tabletrack-scenes"
"$S" -o "$T/sharp" --frames 30 --fids 4 --move 7 --fingers 0 --seed 5 >/dev/null || exit 1
"$S" -o "$T/streak" --frames 30 --fids 4 --move 7 --motion 7 --fingers 0 --seed 5 >/dev/null || exit 1
mkdir "$T/seq"
for i in $(seq 0 29); do
	n=$(printf 'frame_%05d.png' "$i")
	src=sharp; [ "$i" -ge 10 ] && [ "$i" -lt 20 ] && src=streak
	ln -s "$T/$src/$n" "$T/seq/$n"
done
e2e_once_to_osc "$T/seq" "$T/seq.osc" || exit 1
"$S" -o "$T/rest" --frames 30 --fids 4 --move 0.01 --noise 4 --fingers 0 --seed 6 >/dev/null || exit 1
e2e_once_to_osc "$T/rest" "$T/rest.osc" || exit 1

python3 tests/tuio_check.py states "$T/seq.osc" >"$T/seq.jsonl" || exit 1
python3 - "$T/seq.jsonl" "$T/sharp/truth.json" "$T/rest.osc" <<'PY'
import json, math, sys
frames = {json.loads(l)["fseq"]: json.loads(l) for l in open(sys.argv[1])}
truth = json.load(open(sys.argv[2]))
W, H = truth["w"], truth["h"]
bad = False
sessions, seen = {}, {}
for i, tf in enumerate(truth["frames"]):
    st = frames.get(i + 1, {"obj": {}})
    for t in tf["fiducials"]:
        for sid, v in st["obj"].items():
            if int(v[0]) == t["id"] and math.hypot(v[1] * W - t["x"], v[2] * H - t["y"]) < 0.5 * t["size"]:
                sessions.setdefault(t["id"], set()).add(sid)
                seen[t["id"]] = seen.get(t["id"], 0) + 1
for t in truth["frames"][0]["fiducials"]:
    n, s = seen.get(t["id"], 0), sessions.get(t["id"], set())
    print("symbol %3d: reported in %d/30 frames, sessions %s" % (t["id"], n, sorted(s)))
    if len(s) != 1 or n < 29:
        bad = True
if bad:
    print("FAIL: a symbol lost its session or was not reported through the motion blur")
sets = alive = 0
first = None
for line in open(sys.argv[3]):
    if "/tuio/2Dobj" in line and '"set"' in line:
        sets += 1
    if "/tuio/2Dobj" in line and '"fseq"' in line:
        alive += 1
obj_sets = [l for l in open(sys.argv[3]) if "/tuio/2Dobj" in l and '"set"' in l]
print("resting objects: %d 2Dobj sets in %d bundles" % (len(obj_sets), alive))
if len(obj_sets) > 4 + 2:
    print("FAIL: resting objects jitter (more sets than the first appearance)")
    bad = True
if alive < 30:
    print("FAIL: alive/fseq bundles missing")
    bad = True
sys.exit(1 if bad else 0)
PY
