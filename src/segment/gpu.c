#include "../../cuda/label_cuda.h"
#include "segment.h"

#include "../core/err.h"

/* struct segment_gpu is never defined: a pointer to one is the
 * struct cuda_label itself, so the wrapper adds no allocation and no hop. */

struct segment_gpu *segment_gpu_create(const struct segment_config *cfg, int *err)
{
	if (!cfg) {
		*err = ERR_RANGE;
		return NULL;
	}
	struct cuda_label_config lc = {.max_width = cfg->max_width,
				       .max_height = cfg->max_height,
				       .adj_cap = cfg->adj_cap,
				       .max_runs = cfg->max_runs,
				       .max_regions = cfg->max_regions};
	return (struct segment_gpu *)cuda_label_create(&lc, err);
}

void segment_gpu_destroy(struct segment_gpu *g)
{
	cuda_label_destroy((struct cuda_label *)g);
}

int segment_gpu_submit(struct segment_gpu *g, const void *dev_bits, int width, int height, int stride_words,
		       void *stream)
{
	if (!dev_bits)
		return ERR_RANGE; /* NULL means "the uploaded mask" to cuda_label_submit: not for this stage */
	return cuda_label_submit((struct cuda_label *)g, dev_bits, width, height, stride_words, stream);
}

int segment_gpu_collect(struct segment_gpu *g, const struct region_tree **out)
{
	return cuda_label_collect((struct cuda_label *)g, out);
}
