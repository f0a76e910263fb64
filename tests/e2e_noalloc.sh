#!/bin/sh
# Nothing allocates on the frame path (issue 14: flat tails): the daemon
# runs a folder of frames once, then a folder holding each of those frames
# three times, under tests/lib/alloc_count.c (LD_PRELOAD: heap allocations
# counted by thread name); every thread must allocate as often in the
# second run as in the first, so the frames themselves allocate nothing.
# The frames are drawn at test time by tabletrack-scenes as PGM (a PNG
# folder decodes each file with libpng, which allocates: the file source's
# own cost, not a camera's) from presets that open every pass of the
# third scale (closing, ratio, deblurring, small-symbol, upsampled) and
# carry fingers, hands and outlines, sent as TUIO 1.1 over UDP and as
# TUIO 2.0 with contours over TCP to a connected client; then live (the
# capture and pipeline threads of a camera's run, looping the folder at
# 60 fps) for 2 and for 5 seconds, the same. On a machine with
# a GPU the daemon's default path is the GPU's and that path is checked;
# allocations made inside the CUDA driver (libcuda, closed source: its
# waits and its own threads) are counted apart and reported, not failed.
# ALLOC_COUNT_TRACE=THREAD prints the stacks of that thread's allocations.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
command -v python3 >/dev/null 2>&1 || { echo "python3 missing: skipped"; exit 77; }
[ -x "$B/tabletrack" ] && [ -x "$B/tabletrack-scenes" ] || { echo "FAIL: $B/tabletrack or tabletrack-scenes not built"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
"$CC" -O1 -shared -fPIC -o "$T/alloc_count.so" tests/lib/alloc_count.c -lpthread -ldl 2>"$T/cc.log" ||
	{ cat "$T/cc.log"; echo "cannot build the counting library: skipped"; exit 77; }

mkdir -p "$T/once" "$T/thrice"
# Drawn two at a time (each tabletrack-scenes call takes about a second).
seed=70
for preset in shadow-dark oblique motion defocus hands small di; do
	seed=$((seed + 1))
	"$B/tabletrack-scenes" -o "$T/$preset" --preset "$preset" --seed "$seed" --frames 2 --format pgm \
		>"$T/$preset.log" 2>&1 &
	[ $((seed % 2)) = 0 ] && wait
done
wait
for preset in shadow-dark oblique motion defocus hands small di; do
	[ -f "$T/$preset/frame_00001.pgm" ] || { cat "$T/$preset.log"; echo "FAIL: tabletrack-scenes --preset $preset"; exit 1; }
	for f in "$T/$preset"/frame_*.pgm; do
		n=$preset-$(basename "$f")
		cp "$f" "$T/once/$n"
		for r in 1 2 3; do ln "$T/once/$n" "$T/thrice/$r-$n"; done
	done
done

# run NAME FOLDER: the daemon under the counter, a TCP client connected to
# its TUIO 2.0 stream for the whole run.
run() {
	port=$(e2e_free_port tcp)
	python3 -c "
import socket, sys, time
end = time.time() + 120
while time.time() < end:
    try:
        s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=1); break
    except OSError:
        time.sleep(0.02)
else:
    sys.exit(1)
n = 0
s.settimeout(5)
try:
    while True:
        b = s.recv(65536)
        if not b: break
        n += len(b)
except OSError:
    pass
print(n)" "$port" >"$T/$1.client" 2>&1 &
	client=$!
	sleep 0.2
	ALLOC_COUNT_OUT="$T/$1.count" LD_PRELOAD="$T/alloc_count.so" "$B/tabletrack" --once --quiet --stats \
		--source "folder:$2" --tuio udp:127.0.0.1:9 --tuio "tcp:listen:127.0.0.1:$port,tuio2" --contours \
		>"$T/$1.out" 2>"$T/$1.err" || { echo "FAIL: the daemon exited with $? on $1"; cat "$T/$1.err"; exit 1; }
	wait "$client"
}
run once "$T/once"
run thrice "$T/thrice"
# live SECONDS: the daemon as a camera runs it (a capture thread, the
# pipeline thread, paced at 60 fps, looping the frames, --stats sampling
# every thread's CPU time each second), stopped by SIGTERM.
live() {
	timeout -s TERM "$1" env ALLOC_COUNT_OUT="$T/live$1.count" LD_PRELOAD="$T/alloc_count.so" "$B/tabletrack" \
		--source "folder:$T/once" --loop --fps 60 --stats --tuio udp:127.0.0.1:9 >"$T/live$1.out" 2>"$T/live$1.err"
	[ $? = 124 ] || { echo "FAIL: the live daemon ended before SIGTERM"; cat "$T/live$1.err"; exit 1; }
}
live 1
live 3
frames() { sed -n 's/^tabletrack --stats: \([0-9]*\) frames.*, \([a-z]*\) path.*/\1 frames (\2 path)/p' "$T/$1.out"; }
echo "one pass: $(frames once), TUIO 2.0 bytes to the TCP client: $(cat "$T/once.client")"
echo "three passes: $(frames thrice), TUIO 2.0 bytes to the TCP client: $(cat "$T/thrice.client")"
[ -s "$T/once.count" ] && [ -s "$T/thrice.count" ] || { echo "FAIL: no counts written"; exit 1; }
[ "$(cat "$T/thrice.client")" -gt "$(cat "$T/once.client")" ] 2>/dev/null ||
	{ echo "FAIL: the TCP client did not receive the stream"; exit 1; }
fail=0
# same A B WHAT-A WHAT-B: every thread's count in A equal to B's.
same() {
	for name in $(cut -d' ' -f1 "$T/$1.count" "$T/$2.count" | sort -u); do
		a=$(awk -v n="$name" '$1 == n { print $2 }' "$T/$1.count")
		b=$(awk -v n="$name" '$1 == n { print $2 }' "$T/$2.count")
		case $name in
		*"[libcuda]") # inside the CUDA driver, at our calls or on its own threads: reported
			echo "thread ${name%\[libcuda\]}, inside the CUDA driver: ${a:-0} allocations $3, ${b:-0} $4"
			continue ;;
		esac
		echo "thread $name: ${a:-0} allocations $3, ${b:-0} $4"
		[ "${a:-0}" = "${b:-0}" ] || { echo "FAIL: thread $name allocates on the frame path"; fail=1; }
	done
}
same once thrice "over one pass" "over three"
[ -s "$T/live1.count" ] && [ -s "$T/live3.count" ] || { echo "FAIL: no counts from the live runs"; exit 1; }
echo "live: $(frames live1) in 1 s, $(frames live3) in 3 s"
same live1 live3 "live for 1 s" "for 3 s"
[ "$fail" = 0 ] && echo "ok: no thread allocates a frame"
exit $fail
