"""Drives the reference TUIO clients (TuioDump, Tuio2Dump: the TUIO protocol
author's own C++ libraries, built by tests/e2e_clients.sh) against one
tabletrack run and checks what each of them saw. Standard library only.

    refclients.py run BIN CLIENTS SEQ TRUTH OUT [TRACKER-OPTION]...

BIN is the tabletrack binary, CLIENTS the folder with TuioDump and
Tuio2Dump, SEQ the frame folder made by make_seq(), TRUTH the scene's
truth.json, OUT a folder for the logs. One daemon run serves four clients
at once:
    udp:127.0.0.1:P1               TuioDump -p P1               (TUIO 1.1, UDP)
    tcp:127.0.0.1:P2               TuioDump -t -a incoming -p P2 (daemon connects)
    tcp:listen:127.0.0.1:P3        TuioDump -t -a 127.0.0.1 -p P3 (client connects)
    udp:127.0.0.1:P4,tuio2         Tuio2Dump P4                 (TUIO 2.0, UDP)
(Tuio2Dump has no TCP mode.) Prints one line per client and exits 1 on any
failure.

    refclients.py seq SCENE SEQ LEAD GAP TAIL

links SCENE/frame_*.pgm into SEQ: LEAD blank frames (time for the clients
to connect), every scene frame (segment A), GAP blank frames (everything
leaves), the first TAIL scene frames again (segment B, which the shutdown
must remove).
"""
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time

HOST = "127.0.0.1"


def free_port(kind):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
    s.bind((HOST, 0))
    p = s.getsockname()[1]
    s.close()
    return p


def make_seq(scene, seq, lead, gap, tail):
    frames = sorted(f for f in os.listdir(scene) if f.startswith("frame_") and f.endswith(".pgm"))
    with open(os.path.join(scene, frames[0]), "rb") as f:
        f.readline()  # P5
        dims = f.readline().split()
        while dims and dims[0].startswith(b"#"):
            dims = f.readline().split()
        w, h = int(dims[0]), int(dims[1])
    os.makedirs(seq)
    blank = os.path.join(os.path.dirname(os.path.abspath(seq)), "blank.pgm")
    with open(blank, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h) + bytes([128]) * (w * h))
    order = [blank] * lead + [os.path.join(scene, f) for f in frames] + [blank] * gap + \
            [os.path.join(scene, f) for f in frames[:tail]]
    for i, src in enumerate(order):
        os.symlink(os.path.abspath(src), os.path.join(seq, "seq_%06d.pgm" % i))


def wait_for(path, pattern, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if re.search(pattern, open(path, errors="replace").read()):
                return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


# --- parsing the dumps ------------------------------------------------------

LINE11 = re.compile(r"^(add|set|del) (obj|cur|blb) (-?\d+) \((\d+)/(\d+)\)(.*)$")
LINE20 = re.compile(r"^(add|set|del) (tok|ptr|bnd|sym) (\d+)$")


class Session:
    def __init__(self, sid):
        self.sid = sid
        self.ident = None  # symbol ID for obj
        self.adds = self.sets = self.dels = 0
        self.pos = []  # (x, y) normalised, from add and set

    def count(self, op):
        if op == "add":
            self.adds += 1
        elif op == "set":
            self.sets += 1
        else:
            self.dels += 1


def parse11(path):
    """TuioDump output -> ({kind: {sid: Session}}, trailing del counts, other lines)."""
    sess = {"obj": {}, "cur": {}, "blb": {}}
    events = []
    other = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = LINE11.match(line)
        if not m:
            if line.strip():
                other.append(line)
            continue
        op, kind, ident, sid, _src, rest = m.groups()
        sid = int(sid)
        s = sess[kind].setdefault(sid, Session(sid))
        s.ident = int(ident)
        events.append((op, kind, sid))
        s.count(op)
        if op != "del":
            v = rest.split()
            s.pos.append((float(v[0]), float(v[1])))
    return sess, events, other


def parse20(path):
    sess = {"tok": {}, "ptr": {}, "bnd": {}, "sym": {}}
    events = []
    other = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = LINE20.match(line)
        if not m:
            if line.strip() and not re.match(r"(refresh |listening to TUIO2/UDP)", line):
                other.append(line)
            continue
        op, kind, sid = m.group(1), m.group(2), int(m.group(3))
        s = sess[kind].setdefault(sid, Session(sid))
        events.append((op, kind, sid))
        s.count(op)
    return sess, events, other


def final_alive(events):
    alive = set()
    for op, kind, sid in events:
        if op == "add":
            alive.add((kind, sid))
        elif op == "del":
            alive.discard((kind, sid))
    return alive


def trailing_dels(events):
    """The removals the shutdown sent: the del events after the last add/set."""
    n = {}
    for op, kind, sid in reversed(events):
        if op != "del":
            break
        n[kind] = n.get(kind, 0) + 1
    return n


def asan_errors(path):
    try:
        txt = open(path, errors="replace").read()
    except OSError:
        return []
    return [l for l in txt.splitlines() if "ERROR: AddressSanitizer" in l or "runtime error" in l]


# --- checks -----------------------------------------------------------------

def truth_tracks(truth):
    """Per symbol ID and per finger index, the truth positions (px) by frame."""
    syms, fingers = {}, {}
    for k, f in enumerate(truth["frames"]):
        for d in f["fiducials"]:
            syms.setdefault(d["id"], []).append((d["x"], d["y"], d["size"]))
        for i, d in enumerate(f["fingers"]):
            fingers.setdefault(i, []).append((d["x"], d["y"], d["r"]))
    return syms, fingers


def near_track(pos, track, W, H, tol):
    """Whether every reported position lies within tol(size) of the track."""
    for x, y in pos:
        px, py = x * W, y * H
        if min(math.hypot(px - tx, py - ty) - tol(s) for tx, ty, s in track) > 0:
            return False
    return True


def full_life(sessions):
    """Sessions that were added once, updated at least once and removed once."""
    return [s for s in sessions if s.adds == 1 and s.sets >= 1 and s.dels == 1]


def check11(path, truth, segments):
    W, H = truth["w"], truth["h"]
    sess, events, other = parse11(path)
    problems = []
    syms, fingers = truth_tracks(truth)
    for sym, track in sorted(syms.items()):
        ok = [s for s in full_life(s for s in sess["obj"].values() if s.ident == sym)
              if near_track(s.pos, track, W, H, lambda size: 0.3 * size)]
        if len(ok) < segments:
            problems.append("symbol %d: %d of %d sessions added, updated and removed near the truth" %
                            (sym, len(ok), segments))
    cur_sids = set()
    for i, track in sorted(fingers.items()):
        ok = [s for s in full_life(sess["cur"].values())
              if near_track(s.pos, track, W, H, lambda r: 2.0 * r)]
        cur_sids |= {s.sid for s in ok}
        if len(ok) < segments:
            problems.append("finger %d: %d of %d cursor sessions added, updated and removed near the truth" %
                            (i, len(ok), segments))
        # --finger-blobs: the finger is also a blob with the cursor's session ID
        bl = [s for s in full_life(sess["blb"].values()) if s.sid in {c.sid for c in ok}
              and near_track(s.pos, track, W, H, lambda r: 2.0 * r)]
        if len(bl) < segments:
            problems.append("finger %d: %d of %d blob sessions added, updated and removed near the truth" %
                            (i, len(bl), segments))
    for kind in ("obj", "cur", "blb"):
        for s in sess[kind].values():
            if s.adds != 1 or s.dels != 1:
                problems.append("%s %d: added %d times, removed %d times" % (kind, s.sid, s.adds, s.dels))
    alive = final_alive(events)
    if alive:
        problems.append("left alive after shutdown: %s" % sorted(alive)[:10])
    tail = trailing_dels(events)
    for kind in ("obj", "cur", "blb"):
        if not tail.get(kind):
            problems.append("the shutdown removed no %s (segment B not alive at the end?)" % kind)
    untagged = sum(1 for s in sess["blb"].values() if s.sid not in cur_sids)
    summary = "%d obj, %d cur, %d blb sessions (%d untagged blobs); shutdown removed %s" % (
        len(sess["obj"]), len(sess["cur"]), len(sess["blb"]), untagged,
        ", ".join("%d %s" % (tail.get(k, 0), k) for k in ("obj", "cur", "blb")))
    return sess, problems, other, summary


def check20(path, ref11):
    """Tuio2Dump prints session IDs only: every TUIO 1.1 session of the same
    run (UDP client) must be a token / pointer / bounds here, with a full
    life, and nothing else."""
    sess, events, other = parse20(path)
    problems = []
    for k11, k20 in (("obj", "tok"), ("cur", "ptr"), ("blb", "bnd")):
        want = set(ref11[k11])
        got = set(sess[k20])
        if want != got:
            problems.append("%s sessions %s missing, %s extra (against the TUIO 1.1 %s)" %
                            (k20, sorted(want - got)[:8], sorted(got - want)[:8], k11))
        for sid in got:
            s = sess[k20][sid]
            if s.adds != 1 or s.dels != 1:
                problems.append("%s %d: added %d times, removed %d times" % (k20, sid, s.adds, s.dels))
        moving = [sid for sid in want & got if ref11[k11][sid].sets > 0]
        if not any(sess[k20][sid].sets > 0 for sid in moving) and moving:
            problems.append("no %s was ever updated" % k20)
    alive = final_alive(events)
    if alive:
        problems.append("left alive after shutdown: %s" % sorted(alive)[:10])
    summary = "%d tok, %d ptr, %d bnd sessions" % (len(sess["tok"]), len(sess["ptr"]), len(sess["bnd"]))
    return problems, other, summary


def run(binary, clients, seq, truth_path, out, opts):
    truth = json.load(open(truth_path))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=66")
    p1, p2, p3, p4 = free_port("udp"), free_port("tcp"), free_port("tcp"), free_port("udp")
    procs = {}

    def start(name, argv):
        o = open(os.path.join(out, name + ".out"), "w")
        e = open(os.path.join(out, name + ".err"), "w")
        procs[name] = subprocess.Popen(argv, stdout=o, stderr=e, env=env)

    start("udp", [os.path.join(clients, "TuioDump"), "-p", str(p1)])
    start("tcp-in", [os.path.join(clients, "TuioDump"), "-t", "-a", "incoming", "-p", str(p2)])
    start("tuio2", [os.path.join(clients, "Tuio2Dump"), str(p4)])
    ok = wait_for(os.path.join(out, "tcp-in.out"), "TUIO/TCP socket created", 10)
    time.sleep(0.3)  # the UDP receivers bound
    log = open(os.path.join(out, "daemon.log"), "w")
    daemon = subprocess.Popen([binary, "--source", "folder:" + seq, "--headless",
                               "--tuio", "udp:%s:%d" % (HOST, p1),
                               "--tuio", "tcp:%s:%d" % (HOST, p2),
                               "--tuio", "tcp:listen:%s:%d" % (HOST, p3),
                               "--tuio", "udp:%s:%d,tuio2" % (HOST, p4)] + opts,
                              stdout=log, stderr=subprocess.STDOUT)
    if ok and wait_for(os.path.join(out, "daemon.log"), "sending to tcp:listen", 10):
        start("tcp-out", [os.path.join(clients, "TuioDump"), "-t", "-a", HOST, "-p", str(p3)])
    try:
        rc = daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
        rc = "timeout"
    time.sleep(0.5)  # the last datagrams read
    for name, p in procs.items():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs.values():
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
    fail = False
    if rc != 0:
        print("FAIL: tabletrack exit %s (log %s)" % (rc, open(os.path.join(out, "daemon.log")).read()[-2000:]))
        fail = True
    ref = None
    for name in ("udp", "tcp-in", "tcp-out"):
        path = os.path.join(out, name + ".out")
        if name not in procs or not os.path.exists(path):
            print("FAIL: TuioDump %s did not run" % name)
            fail = True
            continue
        sess, problems, other, summary = check11(path, truth, 2)
        if name == "udp":
            ref = sess
        noise = [l for l in other if not re.match(r"(TUIO/TCP socket created|listening to TUIO|closed TUIO/TCP)", l)]
        problems += ["client said: " + l for l in noise[:5]]
        problems += ["sanitizer: " + l for l in asan_errors(os.path.join(out, name + ".err"))[:3]]
        if name == "tcp-out" and procs[name].returncode != 0:
            problems.append("exit status %s (it ends by itself when the daemon closes)" % procs[name].returncode)
        print("%-8s TuioDump:  %s%s" % (name, summary, "" if problems else ": ok"))
        for pr in problems[:12]:
            print("  FAIL: " + pr)
        fail |= bool(problems)
    if ref is not None:
        problems, other, summary = check20(os.path.join(out, "tuio2.out"), ref)
        problems += ["client said: " + l for l in other[:5]]
        problems += ["sanitizer: " + l for l in asan_errors(os.path.join(out, "tuio2.err"))[:3]]
        print("%-8s Tuio2Dump: %s%s" % ("tuio2", summary, "" if problems else ": ok"))
        for pr in problems[:12]:
            print("  FAIL: " + pr)
        fail |= bool(problems)
    return 1 if fail else 0


if __name__ == "__main__":
    if sys.argv[1] == "seq":
        make_seq(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    elif sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7:]))
    else:
        sys.exit("usage: see the docstring")
