/*
 * bernsen_cuda.h - the GPU threshold stage, behind a plain C header.
 *
 * No CUDA type crosses this header: the rest of tabletrack builds and runs
 * without nvcc (cuda/none.c then answers ERR_UNSUPPORTED).
 *
 * One stream, pinned host buffers and device buffers allocated at create time
 * for max_width x max_height; submit() queues the upload, the kernels and the
 * download of a bit-packed mask asynchronously and returns at once;
 * collect() waits (the one synchronisation a frame) and copies the mask out.
 * Output bits are identical to the CPU reference (src/threshold) for every
 * radius, gate, prefilter and frame size.
 */
#ifndef TT_CUDA_BERNSEN_H
#define TT_CUDA_BERNSEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_threshold_config {
	int max_width, max_height;
	int mode;           /* 0 per-pixel Bernsen, 1 tiled */
	int radius, gate, tile;
	int median;         /* 0, 3, 5 */
	float gauss_sigma;  /* 0 = off */
};

struct cuda_threshold;

/* 0 when a usable GPU is present; else a negative ERR_* and why (a sentence). */
int cuda_threshold_probe(char *why, size_t cap);
struct cuda_threshold *cuda_threshold_create(const struct cuda_threshold_config *cfg, int *err);
void cuda_threshold_destroy(struct cuda_threshold *t);
int cuda_threshold_set_config(struct cuda_threshold *t, const struct cuda_threshold_config *cfg);
/* grey is borrowed until collect() returns. */
int cuda_threshold_submit(struct cuda_threshold *t, const uint8_t *grey, int width, int height, int stride);
/* Writes height rows of stride_words 64-bit words (bit x%64 of word x/64 = pixel x, 1 = white). */
int cuda_threshold_collect(struct cuda_threshold *t, uint64_t *bits, int stride_words);

#ifdef __cplusplus
}
#endif

#endif
