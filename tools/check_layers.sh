#!/bin/sh
# tools/check_layers.sh - the include rules of architecture.md, checked.
#
#     sh tools/check_layers.sh [ROOT]      check the tree at ROOT (default .)
#     sh tools/check_layers.sh --self-test check that each rule catches a
#                                          bad include in a made-up tree
#
# Every #include of src/ and cuda/ (C, C++ and CUDA files) is read (tests/ and tools/ are free):
#   core      includes nothing from another room;
#   stages    (every room but pipeline/ and ui/, and cuda/) never include
#             pipeline/ or ui/ headers;
#   ui        includes only core/ and ui/: it reads the snapshot
#             (core/snapshot.h), never a tracking (track/) or other stage header;
#   liblo     <lo/...> only in src/tuio/;
#   SDL       <SDL...> only in src/ui/;
#   CUDA      <cuda*.h>, <cub/...>, <thrust/...>, <cooperative_groups...>,
#             <nv*.h> only in cuda/;
#   V4L2      <libv4l2.h>, <libv4lconvert.h>, <linux/videodev2.h> only in
#             src/capture/;
#   OpenCV    <opencv2/...> only in src/objects/ (its C++ wrapper).
# Quoted includes are resolved against the including file's folder.
# ALLOW lists breaks that are known and tracked (file:included path); they
# are printed, not failed, and an entry that no longer matches fails, so the
# list only shrinks.
# Prints one line a break; exit 0 when none, 1 otherwise.

ALLOW=""

check() { # root
	root=$1
	(cd "$root" && find src cuda -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' \) 2>/dev/null | sort |
		while read -r f; do
			grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | sed "s|^|$f:|"
		done) |
		awk -v allow="$ALLOW" '
	function room(p) {
		if (p ~ /^cuda\//) return "cuda"
		if (p ~ /^src\/[^\/]+\//) { split(p, a, "/"); return a[2] }
		if (p ~ /^src\//) return "main"
		return "outside"
	}
	function norm(dir, inc,   n, parts, out, k, i, m) {
		n = split(dir "/" inc, parts, "/")
		k = 0
		for (i = 1; i <= n; i++) {
			if (parts[i] == "" || parts[i] == ".") continue
			if (parts[i] == "..") { if (k > 0) k--; else out[++k] = ".."; continue }
			out[++k] = parts[i]
		}
		m = out[1]
		for (i = 2; i <= k; i++) m = m "/" out[i]
		return m
	}
	function bad(f, line, what) {
		key = f ":" what
		if (key in allowed) { used[key] = 1; printf "known (tracked, allowed for now): %s:%s: %s\n", f, line, msg; return }
		printf "%s:%s: %s\n", f, line, msg
		n_bad++
	}
	BEGIN {
		n = split(allow, a, /[ \n]+/)
		for (i = 1; i <= n; i++) if (a[i] != "") allowed[a[i]] = 1
	}
	{
		# file:line:#include ...
		f = $0; sub(/:.*/, "", f)
		rest = substr($0, length(f) + 2)
		line = rest; sub(/:.*/, "", line)
		text = substr(rest, length(line) + 2)
		r = room(f)
		dir = f; sub(/\/[^\/]*$/, "", dir)
		if (match(text, /"[^"]+"/)) {
			inc = substr(text, RSTART + 1, RLENGTH - 2)
			p = norm(dir, inc)
			t = room(p)
			if (r == "core" && t != "core") {
				msg = "core includes " p ": core depends on nothing"; bad(f, line, p)
			} else if (r != "pipeline" && r != "ui" && r != "main" && (t == "pipeline" || t == "ui")) {
				msg = r " includes " p ": stages never include the pipeline or the UI"; bad(f, line, p)
			} else if (r == "ui" && t != "core" && t != "ui") {
				msg = "ui includes " p ": the UI reads the snapshot (core/), not " t "/ headers"; bad(f, line, p)
			}
		} else if (match(text, /<[^>]+>/)) {
			h = substr(text, RSTART + 1, RLENGTH - 2)
			need = ""
			if (h ~ /^lo\//) need = "tuio"
			else if (h ~ /^SDL/) need = "ui"
			else if (h ~ /^(cuda|cub\/|thrust\/|cooperative_groups|nv[A-Za-z_]*\.h|curand|cufft|cublas)/) need = "cuda"
			else if (h ~ /^(libv4l2\.h|libv4lconvert\.h|linux\/videodev2\.h)$/) need = "capture"
			else if (h ~ /^opencv2\//) need = "objects"
			if (need != "" && r != need) {
				msg = "<" h "> outside " (need == "cuda" ? "cuda/" : "src/" need "/"); bad(f, line, "<" h ">")
			}
		}
	}
	END {
		for (k in allowed) if (!(k in used)) {
			printf "%s: allowed in tools/check_layers.sh but no longer there: remove it from ALLOW\n", k
			n_bad++
		}
		if (n_bad) { printf "layers: %d include(s) break architecture.md\n", n_bad; exit 1 }
		print "layers: every include keeps architecture.md'"'"'s rules"
	}'
}

self_test() {
	t=$(mktemp -d) || exit 1
	trap 'rm -rf "$t"' EXIT
	fail=0
	mk() { # root, file, line
		mkdir -p "$1/$(dirname "$2")"
		printf '%s\n' "$3" >>"$1/$2"
	}
	good() { # a tree that keeps every rule, plus the allowed breaks
		mk "$1" src/core/image.h '#include <stdint.h>'
		mk "$1" src/core/log.c '#include "log.h"'
		mk "$1" src/threshold/cpu.c '#include "../core/image.h"'
		mk "$1" src/threshold/cpu.c '#include "../../cuda/bernsen_cuda.h"'
		mk "$1" src/tuio/tuio.c '#include <lo/lo.h>'
		mk "$1" src/ui/ui_sdl.c '#include <SDL.h>'
		mk "$1" src/ui/ui_sdl.c '#include "../core/snapshot.h"'
		mk "$1" src/capture/v4l2.c '#include <linux/videodev2.h>'
		mk "$1" src/pipeline/pipeline.c '#include "../ui/ui.h"'
		mk "$1" src/pipeline/pipeline.c '#include "../track/track.h"'
		mk "$1" src/main.c '#include "pipeline/pipeline.h"'
		mk "$1" cuda/bernsen.cu '#include <cuda_runtime.h>'
		mk "$1" src/objects/sift_opencv.cpp '#include <opencv2/features2d.hpp>'
		for a in $ALLOW; do
			mk "$1" "${a%%:*}" "#include \"$(echo "${a%%:*}" | sed 's|[^/]*/|../|g; s|[^/]*$||')${a#*:}\""
		done
	}
	n=0
	good "$t/good"
	if check "$t/good" >"$t/out" 2>&1; then
		echo "ok: self-test: a tree that keeps the rules passes"
	else
		echo "FAIL: self-test: a good tree was refused:"; cat "$t/out"; fail=1
	fi
	for case in \
		'src/core/ring.c|#include "../capture/capture.h"|core depends on nothing' \
		'src/segment/segment.c|#include "../pipeline/pipeline.h"|never include the pipeline' \
		'src/threshold/cpu.c|#include "../ui/ui.h"|never include the pipeline or the UI' \
		'src/ui/ui.c|#include "../track/track.h"|the UI reads the snapshot' \
		'src/pipeline/pipeline.c|#include <lo/lo.h>|outside src/tuio/' \
		'src/pipeline/demo.c|#include <SDL2/SDL.h>|outside src/ui/' \
		'src/threshold/threshold.c|#include <cuda_runtime.h>|outside cuda/' \
		'src/pipeline/pipeline.c|#include <libv4l2.h>|outside src/capture/' \
		'src/fiducial/match.c|  #  include <linux/videodev2.h>|outside src/capture/' \
		'src/pipeline/engine.cpp|#include <opencv2/core.hpp>|outside src/objects/'; do
		n=$((n + 1))
		f=${case%%|*}
		rest=${case#*|}
		inc=${rest%%|*}
		want=${rest#*|}
		good "$t/bad$n"
		mk "$t/bad$n" "$f" "$inc"
		if check "$t/bad$n" >"$t/out" 2>&1; then
			echo "FAIL: self-test: $f with '$inc' passed"; fail=1
		elif grep -q -- "$want" "$t/out"; then
			echo "ok: self-test: $f with '$inc' fails: $(grep -- "$want" "$t/out" | head -1)"
		else
			echo "FAIL: self-test: $f with '$inc' failed without naming the rule:"; cat "$t/out"; fail=1
		fi
	done
	if [ -n "$ALLOW" ]; then
		a=$(echo $ALLOW | cut -d' ' -f1)
		good "$t/stale"
		rm -f "$t/stale/${a%%:*}"
		if check "$t/stale" >"$t/out" 2>&1; then
			echo "FAIL: self-test: an ALLOW entry that no longer matches passed"; fail=1
		else
			echo "ok: self-test: a stale ALLOW entry fails"
		fi
	fi
	return $fail
}

case $1 in
--self-test) self_test ;;
*) check "${1:-.}" ;;
esac
