"""Helpers shared by the end-to-end scripts that drive the daemon from Python
(tests/e2e_faults.sh, tests/e2e_signals.sh): checks that count failures, a
free loopback port, bounded waits, oscdump's TUIO 1.1 text taken apart, and
Run: the daemon with oscdump (liblo-tools, a client nobody here wrote)
listening on its first TUIO target.

The scripts put this folder on PYTHONPATH (tests/lib/e2e.sh names it
$E2E_LIB) and call setup(daemon, tmp) before the first Run.
"""
import os
import signal
import socket
import subprocess
import time

failures = []
_daemon = None
_tmp = None


def setup(daemon, tmp):
    """The daemon binary Run starts and the folder its logs and dumps go to."""
    global _daemon, _tmp
    _daemon, _tmp = daemon, tmp


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)
    return ok


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def messages(text):
    """(profile, tags, kind, args) for every TUIO 1.1 message oscdump printed."""
    out = []
    for line in text.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4 or not parts[1].startswith("/tuio/"):
            continue
        args = parts[3].split()
        out.append((parts[1][6:], parts[2], args[0].strip('"'), args[1:]))
    return out


def fseqs(text, profile="2Dobj"):
    """The fseq of each bundle of one profile, -1 (redundant) left out and
    the repeats of a split frame folded."""
    seq = []
    for prof, _, kind, args in messages(text):
        if prof == profile and kind == "fseq":
            f = int(args[0])
            if f != -1 and (not seq or seq[-1] != f):
                seq.append(f)
    return seq


def gaps(seq):
    return [(a, b) for a, b in zip(seq, seq[1:]) if b != a + 1]


class Run:
    """The daemon, headless, with oscdump listening on its first TUIO target
    (unless dump is False) and any `tuio` targets after it; its log and the
    dump go to TMP/NAME.log and TMP/NAME.osc."""

    def __init__(self, name, args, tuio=None, dump=True):
        self.name = name
        self.dump_path = os.path.join(_tmp, name + ".osc")
        self.log_path = os.path.join(_tmp, name + ".log")
        self.dump = None
        targets = []
        if dump:
            self.port = free_port()
            self.dump = subprocess.Popen(["oscdump", "-L", str(self.port)],
                                         stdout=open(self.dump_path, "w"), stderr=subprocess.STDOUT)
            time.sleep(0.3)
            targets += ["--tuio", "udp:127.0.0.1:%d" % self.port]
        for t in tuio or []:
            targets += ["--tuio", t]
        self.proc = subprocess.Popen([_daemon, "--headless"] + targets + args,
                                     stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)

    def text(self):
        return read(self.dump_path)

    def log(self):
        return read(self.log_path)

    def running(self):
        return self.proc.poll() is None

    def frames(self):
        return len(fseqs(self.text()))

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Sends sig and returns the exit status ("hung" if it had to be
        killed); then stops oscdump."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "hung"
        if self.dump:
            time.sleep(0.3)  # the last datagrams reach oscdump
            self.dump.terminate()
            self.dump.wait(timeout=5)
        return rc

    def finish(self, seconds_or_pred, timeout=None):
        """Waits (seconds, or until pred() or the daemon exits), stops it with
        SIGTERM, checks it was still running and exited 0; returns (log, dump)."""
        if callable(seconds_or_pred):
            wait_for(lambda: seconds_or_pred() or not self.running(), timeout)
        else:
            time.sleep(seconds_or_pred)
        alive = self.running()
        rc = self.stop()
        check(alive, "%s: still running when stopped" % self.name)
        check(rc == 0, "%s: exit status %s on SIGTERM (want 0)" % (self.name, rc))
        return self.log(), self.text()
