/*
 * label_cuda.h - the GPU segmenter: a bitmask already on the GPU -> the
 * region tree of src/segment (core/regions.h), behind a plain C header.
 *
 * No CUDA type crosses this header: without nvcc, cuda/label_none.c
 * answers ERR_UNSUPPORTED and the CPU segmenter does the work.
 *
 * The tree handed out is identical, array for array, to segment_process()'s
 * for the same mask and configuration: runs, row_first_run, regions (every
 * field), the first n_adj slots of each adjacency list in the same order,
 * the saturation flags and the overflow cut (a frame with more runs or
 * regions than the capacities is cut short at the same row). The kernels
 * and the algorithm are described in cuda/label_kernels.h; the CPU
 * simulation of those kernels (tests/test_label_sim.c) and the GPU equality
 * test (tests/gpu/gpu_test.c) compare against segment_process().
 *
 * Memory: device arrays sized at create time for max_width x max_height and
 * the capacities (16 bytes of runs and about 40 of scratch a run slot;
 * 72 + 16 x adj_cap bytes a region slot; a pair table of 16 bytes a slot,
 * six slots a region rounded up to a power of two), and two host trees in
 * pinned host memory mapped into the GPU's address space. Nothing is
 * allocated a frame.
 *
 * A frame: submit() queues the kernels on a stream (the threshold's, so
 * that they follow the kernels that write the mask); the kernels write the
 * tree straight into a host tree (exactly the frame's runs, regions and
 * lists cross the bus, no copy is queued behind them), and collect() waits
 * once. The host trees alternate per submit. The mask itself never comes
 * to the host.
 *
 * Where the device can launch cooperatively (every GPU this project
 * meets), the frame is one kernel: the bodies of label_kernels.h in order,
 * a grid-wide barrier where one must have finished before the next starts,
 * the two prefix sums done by the blocks themselves (label.cu). Otherwise,
 * and for the tests that compare both paths with the CPU segmenter, a
 * chain of twelve kernels and two CUB scans. Either launch sequence, whose
 * arguments depend only on the mask buffer, the size and the host tree, is
 * captured once per mask buffer, size and host tree as a CUDA graph and
 * launched as one call. The threshold alternates two device masks and the
 * host trees alternate in step, so a steady stream of frames uses two
 * graphs. A capture that fails is logged once and the kernels are then
 * queued one by one.
 */
#ifndef TT_CUDA_LABEL_H
#define TT_CUDA_LABEL_H

#include <stdint.h>

#include "../src/core/regions.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_label_config {
	int max_width, max_height;
	int adj_cap;          /* as struct segment_config: 2..64 */
	int32_t max_runs;     /* 0 = regions_run_capacity(max_width, max_height) */
	int32_t max_regions;  /* 0 = regions_region_capacity(max_width, max_height) */
	int no_graph;         /* benchmarks: 1 launches kernel by kernel instead of the CUDA graph */
	int path;             /* 0: auto (the fused kernel up to LABEL_FUSED_MAX_PIXELS, the chain above);
			       * tests, benchmarks: LABEL_CHAIN or LABEL_FUSED */
	int blocks_per_sm;    /* the fused kernel's grid: 0 = the default (1), at most half what fits */
	int timing;           /* benchmarks: 1 records CUDA events around the frame's kernels */
};

/* The launch paths (config path). Measured (README, "Performance";
 * docs/performance.md, "The GPU labelling"): the
 * fused kernel is the faster up to 1080p, where the launches dominate; the
 * chain at 4K, where the work does and the chain's kernels each get as
 * many blocks as they need. */
enum { LABEL_AUTO = 0, LABEL_CHAIN = 1, LABEL_FUSED = 2 };
#define LABEL_FUSED_MAX_PIXELS (2560 * 1440)

struct cuda_label;

/* Errors: ERR_RANGE (bad config), ERR_UNSUPPORTED (built without CUDA),
 * ERR_DEVICE (no GPU, or out of device memory). Free with destroy. */
struct cuda_label *cuda_label_create(const struct cuda_label_config *cfg, int *err);
void cuda_label_destroy(struct cuda_label *l); /* NULL-safe */

/* Copies a host mask (rows of stride_words 64-bit words) into the
 * segmenter's own device buffer and waits; for tests and benchmarks, where
 * the mask does not come from the GPU threshold. */
int cuda_label_upload(struct cuda_label *l, const uint64_t *bits, int width, int height, int stride_words);

/* Queues the labelling of a device mask: dev_bits is a device pointer to
 * height rows of stride_words 64-bit words (bit x % 64 of word x / 64 is
 * pixel x, 1 = white; bits past width are ignored), or NULL for the mask
 * last uploaded. stream is the cudaStream_t the mask is written on (NULL:
 * the segmenter's own); the mask must stay unchanged until collect().
 * Returns 0, ERR_SIZE (frame larger than the configuration) or ERR_DEVICE. */
int cuda_label_submit(struct cuda_label *l, const void *dev_bits, int width, int height, int stride_words,
		      void *stream);

/* Waits for the submitted frame and hands out its tree: *out points into
 * pinned host memory owned by l, valid until the second submit after the
 * frame's own (the next frame's submit fills the other host tree), or
 * destroy.
 * ERR_AGAIN without a submit, ERR_DEVICE when the GPU failed (the caller
 * falls back to the CPU segmenter). A frame cut short is counted and
 * logged once, as segment_process() does. */
int cuda_label_collect(struct cuda_label *l, const struct region_tree **out);

/* With config timing: the GPU time of the last collected frame (its
 * kernels, which write the tree into host memory), in microseconds.
 * ERR_RANGE without timing or before a collect. */
int cuda_label_gpu_time(const struct cuda_label *l, float *us);

/* Frames cut short for want of run or region slots since create. */
int64_t cuda_label_overflows(const struct cuda_label *l);

#ifdef __cplusplus
}
#endif

#endif
