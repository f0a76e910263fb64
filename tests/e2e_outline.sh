#!/bin/sh
# Outlines, touch versus hover and hands (issue 16) on diffused-illumination
# scenes made here by build/tabletrack-scenes --preset di (hands with sharp
# touching and blurred hovering fingertips, palms laid flat, lone tips):
#  1. detections (--once --dump) scored by tests/lib/di_score.py against the
#     truth: touch precision and recall, no cursor on a palm or an arm, the
#     median distance of outline points to the true outline; floors at the
#     figures measured when this was written (README, "Outlines, touch and
#     hands");
#  2. the TUIO 2.0 stream of the same scenes, each frame shown three times
#     so the tracker gives sessions, read by tests/lib/osc_contours.py (its
#     own OSC decoder): /tuio2/ocg messages arrive, well formed, each in its
#     session's bundle after the session's ptr/bnd, and touching and hovering
#     fingers go out as ptr with pressure 1 and 0.
# The reference TUIO 2.0 client receiving contours is tests/e2e_clients.sh
# (its daemon runs with --contours).
B=${BUILD:-build}
[ -x "$B/tabletrack" ] && [ -x "$B/tabletrack-scenes" ] || { echo "FAIL: $B/tabletrack(-scenes) not built"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "python3 missing: skipped"; exit 77; }
T=$(mktemp -d); trap '[ -n "$KEEP" ] || rm -rf "$T"' EXIT
L=$(dirname "$0")/lib

"$B/tabletrack-scenes" -o "$T/di" --preset di --frames 40 --seed 11 --format pgm >/dev/null ||
	{ echo "FAIL: tabletrack-scenes --preset di"; exit 1; }
# A DI table wants a local-mean threshold (a hand's flat palm is white, the
# dark table black) and the outline stage's options.
OPTS="--threshold mean --mean-radius 20 --mean-bias 20 --gate 30 --finger-size 18 --hands
 --touch-sharpness 0.3 --hover-pointers --contours --blob-min 20 --blob-max 600"

mkdir "$T/dump"
# shellcheck disable=SC2086
"$B/tabletrack" --once --headless --source "folder:$T/di" $OPTS --tuio udp:127.0.0.1:9,tuio2 \
	--dump "$T/dump" -q >"$T/once.log" 2>&1 || { cat "$T/once.log"; echo "FAIL: daemon --once"; exit 1; }
python3 "$L/di_score.py" "$T/di/truth.json" "$T/dump" --min-precision 0.98 --min-recall 0.98 \
	--max-palm 0 --max-contour-median 0.8 || exit 1

mkdir "$T/seq"
i=0
for f in "$T"/di/frame_*.pgm; do
	for k in 1 2 3; do
		ln -s "$f" "$T/seq/$(printf 'frame_%05d.pgm' $i)"
		i=$((i + 1))
	done
done
PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$L/osc_contours.py" "$PORT" "$T/osc.json" 2 >"$T/osc.log" 2>&1 &
LISTENER=$!
n=0
while [ ! -f "$T/osc.json.ready" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
# shellcheck disable=SC2086
"$B/tabletrack" --headless --source "folder:$T/seq" --fps 60 $OPTS --tuio "udp:127.0.0.1:$PORT,tuio2" -q \
	>"$T/daemon.log" 2>&1 || { cat "$T/daemon.log"; echo "FAIL: daemon"; kill "$LISTENER"; exit 1; }
wait "$LISTENER"
rc=$?
cat "$T/osc.log"
[ $rc = 0 ] || { echo "FAIL: the TUIO 2.0 outlines"; exit 1; }
python3 - "$T/osc.json" <<'EOF' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
if s["ptr_touch"] == 0 or s["ptr_hover"] == 0:
    print("FAIL: expected touching and hovering pointers, got %d and %d" % (s["ptr_touch"], s["ptr_hover"]))
    sys.exit(1)
EOF
echo "ok"
