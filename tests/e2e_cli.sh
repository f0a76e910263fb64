#!/bin/sh
# The command line as a user meets it: help, version, config printing, and
# exit code 78 (EX_CONFIG) with the offending option, key or value named.
B=${BUILD:-build}/tabletrack
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$B" --help >"$T/help" 2>&1 || fail "--help exit $?"
grep -q -- "--source" "$T/help" || fail "--help does not list --source"
grep -q -- "--tuio" "$T/help" || fail "--help does not list --tuio"
"$B" --version | grep -q "^tabletrack [0-9]" || fail "--version"

"$B" --no-such-option >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "unknown option exit $rc, wanted 78"
grep -q "no-such-option" "$T/o" || fail "unknown option not named: $(cat "$T/o")"

"$B" --radius 99 --once --source demo >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "radius 99 exit $rc, wanted 78"
grep -q "radius" "$T/o" || fail "bad radius not named"

printf '[threshold]\ngate = banana\n' >"$T/bad.conf"
"$B" --config "$T/bad.conf" --once >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "bad config value exit $rc"
grep -q "bad.conf:2" "$T/o" || fail "bad config line not named: $(cat "$T/o")"

"$B" --print-config >"$T/printed.conf" || fail "--print-config"
"$B" --config "$T/printed.conf" --print-config >"$T/again.conf" || fail "printed config does not load"
cmp -s "$T/printed.conf" "$T/again.conf" || fail "--print-config is not a fixed point"

printf 'w012\nnot-a-tree\n' >"$T/bad.trees"
"$B" --trees "$T/bad.trees" --once --source demo >"$T/o" 2>&1; rc=$?
[ $rc -ne 0 ] || fail "malformed trees accepted"
grep -q "bad.trees:2" "$T/o" || fail "bad trees line not named: $(cat "$T/o")"

"$B" --once --source folder:"$T/nowhere" >"$T/o" 2>&1; rc=$?
[ $rc -ne 0 ] || fail "missing folder accepted"
grep -q "nowhere" "$T/o" || fail "missing folder not named"

"$B" --once --source demo --tuio udp:no.such.host.invalid:3333 >"$T/o" 2>&1; rc=$?
[ $rc -ne 0 ] || fail "unresolvable TUIO host accepted"
grep -q "no.such.host.invalid" "$T/o" || fail "unresolvable host not named"

printf 'P5\n64 48\n255\n' >"$T/grey.pgm"; head -c 3072 /dev/zero >>"$T/grey.pgm"
"$B" --gpu on --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 >"$T/o" 2>&1; rc=$?
if [ $rc -ne 0 ]; then
	grep -qi "gpu" "$T/o" || fail "--gpu on failure without a clear message"
fi
echo "cli ok"
