#!/bin/sh
# End to end on data the project makes itself: build/tabletrack-scenes draws
# scenes of our own symbol set with known truth; tabletrack --once processes
# them (each scene three times, then two blank frames, as
# ../shared/tools/score.py does); oscdump (liblo-tools, a client nobody here
# wrote) decodes the UDP stream; tests/tuio_check.py scores it.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
command -v oscdump >/dev/null || { echo "oscdump missing (liblo-tools)"; exit 77; }
T=$(mktemp -d); trap 'kill $e2e_dump 2>/dev/null; rm -rf "$T"' EXIT
fail=0

# scene NAME SCENE-OPTIONS -- TRACKER-OPTIONS -- CHECK-OPTIONS
run_set() {
	name=$1; shift
	sopts=""; while [ "$1" != "--" ]; do sopts="$sopts $1"; shift; done; shift
	topts=""; while [ "$1" != "--" ]; do topts="$topts $1"; shift; done; shift
	"$B/tabletrack-scenes" -o "$T/$name" --frames 10 $sopts >/dev/null || { echo "FAIL: scenes $name"; fail=1; return; }
	e2e_scene_seq "$T/$name" "$T/$name-seq"
	e2e_once_to_osc "$T/$name-seq" "$T/$name.osc" $topts || { echo "FAIL: tracker exit $? on $name"; fail=1; }
	printf '%-10s ' "$name"
	python3 tests/tuio_check.py score "$T/$name.osc" "$T/$name/truth.json" 3 2 $* || fail=1
}

run_set std --seed 11 --fingers 4 -- --finger-size 18 -- \
	--min-recall 0.99 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2 --min-finger-recall 0.9
run_set small --seed 12 --fids 10 --fid-size 40:56 --fingers 0 -- -- --min-recall 0.95 --max-fp 0
run_set blur --seed 13 --blur 1.6 --fingers 0 -- -- --min-recall 0.8 --max-fp 0
run_set hd --seed 14 --size 1280x720 --fids 14 --fid-size 80:130 --fingers 0 -- -- --min-recall 0.99 --max-fp 0
run_set clutter --seed 15 --clutter 30 --fingers 0 -- -- --min-recall 0.99 --max-fp 0
# --drawings: symbols drawn from reacTIVision's printed pictures (when the
# shared data is there); pictures that are not the set's IDs are refused
# with the picture named, and nothing is written.
RV=${TABLETRACK_SHARED:-../shared}/fiducials/reactivision
if [ -d "$RV/symbols/mini" ]; then
	run_set drawn --seed 16 --trees "$RV/mini.trees" --drawings "$RV/symbols/mini" --fids 8 --fid-size 40:80 \
		--fingers 0 -- --trees "$RV/mini.trees" -- --min-recall 0.99 --max-wrong 0 --max-fp 0 --max-pos-p95 1 \
		--max-angle-p95 2
	if "$B/tabletrack-scenes" -o "$T/refused" --trees "$RV/mini.trees" --drawings "$RV/symbols/default" \
		>/dev/null 2>"$T/refused.err" || ! grep -q "fid_000.png: unreadable, or not read as ID 0" "$T/refused.err" ||
		[ -e "$T/refused/truth.json" ]; then
		echo "FAIL: --drawings with pictures of another set"; cat "$T/refused.err"; fail=1
	else
		echo "ok: --drawings refuses pictures of another set"
	fi
fi
exit $fail
