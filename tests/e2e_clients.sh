#!/bin/sh
# The TUIO protocol author's reference clients against the daemon (issue 15):
# TuioDump (TUIO 1.1) over UDP, over TCP with the daemon connecting
# (tcp:HOST:PORT) and with the client connecting (tcp:listen:), and
# Tuio2Dump (TUIO 2.0, UDP only: it has no TCP mode), all four at once on
# one run of a scene set made here by build/tabletrack-scenes (symbols,
# fingers, distractor shapes, drifting), with fingers and blobs on
# (--finger-blobs, so every finger of the truth is also a blob), and with
# outlines (--contours: Tuio2Dump gets /tuio2/ocg for every finger and
# blob, in the session's bundle).
# tests/lib/refclients.py checks that every symbol and finger of the truth
# (and its blob) is added, updated and removed in every client, near its
# true position, that the last state is empty after the shutdown, that no
# client prints an error and that the clients, built with AddressSanitizer,
# report nothing.
#
# The clients are not part of this repository: they come from
# ../shared/clients (skipped, 77, without it) and are built with their own
# build.sh (tests/lib/refclients_build.sh, which tests/run.sh also starts
# beside the unit tests) and kept in $B/refclients-asan with a stamp of
# their sources, so later runs skip the ~40 s build.
B=${BUILD:-build}
[ -x "$B/tabletrack" ] && [ -x "$B/tabletrack-scenes" ] || { echo "FAIL: $B/tabletrack(-scenes) not built"; exit 1; }
SRC=$(dirname "$0")/../../shared/clients
[ -f "$SRC/build.sh" ] || { echo "../shared/clients missing: skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 missing: skipped"; exit 77; }
command -v g++ >/dev/null 2>&1 || { echo "g++ missing: skipped"; exit 77; }
T=$(mktemp -d); trap '[ -n "$KEEP" ] || rm -rf "$T"' EXIT

CL=$B/refclients-asan
sh "$(dirname "$0")/lib/refclients_build.sh" "$B" || exit 1

# 40 drifting frames of 4 symbols, 3 fingers and 3 distractor shapes.
"$B/tabletrack-scenes" -o "$T/scene" --frames 40 --fids 4 --fid-size 70:100 --fingers 3 \
	--clutter 3 --move 3 --seed 21 --format pgm >/dev/null || { echo "FAIL: tabletrack-scenes"; exit 1; }
# 30 blank frames (1 s: the clients connect), the scene, 10 blank frames, the
# scene's first 15 frames again; then the source ends and the daemon stops.
python3 "$(dirname "$0")/lib/refclients.py" seq "$T/scene" "$T/seq" 30 10 15 || exit 1
mkdir "$T/out"
python3 "$(dirname "$0")/lib/refclients.py" run "$B/tabletrack" "$CL" "$T/seq" "$T/scene/truth.json" "$T/out" \
	--finger-size 18 --blob-min 20 --blob-max 200 --finger-blobs --contours
rc=$?
[ $rc = 0 ] || { echo "--- daemon log"; tail -20 "$T/out/daemon.log"; }
exit $rc
