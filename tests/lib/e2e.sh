# Shell helpers shared by the end-to-end scripts; sourced, never run:
#   . "$(dirname "$0")/lib/e2e.sh"
# (not named e2e_*.sh: tests/run.sh runs every tests/e2e_*.sh as a test).
# Sets E2E_LIB, the folder of this file and of e2e.py, which the scripts that
# drive the daemon from Python put on PYTHONPATH.
E2E_LIB=$(dirname "$0")/lib

# Ends the script unless oscdump and python3 are at hand (77: skipped) and
# $B/tabletrack is built (1: failed); for the scripts that drive the daemon
# from Python with e2e.py.
e2e_need_daemon() {
	command -v oscdump >/dev/null 2>&1 || { echo "oscdump missing (liblo-tools): skipped"; exit 77; }
	command -v python3 >/dev/null 2>&1 || { echo "python3 missing: skipped"; exit 77; }
	[ -x "$B/tabletrack" ] || { echo "FAIL: $B/tabletrack not built"; exit 1; }
}

# Prints a loopback port free right now: UDP, or TCP with "tcp".
e2e_free_port() {
	python3 -c "import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1] == 'tcp' else socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
print(s.getsockname()[1])" "${1:-udp}"
}

# e2e_oscdump_start PORT FILE: oscdump (liblo-tools) prints what arrives on
# UDP PORT into FILE; its pid is in $e2e_dump (kill it in an EXIT trap too).
e2e_oscdump_start() {
	oscdump -L "$1" >"$2" 2>&1 &
	e2e_dump=$!
	sleep 0.3 # oscdump listening before anything is sent
}

# e2e_oscdump_stop [SECONDS]: lets the last datagrams arrive, then stops it.
e2e_oscdump_stop() {
	sleep "${1:-0.3}"
	kill "$e2e_dump" 2>/dev/null
	wait "$e2e_dump" 2>/dev/null
}

# e2e_once_to_osc FOLDER FILE [OPTION]...: the daemon runs every frame of
# FOLDER once (--once --quiet, more options after), its TUIO caught by
# oscdump into FILE; returns the daemon's exit status. $B is the build folder.
e2e_once_to_osc() {
	e2e_dir=$1 e2e_out=$2
	shift 2
	# A port found free can be taken before oscdump binds it (scripts that
	# run sets at once): oscdump then exits at once, and another is tried.
	for e2e_try in 1 2 3 4 5; do
		e2e_port=$(e2e_free_port)
		e2e_oscdump_start "$e2e_port" "$e2e_out"
		kill -0 "$e2e_dump" 2>/dev/null && break
	done
	"$B/tabletrack" --once --quiet --source "folder:$e2e_dir" --tuio "udp:127.0.0.1:$e2e_port" "$@"
	e2e_rc=$?
	e2e_oscdump_stop 0.5
	return $e2e_rc
}

# e2e_scene_seq SCENE SEQ: links the frames of a tabletrack-scenes folder
# SCENE into the folder SEQ as the scorers want them (tests/tuio_check.py
# score ... 3 2): each frame three times, then two blank frames of the
# scene's size (SEQ/../blank-WxH.pgm).
e2e_scene_seq() {
	e2e_size=$(python3 -c "import json, sys; t = json.load(open(sys.argv[1])); print(t['w'], t['h'])" "$1/truth.json")
	e2e_blank=$(dirname "$2")/blank-$(echo "$e2e_size" | tr ' ' x).pgm
	# Written beside and renamed over: sets of one size drawn at once share it.
	e2e_tmp=$(mktemp "$e2e_blank.XXXXXX")
	python3 -c "import sys; w, h = int(sys.argv[1]), int(sys.argv[2]); sys.stdout.buffer.write(b'P5\n%d %d\n255\n' % (w, h) + bytes([128]) * (w * h))" $e2e_size >"$e2e_tmp"
	mv -f "$e2e_tmp" "$e2e_blank"
	mkdir -p "$2"
	e2e_k=0
	for e2e_f in "$1"/frame_*.*; do
		for e2e_r in 1 2 3; do ln -s "$e2e_f" "$2/$(printf 'seq_%06d' $e2e_k).${e2e_f##*.}"; e2e_k=$((e2e_k + 1)); done
		for e2e_r in 1 2; do ln -s "$e2e_blank" "$2/$(printf 'seq_%06d' $e2e_k).pgm"; e2e_k=$((e2e_k + 1)); done
	done
}
