/*
 * sift_cuda.h - SIFT keypoints and descriptors of a grey frame on the GPU,
 * behind a plain C header (no CUDA types), as OpenCV 4.6's SIFT computes
 * them with the OpenCV backend's parameters (src/objects/sift_opencv.cpp):
 * 3 layers an octave, sigma 1.6, edge threshold 10, the picture doubled
 * first. The arithmetic is in cuda/sift_math.h, shared with a CPU
 * simulation (tests/test_sift_sim.c) that is compared with OpenCV; the GPU
 * against OpenCV is tests/gpu/gpu_test.c (`make gpu-test`).
 *
 * Without nvcc, cuda/sift_none.c answers ERR_UNSUPPORTED.
 *
 * Kernels, per frame (one stream; after the frame's upload they are one
 * CUDA graph, captured for each frame size and cap, replayed after that;
 * no_graph launches them one by one, with the same results):
 *   1. upscale: the 8-bit frame to float, doubled by bilinear
 *      interpolation (OpenCV's resize, pixel centres a quarter pixel off);
 *   2. Gaussian levels: one kernel a level, the separable blur's row pass
 *      and column pass fused: each block a tile plus its apron in shared
 *      memory (borders reflected, 101), the row pass for the apron's rows,
 *      then the column pass, in the arithmetic order of two whole passes;
 *      level 0 of octave o > 0 is every other pixel of level 3 of octave o - 1;
 *   3. extrema: one thread a pixel and layer: DoG from the Gaussian levels,
 *      the 26-neighbour test, sub-pixel refinement, contrast and edge tests;
 *      survivors take a slot from an atomic counter;
 *   4. orientation: one warp a candidate, the 36-bin histogram in shared
 *      memory (fixed-point atomics: the same sums whatever the order), then
 *      one keypoint a peak, slots from a second counter;
 *   5. selection: each keypoint's pose in the frame and its place in the
 *      host order of sift_math.h (response, then y, x, size, angle): a
 *      radix sort by response, each run of equal responses ranked by the
 *      rest, duplicates (the same extremum reached twice, OpenCV's
 *      removeDuplicatedSorted) flagged, a scan, and the first `cap` kept;
 *   6. descriptors: one warp a kept keypoint, the 4 x 4 x 8 histogram
 *      likewise, written with the pose as struct objects_keypoint.
 * The host reads the counters, then the kept keypoints. The result is the
 * CPU simulation's (tests/common/sift_sim.h: every keypoint described,
 * sorted, duplicates dropped, the first cap kept). Counters past the slots
 * (max_candidates) are counted as an overflow: the frame's keypoints are
 * then a subset, which ones depending on the order the threads ran
 * (logged once, cuda_sift_overflows()).
 *
 * Keypoints are struct objects_keypoint (src/objects/objects.h): position
 * in frame pixels with centres at integers (OpenCV's position less a
 * quarter pixel, as the OpenCV backend reports), size, angle (degrees,
 * clockwise on screen, 0..360), response, descriptor bytes.
 *
 * Memory: device buffers for the pyramid (6 floats a pixel of the doubled
 * frame, times about 4/3 for the octaves), allocated for the largest frame
 * seen so far: a larger frame than before grows them (on the recognition
 * worker, never in the fiducial frame loop); at create, the slots (about
 * 100 bytes each: candidate, keypoint, order item, sort and scan arrays),
 * CUB's scratch, and max_keypoints outputs on the device and pinned.
 * One thread at a time per struct cuda_sift.
 */
#ifndef TT_CUDA_SIFT_H
#define TT_CUDA_SIFT_H

#include <stddef.h>
#include <stdint.h>

#include "../src/objects/objects.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_sift_config {
	int max_keypoints;        /* the strongest kept, 1..OBJECTS_MAX_KEYPOINTS */
	float contrast_threshold; /* 0..1, OpenCV's contrastThreshold (0.04) */
	int max_candidates;       /* device slots a frame for extrema and for oriented keypoints; 0 = 65536 */
	int no_graph;             /* 1: launch kernel by kernel instead of replaying a CUDA graph (tests, benches) */
};

struct cuda_sift;

/* Whether a GPU is usable (a real launch); its name in why, or the reason. */
int cuda_sift_probe(char *why, size_t cap);

/* NULL with *err: ERR_RANGE (bad config), ERR_UNSUPPORTED (built without
 * CUDA), ERR_DEVICE (no usable GPU), ERR_NOMEM. */
struct cuda_sift *cuda_sift_create(const struct cuda_sift_config *cfg, int *err);
void cuda_sift_destroy(struct cuda_sift *s); /* NULL-safe */

/* Keypoints of a width x height frame (rows stride bytes apart) into out
 * (at most min(cap, max_keypoints), the strongest), their number in *n_out.
 * Returns 0, ERR_RANGE (bad arguments), ERR_NOMEM or ERR_DEVICE (logged). */
int cuda_sift_extract(struct cuda_sift *s, const uint8_t *grey, int width, int height, int stride,
		      struct objects_keypoint *out, int cap, int *n_out);

/* Page-locks a long-lived frame buffer (the recognition stage's copy) so
 * its upload is a DMA rather than a staged copy; at most 8, kept until
 * destroy (the buffer must outlive s). A buffer some other stage already
 * registered is used as it is. 0, ERR_NOMEM (8 already) or ERR_DEVICE. */
int cuda_sift_register(struct cuda_sift *s, void *data, size_t bytes);

/* Frames whose extrema or keypoints outnumbered the slots, since create. */
int64_t cuda_sift_overflows(const struct cuda_sift *s);

/* GPU time (us, from events) of the last extract: pyramid (upscale and
 * blurs), detection (extrema and orientation), selection and descriptors.
 * Only for a frame launched kernel by kernel (config no_graph, or after a
 * failed capture): ERR_AGAIN before the first and after a graph launch. */
int cuda_sift_stage_times(const struct cuda_sift *s, float *pyramid_us, float *detect_us, float *describe_us);

/*
 * Matching on the GPU: the nearest two library keypoints of each frame
 * keypoint (struct objects_nearest, objects.h), exactly as the CPU
 * reference objects_nearest() (src/objects/recognise.h) finds them:
 * integer squared distances of the descriptor bytes (per-byte absolute
 * differences and a 4-way dot product, __vabsdiffu4 and __dp4a), ties to
 * the lower library index. The library's descriptors go to the GPU once,
 * at create. Each block takes 128 frame keypoints (one a thread, its
 * descriptor in registers) against one contiguous chunk of the library,
 * read through shared memory 64 descriptors at a time, scanned in index
 * order; a second kernel merges the chunks' (nearest, index, second) in
 * chunk order, which keeps the sequential scan's result. The chunk count
 * is chosen so that the blocks fill the GPU for a few hundred keypoints.
 *
 * Memory: the library's descriptors (128 bytes a keypoint), max_query
 * frame keypoints in pinned and device memory, per-chunk partial results
 * (12 bytes a keypoint and chunk, at most 64 chunks); all at create.
 * One thread at a time per struct cuda_match.
 */
struct cuda_match;

/* Uploads the n_lib keypoints' descriptors (lib may be NULL when n_lib is
 * 0). NULL with *err: ERR_RANGE (bad arguments), ERR_UNSUPPORTED (built
 * without CUDA), ERR_DEVICE (no usable GPU), ERR_NOMEM. */
struct cuda_match *cuda_match_create(const struct objects_keypoint *lib, int n_lib, int max_query, int *err);
void cuda_match_destroy(struct cuda_match *m); /* NULL-safe */
/* The nearest two of each of the n query keypoints (n <= max_query) into
 * out[n]. Returns 0, ERR_RANGE or ERR_DEVICE (logged). */
int cuda_match_nearest(struct cuda_match *m, const struct objects_keypoint *query, int n,
		       struct objects_nearest *out);

#ifdef __cplusplus
}
#endif

#endif
