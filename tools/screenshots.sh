#!/bin/sh
# screenshots.sh - makes the README's pictures of the window from this build.
#
#   sh tools/screenshots.sh [BUILD [OUTDIR]]     (defaults: build, docs/screenshots)
#
# Runs the daemon with --window under a virtual X server (Xvfb) on a still
# scene drawn by $BUILD/tabletrack-scenes (symbols, fingers, a few clutter
# shapes), presses the keys a user would with xdotool and saves the window
# with ImageMagick's import:
#   window-camera.png          the camera view with the tracking overlay
#   window-threshold-menu.png  T (threshold view), G with the second scale's
#                              radius2 line selected
#   window-calibration.png     C, a few grid points moved
# Nothing is saved by the daemon (no W or K) and $XDG_CONFIG_HOME points at
# an empty folder, so a user's own default config or grid cannot leak into
# the pictures. The status bar's timings differ from run to run; the rest
# is the same for the same build.
# Needs Xvfb, xdotool and ImageMagick (import); exits 77 without them.
set -u
BUILD=${1:-build}
OUT=${2:-docs/screenshots}
for tool in Xvfb xdotool import; do
	command -v "$tool" >/dev/null 2>&1 || { echo "screenshots: $tool not installed" >&2; exit 77; }
done
for bin in tabletrack tabletrack-scenes; do
	[ -x "$BUILD/$bin" ] || { echo "screenshots: $BUILD/$bin not built (make)" >&2; exit 1; }
done
"$BUILD/tabletrack" --help | grep -q -- '--window' ||
	{ echo "screenshots: $BUILD/tabletrack has no window (built without SDL2)" >&2; exit 1; }

tmp=$(mktemp -d)
xvfb_pid=""
app_pid=""
cleanup() {
	[ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null
	[ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
XDG_CONFIG_HOME=$tmp/xdg
export XDG_CONFIG_HOME

. "$(dirname "$0")/xvfb.sh"
xvfb_start "$tmp" || { echo "screenshots: Xvfb did not start" >&2; exit 1; }

"$BUILD/tabletrack-scenes" -o "$tmp/scene" --frames 1 --fids 6 --fingers 3 --clutter 2 --seed 5 >/dev/null ||
	{ echo "screenshots: tabletrack-scenes failed" >&2; exit 1; }
"$BUILD/tabletrack" --source "file:$tmp/scene/frame_00000.png" --loop --window \
	--finger-size 18 --blob-min 20 --blob-max 200 --tuio udp:127.0.0.1:9 >"$tmp/app.log" 2>&1 &
app_pid=$!
xvfb_window "$app_pid" || { echo "screenshots: no window" >&2; cat "$tmp/app.log" >&2; exit 1; }
xdotool windowfocus --sync "$win" 2>/dev/null || xdotool windowfocus "$win"
sleep 2

mkdir -p "$OUT"
shot() {
	sleep 0.8
	import -window "$win" "$OUT/$1.png" || { echo "screenshots: import failed" >&2; exit 1; }
	echo "$OUT/$1.png"
}
shot window-camera
xdotool key t g Down Down Down Down
shot window-threshold-menu
xdotool key g s c Right Right ctrl+Up ctrl+Up ctrl+Right Left Down ctrl+Left ctrl+Down
shot window-calibration
xdotool key Escape
for _ in $(seq 100); do
	kill -0 "$app_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$app_pid" 2>/dev/null
rc=$?
app_pid=""
[ "$rc" -eq 0 ] || { echo "screenshots: the daemon ended with status $rc" >&2; cat "$tmp/app.log" >&2; exit 1; }
