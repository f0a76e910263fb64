#include "threshold.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cuda/bernsen_cuda.h"
#include "../core/err.h"
#include "../core/log.h"
#include "threshold_cpu.h"

_Static_assert(THRESHOLD_GAUSS_MAX_RADIUS == CUDA_GAUSS_MAX_RADIUS, "the GPU takes every reference Gaussian");

struct threshold_ops {
	const char *name;
	int (*open)(struct threshold *t);
	void (*close)(struct threshold *t);
	int (*configure)(struct threshold *t);
	int (*submit)(struct threshold *t);
	int (*collect)(struct threshold *t, struct bitmask *out);
	int (*collect_view)(struct threshold *t, struct bitmask *view);
	int (*register_buffer)(struct threshold *t, void *data, size_t bytes);
	int (*unregister_buffer)(struct threshold *t, void *data);
};

struct threshold {
	struct threshold_config cfg;
	const struct threshold_ops *ops;
	struct threshold_cpu *cpu;
	struct image_u8 pre_a, pre_b; /* prefilter outputs, max size */
	struct bitmask own;           /* CPU result for collect_view */
	struct cuda_threshold *gpu;
	const struct image_u8 *pending; /* borrowed from submit until collect */
	int done_w, done_h;             /* the frame last collected (threshold_fetch_view) */
	bool gpu_fault_logged;
};

static int cpu_open(struct threshold *t)
{
	int err = 0;
	t->cpu = threshold_cpu_create(t->cfg.max_width, t->cfg.max_height, &err);
	if (!t->cpu)
		return err;
	if ((err = image_u8_alloc(&t->pre_a, t->cfg.max_width, t->cfg.max_height)) < 0)
		return err;
	if ((err = bitmask_alloc(&t->own, t->cfg.max_width, t->cfg.max_height)) < 0)
		return err;
	return image_u8_alloc(&t->pre_b, t->cfg.max_width, t->cfg.max_height);
}

static void cpu_close(struct threshold *t)
{
	threshold_cpu_destroy(t->cpu);
	t->cpu = NULL;
	image_u8_free(&t->pre_a);
	image_u8_free(&t->pre_b);
	bitmask_free(&t->own);
}

static int cpu_configure(struct threshold *t)
{
	(void)t;
	return 0;
}

static int cpu_submit(struct threshold *t)
{
	(void)t;
	return 0;
}

static struct image_u8 view_of(const struct image_u8 *buf, int w, int h)
{
	struct image_u8 v = {.width = w, .height = h, .stride = buf->stride, .data = buf->data};
	return v;
}

static int cpu_collect(struct threshold *t, struct bitmask *out)
{
	const struct image_u8 *src = t->pending;
	int w = src->width, h = src->height;
	struct image_u8 a = view_of(&t->pre_a, w, h), b = view_of(&t->pre_b, w, h);
	if (t->cfg.median) {
		threshold_cpu_median(t->cpu, src, t->cfg.median, &a);
		src = &a;
	}
	if (t->cfg.gauss_sigma > 0.0f) {
		struct image_u8 *dst = src == &a ? &b : &a;
		threshold_cpu_gauss(t->cpu, src, t->cfg.gauss_sigma, dst);
		src = dst;
	}
	if (t->cfg.mode == THRESHOLD_TILED)
		threshold_cpu_tiled(t->cpu, src, t->cfg.tile, t->cfg.gate, NULL, out);
	else if (t->cfg.mode == THRESHOLD_BERNSEN)
		threshold_cpu_bernsen(t->cpu, src, t->cfg.radius, t->cfg.gate, NULL, out);
	else if (t->cfg.mode == THRESHOLD_SAUVOLA)
		threshold_cpu_sauvola(t->cpu, src, t->cfg.mean_radius, t->cfg.sauvola_k, t->cfg.sauvola_range,
				      t->cfg.gate, NULL, out);
	else
		threshold_cpu_mean(t->cpu, src, t->cfg.mode, t->cfg.radius, t->cfg.gate, t->cfg.mean_radius,
				   t->cfg.mean_bias, NULL, out);
	return 0;
}

static int cpu_collect_view(struct threshold *t, struct bitmask *view)
{
	struct bitmask *m = &t->own;
	m->width = t->pending->width;
	m->height = t->pending->height;
	m->stride_words = (m->width + 63) / 64;
	cpu_collect(t, m);
	*view = *m;
	return 0;
}

static int cpu_register_buffer(struct threshold *t, void *data, size_t bytes)
{
	(void)t;
	(void)data;
	(void)bytes;
	return 0;
}

static int cpu_unregister_buffer(struct threshold *t, void *data)
{
	(void)t;
	(void)data;
	return 0;
}

static struct cuda_threshold_config cuda_config_of(const struct threshold_config *c)
{
	struct cuda_threshold_config g = {
		.max_width = c->max_width,
		.max_height = c->max_height,
		.mode = c->mode,
		.radius = c->radius,
		.gate = c->gate,
		.tile = c->tile,
		.mean_radius = c->mean_radius,
		.mean_bias = c->mean_bias,
		.sauvola_k = c->sauvola_k,
		.sauvola_range = c->sauvola_range,
		.median = c->median,
		.bands = c->gpu_bands,
	};
	/* The CPU reference owns the taps; the GPU reproduces them. */
	if (c->gauss_sigma > 0.0f)
		g.gauss_radius = threshold_gauss_taps(c->gauss_sigma, g.gauss_taps);
	return g;
}

static int cuda_open(struct threshold *t)
{
	int err = 0;
	struct cuda_threshold_config g = cuda_config_of(&t->cfg);
	t->gpu = cuda_threshold_create(&g, &err);
	return t->gpu ? 0 : err;
}

static void cuda_close(struct threshold *t)
{
	cuda_threshold_destroy(t->gpu);
	t->gpu = NULL;
}

static int cuda_configure(struct threshold *t)
{
	struct cuda_threshold_config g = cuda_config_of(&t->cfg);
	return cuda_threshold_set_config(t->gpu, &g);
}

static int cuda_submit(struct threshold *t)
{
	const struct image_u8 *g = t->pending;
	return cuda_threshold_submit(t->gpu, g->data, g->width, g->height, g->stride);
}

static int cuda_collect(struct threshold *t, struct bitmask *out)
{
	return cuda_threshold_collect(t->gpu, out->bits, out->stride_words);
}

static int cuda_collect_view(struct threshold *t, struct bitmask *view)
{
	const uint64_t *bits;
	int e = cuda_threshold_collect_view(t->gpu, &bits, &view->stride_words);
	if (e == 0) {
		view->bits = (uint64_t *)(uintptr_t)bits; /* read-only for the caller, documented */
		view->width = t->pending->width;
		view->height = t->pending->height;
	}
	return e;
}

static int cuda_register_buffer(struct threshold *t, void *data, size_t bytes)
{
	return cuda_threshold_register(t->gpu, data, bytes);
}

static int cuda_unregister_buffer(struct threshold *t, void *data)
{
	return cuda_threshold_unregister(t->gpu, data);
}

static const struct threshold_ops backends[] = {
	{"cpu", cpu_open, cpu_close, cpu_configure, cpu_submit, cpu_collect, cpu_collect_view, cpu_register_buffer,
	 cpu_unregister_buffer},
	{"cuda", cuda_open, cuda_close, cuda_configure, cuda_submit, cuda_collect, cuda_collect_view,
	 cuda_register_buffer, cuda_unregister_buffer},
};

static const struct threshold_ops *ops_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

static int config_check(const struct threshold_config *c)
{
	if (c->max_width < 1 || c->max_height < 1 || c->max_width > IMAGE_MAX_SIDE || c->max_height > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	if (c->mode < 0 || c->mode >= THRESHOLD_MODES)
		return ERR_RANGE;
	if (c->mode >= THRESHOLD_MEAN &&
	    (c->mean_radius < 1 || c->mean_radius > THRESHOLD_MAX_MEAN_RADIUS || c->mean_bias < 0 ||
	     c->mean_bias > THRESHOLD_MAX_MEAN_BIAS))
		return ERR_RANGE;
	if (c->mode == THRESHOLD_SAUVOLA && (c->sauvola_k < 0 || c->sauvola_k > THRESHOLD_MAX_SAUVOLA_K ||
					     c->sauvola_range < 1 || c->sauvola_range > THRESHOLD_MAX_SAUVOLA_RANGE))
		return ERR_RANGE;
	if (c->radius < 1 || c->radius > THRESHOLD_MAX_RADIUS || c->gate < 0 || c->gate > 255)
		return ERR_RANGE;
	if (c->tile < THRESHOLD_MIN_TILE || c->tile > THRESHOLD_MAX_TILE)
		return ERR_RANGE;
	if (c->median != 0 && c->median != 3 && c->median != 5)
		return ERR_RANGE;
	if (!(c->gauss_sigma == 0.0f || (c->gauss_sigma >= 0.3f && c->gauss_sigma <= 4.0f)))
		return ERR_RANGE;
	if (c->gpu_bands < 0 || c->gpu_bands > 8)
		return ERR_RANGE;
	return 0;
}

/* Brings up the CPU backend in place of a failed or absent GPU one. */
static int fall_back_to_cpu(struct threshold *t)
{
	if (t->ops && t->ops->close)
		t->ops->close(t);
	t->ops = ops_by_name("cpu");
	int err = t->ops->open(t);
	if (err < 0)
		t->ops->close(t);
	return err;
}

int threshold_backend_check(const char *backend, char *why, size_t cap)
{
	if (!backend || strcmp(backend, "auto") == 0 || strcmp(backend, "cpu") == 0)
		return 0;
	if (strcmp(backend, "cuda") != 0) {
		snprintf(why, cap, "unknown backend '%s' (cpu, cuda or auto)", backend);
		return ERR_CONFIG;
	}
	return cuda_threshold_probe(why, cap) == 0 ? 0 : ERR_UNSUPPORTED;
}

struct threshold *threshold_create(const struct threshold_config *cfg, const char *backend, int *err)
{
	struct threshold *t = NULL;
	int e = config_check(cfg);
	if (e < 0) {
		log_error("threshold: configuration out of range (radius 1..%d, gate 0..255, tile %d..%d, "
			  "median 0/3/5, gauss_sigma 0 or 0.3..4)",
			  THRESHOLD_MAX_RADIUS, THRESHOLD_MIN_TILE, THRESHOLD_MAX_TILE);
		goto fail;
	}
	t = calloc(1, sizeof *t);
	if (!t) {
		e = ERR_NOMEM;
		goto fail;
	}
	t->cfg = *cfg;
	const char *name = backend ? backend : "auto";
	if (strcmp(name, "auto") == 0) {
		char why[160];
		if (cuda_threshold_probe(why, sizeof why) == 0) {
			t->ops = ops_by_name("cuda");
			e = t->ops->open(t);
			if (e == 0) {
				log_info("threshold: CUDA backend (%s)", why);
				goto ok;
			}
			snprintf(why, sizeof why, "the GPU was found but its buffers could not be set up: %s",
				 err_str(e));
		}
		log_info("threshold: CPU backend (%s)", why);
		if ((e = fall_back_to_cpu(t)) < 0)
			goto fail;
		goto ok;
	}
	t->ops = ops_by_name(name);
	if (!t->ops) {
		log_error("threshold: unknown backend '%s' (cpu, cuda or auto)", name);
		e = ERR_CONFIG;
		goto fail;
	}
	if (t->ops == ops_by_name("cuda")) {
		char why[160];
		if ((e = cuda_threshold_probe(why, sizeof why)) < 0) {
			log_error("threshold: CUDA backend unavailable: %s", why);
			e = ERR_UNSUPPORTED;
			t->ops = NULL;
			goto fail;
		}
	}
	if ((e = t->ops->open(t)) < 0)
		goto fail;
	/* The caller knows whether the name was configured or chosen by auto
	 * (a second scale follows the first's choice), and says which. */
	log_debug("threshold: %s backend, as asked", t->ops->name);
ok:
	*err = 0;
	return t;
fail:
	threshold_destroy(t);
	*err = e;
	return NULL;
}

void threshold_destroy(struct threshold *t)
{
	if (!t)
		return;
	if (t->ops)
		t->ops->close(t);
	free(t);
}

int threshold_set_config(struct threshold *t, const struct threshold_config *cfg)
{
	int e = config_check(cfg);
	if (e < 0)
		return e;
	if (cfg->max_width > t->cfg.max_width || cfg->max_height > t->cfg.max_height)
		return ERR_RANGE;
	struct threshold_config keep = t->cfg;
	t->cfg = *cfg;
	t->cfg.max_width = keep.max_width;
	t->cfg.max_height = keep.max_height;
	if ((e = t->ops->configure(t)) < 0) {
		t->cfg = keep;
		return e;
	}
	return 0;
}

const char *threshold_backend_name(const struct threshold *t) { return t->ops->name; }

static void gpu_fault(struct threshold *t, int e)
{
	log_once(&t->gpu_fault_logged, LOG_WARN, "threshold: GPU failed (%s); continuing on the CPU", err_str(e));
}

int threshold_submit(struct threshold *t, const struct image_u8 *grey)
{
	if (!grey || !grey->data || grey->width < 1 || grey->height < 1 || grey->width > t->cfg.max_width ||
	    grey->height > t->cfg.max_height || grey->stride < grey->width)
		return ERR_SIZE;
	t->pending = grey;
	int e = t->ops->submit(t);
	if (e < 0 && t->ops != ops_by_name("cpu")) {
		gpu_fault(t, e);
		e = fall_back_to_cpu(t);
	}
	if (e < 0)
		t->pending = NULL;
	return e;
}

int threshold_collect(struct threshold *t, struct bitmask *out)
{
	if (!t->pending)
		return ERR_AGAIN;
	int w = t->pending->width, h = t->pending->height;
	if (!out || !out->bits || out->stride_words < (w + 63) / 64 || out->width != w || out->height != h) {
		t->pending = NULL;
		return ERR_SIZE;
	}
	int e = t->ops->collect(t, out);
	if (e < 0 && t->ops != ops_by_name("cpu")) {
		gpu_fault(t, e);
		if ((e = fall_back_to_cpu(t)) == 0)
			e = t->ops->collect(t, out);
	}
	t->pending = NULL;
	return e;
}

int threshold_collect_view(struct threshold *t, struct bitmask *view)
{
	if (!t->pending)
		return ERR_AGAIN;
	t->done_w = t->pending->width;
	t->done_h = t->pending->height;
	int e = t->ops->collect_view(t, view);
	if (e < 0 && t->ops != ops_by_name("cpu")) {
		gpu_fault(t, e);
		if ((e = fall_back_to_cpu(t)) == 0)
			e = t->ops->collect_view(t, view);
	}
	t->pending = NULL;
	return e;
}

int threshold_device_mask(struct threshold *t, struct threshold_device_mask *out)
{
	if (t->ops != ops_by_name("cuda"))
		return ERR_UNSUPPORTED;
	return cuda_threshold_device_mask(t->gpu, &out->bits, &out->stride_words, &out->stream);
}

void threshold_set_mask_download(struct threshold *t, bool on)
{
	if (t->ops == ops_by_name("cuda"))
		cuda_threshold_set_download(t->gpu, on);
}

bool threshold_set_extremes(struct threshold *t, bool on)
{
	const bool gpu = t->ops == ops_by_name("cuda");
	if (gpu)
		cuda_threshold_set_extremes(t->gpu, on);
	return gpu && on;
}

int threshold_extremes(struct threshold *t, const uint8_t **lohi)
{
	if (t->ops != ops_by_name("cuda"))
		return ERR_AGAIN;
	return cuda_threshold_extremes(t->gpu, lohi);
}

int threshold_fetch_view(struct threshold *t, struct bitmask *view)
{
	if (!t->done_w)
		return ERR_AGAIN;
	if (t->ops != ops_by_name("cuda")) {
		*view = t->own;
		return 0;
	}
	const uint64_t *bits;
	int e = cuda_threshold_fetch_mask(t->gpu, &bits, &view->stride_words);
	if (e == 0) {
		view->bits = (uint64_t *)(uintptr_t)bits; /* read-only for the caller, documented */
		view->width = t->done_w;
		view->height = t->done_h;
	}
	return e;
}

int threshold_register_buffer(struct threshold *t, void *data, size_t bytes)
{
	if (!data || bytes == 0)
		return ERR_RANGE;
	return t->ops->register_buffer(t, data, bytes);
}

int threshold_unregister_buffer(struct threshold *t, void *data)
{
	return t->ops->unregister_buffer(t, data);
}

int threshold_process(struct threshold *t, const struct image_u8 *grey, struct bitmask *out)
{
	int e = threshold_submit(t, grey);
	return e < 0 ? e : threshold_collect(t, out);
}
