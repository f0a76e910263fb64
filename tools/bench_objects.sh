#!/bin/sh
# tools/bench_objects.sh - issue 17's figures, measured on the daemon
# itself: tabletrack-objects synthesises textured scenes (seed 17, 6
# objects, 8 scenes and a clutter scene, 1280x720), learns the objects
# and scores recognition on them with the backend the daemon would use;
# then build/tabletrack loops the scenes at BENCH_FPS (60) on the GPU path
# with --stats, alternating runs without and with --objects (pairs in the
# order off on, on off, off on, ...: a drift over the runs falls on both),
# and prints each pair's frame total, the change, the mean change, and
# the recognitions' latency and worker time. Numbers, not a test.
#
#     sh tools/bench_objects.sh [PAIRS [SECONDS]]   (default 3 pairs of 12 s)
#
# Settings (environment): BUILD=build (make CUDA=1 build/tabletrack
# build/tabletrack-objects; without a GPU the daemon runs the CPU path and
# the SIFT falls back to OpenCV when the build has it), BENCH_FPS=60.
set -u
PAIRS=${1:-3}
S=${2:-12}
B=${BUILD:-build}
FPS=${BENCH_FPS:-60}
for bin in tabletrack tabletrack-objects; do
	[ -x "$B/$bin" ] || { echo "no $B/$bin: make CUDA=1 $B/tabletrack $B/tabletrack-objects" >&2; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "machine: ${cpu:-unknown CPU}, $(nproc) logical CPUs; GPU: ${gpu:-none found (nvidia-smi)}"

mkdir "$T/scenes"
"$B/tabletrack-objects" synth "$T/scenes" --seed 17 --objects 6 --scenes 8 --clutter 1 >"$T/synth.log" 2>&1 ||
	{ cat "$T/synth.log" >&2; exit 1; }
while read -r name file id; do
	"$B/tabletrack-objects" learn "$name" "$file" --id "$id" --library "$T/lib.objects" >>"$T/learn.log" 2>&1 ||
		{ cat "$T/learn.log" >&2; exit 1; }
done <"$T/scenes/objects.txt"
"$B/tabletrack-objects" score "$T/scenes" --library "$T/lib.objects" | tail -n 1
mkdir "$T/frames"
cp "$T"/scenes/scene-* "$T/frames/"

# run NAME [OPTION]...: the daemon for S seconds; its --stats in $T/NAME.
run() {
	name=$1
	shift
	timeout -s TERM "$S" "$B/tabletrack" --source "folder:$T/frames" --loop --fps "$FPS" --stats --gpu auto \
		--tuio udp:127.0.0.1:9 "$@" >"$T/$name" 2>"$T/$name.err"
	grep -q 'tabletrack --stats' "$T/$name" || { echo "$name: no --stats from the daemon:" >&2; tail -n 5 "$T/$name.err" >&2; }
}
total() { awk 'index($0, "  frame total ") == 1 { n = split($0, a, /  +/); v = a[n - 1] } END { print (v == "" ? "-" : v) }' "$T/$1"; }

echo "daemon: $B/tabletrack --fps $FPS --loop --stats, $PAIRS pairs of $S s runs"
echo
echo "| pair | frame total without / with recognition (median ms) | change |"
echo "|---|---|---|"
i=1
while [ "$i" -le "$PAIRS" ]; do
	if [ $((i % 2)) = 1 ]; then
		run "off$i"
		run "on$i" --objects "$T/lib.objects"
	else
		run "on$i" --objects "$T/lib.objects"
		run "off$i"
	fi
	a=$(total "off$i") b=$(total "on$i")
	awk -v i="$i" -v a="$a" -v b="$b" 'BEGIN { printf "| %d | %s / %s | %+.1f%% |\n", i, a, b, (b / a - 1) * 100 }' |
		tee -a "$T/changes"
	i=$((i + 1))
done
awk -F'|' '{ gsub(/[ %+]/, "", $4); s += $4; n++ } END { if (n) printf "\nmean change %+.1f%% over %d pairs (target: within 5%%)\n", s / n, n }' "$T/changes"
grep -h '^  objects:' "$T"/on* | tail -n 1
exit 0
