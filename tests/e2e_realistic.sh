#!/bin/sh
# End to end on harsh, real-room scenes (issue 13): build/tabletrack-scenes
# draws each --preset (tilted camera, barrel lens, uneven IR light, hard
# shadows, hands, small symbols, motion, defocus, all together) from a seed
# at test time; tabletrack --once runs them through the same harness as
# e2e_scenes.sh (each scene three times, then two blank frames; --grid with
# the lens's grid.txt, so positions are scored undistorted); oscdump decodes
# the TUIO and tests/tuio_check.py scores it. Prints recall, wrong IDs and
# false positives a set, and fails below the floors today's tracker reaches.
#
# Bigger offline runs (no floors checked; any tracker options, any set):
#   REALISTIC_FRAMES=48 REALISTIC_CHECK=0 REALISTIC_OPTS="--threshold tiled" \
#   REALISTIC_TREES=SET.trees sh tests/e2e_realistic.sh
# REALISTIC_SETS="tilt sheet-default" runs only the sets so named.
B=${BUILD:-build}
. "$(dirname "$0")/lib/e2e.sh"
command -v oscdump >/dev/null || { echo "oscdump missing (liblo-tools)"; exit 77; }
T=$(mktemp -d); trap 'kill $e2e_dump 2>/dev/null; rm -rf "$T"' EXIT
FRAMES=${REALISTIC_FRAMES:-8}
CHECK=${REALISTIC_CHECK:-1}
TREES=${REALISTIC_TREES:-fiducials/tabletrack.trees}
fail=0

# run_set PRESET SEED CHECK-OPTIONS...; SET_TREES=FILE draws and tracks
# another symbol set for this one run (named PRESET-SET), SET_DRAW=DIR
# draws its symbols from their printed pictures DIR/fid_NNN.png
# (tabletrack-scenes --drawings; named PRESET-SET-drawn), SET_SCENE adds scene
# options (SET_NAME names such a set), SET_OPTS tracker options. A frame whose tree the segmenter cut short (more regions
# than it holds: noise let through as structure) fails the set.
run_set() {
	preset=$1 name=$1 seed=$2 trees=${SET_TREES:-$TREES}; shift 2
	[ -n "${SET_TREES:-}" ] && name=$preset-$(basename "$SET_TREES" .trees)
	draw=""
	[ -n "${SET_DRAW:-}" ] && name=$name-drawn draw="--drawings $SET_DRAW"
	[ -n "${SET_NAME:-}" ] && name=$SET_NAME
	case " ${REALISTIC_SETS:-$name} " in *" $name "*) ;; *) return ;; esac
	# shellcheck disable=SC2086 # option lists split on purpose
	"$B/tabletrack-scenes" -o "$T/$name" --preset "$preset" --seed "$seed" --frames "$FRAMES" \
		--trees "$trees" $draw ${SET_SCENE:-} >/dev/null || { echo "FAIL: scenes $name"; fail=1; return; }
	e2e_scene_seq "$T/$name" "$T/$name-seq"
	grid=""
	[ -f "$T/$name/grid.txt" ] && grid="--grid $T/$name/grid.txt"
	# shellcheck disable=SC2086 # option lists split on purpose
	e2e_once_to_osc "$T/$name-seq" "$T/$name.osc" --trees "$trees" $grid ${REALISTIC_OPTS:-} ${SET_OPTS:-} \
		2>"$T/$name.err" || { echo "FAIL: tracker exit $? on $name"; fail=1; }
	grep "than capacity" "$T/$name.err" && { echo "FAIL: $name: a frame's tree cut short"; fail=1; }
	[ "$CHECK" = 1 ] || set --
	python3 tests/tuio_check.py score "$T/$name.osc" "$T/$name/truth.json" 3 2 "$@" >"$T/$name.score"
	rc=$?
	python3 -c "import json, sys
r = json.loads(open(sys.argv[2]).readline())
edge = '' if not r['edge_symbols'] else '  shadow edge %d: recall %.3f' % (r['edge_symbols'], r['edge_recall'])
print('%-12s symbols %3d (+%d occluded)  recall %.3f  wrong IDs %d  false pos. %d  pos. p95 %.2f px  angle p95 %.2f deg%s'
      % (sys.argv[1], r['symbols'], r['occluded'], r['recall'], r['wrong_id'], r['false_pos'],
         r['pos_p95'], r['angle_p95'], edge))" "$name" "$T/$name.score"
	tail -n +2 "$T/$name.score"
	[ $rc = 0 ] || fail=1
}

# Each set, and each single frame checked below (frame_holds), runs as its
# own job, JOBS (one a CPU) at a time; their reports are printed in the
# order of the calls below once all have ended.
JOBS=${REALISTIC_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
k=0
# bg FUNCTION ARGS...: FUNCTION in the background, its report in $T/job.K
# and its verdict (its fail) in $T/job.K.rc.
bg() {
	k=$((k + 1))
	( fail=0; "$@"; echo $fail >"$T/job.$k.rc" ) >"$T/job.$k" 2>&1 &
	eval "pid_$k=$!"
	[ $k -gt "$JOBS" ] || return 0
	eval "wait \$pid_$((k - JOBS))"
}
# job PRESET SEED CHECK-OPTIONS...: run_set as a job.
job() { bg run_set "$@"; }

# Floors: a little below today's figures (8 frames each; see the README's
# table of realistic sets), zero wrong IDs and false positives as today;
# where hard shadows fall, also the recall of the symbols their edges cross
# ("shadow_edge" in truth.json, tools/scenes.c).
job tilt 31 --min-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
job barrel 32 --min-recall 0.96 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
job uneven 33 --min-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
job shadow 34 --min-recall 0.96 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
job hands 35 --min-recall 0.97 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Two hard shadows a frame, each of its own light keeping a quarter to half
# of it: where they overlap the paper keeps 6-20 % and its print falls
# under the gate; the closing pass read again at a lower gate (close_dark;
# 0.844, edge 0.773 without it; 0.875, edge 0.818 without its read at
# two and three times the windows' radius, third.c THIRD_DARK_WIDE).
job shadow-dark 55 --min-recall 0.88 --min-edge-recall 0.82 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Two hard shadows of one light, the shadow side a quarter to half of the
# lit side (the third scale's ratio pass: 0.922 without it; 0.984, edge
# 0.977 without the dark read at two and three times the windows' radius).
job sun 42 --min-recall 0.98 --min-edge-recall 0.97 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Symbols of 120-240 px on 1280x960 frames that two hard shadows cross (a
# camera near the table): the ratio pass's larger radii (ratio3_large;
# 0.844, edge 0.787 without them).
job shadow-large 52 --min-recall 0.95 --min-edge-recall 0.94 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Our sets' features (holes of 0.0775 card) are 1.5-1.9 px at 20-24 px:
# few are decoded (0.143; 0.089 without the sharpened reads, sharpen_up,
# 0.116 without their stronger mask); wrong IDs and false positives are
# held (below).
job small 36 --min-recall 0.13 --max-wrong 0 --max-fp 0
# Streaks: the deblurring pass's lower rung (deblur_read; 0.375 without it)
# and its upper rung (deblur3_high; 0.406 without it); 0.438 before the
# pass's threshold took its own bias with hysteresis (deblur3_bias,
# DEBLUR_SEED_BIAS; at that bias without the hysteresis a window's tree
# was cut short), 0.469 before the upper rung's radius went from 14 to 28.
job motion 37 --min-recall 0.47 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Streaks of 8 px over symbols of 60-110 px: where the deblurring pass's
# DEBLUR_ITERATIONS rounds read nothing, its longer read (deblur.h,
# deblur_long_rounds; third.c, long_reads; 0.411 without it; 0.554 before
# the pass's own bias with hysteresis, 0.625 before the upper rung at 28).
SET_NAME=motion8 SET_SCENE="--motion 8 --fids 7 --fid-size 60:110 --fingers 0 --blur 0 --light 0.2"
job motion 54 --min-recall 0.63 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
SET_NAME= SET_SCENE=
job blur 38 --min-recall 0.77 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# A camera out of focus (a Gaussian of 2.4 px): the deblurring pass's
# defocus branch (defocus3; 0.531 without it, 0.609 without its small
# windows, 0.641 without its whole-frame read, 0.703 without its windows
# read again with more rounds: third.c, third_defocus_rounds).
job defocus 43 --min-recall 0.71 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# A dim camera (contrast 0.3, vignetting 0.7, JPEG 60): the frame's gate
# (gate_range; 0.812 at the fixed gate).
job dim 48 --min-recall 0.85 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# A noisy camera (sensor noise 7 levels, fingers): the frame's gate raised
# over its noise (gate_range; at the fixed gate 0.984 of the symbols and
# 0.200 of the fingers, and the tree cut short on every frame).
SET_OPTS="--finger-size 18"
job noisy 51 --min-recall 0.98 --min-finger-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
SET_OPTS=
job room 39 --min-recall 0.87 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Two hard shadows, a camera tilted up to 40 degrees and a barrel lens
# together (issue 13: the conditions under which reacTIVision read 0.84);
# scored undistorted through the lens's grid.
job oblique 54 --min-recall 0.92 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# Symbols of 24-48 px that two hard shadows cross: the deblurring pass took
# a sharp frame for out of focus (the shadows' soft edges) and read the
# next whole, its tree cut short (more runs than the segmenter holds),
# before it asked whether the print is sharp (deblur.h, sharp). 0.828, edge
# 0.786 with the ink windows' Lanczos read (third.c, ink_up; 0.781, edge
# 0.738 before it); 0.875, edge 0.833 with its encoded read (third.c,
# encode_up; 0.859, edge 0.810 without); 0.906, edge 0.881 with the
# sharpened reads (third.c, sharpen_up; 0.875, edge 0.833 without).
job shadow-small 44 --min-recall 0.89 --min-edge-recall 0.86 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# The shadow-small scenes through a webcam's processing (gamma 2.2, an
# unsharp mask, exposure 1.2; tools/scenes.c, camera_tone): the sets above
# are drawn in linear light, unsharpened. 0.969 (0.953 without sharpen_up,
# 0.938 without encode_up too).
job webcam 44 --min-recall 0.96 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
# The small preset with reacTIVision's mini set (few, big leaves), when the
# shared data is there: holds the small-symbol rules of the matcher (1 px
# holes, a root whose ring merged with the table; specks in a root's own
# area are no dots: see docs/recognition.md, "Wrong IDs") and the third scale's
# small-symbol pass (radius_small; 0.48 without it) and the upsampled pass
# (radius_up; 0.955 without it).
MINI=${TABLETRACK_SHARED:-../shared}/fiducials/reactivision/mini.trees
if [ -f "$MINI" ]; then
	SET_TREES=$MINI
	job small 36 --min-recall 0.96 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 3
	SET_TREES=
fi
# A printed sheet of reacTIVision's default symbols 0-11 photographed at an
# angle in sunlight with hard shadows, at 2592x1936, 1296x968 and 648x484 (modelled on
# a real photograph; the preset is in tools/scenes.c), when the shared data
# is there.
DEFAULT=${TABLETRACK_SHARED:-../shared}/fiducials/reactivision/default.trees
if [ -f "$DEFAULT" ]; then
	SET_TREES=$DEFAULT
	# The sun preset with this set (0.891 without the ratio pass). Frame 1
	# holds a 32 px 15, half in shadow, that the upsampled pass's Bernsen
	# read as a whole 95 and its closing as 15: 0.938 and one wrong ID
	# before the pass's second read overruled its first (merge.h,
	# merge_second_read).
	job sun 42 --min-recall 0.945 --min-edge-recall 0.92 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	job oblique 54 --min-recall 0.90 --min-edge-recall 0.93 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# The shadow-dark preset with this set (0.828, edge 0.750 without
	# close_dark; 0.906, edge 0.864 without its read of the ink windows,
	# third.c THIRD_INK_DARK_WIDE; 0.922, edge 0.886 without encode_up).
	job shadow-dark 55 --min-recall 0.93 --min-edge-recall 0.90 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# Symbols of 24-48 px that two hard shadows cross, with this set: the
	# closing pass's ink windows (windows_find_ink; 0.891, edge 0.833
	# without them) and their second read 5 points under close_pct
	# (third.c, THIRD_INK_PCT_LESS; 0.922, edge 0.881 without it); 0.984,
	# edge 0.976 with their Lanczos read (ink_up; 0.953, edge 0.929 before it).
	job shadow-small 44 --min-recall 0.96 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# Out of focus with this set (0.594 without the defocus branch, 0.734
	# without its small windows, 0.766 without its whole-frame read).
	job defocus 43 --min-recall 0.78 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# Dim with this set (0.797 at the fixed gate).
	job dim 46 --min-recall 0.82 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	job sheet 40 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# The sheet at the photograph's own 2592x1936, cards of 180-220 px:
	# the ratio pass's larger radii (0.854, edge 0.781 without them).
	job sheet-full 53 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# 0.969 (shadow edge 0.951) before the scaled pass's ladder of radii
	# (third.c, third_scaled): 0.979 (0.967).
	job sheet-half 41 --min-recall 0.975 --min-edge-recall 0.96 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# The sheet seen by a phone camera (gamma 2.2, an unsharp mask,
	# sunlit paper clipped), at 1296x968 and 648x484.
	job phone 40 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	job phone-half 41 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	job webcam 44 --min-recall 0.96 --min-edge-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	# The sheet-half scenes from a camera that encodes with a gamma curve
	# and does not sharpen, read with that curve undone (camera_gamma).
	SET_OPTS="--camera-gamma 2.2"
	job gamma 41 --min-recall 0.975 --min-edge-recall 0.96 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	SET_OPTS=
	# Defocus with this set over 16 frames: frame 15 holds a blurred 40 px
	# 172 that the upsampled pass read as 127 before its reads were checked
	# (third.c, third_up).
	frames_was=$FRAMES FRAMES=16
	job blur 38 --min-recall 0.8 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	FRAMES=$frames_was
	SET_TREES=
fi
# reacTIVision's printed drawings themselves (the shared sets' symbols, and
# those people print: an amoeba outline with a thick wall, leaves packed
# otherwise than by our layout), with its default set, when the shared
# data is there.
DRAWN=${TABLETRACK_SHARED:-../shared}/fiducials/reactivision/symbols/default
if [ -f "$DEFAULT" ] && [ -d "$DRAWN" ]; then
	SET_TREES=$DEFAULT SET_DRAW=$DRAWN
	# preset, seed, floors; every one also no wrong ID or false positive
	# and position and angle p95 under 1 px and 2 degrees. The last,
	# symbols of 26-32 px (0.923 of 26-28 px, 1.000 of 29-40 px at seed
	# 83, 12 frames; 0.458 of 23-25 px, 0.012 of 20-22: their 1 px holes).
	while read -r preset seed floors; do
		[ "$preset" = small ] && SET_SCENE="--fid-size 26:32"
		# shellcheck disable=SC2086 # the floors split on purpose
		job "$preset" "$seed" $floors --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	done <<-EOF
		tilt 31 --min-recall 0.98
		barrel 32 --min-recall 0.95
		shadow 34 --min-recall 0.98 --min-edge-recall 0.98
		hands 35 --min-recall 0.98
		sun 42 --min-recall 0.98 --min-edge-recall 0.97
		oblique 54 --min-recall 0.93 --min-edge-recall 0.98
		shadow-dark 55 --min-recall 0.95 --min-edge-recall 0.93
		shadow-small 44 --min-recall 0.945 --min-edge-recall 0.91
		defocus 43 --min-recall 0.71
		motion 37 --min-recall 0.57
		dim 46 --min-recall 0.78
		room 39 --min-recall 0.89 --min-edge-recall 0.98
		small 36 --min-recall 0.97
	EOF
	# reacTIVision's small and mini sets from their own pictures at 20-24
	# px (the small preset): their few, big leaves read where the default
	# set's do not (seed 87, 16 frames, 224 symbols each: 0.982 and 0.991).
	SET_SCENE=
	# The sheet of IDs 0-11 (the real photograph's symbols) at 648x484,
	# cards of 45-55 px, a hand's hard shadow across them: plain, through
	# a phone camera (a wrong ID before merge.h's merge_lone_pair), and
	# through a gamma curve read with it undone.
	job sheet-half 41 --min-recall 0.97 --min-edge-recall 0.96 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	job phone-half 41 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	SET_OPTS="--camera-gamma 2.2"
	job gamma 41 --min-recall 0.98 --min-edge-recall 0.98 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 2
	SET_OPTS=
	for set in small mini; do
		SET_TREES=${DEFAULT%/*}/$set.trees SET_DRAW=${DRAWN%/*}/$set
		job small 36 --min-recall 0.95 --max-wrong 0 --max-fp 0 --max-pos-p95 1 --max-angle-p95 3
	done
	SET_TREES= SET_DRAW= SET_SCENE=
fi
# frame_holds WANT PRESET SEED FRAME ID SCENE-OPTIONS...: the frame FRAME
# of the preset drawn with reacTIVision's set at SEED with the scene
# options, read alone, holds symbol ID (WANT 1) or holds none (WANT 0: a
# wrong ID once read there).
frame_holds() {
	case " ${REALISTIC_SETS:-frame} " in *" frame "*) ;; *) return ;; esac
	want=$1 p=$2 s=$3 f=$4 id=$5
	shift 5
	d="$T/frame-$want-$p-$s-$f-$id"
	"$B/tabletrack-scenes" -o "$d" --preset "$p" --seed "$s" --frames $((f + 1)) --trees "$DEFAULT" "$@" \
		>/dev/null || { echo "FAIL: scenes $p $s"; fail=1; return; }
	"$B/tabletrack" --once --quiet --source "file:$d/$(printf frame_%05d.png "$f")" \
		--trees "$DEFAULT" --tuio udp:127.0.0.1:9 --dump "$d/dump" 2>/dev/null
	got=0
	grep -q "^fiducial id=$id " "$d"/dump/*-detections.txt 2>/dev/null && got=1
	if [ "$got" = "$want" ]; then
		echo "ok: $p seed $s frame $f${*:+ $*}: $id $([ "$got" = 1 ] && echo read || echo "not read")"
	else
		echo "FAIL: $p seed $s frame $f${*:+ $*}: $id $([ "$got" = 1 ] && echo read || echo "not read")"
		fail=1
	fi
}
# Each frame is a job of its own, as the sets are.
frame_reads() { bg frame_holds 1 "$@"; }
frame_not_read() { bg frame_holds 0 "$@"; }
# A 61 seen at a tilt through a wide lens, a hard shadow across it (76 px
# on the table, about 60 in the frame): the walls between its blob's
# holes are 1-1.5 px and every threshold of the frame joins the holes;
# the upsampled pass reads it since it reads symbols of up to 96 px
# (third.c, THIRD_UP_MAX_PX; 64 before).
[ -f "$DEFAULT" ] && frame_reads oblique 70 19 61
# Two 91 px black cards drawn from reacTIVision's pictures where two
# shadows overlap, their white rings at 20-28 grey levels over cards of 5:
# the closing pass's read at a lower gate at twice the windows' radius
# (third.c, THIRD_DARK_WIDE) reads them, nothing read there before.
if [ -f "$DEFAULT" ] && [ -d "$DRAWN" ]; then
	frame_reads shadow-dark 83 17 147 --drawings "$DRAWN"
	frame_reads shadow-dark 83 17 174 --drawings "$DRAWN"
fi
# The sheet through a camera's gamma (2.2) without sharpening, hard shadows'
# edges across 40-60 px symbols, each a blob's hole lost and a node gained
# in one scale alone: a 61 px 6 read as 63 by the third scale's first pass
# (a dot grown by the edge counted as two merged ones beside a blob whose
# hole opened into a bay: decode.c, blob_bay), a 54 px 3 as 31 by the same
# pass (a one-hole blob cut into arcs with a speck of its wall between:
# decode.c, cut_pocket), a 53 px 6 as 104 by the second scale (the edge's
# line read as a dot: engine.c, second_configs, dot vetoes).
if [ -f "$DEFAULT" ]; then
	frame_not_read sheet-half 501 11 63 --gamma 2.2
	frame_not_read sheet-half 501 17 31 --gamma 2.2
	frame_not_read sheet-half 501 18 104 --gamma 2.2
fi
# Small symbols of 24-28 px whose 1-2 px holes and walls the small-symbol
# pass (Bernsen at radius 1) or the upsampled pass (bilinear) lost in a
# way that makes another ID, which the radius-2 check did not contradict
# and the Lanczos check does (third.c, sharp_check): a 25 px 113 read as
# 170 by the upsampled pass (two two-hole blobs joined by a bridge that
# encloses a piece of the root as a fifth hole), a 27 px 190 read as 133
# by the small-symbol pass (a hole closed, a speck taken for a dot).
if [ -f "$DEFAULT" ]; then
	frame_not_read small 50 0 170 --fid-size 24:28
	frame_not_read small 73 10 133 --fid-size 24:28
fi
# The first scale's lone reads that its threshold at radius 9 reads as
# another ID (third.c, third_lone_check): a 63 px 78 streaked by motion
# read as 84 (a leaf counted twice where two merged), and a 36 px 136
# under JPEG read as 186; nothing else read either place.
if [ -f "$DEFAULT" ]; then
	frame_not_read motion 532 1 84
	frame_not_read dim 701 22 186
fi
# The first scale's lone read against the third's one read of another ID,
# completed (merge.h, merge_lone_pair): a 52 px 9 under a hand's shadow
# read as 78 by the first scale and as 9 from a fuzzy tree by the third.
[ -f "$DEFAULT" ] && frame_not_read phone-half 829 1 78
# Two fallbacks that disagree (third.c, fallback_reads): drawn from
# reacTIVision's pictures, a 34 px 84 that the closing pass's ink windows
# read as 46 and the upsampled pass's Lanczos read as 84.
[ -f "$DEFAULT" ] && [ -d "$DRAWN" ] && frame_not_read shadow-small 83 4 46 --drawings "$DRAWN"
# The sheet through a phone camera (gamma, unsharp mask), 40-50 px symbols
# that a hand's hard shadow crosses. Drawn from the pictures, a 42 px 8
# read as 91 by the third scale's scaled pass alone, and in our layout of
# the set a 47 px 3 read as 94 by it too, where the upsampled pass's
# local mean read each right but unconfirmed (merge.h,
# merge_contradicted); drawn, a 41 px 4 read as 39 by the first scale and
# as 4 by the closing pass (merge_lone_pair).
if [ -f "$DEFAULT" ] && [ -d "$DRAWN" ]; then
	frame_not_read phone-half 601 8 91 --drawings "$DRAWN"
	frame_not_read phone-half 603 5 94
	frame_not_read phone-half 41 0 39 --drawings "$DRAWN"
fi
# A 36 px 4 on the phone's view of the sheet whose one-hole blob a hard
# shadow's edge broke into arcs of 14 and 7 px, read as 80 by the first
# scale: the pair's pocket (12 px) under the other blobs' median hole (14)
# but over three quarters of it (decode.c, ring_pair_read); the 4 is then
# read by another pass.
if [ -f "$DEFAULT" ]; then
	frame_not_read phone-half 409 17 80
	frame_reads phone-half 409 17 4
fi
# Out of focus, a 57 px 26 read as 57 by the deblurring pass's windows: a
# dot joined to the six-hole blob beside it around a piece of the root,
# as enlarged windows join them (decode.c, bridged_read; third.c,
# deblur_sync).
[ -f "$DEFAULT" ] && frame_not_read defocus 363 18 57
# The same doubts for the third scale's local-mean reads of small symbols
# (third.c, check3): its scaled pass read a 26 px 49 (seven one-hole blobs)
# as 75, one blob's hole closed and a speck taken for a dot.
[ -f "$DEFAULT" ] && frame_not_read small 83 14 75 --fid-size 24:28
# Cards of 24-40 px: under a hard shadow (seed 1512, frame 23) the ratio
# pass read a 29 px 7 as 2, where the small-symbol passes' check at radius
# 3 reads another ID (at radius 2 it read nothing there: third.c,
# small_check); in a frame of 7 grey levels of noise (seed 1531, frame 21)
# the upsampled pass read a 29 px 169 as 194 at gate_up 16, not at the
# gate raised in proportion to the frame's (third.c, third_up_gate), and
# its local mean at that gate reads a 26 px 85 there, which nothing read.
if [ -f "$DEFAULT" ]; then
	frame_not_read shadow 1512 23 2 --fid-size 24:40
	frame_not_read noisy 1531 21 194 --fid-size 24:40
	frame_reads noisy 1531 21 85 --fid-size 24:40
fi
# A 189 of 24-40 px on the far side of a tilted camera (seed 1512, frame
# 1), foreshortened to about half its width: its holes are 1 px across one
# way, and only the upsampled pass's rectified read (third.c, up_rectify:
# stretched back along its short axis and deconvolved) reads it.
[ -f "$DEFAULT" ] && frame_reads tilt 1512 1 189 --fid-size 24:40
# Two symbols of 41 and 45 px that a shadow's edge crosses where two
# hard shadows overlap: their shadowed part averages under the gate and
# came out black; the third scale's scaled pass reads them at its first
# rung, whose local mean keeps a floor of 8 (third.c,
# THIRD_SCALED_DARK_FLOOR).
if [ -f "$DEFAULT" ]; then
	frame_reads shadow-dark 701 9 8
	frame_reads shadow-dark 701 9 118
fi
wait
# The dim set's frames are read at a lower gate of their own, which
# --stats reports.
if [ -d "$T/dim" ]; then
	"$B/tabletrack" --once --quiet --stats --source "folder:$T/dim" --tuio udp:127.0.0.1:9 2>/dev/null |
		grep "gate:" | grep -q "read lower for their grey range" ||
		{ echo "FAIL: --stats does not report the dim frames' lower gate"; fail=1; }
fi
i=1
while [ $i -le $k ]; do
	cat "$T/job.$i"
	[ "$(cat "$T/job.$i.rc" 2>/dev/null)" = 0 ] || fail=1
	i=$((i + 1))
done
exit $fail
