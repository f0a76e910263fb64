/* Built when nvcc is absent (CUDA=0): the GPU segmenter reports itself as not built. */
#include "label_cuda.h"

#include <stddef.h>

#include "../src/core/err.h"

struct cuda_label *cuda_label_create(const struct cuda_label_config *cfg, int *err)
{
	(void)cfg;
	if (err)
		*err = ERR_UNSUPPORTED;
	return NULL;
}

void cuda_label_destroy(struct cuda_label *l) { (void)l; }

int cuda_label_upload(struct cuda_label *l, const uint64_t *bits, int width, int height, int stride_words)
{
	(void)l;
	(void)bits;
	(void)width;
	(void)height;
	(void)stride_words;
	return ERR_UNSUPPORTED;
}

int cuda_label_submit(struct cuda_label *l, const void *dev_bits, int width, int height, int stride_words,
		      void *stream)
{
	(void)l;
	(void)dev_bits;
	(void)width;
	(void)height;
	(void)stride_words;
	(void)stream;
	return ERR_UNSUPPORTED;
}

int cuda_label_collect(struct cuda_label *l, const struct region_tree **out)
{
	(void)l;
	if (out)
		*out = NULL;
	return ERR_UNSUPPORTED;
}

int64_t cuda_label_overflows(const struct cuda_label *l)
{
	(void)l;
	return 0;
}

int cuda_label_gpu_time(const struct cuda_label *l, float *us)
{
	(void)l;
	(void)us;
	return ERR_UNSUPPORTED;
}
