#!/bin/sh
# The daemon on its built-in demo source, watched by a TUIO client nobody
# here wrote (oscdump from liblo-tools): 2Dobj bundles arrive with strict
# types, and the symbols the demo shows are reported with their IDs.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
command -v oscdump >/dev/null || { echo "oscdump missing (liblo-tools)"; exit 77; }
T=$(mktemp -d); trap 'kill $e2e_dump $trk 2>/dev/null; rm -rf "$T"' EXIT
port=$(e2e_free_port)
e2e_oscdump_start "$port" "$T/dump.txt"
"$B/tabletrack" --source demo --headless --quiet --tuio "udp:127.0.0.1:$port" >"$T/out.txt" 2>&1 & trk=$!
sleep 4
kill -TERM $trk; wait $trk; rc=$?
e2e_oscdump_stop
[ $rc -eq 0 ] || { echo "FAIL: SIGTERM exit $rc"; cat "$T/out.txt"; exit 1; }
python3 tests/tuio_check.py states "$T/dump.txt" >"$T/states.jsonl" || exit 1
python3 - "$T/states.jsonl" "$T/dump.txt" <<'PY' || exit 1
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
assert len(frames) >= 30, "only %d frames in 4 s" % len(frames)
ids = set()
for f in frames:
    for v in f["obj"].values():
        ids.add(int(v[0]))
        assert 0 <= v[1] < 1 and 0 <= v[2] < 1 and 0 <= v[3] < 6.2832, v
assert len(ids) >= 3, "demo symbols seen: %s" % sorted(ids)
text = open(sys.argv[2]).read()
assert "/tuio/2Dobj s \"source\"" in text or "/tuio/2Dobj ss \"source\"" in text, "no source message"
last = [l for l in text.splitlines() if "/tuio/2Dobj" in l and '"alive"' in l][-1]
assert last.split()[2] == "s", "shutdown bundle alive not empty: " + last
print("demo ok: %d frames, IDs %s" % (len(frames), sorted(ids)))
PY
