#!/bin/sh
# Runs every unit test binary (cmocka) and every end-to-end script, then
# prints one summary line CI can read: "N passed, N failed, N skipped".
# Scripts exit 0 (pass), 77 (skip, e.g. ../shared absent) or else (fail).
BUILD=${1:-build}
passed=0; failed=0; skipped=0; failures=""
log=$(mktemp)
# The daemon reads ~/.config/tabletrack/tabletrack.conf and .grid when they
# exist (what the window's K and W save): tests must not see a user's own.
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
start=$(date +%s)
# The reference TUIO clients' build (e2e_clients.sh's, about 40 s on a clean
# clone) runs beside the unit tests; e2e_clients reports what it says.
sh tests/lib/refclients_build.sh "$BUILD" >/dev/null 2>&1 &
refclients_pid=$!
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0}; f=${f:-0}; s=${s:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1; echo "$name: exited with status $rc (crash or abort)"
	fi
	[ "$f" -gt 0 ] && failures="$failures $name"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
wait "$refclients_pid"
for t in tests/e2e_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "[ RUN      ] $name"
	t0=$(date +%s)
	BUILD="$BUILD" sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	sed 's/^/    /' "$log"
	case $rc in
	0) passed=$((passed + 1)); echo "[       OK ] $name (${secs} s)" ;;
	77) skipped=$((skipped + 1)); echo "[  SKIPPED ] $name (${secs} s)" ;;
	*) failed=$((failed + 1)); failures="$failures $name"; echo "[  FAILED  ] $name (exit $rc, ${secs} s)" ;;
	esac
done
rm -f "$log"
rm -rf "$XDG_CONFIG_HOME"
[ -n "$failures" ] && echo "failing:$failures"
echo "tests took $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
