/* Built when nvcc is absent (CUDA=0): the GPU SIFT reports itself as not built. */
#include "sift_cuda.h"

#include <stdio.h>

#include "../src/core/err.h"

int cuda_sift_probe(char *why, size_t cap)
{
	if (cap)
		snprintf(why, cap, "built without CUDA (no nvcc at build time)");
	return ERR_UNSUPPORTED;
}

struct cuda_sift *cuda_sift_create(const struct cuda_sift_config *cfg, int *err)
{
	(void)cfg;
	if (err)
		*err = ERR_UNSUPPORTED;
	return NULL;
}

void cuda_sift_destroy(struct cuda_sift *s) { (void)s; }

int cuda_sift_extract(struct cuda_sift *s, const uint8_t *grey, int width, int height, int stride,
		      struct objects_keypoint *out, int cap, int *n_out)
{
	(void)s;
	(void)grey;
	(void)width;
	(void)height;
	(void)stride;
	(void)out;
	(void)cap;
	if (n_out)
		*n_out = 0;
	return ERR_UNSUPPORTED;
}

int cuda_sift_register(struct cuda_sift *s, void *data, size_t bytes)
{
	(void)s;
	(void)data;
	(void)bytes;
	return ERR_UNSUPPORTED;
}

int64_t cuda_sift_overflows(const struct cuda_sift *s)
{
	(void)s;
	return 0;
}

int cuda_sift_stage_times(const struct cuda_sift *s, float *pyramid_us, float *detect_us, float *describe_us)
{
	(void)s;
	*pyramid_us = *detect_us = *describe_us = 0.0f;
	return ERR_UNSUPPORTED;
}

struct cuda_match *cuda_match_create(const struct objects_keypoint *lib, int n_lib, int max_query, int *err)
{
	(void)lib;
	(void)n_lib;
	(void)max_query;
	if (err)
		*err = ERR_UNSUPPORTED;
	return NULL;
}

void cuda_match_destroy(struct cuda_match *m) { (void)m; }

int cuda_match_nearest(struct cuda_match *m, const struct objects_keypoint *query, int n, struct objects_nearest *out)
{
	(void)m;
	(void)query;
	(void)n;
	(void)out;
	return ERR_UNSUPPORTED;
}
