#!/bin/sh
# On the GPU machine (nvcc, gcc, libc and liblo; no Debian dev packages
# needed): the whole-frame bench, build/tabletrack-bench (tools/bench.c: the
# daemon's per-frame engine + TUIO encoding), built by `make frame-bench`
# with the GPU stage. Frames: .devdata/b640 and .devdata/b1080 (PGM copies
# of ../shared scenes), synthetic frames for 1280x720 and 3840x2160.
#     [LIBLO_PREFIX=DIR] sh tests/gpu/run_frame_bench.sh [FRAMES] [quick]    (quick: the defaults only)
set -e
N=${1:-1000}
make -j"$(nproc)" CUDA=1 UI=0 ${CUDA_ARCH:+CUDA_ARCH="$CUDA_ARCH"} frame-bench
BENCH=build/tabletrack-bench
# The shared scenes show reacTIVision's default set (a git-ignored copy).
T=.devdata/default.trees
[ -f "$T" ] || T=fiducials/tabletrack.trees
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
nproc
if [ "$2" = quick ]; then
	# The defaults only, on the shared frames and a synthetic 4K one.
	for dir in .devdata/b640 .devdata/b1080; do
		$BENCH -n "$N" -b cuda -r 8 -t "$T" "$dir"
	done
	$BENCH -n "$N" -b cuda -r 8 -s 3840x2160
	exit 0
fi
# Defaults (radius 8 and a second scale of radius 2 after a 3x3 median),
# then r = 6 and 32 with one scale, the configuration the targets
# were set for.
for dir in .devdata/b640 .devdata/b1080; do
	$BENCH -n "$N" -b cpu,cuda -r 8 -t "$T" "$dir"
	$BENCH -n "$N" -b cuda -r 6,32 -2 0 -t "$T" "$dir"
done
$BENCH -n "$N" -b cuda -r 8 -s 1280x720 -s 3840x2160
$BENCH -n "$N" -b cuda -r 6 -2 0 -s 3840x2160
# Segmentation bands at 1080p: serial, and 8 a scale.
$BENCH -n "$N" -b cuda -r 8 -j 1 -t "$T" .devdata/b1080
$BENCH -n "$N" -b cuda -r 8 -j 8 -t "$T" .devdata/b1080
