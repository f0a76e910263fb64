#!/bin/sh
# One call on the GPU machine: build, CUDA-vs-CPU equality (with real frames
# from .devdata/threshold/*.pgm when carried), compute-sanitizer memcheck and
# racecheck on a quick equality run, then the benchmark. Needs only the CUDA
# toolkit, a C compiler, libc and liblo; builds with `make gpu-build`.
# Full log: $OUT/gpu-results.txt.
#     [NCU=0] sh tests/gpu/run_on_device.sh [bench-frames]    (NCU=0: no Nsight Compute pass)
OUT=${OUT:-/tmp/tabletrack-gpu}
mkdir -p "$OUT"
LOG="$OUT/gpu-results.txt"
FRAMES=${1:-1000}
B=build/gpu
# Everything is built by the Makefile (CUDA=1; the optional libraries are
# detected, so a machine with only the CUDA toolkit, libc and liblo works:
# pass LIBLO_PREFIX=DIR when liblo is an unpacked .deb).
MAKEARGS="CUDA=1 UI=0 ${LIBLO_PREFIX:+LIBLO_PREFIX=$LIBLO_PREFIX}"
summary=""
step() { echo; echo "== $*"; }
{
	step machine
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm --format=csv
	nvcc --version 2>/dev/null | tail -2
	grep -m1 'model name' /proc/cpuinfo; nproc
	step build
	make -j"$(nproc)" $MAKEARGS gpu-build || exit 1
	make -s $MAKEARGS gpu-ptxas 2>&1 | grep -E 'registers|spill' | sort | uniq -c | head -20
	step gpu-test
	$B/gpu_test .devdata/threshold; rc=$?
	summary="$summary gpu-test rc=$rc;"
	step "gpu-bench ($FRAMES frames)"
	$B/gpu_bench "$FRAMES"
	if [ "${NCU:-1}" = 1 ]; then
		step "ncu: bernsen kernel at 1920x1080, r=6 then r=32"
		timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
			-k regex:bernsen_kernel --launch-skip 40 --launch-count 1 $B/gpu_bench 60 1920x1080 2>&1 | grep -vE '^ *-+ *$' | tail -60
		timeout 120 ncu --section SpeedOfLight --section WarpStateStats \
			-k regex:bernsen_kernel --launch-skip 310 --launch-count 1 $B/gpu_bench 60 1920x1080 2>&1 | grep -vE '^ *-+ *$' | tail -40
	fi
	step "compute-sanitizer memcheck (quick set)"
	GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_test 2>&1 | tail -8; rc=$?
	step "compute-sanitizer racecheck (quick set)"
	GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/gpu_test 2>&1 | tail -8
	step "compute-sanitizer synccheck (quick set)"
	GPU_TEST_QUICK=1 timeout 60 compute-sanitizer --tool synccheck --error-exitcode 9 $B/gpu_test 2>&1 | tail -4
} >"$LOG" 2>&1
grep -E '^== |passed|FAIL|ERROR SUMMARY|RACECHECK SUMMARY|machine:|GPU |frame |^ *[0-9]+x|^median|^gauss|^tiled|registers|bernsen_kernel|Duration|Warp Cycles Per Issued|Achieved Occupancy|Memory Throughput|Compute \(SM\)|Registers Per|Stall' "$LOG" | tail -90
