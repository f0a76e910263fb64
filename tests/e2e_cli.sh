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

printf 'P5\n64 48\n255\n' >"$T/grey.pgm"; head -c 3072 /dev/zero >>"$T/grey.pgm"
"$B" --once --source file:"$T/grey.pgm" --tuio udp:no.such.host.invalid:3333 >"$T/o" 2>&1; rc=$?
[ $rc -ne 0 ] || fail "unresolvable TUIO host accepted"
grep -q "no.such.host.invalid" "$T/o" || fail "unresolvable host not named"

# --gpu on: with a usable GPU it runs on it; without one it refuses to start
# (78, the reason named), --once or not, whatever the source.
"$B" --gpu auto --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 >"$T/auto" 2>&1 || fail "--gpu auto exit $?"
if grep -q "CUDA backend" "$T/auto"; then
	"$B" --gpu on --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 >"$T/o" 2>&1 || fail "--gpu on with a GPU exit $?"
	grep -q "cuda backend, as configured" "$T/o" || fail "--gpu on does not say it runs on CUDA: $(cat "$T/o")"
else
	for src in "--once --source file:$T/grey.pgm" "--once --source folder:$T" "--source demo"; do
		timeout 10 "$B" --gpu on $src --headless --tuio udp:127.0.0.1:9 >"$T/o" 2>&1; rc=$?
		[ $rc -eq 78 ] || fail "--gpu on without a GPU ($src): exit $rc, wanted 78"
		grep -q -- "--gpu on: .*use --gpu auto or off" "$T/o" || fail "--gpu on ($src): no clear message: $(cat "$T/o")"
		grep -q "skipped" "$T/o" && fail "--gpu on ($src): frames were tried"
	done
fi
# gpu = auto: the second scale says it follows auto's choice, not "as configured".
grep -q "as configured" "$T/auto" && fail "--gpu auto logs 'as configured': $(cat "$T/auto")"
grep -q "second scale on the .* backend, as auto chose for the first" "$T/auto" || fail "--gpu auto: second scale's backend not said"
"$B" --gpu off --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 >"$T/o" 2>&1 || fail "--gpu off exit $?"
grep -q "cpu backend, as configured" "$T/o" || fail "--gpu off does not say cpu as configured"

# --once on a source that never ends: refused, 78, said why.
timeout 10 "$B" --once --source demo --tuio udp:127.0.0.1:9 >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "--once on the demo: exit $rc, wanted 78"
grep -q -- "--once: source demo never ends" "$T/o" || fail "--once on the demo: no reason: $(cat "$T/o")"

# --dump DIR: created with its parents; a path that cannot be a folder is 78.
"$B" --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 --dump "$T/new/deeper" >"$T/o" 2>&1 || fail "--dump to a new folder exit $?"
[ -f "$T/new/deeper/000001-detections.txt" ] || fail "--dump did not create its folder: $(cat "$T/o")"
: >"$T/plainfile"
"$B" --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:9 --dump "$T/plainfile/sub" >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "--dump under a plain file: exit $rc, wanted 78"
grep -q "plainfile" "$T/o" || fail "--dump failure does not name the folder"

# A bad TUIO target is named once.
"$B" --once --source file:"$T/grey.pgm" --tuio udp:127.0.0.1:99999 >"$T/o" 2>&1; rc=$?
[ $rc -eq 78 ] || fail "bad TUIO port exit $rc, wanted 78"
[ "$(grep -c 99999 "$T/o")" -eq 1 ] || fail "bad TUIO target not said exactly once: $(cat "$T/o")"

# Every setting is checked before a TUIO socket opens: 78, the setting
# named, and not one datagram on the target.
port=$(python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
printf 'w012\nnot-a-tree\n' >"$T/bad.trees"
check78() { # WHAT NAMED ARGS...
	what=$1; named=$2; shift 2
	python3 - "$port" "$B" "$@" >"$T/o" 2>&1 <<'PY'
import socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.3)
p = subprocess.run([sys.argv[2], "--headless", "--tuio", "udp:127.0.0.1:" + sys.argv[1]] + sys.argv[3:],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
sys.stdout.write(p.stdout.decode(errors="replace"))
try:
    s.recv(65536)
    print("DATAGRAM RECEIVED")
except socket.timeout:
    pass
print("rc=%d" % p.returncode)
PY
	grep -q "^rc=78$" "$T/o" || fail "$what: wanted exit 78: $(cat "$T/o")"
	grep -q "DATAGRAM RECEIVED" "$T/o" && fail "$what: a TUIO bundle went out before the error"
	grep -q -- "$named" "$T/o" || fail "$what: '$named' not named: $(cat "$T/o")"
}
check78 "raw:100000x100000" "100000x100000" --once --source raw:100000x100000
check78 "raw:-640x480" "raw:-640x480" --once --source raw:-640x480
check78 "folder:/missing" "/missing" --once --source folder:"$T/missing"
check78 "unknown source" "nosuch:x" --source nosuch:x
check78 "missing .trees" "none.trees" --once --source file:"$T/grey.pgm" --trees "$T/none.trees"
check78 "bad .trees" "bad.trees:2" --once --source file:"$T/grey.pgm" --trees "$T/bad.trees"
check78 "--once on the demo" "never ends" --once --source demo
check78 "grid not a file" "not a regular file" --once --source file:"$T/grey.pgm" --grid /dev/zero

# The summary line shows no rate before one is measured: one frame, then a
# silent writer: "-- fps", never "0.0 fps".
mkfifo "$T/one.fifo"
(head -c 3072 /dev/zero; sleep 3) >"$T/one.fifo" &
timeout -s TERM 2 "$B" --source raw:64x48@"$T/one.fifo" --headless --tuio udp:127.0.0.1:9 >"$T/o" 2>&1
line=$(grep -m1 "^tabletrack: frame" "$T/o")
[ -n "$line" ] || fail "no summary line: $(cat "$T/o")"
case "$line" in *" 0.0 fps"*) fail "summary before any measurement says 0.0 fps: $line" ;; esac
case "$line" in *" -- fps"*) ;; *) fail "summary before any measurement: $line" ;; esac
wait

echo "cli ok"
