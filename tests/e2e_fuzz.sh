#!/bin/sh
# The libFuzzer targets of tests/fuzz/ (config file, .trees file, PNG/PGM
# frames, WebSocket client bytes, object library), built with clang and run for a few
# seconds each from small seeds, so that a parser change that breaks one of
# their properties (no crash, no overflow, --print-config loads back, a
# loaded set looks itself up) fails in `make test`, not only in a long
# `make fuzz` session. FUZZ_SECONDS per target (default 8).
# Exit 0 pass, 77 skip (no clang with the libFuzzer runtime), else fail.
B=${BUILD:-build}
S=${FUZZ_SECONDS:-8}
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
command -v clang >/dev/null 2>&1 || { echo "clang missing: skipped"; exit 77; }
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$T/probe.c"
clang -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" 2>/dev/null ||
	{ echo "clang has no libFuzzer runtime (libclang-rt-14-dev): skipped"; exit 77; }
make -s -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" fuzz BUILD="$B" >"$T/build.log" 2>&1 || { cat "$T/build.log"; echo "FAIL: make fuzz"; exit 1; }

# Seeds: one valid input each, so the runs start inside the grammar.
mkdir -p "$T/config" "$T/trees" "$T/image" "$T/ws" "$T/objects"
cp config/tabletrack.conf "$T/config/"
cp fiducials/tabletrack-small.trees "$T/trees/"
printf 'P5\n4 3\n255\n' >"$T/image/a.pgm"
printf '\000\001\002\003\004\005\006\007\010\011\012\013' >>"$T/image/a.pgm"
printf '\001GET / HTTP/1.1\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' >"$T/ws/hs"
printf '\000\201\205abcdhello\211\200abcd' >"$T/ws/frames"
{ printf 'tabletrack-objects 1\nobject 1000 20 10 2 card\n'
  printf 'k 1.5 2 3.25 90 0.01 %s\n' "$(printf '0123456789abcdef%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)"
  printf 'k 19.5 9.5 12 359.5 0 %s\n' "$(printf 'ff00%.0s' $(seq 64))"; } >"$T/objects/lib"
# A library of objects without a keypoint (no keypoint array at all).
printf 'tabletrack-objects 1\nobject 1000 20 10 0 card\nobject 1001 20 10 0 tile\n' >"$T/objects/lib0"

# One fuzzer a CPU at a time (each is single-threaded), reported in order.
J=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
n=0
for t in config trees image ws objects; do
	bin="$B/fuzz/fuzz_$t"
	[ -x "$bin" ] || { echo 127 >"$T/$t.rc"; continue; }
	( "$bin" -max_total_time="$S" -rss_limit_mb=2048 -artifact_prefix="$T/crash-$t-" "$T/$t" >"$T/$t.log" 2>&1
	  echo $? >"$T/$t.rc" ) &
	n=$((n + 1))
	[ $((n % J)) = 0 ] && wait
done
wait
fail=0
for t in config trees image ws objects; do
	case $(cat "$T/$t.rc") in
	0) echo "ok: fuzz_$t: $(grep -o 'Done [0-9]* runs' "$T/$t.log" | tail -1) in ${S} s, nothing found" ;;
	127) echo "FAIL: $B/fuzz/fuzz_$t not built"; fail=1 ;;
	*) echo "FAIL: fuzz_$t found an input that breaks it:"
		grep -E 'ERROR|SUMMARY|Test unit written|Base64' "$T/$t.log" | head -8
		fail=1 ;;
	esac
done
exit $fail
