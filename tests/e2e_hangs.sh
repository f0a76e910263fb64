#!/bin/sh
# Reads that must never outlive a shutdown or hang a start (issue 18 item 4).
# Each case ends promptly; the ones that run end on SIGTERM within 1 s with
# exit 0 after the empty TUIO bundles:
#   raw:WxH@FIFO whose writer connects and stays silent (start-up waits for
#     the first frame; SIGTERM must still end it);
#   SIGHUP after the --config file became a FIFO: refused (not a regular
#     file) without blocking; frames go on; SIGTERM ends it;
#   --grid /dev/zero, a grid of NUL bytes: refused at start (78), no loop;
#   a FIFO named *.png in a folder: skipped, the folder plays; file: on a
#     FIFO: refused at start (78).
# Loopback only; every wait is bounded. Exit 0 pass, 77 skip, else fail.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
e2e_need_daemon
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

PYTHONPATH="$E2E_LIB" timeout 120 python3 - "$B/tabletrack" "$T" <<'PY'
import os, re, signal, subprocess, sys, time

from e2e import Run, check, failures, messages, setup, wait_for

daemon, tmp = sys.argv[1], sys.argv[2]
setup(daemon, tmp)


def empty_alives(text):
    return sum(1 for p, tags, kind, args in messages(text) if p == "2Dobj" and kind == "alive" and not args)


def term_within_1s(r, name):
    """SIGTERM, then exit 0 within 1 s, and the empty bundles sent on the way out."""
    alive = r.running()
    t0 = time.monotonic()
    rc = r.stop(signal.SIGTERM, timeout=1.0)
    dt = time.monotonic() - t0
    check(alive, "%s: still running before SIGTERM" % name)
    check(rc == 0, "%s: exit %s on SIGTERM within 1 s (want 0; took %.2f s)" % (name, rc, dt))
    check(empty_alives(r.text()) >= 2, "%s: empty bundles at start and at the stop (%d)" % (name, empty_alives(r.text())))


def once(name, args, timeout=10):
    try:
        p = subprocess.run([daemon, "--headless", "--tuio", "udp:127.0.0.1:9"] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return "hung", (e.output or b"").decode(errors="replace")


png = os.path.join(tmp, "frame.pgm")
with open(png, "wb") as f:
    f.write(b"P5\n64 48\n255\n" + bytes(range(64)) * 48)

# --- raw: a writer that connects and says nothing ----------------------------------
fifo = os.path.join(tmp, "raw.fifo")
os.mkfifo(fifo)
writer = os.open(fifo, os.O_RDWR)  # a writer that holds the pipe open and stays silent
r = Run("raw-silent", ["--source", "raw:64x48@" + fifo, "--quiet"])
time.sleep(1.0)
term_within_1s(r, "raw: silent writer")
os.close(writer)

# --- SIGHUP when the config file has become a FIFO ----------------------------------
conf = os.path.join(tmp, "hup.conf")
with open(conf, "w") as f:
    f.write("[source]\nsource = demo\n")
r = Run("hup-fifo", ["--config", conf])
check(wait_for(lambda: len(re.findall(r"frame (\d+)", r.log())) >= 1, 10), "hup-fifo: a summary line")
os.unlink(conf)
os.mkfifo(conf)
r.proc.send_signal(signal.SIGHUP)
time.sleep(0.5)
n0 = r.frames()
time.sleep(1.0)
n1 = r.frames()
check(n1 > n0 + 10, "hup-fifo: frames go on after the SIGHUP (%d -> %d)" % (n0, n1))
check("not a regular file" in r.log(), "hup-fifo: the FIFO is refused by name")
term_within_1s(r, "SIGHUP on a FIFO config")

# --- --grid /dev/zero and a grid of NULs ---------------------------------------------
rc, out = once("grid-zero", ["--once", "--source", "file:" + png, "--grid", "/dev/zero"])
check(rc == 78 and "/dev/zero" in out, "--grid /dev/zero: exit %s (want 78, named)" % rc)
nuls = os.path.join(tmp, "nul.grid")
with open(nuls, "wb") as f:
    f.write(b"\0" * (4 << 20))
rc, out = once("grid-nul", ["--once", "--source", "file:" + png, "--grid", nuls])
check(rc == 78 and "nul.grid" in out, "--grid of NUL bytes: exit %s (want 78, named)" % rc)

# --- FIFOs where images are expected ------------------------------------------------
d = os.path.join(tmp, "folder")
os.mkdir(d)
os.link(png, os.path.join(d, "a.pgm"))
os.mkfifo(os.path.join(d, "b.png"))
os.link(png, os.path.join(d, "c.pgm"))
rc, out = once("folder-fifo", ["--once", "--source", "folder:" + d, "--stats"])
check(rc == 0, "folder with a FIFO b.png: exit %s (want 0)" % rc)
check("b.png" in out and "not a regular file" in out, "folder with a FIFO: the FIFO is named as skipped")
check("2 frames" in out, "folder with a FIFO: the two images play (%s)" % re.findall(r"\d+ frames", out))
rc, out = once("file-fifo", ["--once", "--source", "file:" + os.path.join(d, "b.png")])
check(rc == 78 and "not a regular file" in out, "file: on a FIFO: exit %s (want 78, named)" % rc)

if failures:
    sys.exit(1)
print("hangs ok")
PY
