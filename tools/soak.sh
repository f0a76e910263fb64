#!/bin/sh
# tools/soak.sh - long run of the daemon under sanitizers (make soak).
#
# Builds the daemon with SAN=address,undefined and SAN=thread (CUDA=0) into
# build/soak/<tag>/, then runs one daemon per build in parallel on the demo
# source for SOAK_MINUTES, each sending TUIO to its own loopback UDP sink,
# as the service would run it (--headless --config FILE, summary lines on).
# Every sample it records the RSS (ps -o rss), the fps of the last summary
# line and the TUIO packets received, and sends SIGHUP with the config
# file's gate toggled (so the reload path runs under the sanitizers too).
# At the end: SIGTERM, exit status 0 wanted.
#
# Fails (exit 1) on: a build failure, a daemon that dies or hangs on SIGTERM,
# any sanitizer report (ASan, UBSan, LSan at exit, TSan), a sample interval
# without TUIO packets, or RSS growth after the warm-up beyond
# max(SOAK_RSS_TOL_KB, SOAK_RSS_TOL_PCT % of the post-warm-up RSS).
# The warm-up ends after SOAK_WARMUP_MIN minutes and SOAK_WARMUP_FRAMES
# frames, whichever is later: the daemon allocates everything at start, but
# pages are only counted in RSS once touched, and the per-stage timing rings
# (8192 samples each, core/clock.h) are first written all the way round only
# after 8192 frames: at 30 fps 4.5 minutes, under TSan's few fps far longer.
# A build that never gets there is reported with its RSS "not judged".
# Prints a table of the samples and one verdict line per build.
#
# Settings (environment; `make soak SOAK_MINUTES=5` passes them too):
#   SOAK_MINUTES=30        run length
#   SOAK_SAMPLE_S=60       seconds between samples
#   SOAK_WARMUP_MIN=5      SOAK_WARMUP_FRAMES=9000   before the RSS baseline
#   SOAK_RSS_TOL_KB=4096   SOAK_RSS_TOL_PCT=5   allowed growth after warm-up
#   SOAK_SANS="address,undefined thread"   builds to run ("none" = no sanitizer)
#   SOAK_SOURCE=demo       SOAK_FPS=30         SOAK_HUP=1 (0: no SIGHUPs)
#   SOAK_ROOT=build/soak   where the builds go
#   SOAK_OUT=$SOAK_ROOT/run-DATE   logs, samples (samples.tsv) and reports
# Not part of `make test`: it takes half an hour and two cores.

MINUTES=${SOAK_MINUTES:-30}
SAMPLE_S=${SOAK_SAMPLE_S:-60}
WARMUP_MIN=${SOAK_WARMUP_MIN:-5}
WARMUP_FRAMES=${SOAK_WARMUP_FRAMES:-9000}
TOL_KB=${SOAK_RSS_TOL_KB:-4096}
TOL_PCT=${SOAK_RSS_TOL_PCT:-5}
SANS=${SOAK_SANS:-"address,undefined thread"}
SOURCE=${SOAK_SOURCE:-demo}
FPS=${SOAK_FPS:-30}
HUP=${SOAK_HUP:-1}
ROOT=${SOAK_ROOT:-build/soak}
OUT=${SOAK_OUT:-$ROOT/run-$(date +%Y%m%d-%H%M%S)}
MAKE=${MAKE:-make}

command -v python3 >/dev/null 2>&1 || { echo "soak: python3 needed for the TUIO sink"; exit 1; }
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)

tag_of() {
	case $1 in
	none) echo plain ;;
	address*) echo asan ;;
	thread*) echo tsan ;;
	*) echo "$1" | tr -c 'a-z0-9\n' '-' ;;
	esac
}

# --- build (one after the other: two cores are shared) ----------------------
tags=""
for san in $SANS; do
	tag=$(tag_of "$san")
	sanarg="SAN=$san"
	[ "$san" = none ] && sanarg="SAN="
	echo "soak: building $ROOT/$tag ($sanarg CUDA=0)"
	if ! $MAKE --no-print-directory -j2 BUILD="$ROOT/$tag" "$sanarg" CUDA=0 \
		"$ROOT/$tag/tabletrack" >"$OUT/$tag.build.log" 2>&1; then
		tail -20 "$OUT/$tag.build.log"
		echo "soak: FAIL: build $tag (log: $OUT/$tag.build.log)"
		exit 1
	fi
	tags="$tags $tag"
done

# --- start -------------------------------------------------------------------
pids=""
cleanup() {
	for t in $tags; do
		for f in pid sinkpid; do
			[ -f "$OUT/$t.$f" ] && kill "$(cat "$OUT/$t.$f")" 2>/dev/null
		done
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

write_conf() { # file gate
	printf '# written by tools/soak.sh; gate toggles on every SIGHUP\n[threshold]\ngate = %s\n' "$2" >"$1"
}

for tag in $tags; do
	# A UDP sink per daemon: counts TUIO datagrams into $tag.packets every 0.5 s.
	python3 - "$OUT/$tag.port" "$OUT/$tag.packets" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(0.5)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
n, last = 0, 0.0
while True:
    try:
        s.recv(65536)
        n += 1
    except socket.timeout:
        pass
    now = time.time()
    if now - last >= 0.5:
        with open(sys.argv[2] + ".tmp", "w") as f:
            f.write(str(n))
        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
        last = now
PY
	echo $! >"$OUT/$tag.sinkpid"
	i=0
	while [ ! -s "$OUT/$tag.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$OUT/$tag.port" ] || { echo "soak: FAIL: UDP sink did not start"; exit 1; }
	port=$(cat "$OUT/$tag.port")
	write_conf "$OUT/$tag.conf" 32
	case $tag in
	asan)
		# A small quarantine: the default 256 MB of freed blocks held back
		# would read as RSS growth for the first tens of minutes.
		export ASAN_OPTIONS="log_path=$OUT/$tag.san:detect_leaks=1:quarantine_size_mb=16:malloc_context_size=20"
		export UBSAN_OPTIONS="log_path=$OUT/$tag.san:print_stacktrace=1:halt_on_error=0"
		;;
	tsan) export TSAN_OPTIONS="log_path=$OUT/$tag.san:halt_on_error=0:second_deadlock_stack=1" ;;
	esac
	"$ROOT/$tag/tabletrack" --headless --config "$OUT/$tag.conf" --source "$SOURCE" \
		--fps "$FPS" --stats --tuio "udp:127.0.0.1:$port" >"$OUT/$tag.log" 2>&1 &
	echo $! >"$OUT/$tag.pid"
	unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
	echo "soak: $tag: pid $(cat "$OUT/$tag.pid"), TUIO to udp:127.0.0.1:$port, log $OUT/$tag.log"
done

# --- sample ------------------------------------------------------------------
total_s=$((MINUTES * 60))
warm_s=$((WARMUP_MIN * 60))
[ "$warm_s" -ge "$total_s" ] && warm_s=$((total_s / 2))
header="t_s"
for tag in $tags; do header="$header	${tag}_rss_kb	${tag}_frames	${tag}_fps	${tag}_tuio_pkts"; done
echo "$header" >"$OUT/samples.tsv"
echo "soak: $MINUTES min, a sample every $SAMPLE_S s, RSS baseline after $warm_s s and $WARMUP_FRAMES frames; samples: $OUT/samples.tsv"
echo "$header" | tr '\t' ' '
start=$(date +%s)
gate=32
n_hup=0
dead=""
while :; do
	now=$(date +%s)
	el=$((now - start))
	[ "$el" -ge "$total_s" ] && break
	left=$((total_s - el))
	[ "$left" -gt "$SAMPLE_S" ] && left=$SAMPLE_S
	sleep "$left"
	el=$(($(date +%s) - start))
	row="$el"
	for tag in $tags; do
		pid=$(cat "$OUT/$tag.pid")
		rss=$(ps -o rss= -p "$pid" 2>/dev/null | tr -d ' ')
		if [ -z "$rss" ]; then
			rss=dead
			case " $dead " in *" $tag "*) ;; *) dead="$dead $tag" ;; esac
		fi
		last=$(grep '^tabletrack: frame' "$OUT/$tag.log" 2>/dev/null | tail -1)
		fps=$(echo "$last" | sed -n 's/.*  \([0-9.]*\) fps .*/\1/p')
		frames=$(echo "$last" | sed -n 's/^tabletrack: frame \([0-9]*\) .*/\1/p')
		pk=$(cat "$OUT/$tag.packets" 2>/dev/null)
		row="$row	$rss	${frames:-0}	${fps:--}	${pk:-0}"
	done
	echo "$row" >>"$OUT/samples.tsv"
	echo "$row" | tr '\t' ' '
	if [ "$HUP" = 1 ] && [ "$el" -lt "$total_s" ]; then
		gate=$((gate == 32 ? 33 : 32))
		for tag in $tags; do
			write_conf "$OUT/$tag.conf" "$gate"
			kill -HUP "$(cat "$OUT/$tag.pid")" 2>/dev/null
		done
		n_hup=$((n_hup + 1))
	fi
done

# --- stop --------------------------------------------------------------------
for tag in $tags; do kill -TERM "$(cat "$OUT/$tag.pid")" 2>/dev/null; done
fail=0
for tag in $tags; do
	pid=$(cat "$OUT/$tag.pid")
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		echo "hung" >"$OUT/$tag.rc"
	fi
	wait "$pid"
	rc=$?
	[ -f "$OUT/$tag.rc" ] || echo "$rc" >"$OUT/$tag.rc"
	kill "$(cat "$OUT/$tag.sinkpid")" 2>/dev/null
	rm -f "$OUT/$tag.sinkpid"
done
rm -f "$OUT"/*.pid

# --- verdict -----------------------------------------------------------------
echo
echo "soak: verdict ($MINUTES min, source $SOURCE at --fps $FPS, $n_hup SIGHUPs)"
col=2
for tag in $tags; do
	rc=$(cat "$OUT/$tag.rc")
	reports=$(cat "$OUT/$tag.san".* 2>/dev/null | grep -cE '^(==[0-9]+==)?(ERROR|WARNING): (Address|Leak|Thread|UndefinedBehavior)Sanitizer|runtime error:|^SUMMARY: ')
	inlog=$(grep -cE 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$OUT/$tag.log")
	reports=$((reports + inlog))
	reloads=$(grep -c 'SIGHUP: configuration reloaded' "$OUT/$tag.log")
	rssv=$(awk -F'\t' -v c="$col" -v w="$warm_s" -v wf="$WARMUP_FRAMES" -v kb="$TOL_KB" -v pct="$TOL_PCT" '
		NR == 1 { next }
		$c == "dead" { next }
		{ n++; if (n == 1) first = $c; last = $c; pk = $(c + 3) + 0 }
		n > 1 && pk <= prevpk { stall++ }
		!warm && $1 >= w && $(c + 1) >= wf { warm = 1; base = $c + 0; max = base }
		warm && $c + 0 > max { max = $c + 0 }
		{ prevpk = pk }
		END {
			if (!warm) { printf "%s - %s - - - %d\n", first, last, stall + 0; exit }
			tol = base * pct / 100; if (tol < kb) tol = kb
			printf "%s %s %s %s %d %d %d\n", first, base, last, max, max - base, tol, stall + 0
		}' "$OUT/samples.tsv")
	set -- $rssv
	first=$1 base=$2 last=$3 max=$4 growth=$5 tol=$6 stalls=$7
	verdict=ok
	why=""
	[ "$rc" = 0 ] || { verdict=FAIL; why="$why exit=$rc"; }
	case " $dead " in *" $tag "*) verdict=FAIL; why="$why died-early" ;; esac
	[ "$reports" -eq 0 ] || { verdict=FAIL; why="$why sanitizer-reports=$reports"; }
	if [ "$base" = - ]; then
		why="$why (RSS not judged: fewer than $WARMUP_FRAMES frames after $warm_s s)"
	elif [ "$growth" -gt "$tol" ]; then
		verdict=FAIL
		why="$why rss-growth=${growth}kB>${tol}kB"
	fi
	[ "$stalls" -eq 0 ] || { verdict=FAIL; why="$why tuio-stalls=$stalls"; }
	[ "$HUP" = 1 ] && [ "$reloads" -lt "$n_hup" ] && { verdict=FAIL; why="$why reloads=$reloads/$n_hup"; }
	printf '%s: %s  exit %s, sanitizer reports %s, RSS kB first %s / after warm-up %s / last %s / max %s (growth %s, allowed %s), reloads %s/%s%s\n' \
		"$tag" "$verdict" "$rc" "$reports" "$first" "$base" "$last" "$max" "$growth" "$tol" \
		"$reloads" "$n_hup" "${why:+ -$why}"
	grep -E '^  ' "$OUT/$tag.log" | tail -8 | sed "s/^/    $tag /"
	[ "$verdict" = ok ] || fail=1
	col=$((col + 4))
done
for f in "$OUT"/*.san.*; do
	[ -f "$f" ] && { echo "--- $f"; head -40 "$f"; }
done
echo "soak: logs and samples in $OUT"
exit $fail
