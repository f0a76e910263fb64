/* SIFT backends chosen by name: see sift.h. */
#include "sift.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#if TT_HAVE_OPENCV
#include "sift_opencv.h"
#endif
#if TT_HAVE_CUDA
#include "../../cuda/sift_cuda.h"
#endif

struct sift_ops {
	const char *name;
	/* NULL when not built; else creates the backend state or fails with why. */
	void *(*create)(const struct sift_config *cfg, char *why, size_t cap);
	int (*extract)(void *state, const struct image_u8 *grey, struct objects_keypoint *out, int cap, char *why,
		       size_t why_cap);
	void (*destroy)(void *state);
	const char *missing; /* why it is not built */
	/* NULL when always usable once built; else 0 when usable here, or the reason. */
	int (*probe)(char *why, size_t cap);
};

struct sift {
	const struct sift_ops *ops;
	void *state;
	struct sift_config cfg;
};

#if TT_HAVE_OPENCV
static void *opencv_create(const struct sift_config *cfg, char *why, size_t cap)
{
	return sift_opencv_create(cfg->max_keypoints, cfg->contrast_threshold, cfg->threads, why, cap);
}

static int opencv_extract(void *state, const struct image_u8 *grey, struct objects_keypoint *out, int cap,
			  char *why, size_t why_cap)
{
	return sift_opencv_extract(state, grey->data, grey->width, grey->height, grey->stride, out, cap, why,
				   why_cap);
}

static void opencv_destroy(void *state)
{
	sift_opencv_destroy(state);
}
#endif

#if TT_HAVE_CUDA
/* The GPU SIFT (cuda/sift_cuda.h): "auto" takes it when a GPU is usable. */
static void *cuda_create(const struct sift_config *cfg, char *why, size_t cap)
{
	struct cuda_sift_config cc = {.max_keypoints = cfg->max_keypoints,
				      .contrast_threshold = cfg->contrast_threshold};
	int err = 0;
	struct cuda_sift *c = cuda_sift_create(&cc, &err);
	if (!c)
		snprintf(why, cap, "GPU SIFT: %s", err_str(err));
	return c;
}

static int cuda_extract(void *state, const struct image_u8 *grey, struct objects_keypoint *out, int cap, char *why,
			size_t why_cap)
{
	int n = 0, err = cuda_sift_extract(state, grey->data, grey->width, grey->height, grey->stride, out, cap, &n);
	if (err < 0) {
		snprintf(why, why_cap, "GPU SIFT: %s", err_str(err));
		return -1;
	}
	return n;
}

static void cuda_destroy(void *state)
{
	cuda_sift_destroy(state);
}
#endif

static const struct sift_ops backends[] = {
#if TT_HAVE_CUDA
    {.name = "cuda", .create = cuda_create, .extract = cuda_extract, .destroy = cuda_destroy,
     .probe = cuda_sift_probe},
#else
    {.name = "cuda", .missing = "built without CUDA (no nvcc at build time, or CUDA=0)"},
#endif
#if TT_HAVE_OPENCV
    {.name = "opencv", .create = opencv_create, .extract = opencv_extract, .destroy = opencv_destroy},
#else
    {.name = "opencv", .missing = "built without OpenCV (libopencv-dev missing, or OPENCV=0)"},
#endif
};
#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

void sift_config_default(struct sift_config *cfg)
{
	cfg->max_keypoints = 2000;
	cfg->contrast_threshold = 0.04f;
	cfg->threads = 1;
}

/* The named backend, or for "auto" the first usable one; else NULL with
 * every candidate's reason in why. */
static const struct sift_ops *find_backend(const char *name, char *why, size_t cap)
{
	bool any = name && strcmp(name, "auto") == 0;
	char probe_why[200];
	size_t len = 0;
	snprintf(why, cap, "SIFT:");
	for (int i = 0; i < N_BACKENDS; i++) {
		if (!any && (!name || strcmp(name, backends[i].name) != 0))
			continue;
		probe_why[0] = 0;
		if (backends[i].create && (!backends[i].probe || backends[i].probe(probe_why, sizeof probe_why) == 0))
			return &backends[i];
		len = strlen(why);
		if (len + 1 < cap)
			snprintf(why + len, cap - len, "%s %s: %s", len > 5 ? ";" : "", backends[i].name,
				 backends[i].create ? probe_why : backends[i].missing);
		if (!any)
			return NULL;
	}
	if (!any)
		snprintf(why, cap, "SIFT: no backend '%s' (want cuda, opencv or auto)", name ? name : "(null)");
	return NULL;
}

int sift_backend_check(const char *backend, char *why, size_t cap)
{
	return find_backend(backend, why, cap) ? 0 : ERR_UNSUPPORTED;
}

struct sift *sift_create(const struct sift_config *cfg, const char *backend, int *err)
{
	char why[256] = "";
	*err = ERR_RANGE;
	if (!cfg || cfg->max_keypoints < 1 || cfg->max_keypoints > OBJECTS_MAX_KEYPOINTS ||
	    !(cfg->contrast_threshold >= 0.0f && cfg->contrast_threshold <= 1.0f) || cfg->threads < 0)
		return NULL;
	const struct sift_ops *ops = find_backend(backend, why, sizeof why);
	if (!ops) {
		log_error("%s", why);
		*err = ERR_UNSUPPORTED;
		return NULL;
	}
	struct sift *s = calloc(1, sizeof *s);
	if (!s) {
		*err = ERR_NOMEM;
		return NULL;
	}
	s->ops = ops;
	s->cfg = *cfg;
	s->state = ops->create(cfg, why, sizeof why);
	/* "auto": a backend that probed usable but failed to start gives way to the next */
	while (!s->state && backend && strcmp(backend, "auto") == 0 && ops + 1 < backends + N_BACKENDS &&
	       ops[1].create) {
		log_warn("SIFT %s: %s; trying %s", ops->name, why, ops[1].name);
		s->ops = ++ops;
		s->state = ops->create(cfg, why, sizeof why);
	}
	if (!s->state) {
		log_error("SIFT %s: %s", ops->name, why);
		free(s);
		*err = ERR_UNSUPPORTED;
		return NULL;
	}
	*err = 0;
	return s;
}

void sift_destroy(struct sift *s)
{
	if (!s)
		return;
	s->ops->destroy(s->state);
	free(s);
}

int sift_register_buffer(struct sift *s, void *data, size_t bytes)
{
	if (!s)
		return ERR_RANGE;
#if TT_HAVE_CUDA
	if (strcmp(s->ops->name, "cuda") == 0)
		return cuda_sift_register(s->state, data, bytes);
#endif
	(void)data;
	(void)bytes;
	return 0;
}

const char *sift_backend_name(const struct sift *s)
{
	return s ? s->ops->name : "none";
}

int sift_extract(struct sift *s, const struct image_u8 *grey, struct objects_keypoint *out, int cap, int *n_out)
{
	*n_out = 0;
	if (!s || !grey || !grey->data || grey->width < 1 || grey->height < 1 || grey->stride < grey->width ||
	    grey->width > IMAGE_MAX_SIDE || grey->height > IMAGE_MAX_SIDE || cap < 0 || (cap > 0 && !out))
		return ERR_RANGE;
	char why[256] = "";
	int n = s->ops->extract(s->state, grey, out, cap < s->cfg.max_keypoints ? cap : s->cfg.max_keypoints, why,
				sizeof why);
	if (n < 0) {
		log_error("SIFT %s: %s", s->ops->name, why);
		return ERR_DEVICE;
	}
	*n_out = n;
	return 0;
}

#if TT_HAVE_CUDA
struct sift_nearest *sift_nearest_create(const struct sift *s, const struct objects_keypoint *lib, int n_lib,
					 int max_query)
{
	if (!s || strcmp(s->ops->name, "cuda") != 0)
		return NULL;
	int err = 0;
	struct cuda_match *m = cuda_match_create(lib, n_lib, max_query, &err);
	if (!m)
		log_warn("SIFT cuda: matching on the GPU unavailable (%s); matching on the CPU", err_str(err));
	return (struct sift_nearest *)m;
}

void sift_nearest_destroy(struct sift_nearest *m)
{
	cuda_match_destroy((struct cuda_match *)m);
}

int sift_nearest(struct sift_nearest *m, const struct objects_keypoint *query, int n, struct objects_nearest *out)
{
	int err = cuda_match_nearest((struct cuda_match *)m, query, n, out);
	return err == ERR_RANGE ? ERR_RANGE : err < 0 ? ERR_DEVICE : 0;
}
#else
struct sift_nearest *sift_nearest_create(const struct sift *s, const struct objects_keypoint *lib, int n_lib,
					 int max_query)
{
	(void)s;
	(void)lib;
	(void)n_lib;
	(void)max_query;
	return NULL;
}

void sift_nearest_destroy(struct sift_nearest *m)
{
	(void)m;
}

int sift_nearest(struct sift_nearest *m, const struct objects_keypoint *query, int n, struct objects_nearest *out)
{
	(void)m;
	(void)query;
	(void)n;
	(void)out;
	return ERR_UNSUPPORTED;
}
#endif
