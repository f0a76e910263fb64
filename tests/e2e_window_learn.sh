#!/bin/sh
# e2e_window_learn: the window's O key learns an object from the live frame.
#
# A synthesised scene (tabletrack-objects synth: one textured object among
# clutter) is looped as the daemon's source with --window, an empty object
# library (objects = FILE) and TUIO to oscdump, under Xvfb. Then, as a user
# would: a box is dragged with the mouse (xdotool) around the object and O
# pressed. Checked:
#   - before O, /tuio/2Dobj never carries object ID 1000;
#   - the daemon logs "learned object1000", the library file then holds
#     object 1000 named object1000;
#   - after O, /tuio/2Dobj reports ID 1000 within 3 px (TUIO's normalised
#     units times the frame size) of the box's centre: the library was
#     reloaded and recognition restarted with it;
#   - ESC ends the daemon with status 0.
# Skips (77) without Xvfb, xdotool, python3, oscdump, a daemon built with
# the window, or OpenCV.
B=${BUILD:-build}
for tool in Xvfb xdotool python3 oscdump; do
	command -v "$tool" >/dev/null 2>&1 || { echo "skip: $tool not installed"; exit 77; }
done
"$B/tabletrack" --help 2>/dev/null | grep -q -- '--window' || { echo "skip: $B/tabletrack has no window"; exit 77; }
[ -x "$B/tabletrack-objects" ] || { echo "FAIL: $B/tabletrack-objects not built"; exit 1; }
. "$(dirname "$0")/lib/e2e.sh"
T=$(mktemp -d) || exit 1
xvfb_pid="" app_pid="" e2e_dump=""
cleanup() {
	[ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null
	[ -n "$e2e_dump" ] && kill "$e2e_dump" 2>/dev/null
	[ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
XDG_CONFIG_HOME=$T/xdg
export XDG_CONFIG_HOME

printf 'tabletrack-objects 1\n' >"$T/lib.objects"
if ! "$B/tabletrack" --headless --source demo --once --objects "$T/lib.objects" </dev/null >"$T/d.out" 2>&1 &&
	grep -q "without OpenCV" "$T/d.out"; then
	echo "skip: OpenCV not built in"
	exit 77
fi
mkdir -p "$T/s"
"$B/tabletrack-objects" synth "$T/s" --seed 31 --objects 1 --scenes 1 --clutter 0 >/dev/null ||
	{ echo "FAIL: synth"; exit 1; }
scene=$(sed -n 's/^scene //p' "$T/s/truth.txt" | head -1)
mkdir -p "$T/seq"
ln -s "$scene" "$T/seq/frame_00000.png"
# The object's box in the frame: its picture's corners at the true pose,
# shrunk to 80% about its centre (so the box holds the object alone).
read -r obj_file <<EOF2
$(sed -n '1s/^[^ ]* \([^ ]*\) .*/\1/p' "$T/s/objects.txt")
EOF2
python3 - "$scene" "$obj_file" "$T/s/truth.txt" >"$T/box" <<'PY' || { echo "FAIL: no truth"; exit 1; }
import math, struct, sys
def size(p):
    d = open(p, 'rb').read(24)
    return struct.unpack('>II', d[16:24])
fw, fh = size(sys.argv[1])
ow, oh = size(sys.argv[2])
for line in open(sys.argv[3]):
    f = line.split()
    if f and f[0] == 'object':
        x, y, ang, s = float(f[2]), float(f[3]), math.radians(float(f[4])), float(f[5])
        break
c, sn = math.cos(ang), math.sin(ang)
xs, ys = [], []
for u, v in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
    u *= 0.4 * s * ow; v *= 0.4 * s * oh
    xs.append(x + c * u - sn * v); ys.append(y + sn * u + c * v)
print(fw, fh, max(0, int(min(xs))), max(0, int(min(ys))), min(fw - 1, int(max(xs))), min(fh - 1, int(max(ys))))
PY
read -r FW FH BX0 BY0 BX1 BY1 <"$T/box"
echo "scene ${FW}x${FH}, box $BX0,$BY0 - $BX1,$BY1"

. "$(dirname "$0")/../tools/xvfb.sh"
xvfb_start "$T" 2>&1 || { echo "FAIL: Xvfb did not start"; exit 1; }
port=$(e2e_free_port)
e2e_oscdump_start "$port" "$T/osc"
"$B/tabletrack" --source "folder:$T/seq" --loop --fps 10 --window --objects "$T/lib.objects" --object-rate 10 \
	--tuio "udp:127.0.0.1:$port" >"$T/app.log" 2>&1 &
app_pid=$!
xvfb_window "$app_pid" || { echo "FAIL: no window"; cat "$T/app.log"; exit 1; }
xdotool windowfocus --sync "$win" 2>/dev/null || xdotool windowfocus "$win"
sleep 2
eval "$(xdotool getwindowgeometry --shell "$win")"
# Where the frame lands: the window above its status bar (24 px at text
# scale 1, 48 at 2 from 1400 px wide), the frame fitted with its aspect, centred.
set -- $(python3 -c "
import sys
W, H, fw, fh, x0, y0, x1, y1 = map(int, sys.argv[1:])
bar = 2 * 7 * (2 if W >= 1400 else 1) + 8
aw, ah = W, H - bar
if aw * fh <= ah * fw: iw, ih = aw, aw * fh // fw
else: ih, iw = ah, ah * fw // fh
ix, iy = (aw - iw) // 2, (ah - ih) // 2
sx = lambda x: ix + int((x + 0.5) * iw / fw)
sy = lambda y: iy + int((y + 0.5) * ih / fh)
print(sx(x0), sy(y0), sx(x1), sy(y1), sx((x0 + x1) // 2), sy((y0 + y1) // 2))
" "$WIDTH" "$HEIGHT" "$FW" "$FH" "$BX0" "$BY0" "$BX1" "$BY1")
before=$(grep -c '/tuio/2Dobj' "$T/osc")
grep -E '/tuio/2Dobj .*"set" [0-9]+ 1000 ' "$T/osc" >/dev/null && { echo "FAIL: ID 1000 before learning"; exit 1; }
xdotool mousemove --window "$win" "$1" "$2" mousedown 1 mousemove --window "$win" "$5" "$6" \
	mousemove --window "$win" "$3" "$4" mouseup 1
sleep 0.5
xdotool key o
lines=$(wc -l <"$T/osc")
for _ in $(seq 150); do
	grep -q "learned object1000" "$T/app.log" && break
	sleep 0.1
done
fails=0
if grep -q "learned object1000" "$T/app.log"; then
	grep "learned object1000" "$T/app.log"
else
	echo "FAIL: no 'learned object1000' in the log"
	cat "$T/app.log"
	fails=$((fails + 1))
fi
grep -q '^object 1000 .* object1000$' "$T/lib.objects" || { echo "FAIL: the library has no object 1000"; fails=$((fails + 1)); }
sleep 4
tail -n +"$lines" "$T/osc" | python3 -c "
import sys
fw, fh, x0, y0, x1, y1 = map(float, sys.argv[1:])
cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
best = None
for line in sys.stdin:
    f = line.split()
    if '/tuio/2Dobj' not in line or '\"set\"' not in line:
        continue
    i = f.index('\"set\"')
    if int(f[i + 2]) != 1000:
        continue
    x, y = float(f[i + 3]) * fw, float(f[i + 4]) * fh
    d = ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5
    best = d if best is None else min(best, d)
if best is None:
    print('FAIL: /tuio/2Dobj never carried ID 1000 after O'); sys.exit(1)
print('after O: /tuio/2Dobj ID 1000 at %.2f px from the box centre' % best)
sys.exit(0 if best <= 3 else 1)
" "$FW" "$FH" "$BX0" "$BY0" "$BX1" "$BY1" || fails=$((fails + 1))
xdotool key Escape
for _ in $(seq 100); do
	kill -0 "$app_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$app_pid"
rc=$?
app_pid=""
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc after ESC"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "PASS: the window's O learned the object and the daemon recognised it"
exit $((fails > 0))
