#!/bin/sh
# Signals as a service manager sends them, watched by oscdump (liblo-tools),
# a TUIO client nobody here wrote:
#   SIGTERM, SIGINT: exit 0, and every profile (/tuio/2Dobj, 2Dcur, 2Dblb)
#     ends with a bundle whose alive is empty (clients clear their state),
#     after the demo had objects and fingers alive;
#   SIGHUP: a --config file whose [threshold] gate changed is re-read: the
#     log names the new gate, fseq stays contiguous across the reload (no
#     frame lost), tracking goes on; a changed source is named as needing a
#     restart and the daemon keeps its running source; then verbose = true
#     in the file turns debug lines on at once (a later reload logs one),
#     and quiet = true turns info lines off.
# Loopback only; every wait is bounded. Exit 0 pass, 77 skip, else fail.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
e2e_need_daemon
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

PYTHONPATH="$E2E_LIB" python3 - "$B/tabletrack" "$T" <<'PY'
import os, re, signal, sys

from e2e import Run, check, failures, fseqs, gaps, messages, setup, wait_for

daemon, tmp = sys.argv[1], sys.argv[2]
setup(daemon, tmp)
PROFILES = ("2Dobj", "2Dcur", "2Dblb")


def final_bundles_empty(text):
    """For each profile: the last alive is empty and is closed by an fseq."""
    msgs = messages(text)
    res = {}
    for prof in PROFILES:
        mine = [(tags, kind, args) for p, tags, kind, args in msgs if p == prof]
        alives = [i for i, m in enumerate(mine) if m[1] == "alive"]
        if not alives:
            res[prof] = "no alive at all"
            continue
        last = alives[-1]
        tags, _, args = mine[last]
        closed = any(m[1] == "fseq" for m in mine[last + 1:])
        if tags != "s" or args:
            res[prof] = "last alive not empty: %s %s" % (tags, args)
        elif not closed:
            res[prof] = "last alive not closed by an fseq"
        else:
            res[prof] = None
    return res


def had_items(text, prof):
    return any(p == prof and kind == "alive" and args for p, _, kind, args in messages(text))


# --- SIGTERM and SIGINT: empty bundles, exit 0 ---------------------------------
for name, sig in (("sigterm", signal.SIGTERM), ("sigint", signal.SIGINT)):
    r = Run(name, ["--source", "demo", "--quiet"])
    # The demo's symbols and fingers must be alive before the stop, so that
    # an empty final alive means "cleared", not "never had anything".
    wait_for(lambda: r.frames() >= 20 and had_items(r.text(), "2Dobj") and had_items(r.text(), "2Dcur")
             or r.proc.poll() is not None, 15)
    n = r.frames()
    rc = r.stop(sig)
    text = r.text()
    check(rc == 0, "%s: exit status %s (want 0)" % (name, rc))
    check(n >= 20, "%s: %d frames before the signal" % (name, n))
    check(had_items(text, "2Dobj") and had_items(text, "2Dcur"),
          "%s: objects and fingers were alive before the stop" % name)
    for prof, why in final_bundles_empty(text).items():
        check(why is None, "%s: /tuio/%s final bundle has an empty alive%s" % (name, prof, ": " + why if why else ""))
    seq = fseqs(text)
    check(not gaps(seq), "%s: fseq contiguous 1..%s (gaps: %s)" % (name, seq[-1] if seq else "-", gaps(seq)[:3]))
    if failures:
        print(r.log()[-2000:])

# --- SIGHUP: live gate, restart-only source -------------------------------------
conf = os.path.join(tmp, "tabletrack.conf")


def write_conf(source, gate, fps, verbose=False, quiet=False):
    with open(conf + ".tmp", "w") as f:
        f.write("# e2e_signals\n[source]\nsource = %s\nfps = %d\n[threshold]\ngate = %d\n" % (source, fps, gate))
        f.write("[daemon]\nverbose = %s\nquiet = %s\n" % (str(verbose).lower(), str(quiet).lower()))
    os.rename(conf + ".tmp", conf)  # as an editor saves: never half a file


write_conf("demo", 32, 30)
r = Run("sighup", ["--config", conf, "--stats"])
ok = wait_for(lambda: r.frames() >= 15 or r.proc.poll() is not None, 15)
check(ok and r.proc.poll() is None, "sighup: daemon running with frames flowing (%d)" % r.frames())

write_conf("demo", 40, 30)
before = r.frames()
r.proc.send_signal(signal.SIGHUP)
got = wait_for(lambda: "SIGHUP: gate = 40 (was 32)" in r.log(), 10)
check(got, "sighup: log says 'SIGHUP: gate = 40 (was 32)'")
check("configuration reloaded from %s (1 live key changed, 0 need a restart)" % conf in r.log(),
      "sighup: reload summary names 1 live key, none needing a restart")
# Frames after the reload, then a second reload that changes the source.
wait_for(lambda: r.frames() >= before + 20 or r.proc.poll() is not None, 10)
check(r.frames() >= before + 20, "sighup: frames go on after the reload (%d -> %d)" % (before, r.frames()))

write_conf("file:/nonexistent/never-opened.png", 40, 10)
mark = r.frames()
r.proc.send_signal(signal.SIGHUP)
got = wait_for(lambda: r.log().count("SIGHUP: configuration reloaded") >= 2, 10)
log = r.log()
check(got, "sighup: second reload done")
check("SIGHUP: source changed ('demo' -> 'file:/nonexistent/never-opened.png'): needs a restart, keeping 'demo'" in log,
      "sighup: a changed source is named as needing a restart")
check("SIGHUP: fps changed ('30' -> '10'): needs a restart" in log, "sighup: a changed fps is named as needing a restart")
check("(0 live keys changed, 2 need a restart)" in log, "sighup: summary counts 2 keys needing a restart")
wait_for(lambda: r.frames() >= mark + 20 or r.proc.poll() is not None, 10)
check(r.frames() >= mark + 20, "sighup: still tracking the demo after the source change was refused")

# verbose and quiet are live: the log level follows the file.
check("debug:" not in log, "sighup: no debug line before verbose = true")
write_conf("file:/nonexistent/never-opened.png", 40, 10, verbose=True)
r.proc.send_signal(signal.SIGHUP)
got = wait_for(lambda: r.log().count("SIGHUP: configuration reloaded") >= 3, 10)
log = r.log()
check(got and "SIGHUP: verbose = true (was false)" in log, "sighup: log says 'SIGHUP: verbose = true (was false)'")
check("log level debug (was info)" in log, "sighup: log says 'log level debug (was info)'")
write_conf("file:/nonexistent/never-opened.png", 44, 10, verbose=True)
r.proc.send_signal(signal.SIGHUP)
got = wait_for(lambda: r.log().count("SIGHUP: configuration reloaded") >= 4, 10)
log = r.log()
check(got and "tabletrack: debug: SIGHUP: reading %s" % conf in log,
      "sighup: a debug line after verbose = true ('debug: SIGHUP: reading ...')")
write_conf("file:/nonexistent/never-opened.png", 48, 10, quiet=True)
r.proc.send_signal(signal.SIGHUP)
got = wait_for(lambda: "log level warning (was debug)" in r.log(), 10)
check(got, "sighup: log says 'log level warning (was debug)'")
# The reload's own closing info line comes after the switch: dropped now.
mark = r.frames()
wait_for(lambda: r.frames() >= mark + 15 or r.proc.poll() is not None, 10)
check(r.log().count("SIGHUP: configuration reloaded") == 4, "sighup: no info line after quiet = true")

rc = r.stop(signal.SIGTERM)
text, log = r.text(), r.log()
check(rc == 0, "sighup: exit status %s after SIGTERM (want 0)" % rc)
seq = fseqs(text)
check(len(seq) >= 40, "sighup: %d frames in all" % len(seq))
check(not gaps(seq), "sighup: fseq contiguous across the reloads, 1..%s (gaps: %s)"
      % (seq[-1] if seq else "-", gaps(seq)[:3]))
m = re.search(r"--stats: (\d+) frames, (\d+) skipped", log)
check(m is not None and int(m.group(2)) == 0, "sighup: no frame skipped (%s)" % (m.group(0) if m else "no --stats line"))
# --stats splits the pipeline thread's CPU by step (issue 14: where a
# headless daemon's CPU goes); the steps' means add up to the sum shown.
m = re.search(r"pipeline thread CPU a frame: between frames ([0-9.]+) ms, submit ([0-9.]+) ms, threshold wait "
              r"([0-9.]+) ms, segment\+match ([0-9.]+) ms, track ([0-9.]+) ms, tuio ([0-9.]+) ms, report ([0-9.]+) ms "
              r"\(sum ([0-9.]+) ms\)", log)
check(m is not None and abs(sum(float(g) for g in m.groups()[:7]) - float(m.group(8))) < 0.01,
      "sighup: --stats prints the pipeline thread's CPU by step (%s)" % (m.group(0) if m else "no such line"))
for line in log.splitlines():
    if "SIGHUP" in line:
        print("  log: " + line)
if failures:
    print(log[-3000:])
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
PY
