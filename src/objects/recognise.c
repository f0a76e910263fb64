/* Matching and geometric verification: see recognise.h. */
#include "recognise.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../core/err.h"

#define PI_F 3.14159265358979f
#define SIZE_TOL 1.6f
#define ANGLE_TOL_DEG 25.0f
#define MIN_PAIR_PX 2.0f
#define REFINE_ROUNDS 3
#define TIGHT_FRACTION 0.4

struct objects_recogniser {
	const struct objects_library *lib;
	struct objects_match_config cfg;
	int max_scene;
	int n_lib, n_obj;
	int *kp_obj;        /* n_lib: object index of each library keypoint */
	struct objects_nearest *nn; /* max_scene: objects_recognise's own matching */
	int *match_scene;   /* max_scene: kept matches, scene keypoint */
	int *match_lib;     /* max_scene: kept matches, library keypoint */
	int n_matches;
	int *obj_start;     /* n_obj + 1: matches of object o are order[obj_start[o] .. obj_start[o+1]) */
	int *order;         /* max_scene */
	uint8_t *inl, *best_inl; /* max_scene each, by position in the object's group */
};

void objects_match_config_default(struct objects_match_config *cfg)
{
	cfg->ratio = 0.8f;
	cfg->min_inliers = 8;
	cfg->inlier_px = 4.0f;
	cfg->min_scale = 0.25f;
	cfg->max_scale = 4.0f;
	cfg->ransac_iterations = 400;
}

void objects_recogniser_destroy(struct objects_recogniser *r)
{
	if (!r)
		return;
	free(r->kp_obj);
	free(r->nn);
	free(r->match_scene);
	free(r->match_lib);
	free(r->obj_start);
	free(r->order);
	free(r->inl);
	free(r->best_inl);
	free(r);
}

struct objects_recogniser *objects_recogniser_create(const struct objects_library *lib,
						     const struct objects_match_config *cfg,
						     int max_scene_keypoints, int *err)
{
	*err = ERR_RANGE;
	if (!lib || !cfg || max_scene_keypoints < 1 || max_scene_keypoints > OBJECTS_MAX_TOTAL ||
	    !(cfg->ratio >= 0.5f && cfg->ratio <= 0.95f) || cfg->min_inliers < 3 || !(cfg->inlier_px > 0) ||
	    !(cfg->min_scale > 0) || !(cfg->max_scale >= cfg->min_scale) || cfg->ransac_iterations < 1)
		return NULL;
	*err = ERR_NOMEM;
	struct objects_recogniser *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->lib = lib;
	r->cfg = *cfg;
	r->max_scene = max_scene_keypoints;
	objects_library_keypoints(lib, &r->n_lib);
	r->n_obj = objects_library_count(lib);
	size_t ms = (size_t)max_scene_keypoints;
	r->kp_obj = malloc(sizeof(int) * (size_t)(r->n_lib > 0 ? r->n_lib : 1));
	r->nn = malloc(sizeof *r->nn * ms);
	r->match_scene = malloc(sizeof(int) * ms);
	r->match_lib = malloc(sizeof(int) * ms);
	r->obj_start = malloc(sizeof(int) * (size_t)(r->n_obj + 2));
	r->order = malloc(sizeof(int) * ms);
	r->inl = malloc(ms);
	r->best_inl = malloc(ms);
	if (!r->kp_obj || !r->nn || !r->match_scene || !r->match_lib || !r->obj_start || !r->order || !r->inl || !r->best_inl) {
		objects_recogniser_destroy(r);
		return NULL;
	}
	for (int o = 0; o < r->n_obj; o++) {
		struct objects_object ob;
		objects_library_get(lib, o, &ob);
		int first = objects_library_first(lib, o);
		for (int k = 0; k < ob.n_keypoints; k++)
			r->kp_obj[first + k] = o;
	}
	*err = 0;
	return r;
}

int objects_recogniser_last_matches(const struct objects_recogniser *r)
{
	return r ? r->n_matches : 0;
}

/* Squared descriptor distance, abandoned (returning a value > limit) once
 * it passes limit: most library keypoints are far from a scene keypoint.
 * Checked every 64 bytes: checking more often costs more than it saves. */
#define CHECK_EVERY 64
#if defined(__SSE2__)
static uint32_t dist2_bounded(const uint8_t *a, const uint8_t *b, uint32_t limit)
{
	const __m128i zero = _mm_setzero_si128();
	uint32_t s = 0;
	for (int half = 0; half < OBJECTS_DESC_LEN; half += CHECK_EVERY) {
		__m128i acc = zero;
		for (int i = half; i < half + CHECK_EVERY; i += 16) {
			__m128i va = _mm_loadu_si128((const __m128i *)(a + i));
			__m128i vb = _mm_loadu_si128((const __m128i *)(b + i));
			__m128i lo = _mm_sub_epi16(_mm_unpacklo_epi8(va, zero), _mm_unpacklo_epi8(vb, zero));
			__m128i hi = _mm_sub_epi16(_mm_unpackhi_epi8(va, zero), _mm_unpackhi_epi8(vb, zero));
			acc = _mm_add_epi32(acc, _mm_add_epi32(_mm_madd_epi16(lo, lo), _mm_madd_epi16(hi, hi)));
		}
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(1, 0, 3, 2)));
		acc = _mm_add_epi32(acc, _mm_shuffle_epi32(acc, _MM_SHUFFLE(2, 3, 0, 1)));
		s += (uint32_t)_mm_cvtsi128_si32(acc);
		if (s > limit)
			return s;
	}
	return s;
}
#else
static uint32_t dist2_bounded(const uint8_t *a, const uint8_t *b, uint32_t limit)
{
	uint32_t s = 0;
	for (int half = 0; half < OBJECTS_DESC_LEN; half += CHECK_EVERY) {
		for (int i = half; i < half + CHECK_EVERY; i++) {
			int d = (int)a[i] - (int)b[i];
			s += (uint32_t)(d * d);
		}
		if (s > limit)
			return s;
	}
	return s;
}
#endif

void objects_nearest_cpu(const struct objects_keypoint *lib, int n_lib, const struct objects_keypoint *scene,
			 int n_scene, struct objects_nearest *out)
{
	for (int s = 0; s < n_scene; s++) {
		uint32_t best = UINT32_MAX, second = UINT32_MAX;
		int best_i = -1;
		for (int l = 0; l < n_lib; l++) {
			uint32_t d = dist2_bounded(scene[s].desc, lib[l].desc, second);
			if (d < best) {
				second = best;
				best = d;
				best_i = l;
			} else if (d < second) {
				second = d;
			}
		}
		out[s] = (struct objects_nearest){.index = best_i, .d1 = best, .d2 = second};
	}
}

/* Lowe's ratio test on the nearest pairs: the kept matches. */
static void ratio_test(struct objects_recogniser *r, const struct objects_nearest *nn, int n_scene)
{
	float r2 = r->cfg.ratio * r->cfg.ratio;
	r->n_matches = 0;
	if (r->n_lib < 2)
		return;
	for (int s = 0; s < n_scene; s++) {
		if (nn[s].index >= 0 && nn[s].index < r->n_lib && nn[s].d2 != UINT32_MAX &&
		    (float)nn[s].d1 < r2 * (float)nn[s].d2) {
			r->match_scene[r->n_matches] = s;
			r->match_lib[r->n_matches] = nn[s].index;
			r->n_matches++;
		}
	}
}

/* Groups the matches by object (counting sort, stable). */
static void group_by_object(struct objects_recogniser *r)
{
	memset(r->obj_start, 0, sizeof(int) * (size_t)(r->n_obj + 2));
	for (int m = 0; m < r->n_matches; m++)
		r->obj_start[r->kp_obj[r->match_lib[m]] + 2]++;
	for (int o = 0; o < r->n_obj; o++)
		r->obj_start[o + 2] += r->obj_start[o + 1];
	for (int m = 0; m < r->n_matches; m++)
		r->order[r->obj_start[r->kp_obj[r->match_lib[m]] + 1]++] = m;
}

struct pose {
	double a, b, tx, ty;
};

static float wrap_deg(float d)
{
	d = fmodf(d, 360.0f);
	if (d > 180.0f)
		d -= 360.0f;
	if (d < -180.0f)
		d += 360.0f;
	return d;
}

/* Marks the inliers of pose among the group's matches; returns their number. */
static int count_inliers(const struct objects_recogniser *r, const struct objects_keypoint *scene,
			 const struct objects_keypoint *lk, const int *grp, int n, const struct pose *ps, uint8_t *mark,
			 double tol_px)
{
	double s = sqrt(ps->a * ps->a + ps->b * ps->b);
	float theta_deg = (float)(atan2(ps->b, ps->a) * 180.0 / M_PI);
	double tol = tol_px * (s > 1.0 ? sqrt(s) : 1.0);
	double tol2 = tol * tol;
	int count = 0;
	for (int i = 0; i < n; i++) {
		const struct objects_keypoint *p = &lk[r->match_lib[grp[i]]];
		const struct objects_keypoint *q = &scene[r->match_scene[grp[i]]];
		double px = ps->a * p->x - ps->b * p->y + ps->tx;
		double py = ps->b * p->x + ps->a * p->y + ps->ty;
		double dx = px - q->x, dy = py - q->y;
		bool in = dx * dx + dy * dy <= tol2;
		if (in) {
			double ratio = q->size / (p->size * s);
			in = ratio <= SIZE_TOL && ratio >= 1.0 / SIZE_TOL;
		}
		if (in)
			in = fabsf(wrap_deg(q->angle_deg - p->angle_deg - theta_deg)) <= ANGLE_TOL_DEG;
		mark[i] = in;
		count += in;
	}
	return count;
}

/* Least-squares similarity through the marked matches. */
static bool fit_pose(const struct objects_recogniser *r, const struct objects_keypoint *scene,
		     const struct objects_keypoint *lk, const int *grp, int n, const uint8_t *mark, struct pose *ps)
{
	double pcx = 0, pcy = 0, qcx = 0, qcy = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		const struct objects_keypoint *p = &lk[r->match_lib[grp[i]]];
		const struct objects_keypoint *q = &scene[r->match_scene[grp[i]]];
		pcx += p->x;
		pcy += p->y;
		qcx += q->x;
		qcy += q->y;
		k++;
	}
	if (k < 2)
		return false;
	pcx /= k;
	pcy /= k;
	qcx /= k;
	qcy /= k;
	double sxx = 0, sxy = 0, norm = 0;
	for (int i = 0; i < n; i++) {
		if (!mark[i])
			continue;
		const struct objects_keypoint *p = &lk[r->match_lib[grp[i]]];
		const struct objects_keypoint *q = &scene[r->match_scene[grp[i]]];
		double px = p->x - pcx, py = p->y - pcy, qx = q->x - qcx, qy = q->y - qcy;
		sxx += px * qx + py * qy;
		sxy += px * qy - py * qx;
		norm += px * px + py * py;
	}
	if (norm < 1e-6)
		return false;
	ps->a = sxx / norm;
	ps->b = sxy / norm;
	ps->tx = qcx - (ps->a * pcx - ps->b * pcy);
	ps->ty = qcy - (ps->b * pcx + ps->a * pcy);
	return true;
}

static bool pose_from_pair(const struct objects_keypoint *p1, const struct objects_keypoint *q1,
			   const struct objects_keypoint *p2, const struct objects_keypoint *q2, struct pose *ps)
{
	double dpx = p2->x - p1->x, dpy = p2->y - p1->y;
	double dqx = q2->x - q1->x, dqy = q2->y - q1->y;
	double n = dpx * dpx + dpy * dpy;
	if (n < MIN_PAIR_PX * MIN_PAIR_PX || dqx * dqx + dqy * dqy < MIN_PAIR_PX * MIN_PAIR_PX)
		return false;
	/* (a + ib) = dq / dp in complex numbers. */
	ps->a = (dqx * dpx + dqy * dpy) / n;
	ps->b = (dqy * dpx - dqx * dpy) / n;
	ps->tx = q1->x - (ps->a * p1->x - ps->b * p1->y);
	ps->ty = q1->y - (ps->b * p1->x + ps->a * p1->y);
	return true;
}

static uint32_t xorshift32(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static bool verify_object(struct objects_recogniser *r, const struct objects_keypoint *scene, int o,
			  struct objects_detection *det)
{
	int n_lib;
	const struct objects_keypoint *lk = objects_library_keypoints(r->lib, &n_lib);
	const int *grp = r->order + r->obj_start[o];
	int n = r->obj_start[o + 1] - r->obj_start[o];
	if (n < r->cfg.min_inliers)
		return false;
	long pairs = (long)n * (n - 1) / 2;
	bool every_pair = pairs <= r->cfg.ransac_iterations;
	long tries = every_pair ? pairs : r->cfg.ransac_iterations;
	uint32_t seed = 0x9e3779b9u ^ (uint32_t)(o * 2654435761u);
	int best = 0;
	struct pose best_pose = {0};
	int i = 0, j = 1;
	for (long t = 0; t < tries; t++) {
		int u, v;
		if (every_pair) {
			u = i;
			v = j;
			if (++j == n) {
				i++;
				j = i + 1;
			}
		} else {
			u = (int)(xorshift32(&seed) % (uint32_t)n);
			v = (int)(xorshift32(&seed) % (uint32_t)(n - 1));
			if (v >= u)
				v++;
		}
		struct pose ps;
		if (!pose_from_pair(&lk[r->match_lib[grp[u]]], &scene[r->match_scene[grp[u]]],
				    &lk[r->match_lib[grp[v]]], &scene[r->match_scene[grp[v]]], &ps))
			continue;
		double s = sqrt(ps.a * ps.a + ps.b * ps.b);
		if (s < r->cfg.min_scale || s > r->cfg.max_scale)
			continue;
		int c = count_inliers(r, scene, lk, grp, n, &ps, r->inl, r->cfg.inlier_px);
		if (c > best) {
			best = c;
			best_pose = ps;
			memcpy(r->best_inl, r->inl, (size_t)n);
		}
	}
	if (best < r->cfg.min_inliers)
		return false;
	struct pose ps = best_pose;
	for (int round = 0; round < REFINE_ROUNDS; round++) {
		struct pose fit;
		if (!fit_pose(r, scene, lk, grp, n, r->best_inl, &fit))
			break;
		int c = count_inliers(r, scene, lk, grp, n, &fit, r->inl, r->cfg.inlier_px);
		if (c < best)
			break;
		ps = fit;
		best = c;
		memcpy(r->best_inl, r->inl, (size_t)n);
	}
	double s = sqrt(ps.a * ps.a + ps.b * ps.b);
	if (best < r->cfg.min_inliers || s < r->cfg.min_scale || s > r->cfg.max_scale)
		return false;
	/* The pose itself from the closest inliers only: the wide tolerance
	 * that finds an object also lets in keypoints a few pixels off (a
	 * feature cut by a cover's edge, a blob that moved its scale). */
	for (int round = 0; round < REFINE_ROUNDS; round++) {
		struct pose fit;
		int c = count_inliers(r, scene, lk, grp, n, &ps, r->inl, r->cfg.inlier_px * TIGHT_FRACTION);
		if (c < r->cfg.min_inliers || !fit_pose(r, scene, lk, grp, n, r->inl, &fit))
			break;
		ps = fit;
	}
	struct objects_object ob;
	objects_library_get(r->lib, o, &ob);
	double cx = (ob.width - 1) * 0.5, cy = (ob.height - 1) * 0.5;
	double angle = atan2(ps.b, ps.a);
	if (angle < 0)
		angle += 2 * M_PI;
	*det = (struct objects_detection){
	    .id = ob.id,
	    .index = o,
	    .x = (float)(ps.a * cx - ps.b * cy + ps.tx),
	    .y = (float)(ps.b * cx + ps.a * cy + ps.ty),
	    .angle = (float)angle,
	    .scale = (float)s,
	    .n_inliers = best,
	    .n_matches = n,
	    .a = (float)ps.a,
	    .b = (float)ps.b,
	    .tx = (float)ps.tx,
	    .ty = (float)ps.ty,
	};
	if (det->angle >= 2 * PI_F)
		det->angle = 0;
	return true;
}

int objects_recognise_nearest(struct objects_recogniser *r, const struct objects_keypoint *scene, int n_scene,
			      const struct objects_nearest *nn, struct objects_detection *out, int cap, int *n_out)
{
	*n_out = 0;
	if (!r || n_scene < 0 || n_scene > r->max_scene || (n_scene > 0 && (!scene || !nn)) || cap < 0)
		return ERR_RANGE;
	ratio_test(r, nn, n_scene);
	group_by_object(r);
	for (int o = 0; o < r->n_obj && *n_out < cap; o++) {
		struct objects_detection d;
		if (verify_object(r, scene, o, &d))
			out[(*n_out)++] = d;
	}
	return 0;
}

int objects_recognise(struct objects_recogniser *r, const struct objects_keypoint *scene, int n_scene,
		      struct objects_detection *out, int cap, int *n_out)
{
	*n_out = 0;
	if (!r || n_scene < 0 || n_scene > r->max_scene || (n_scene > 0 && !scene) || cap < 0)
		return ERR_RANGE;
	int n_lib;
	const struct objects_keypoint *lk = objects_library_keypoints(r->lib, &n_lib);
	objects_nearest_cpu(lk, n_lib, scene, n_scene, r->nn);
	return objects_recognise_nearest(r, scene, n_scene, r->nn, out, cap, n_out);
}
