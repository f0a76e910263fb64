# Sourced by tools/screenshots.sh and tests/e2e_window*.sh: starts Xvfb on a
# free display for a real window without a desktop.
#     xvfb_start DIR    sets xvfb_pid, DISPLAY (exported); returns 1 with
#                       Xvfb's log on stderr when it did not come up
#     xvfb_window PID   sets win to the mapped window titled tabletrack,
#                       once the same one has been seen for half a second
#                       (SDL may destroy its first window and map another
#                       when the renderer needs another visual: a test
#                       that took the first saw BadWindow), waiting up to
#                       20 s (a loaded 2-core machine can be slow to map
#                       one) while PID lives; returns 1 without
# -displayfd lets Xvfb pick a free display and tell us which. -noreset:
# without it the server resets when its last client leaves, and a client
# that connects meanwhile (the next window of a test, started as the last
# one quit) can lose its connection and die of SIGPIPE (CI saw
# tabletrack-uidemo end with status 141 before its window was seen).
xvfb_start() {
	Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp -noreset 3>"$1/display" >"$1/xvfb.log" 2>&1 &
	xvfb_pid=$!
	for _ in $(seq 50); do
		[ -s "$1/display" ] && break
		sleep 0.1
	done
	[ -s "$1/display" ] || { cat "$1/xvfb.log" >&2; return 1; }
	DISPLAY=:$(head -n1 "$1/display")
	export DISPLAY
	unset WAYLAND_DISPLAY
}

xvfb_window() {
	win=""
	seen=0
	for _ in $(seq 200); do
		w=$(xdotool search --onlyvisible --name tabletrack 2>/dev/null | tail -n1)
		if [ -n "$w" ] && [ "$w" = "$win" ] && xdotool getwindowgeometry "$w" >/dev/null 2>&1; then
			seen=$((seen + 1))
			[ $seen -ge 5 ] && return 0
		else
			seen=0
		fi
		win=$w
		kill -0 "$1" 2>/dev/null || { win=""; return 1; }
		sleep 0.1
	done
	win=""
	return 1
}
