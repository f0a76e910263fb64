/* Asynchronous recognition of untagged objects: see stage.h. */
#include "stage.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"

/* Samples kept for the --stats medians (the latest, in a ring). */
#define STATS_SAMPLES 1024

enum job_state { JOB_IDLE, JOB_BUSY, JOB_DONE };

struct objects_stage {
	struct objects_stage_config cfg;
	struct sift *sift;
	struct objects_recogniser *rec;
	struct sift_nearest *nearest; /* matching on the SIFT backend's device, or NULL: on the CPU */
	struct objects_nearest *nn;   /* max_keypoints */
	int n_lib;

	/* Handed between the threads under lock: the pipeline thread owns
	 * frame and the job's fields while IDLE (and reads results when DONE),
	 * the worker while BUSY. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_started, quit;
	enum job_state state;
	struct image_u8 frame;
	uint64_t job_frame;
	int64_t job_t_ns;
	struct objects_keypoint *kp;
	int n_kp;
	struct objects_detection *dets;
	int n_dets;
	int job_err;
	int64_t job_sift_ns, job_work_ns;

	/* Pipeline thread only. */
	bool submitted_once;
	int64_t last_submit_ns;
	struct objects_seen *seen;
	int n_seen;
	struct detections merged;
	uint64_t n_done, n_failed;
	int n_samples;
	int32_t lat_frames[STATS_SAMPLES];
	int32_t keypoints[STATS_SAMPLES];
	int64_t work_ns[STATS_SAMPLES], sift_ns[STATS_SAMPLES];
};

static void *worker_main(void *arg)
{
	struct objects_stage *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->state != JOB_BUSY && !s->quit)
			pthread_cond_wait(&s->cond, &s->lock);
		if (s->quit)
			break;
		pthread_mutex_unlock(&s->lock);

		int64_t t0 = clock_now_ns();
		int n_kp = 0, n_dets = 0;
		int err = sift_extract(s->sift, &s->frame, s->kp, s->cfg.sift.max_keypoints, &n_kp);
		int64_t t1 = clock_now_ns();
		if (!err && s->nearest && sift_nearest(s->nearest, s->kp, n_kp, s->nn) == 0)
			err = objects_recognise_nearest(s->rec, s->kp, n_kp, s->nn, s->dets, s->n_lib, &n_dets);
		else if (!err)
			err = objects_recognise(s->rec, s->kp, n_kp, s->dets, s->n_lib, &n_dets);

		pthread_mutex_lock(&s->lock);
		s->n_kp = n_kp;
		s->n_dets = err ? 0 : n_dets;
		s->job_err = err;
		s->job_sift_ns = t1 - t0;
		s->job_work_ns = clock_now_ns() - t0;
		s->state = JOB_DONE;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int config_check(const struct objects_stage_config *c)
{
	if (!c->lib || c->width < 1 || c->height < 1 || c->width > IMAGE_MAX_SIDE || c->height > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	if (!(c->rate_hz > 0.0f) || c->hold_ns <= 0 || c->max_detections < 1)
		return ERR_RANGE;
	if (c->sift.max_keypoints < 1 || c->sift.max_keypoints > OBJECTS_MAX_KEYPOINTS)
		return ERR_RANGE;
	return 0;
}

struct objects_stage *objects_stage_create(const struct objects_stage_config *cfg, int *err)
{
	*err = config_check(cfg);
	if (*err)
		return NULL;
	struct objects_stage *s = calloc(1, sizeof *s);
	if (!s) {
		*err = ERR_NOMEM;
		return NULL;
	}
	s->cfg = *cfg;
	s->n_lib = objects_library_count(cfg->lib);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->sift = sift_create(&cfg->sift, cfg->backend ? cfg->backend : "auto", err);
	if (!s->sift)
		goto fail;
	s->rec = objects_recogniser_create(cfg->lib, &cfg->match, cfg->sift.max_keypoints, err);
	if (!s->rec)
		goto fail;
	{
		int n_lib_kp;
		const struct objects_keypoint *lk = objects_library_keypoints(cfg->lib, &n_lib_kp);
		s->nearest = sift_nearest_create(s->sift, lk, n_lib_kp, cfg->sift.max_keypoints);
	}
	*err = ERR_NOMEM;
	int n_lib = s->n_lib > 0 ? s->n_lib : 1;
	s->kp = calloc((size_t)cfg->sift.max_keypoints, sizeof *s->kp);
	s->nn = calloc((size_t)cfg->sift.max_keypoints, sizeof *s->nn);
	s->dets = calloc((size_t)n_lib, sizeof *s->dets);
	s->seen = calloc((size_t)n_lib, sizeof *s->seen);
	if (!s->kp || !s->nn || !s->dets || !s->seen || image_u8_alloc(&s->frame, cfg->width, cfg->height))
		goto fail;
	if (detections_alloc(&s->merged, cfg->max_detections))
		goto fail;
	if (pthread_create(&s->thread, NULL, worker_main, s) != 0) {
		*err = ERR_DEVICE;
		goto fail;
	}
	s->thread_started = true;
	pthread_setname_np(s->thread, "tt-objects");
	*err = 0;
	return s;
fail:
	objects_stage_destroy(s);
	return NULL;
}

void objects_stage_destroy(struct objects_stage *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		s->quit = true;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	sift_nearest_destroy(s->nearest);
	sift_destroy(s->sift);
	objects_recogniser_destroy(s->rec);
	free(s->nn);
	free(s->kp);
	free(s->dets);
	free(s->seen);
	image_u8_free(&s->frame);
	detections_free(&s->merged);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int64_t time_of(int64_t t_ns)
{
	return t_ns ? t_ns : clock_now_ns();
}

bool objects_stage_submit(struct objects_stage *s, const struct image_u8 *grey, uint64_t frame, int64_t t_ns)
{
	if (grey->width != s->cfg.width || grey->height != s->cfg.height)
		return false;
	t_ns = time_of(t_ns);
	int64_t period_ns = (int64_t)(1e9 / s->cfg.rate_hz);
	/* A clock that went back (a replay started again) makes one due at once. */
	if (s->submitted_once && t_ns >= s->last_submit_ns && t_ns - s->last_submit_ns < period_ns)
		return false;
	pthread_mutex_lock(&s->lock);
	bool idle = s->state == JOB_IDLE;
	pthread_mutex_unlock(&s->lock);
	if (!idle)
		return false;
	/* Idle: the worker does not touch the frame until it is told. */
	image_u8_copy(&s->frame, grey);
	s->job_frame = frame;
	s->job_t_ns = t_ns;
	s->submitted_once = true;
	s->last_submit_ns = t_ns;
	pthread_mutex_lock(&s->lock);
	s->state = JOB_BUSY;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* Where the learned picture's point (u, v) lands: frame = [a -b; b a] p + t. */
static void pose_apply(const struct objects_detection *d, float u, float v, float out[2])
{
	out[0] = d->a * u - d->b * v + d->tx;
	out[1] = d->b * u + d->a * v + d->ty;
}

static void take_detection(struct objects_stage *s, const struct objects_detection *d)
{
	struct objects_object ob;
	if (objects_library_get(s->cfg.lib, d->index, &ob))
		return;
	int k = 0;
	while (k < s->n_seen && s->seen[k].id != d->id)
		k++;
	if (k == s->n_seen) {
		if (s->n_seen >= s->n_lib)
			return;
		s->n_seen++;
	}
	struct objects_seen *o = &s->seen[k];
	o->id = d->id;
	o->index = d->index;
	o->x = d->x;
	o->y = d->y;
	o->angle = d->angle;
	o->scale = d->scale;
	o->size_px = d->scale * (float)(ob.width > ob.height ? ob.width : ob.height);
	float w1 = (float)(ob.width - 1), h1 = (float)(ob.height - 1);
	pose_apply(d, 0, 0, o->corners[0]);
	pose_apply(d, w1, 0, o->corners[1]);
	pose_apply(d, w1, h1, o->corners[2]);
	pose_apply(d, 0, h1, o->corners[3]);
	o->frame = s->job_frame;
	o->t_ns = s->job_t_ns;
}

static void record_stats(struct objects_stage *s, uint64_t frame)
{
	if (s->job_err) {
		s->n_failed++;
		return;
	}
	int i = (int)(s->n_done % STATS_SAMPLES);
	s->n_done++;
	s->lat_frames[i] = (int32_t)(frame - s->job_frame);
	s->keypoints[i] = s->n_kp;
	s->work_ns[i] = s->job_work_ns;
	s->sift_ns[i] = s->job_sift_ns;
	if (s->n_samples < STATS_SAMPLES)
		s->n_samples++;
}

bool objects_stage_poll(struct objects_stage *s, uint64_t frame, int64_t t_ns)
{
	bool changed = false;
	pthread_mutex_lock(&s->lock);
	bool done = s->state == JOB_DONE;
	pthread_mutex_unlock(&s->lock);
	if (done) {
		/* Done: the worker waits for the next submission and leaves the results alone. */
		record_stats(s, frame);
		for (int i = 0; i < s->n_dets; i++)
			take_detection(s, &s->dets[i]);
		changed = s->n_dets > 0;
		pthread_mutex_lock(&s->lock);
		s->state = JOB_IDLE;
		pthread_mutex_unlock(&s->lock);
	}
	t_ns = time_of(t_ns);
	int k = 0;
	for (int i = 0; i < s->n_seen; i++) {
		int64_t age_ns = t_ns - s->seen[i].t_ns;
		if (age_ns > s->cfg.hold_ns || age_ns < 0) {
			changed = true;
			continue;
		}
		s->seen[k++] = s->seen[i];
	}
	s->n_seen = k;
	return changed;
}

void objects_stage_wait(struct objects_stage *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->state == JOB_BUSY)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static int32_t copy_list(void *dst, int32_t cap, const void *src, int32_t n, size_t size, bool *overflow)
{
	if (n > cap) {
		n = cap;
		*overflow = true;
	}
	if (n > 0)
		memcpy(dst, src, (size_t)n * size);
	return n;
}

const struct detections *objects_stage_merge(struct objects_stage *s, const struct detections *in)
{
	struct detections *m = &s->merged;
	m->width = in->width;
	m->height = in->height;
	m->overflow = in->overflow;
	m->n_fids = copy_list(m->fids, m->cap_fids, in->fids, in->n_fids, sizeof *m->fids, &m->overflow);
	m->n_fuzzy = copy_list(m->fuzzy, m->cap_fuzzy, in->fuzzy, in->n_fuzzy, sizeof *m->fuzzy, &m->overflow);
	m->n_roots = copy_list(m->roots, m->cap_roots, in->roots, in->n_roots, sizeof *m->roots, &m->overflow);
	m->n_fingers = copy_list(m->fingers, m->cap_fingers, in->fingers, in->n_fingers, sizeof *m->fingers,
				 &m->overflow);
	m->n_blobs = copy_list(m->blobs, m->cap_blobs, in->blobs, in->n_blobs, sizeof *m->blobs, &m->overflow);
	for (int i = 0; i < s->n_seen; i++) {
		if (m->n_fids >= m->cap_fids) {
			m->overflow = true;
			break;
		}
		const struct objects_seen *o = &s->seen[i];
		m->fids[m->n_fids++] = (struct fiducial_det){.id = o->id, .x = o->x, .y = o->y, .angle = o->angle,
							     .size_px = o->size_px, .root = -1, .n_nodes = 0};
	}
	return m;
}

const struct objects_seen *objects_stage_seen(const struct objects_stage *s, int *n)
{
	*n = s->n_seen;
	return s->seen;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts the samples in place: stats come at the end of a run. */
void objects_stage_stats(struct objects_stage *s, struct objects_stage_stats *out)
{
	memset(out, 0, sizeof *out);
	out->n_done = s->n_done;
	out->n_failed = s->n_failed;
	int n = s->n_samples;
	if (n == 0)
		return;
	qsort(s->lat_frames, (size_t)n, sizeof *s->lat_frames, cmp_i32);
	qsort(s->keypoints, (size_t)n, sizeof *s->keypoints, cmp_i32);
	qsort(s->work_ns, (size_t)n, sizeof *s->work_ns, cmp_i64);
	qsort(s->sift_ns, (size_t)n, sizeof *s->sift_ns, cmp_i64);
	out->latency_frames_median = s->lat_frames[n / 2];
	out->latency_frames_max = s->lat_frames[n - 1];
	out->keypoints_median = s->keypoints[n / 2];
	out->work_ms_median = (double)s->work_ns[n / 2] / 1e6;
	out->work_ms_max = (double)s->work_ns[n - 1] / 1e6;
	out->sift_ms_median = (double)s->sift_ns[n / 2] / 1e6;
}
