#!/bin/sh
# systemd units: `systemd-analyze verify` must accept both units without a
# single warning, and they must keep the settings the daemon relies on.
# ExecStart must name an existing file, so each unit is checked from a copy
# whose binary path points at the built daemon (or /bin/true without one).
# Exit 0 pass, 77 skip (no systemd-analyze), else fail.
BUILD=${BUILD:-build}
command -v systemd-analyze >/dev/null 2>&1 || { echo "systemd-analyze not found: skipped"; exit 77; }

fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

bin=$(cd "$BUILD" 2>/dev/null && pwd)/tabletrack
if [ ! -x "$bin" ]; then
	bin=/bin/true; [ -x "$bin" ] || bin=/usr/bin/true
	echo "note: $BUILD/tabletrack not built; verifying with ExecStart=$bin"
fi

check_has() { # unit, fixed line
	grep -qxF "$2" "$1" || { echo "FAIL: $1 lacks '$2'"; fail=1; }
}

for unit in config/tabletrack.service config/tabletrack@.service; do
	[ -f "$unit" ] || { echo "FAIL: $unit missing"; fail=1; continue; }
	for line in Type=notify WatchdogSec=10 Restart=on-failure DynamicUser=yes \
		SupplementaryGroups=video NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
		PrivateTmp=yes "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" \
		"DeviceAllow=char-video4linux rw" "DeviceAllow=char-nvidia* rw" \
		"DeviceAllow=/dev/nvidiactl rw" "DeviceAllow=/dev/nvidia-uvm rw"; do
		check_has "$unit" "$line"
	done
done
# Reload must not need /bin/kill (procps, absent from minimal systems):
# the shell's builtin kill sends SIGHUP, found with an empty PATH too.
for unit in config/tabletrack.service config/tabletrack@.service; do
	check_has "$unit" "ExecReload=/bin/sh -c 'kill -HUP \$MAINPID'"
done
# The shell starts with SIGHUP at its default, as systemd starts
# ExecReload: a shell that inherits it ignored (nohup) cannot trap it.
got=$(python3 -c 'import signal, subprocess, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)
r = subprocess.run(["/bin/sh", "-c", "trap \"echo hup\" HUP; MAINPID=$$; kill -HUP $MAINPID"],
                   env={"PATH": "/nonexistent"}, capture_output=True, text=True)
sys.stdout.write(r.stdout.strip() + r.stderr.strip())')
[ "$got" = hup ] && echo "ok: /bin/sh's own kill delivers SIGHUP without a kill binary" ||
	{ echo "FAIL: /bin/sh -c 'kill -HUP \$MAINPID' without PATH printed '$got'"; fail=1; }
check_has config/tabletrack.service \
	"ExecStart=/usr/local/bin/tabletrack --headless --config /etc/tabletrack/tabletrack.conf"
check_has config/tabletrack@.service \
	"ExecStart=/usr/local/bin/tabletrack --headless --config /etc/tabletrack/%i.conf"

verify() { # source unit, name to verify it under
	sed "s|^ExecStart=/usr/local/bin/tabletrack |ExecStart=$bin |" "$1" >"$tmp/$2"
	grep -q "^ExecStart=$bin " "$tmp/$2" || { echo "FAIL: $1: ExecStart not rewritten"; fail=1; }
	out=$(cd "$tmp" && systemd-analyze verify --man=no "./$2" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
		echo "FAIL: systemd-analyze verify $1 (as $2, exit $rc):"
		echo "$out"
		fail=1
	else
		echo "ok: $1 verified as $2"
	fi
}
verify config/tabletrack.service tabletrack.service
verify config/tabletrack@.service tabletrack@.service
verify config/tabletrack@.service tabletrack@table1.service

# The check itself must catch a warning: a unit with an unknown key fails.
sed 's|^\[Service\]|[Service]\nNoSuchSetting=1|' config/tabletrack.service |
	sed "s|^ExecStart=/usr/local/bin/tabletrack |ExecStart=$bin |" >"$tmp/broken.service"
out=$(cd "$tmp" && systemd-analyze verify --man=no ./broken.service 2>&1)
if [ -z "$out" ]; then
	echo "FAIL: systemd-analyze printed nothing for a unit with an unknown key"
	fail=1
fi

# The built daemon speaks the notify protocol as systemd would see it:
# READY=1, STATUS=, WATCHDOG=1 while frames flow (WATCHDOG_USEC set), and
# STOPPING=1 then exit 0 on SIGTERM. Deadlines only bound a hang.
if [ -x "$BUILD/tabletrack" ] && command -v python3 >/dev/null 2>&1; then
	python3 - "$BUILD/tabletrack" "$tmp/notify" <<'PY' || fail=1
import os, signal, socket, subprocess, sys, time
daemon, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.5)
env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="1000000")
env.pop("WATCHDOG_PID", None)
p = subprocess.Popen([daemon, "--headless", "--source", "demo", "--tuio", "udp:127.0.0.1:47999"],
                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seen, stopped_at = [], None
deadline = time.time() + 30
while time.time() < deadline:
    try:
        seen.append(s.recv(4096).decode(errors="replace"))
    except socket.timeout:
        pass
    if p.poll() is not None:
        break
    have = lambda k: any(m.startswith(k) for m in seen)
    if stopped_at is None and have("READY=1") and have("STATUS=") and \
            sum(m == "WATCHDOG=1" for m in seen) >= 2:
        p.send_signal(signal.SIGTERM)
        stopped_at = time.time()
    if have("STOPPING=1"):
        break
try:
    rc = p.wait(timeout=15)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
for m in sorted(set(seen)):
    print("  notify: %s (x%d)" % (m, seen.count(m)))
ok = rc == 0 and stopped_at is not None and "STOPPING=1" in seen
ok = ok and seen.index("READY=1") < seen.index("STOPPING=1")
print(("ok" if ok else "FAIL") + ": daemon notify protocol, exit status %s" % rc)
sys.exit(0 if ok else 1)
PY
	# A stalled pipeline must stop the watchdog pings, so systemd restarts
	# it: a source that delivers a frame only every 2.5 s gets at most one
	# ping a frame, while a flowing one is pinged every half period.
	python3 - "$BUILD/tabletrack" "$tmp/notify2" <<'PY' || fail=1
import os, socket, subprocess, sys, time
daemon, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.2)
env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="400000")
env.pop("WATCHDOG_PID", None)
p = subprocess.Popen([daemon, "--headless", "--quiet", "--source", "faulty:delay=2500:demo",
                      "--tuio", "udp:127.0.0.1:47998"], env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
seen, t_end = [], time.time() + 7.5
while time.time() < t_end:
    try:
        seen.append(s.recv(4096).decode(errors="replace"))
    except socket.timeout:
        pass
p.terminate()
p.wait(timeout=15)
pings = seen.count("WATCHDOG=1")
ok = 1 <= pings <= 4
print(("ok" if ok else "FAIL") + ": stalled source (a frame every 2.5 s): %d watchdog pings in 7.5 s" % pings)
sys.exit(0 if ok else 1)
PY
else
	echo "note: $BUILD/tabletrack or python3 missing: notify protocol not checked"
fi

exit $fail
