#!/bin/sh
# End to end: tabletrack-fiducials (generate, check, render, learn) and
# tabletrack-scenes (determinism, truth.json). Exit 0 pass, else fail.
# The reacTIVision sheets in ../shared are learnt too when present.
BUILD=${BUILD:-build}
F=$BUILD/tabletrack-fiducials
SC=$BUILD/tabletrack-scenes
for t in "$F" "$SC"; do
	[ -x "$t" ] || { echo "missing $t (run make)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# generate reproduces the checked-in sets; check confirms their guarantee.
# Its report states the guarantees: distance 4, holes of >= 0.077 / 0.093 card.
msg=$($F generate -o "$tmp/large.trees" 2>&1) || fail "generate: $msg"
cmp -s "$tmp/large.trees" fiducials/tabletrack.trees || fail "generate differs from fiducials/tabletrack.trees"
guarantee() { # report, least feature
	f=$(echo "$1" | sed -n 's/.*minimum leaf distance 4 .*smallest feature \([0-9.]*\) card.*/\1/p')
	[ -n "$f" ] && awk "BEGIN { exit !($f >= $2) }"
}
guarantee "$msg" 0.077 || fail "large set guarantees: $msg"
msg=$($F generate --small -o "$tmp/small.trees" 2>&1) || fail "generate --small: $msg"
cmp -s "$tmp/small.trees" fiducials/tabletrack-small.trees || fail "generate --small differs"
guarantee "$msg" 0.093 || fail "small set guarantees: $msg"
$F check --min-distance 4 fiducials/tabletrack.trees || fail "check (large, distance 4)"
$F check --min-distance 4 fiducials/tabletrack-small.trees || fail "check (small, distance 4)"
n=$(wc -w < fiducials/tabletrack.trees)
[ "$n" -ge 200 ] || fail "large set has $n IDs, fewer than 200"

# check rejects bad sets, each for its own reason.
reject() { # name, content, expected message
	printf "$2" > "$tmp/$1.trees"
	out=$($F check "$tmp/$1.trees" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || fail "check accepted $1 (rc $rc): $out"
	echo "$out" | grep -q "$3" || fail "check on $1 did not say '$3': $out"
}
reject malformed 'w0121\nw01x1\n' 'not a tree string'
reject badroot 'w1121\n' 'not a tree string'
reject depthjump 'w0131\n' 'not a tree string'
reject noncanonical 'w0112\n' 'not canonical'
reject duplicate 'w01221\nb01221\nw01221\n' 'duplicates ID 0'
reject ambiguous 'w012211\nw01221\n' 'ambiguous'
reject empty '' 'no symbols'
$F check "$tmp/nonexistent.trees" > /dev/null 2>&1 && fail "check accepted a missing file"
printf 'w01221\nw01212\n' > "$tmp/far.trees"
$F check "$tmp/far.trees" > /dev/null || fail "check rejected a good set"
$F check --min-distance 4 "$tmp/far.trees" > /dev/null 2>&1 && fail "check ignored --min-distance"

# Vector sheets: well-formed SVG and a PDF with header, pages and trailer.
$F render fiducials/tabletrack-small.trees -o "$tmp/small.svg" 2> /dev/null || fail "render svg"
for s in "$tmp"/small-*.svg; do
	python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$s" ||
		fail "bad SVG $s"
done
$F render fiducials/tabletrack-small.trees -o "$tmp/small.pdf" || fail "render pdf"
head -c 8 "$tmp/small.pdf" | grep -q '%PDF-1.4' || fail "PDF header"
tail -c 6 "$tmp/small.pdf" | grep -q '%%EOF' || fail "PDF trailer"
grep -aq '/Count 2' "$tmp/small.pdf" || fail "PDF page count"
grep -aq '/FlateDecode' "$tmp/small.pdf" || fail "PDF page streams not compressed"
# The user's way back from a printed sheet (fiducials/README.md): rasterise
# the PDF with poppler and learn it; the IDs must come back in order.
pdftoppm -r 100 -gray -png "$tmp/small.pdf" "$tmp/pdfpage" || fail "pdftoppm cannot read our PDF"
$F learn -o "$tmp/pdf-learnt.trees" "$tmp"/pdfpage-*.png 2> /dev/null || fail "learn (PDF pages)"
cmp -s "$tmp/pdf-learnt.trees" fiducials/tabletrack-small.trees || fail "set learnt from the PDF differs"
$F render fiducials/tabletrack-small.trees --dir "$tmp/one" || fail "render --dir"
[ -f "$tmp/one/fid_023.svg" ] || fail "render --dir wrote no fid_023.svg"
printf 'w01234\n' > "$tmp/deep.trees"
$F render "$tmp/deep.trees" -o "$tmp/deep.svg" 2> /dev/null && fail "render drew a depth-4 tree"

# Learning our own rendered sheets gives our sets back, exactly.
$F render fiducials/tabletrack-small.trees -o "$tmp/ours-small.png" 2> /dev/null || fail "render png"
$F learn -o "$tmp/learnt-small.trees" "$tmp"/ours-small-*.png 2> /dev/null || fail "learn (small)"
cmp -s "$tmp/learnt-small.trees" fiducials/tabletrack-small.trees || fail "learnt small set differs"
$F render fiducials/tabletrack.trees --size-mm 40 -o "$tmp/large.png" 2> /dev/null || fail "render png"
$F learn -o "$tmp/learnt.trees" "$tmp"/large-*.png 2> /dev/null || fail "learn (large)"
cmp -s "$tmp/learnt.trees" fiducials/tabletrack.trees || fail "learnt large set differs"
$F learn -o "$tmp/x.trees" "$tmp/nonexistent.png" 2> /dev/null && fail "learn accepted a missing sheet"

# reacTIVision's printed sheets give back its sets (when ../shared is here).
S=${TABLETRACK_SHARED:-../shared}/fiducials/reactivision
if [ -d "$S/sheets" ]; then
	for set in default small mini; do
		$F learn -o "$tmp/rv-$set.trees" "$S/sheets/$set"-*.png 2> /dev/null || fail "learn $set"
		cmp -s "$tmp/rv-$set.trees" "$S/$set.trees" || fail "learnt $set differs from $set.trees"
	done
	echo "learnt reacTIVision default, small, mini exactly"
else
	echo "no ../shared: reacTIVision sheets not tested"
fi

# Scenes: deterministic per seed, truth.json well formed and complete.
$SC -o "$tmp/sa" --frames 3 --fids 6 --clutter 5 --seed 7 --jpeg 80 --motion 2 || fail "scenes"
$SC -o "$tmp/sb" --frames 3 --fids 6 --clutter 5 --seed 7 --jpeg 80 --motion 2 || fail "scenes"
for f in truth.json frame_00000.png frame_00002.png; do
	cmp -s "$tmp/sa/$f" "$tmp/sb/$f" || fail "scenes not deterministic ($f)"
done
$SC -o "$tmp/sc" --frames 3 --fids 6 --clutter 5 --seed 8 --jpeg 80 --motion 2 || fail "scenes"
cmp -s "$tmp/sa/frame_00000.png" "$tmp/sc/frame_00000.png" && fail "seed has no effect"
$SC -o "$tmp/sm" --frames 4 --fids 4 --move 3 --format pgm --size 320x240 --fid-size 40:60 ||
	fail "scenes --move"
[ -f "$tmp/sm/frame_00003.pgm" ] || fail "scenes --format pgm"
python3 - "$tmp/sa/truth.json" "$tmp/sm/truth.json" <<'PY' || fail "truth.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["w"] == 640 and d["h"] == 480 and len(d["frames"]) == 3, d.keys()
for f in d["frames"]:
    assert len(f["fiducials"]) == 6 and len(f["fingers"]) == 5, f
    for o in f["fiducials"]:
        assert 0 <= o["angle"] < 6.2832 and 60 <= o["size"] <= 110
        assert 0 < o["x"] < 640 and 0 < o["y"] < 480
    ids = [o["id"] for o in f["fiducials"]]
    assert len(set(ids)) == len(ids)
m = json.load(open(sys.argv[2]))
a, b = m["frames"][0]["fiducials"], m["frames"][3]["fiducials"]
assert [o["id"] for o in a] == [o["id"] for o in b], "--move must keep the symbols"
moved = sum(abs(p["x"] - q["x"]) + abs(p["y"] - q["y"]) for p, q in zip(a, b))
assert moved > 1, "--move did not move"
PY
$SC -o "$tmp/bad" --blur -1 2> /dev/null && fail "scenes accepted --blur -1"
$SC -o "$tmp/bad" --trees "$tmp/deep.trees" 2> /dev/null && fail "scenes accepted an undrawable set"
echo "fiducials and scenes: all checks passed"
exit 0
