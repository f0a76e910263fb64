#!/bin/sh
# make install into a staging directory (DESTDIR), as a package build would:
# the daemon and tools in PREFIX/bin, the config in /etc/tabletrack (kept on
# a second install), every symbol set with its subfolders, both unit files
# with ExecStart pointing at PREFIX/bin, a man page and the docs; the
# installed daemon runs --version and accepts the installed config; make
# uninstall removes everything but /etc/tabletrack.
# Exit 0 pass, 77 skip (no make), else fail.
B=${BUILD:-build}
command -v make >/dev/null 2>&1 || { echo "make missing: skipped"; exit 77; }
[ -x "$B/tabletrack" ] || { echo "FAIL: $B/tabletrack not built"; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

inst() { # destdir prefix [more make args]
	d=$1 p=$2
	shift 2
	make --no-print-directory install BUILD="$B" DESTDIR="$d" PREFIX="$p" "$@" >"$T/make.log" 2>&1 ||
		{ bad "make install DESTDIR=$d PREFIX=$p failed:"; tail -20 "$T/make.log"; return 1; }
}

D=$T/root
inst "$D" /usr/local || exit 1
ok "make install DESTDIR=\$tmp PREFIX=/usr/local"

bin=$D/usr/local/bin/tabletrack
if [ -x "$bin" ]; then
	v=$("$bin" --version 2>&1)
	rc=$?
	case $v in
	"tabletrack "[0-9]*) [ $rc -eq 0 ] && ok "installed daemon: $v" || bad "--version exit $rc" ;;
	*) bad "installed daemon --version printed '$v' (exit $rc)" ;;
	esac
else
	bad "$bin missing or not executable"
fi
for t in "$B"/tabletrack-*; do
	[ -x "$t" ] || continue
	[ -x "$D/usr/local/bin/$(basename "$t")" ] || bad "tool $(basename "$t") not installed"
done
n_tools=$(ls "$D/usr/local/bin" | grep -c '^tabletrack-')
ok "$n_tools tools installed in /usr/local/bin"

conf=$D/etc/tabletrack/tabletrack.conf
if cmp -s config/tabletrack.conf "$conf"; then ok "/etc/tabletrack/tabletrack.conf installed"; else bad "$conf missing or differs from config/tabletrack.conf"; fi
cmp -s config/tabletrack.conf "$D/usr/local/share/tabletrack/tabletrack.conf" ||
	bad "pristine copy share/tabletrack/tabletrack.conf missing"
for f in config/calibration-sheet*.svg; do
	cmp -s "$f" "$D/usr/local/share/tabletrack/${f#config/}" || bad "calibration sheet $f not installed"
done
if [ -x "$bin" ]; then
	"$bin" --config "$conf" --print-config >"$T/print.txt" 2>&1 &&
		ok "installed daemon accepts the installed config (--print-config)" ||
		{ bad "installed daemon rejects $conf:"; cat "$T/print.txt"; }
fi

n_fid=0
for f in $(find fiducials -type f); do
	n_fid=$((n_fid + 1))
	cmp -s "$f" "$D/usr/local/share/tabletrack/$f" || bad "symbol set file $f not installed"
done
[ "$n_fid" -gt 0 ] && ok "$n_fid files of fiducials/ installed under share/tabletrack/fiducials"

for u in tabletrack.service tabletrack@.service; do
	f=$D/usr/local/lib/systemd/system/$u
	if [ -f "$f" ] && grep -q '^ExecStart=/usr/local/bin/tabletrack --headless --config ' "$f"; then
		ok "unit $u installed"
	else
		bad "unit $u missing from lib/systemd/system or ExecStart wrong"
	fi
done
grep -q '^\.TH TABLETRACK 1' "$D/usr/local/share/man/man1/tabletrack.1" 2>/dev/null &&
	grep -q -- '--config FILE' "$D/usr/local/share/man/man1/tabletrack.1" &&
	ok "man page share/man/man1/tabletrack.1" || bad "man page missing or without the options"
if command -v man >/dev/null 2>&1 && [ -f "$D/usr/local/share/man/man1/tabletrack.1" ]; then
	MANWIDTH=80 man -l "$D/usr/local/share/man/man1/tabletrack.1" 2>/dev/null | grep -q -- '--headless' &&
		ok "man -l renders it" || bad "man -l cannot render the man page"
fi
[ -f "$D/usr/local/share/doc/tabletrack/README.md" ] && ok "docs in share/doc/tabletrack" ||
	bad "README.md not in share/doc/tabletrack"

# A second install keeps the edited config and puts the new default beside it.
echo "# edited by the admin" >>"$conf"
inst "$D" /usr/local || exit 1
if tail -1 "$conf" | grep -q 'edited by the admin'; then ok "second install keeps the edited config"; else bad "second install overwrote $conf"; fi
cmp -s config/tabletrack.conf "$D/etc/tabletrack/tabletrack.conf.default" &&
	ok "new default beside it as tabletrack.conf.default" || bad "tabletrack.conf.default missing"

# PREFIX=/usr: the units point at /usr/bin.
inst "$T/usr" /usr || exit 1
grep -q '^ExecStart=/usr/bin/tabletrack ' "$T/usr/usr/lib/systemd/system/tabletrack.service" &&
	grep -q '^ExecStart=/usr/bin/tabletrack ' "$T/usr/usr/lib/systemd/system/tabletrack@.service" &&
	ok "PREFIX=/usr: units run /usr/bin/tabletrack" || bad "PREFIX=/usr: unit ExecStart not rewritten"

# Uninstall leaves only /etc/tabletrack.
make --no-print-directory uninstall BUILD="$B" DESTDIR="$D" PREFIX=/usr/local >"$T/make.log" 2>&1 || bad "make uninstall failed"
left=$(cd "$D" && find . -type f ! -path './etc/tabletrack/*' | head -5)
[ -z "$left" ] && ok "make uninstall removes everything but /etc/tabletrack" || bad "left after uninstall: $left"
[ -f "$conf" ] || bad "uninstall removed the config"
exit $fail
