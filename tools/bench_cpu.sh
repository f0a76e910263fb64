#!/bin/sh
# tools/bench_cpu.sh - issue 14's CPU-path row, measured on the daemon
# itself: build/tabletrack --gpu off paced at BENCH_FPS (20) with --loop
# over 1080p PGM frames, once on every CPU of the machine and once pinned
# to one CPU (taskset), where no thread can run beside another and no
# waiting can spin; prints the CPU time a frame of each (getrusage, all
# threads, from --stats), their ratio (target: at most 1.2), and, when
# valgrind is there, the instructions a frame (callgrind over every frame
# of the folder once, divided by their number: the frames' work on every
# thread, start-up and file reading left out; the first frame's alone
# beside it). Numbers, not a test.
#
#     sh tools/bench_cpu.sh [SECONDS]            (default 20 a run)
#
# Settings (environment):
#   BUILD=build        where build/tabletrack is
#   BENCH_FPS=20       pace
#   B1080=DIR          1080p frames (PNG or PGM; PGM keeps the capture
#                      thread's decoding out of the figure) and
#   BENCH_TREES=FILE   the symbol set they show. Default: .devdata/b1080
#                      and .devdata/default.trees when there, else 8 PGM
#                      frames drawn by tabletrack-scenes with tabletrack's
#                      own set.
#   BENCH_OPTS="..."   more daemon options for every run
set -u
S=${1:-20}
B=${BUILD:-build}
FPS=${BENCH_FPS:-20}
OPTS=${BENCH_OPTS:-}
[ -x "$B/tabletrack" ] || { echo "no $B/tabletrack: make $B/tabletrack $B/tabletrack-scenes" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM

dir=${B1080:-.devdata/b1080}
trees=${BENCH_TREES:-}
if [ -d "$dir" ]; then
	[ -z "$trees" ] && [ -f .devdata/default.trees ] && trees=.devdata/default.trees
else
	dir=$T/frames
	"$B/tabletrack-scenes" -o "$dir" --size 1920x1080 --format pgm --frames 8 --fids 30 --fingers 10 \
		--fid-size 90:150 --finger-r 14 --seed 14 >/dev/null || { echo "no frames" >&2; exit 1; }
fi
trees=${trees:-fiducials/tabletrack.trees}
first=$(find "$dir" -maxdepth 1 -type f -name "*.p[gn][mg]" | sort | head -n 1)
first=${first##*/}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "machine: ${cpu:-unknown CPU}, $(getconf _NPROCESSORS_ONLN) logical CPUs"
echo "daemon: $B/tabletrack --gpu off --fps $FPS --loop --stats, $S s a run, $dir ($trees), options: ${OPTS:-defaults}"

# run NAME PREFIX...: the daemon for S seconds; its --stats in $T/NAME.
run() {
	name=$1
	shift
	# shellcheck disable=SC2086 # option list split on purpose
	timeout -s TERM "$S" "$@" "$B/tabletrack" --source "folder:$dir" --loop --fps "$FPS" --stats --gpu off \
		--trees "$trees" --tuio udp:127.0.0.1:9 $OPTS >"$T/$name" 2>"$T/$name.err"
	grep -q 'tabletrack --stats' "$T/$name" || { echo "$name: no --stats from the daemon:" >&2; tail -n 5 "$T/$name.err" >&2; }
}
cpu_ms() { sed -n 's/.*CPU (user+sys, all threads): \([0-9.]*\) ms a frame.*/\1/p' "$T/$1" | tail -n 1; }
total() { awk 'index($0, "  frame total ") == 1 { n = split($0, a, /  +/); v = a[n - 1] " / " a[n] } END { print v }' "$T/$1"; }

run all
if command -v taskset >/dev/null 2>&1; then
	run one taskset -c "$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')"
else
	echo "no taskset: the one-CPU run is left out" >&2
fi
a=$(cpu_ms all) o=$(cpu_ms one 2>/dev/null)
echo
echo "| run | frame total median / p99 | CPU a frame |"
echo "|---|---|---|"
echo "| every CPU ($(getconf _NPROCESSORS_ONLN)) | $(total all) ms | ${a:-–} ms |"
[ -s "$T/one" ] && echo "| one CPU (taskset) | $(total one) ms | ${o:-–} ms |"
[ -n "$a" ] && [ -n "$o" ] &&
	awk -v a="$a" -v o="$o" 'BEGIN { r = a / o; printf "\nCPU a frame, every CPU against one: %.2f (target <= 1.2: %s)\n", r, r <= 1.2 ? "met" : "missed" }'

if command -v valgrind >/dev/null 2>&1; then
	n=$(find "$dir" -maxdepth 1 -type f -name "*.p[gn][mg]" | wc -l)
	# cg NAME SOURCE: instructions of the frames of SOURCE, in $T/NAME.ir
	cg() {
		# shellcheck disable=SC2086 # option list split on purpose
		valgrind --tool=callgrind --callgrind-out-file="$T/$1.cg" --toggle-collect=frame_script \
			--toggle-collect=scale2_task --toggle-collect=ratio_task --toggle-collect=deblur_task \
			--toggle-collect=band_task "$B/tabletrack" --once --gpu off --source "$2" --trees "$trees" \
			--tuio udp:127.0.0.1:9 $OPTS >/dev/null 2>"$T/$1.err"
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$T/$1.err" | tail -n 1 >"$T/$1.ir"
	}
	cg all "folder:$dir"
	cg first "file:$dir/$first"
	ir=$(cat "$T/all.ir") ir1=$(cat "$T/first.ir")
	[ -n "$ir" ] && awk -v i="$ir" -v n="$n" -v f="$ir1" 'BEGIN { m = i / n / 1e6
		printf "instructions a 1080p frame (callgrind, %d frames): %.1f M, the first alone %.1f M (target <= 30 M: %s)\n", n, m, f / 1e6, m <= 30 ? "met" : "missed" }'
fi
exit 0
