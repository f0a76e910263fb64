#!/bin/sh
# tools/bench_daemon.sh - issue 14's target table, measured on the daemon
# itself: build/tabletrack paced at BENCH_FPS (120) with --loop over PGM
# frames of 640x480, 1920x1080 and 3840x2160, --stats read at SIGTERM
# (frame total and capture-to-TUIO median / p99 of the last 8192 frames,
# CPU time a frame of every thread from getrusage, the pipeline thread's
# CPU by step), then the GPU labelling
# alone from build/gpu/gpu_bench when it is built. Prints the machine and
# one markdown table, each row beside its target. Only calls built
# binaries (make CUDA=1 build/tabletrack build/tabletrack-scenes, and
# optionally build/gpu/gpu_bench); numbers, not a test.
#
#     sh tools/bench_daemon.sh [FRAMES]          (default 10000 a size)
#
# Settings (environment):
#   BUILD=build               where the binaries are
#   BENCH_FPS=120             pace
#   BENCH_OPTS="..."          more daemon options for every run (e.g.
#                             "--threshold3 off"; default: the defaults)
#   B640=DIR B1080=DIR B4K=DIR  frames (PNG or PGM) and BENCH_TREES=FILE,
#                             the symbol set they show. Default: DIRs
#                             .devdata/b640 and .devdata/b1080 (PGM copies
#                             of the shared std-640 and std-1080 scenes)
#                             with .devdata/default.trees; a size without
#                             a DIR gets 8 PGM frames drawn by
#                             tabletrack-scenes (tabletrack's own set, 30
#                             symbols and 10 fingers scaled to the size).
#   BENCH_LABEL=0             skip gpu_bench's labelling line
set -u
N=${1:-10000}
B=${BUILD:-build}
FPS=${BENCH_FPS:-120}
OPTS=${BENCH_OPTS:-}
[ -x "$B/tabletrack" ] || { echo "no $B/tabletrack: make CUDA=1 $B/tabletrack $B/tabletrack-scenes" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
gpu=$(nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current \
	--format=csv,noheader 2>/dev/null | head -n 1)
echo "machine: ${cpu:-unknown CPU}, $(nproc) logical CPUs; GPU: ${gpu:-none found (nvidia-smi)}"
echo "daemon: $B/tabletrack --fps $FPS --loop --stats, $N frames a size, options: ${OPTS:-defaults}"

# frames SIZE DIR: the frames and trees for one size, as "DIR TREES".
frames() {
	size=$1 dir=$2 trees=${BENCH_TREES:-}
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		[ -z "$trees" ] && [ -f .devdata/default.trees ] && trees=.devdata/default.trees
		echo "$dir ${trees:-fiducials/tabletrack.trees}"
		return
	fi
	w=${size%x*}
	lo=$((w * 90 / 1920)) hi=$((w * 150 / 1920)) fr=$((w * 14 / 1920))
	[ "$fr" -lt 4 ] && fr=4
	"$B/tabletrack-scenes" -o "$T/frames-$size" --size "$size" --format pgm --frames 8 --fids 30 --fingers 10 \
		--fid-size "$lo:$hi" --finger-r "$fr" --seed 14 >/dev/null || return 1
	echo "$T/frames-$size fiducials/tabletrack.trees"
}

# run NAME DIR TREES: the daemon for N frames; its --stats in $T/NAME.
run() {
	secs=$((N / FPS + 4))
	# shellcheck disable=SC2086 # option list split on purpose
	timeout -s TERM "$secs" "$B/tabletrack" --source "folder:$2" --loop --fps "$FPS" --stats --gpu on \
		--trees "$3" --tuio udp:127.0.0.1:9 $OPTS >"$T/$1" 2>"$T/$1.err"
	grep -q 'tabletrack --stats' "$T/$1" || { echo "$1: no --stats from the daemon:" >&2; tail -n 5 "$T/$1.err" >&2; }
}

# stat NAME STAGE FIELD: median (2) or p99 (3) of the last --stats block.
stat() {
	awk -v s="$2" -v f="$3" 'index($0, "  " s " ") == 1 { n = split($0, a, /  +/); v = a[n - 3 + f] }
		END { print (v == "" ? "-" : v) }' "$T/$1"
}
cpu_ms() { sed -n 's/.*CPU (user+sys, all threads): \([0-9.]*\) ms a frame.*/\1/p' "$T/$1" | tail -n 1; }
cores() { sed -n 's/.*, \([0-9.]*\) cores busy.*/\1/p' "$T/$1" | tail -n 1; }
frames_of() { sed -n 's/^tabletrack --stats: \([0-9]*\) frames, [0-9]* skipped, \([0-9]*\) dropped, \([a-z]*\) path.*/\1 (\2 dropped, \3 path)/p' "$T/$1" | tail -n 1; }
third() { sed -n 's/^  third scale: //p' "$T/$1" | tail -n 1; }
# verdict VALUE LIMIT: met / missed.
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { if (v == "-" || v == "") print "-"; else print (v + 0 <= l + 0 ? "met" : "**missed**") }'; }

for size in 640x480 1920x1080 3840x2160; do
	case $size in
	640x480) d=${B640:-.devdata/b640} ;;
	1920x1080) d=${B1080:-.devdata/b1080} ;;
	*) d=${B4K:-} ;;
	esac
	# shellcheck disable=SC2046 # "DIR TREES" split on purpose
	set -- $(frames "$size" "$d") || { echo "$size: no frames" >&2; continue; }
	echo "$size: $1 ($2)"
	run "$size" "$1" "$2"
done

lab="-"
if [ "${BENCH_LABEL:-1}" = 1 ] && [ -x "$B/gpu/gpu_bench" ]; then
	"$B/gpu/gpu_bench" 300 >"$T/gpu_bench" 2>&1
	lab=$(awk '/^label 1920x1080 .*default/ && /mask->tree/ { sub(/.*on host +/, ""); print $1; exit }' "$T/gpu_bench")
	grep '^label ' "$T/gpu_bench" >"$T/label_lines"
fi

F=1920x1080
m=$(stat $F "frame total" 2) p=$(stat $F "frame total" 3)
lm=$(stat $F "capture to TUIO" 2) lp=$(stat $F "capture to TUIO" 3)
echo
echo "| | measured | target (issue 14) | |"
echo "|---|---|---|---|"
echo "| 1080p frame total | $m / $p ms | ≤ 0.5 ms median, ≤ 1 ms p99 | $(verdict "$m" 0.5), $(verdict "$p" 1) |"
echo "| 1080p capture→TUIO | $lm / $lp ms | ≤ 0.7 ms median, ≤ 1.5 ms p99 | $(verdict "$lm" 0.7), $(verdict "$lp" 1.5) |"
echo "| CPU busy at 1080p $FPS fps | $(cores $F) cores, $(cpu_ms $F) ms CPU a frame | ≤ 0.3 cores (≤ 2.5 ms CPU a frame) | $(verdict "$(cpu_ms $F)" 2.5) |"
m4=$(stat 3840x2160 "frame total" 2)
echo "| 4K frame total | $m4 / $(stat 3840x2160 "frame total" 3) ms | ≤ 1.5 ms median | $(verdict "$m4" 1.5) |"
m6=$(stat 640x480 "frame total" 2)
echo "| 640×480 frame total | $m6 / $(stat 640x480 "frame total" 3) ms | ≤ 0.2 ms median | $(verdict "$m6" 0.2) |"
echo "| GPU labelling alone, 1080p mask → tree on host | $lab µs (gpu_bench, synthetic frame) | ≤ 120 µs | $(verdict "$lab" 120) |"
echo "| CPU path, 2-core machine | not measured here: sh tools/bench_cpu.sh on that machine | CPU a frame ≤ 1.2× pinned to one CPU; ≤ 30 M instructions a 1080p frame | - |"
echo
for size in 640x480 1920x1080 3840x2160; do
	[ -s "$T/$size" ] || continue
	echo "$size: $(frames_of $size); $(cpu_ms $size) ms CPU a frame, $(cores $size) cores; stages (median / p99 ms):"
	awk '/^tabletrack --stats/ { s = "" } /^  [a-z]/ && !/^  (stage|CPU|third|objects|pipeline|frames over|gate)/ {
		n = split($0, a, /  +/); s = s sprintf("    %-16s %s / %s\n", a[2], a[n - 1], a[n]) }
		END { printf "%s", s }' "$T/$size"
	t=$(third $size)
	[ -n "$t" ] && echo "    third scale: $t"
	sed -n 's/^  \(CPU a frame by thread: .*\)/    \1/p' "$T/$size" | tail -n 1
	sed -n 's/^  \(pipeline thread CPU a frame: .*\)/    \1/p' "$T/$size" | tail -n 1
	sed -n 's/^  \(frames over twice the recent median: .*\)/    \1/p' "$T/$size" | tail -n 1
	sed -n 's/^  \(gate: .*\)/    \1/p' "$T/$size" | tail -n 1
	sed -n 's/^  \(GPU labelling waits .*\)/    \1/p' "$T/$size" | tail -n 1
done
[ -s "$T/label_lines" ] && { echo; cat "$T/label_lines"; }
exit 0
