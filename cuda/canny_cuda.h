/*
 * canny_cuda.h - the GPU twin of the Canny reference (src/outline/canny.h),
 * behind a plain C header.
 *
 * No CUDA type crosses this header: without nvcc, cuda/none.c answers
 * ERR_UNSUPPORTED. Edges, magnitude and direction are identical, pixel for
 * pixel, to canny_process() / canny_process_roi() with the same sigma taps
 * and thresholds (tests/gpu/gpu_test.c, `make gpu-test`), including the ROI
 * rule: inside a rectangle, steps 1-6 read the frame around it and the
 * hysteresis stays inside it.
 *
 * One stream; device buffers and pinned host buffers allocated at create
 * time for max_width x max_height; nothing allocated per frame. submit()
 * copies the frame into pinned staging, queues the upload, three kernels
 * and the download of the rectangle's rows, and returns; collect() waits
 * (the one synchronisation a frame) and copies into the caller's arrays.
 *
 * Kernels:
 *  1. gradient (compiled once for each Gaussian radius): one block a
 *     32 x 32 tile of the rectangle. It loads the tile plus its apron
 *     (R + 2 pixels, coordinates clamped) into shared memory, runs the
 *     Gaussian row and column passes, Sobel, magnitude and sector over the
 *     tile plus one pixel, and suppression and the double threshold over
 *     the tile; it writes M and D. The tile's
 *     candidates are then joined in shared memory (each with its
 *     candidate neighbours left, up-left, up and up-right inside the
 *     tile, by a lock-free union-find: the larger root hooked under the
 *     smaller by compare-and-swap, paths halved while the unions run);
 *     each candidate's global label is its tile root's frame index
 *     (written for candidates only); a class byte a pixel tells which
 *     pixels are candidates, so the later kernels read a byte, not a
 *     label, for the many that are not, and which tile roots hold a
 *     strong pixel; the tile's candidates join a list of the frame's.
 *  2. border: one block a tile, a thread for each pixel of its top row and
 *     its left and right columns: the same union, in global memory, with
 *     the candidate neighbours (left, up-left, up, up-right) that lie in
 *     another tile of the rectangle; a strong tile root always becomes
 *     the root over one that is not, so a component's final root is
 *     strong when any part of it is.
 *  3. edges: each candidate of the list is an edge when its final root is
 *     strong; its class byte is rewritten to its edge byte, and the class
 *     bytes are the edge map downloaded.
 * Kernels 2 and 3 are launched as programmatic dependents where the device
 * has them (sm_90 on): each launches while the kernel before it ends and
 * waits for it in its first instruction.
 * The result is the set of candidate components that hold a strong pixel,
 * which does not depend on the order in which the unions happen, so it
 * equals the CPU's flood.
 */
#ifndef TT_CUDA_CANNY_H
#define TT_CUDA_CANNY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_CANNY_MAX_RADIUS 12 /* = CANNY_MAX_RADIUS */

struct cuda_canny_config {
	int max_width, max_height; /* 1..8192 */
	/* The Gaussian taps of the reference (canny_taps() / canny_gauss_taps()):
	 * gauss_taps[0] (centre) .. gauss_taps[gauss_radius], summing to 256
	 * over both sides; radius 0 with gauss_taps[0] = 256 is no blur. */
	int gauss_radius;
	int gauss_taps[CUDA_CANNY_MAX_RADIUS + 1];
	int low, high; /* 1 <= low <= high <= 2040 */
	int profile;   /* 1: time each frame's upload, kernels and download with events */
};

struct cuda_canny;

/* NULL on failure with *err = ERR_RANGE (bad cfg), ERR_NOMEM or ERR_DEVICE. */
struct cuda_canny *cuda_canny_create(const struct cuda_canny_config *cfg, int *err);
/* NULL-safe; waits for a frame in flight. */
void cuda_canny_destroy(struct cuda_canny *k);
/* New taps and thresholds (the maximum size must not grow); between frames. */
int cuda_canny_set_config(struct cuda_canny *k, const struct cuda_canny_config *cfg);
/* Queues one frame (grey borrowed until submit returns: it is staged). The
 * rectangle x, y, w, h is clipped to the frame; w = 0 or h = 0 after
 * clipping processes nothing. Pass 0, 0, width, height for the whole frame.
 * ERR_SIZE for a frame over the maximum or stride < width. */
int cuda_canny_submit(struct cuda_canny *k, const uint8_t *grey, int width, int height, int stride, int x, int y,
		      int w, int h);
/* Waits and writes the rectangle of the last submit into caller arrays in
 * frame coordinates ([y * stride + x], stride in elements >= width), as
 * struct canny_out does: edge (1/0) required, mag and dir may be NULL (and
 * are then not copied back from the GPU). ERR_AGAIN without a submit,
 * ERR_SIZE for a short stride, ERR_DEVICE when the GPU failed. */
int cuda_canny_collect(struct cuda_canny *k, uint8_t *edge, uint16_t *mag, uint8_t *dir, int stride);
/* With cfg.profile: GPU time (us) of the last collected frame's upload,
 * kernels and download. ERR_AGAIN when not profiling or nothing collected. */
int cuda_canny_stage_times(struct cuda_canny *k, float *upload_us, float *kernels_us, float *download_us);

#ifdef __cplusplus
}
#endif

#endif
