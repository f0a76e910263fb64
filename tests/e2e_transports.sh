#!/bin/sh
# The daemon's TUIO over every transport, decoded by build/tests/tuio_decode
# (a strict decoder on Debian's oscpack, independent of our encoder and of
# liblo): objects, cursors (fingers) and blobs from the demo scene over UDP,
# TCP (tabletrack listening), WebSocket, and TUIO 2.0 over UDP; objects and
# fingers also sent as blobs sharing their session IDs.
B=${BUILD:-build}
D=$B/tests/tuio_decode
[ -x "$D" ] || { echo "no $D"; exit 77; }
T=$(mktemp -d); trap 'kill $trk 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/lib/e2e.sh"
pu=$(e2e_free_port tcp); pt=$(e2e_free_port tcp); pw=$(e2e_free_port tcp); p2=$(e2e_free_port tcp)

"$D" "udp:$pu" --seconds 6 --frames 60 >"$T/udp.jsonl" 2>"$T/udp.err" & du=$!
"$D" "udp:$p2" --seconds 6 --frames 60 >"$T/tuio2.jsonl" 2>"$T/tuio2.err" & d2=$!
sleep 0.3
"$B/tabletrack" --source demo --headless --quiet --blob-min 10 --blob-max 60 --object-blobs --finger-blobs \
	--tuio "udp:127.0.0.1:$pu" --tuio "tcp:listen:127.0.0.1:$pt" --tuio "ws:listen:127.0.0.1:$pw" \
	--tuio "udp:127.0.0.1:$p2,tuio2" >"$T/trk.txt" 2>&1 & trk=$!
sleep 1
"$D" "tcp:127.0.0.1:$pt" --seconds 4 --frames 40 >"$T/tcp.jsonl" 2>"$T/tcp.err" & dt=$!
"$D" "ws:127.0.0.1:$pw" --seconds 4 --frames 40 >"$T/ws.jsonl" 2>"$T/ws.err" & dw=$!
fail=0
for x in "udp $du" "tuio2 $d2" "tcp $dt" "ws $dw"; do
	set -- $x
	wait "$2" || { echo "FAIL: $1 decoder reported problems:"; head -5 "$T/$1.err"; fail=1; }
done
kill -TERM $trk; wait $trk || { echo "FAIL: tracker exit"; fail=1; }
python3 - "$T" <<'PY' || fail=1
import json, sys
T = sys.argv[1]
bad = False
for name in ("udp", "tcp", "ws", "tuio2"):
    lines = [json.loads(l) for l in open("%s/%s.jsonl" % (T, name)) if l.startswith("{")]
    frames = [l for l in lines if "fseq" in l]
    objs = {int(v[0]) for f in frames for v in f.get("objects", {}).values()}
    curs = max((len(f.get("cursors", {})) for f in frames), default=0)
    blobs = max((len(f.get("blobs", {})) for f in frames), default=0)
    print("%-6s %3d frames, object IDs %s, up to %d cursors, %d blobs" % (name, len(frames), sorted(objs), curs, blobs))
    if len(frames) < 20 or len(objs) < 3 or curs < 1:
        print("FAIL: %s: too little decoded" % name); bad = True
    if name == "udp" and blobs < 1:
        print("FAIL: no blobs decoded"); bad = True
    # --object-blobs/--finger-blobs: each object and finger also has a blob
    # with its own session ID.
    owned = [f for f in frames[-10:] if f.get("objects") and not set(f["objects"]) <= set(f.get("blobs", {}))]
    if name == "udp" and owned:
        print("FAIL: objects without their blob: %s" % owned[0]); bad = True
sys.exit(1 if bad else 0)
PY
exit $fail
