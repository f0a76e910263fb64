/* Asynchronous recognition of untagged objects: see stage.h. */
#include "stage.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"

/* Samples kept for the --stats medians (the latest, in a ring). */
#define STATS_SAMPLES 1024

enum job_state { JOB_IDLE, JOB_BUSY, JOB_DONE };

/* A recognised object's follower, and its pose when the job in flight was
 * submitted (to carry a recognition of that frame to the present). */
struct seen_track {
	struct objects_follow f;
	struct objects_pose at_submit;
	bool held_at_submit;
};

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
	struct seen_track *track; /* beside seen, index for index */
	/* The submitted frame's regions (those off the border), for the
	 * followers of what its recognition finds; valid while then_ok. */
	struct region_tree then;
	int32_t then_cap;
	bool then_ok;
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
	s->track = calloc((size_t)n_lib, sizeof *s->track);
	s->then_cap = cfg->follow ? regions_region_capacity(cfg->width, cfg->height) : 1;
	s->then.regions = calloc((size_t)s->then_cap, sizeof *s->then.regions);
	if (!s->kp || !s->nn || !s->dets || !s->seen || !s->track || !s->then.regions || image_u8_alloc(&s->frame, cfg->width, cfg->height))
		goto fail;
	if (detections_alloc(&s->merged, cfg->max_detections))
		goto fail;
	/* Best effort: an unregistered copy still works, uploaded more slowly. */
	sift_register_buffer(s->sift, s->frame.data, (size_t)s->frame.stride * (size_t)s->frame.height);
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
	free(s->track);
	free(s->then.regions);
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

/* The tree's regions off the border into s->then (none fit: not kept). */
static void keep_regions(struct objects_stage *s, const struct region_tree *tree)
{
	s->then_ok = false;
	if (!s->cfg.follow || !tree || tree->overflow)
		return;
	int32_t n = 0;
	for (int32_t i = 0; i < tree->n_regions; i++) {
		if (tree->regions[i].flags & REGION_BORDER)
			continue;
		if (n == s->then_cap)
			return;
		s->then.regions[n++] = tree->regions[i];
	}
	s->then.n_regions = n;
	s->then.width = tree->width;
	s->then.height = tree->height;
	s->then.overflow = false;
	s->then_ok = true;
}

bool objects_stage_submit(struct objects_stage *s, const struct image_u8 *grey, const struct region_tree *tree,
			  uint64_t frame, int64_t t_ns)
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
	keep_regions(s, tree);
	for (int i = 0; i < s->n_seen; i++) {
		s->track[i].at_submit = s->track[i].f.pose;
		s->track[i].held_at_submit = true;
	}
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

/* The seen object's pose fields from its follower's pose. */
static void seen_from_pose(struct objects_seen *o, const struct objects_follow *f)
{
	const struct objects_pose *p = &f->pose;
	double c[2], s = sqrt(p->a * p->a + p->b * p->b), angle = atan2(p->b, p->a);
	objects_pose_apply(p, (f->width - 1) * 0.5, (f->height - 1) * 0.5, c);
	if (angle < 0)
		angle += 2 * M_PI;
	o->x = (float)c[0];
	o->y = (float)c[1];
	o->angle = (float)angle < (float)(2 * M_PI) ? (float)angle : 0.0f;
	o->scale = (float)s;
	o->size_px = (float)s * (float)(f->width > f->height ? f->width : f->height);
	const double u[4] = {0, f->width - 1, f->width - 1, 0}, v[4] = {0, 0, f->height - 1, f->height - 1};
	for (int k = 0; k < 4; k++) {
		objects_pose_apply(p, u[k], v[k], c);
		o->corners[k][0] = (float)c[0];
		o->corners[k][1] = (float)c[1];
	}
}

static void take_detection(struct objects_stage *s, const struct objects_detection *d)
{
	struct objects_object ob;
	if (objects_library_get(s->cfg.lib, d->index, &ob))
		return;
	int k = 0;
	while (k < s->n_seen && s->seen[k].id != d->id)
		k++;
	const struct objects_pose rec = {.a = d->a, .b = d->b, .tx = d->tx, .ty = d->ty};
	struct seen_track *t = &s->track[k];
	const bool fresh = k == s->n_seen;
	if (fresh) {
		if (s->n_seen >= s->n_lib)
			return;
		s->n_seen++;
		t->held_at_submit = false;
	}
	if (s->cfg.follow && s->then_ok) {
		/* The reference in the recognised frame: the next follow brings it to the present. */
		objects_follow_restart(&t->f, &rec, ob.width, ob.height, &s->then);
	} else if (fresh) {
		objects_follow_start(&t->f, &rec, ob.width, ob.height);
	} else if (s->cfg.follow && t->held_at_submit) {
		/* Recognised in the submitted frame: moved on by what was followed since. */
		struct objects_pose inv, motion, now;
		objects_pose_invert(&t->at_submit, &inv);
		objects_pose_compose(&t->f.pose, &inv, &motion);
		objects_pose_compose(&motion, &rec, &now);
		objects_follow_reset_pose(&t->f, &now);
	} else {
		objects_follow_reset_pose(&t->f, &rec);
	}
	struct objects_seen *o = &s->seen[k];
	o->id = d->id;
	o->index = d->index;
	seen_from_pose(o, &t->f);
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
		s->track[k] = s->track[i];
		s->seen[k++] = s->seen[i];
	}
	s->n_seen = k;
	return changed;
}

bool objects_stage_follow(struct objects_stage *s, const struct region_tree *tree)
{
	if (!s->cfg.follow)
		return false;
	bool changed = false;
	int k = 0;
	for (int i = 0; i < s->n_seen; i++) {
		enum objects_follow_result r = objects_follow_step(&s->track[i].f, tree);
		if (r == OBJECTS_FOLLOW_GONE) {
			changed = true;
			continue;
		}
		if (r == OBJECTS_FOLLOW_MOVED)
			seen_from_pose(&s->seen[i], &s->track[i].f);
		s->track[k] = s->track[i];
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
