/* Built when nvcc is absent (CUDA=0): the GPU stages report themselves as not built. */
#include "bernsen_cuda.h"
#include "canny_cuda.h"

#include <stdio.h>

#include "../src/core/err.h"

int cuda_threshold_probe(char *why, size_t cap)
{
	if (cap)
		snprintf(why, cap, "built without CUDA (no nvcc at build time)");
	return ERR_UNSUPPORTED;
}

struct cuda_threshold *cuda_threshold_create(const struct cuda_threshold_config *cfg, int *err)
{
	(void)cfg;
	*err = ERR_UNSUPPORTED;
	return NULL;
}

void cuda_threshold_destroy(struct cuda_threshold *t) { (void)t; }

int cuda_threshold_set_config(struct cuda_threshold *t, const struct cuda_threshold_config *cfg)
{
	(void)t;
	(void)cfg;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_submit(struct cuda_threshold *t, const uint8_t *grey, int width, int height, int stride)
{
	(void)t;
	(void)grey;
	(void)width;
	(void)height;
	(void)stride;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_collect(struct cuda_threshold *t, uint64_t *bits, int stride_words)
{
	(void)t;
	(void)bits;
	(void)stride_words;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_collect_view(struct cuda_threshold *t, const uint64_t **bits, int *stride_words)
{
	(void)t;
	(void)bits;
	(void)stride_words;
	return ERR_UNSUPPORTED;
}

void cuda_threshold_set_download(struct cuda_threshold *t, int on)
{
	(void)t;
	(void)on;
}

void cuda_threshold_set_extremes(struct cuda_threshold *t, int on)
{
	(void)t;
	(void)on;
}

int cuda_threshold_extremes(struct cuda_threshold *t, const uint8_t **lohi)
{
	(void)t;
	(void)lohi;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_fetch_mask(struct cuda_threshold *t, const uint64_t **bits, int *stride_words)
{
	(void)t;
	(void)bits;
	(void)stride_words;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_device_mask(struct cuda_threshold *t, const void **dev_bits, int *stride_words, void **stream)
{
	(void)t;
	(void)dev_bits;
	(void)stride_words;
	(void)stream;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_register(struct cuda_threshold *t, void *data, size_t bytes)
{
	(void)t;
	(void)data;
	(void)bytes;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_unregister(struct cuda_threshold *t, void *data)
{
	(void)t;
	(void)data;
	return ERR_UNSUPPORTED;
}

int cuda_threshold_stage_times(struct cuda_threshold *t, float *upload_us, float *kernels_us, float *download_us)
{
	(void)t;
	*upload_us = *kernels_us = *download_us = 0.0f;
	return ERR_UNSUPPORTED;
}

struct cuda_canny *cuda_canny_create(const struct cuda_canny_config *cfg, int *err)
{
	(void)cfg;
	*err = ERR_UNSUPPORTED;
	return NULL;
}

void cuda_canny_destroy(struct cuda_canny *k) { (void)k; }

int cuda_canny_set_config(struct cuda_canny *k, const struct cuda_canny_config *cfg)
{
	(void)k;
	(void)cfg;
	return ERR_UNSUPPORTED;
}

int cuda_canny_submit(struct cuda_canny *k, const uint8_t *grey, int width, int height, int stride, int x, int y,
		      int w, int h)
{
	(void)k;
	(void)grey;
	(void)width;
	(void)height;
	(void)stride;
	(void)x;
	(void)y;
	(void)w;
	(void)h;
	return ERR_UNSUPPORTED;
}

int cuda_canny_collect(struct cuda_canny *k, uint8_t *edge, uint16_t *mag, uint8_t *dir, int stride)
{
	(void)k;
	(void)edge;
	(void)mag;
	(void)dir;
	(void)stride;
	return ERR_UNSUPPORTED;
}

int cuda_canny_stage_times(struct cuda_canny *k, float *upload_us, float *kernels_us, float *download_us)
{
	(void)k;
	*upload_us = *kernels_us = *download_us = 0.0f;
	return ERR_UNSUPPORTED;
}
