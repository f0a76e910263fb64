#!/bin/sh
# A replay is reproducible: the same folder run twice with --once gives the
# same --dump output, tracked objects included (session, position, angle).
# File sources run the tracker on the frames' own timeline (frame / fps), not
# on the wall clock, whose jitter moved predicted and smoothed objects.
B=${BUILD:-build}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
S="$B/tabletrack-scenes"
"$S" -o "$T/sharp" --frames 12 --fids 4 --move 7 --fingers 0 --seed 5 >/dev/null || exit 1
"$S" -o "$T/streak" --frames 12 --fids 4 --move 7 --motion 7 --fingers 0 --seed 5 >/dev/null || exit 1
mkdir "$T/seq"
for i in $(seq 0 11); do
	n=$(printf 'frame_%05d.png' "$i")
	src=sharp; [ "$i" -ge 4 ] && [ "$i" -lt 8 ] && src=streak
	ln -s "$T/$src/$n" "$T/seq/$n"
done
fail=0
for run in 1 2; do
	mkdir "$T/dump$run"
	"$B/tabletrack" --once --headless --source "folder:$T/seq" --tuio udp:127.0.0.1:9 \
		--dump "$T/dump$run" -q >"$T/log$run" 2>&1 || { echo "run $run failed:"; cat "$T/log$run"; exit 1; }
	cat "$T/dump$run"/*-detections.txt | grep '^object' >"$T/objects$run"
done
n=$(wc -l <"$T/objects1")
if [ "$n" -lt 12 ]; then
	echo "FAIL: only $n object lines in the dump: the scene did not track"
	fail=1
fi
if ! diff -r "$T/dump1" "$T/dump2" >"$T/diff"; then
	echo "FAIL: two replays of the same folder differ:"
	head -20 "$T/diff"
	fail=1
fi
[ $fail -eq 0 ] && echo "ok: two replays identical ($n object lines)"
exit $fail
