#!/bin/sh
# On the GPU machine (which has nvcc, gcc and libc but no Debian dev
# packages): the whole-frame bench (build/tabletrack-bench's source: the
# daemon's per-frame engine + TUIO encoding) built from the sources the
# engine needs, with libpng/zlib unpacked from .deb files carried in
# .devdata/debs (apt-get download libpng-dev libpng16-16 zlib1g-dev).
# Frames: .devdata/b640 and .devdata/b1080 (PGM copies of ../shared scenes),
# synthetic frames for 1280x720 and 3840x2160.
#     sh tests/gpu/run_frame_bench.sh [FRAMES] [quick]    (quick: the defaults only)
set -e
N=${1:-1000}
D=/tmp/tt-deb
mkdir -p $D build-gpu
for f in .devdata/debs/*.deb; do dpkg -x "$f" $D; done
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_LIB=$(sh tests/gpu/cuda_libdir.sh "$NVCC")
make -s build/gen/default_trees.c >/dev/null 2>&1 || true
"$NVCC" -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -c cuda/bernsen.cu -o build-gpu/bernsen.o
SRC="tools/bench.c src/core/err.c src/core/log.c src/core/clock.c src/core/image.c src/core/image_io.c
src/core/detect.c src/threshold/cpu.c src/threshold/threshold.c src/segment/segment.c
src/fiducial/trees.c src/fiducial/match.c src/fiducial/classify.c src/track/track.c src/track/calib.c
src/tuio/tuio_encode.c src/pipeline/engine.c build/gen/default_trees.c"
gcc -std=c11 -O2 -g -D_GNU_SOURCE -include src/fiducial/trees.h -I$D/usr/include -I$D/usr/include/libpng16 \
	$SRC build-gpu/bernsen.o -o build-gpu/bench \
	$D/usr/lib/x86_64-linux-gnu/libpng16.a $D/usr/lib/x86_64-linux-gnu/libz.a \
	-L"$CUDA_LIB" -lcudart_static -ldl -lrt -lpthread -lm -lstdc++
# The shared scenes show reacTIVision's default set (a git-ignored copy).
T=.devdata/default.trees
[ -f "$T" ] || T=fiducials/tabletrack.trees
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
nproc
if [ "$2" = quick ]; then
	# The defaults only, on the shared frames and a synthetic 4K one.
	for dir in .devdata/b640 .devdata/b1080; do
		build-gpu/bench -n "$N" -b cuda -r 8 -t "$T" "$dir"
	done
	build-gpu/bench -n "$N" -b cuda -r 8 -s 3840x2160
	exit 0
fi
# Defaults (radius 8 and a second scale of radius 2 after a 3x3 median),
# then r = 6 and 32 with one scale, the configuration the targets
# were set for.
for dir in .devdata/b640 .devdata/b1080; do
	build-gpu/bench -n "$N" -b cpu,cuda -r 8 -t "$T" "$dir"
	build-gpu/bench -n "$N" -b cuda -r 6,32 -2 0 -t "$T" "$dir"
done
build-gpu/bench -n "$N" -b cuda -r 8 -s 1280x720 -s 3840x2160
build-gpu/bench -n "$N" -b cuda -r 6 -2 0 -s 3840x2160
# Segmentation bands at 1080p: serial, and 8 a scale.
build-gpu/bench -n "$N" -b cuda -r 8 -j 1 -t "$T" .devdata/b1080
build-gpu/bench -n "$N" -b cuda -r 8 -j 8 -t "$T" .devdata/b1080
