#include "outline.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PROFILE_X86 1
#include <immintrin.h>
#else
#define PROFILE_X86 0
#endif

#include "../core/err.h"
#include "../core/log.h"
#include "../core/pool.h"
#include "../core/sort.h"

#define PROFILE_STEPS (4 * OUTLINE_PROFILE_PX + 1)
/* A profile's buffer: samples_avx2() stores whole vectors of eight, up to
 * seven floats past the last sample asked for. */
#define PROFILE_BUF (PROFILE_STEPS + 7)
/* Fingertips of one hand at most: the search along its outline stops there. */
#define HAND_MAX_TIPS 16
/* The edge is looked for this far either side of the crack, in half
 * pixels (3.5 px; an integer, so the AVX2 search's sizes are checked at
 * compile time by every compiler): the threshold puts the crack within a
 * pixel or two of the steepest grey. */
#define REFINE_SEARCH_HALF_PX 7

/* dist2() guards against overflow that pixel coordinates never reach, at
 * several times the cost. */
static inline float dist2(float dx, float dy)
{
	return sqrtf(dx * dx + dy * dy);
}

/* What one task works with: the outline it traced last and that outline's
 * refinement, and a detections list of its own (fingers, contours,
 * points) that the units it runs write into, copied into the frame's in
 * order afterwards. */
struct tracer {
	const struct outline_config *cfg; /* the stage's */
	bool avx2;                        /* grey profiles eight samples at a time */
	/* A trace paints its region's pixels with a value of its own, stamp,
	 * and is never cleared: any other value is outside. Only after 255
	 * traces is the mask cleared, as far as they reached (the first
	 * mask_used bytes: a trace uses the start of the mask). */
	uint8_t *mask;
	uint8_t stamp;
	size_t mask_used;
	struct outline_point *pts;
	float *sharp;
	float *select;   /* median scratch */
	float *tip_sharp;
	float *offset;
	int *keep;
	int *scratch;    /* 2 x OUTLINE_MAX_TRACE */
	float *fscratch; /* 2 x OUTLINE_MAX_TRACE */
	float *arc;      /* cumulative arc length, the outline twice (2 x OUTLINE_MAX_TRACE + 1) */
	int *steps;      /* 2 x OUTLINE_MAX_TRACE: points a quarter circle back and on */
	/* The outline traced last (o->pts, raw cracks) is refined point by
	 * point on demand: have[j] says point j's normal (nrm), offset and
	 * sharpness are known. */
	int n;
	float sign;
	uint8_t *have;
	float *nrm;                /* 2 x OUTLINE_MAX_TRACE */
	struct outline_point *sm;  /* hands: the outline refined and thinned */
	int n_sm;                  /* its points; 0 when the outline traced last has none */
	struct outline_point *ref; /* hands: a fingertip's refined outline */
	struct outline_point *cand; /* contours: the cracks Douglas-Peucker chooses from */
	int *cand_at;               /* their indices in o->pts */
	struct detections out;      /* the output of the units this task runs */
};

/* A piece of a frame's work that depends on no other: one matcher
 * finger's outline and sharpness, one bright region's hand, one blob's
 * contours. */
enum unit_kind { UNIT_FINGER, UNIT_HAND, UNIT_BLOB };

struct unit {
	uint8_t kind;
	bool ran;      /* done by a task, its output in that task's list */
	uint8_t task;
	int32_t index; /* finger or blob index in the frame's detections; a hand's region */
	int tips;      /* a hand's fingertips */
	int32_t c0, c1, f0, f1; /* its contours and fingers in the task's list */
};

/* A unit's place in the order the tasks take them: its position in the
 * frame's units and, for a hand, its region's area (the longer outline,
 * the longer trace and profiles), larger first. */
struct unit_key {
	int32_t area;
	int32_t at;
};

/* Units a frame runs in parallel; beyond them they run at the merge, one
 * after another. */
#define OUTLINE_MAX_UNITS 1024
/* Fingertips a task's list holds: every hand's of a frame. */
#define TASK_FINGERS (OUTLINE_MAX_HANDS * HAND_MAX_TIPS)

struct outline {
	struct outline_config cfg;
	int max_w, max_h;
	int threads;            /* asked for */
	int n_tasks;            /* tracers made: 1, or threads once outline_needed() */
	struct tracer *t[OUTLINE_MAX_TASKS];
	struct pool *pool;      /* n_tasks - 1 workers */
	struct unit *units;     /* OUTLINE_MAX_UNITS */
	int n_units;
	/* The order the tasks take the units in (positions in units): the
	 * largest hands first, so the task that starts first gets the one
	 * that takes longest; the merge's order is the units' own. */
	struct unit_key *order; /* OUTLINE_MAX_UNITS */
	/* A task takes units[next_unit] while next_unit < published and
	 * stops when none is left: outline_begin() publishes the hands while
	 * the matcher is still to find the fingers and blobs. */
	atomic_int published;
	atomic_int next_unit;
	bool begun;       /* outline_begin() started the workers on the hands */
	int n_hand_units; /* the units it published: units[0..n_hand_units) */
	/* The frame the tasks work on. */
	const struct region_tree *tree;
	const struct image_u8 *grey;
	struct detections *det;
};

bool outline_needed(const struct outline_config *cfg)
{
	return cfg && (cfg->contours || cfg->touch_sharpness > 0 || (cfg->hands && cfg->finger_size_px > 0));
}

static int config_check(const struct outline_config *cfg)
{
	if (!cfg || !(cfg->tolerance_px > 0) || cfg->max_points < 4 || cfg->max_contours < 0 ||
	    !(cfg->touch_sharpness >= 0) || !(cfg->finger_size_px >= 0))
		return ERR_CONFIG;
	return 0;
}

bool outline_have_avx2(void)
{
#if PROFILE_X86
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

static void tracer_destroy(struct tracer *o)
{
	if (!o)
		return;
	free(o->mask);
	free(o->pts);
	free(o->sharp);
	free(o->select);
	free(o->tip_sharp);
	free(o->offset);
	free(o->keep);
	free(o->scratch);
	free(o->fscratch);
	free(o->arc);
	free(o->steps);
	free(o->have);
	free(o->nrm);
	free(o->sm);
	free(o->ref);
	free(o->cand);
	free(o->cand_at);
	detections_free(&o->out);
	free(o);
}

static struct tracer *tracer_create(const struct outline_config *cfg, int max_w, int max_h)
{
	struct tracer *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->cfg = cfg;
	o->avx2 = outline_have_avx2();
	o->mask = calloc((size_t)(max_w + 2) * (size_t)(max_h + 2) + OUTLINE_MASK_SLACK, 1);
	o->pts = malloc(OUTLINE_MAX_TRACE * sizeof *o->pts);
	o->sharp = malloc(OUTLINE_MAX_TRACE * sizeof *o->sharp);
	o->select = malloc(OUTLINE_MAX_TRACE * sizeof *o->select);
	o->tip_sharp = malloc(OUTLINE_MAX_TRACE * sizeof *o->tip_sharp);
	o->offset = malloc(OUTLINE_MAX_TRACE * sizeof *o->offset);
	o->keep = malloc(OUTLINE_MAX_TRACE * sizeof *o->keep);
	o->scratch = malloc(2 * OUTLINE_MAX_TRACE * sizeof *o->scratch);
	o->fscratch = malloc(2 * OUTLINE_MAX_TRACE * sizeof *o->fscratch);
	o->arc = malloc((2 * OUTLINE_MAX_TRACE + 1) * sizeof *o->arc);
	o->steps = malloc(2 * OUTLINE_MAX_TRACE * sizeof *o->steps);
	o->have = malloc(OUTLINE_MAX_TRACE);
	o->nrm = malloc(2 * OUTLINE_MAX_TRACE * sizeof *o->nrm);
	o->sm = malloc(OUTLINE_MAX_TRACE * sizeof *o->sm);
	o->ref = malloc(OUTLINE_MAX_TRACE * sizeof *o->ref);
	o->cand = malloc(OUTLINE_MAX_TRACE * sizeof *o->cand);
	o->cand_at = malloc(OUTLINE_MAX_TRACE * sizeof *o->cand_at);
	if (!o->mask || !o->pts || !o->sharp || !o->select || !o->tip_sharp || !o->offset || !o->keep ||
	    !o->scratch || !o->fscratch || !o->arc || !o->steps || !o->have || !o->nrm || !o->sm || !o->ref ||
	    !o->cand || !o->cand_at) {
		tracer_destroy(o);
		return NULL;
	}
	return o;
}

/* A task's output list, as large as the frame's outline lists: a unit
 * that finds it full runs again at the merge. */
static int tracer_out_size(struct tracer *o)
{
	const struct outline_config *c = o->cfg;
	if (o->out.fingers && o->out.cap_contours >= c->max_contours &&
	    o->out.cap_points >= (int32_t)c->max_contours * c->max_points)
		return 0;
	detections_free(&o->out);
	int err = detections_alloc(&o->out, TASK_FINGERS);
	if (!err)
		err = detections_alloc_outlines(&o->out, c->max_contours, c->max_points);
	if (err)
		detections_free(&o->out);
	return err;
}

/* The other tasks' tracers and the pool, once outlines are needed (a few
 * MB each); where that fails the stage runs on the calling thread alone,
 * as it does when one thread is asked for. */
static void tasks_sync(struct outline *o)
{
	if (o->threads <= 1 || !outline_needed(&o->cfg))
		return;
	bool ok = true;
	for (int i = o->n_tasks; i < o->threads && ok; i++) {
		o->t[i] = tracer_create(&o->cfg, o->max_w, o->max_h);
		ok = o->t[i] != NULL;
		if (ok)
			o->n_tasks = i + 1;
	}
	for (int i = 0; i < o->n_tasks && ok; i++)
		ok = tracer_out_size(o->t[i]) == 0;
	if (ok && !o->units)
		ok = (o->units = malloc(OUTLINE_MAX_UNITS * sizeof *o->units)) != NULL;
	if (ok && !o->order)
		ok = (o->order = malloc(OUTLINE_MAX_UNITS * sizeof *o->order)) != NULL;
	if (ok && !o->pool)
		ok = (o->pool = pool_create(o->n_tasks - 1, NULL)) != NULL;
	if (!ok) {
		log_warn("outline: no memory or thread for %d tasks; outlines run on the pipeline thread", o->threads);
		pool_destroy(o->pool);
		o->pool = NULL;
		for (int i = 1; i < o->n_tasks; i++)
			tracer_destroy(o->t[i]);
		o->n_tasks = 1;
		o->threads = 1;
	}
}

struct outline *outline_create(const struct outline_config *cfg, int max_w, int max_h, int threads, int *err)
{
	int e_ = config_check(cfg);
	struct outline *o = NULL;
	if (e_ || max_w <= 0 || max_h <= 0 || threads < 1) {
		e_ = ERR_CONFIG;
		goto fail;
	}
	e_ = ERR_NOMEM;
	o = calloc(1, sizeof *o);
	if (!o)
		goto fail;
	o->cfg = *cfg;
	o->max_w = max_w;
	o->max_h = max_h;
	o->threads = threads < OUTLINE_MAX_TASKS ? threads : OUTLINE_MAX_TASKS;
	o->t[0] = tracer_create(&o->cfg, max_w, max_h);
	if (!o->t[0])
		goto fail;
	o->n_tasks = 1;
	tasks_sync(o);
	return o;
fail:
	outline_destroy(o);
	if (err)
		*err = e_;
	return NULL;
}

void outline_destroy(struct outline *o)
{
	if (!o)
		return;
	outline_cancel(o);
	pool_destroy(o->pool);
	for (int i = 0; i < o->n_tasks; i++)
		tracer_destroy(o->t[i]);
	free(o->units);
	free(o->order);
	free(o);
}

int outline_set_config(struct outline *o, const struct outline_config *cfg)
{
	if (!o || config_check(cfg))
		return ERR_CONFIG;
	outline_cancel(o);
	o->cfg = *cfg;
	tasks_sync(o);
	return 0;
}

/* ---- 1. trace ------------------------------------------------------------------------ */

/* Headings: 0 east (+x), 1 south (+y), 2 west, 3 north; y grows downwards,
 * so turning right is +1. */
static const int DX[4] = {1, 0, -1, 0}, DY[4] = {0, 1, 0, -1};

/* Sets region r's runs to value (not 0) in the mask of its bounding box
 * plus a one-pixel frame; returns the first run's x on the top row, -1
 * when there is none. */
static int paint(const struct region_tree *t, int32_t r, uint8_t *mask, uint8_t value)
{
	const struct region *g = &t->regions[r];
	const int bw = g->x1 - g->x0 + 3;
	int sx = -1;
	for (int y = g->y0; y <= g->y1; y++) {
		uint8_t *row = mask + (size_t)(y - g->y0 + 1) * (size_t)bw + 1 - g->x0;
		for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++) {
			const struct run *u = &t->runs[k];
			if (u->region != r)
				continue;
			memset(row + u->x, value, (size_t)u->len);
			if (sx < 0 && y == g->y0)
				sx = u->x;
		}
	}
	return sx;
}

#if PROFILE_X86
_Static_assert(sizeof(struct run) == 16 && offsetof(struct run, region) == 8, "paint_avx2: a run is four ints");

/* paint() for the walk, with AVX2 (the mask has OUTLINE_MASK_SLACK bytes
 * past its end): a hand's box spans hundreds of rows of a dozen runs, one
 * or two of them its own, so the runs of all its rows are sifted as one
 * list, eight at a time by their regions, the row found from each run of
 * r (the rows' run lists follow one another); each run is filled by
 * whole vectors and the 32 bytes after it set to 0. The bytes that end
 * in the region's value are exactly paint()'s; the others only lose
 * their old value for 0, which no trace paints with, and every later
 * run lies after them (to the right, or a row below), so nothing a run
 * paints is undone. */
__attribute__((target("avx2"))) static int paint_avx2(const struct region_tree *t, int32_t r, uint8_t *mask,
						      uint8_t value)
{
	const struct region *g = &t->regions[r];
	const ptrdiff_t bw = g->x1 - g->x0 + 3;
	const struct run *runs = t->runs;
	const int32_t *first = t->row_first_run, end = first[g->y1 + 1];
	int sx = -1;
	for (int32_t k = first[g->y0]; k < first[g->y0 + 1] && sx < 0; k++)
		sx = runs[k].region == r ? runs[k].x : -1;
	const __m256i vr = _mm256_set1_epi32(r), vv = _mm256_set1_epi8((char)value), zero = _mm256_setzero_si256();
	/* after the packs, the 4-byte groups of runs k, k + 2, k + 4, k + 6,
	 * k + 1, k + 3, k + 5, k + 7: back in order */
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	int y = g->y0;
	uint8_t *row = mask + bw + 1 - g->x0;
	for (int32_t k = first[g->y0]; k < end; k += 8) {
		/* bit 4 l + 2 set where run k + l is r's (its third int) */
		unsigned m = 0;
		if (k + 8 <= end) {
			const __m256i *v = (const __m256i *)(const void *)&runs[k];
			const __m256i e01 = _mm256_packs_epi32(_mm256_cmpeq_epi32(_mm256_loadu_si256(v), vr),
							       _mm256_cmpeq_epi32(_mm256_loadu_si256(v + 1), vr));
			const __m256i e23 = _mm256_packs_epi32(_mm256_cmpeq_epi32(_mm256_loadu_si256(v + 2), vr),
							       _mm256_cmpeq_epi32(_mm256_loadu_si256(v + 3), vr));
			const __m256i e = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(e01, e23), order);
			m = (unsigned)_mm256_movemask_epi8(e) & 0x44444444u;
		} else {
			for (int l = 0; k + l < end; l++)
				m |= runs[k + l].region == r ? 4u << (4 * l) : 0;
		}
		for (; m; m &= m - 1) {
			const int32_t j = k + (int32_t)(__builtin_ctz(m) >> 2);
			for (; j >= first[y + 1]; y++)
				row += bw;
			const struct run *u = &runs[j];
			uint8_t *d = row + u->x;
			for (int32_t i = 0; i < u->len; i += 32)
				_mm256_storeu_si256((__m256i *)(void *)(d + i), vv);
			_mm256_storeu_si256((__m256i *)(void *)(d + u->len), zero);
		}
	}
	return sx;
}
#endif

/* The crack walk of outline_trace() over a mask where the region's pixels
 * are those of value v. */
static int walk(const struct region_tree *t, int32_t r, int sx, const uint8_t *mask, uint8_t v,
		struct outline_point *pts, int cap);

int outline_trace(const struct region_tree *t, int32_t r, uint8_t *mask, struct outline_point *pts, int cap)
{
	const struct region *g = &t->regions[r];
	memset(mask, 0, (size_t)(g->x1 - g->x0 + 3) * (size_t)(g->y1 - g->y0 + 3));
	int sx = paint(t, r, mask, 1);
	return sx < 0 ? 0 : walk(t, r, sx, mask, 1, pts, cap);
}

static int walk(const struct region_tree *t, int32_t r, int sx, const uint8_t *mask, uint8_t v,
		struct outline_point *pts, int cap)
{
	const struct region *g = &t->regions[r];
	const ptrdiff_t bw = g->x1 - g->x0 + 3;
	/* The walk is at a corner, the top-left corner of mask pixel p (mask
	 * coordinates are image ones plus one, less the box's origin), with
	 * the heading it arrived on; each heading is a state of its own, so
	 * every offset and constant below is known where it is used. */
	const uint8_t *const p0 = mask + bw + (sx - g->x0 + 1);
	const uint8_t *p = p0;
	/* The corner's image coordinates (pixel centre - 0.5 each way): whole
	 * numbers, and every midpoint a multiple of a half, so the sums are
	 * exact; the coordinate a crack does not move along is taken as it
	 * is, not plus 0 (which the compiler must keep: it turns -0 into 0,
	 * though no coordinate here is ever 0). */
	float cx = (float)sx - 0.5f, cy = (float)g->y0 - 0.5f;
	int n = 0;
	/* The crack from the corner along heading D: its midpoint and its
	 * outward normal (the heading turned left), then the next corner;
	 * arriving at the start corner closes the loop (only the start pixel
	 * touches it, so the walk passes it once). */
#define CRACK(D)                                                                                                   \
	do {                                                                                                       \
		if (n >= cap)                                                                                      \
			return -1;                                                                                 \
		pts[n++] = (struct outline_point){DX[D] ? cx + 0.5f * (float)DX[D] : cx,                          \
						  DY[D] ? cy + 0.5f * (float)DY[D] : cy, (float)DX[((D) + 3) & 3], \
						  (float)DY[((D) + 3) & 3]};                                       \
		p += DX[D] + DY[D] * bw;                                                                           \
		if (DX[D])                                                                                         \
			cx += (float)DX[D];                                                                        \
		else                                                                                               \
			cy += (float)DY[D];                                                                        \
		if (p == p0)                                                                                       \
			return n;                                                                                  \
		goto heading##D;                                                                                   \
	} while (0)
	/* Arrived heading D: turn right (to heading DR) where the pixel ahead
	 * on the right (offset R) is not the region's, else left (DL) where
	 * the one ahead on the left (L) is, else go straight on. */
#define HEADING(D, DR, DL, R, L)                                                                                   \
	heading##D:                                                                                                \
	if (p[R] != v)                                                                                             \
		CRACK(DR);                                                                                         \
	if (p[L] == v)                                                                                             \
		CRACK(DL);                                                                                         \
	CRACK(D)
	HEADING(0, 1, 3, 0, -bw);
	HEADING(1, 2, 0, -1, 0);
	HEADING(2, 3, 1, -bw - 1, -1);
	HEADING(3, 0, 2, -bw, -bw - 1);
#undef HEADING
#undef CRACK
}

/* ---- 2, 3. refine and sharpness ------------------------------------------------------- */

static float grey_at(const struct image_u8 *g, float x, float y)
{
	if (x < 0)
		x = 0;
	if (y < 0)
		y = 0;
	if (x > (float)(g->width - 1))
		x = (float)(g->width - 1);
	if (y > (float)(g->height - 1))
		y = (float)(g->height - 1);
	int ix = (int)x, iy = (int)y;
	if (ix > g->width - 2)
		ix = g->width - 2 < 0 ? 0 : g->width - 2;
	if (iy > g->height - 2)
		iy = g->height - 2 < 0 ? 0 : g->height - 2;
	float fx = x - (float)ix, fy = y - (float)iy;
	int ix1 = g->width > 1 ? ix + 1 : ix, iy1 = g->height > 1 ? iy + 1 : iy;
	const uint8_t *r0 = image_u8_row(g, iy), *r1 = image_u8_row(g, iy1);
	float a = (float)r0[ix] + fx * (float)(r0[ix1] - r0[ix]);
	float b = (float)r1[ix] + fx * (float)(r1[ix1] - r1[ix]);
	return a + fy * (b - a);
}

/* Median of a few values (insertion sort in place). */
static float median_small(float *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			float t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

static inline float min2(float a, float b)
{
	return a < b ? a : b;
}

static inline float max2(float a, float b)
{
	return a > b ? a : b;
}

/* median_small() of v[0..5), by minima and maxima: the median of three
 * of v[4] and the larger of the pairs' minima and the smaller of their
 * maxima. The same value (offsets are never NaN, nor -0, so equal values
 * are the same bits). */
static inline float median5(const float *v)
{
	const float lo = max2(min2(v[0], v[1]), min2(v[2], v[3]));
	const float hi = min2(max2(v[0], v[1]), max2(v[2], v[3]));
	return max2(min2(v[4], lo), min2(max2(v[4], lo), hi));
}

/* grey_at() for a point known to lie in [0, w - 1) x [0, h - 1). */
static inline float grey_at_inside(const struct image_u8 *g, float x, float y)
{
	int ix = (int)x, iy = (int)y;
	float fx = x - (float)ix, fy = y - (float)iy;
	const uint8_t *r0 = g->data + (size_t)iy * (size_t)g->stride + ix, *r1 = r0 + g->stride;
	float a = (float)r0[0] + fx * (float)(r0[1] - r0[0]);
	float b = (float)r1[0] + fx * (float)(r1[1] - r1[0]);
	return a + fy * (b - a);
}

/* The outward normal at point i: across the tangent through the points
 * two cracks either side, or the crack's own where that is degenerate or
 * would point inwards. Reads positions only. */
static void point_normal(const struct outline_point *pts, int n, int i, float *nx, float *ny)
{
	const struct outline_point *a = &pts[i >= 2 ? i - 2 : i + n - 2], *b = &pts[i + 2 < n ? i + 2 : i + 2 - n];
	float tx = b->x - a->x, ty = b->y - a->y;
	float len = dist2(tx, ty);
	*nx = pts[i].nx;
	*ny = pts[i].ny;
	/* Region on the right of the walk: the outward normal is the tangent
	 * turned left, (ty, -tx). */
	if (len > 0) {
		float qx = ty / len, qy = -tx / len;
		if (qx * pts[i].nx + qy * pts[i].ny > 0) {
			*nx = qx;
			*ny = qy;
		}
	}
}

/* Where the profile through (px, py) along the normal lies: PROFILE_CLAMPED
 * (partly outside the frame, its samples clamped), PROFILE_INSIDE (no
 * sample needs clamping), PROFILE_ROOMY (inside, and every sample at
 * least two rows above the last: samples_avx2() reads four bytes a pixel
 * row, up to two past the pixel pair it needs, which stay inside the
 * image's memory when the row below is not its last). */
enum profile_room { PROFILE_CLAMPED, PROFILE_INSIDE, PROFILE_ROOMY };

static inline enum profile_room profile_room(const struct image_u8 *grey, float px, float py, float nx, float ny)
{
	const float r = (float)OUTLINE_PROFILE_PX;
	const float ex0 = px - r * nx, ey0 = py - r * ny, ex1 = px + r * nx, ey1 = py + r * ny;
	const float wl = (float)(grey->width - 1), hl = (float)(grey->height - 1);
	if (!(ex0 >= 0 && ex1 >= 0 && ey0 >= 0 && ey1 >= 0 && ex0 < wl && ex1 < wl && ey0 < hl && ey1 < hl))
		return PROFILE_CLAMPED;
	return ey0 < hl - 1 && ey1 < hl - 1 ? PROFILE_ROOMY : PROFILE_INSIDE;
}

/* prof[k] for k in [k0, k1] (s = (k - 2 OUTLINE_PROFILE_PX) / 2 along the
 * normal), as grey_at_inside() or grey_at() samples them. */
static void samples_scalar(const struct image_u8 *grey, bool inside, float px, float py, float nx, float ny, int k0,
			   int k1, float *prof)
{
	for (int k = k0; k <= k1; k++) {
		float s = 0.5f * (float)(k - 2 * OUTLINE_PROFILE_PX);
		float x = px + s * nx, y = py + s * ny;
		prof[k] = inside ? grey_at_inside(grey, x, y) : grey_at(grey, x, y);
	}
}

#if PROFILE_X86
/* grey_at_inside() at eight points inside the frame (and above its last
 * row): the same operations on the same floats in the same order
 * (separate multiplies and adds: the target has no fused multiply-add),
 * so the same bits. stride and ff: the image's stride and 0xff in every
 * lane. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m256
bilinear_avx2(const struct image_u8 *grey, __m256i stride, __m256i ff, __m256 x, __m256 y)
{
	const int *row0 = (const int *)(const void *)grey->data;
	const int *row1 = (const int *)(const void *)(grey->data + grey->stride);
	const __m256i ix = _mm256_cvttps_epi32(x), iy = _mm256_cvttps_epi32(y);
	const __m256 fx = _mm256_sub_ps(x, _mm256_cvtepi32_ps(ix)), fy = _mm256_sub_ps(y, _mm256_cvtepi32_ps(iy));
	const __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(iy, stride), ix);
	const __m256i w0 = _mm256_i32gather_epi32(row0, at, 1), w1 = _mm256_i32gather_epi32(row1, at, 1);
	const __m256 a0 = _mm256_cvtepi32_ps(_mm256_and_si256(w0, ff));
	const __m256 a1 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w0, 8), ff));
	const __m256 b0 = _mm256_cvtepi32_ps(_mm256_and_si256(w1, ff));
	const __m256 b1 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w1, 8), ff));
	const __m256 a = _mm256_add_ps(a0, _mm256_mul_ps(fx, _mm256_sub_ps(a1, a0)));
	const __m256 b = _mm256_add_ps(b0, _mm256_mul_ps(fx, _mm256_sub_ps(b1, b0)));
	return _mm256_add_ps(a, _mm256_mul_ps(fy, _mm256_sub_ps(b, a)));
}

/* samples_scalar() of a PROFILE_ROOMY profile eight samples at a time
 * (bilinear_avx2(): the same bits). Each vector is stored whole: prof[k1 +
 * 1 .. k1 + 7] may be written too (k1's sample again), so prof holds
 * PROFILE_BUF floats. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
samples_avx2(const struct image_u8 *grey, float px, float py, float nx, float ny, int k0, int k1, float *prof)
{
	const __m256 vpx = _mm256_set1_ps(px), vpy = _mm256_set1_ps(py), vnx = _mm256_set1_ps(nx),
		     vny = _mm256_set1_ps(ny), half = _mm256_set1_ps(0.5f);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), last = _mm256_set1_epi32(k1),
		      mid = _mm256_set1_epi32(2 * OUTLINE_PROFILE_PX), stride = _mm256_set1_epi32(grey->stride),
		      ff = _mm256_set1_epi32(0xff);
	for (int k = k0; k <= k1; k += 8) {
		/* lanes past k1 repeat k1's sample, which lies on the profile */
		const __m256i kk = _mm256_min_epi32(_mm256_add_epi32(_mm256_set1_epi32(k), lane), last);
		const __m256 sv = _mm256_mul_ps(half, _mm256_cvtepi32_ps(_mm256_sub_epi32(kk, mid)));
		const __m256 x = _mm256_add_ps(vpx, _mm256_mul_ps(sv, vnx)), y = _mm256_add_ps(vpy, _mm256_mul_ps(sv, vny));
		_mm256_storeu_ps(prof + k, bilinear_avx2(grey, stride, ff, x, y));
	}
}
#endif

/* Where the steepest step is looked for: the derivative at sample k
 * (bright side k - 1 minus dark side k + 1) for k in [STEEP_K0, STEEP_K1],
 * within REFINE_SEARCH_HALF_PX half pixels of the crack (sample 2
 * OUTLINE_PROFILE_PX). */
#define STEEP_K0 (2 * OUTLINE_PROFILE_PX - REFINE_SEARCH_HALF_PX)
#define STEEP_K1 (2 * OUTLINE_PROFILE_PX + REFINE_SEARCH_HALF_PX)
/* Half-pixel samples where the edge is looked for; beyond them the
 * profile is read at whole pixels (they only feed the range). */
#define PROFILE_NEAR0 (STEEP_K0 - 2)
#define PROFILE_NEAR1 (STEEP_K1 + 2)
/* The samples the search and its parabola read (an offset alone needs no
 * more). */
#define STEEP_S0 (STEEP_K0 - 1)
#define STEEP_S1 (STEEP_K1 + 1)

/* The first k in [STEEP_K0, STEEP_K1] where sign * (prof[k - 1] -
 * prof[k + 1]) is largest, and that value in *dbest; -1 when none is
 * above 0. */
static inline int steepest_scalar(const float *prof, float sign, float *dbest)
{
	int best = -1;
	float d = 0;
	for (int k = STEEP_K0; k <= STEEP_K1; k++) {
		float dk = sign * (prof[k - 1] - prof[k + 1]);
		if (dk > d) {
			d = dk;
			best = k;
		}
	}
	*dbest = d;
	return best;
}

/* The steepest step of a profile (half-pixel samples, the crack at
 * 2 * OUTLINE_PROFILE_PX) within REFINE_SEARCH_HALF_PX half pixels of the
 * crack, the way sign says the grey falls, from its sample best and
 * derivative dbest (steepest_scalar()'s): its step (grey levels a pixel)
 * and its offset along the normal (px), refined by a parabola through its
 * neighbours; false when no sample steps that way (best < 0). */
static inline bool steepest_refine(const float *prof, float sign, int best, float dbest, float *step,
				   float *offset)
{
	if (best < 0)
		return false;
	/* the parabola only inside the search: it reads samples
	 * [STEEP_K0 - 1, STEEP_K1 + 1] alone, as the search does */
	float off = 0;
	if (best > STEEP_K0 && best < STEEP_K1) {
		const float dm = sign * (prof[best - 2] - prof[best]);
		const float dp = sign * (prof[best] - prof[best + 2]);
		const float den = dm - 2 * dbest + dp;
		if (den < 0)
			off = 0.5f * (dm - dp) / den;
	}
	*step = dbest;
	*offset = 0.5f * ((float)(best - 2 * OUTLINE_PROFILE_PX) + off);
	return true;
}

/* The range of a whole profile takes every sample in [PROFILE_NEAR0,
 * PROFILE_NEAR1] and every other one beyond (whole pixels from the
 * search); these are the ones beyond, into *lo and *hi. Minimum and
 * maximum are exact, so any order gives the same values. */
static inline void range_far(const float *prof, float *lo, float *hi)
{
	float l = *lo, h = *hi;
	for (int k = PROFILE_NEAR0 - 2; k >= 0; k -= 2) {
		l = min2(prof[k], l);
		h = max2(prof[k], h);
	}
	for (int k = PROFILE_NEAR1 + 2; k < PROFILE_STEPS; k += 2) {
		l = min2(prof[k], l);
		h = max2(prof[k], h);
	}
	*lo = l;
	*hi = h;
}

/* A whole profile's offset and sharpness from its steepest step (found:
 * there is one) and its range: left as they are where there is no step
 * or no range. */
static inline void edge_result(bool found, float step, float off, float lo, float hi, float *offset, float *sharpness)
{
	if (!found || hi - lo <= 0)
		return;
	*offset = off;
	*sharpness = step / (hi - lo);
}

#if PROFILE_X86
_Static_assert(STEEP_K1 - STEEP_K0 + 1 > 8 && STEEP_K1 - STEEP_K0 + 1 <= 16, "steepest_avx2: two vectors");
_Static_assert(STEEP_S1 - STEEP_S0 == 16, "offset_avx2: two vectors and one sample");
_Static_assert(PROFILE_NEAR1 - PROFILE_NEAR0 + 1 >= 8, "range_avx2: whole vectors");

/* steepest_scalar() eight derivatives at a time: the same subtraction and
 * multiply for each, so the same values, and of the largest the first. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) int
steepest_avx2(const float *prof, float sign, float *dbest)
{
	const __m256 s = _mm256_set1_ps(sign);
	const __m256 d0 = _mm256_mul_ps(s, _mm256_sub_ps(_mm256_loadu_ps(prof + STEEP_K0 - 1),
							 _mm256_loadu_ps(prof + STEEP_K0 + 1)));
	__m256 d1 = _mm256_mul_ps(s, _mm256_sub_ps(_mm256_loadu_ps(prof + STEEP_K0 + 7),
						   _mm256_loadu_ps(prof + STEEP_K0 + 9)));
	/* the second vector's lanes past STEEP_K1 read past the search: 0,
	 * which is never chosen */
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	d1 = _mm256_and_ps(d1, _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(STEEP_K1 - STEEP_K0 - 7), lane)));
	__m256 m = _mm256_max_ps(d0, d1);
	m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
	m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
	m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
	const float d = _mm256_cvtss_f32(m);
	*dbest = d;
	if (!(d > 0))
		return -1;
	const unsigned at = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(d0, m, _CMP_EQ_OQ)) |
			    (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(d1, m, _CMP_EQ_OQ)) << 8;
	return STEEP_K0 + __builtin_ctz(at);
}

/* The minimum and maximum of prof[PROFILE_NEAR0 .. PROFILE_NEAR1] into
 * *lo and *hi (the last vector overlaps the one before). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
range_avx2(const float *prof, float *lo, float *hi)
{
	__m256 l = _mm256_loadu_ps(prof + PROFILE_NEAR1 - 7), h = l;
	for (int k = PROFILE_NEAR0; k < PROFILE_NEAR1 - 7; k += 8) {
		const __m256 v = _mm256_loadu_ps(prof + k);
		l = _mm256_min_ps(l, v);
		h = _mm256_max_ps(h, v);
	}
	l = _mm256_min_ps(l, _mm256_permute2f128_ps(l, l, 1));
	h = _mm256_max_ps(h, _mm256_permute2f128_ps(h, h, 1));
	l = _mm256_min_ps(l, _mm256_shuffle_ps(l, l, _MM_SHUFFLE(1, 0, 3, 2)));
	h = _mm256_max_ps(h, _mm256_shuffle_ps(h, h, _MM_SHUFFLE(1, 0, 3, 2)));
	l = _mm256_min_ps(l, _mm256_shuffle_ps(l, l, _MM_SHUFFLE(2, 3, 0, 1)));
	h = _mm256_max_ps(h, _mm256_shuffle_ps(h, h, _MM_SHUFFLE(2, 3, 0, 1)));
	*lo = _mm256_cvtss_f32(l);
	*hi = _mm256_cvtss_f32(h);
}

/* profile_edge() and profile_offset() of a PROFILE_ROOMY profile with
 * AVX2: the samples, derivatives and range eight at a time, each in one
 * function. */
__attribute__((target("avx2"))) static void edge_avx2(const struct image_u8 *grey, float sign, float px, float py,
						       float nx, float ny, float *offset, float *sharpness)
{
	float prof[PROFILE_BUF], lo, hi, dbest, step = 0, off = 0;
	samples_avx2(grey, px, py, nx, ny, 0, PROFILE_STEPS - 1, prof);
	range_avx2(prof, &lo, &hi);
	range_far(prof, &lo, &hi);
	const int best = steepest_avx2(prof, sign, &dbest);
	const bool found = steepest_refine(prof, sign, best, dbest, &step, &off);
	edge_result(found, step, off, lo, hi, offset, sharpness);
}

__attribute__((target("avx2"))) static float offset_avx2(const struct image_u8 *grey, float sign, float px, float py,
							  float nx, float ny)
{
	float prof[PROFILE_BUF], dbest, step, off;
	/* Two whole vectors and the last sample alone, not three vectors;
	 * the sample after it is read by steepest_avx2()'s masked lane
	 * only. */
	samples_avx2(grey, px, py, nx, ny, STEEP_S0, STEEP_S1 - 1, prof);
	const float s1 = 0.5f * (float)(STEEP_S1 - 2 * OUTLINE_PROFILE_PX);
	prof[STEEP_S1] = grey_at_inside(grey, px + s1 * nx, py + s1 * ny);
	prof[STEEP_S1 + 1] = 0;
	const int best = steepest_avx2(prof, sign, &dbest);
	return steepest_refine(prof, sign, best, dbest, &step, &off) ? off : 0;
}

/* x, y, nx and ny of the eight points p[0..8), a vector each: four loads
 * and a transpose (store8_avx2() the other way). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
load8_avx2(const struct outline_point *p, __m256 *x, __m256 *y, __m256 *nx, __m256 *ny)
{
	const float *f = &p->x;
	const __m256 r0 = _mm256_loadu_ps(f), r1 = _mm256_loadu_ps(f + 8), r2 = _mm256_loadu_ps(f + 16),
		     r3 = _mm256_loadu_ps(f + 24);
	/* points 0 and 4, 1 and 5, 2 and 6, 3 and 7 */
	const __m256 t0 = _mm256_permute2f128_ps(r0, r2, 0x20), t1 = _mm256_permute2f128_ps(r0, r2, 0x31);
	const __m256 t2 = _mm256_permute2f128_ps(r1, r3, 0x20), t3 = _mm256_permute2f128_ps(r1, r3, 0x31);
	const __m256 u0 = _mm256_unpacklo_ps(t0, t1), u1 = _mm256_unpackhi_ps(t0, t1);
	const __m256 u2 = _mm256_unpacklo_ps(t2, t3), u3 = _mm256_unpackhi_ps(t2, t3);
	*x = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(1, 0, 1, 0));
	*y = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(3, 2, 3, 2));
	*nx = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(1, 0, 1, 0));
	*ny = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(3, 2, 3, 2));
}

/* offset_avx2() of the PROFILE_ROOMY profiles of p[0..8), one a lane,
 * into off[0..8), and with sharp (not NULL) edge_avx2()'s sharpness too,
 * into sharp[0..8): each lane's samples are bilinear_avx2()'s, its search
 * takes the first largest derivative as steepest_scalar() does, its
 * parabola is steepest_refine()'s and its range the samples'
 * edge_avx2() takes, the same operations on the same floats, so the same
 * bits (the offsets equal profile_edge()'s: where a step is found there is
 * a range); what a profile costs alone besides its samples (the set-up,
 * the search's reductions, the parabola) is shared by eight. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
profiles8_avx2(const struct image_u8 *grey, float sign, const struct outline_point *p, float *off, float *sharp)
{
	/* sample k of lane l at prof[k * 8 + l] */
	float prof[PROFILE_STEPS * 8] __attribute__((aligned(32)));
	__m256 px, py, nx, ny;
	load8_avx2(p, &px, &py, &nx, &ny);
	const __m256i stride = _mm256_set1_epi32(grey->stride), ff = _mm256_set1_epi32(0xff);
	/* Sample k at s = (k - 2 OUTLINE_PROFILE_PX) / 2 along the normal, s
	 * stepped by adding halves and wholes (exact: multiples of a half
	 * this small). */
#define PROFILE8_SAMPLE(K, S)                                                                                       \
	_mm256_store_ps(prof + (K) * 8, bilinear_avx2(grey, stride, ff, _mm256_add_ps(px, _mm256_mul_ps(S, nx)),     \
						      _mm256_add_ps(py, _mm256_mul_ps(S, ny))))
	/* the search's samples; for the range also those up to PROFILE_NEAR0
	 * and PROFILE_NEAR1 and every other one beyond */
	const int k0 = sharp ? 1 : STEEP_S0, k1 = sharp ? PROFILE_STEPS - 2 : STEEP_S1;
	const int n0 = sharp ? PROFILE_NEAR0 : STEEP_S0, n1 = sharp ? PROFILE_NEAR1 : STEEP_S1;
	__m256 sv = _mm256_set1_ps(0.5f * (float)(k0 - 2 * OUTLINE_PROFILE_PX));
	int ks = k0;
	for (; ks < n0; ks += 2, sv = _mm256_add_ps(sv, _mm256_set1_ps(1.0f)))
		PROFILE8_SAMPLE(ks, sv);
	for (; ks < n1; ks++, sv = _mm256_add_ps(sv, _mm256_set1_ps(0.5f)))
		PROFILE8_SAMPLE(ks, sv);
	for (; ks <= k1; ks += 2, sv = _mm256_add_ps(sv, _mm256_set1_ps(1.0f)))
		PROFILE8_SAMPLE(ks, sv);
#undef PROFILE8_SAMPLE
	const __m256 vs = _mm256_set1_ps(sign), zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
	__m256 d = zero;
	__m256i best = _mm256_set1_epi32(-1), kv = _mm256_set1_epi32(STEEP_K0);
	for (int k = STEEP_K0; k <= STEEP_K1; k++, kv = _mm256_add_epi32(kv, _mm256_set1_epi32(1))) {
		const __m256 dk = _mm256_mul_ps(vs, _mm256_sub_ps(_mm256_load_ps(prof + (k - 1) * 8),
								  _mm256_load_ps(prof + (k + 1) * 8)));
		const __m256 gt = _mm256_cmp_ps(dk, d, _CMP_GT_OQ);
		d = _mm256_blendv_ps(d, dk, gt);
		best = _mm256_blendv_epi8(best, kv, _mm256_castps_si256(gt));
	}
	/* The parabola where best lies inside the search; the other lanes
	 * read the samples about STEEP_K0 + 1 and keep offset 0. */
	const __m256i inner = _mm256_and_si256(_mm256_cmpgt_epi32(best, _mm256_set1_epi32(STEEP_K0)),
					       _mm256_cmpgt_epi32(_mm256_set1_epi32(STEEP_K1), best));
	const __m256i b = _mm256_blendv_epi8(_mm256_set1_epi32(STEEP_K0 + 1), best, inner);
	const __m256i at = _mm256_add_epi32(_mm256_slli_epi32(b, 3), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	const __m256i two = _mm256_set1_epi32(2 * 8);
	const __m256 pm = _mm256_i32gather_ps(prof, _mm256_sub_epi32(at, two), 4);
	const __m256 p0 = _mm256_i32gather_ps(prof, at, 4);
	const __m256 pp = _mm256_i32gather_ps(prof, _mm256_add_epi32(at, two), 4);
	const __m256 dm = _mm256_mul_ps(vs, _mm256_sub_ps(pm, p0)), dp = _mm256_mul_ps(vs, _mm256_sub_ps(p0, pp));
	const __m256 den = _mm256_add_ps(_mm256_sub_ps(dm, _mm256_mul_ps(_mm256_set1_ps(2.0f), d)), dp);
	const __m256 use = _mm256_and_ps(_mm256_castsi256_ps(inner), _mm256_cmp_ps(den, zero, _CMP_LT_OQ));
	const __m256 frac = _mm256_and_ps(use, _mm256_div_ps(_mm256_mul_ps(half, _mm256_sub_ps(dm, dp)), den));
	const __m256 at_best = _mm256_cvtepi32_ps(_mm256_sub_epi32(best, _mm256_set1_epi32(2 * OUTLINE_PROFILE_PX)));
	const __m256 found = _mm256_castsi256_ps(_mm256_cmpgt_epi32(best, _mm256_set1_epi32(-1)));
	_mm256_storeu_ps(off, _mm256_and_ps(found, _mm256_mul_ps(half, _mm256_add_ps(at_best, frac))));
	if (!sharp)
		return;
	__m256 lo = _mm256_load_ps(prof + k0 * 8), hi = lo;
	for (int k = k0; k <= k1; k += k < PROFILE_NEAR0 || k >= PROFILE_NEAR1 ? 2 : 1) {
		const __m256 v = _mm256_load_ps(prof + k * 8);
		lo = _mm256_min_ps(lo, v);
		hi = _mm256_max_ps(hi, v);
	}
	const __m256 range = _mm256_sub_ps(hi, lo);
	const __m256 some = _mm256_and_ps(found, _mm256_cmp_ps(range, zero, _CMP_GT_OQ));
	_mm256_storeu_ps(sharp, _mm256_and_ps(some, _mm256_div_ps(d, range)));
}

/* profiles8_avx2() of the offsets alone, and with the sharpness: each its
 * own function, its samples and loops known where it is compiled. */
__attribute__((target("avx2"))) static void offsets8_avx2(const struct image_u8 *grey, float sign,
							   const struct outline_point *p, float *off)
{
	profiles8_avx2(grey, sign, p, off, NULL);
}

__attribute__((target("avx2"))) static void edges8_avx2(const struct image_u8 *grey, float sign,
							 const struct outline_point *p, float *off, float *sharp)
{
	profiles8_avx2(grey, sign, p, off, sharp);
}
#endif

/* The steepest point of the grey profile through (x, y) along (nx, ny):
 * its offset along the normal (px) and the sharpness there (1/px). With
 * avx2 (the CPU has it) eight samples at a time where the profile has
 * room. */
static void profile_edge(const struct image_u8 *grey, bool avx2, float sign, float px, float py, float nx, float ny,
			 float *offset, float *sharpness)
{
	/* A crack on the frame's edge is where the picture ends, not an edge
	 * in it: it stays, with no sharpness. */
	*offset = 0;
	*sharpness = 0;
	if (px < 0 || py < 0 || px > (float)(grey->width - 1) || py > (float)(grey->height - 1))
		return;
	/* Every half-pixel sample is read (eight at a time they cost no more);
	 * the range takes the whole-pixel ones beyond the search. */
	const enum profile_room room = profile_room(grey, px, py, nx, ny);
#if PROFILE_X86
	if (avx2 && room == PROFILE_ROOMY) {
		edge_avx2(grey, sign, px, py, nx, ny, offset, sharpness);
		return;
	}
#else
	(void)avx2;
#endif
	float prof[PROFILE_BUF], lo = 1e9f, hi = -1e9f, dbest, step = 0, off = 0;
	samples_scalar(grey, room != PROFILE_CLAMPED, px, py, nx, ny, 0, PROFILE_STEPS - 1, prof);
	for (int k = PROFILE_NEAR0; k <= PROFILE_NEAR1; k++) {
		lo = min2(prof[k], lo);
		hi = max2(prof[k], hi);
	}
	range_far(prof, &lo, &hi);
	const int best = steepest_scalar(prof, sign, &dbest);
	const bool found = steepest_refine(prof, sign, best, dbest, &step, &off);
	edge_result(found, step, off, lo, hi, offset, sharpness);
}

/* profile_edge()'s offset alone, from the samples near the crack: the
 * same value (where the steepest step is found there is a grey range, so
 * the far samples, which feed only the range, never change the offset). */
static float profile_offset(const struct image_u8 *grey, bool avx2, float sign, float px, float py, float nx, float ny)
{
	if (px < 0 || py < 0 || px > (float)(grey->width - 1) || py > (float)(grey->height - 1))
		return 0;
	const enum profile_room room = profile_room(grey, px, py, nx, ny);
#if PROFILE_X86
	if (avx2 && room == PROFILE_ROOMY)
		return offset_avx2(grey, sign, px, py, nx, ny);
#else
	(void)avx2;
#endif
	float prof[PROFILE_BUF], dbest, step, off;
	samples_scalar(grey, room != PROFILE_CLAMPED, px, py, nx, ny, STEEP_S0, STEEP_S1, prof);
	const int best = steepest_scalar(prof, sign, &dbest);
	return steepest_refine(prof, sign, best, dbest, &step, &off) ? off : 0;
}

/* Whether the profile through (px, py) along any unit normal is
 * PROFILE_ROOMY, without the normal: the point lies OUTLINE_PROFILE_PX + 1
 * px inside profile_room()'s limits on every side (the profile's ends lie
 * OUTLINE_PROFILE_PX from it; the pixel more absorbs a normal rounded to
 * just above length 1). */
static inline bool profile_roomy(const struct image_u8 *grey, float px, float py)
{
	const float m = (float)OUTLINE_PROFILE_PX + 1;
	return px >= m && py >= m && px < (float)(grey->width - 1) - m && py < (float)(grey->height - 2) - m;
}

#if PROFILE_X86
/* Whether profile_roomy() holds for all of p[0..8): the same comparisons,
 * two points a vector (x and y against the limits, the normals' lanes
 * left out). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) bool
roomy8_avx2(const struct outline_point *p, __m256 lo, __m256 hi)
{
	const float *f = &p->x;
	__m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
	for (int q = 0; q < 32; q += 8) {
		const __m256 v = _mm256_loadu_ps(f + q);
		ok = _mm256_and_ps(ok, _mm256_and_ps(_mm256_cmp_ps(v, lo, _CMP_GE_OQ), _mm256_cmp_ps(v, hi, _CMP_LT_OQ)));
	}
	return (_mm256_movemask_ps(ok) & 0x33) == 0x33;
}
#endif

/* The profile of point i along its own normal: profile_offset() into
 * off[i], or with sharp profile_edge() into off[i] and sharp[i]. */
static inline void profile_of(const struct image_u8 *grey, bool avx2, float sign, const struct outline_point *p, int i,
			      float *off, float *sharp)
{
	if (sharp)
		profile_edge(grey, avx2, sign, p[i].x, p[i].y, p[i].nx, p[i].ny, &off[i], &sharp[i]);
	else
		off[i] = profile_offset(grey, avx2, sign, p[i].x, p[i].y, p[i].nx, p[i].ny);
}

#if PROFILE_X86
/* profiles()'s points with avx2 up to where fewer than eight are left;
 * returns where they begin. */
__attribute__((target("avx2"))) static int profiles_avx2(const struct image_u8 *grey, float sign,
							  const struct outline_point *p, int n, float *off, float *sharp)
{
	/* profile_roomy()'s limits in the lanes of a point's x and y */
	const float m = (float)OUTLINE_PROFILE_PX + 1, xr = (float)(grey->width - 1) - m,
		    yr = (float)(grey->height - 2) - m;
	const __m256 lo = _mm256_setr_ps(m, m, 0, 0, m, m, 0, 0), hi = _mm256_setr_ps(xr, yr, 0, 0, xr, yr, 0, 0);
	int i = 0;
	while (i + 8 <= n) {
		int t = 8;
		if (!roomy8_avx2(p + i, lo, hi))
			for (t = 0; t < 8 && profile_roomy(grey, p[i + t].x, p[i + t].y);)
				t++;
		if (t == 8) {
			if (sharp)
				edges8_avx2(grey, sign, p + i, off + i, sharp + i);
			else
				offsets8_avx2(grey, sign, p + i, off + i);
			i += 8;
			continue;
		}
		/* up to the point that has no room */
		for (const int end = i + t + 1; i < end; i++)
			profile_of(grey, true, sign, p, i, off, sharp);
	}
	return i;
}
#endif

/* profile_of() each point of p[0..n) (unit normals): eight consecutive
 * profiles at a time with avx2 where profile_roomy() holds for all of
 * them (checked eight at a time), else one at a time. */
static void profiles(const struct image_u8 *grey, bool avx2, float sign, const struct outline_point *p, int n,
		     float *off, float *sharp)
{
	int i = 0;
#if PROFILE_X86
	if (avx2)
		i = profiles_avx2(grey, sign, p, n, off, sharp);
#endif
	for (; i < n; i++)
		profile_of(grey, avx2, sign, p, i, off, sharp);
}

void outline_profiles(const struct image_u8 *grey, bool bright_inside, bool avx2, const struct outline_point *pts,
		      int n, float *offset, float *sharpness)
{
	profiles(grey, avx2 && outline_have_avx2(), bright_inside ? 1.0f : -1.0f, pts, n, offset, sharpness);
}

void outline_profile(const struct image_u8 *grey, bool bright_inside, bool avx2, float px, float py, float nx,
		     float ny, float *offset, float *sharpness, float *near_offset)
{
	avx2 = avx2 && outline_have_avx2();
	const float sign = bright_inside ? 1.0f : -1.0f;
	profile_edge(grey, avx2, sign, px, py, nx, ny, offset, sharpness);
	*near_offset = profile_offset(grey, avx2, sign, px, py, nx, ny);
}

/* On a blurred edge the steepest point is a flat peak that sensor noise
 * moves by a pixel or more, and Douglas-Peucker would keep exactly those
 * outliers: each point moves by the median of its own and its six
 * neighbours' offsets (a median does not round corners or shrink a curve
 * the way a mean of positions does). */
#define REFINE_WINDOW 7

void outline_refine(const struct image_u8 *grey, bool bright_inside, struct outline_point *pts, int n,
		    float *sharpness, float *offset)
{
	if (n < 5) {
		for (int i = 0; i < n; i++)
			sharpness[i] = 0;
		return;
	}
	/* Normals first, from the crack positions (point_normal reads only
	 * positions and the point's own crack normal); then the moves. */
	for (int i = 0; i < n; i++)
		point_normal(pts, n, i, &pts[i].nx, &pts[i].ny);
	const float sign = bright_inside ? 1.0f : -1.0f;
	for (int i = 0; i < n; i++)
		profile_edge(grey, false, sign, pts[i].x, pts[i].y, pts[i].nx, pts[i].ny, &offset[i], &sharpness[i]);
	float win[REFINE_WINDOW];
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < REFINE_WINDOW; k++)
			win[k] = offset[(i + k - REFINE_WINDOW / 2 + n) % n];
		float m = median_small(win, REFINE_WINDOW);
		pts[i].x += m * pts[i].nx;
		pts[i].y += m * pts[i].ny;
	}
}

/* ---- 4. simplify ------------------------------------------------------------------- */

/* The square of p's distance from the segment from a to (a + v), l2 =
 * |v|^2: dist2() of it is the distance, as the square root of exactly
 * this sum. */
static inline float seg_dist_sq(const struct outline_point *p, const struct outline_point *a, float vx, float vy,
				float l2)
{
	float wx = p->x - a->x, wy = p->y - a->y;
	if (l2 <= 0)
		return wx * wx + wy * wy;
	float u = (wx * vx + wy * vy) / l2;
	u = u < 0 ? 0 : u > 1 ? 1 : u;
	float dx = wx - u * vx, dy = wy - u * vy;
	return dx * dx + dy * dy;
}

/* The first of pts[i0 .. i1) farthest from the segment from a to (a + v)
 * (l2 = |v|^2), merged into *dmax and *imax where farther than *dmax
 * (the points before them come first). The square root, which never
 * decreases, is taken only where the squared distance exceeds every one
 * before (only there can the distance exceed *dmax): the same point and
 * distance as a root a point. */
static void farthest_scalar(const struct outline_point *pts, int i0, int i1, const struct outline_point *a, float vx,
			    float vy, float l2, float *dmax, int *imax)
{
	float qmax = -1;
	for (int i = i0; i < i1; i++) {
		const float q = seg_dist_sq(&pts[i], a, vx, vy, l2);
		if (q > qmax) {
			qmax = q;
			const float dd = sqrtf(q);
			if (dd > *dmax) {
				*dmax = dd;
				*imax = i;
			}
		}
	}
}

#if PROFILE_X86
/* farthest_scalar() eight points at a time: the same operations on the
 * same floats for each (seg_dist_sq()'s, then the root), so the same
 * distances, and of a vector's largest the first. The last vector reads
 * only the points up to i1; its other lanes are at distance -1, never the
 * largest. */
__attribute__((target("avx2"))) static void farthest_avx2(const struct outline_point *pts, int i0, int i1,
							   const struct outline_point *a, float vx, float vy, float l2,
							   float *dmax, int *imax)
{
	/* x and y of eight consecutive points, four floats apart */
	const __m256i at = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256 ax = _mm256_set1_ps(a->x), ay = _mm256_set1_ps(a->y), vvx = _mm256_set1_ps(vx),
		     vvy = _mm256_set1_ps(vy), vl2 = _mm256_set1_ps(l2), zero = _mm256_setzero_ps(),
		     one = _mm256_set1_ps(1.0f), none = _mm256_set1_ps(-1.0f);
	for (int i = i0; i < i1; i += 8) {
		const __m256 in = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(i1 - i), lane));
		const __m256 wx = _mm256_sub_ps(_mm256_mask_i32gather_ps(zero, &pts[i].x, at, in, 4), ax);
		const __m256 wy = _mm256_sub_ps(_mm256_mask_i32gather_ps(zero, &pts[i].y, at, in, 4), ay);
		__m256 q;
		if (l2 <= 0) {
			q = _mm256_add_ps(_mm256_mul_ps(wx, wx), _mm256_mul_ps(wy, wy));
		} else {
			__m256 u = _mm256_div_ps(_mm256_add_ps(_mm256_mul_ps(wx, vvx), _mm256_mul_ps(wy, vvy)), vl2);
			u = _mm256_blendv_ps(u, zero, _mm256_cmp_ps(u, zero, _CMP_LT_OQ));
			u = _mm256_blendv_ps(u, one, _mm256_cmp_ps(u, one, _CMP_GT_OQ));
			const __m256 dx = _mm256_sub_ps(wx, _mm256_mul_ps(u, vvx));
			const __m256 dy = _mm256_sub_ps(wy, _mm256_mul_ps(u, vvy));
			q = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
		}
		const __m256 dd = _mm256_blendv_ps(none, _mm256_sqrt_ps(q), in);
		__m256 m = _mm256_max_ps(dd, _mm256_permute2f128_ps(dd, dd, 1));
		m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
		m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
		const float d = _mm256_cvtss_f32(m);
		if (d > *dmax) {
			*dmax = d;
			*imax = i + __builtin_ctz((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(dd, m, _CMP_EQ_OQ)));
		}
	}
}
#endif

/* farthest_scalar(), eight points at a time with avx2. */
static void farthest(const struct outline_point *pts, int i0, int i1, bool avx2, const struct outline_point *a,
		     float vx, float vy, float l2, float *dmax, int *imax)
{
#if PROFILE_X86
	if (avx2) {
		farthest_avx2(pts, i0, i1, a, vx, vy, l2, dmax, imax);
		return;
	}
#else
	(void)avx2;
#endif
	farthest_scalar(pts, i0, i1, a, vx, vy, l2, dmax, imax);
}

static float kth_smallest(float *v, int n, int kth);

/* The split of span s..e (wrapping past the outline's end where e < s):
 * the first point farthest from the segment, over the points between s
 * and e in order, as *imax, and its value, the deviation capped by the
 * smaller of the ends' values, as *v. False where no point lies farther
 * than floor_t. */
static bool dp_split(const struct outline_point *pts, int n, bool avx2, int s, int e, const float *eff,
		     float floor_t, float *v, int *imax)
{
	const struct outline_point *pa = &pts[s];
	const float vx = pts[e].x - pa->x, vy = pts[e].y - pa->y, l2 = vx * vx + vy * vy;
	float dmax = -1;
	*imax = -1;
	farthest(pts, s + 1, e > s ? e : n, avx2, pa, vx, vy, l2, &dmax, imax);
	if (e < s)
		farthest(pts, 0, e, avx2, pa, vx, vy, l2, &dmax, imax);
	if (*imax < 0 || dmax <= floor_t)
		return false;
	const float parent = eff[s] < eff[e] ? eff[s] : eff[e];
	*v = dmax < parent ? dmax : parent;
	return true;
}

/* Douglas-Peucker computed once for every tolerance: each point gets the
 * deviation at which the recursion picks it, capped by its parent's (a
 * segment's endpoints are the splits that made it, and the later one,
 * whose value is the smaller, is its parent). DP with tolerance t keeps
 * exactly the points whose value exceeds t (all their ancestors' do).
 * Only values above floor_t are wanted: a split at a deviation of floor_t
 * or less is not made (its point keeps 0, and every point below it would
 * get at most that), which leaves all values above floor_t exact. */
static void dp_values(const struct outline_point *pts, int n, bool avx2, int a, int b, float *eff, int *stack,
		      float floor_t)
{
	int top = 0;
	stack[top++] = a;
	stack[top++] = b;
	while (top > 0) {
		const int e = stack[--top], s = stack[--top];
		int imax;
		float v;
		if (!dp_split(pts, n, avx2, s, e, eff, floor_t, &v, &imax))
			continue;
		eff[imax] = v;
		/* Only spans with points inside are pushed: they are disjoint,
		 * so at most n/2 wait (n ints of stack). */
		if ((imax - s + n) % n > 1) {
			stack[top++] = s;
			stack[top++] = imax;
		}
		if ((e - imax + n) % n > 1) {
			stack[top++] = imax;
			stack[top++] = e;
		}
	}
}

/* Moves best_first()'s heap entry `from` to place `to` (hs and hv as
 * dp_push() lays them out). */
static void span_move(int *hs, float *hv, int to, int from)
{
	hs[2 * to] = hs[2 * from];
	hs[2 * to + 1] = hs[2 * from + 1];
	hv[2 * to] = hv[2 * from];
	hv[2 * to + 1] = hv[2 * from + 1];
}

/* A span of best_first(): its farthest point's value as dp_values()
 * gives it (none where no point lies beyond floor_t) pushed onto the
 * max-heap of size *size: hs[2 i], hs[2 i + 1] its ends, hv[2 i] the
 * value, hv[2 i + 1] the point (exact as a float). */
static void dp_push(const struct outline_point *pts, int n, bool avx2, int s, int e, const float *eff, float floor_t,
		    int *hs, float *hv, int *size)
{
	int imax;
	float v;
	if (!dp_split(pts, n, avx2, s, e, eff, floor_t, &v, &imax))
		return;
	int i = (*size)++;
	for (int up; i > 0 && hv[2 * (up = (i - 1) / 2)] < v; i = up)
		span_move(hs, hv, i, up);
	hs[2 * i] = s;
	hs[2 * i + 1] = e;
	hv[2 * i] = v;
	hv[2 * i + 1] = (float)imax;
}

/* The tolerance outline_simplify() keeps points above, for floor_t > 0,
 * without every point's value: dp_values() gives a point at most the
 * value of the span's ends, so taking the spans largest value first
 * (a heap) gives the values in falling order, and the max_out + 1-th of
 * them (the two ends count first, infinite) is the kth_smallest() the
 * full pass would select; where there are fewer, floor_t. Each value is
 * dp_values()'s (the same span, the same ends), set in eff as it is
 * taken; a point never taken keeps 0, below the tolerance returned.
 * Pending spans are disjoint with a point inside each, so at most n / 2
 * wait: hs holds n ints, hv n floats. */
static float best_first(const struct outline_point *pts, int n, bool avx2, int far, int max_out, float *eff,
			float floor_t, int *hs, float *hv)
{
	int size = 0, taken = 2;
	if (taken >= max_out + 1)
		return INFINITY;
	dp_push(pts, n, avx2, 0, far, eff, floor_t, hs, hv, &size);
	dp_push(pts, n, avx2, far, 0, eff, floor_t, hs, hv, &size);
	while (size > 0) {
		const int s = hs[0], e = hs[1], imax = (int)hv[1];
		const float v = hv[0];
		/* the last entry sifted down from the top: its value leads the
		 * way, the entry moves once its place is found */
		const float lv = hv[2 * (size - 1)];
		size--;
		int i = 0;
		for (;;) {
			int c = 2 * i + 1;
			if (c >= size)
				break;
			if (c + 1 < size && hv[2 * (c + 1)] > hv[2 * c])
				c++;
			if (!(hv[2 * c] > lv))
				break;
			span_move(hs, hv, i, c);
			i = c;
		}
		if (size > 0)
			span_move(hs, hv, i, size);
		eff[imax] = v;
		if (++taken == max_out + 1)
			return v;
		if ((imax - s + n) % n > 1)
			dp_push(pts, n, avx2, s, imax, eff, floor_t, hs, hv, &size);
		if ((e - imax + n) % n > 1)
			dp_push(pts, n, avx2, imax, e, eff, floor_t, hs, hv, &size);
	}
	return floor_t;
}

int outline_simplify(const struct outline_point *pts, int n, float tolerance_px, bool avx2, int max_out, int *keep,
		     int *scratch, float *fscratch)
{
	avx2 = avx2 && outline_have_avx2();
	if (n <= 0 || max_out <= 0)
		return 0;
	if (n <= 3) {
		int m = n < max_out ? n : max_out;
		for (int i = 0; i < m; i++)
			keep[i] = i;
		return m;
	}
	int far = 0;
	float dfar = -1;
	for (int i = 1; i < n; i++) {
		float dd = dist2(pts[i].x - pts[0].x, pts[i].y - pts[0].y);
		if (dd > dfar) {
			dfar = dd;
			far = i;
		}
	}
	float *eff = fscratch, *sel = fscratch + n;
	for (int i = 0; i < n; i++)
		eff[i] = 0;
	eff[0] = eff[far] = INFINITY;
	float t = tolerance_px;
	if (t > 0) {
		t = best_first(pts, n, avx2, far, max_out, eff, t, scratch, sel);
	} else {
		/* every point's value (those of no span above 0 too) */
		dp_values(pts, n, avx2, 0, far, eff, scratch, t);
		dp_values(pts, n, avx2, far, 0, eff, scratch, t);
		int m = 0;
		for (int i = 0; i < n; i++)
			if (eff[i] > t)
				sel[m++] = eff[i];
		if (m > max_out) {
			/* The largest tolerance that leaves max_out or fewer:
			 * the (max_out + 1)-th largest value, which is above
			 * t. */
			t = kth_smallest(sel, m, m - 1 - max_out);
		}
	}
	int k = 0;
	for (int i = 0; i < n && k < max_out; i++)
		if (eff[i] > t)
			keep[k++] = i;
	return k;
}

/* ---- per frame ------------------------------------------------------------------------ */

/* The kth smallest of v[0..n) (0-based), v reordered (Hoare's select). */
static float kth_smallest(float *v, int n, int kth)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		float pivot = v[(lo + hi) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				float tmp = v[i];
				v[i] = v[j];
				v[j] = tmp;
				i++;
				j--;
			}
		}
		if (kth <= j)
			hi = j;
		else if (kth >= i)
			lo = i;
		else
			break;
	}
	return v[kth];
}

static float median_of(float *v, int n)
{
	return n > 0 ? kth_smallest(v, n, n / 2) : 0;
}

/* Traces region r into o->pts (raw cracks) and forgets the last outline's
 * refinement. Returns the point count, 0 when there is none, -1 on a
 * trace overflow. */
static int trace(struct tracer *o, const struct region_tree *t, int32_t r)
{
	/* Painting the runs costs less than clearing a large region's
	 * bounding box, and a new stamp leaves nothing to clear. */
	const struct region *g = &t->regions[r];
	const size_t used = (size_t)(g->x1 - g->x0 + 3) * (size_t)(g->y1 - g->y0 + 3);
	if (o->stamp == UINT8_MAX) {
		memset(o->mask, 0, o->mask_used);
		o->mask_used = 0;
		o->stamp = 0;
	}
	o->stamp++;
	o->mask_used = used > o->mask_used ? used : o->mask_used;
	int sx;
#if PROFILE_X86
	if (o->avx2)
		sx = paint_avx2(t, r, o->mask, o->stamp);
	else
#endif
		sx = paint(t, r, o->mask, o->stamp);
	int n = sx < 0 ? 0 : walk(t, r, sx, o->mask, o->stamp, o->pts, OUTLINE_MAX_TRACE);
	o->n = n > 0 ? n : 0;
	o->n_sm = 0;
	o->sign = t->regions[r].colour != 0 ? 1.0f : -1.0f;
	memset(o->have, 0, (size_t)o->n);
	return n;
}

/* Normal, offset and sharpness of point j of the traced outline, as
 * outline_refine() computes them (o->n >= 5). */
static void measure(struct tracer *o, const struct image_u8 *grey, int j)
{
	if (o->have[j])
		return;
	float *nv = &o->nrm[2 * j];
	point_normal(o->pts, o->n, j, &nv[0], &nv[1]);
	profile_edge(grey, o->avx2, o->sign, o->pts[j].x, o->pts[j].y, nv[0], nv[1], &o->offset[j], &o->sharp[j]);
	o->have[j] = 1;
}

#if PROFILE_X86
/* The offsets and sharpness of the profiles q[0..b) (b <= 8, all with
 * room), points which[0..b) of the traced outline, with edges8_avx2();
 * the lanes past b repeat the last profile. */
static void measure8(struct tracer *o, const struct image_u8 *grey, struct outline_point *q, const int *which, int b)
{
	float off[8], sharp[8];
	for (int l = b; l < 8; l++)
		q[l] = q[b - 1];
	edges8_avx2(grey, o->sign, q, off, sharp);
	for (int l = 0; l < b; l++) {
		o->offset[which[l]] = off[l];
		o->sharp[which[l]] = sharp[l];
	}
}
#endif

/* measure() of the traced outline's points at[0..m) (o->n >= 5): eight
 * at a time with AVX2 where their profiles have room (profiles8_avx2(),
 * the same bits). */
static void measure_many(struct tracer *o, const struct image_u8 *grey, const int *at, int m)
{
#if PROFILE_X86
	if (o->avx2) {
		struct outline_point q[8];
		int which[8], b = 0;
		for (int i = 0; i < m; i++) {
			const int j = at[i];
			if (o->have[j])
				continue;
			float *nv = &o->nrm[2 * j];
			point_normal(o->pts, o->n, j, &nv[0], &nv[1]);
			if (!profile_roomy(grey, o->pts[j].x, o->pts[j].y)) {
				measure(o, grey, j);
				continue;
			}
			o->have[j] = 1;
			q[b] = (struct outline_point){o->pts[j].x, o->pts[j].y, nv[0], nv[1]};
			which[b++] = j;
			if (b == 8) {
				measure8(o, grey, q, which, b);
				b = 0;
			}
		}
		if (b > 0)
			measure8(o, grey, q, which, b);
		return;
	}
#endif
	for (int i = 0; i < m; i++)
		measure(o, grey, at[i]);
}

static float sharp_at(struct tracer *o, const struct image_u8 *grey, int j)
{
	if (o->n < 5)
		return 0;
	measure(o, grey, j);
	return o->sharp[j];
}

/* Point i of the traced outline where outline_refine() would put it:
 * only it and its REFINE_WINDOW - 1 neighbours are measured. */
static struct outline_point refined_at(struct tracer *o, const struct image_u8 *grey, int i)
{
	struct outline_point q = o->pts[i];
	const int n = o->n;
	if (n < 5)
		return q;
	float win[REFINE_WINDOW];
	for (int k = 0; k < REFINE_WINDOW; k++) {
		int j = (i + k - REFINE_WINDOW / 2 + n) % n;
		measure(o, grey, j);
		win[k] = o->offset[j];
	}
	float m = median_small(win, REFINE_WINDOW);
	q.nx = o->nrm[2 * i];
	q.ny = o->nrm[2 * i + 1];
	q.x += m * q.nx;
	q.y += m * q.ny;
	return q;
}

/* A finger's sharpness: the median over at most this many points spread
 * evenly along its outline (the median of every point's moves by less
 * than the spread between a touching and a hovering finger). */
#define SHARP_SAMPLES 48

static float outline_sharpness(struct tracer *o, const struct image_u8 *grey)
{
	const int n = o->n, k = n < SHARP_SAMPLES ? n : SHARP_SAMPLES;
	for (int s = 0; s < k; s++)
		o->select[s] = sharp_at(o, grey, (int)((int64_t)s * n / k));
	return median_of(o->select, k);
}

/* Douglas-Peucker chooses among at most about this many cracks of an
 * outline, evenly spaced: on a long outline they are a few pixels apart,
 * where a curve of a finger's radius departs from its chord by a fraction
 * of a pixel. */
#define CONTOUR_CANDIDATES 256

/* Whether det has room for one more contour of up to max_points points. */
static bool contour_room(const struct outline_config *c, const struct detections *det)
{
	return det->n_contours < det->cap_contours && det->n_contours < c->max_contours &&
	       det->n_points + c->max_points <= det->cap_points;
}

/* Simplifies the traced outline into the detections as one contour:
 * Douglas-Peucker on the cracks (their staircase lies within half a pixel
 * of the boundary, well inside any useful tolerance), then only the kept
 * points are refined. */
static void contour_add(struct tracer *o, const struct image_u8 *grey, enum contour_owner kind, int32_t owner,
			bool hole, struct detections *det)
{
	const int n = o->n;
	if (n < 3)
		return;
	int cap = o->cfg->max_points;
	if (!contour_room(o->cfg, det)) {
		det->overflow = true;
		return;
	}
	/* A hand's outline is refined already (thinned, hand_outline()). */
	const bool thin = o->n_sm >= 3;
	const struct outline_point *from = thin ? o->sm : o->pts;
	const int nf = thin ? o->n_sm : n, step = (nf + CONTOUR_CANDIDATES - 1) / CONTOUR_CANDIDATES;
	int nc = 0;
	for (int j = 0; j < nf; j += step) {
		o->cand[nc] = from[j];
		o->cand_at[nc++] = j;
	}
	int m = outline_simplify(o->cand, nc, o->cfg->tolerance_px, o->avx2, cap, o->keep, o->scratch, o->fscratch);
	struct contour_det *c = &det->contours[det->n_contours++];
	c->owner_kind = (uint8_t)kind;
	c->owner = owner;
	c->hole = hole;
	c->first = det->n_points;
	c->n = m;
	for (int i = 0; i < m; i++) {
		int j = o->cand_at[o->keep[i]];
		struct outline_point p = thin ? o->sm[j] : refined_at(o, grey, j);
		det->points[det->n_points++] = (struct contour_point){p.x, p.y};
	}
}

static bool box_inside(const struct region *in, const struct region *out)
{
	return in->x0 > out->x0 && in->x1 < out->x1 && in->y0 > out->y0 && in->y1 < out->y1;
}

/* Outer contour of region r (the outline traced last) and its holes'
 * contours. */
static void contours_of(struct tracer *o, const struct region_tree *t, int32_t r, enum contour_owner kind,
			int32_t owner, const struct image_u8 *grey, struct detections *det)
{
	contour_add(o, grey, kind, owner, false, det);
	const struct region *g = &t->regions[r];
	const int32_t *adj = region_adj(t, r);
	for (int32_t i = 0; i < g->n_adj; i++) {
		const struct region *h = &t->regions[adj[i]];
		if (!box_inside(h, g) || h->area < OUTLINE_MIN_HOLE_AREA)
			continue;
		if (trace(o, t, adj[i]) < 0)
			det->overflow = true;
		else
			contour_add(o, grey, kind, owner, true, det);
	}
}

/* ---- 5. hands ----------------------------------------------------------------------- */

/* Index of the point at arc length `len` from i, forwards (dir 1) or
 * backwards (dir -1), on the closed outline with cumulative lengths arc
 * (arc[n] = perimeter). */
static int arc_step(const float *arc, int n, int i, float len, int dir)
{
	float per = arc[n];
	if (len >= per / 2)
		len = per / 2;
	int j = i;
	for (int guard = 0; guard < n; guard++) {
		int nj = (j + dir + n) % n;
		float d = dir > 0 ? arc[nj] - arc[i] : arc[i] - arc[nj];
		if (d < 0)
			d += per;
		if (d > len)
			break;
		j = nj;
	}
	return j;
}

/* Least-squares circle through pts[a .. b] (Kasa: x^2 + y^2 + D x + E y +
 * F = 0, linear in D, E, F; coordinates taken about the first point).
 * Returns false when the points do not fix a circle. */
static bool circle_fit(const struct outline_point *pts, int n, int a, int b, float *cx, float *cy, float *r)
{
	double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0, sz = 0, szx = 0, szy = 0, m = 0;
	const double ox = pts[a].x, oy = pts[a].y;
	for (int j = a;; j = (j + 1) % n) {
		double x = pts[j].x - ox, y = pts[j].y - oy, z = x * x + y * y;
		sxx += x * x;
		sxy += x * y;
		syy += y * y;
		sx += x;
		sy += y;
		sz += z;
		szx += z * x;
		szy += z * y;
		m++;
		if (j == b || m >= n)
			break;
	}
	if (m < 5)
		return false;
	/* [sxx sxy sx; sxy syy sy; sx sy m] [D E F]' = -[szx szy sz]' */
	double A[3][4] = {{sxx, sxy, sx, -szx}, {sxy, syy, sy, -szy}, {sx, sy, m, -sz}};
	for (int c = 0; c < 3; c++) {
		int piv = c;
		for (int k = c + 1; k < 3; k++)
			if (fabs(A[k][c]) > fabs(A[piv][c]))
				piv = k;
		if (fabs(A[piv][c]) < 1e-9)
			return false;
		for (int k = 0; k < 4; k++) {
			double t = A[c][k];
			A[c][k] = A[piv][k];
			A[piv][k] = t;
		}
		for (int k = 0; k < 3; k++) {
			if (k == c)
				continue;
			double f = A[k][c] / A[c][c];
			for (int q = c; q < 4; q++)
				A[k][q] -= f * A[c][q];
		}
	}
	double D = A[0][3] / A[0][0], E = A[1][3] / A[1][1], F = A[2][3] / A[2][2];
	double rr = 0.25 * (D * D + E * E) - F;
	if (!(rr > 0))
		return false;
	*cx = (float)(ox - 0.5 * D);
	*cy = (float)(oy - 0.5 * E);
	*r = (float)sqrt(rr);
	return true;
}

/* Finds the fingertips on the hand outline o->pts[0..n); appends them to
 * det->fingers (hand = hand_blob). Returns how many. */
/* arc_step(arc, n, i, len, +1) and (.., -1) for every i in [i0, i1) at
 * once, into fwd[i] and bwd[i], by two pointers over the outline walked
 * twice (len at most half the perimeter); arc holds the walk's 2n + 1
 * cumulative lengths (arc[n + k] = arc[k] + arc[n]). The lengths only
 * grow away from i, so fwd[i] is the last j in [i, i + n) with arc[j] -
 * arc[i] <= len and bwd[i] the first k in (i, i + n] with arc[i + n] -
 * arc[k] <= len (both modulo n): each pointer can go on from where the
 * point before left it. */
static void arc_steps(const float *arc, int n, float len, int i0, int i1, int *fwd, int *bwd)
{
	/* bwd[i0] lies a few points before i0 + n: found from there, not by
	 * a walk over the whole outline from i0 + 1 (the lengths only grow
	 * towards i0 + n, so both find the first k that is within len) */
	int j = i0, k = i0 + n;
	while (k - 1 > i0 && arc[i0 + n] - arc[k - 1] <= len)
		k--;
	for (int i = i0; i < i1; i++) {
		if (j < i)
			j = i;
		while (j + 1 < i + n && arc[j + 1] - arc[i] <= len)
			j++;
		fwd[i] = j < n ? j : j - n;
		if (k < i + 1)
			k = i + 1;
		while (k < i + n && arc[i + n] - arc[k] > len)
			k++;
		bwd[i] = k < n ? k : k - n;
	}
}

#if PROFILE_X86
/* arc_steps() eight points at a time, where each point's steps are at
 * most seven points away: fwd[i] - i and i + n - bwd[i] are the numbers
 * of the next eight lengths that are within len (the same subtractions
 * and comparisons), and where one is eight arc_steps() takes those eight
 * points. For n > 8 (the steps stay within the outline walked twice).
 * Returns where the points left over (fewer than eight) begin. */
__attribute__((target("avx2"))) static int arc_steps_avx2(const float *arc, int n, float len, int *fwd, int *bwd)
{
	const __m256 vl = _mm256_set1_ps(len);
	const __m256i vn = _mm256_set1_epi32(n), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
		      eight = _mm256_set1_epi32(8);
	int i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 a0 = _mm256_loadu_ps(arc + i), an = _mm256_loadu_ps(arc + i + n);
		__m256i cf = _mm256_setzero_si256(), cb = _mm256_setzero_si256();
		for (int d = 1; d <= 8; d++) {
			const __m256 f = _mm256_sub_ps(_mm256_loadu_ps(arc + i + d), a0);
			const __m256 b = _mm256_sub_ps(an, _mm256_loadu_ps(arc + i + n - d));
			cf = _mm256_sub_epi32(cf, _mm256_castps_si256(_mm256_cmp_ps(f, vl, _CMP_LE_OQ)));
			cb = _mm256_sub_epi32(cb, _mm256_castps_si256(_mm256_cmp_ps(b, vl, _CMP_LE_OQ)));
		}
		if (!_mm256_testz_si256(_mm256_or_si256(_mm256_cmpeq_epi32(cf, eight), _mm256_cmpeq_epi32(cb, eight)),
					_mm256_set1_epi32(-1))) {
			arc_steps(arc, n, len, i, i + 8, fwd, bwd);
			continue;
		}
		/* i + cf and i + n - cb, modulo n */
		const __m256i ii = _mm256_add_epi32(_mm256_set1_epi32(i), lane);
		const __m256i j = _mm256_add_epi32(ii, cf), k = _mm256_sub_epi32(ii, cb);
		_mm256_storeu_si256((__m256i *)(void *)(fwd + i),
				    _mm256_sub_epi32(j, _mm256_andnot_si256(_mm256_cmpgt_epi32(vn, j), vn)));
		const __m256i below = _mm256_cmpgt_epi32(_mm256_setzero_si256(), k);
		_mm256_storeu_si256((__m256i *)(void *)(bwd + i), _mm256_add_epi32(k, _mm256_and_si256(below, vn)));
	}
	return i;
}
#endif

/* The points arc_steps() gives i for a length len, from *a and *b, its
 * points for a shorter length: both walks stop where the length first
 * exceeds len (the lengths only grow away from i), so these go on from
 * there to the same points. */
static void arc_steps_on(const float *arc, int n, int i, float len, int *a, int *b)
{
	int j = *b < i ? *b + n : *b, k = *a > i ? *a : *a + n;
	while (j + 1 < i + n && arc[j + 1] - arc[i] <= len)
		j++;
	while (k - 1 > i && arc[i + n] - arc[k - 1] <= len)
		k--;
	*b = j < n ? j : j - n;
	*a = k < n ? k : k - n;
}

static bool near_border(const struct outline_point *q, int w, int h)
{
	const float m = 2.0f;
	return q->x < m || q->y < m || q->x > (float)w - 1 - m || q->y > (float)h - 1 - m;
}

/* p[j] for j in [j0, j1): crack j * k of pts[0..n) with point_normal()'s
 * normal there. */
static void thinned_scalar(const struct outline_point *pts, int n, int k, int j0, int j1, struct outline_point *p)
{
	for (int j = j0; j < j1; j++) {
		p[j].x = pts[j * k].x;
		p[j].y = pts[j * k].y;
		point_normal(pts, n, j * k, &p[j].nx, &p[j].ny);
	}
}

#if PROFILE_X86
/* Eight points p[0..8) from four vectors of their x, y, nx and ny. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
store8_avx2(struct outline_point *p, __m256 x, __m256 y, __m256 nx, __m256 ny)
{
	const __m256 t0 = _mm256_unpacklo_ps(x, y), t1 = _mm256_unpackhi_ps(x, y);
	const __m256 t2 = _mm256_unpacklo_ps(nx, ny), t3 = _mm256_unpackhi_ps(nx, ny);
	const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
	const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
	const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
	const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
	float *o = &p->x;
	_mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u1, 0x20));
	_mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
	_mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
	_mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}

/* thinned_scalar() eight points at a time, for points whose cracks two
 * either side need no wrap (2 <= j0 * k, (j1 - 1) * k + 2 < n): the same
 * operations on the same floats (the negation exact, by the sign bit), so
 * the same bits. Returns where the points left over (fewer than eight)
 * begin. */
__attribute__((target("avx2"))) static int thinned_avx2(const struct outline_point *pts, int k, int j0, int j1,
							 struct outline_point *p)
{
	/* the cracks of eight consecutive points, 4 k floats apart */
	const __m256i at = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(4 * k));
	const __m256 zero = _mm256_setzero_ps(), neg = _mm256_set1_ps(-0.0f);
	int j = j0;
	for (; j + 8 <= j1; j += 8) {
		const struct outline_point *c = &pts[j * k];
		const __m256 x = _mm256_i32gather_ps(&c->x, at, 4), y = _mm256_i32gather_ps(&c->y, at, 4);
		const __m256 cnx = _mm256_i32gather_ps(&c->nx, at, 4), cny = _mm256_i32gather_ps(&c->ny, at, 4);
		const __m256 tx =
			_mm256_sub_ps(_mm256_i32gather_ps(&c[2].x, at, 4), _mm256_i32gather_ps(&c[-2].x, at, 4));
		const __m256 ty =
			_mm256_sub_ps(_mm256_i32gather_ps(&c[2].y, at, 4), _mm256_i32gather_ps(&c[-2].y, at, 4));
		const __m256 len = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(tx, tx), _mm256_mul_ps(ty, ty)));
		const __m256 qx = _mm256_div_ps(ty, len), qy = _mm256_div_ps(_mm256_xor_ps(tx, neg), len);
		const __m256 out = _mm256_cmp_ps(_mm256_add_ps(_mm256_mul_ps(qx, cnx), _mm256_mul_ps(qy, cny)), zero,
						 _CMP_GT_OQ);
		const __m256 use = _mm256_and_ps(_mm256_cmp_ps(len, zero, _CMP_GT_OQ), out);
		store8_avx2(&p[j], x, y, _mm256_blendv_ps(cnx, qx, use), _mm256_blendv_ps(cny, qy, use));
	}
	return j;
}

/* hand_outline()'s moves of p[0..m) by the median of five offsets (off
 * with two of the other end's either side), eight points at a time: the
 * vector minimum and maximum are min2() and max2() (the second operand
 * where the first is not smaller or larger), the same bits. Returns
 * where the points left over begin. */
__attribute__((target("avx2"))) static int moves_avx2(struct outline_point *p, const float *off, int m)
{
	const __m256i at = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
	int j = 0;
	for (; j + 8 <= m; j += 8) {
		const float *v = off + j - 2;
		const __m256 v0 = _mm256_loadu_ps(v), v1 = _mm256_loadu_ps(v + 1), v2 = _mm256_loadu_ps(v + 2),
			     v3 = _mm256_loadu_ps(v + 3), v4 = _mm256_loadu_ps(v + 4);
		const __m256 lo = _mm256_max_ps(_mm256_min_ps(v0, v1), _mm256_min_ps(v2, v3));
		const __m256 hi = _mm256_min_ps(_mm256_max_ps(v0, v1), _mm256_max_ps(v2, v3));
		const __m256 med = _mm256_max_ps(_mm256_min_ps(v4, lo), _mm256_min_ps(_mm256_max_ps(v4, lo), hi));
		const __m256 nx = _mm256_i32gather_ps(&p[j].nx, at, 4), ny = _mm256_i32gather_ps(&p[j].ny, at, 4);
		const __m256 x = _mm256_add_ps(_mm256_i32gather_ps(&p[j].x, at, 4), _mm256_mul_ps(med, nx));
		const __m256 y = _mm256_add_ps(_mm256_i32gather_ps(&p[j].y, at, 4), _mm256_mul_ps(med, ny));
		store8_avx2(&p[j], x, y, nx, ny);
	}
	return j;
}

/* hand_outline()'s normals across the neighbours, for p[j0 .. j1) with
 * 1 <= j0 and j1 < m (no wrap), eight points at a time: the same
 * operations on the same floats, the same bits. Returns where the points
 * left over begin. */
__attribute__((target("avx2"))) static int across_avx2(struct outline_point *p, int j0, int j1)
{
	const __m256i at = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
	const __m256 zero = _mm256_setzero_ps(), neg = _mm256_set1_ps(-0.0f);
	int j = j0;
	for (; j + 8 <= j1; j += 8) {
		const __m256 tx =
			_mm256_sub_ps(_mm256_i32gather_ps(&p[j + 1].x, at, 4), _mm256_i32gather_ps(&p[j - 1].x, at, 4));
		const __m256 ty =
			_mm256_sub_ps(_mm256_i32gather_ps(&p[j + 1].y, at, 4), _mm256_i32gather_ps(&p[j - 1].y, at, 4));
		const __m256 len = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(tx, tx), _mm256_mul_ps(ty, ty)));
		const __m256 some = _mm256_cmp_ps(len, zero, _CMP_GT_OQ);
		store8_avx2(&p[j], _mm256_i32gather_ps(&p[j].x, at, 4), _mm256_i32gather_ps(&p[j].y, at, 4),
			    _mm256_and_ps(some, _mm256_div_ps(ty, len)),
			    _mm256_and_ps(some, _mm256_div_ps(_mm256_xor_ps(tx, neg), len)));
	}
	return j;
}
#endif

/* The normal of p[j] of the closed outline p[0..m): across its two
 * neighbours (0 where they coincide). */
static inline void hand_normal(struct outline_point *p, int m, int j)
{
	const struct outline_point *a = &p[j > 0 ? j - 1 : m - 1], *b = &p[j + 1 < m ? j + 1 : 0];
	float tx = b->x - a->x, ty = b->y - a->y, len = dist2(tx, ty);
	p[j].nx = len > 0 ? ty / len : 0;
	p[j].ny = len > 0 ? -tx / len : 0;
}

/* How far point i of the thinned outline p[0..n) (arc: arc_steps()'s
 * lengths) stands out as a fingertip, a and b its points a quarter circle
 * back and on: depth over width, 0 when it is none. The frame's edge cuts
 * an arm, and a cut is no fingertip. */
static float candidate_score(const float *arc, const struct outline_point *p, int n, int i, int a, int b, float fs,
		       float quarter, int w, int h)
{
	if (near_border(&p[i], w, h) || near_border(&p[a], w, h) || near_border(&p[b], w, h))
		return 0;
	float wd = dist2(p[a].x - p[b].x, p[a].y - p[b].y);
	if (wd < 0.5f * fs || wd > 1.6f * fs)
		return 0;
	float mx = 0.5f * (p[a].x + p[b].x), my = 0.5f * (p[a].y + p[b].y);
	float ox = p[i].x - mx, oy = p[i].y - my;
	float depth = dist2(ox, oy);
	if (depth < 0.3f * wd || ox * p[i].nx + oy * p[i].ny <= 0)
		return 0;
	/* Twice as far back (wanted for the few points that get here). */
	int a2 = a, b2 = b;
	arc_steps_on(arc, n, i, 2 * quarter, &a2, &b2);
	float w2 = dist2(p[a2].x - p[b2].x, p[a2].y - p[b2].y);
	if (w2 > 1.6f * fs || near_border(&p[a2], w, h) || near_border(&p[b2], w, h))
		return 0;
	return depth / wd;
}

#if PROFILE_X86
/* Whether each of eight points lies near the frame's edge, as
 * near_border() finds it. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m256
near_border_avx2(__m256 x, __m256 y, int w, int h)
{
	const float m = 2.0f;
	const __m256 lo = _mm256_set1_ps(m), xr = _mm256_set1_ps((float)w - 1 - m);
	const __m256 yr = _mm256_set1_ps((float)h - 1 - m);
	return _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), _mm256_cmp_ps(y, lo, _CMP_LT_OQ)),
			    _mm256_or_ps(_mm256_cmp_ps(x, xr, _CMP_GT_OQ), _mm256_cmp_ps(y, yr, _CMP_GT_OQ)));
}

/* candidate_score() of p[0..n) into score, eight points at a time: the tests up
 * to the depth's, on the same floats as candidate_score() takes them, leave
 * nearly every point at 0; the few that pass them get candidate_score(). Returns
 * where the points left over (fewer than eight) begin. */
__attribute__((target("avx2"))) static int candidate_scores_avx2(const float *arc, const struct outline_point *p,
								  int n, const int *fwd, const int *bwd, float fs,
								  float quarter, int w, int h, float *score)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256 zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f), wlo = _mm256_set1_ps(0.5f * fs),
		     whi = _mm256_set1_ps(1.6f * fs), dmin = _mm256_set1_ps(0.3f);
	int i = 0;
	for (; i + 8 <= n; i += 8) {
		/* point k's floats begin at 4 k */
		const __m256i ai = _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(bwd + i)), 2);
		const __m256i bi = _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(fwd + i)), 2);
		const __m256i ii = _mm256_slli_epi32(_mm256_add_epi32(_mm256_set1_epi32(i), lane), 2);
		const __m256 ax = _mm256_i32gather_ps(&p->x, ai, 4), ay = _mm256_i32gather_ps(&p->y, ai, 4);
		const __m256 bx = _mm256_i32gather_ps(&p->x, bi, 4), by = _mm256_i32gather_ps(&p->y, bi, 4);
		const __m256 x = _mm256_i32gather_ps(&p->x, ii, 4), y = _mm256_i32gather_ps(&p->y, ii, 4);
		const __m256 nx = _mm256_i32gather_ps(&p->nx, ii, 4), ny = _mm256_i32gather_ps(&p->ny, ii, 4);
		const __m256 edge =
			_mm256_or_ps(near_border_avx2(x, y, w, h),
				     _mm256_or_ps(near_border_avx2(ax, ay, w, h), near_border_avx2(bx, by, w, h)));
		const __m256 dx = _mm256_sub_ps(ax, bx), dy = _mm256_sub_ps(ay, by);
		const __m256 wd = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)));
		const __m256 ox = _mm256_sub_ps(x, _mm256_mul_ps(half, _mm256_add_ps(ax, bx)));
		const __m256 oy = _mm256_sub_ps(y, _mm256_mul_ps(half, _mm256_add_ps(ay, by)));
		const __m256 depth = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(ox, ox), _mm256_mul_ps(oy, oy)));
		__m256 no = _mm256_or_ps(edge, _mm256_or_ps(_mm256_cmp_ps(wd, wlo, _CMP_LT_OQ),
							    _mm256_cmp_ps(wd, whi, _CMP_GT_OQ)));
		no = _mm256_or_ps(no, _mm256_cmp_ps(depth, _mm256_mul_ps(dmin, wd), _CMP_LT_OQ));
		no = _mm256_or_ps(no, _mm256_cmp_ps(_mm256_add_ps(_mm256_mul_ps(ox, nx), _mm256_mul_ps(oy, ny)), zero,
						    _CMP_LE_OQ));
		_mm256_storeu_ps(score + i, zero);
		for (unsigned yes = ~(unsigned)_mm256_movemask_ps(no) & 0xffu; yes; yes &= yes - 1) {
			const int k = i + __builtin_ctz(yes);
			score[k] = candidate_score(arc, p, n, k, bwd[k], fwd[k], fs, quarter, w, h);
		}
	}
	return i;
}
#endif

#if PROFILE_X86
/* len[i] = the distance from p[i] to p[i + 1] (dist2(), the same bits:
 * the square root is exact to the last bit either way) for i from 0,
 * eight at a time while p[i + 8] exists; returns where the rest begin. */
__attribute__((target("avx2"))) static int chords_avx2(const struct outline_point *p, int n, float *len)
{
	int i = 0;
	for (; i + 9 <= n; i += 8) {
		__m256 x, y, qx, qy, nx, ny;
		load8_avx2(p + i, &x, &y, &nx, &ny);
		load8_avx2(p + i + 1, &qx, &qy, &nx, &ny);
		const __m256 dx = _mm256_sub_ps(qx, x), dy = _mm256_sub_ps(qy, y);
		_mm256_storeu_ps(len + i, _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy))));
	}
	return i;
}

/* out[i] = in[i] + c for i from 0, eight at a time; returns where the
 * rest (fewer than eight) begin. */
__attribute__((target("avx2"))) static int shifted_avx2(const float *in, int n, float c, float *out)
{
	const __m256 vc = _mm256_set1_ps(c);
	int i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(in + i), vc));
	return i;
}

/* The first i' >= i below n whose score is not <= 0 (n where there is
 * none), eight scores at a time. */
__attribute__((target("avx2"))) static int candidate_next_avx2(const float *score, int i, int n)
{
	const __m256 zero = _mm256_setzero_ps();
	for (; i + 8 <= n; i += 8) {
		const unsigned yes = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(score + i), zero, _CMP_NLE_UQ));
		if (yes)
			return i + __builtin_ctz(yes);
	}
	for (; i < n; i++)
		if (!(score[i] <= 0))
			return i;
	return n;
}
#endif

/* Points of the thinned outline a quarter circle of a finger spans at least. */
#define HAND_POINTS_PER_QUARTER 4

/* The traced outline (o->n cracks) refined and thinned into o->sm: every
 * k-th crack, k such that a quarter circle keeps HAND_POINTS_PER_QUARTER
 * points, moved along its normal by the median of its own and its two
 * thinned neighbours' either side offsets (the refinement of
 * outline_refine() at a coarser step: a blurred hovering finger's
 * threshold outline is narrower than the finger); normals across the
 * neighbours. Returns the point count; crack j * k is point j. */
static int hand_outline(struct tracer *o, const struct image_u8 *grey, float quarter, int *step)
{
	const int n = o->n;
	int k = (int)(quarter / HAND_POINTS_PER_QUARTER);
	k = k < 1 ? 1 : k;
	const int m = n / k;
	struct outline_point *p = o->sm;
	/* the offsets with two of the other end's either side, so each
	 * point's window is off[j - 2 .. j + 2] */
	float *off = o->fscratch + 2;
	if (n < 5 || m < 5)
		return 0;
	/* First the cracks with their normals, then their offsets, then the
	 * moves. */
	int done = 0;
#if PROFILE_X86
	/* the points whose normals need no wrap, eight at a time */
	const int j_in = (2 + k - 1) / k, j_end = (n - 3) / k + 1 < m ? (n - 3) / k + 1 : m;
	if (o->avx2 && j_in < j_end) {
		thinned_scalar(o->pts, n, k, 0, j_in, p);
		done = thinned_avx2(o->pts, k, j_in, j_end, p);
	}
#endif
	thinned_scalar(o->pts, n, k, done, m, p);
	profiles(grey, o->avx2, o->sign, p, m, off, NULL);
	off[-2] = off[m - 2];
	off[-1] = off[m - 1];
	off[m] = off[0];
	off[m + 1] = off[1];
	done = 0;
#if PROFILE_X86
	if (o->avx2)
		done = moves_avx2(p, off, m);
#endif
	for (int j = done; j < m; j++) {
		float med = median5(off + j - 2);
		p[j].x += med * p[j].nx;
		p[j].y += med * p[j].ny;
	}
	/* normals across the neighbours, once all have moved: the first
	 * point's and the last's wrap */
	done = 0;
#if PROFILE_X86
	if (o->avx2) {
		hand_normal(p, m, 0);
		done = across_avx2(p, 1, m - 1);
	}
#endif
	for (int j = done; j < m; j++)
		hand_normal(p, m, j);
	*step = k;
	o->n_sm = m;
	return m;
}

static int hand_tips(struct tracer *o, const struct image_u8 *grey, int32_t hand_blob, int w, int h,
		     struct detections *det)
{
	const float fs = o->cfg->finger_size_px;
	const float quarter = 0.25f * (float)M_PI * fs;
	int step;
	const int n = hand_outline(o, grey, quarter, &step);
	if (n < 8)
		return 0;
	const struct outline_point *p = o->sm;
	/* the chords' lengths (eight at a time with avx2, the same bits) in
	 * place, then summed in order */
	int done = 0;
#if PROFILE_X86
	if (o->avx2)
		done = chords_avx2(p, n, o->arc + 1);
#endif
	o->arc[0] = 0;
	for (int i = 0; i < done; i++)
		o->arc[i + 1] = o->arc[i] + o->arc[i + 1];
	for (int i = done; i < n; i++) {
		const struct outline_point *q = &p[i + 1 < n ? i + 1 : 0];
		o->arc[i + 1] = o->arc[i] + dist2(q->x - p[i].x, q->y - p[i].y);
	}
	if (o->arc[n] < 8 * quarter)
		return 0;
	/* The outline once more, for arc_steps(). */
	done = 0;
#if PROFILE_X86
	if (o->avx2)
		done = shifted_avx2(o->arc + 1, n, o->arc[n], o->arc + n + 1);
#endif
	for (int i = done + 1; i <= n; i++)
		o->arc[n + i] = o->arc[i] + o->arc[n];
	/* Scores into o->select (0 = no candidate). */
	float *score = o->select;
	int *fwd1 = o->steps, *bwd1 = fwd1 + n;
	done = 0;
#if PROFILE_X86
	if (o->avx2 && n > 8)
		done = arc_steps_avx2(o->arc, n, quarter, fwd1, bwd1);
#endif
	arc_steps(o->arc, n, quarter, done, n, fwd1, bwd1);
	done = 0;
#if PROFILE_X86
	if (o->avx2)
		done = candidate_scores_avx2(o->arc, p, n, fwd1, bwd1, fs, quarter, w, h, score);
#endif
	for (int i = done; i < n; i++)
		score[i] = candidate_score(o->arc, p, n, i, bwd1[i], fwd1[i], fs, quarter, w, h);
	int found = 0;
	float tip_score[HAND_MAX_TIPS];
	for (int i = 0; i < n && found < HAND_MAX_TIPS; i++) {
#if PROFILE_X86
		if (o->avx2 && (i = candidate_next_avx2(score, i, n)) >= n)
			break;
#endif
		if (score[i] <= 0)
			continue;
		/* A local maximum within two quarter circles either way (ties:
		 * the first). */
		bool best = true;
		for (int dir = -1; dir <= 1 && best; dir += 2) {
			int j = i;
			for (int guard = 0; guard < n; guard++) {
				j += dir;
				j = j < 0 ? j + n : j >= n ? j - n : j;
				float d = dir > 0 ? o->arc[j] - o->arc[i] : o->arc[i] - o->arc[j];
				if (d < 0)
					d += o->arc[n];
				if (d > 2 * quarter || j == i)
					break;
				if (score[j] > score[i] || (score[j] == score[i] && dir < 0)) {
					best = false;
					break;
				}
			}
		}
		if (!best)
			continue;
		if (det->n_fingers >= det->cap_fingers) {
			det->overflow = true;
			break;
		}
		int a = arc_step(o->arc, n, i, quarter, -1), b = arc_step(o->arc, n, i, quarter, 1);
		/* The tip's own quarter circles, refined, crack by crack: their
		 * sharpness and the circle through them. */
		int m = 0;
		for (int j = a;; j = (j + 1) % n) {
			o->ref[m] = p[j];
			o->keep[m++] = j * step;
			if (j == b || m >= n)
				break;
		}
		measure_many(o, grey, o->keep, m);
		for (int k = 0; k < m; k++)
			o->tip_sharp[k] = o->sharp[o->keep[k]];
		/* The centre of a round tip lies half the finger's width behind
		 * the tip, towards the middle of its two sides; the width is
		 * taken where the sides run straight (one and a half to two
		 * quarter circles back, which holds for fingers up to a third
		 * thicker than finger_size; the narrower, as the wider may
		 * reach the palm or a neighbour). */
		int a2 = arc_step(o->arc, n, i, 1.5f * quarter, -1), b2 = arc_step(o->arc, n, i, 1.5f * quarter, 1);
		int a3 = arc_step(o->arc, n, i, 2 * quarter, -1), b3 = arc_step(o->arc, n, i, 2 * quarter, 1);
		float w2 = fminf(dist2(p[a2].x - p[b2].x, p[a2].y - p[b2].y), dist2(p[a3].x - p[b3].x, p[a3].y - p[b3].y));
		float mx = 0.5f * (p[a].x + p[b].x) - p[i].x, my = 0.5f * (p[a].y + p[b].y) - p[i].y;
		float ml = dist2(mx, my);
		struct finger_det *f = &det->fingers[det->n_fingers++];
		*f = (struct finger_det){0};
		f->x = p[i].x + 0.5f * w2 * mx / ml;
		f->y = p[i].y + 0.5f * w2 * my / ml;
		f->diameter_px = w2;
		/* Better: the circle through the tip's own outline, when it is
		 * a plausible fingertip near the first estimate. */
		float fx, fy, fr;
		if (circle_fit(o->ref, m, 0, m - 1, &fx, &fy, &fr) && fr > 0.25f * fs && fr < fs &&
		    dist2(fx - f->x, fy - f->y) < 0.5f * fs) {
			f->x = fx;
			f->y = fy;
			f->diameter_px = 2 * fr;
		}
		f->roundness = 1.0f;
		f->region = -1;
		f->sharpness = median_of(o->tip_sharp, m);
		f->in_hand = true;
		f->hand = hand_blob;
		/* Two candidates on one finger (a bright tip wider than the
		 * blurred finger behind it makes a second bump) give one tip:
		 * the one standing out more. */
		int32_t self = det->n_fingers - 1, dup = -1;
		for (int32_t k = self - found; k < self; k++)
			if (dist2(det->fingers[k].x - f->x, det->fingers[k].y - f->y) < 0.6f * fs)
				dup = k;
		if (dup >= 0) {
			if (score[i] > tip_score[dup - (self - found)]) {
				det->fingers[dup] = *f;
				tip_score[dup - (self - found)] = score[i];
			}
			det->n_fingers--;
			continue;
		}
		tip_score[found++] = score[i];
	}
	return found;
}

static bool region_is_reported(const struct detections *det, int32_t r)
{
	for (int i = 0; i < det->n_fingers; i++)
		if (det->fingers[i].region == r)
			return true;
	return false;
}

/* Region r as a hand blob: replaces a plain blob of r or is appended.
 * Returns its index in det->blobs, or -1 when the list is full. */
static int32_t hand_blob(const struct region_tree *t, int32_t r, struct detections *det)
{
	const struct region *g = &t->regions[r];
	int32_t at = -1;
	for (int32_t i = 0; i < det->n_blobs; i++)
		if (det->blobs[i].region == r)
			at = i;
	if (at < 0) {
		if (det->n_blobs >= det->cap_blobs) {
			det->overflow = true;
			return -1;
		}
		at = det->n_blobs++;
		double a = (double)g->area, cx = (double)g->sum_x / a, cy = (double)g->sum_y / a;
		double mxx = (double)g->sum_xx / a - cx * cx, myy = (double)g->sum_yy / a - cy * cy;
		double mxy = (double)g->sum_xy / a - cx * cy;
		double th = 0.5 * atan2(2 * mxy, mxx - myy);
		double tr = 0.5 * (mxx + myy), dd = sqrt(0.25 * (mxx - myy) * (mxx - myy) + mxy * mxy);
		double l1 = tr + dd, l2 = tr - dd > 0 ? tr - dd : 0;
		th = fmod(th, M_PI);
		if (th < 0)
			th += M_PI;
		det->blobs[at] = (struct blob_det){.x = (float)cx, .y = (float)cy, .angle = (float)th,
						   .w = (float)(4 * sqrt(l1)), .h = (float)(4 * sqrt(l2)),
						   .area_px = (float)g->area, .region = r};
	}
	det->blobs[at].hand = true;
	return at;
}

/* A matcher's finger within a finger size of a hand's bounding box
 * belongs to it. */
static void fingers_to_hands(struct detections *det, int32_t n_old_fingers, const float *hand_box, int n_hands,
			     const int32_t *hand_index, float fs)
{
	for (int32_t i = 0; i < n_old_fingers; i++) {
		struct finger_det *f = &det->fingers[i];
		for (int h = 0; h < n_hands && !f->in_hand; h++) {
			const float *b = &hand_box[4 * h];
			if (f->x >= b[0] - fs && f->x <= b[2] + fs && f->y >= b[1] - fs && f->y <= b[3] + fs) {
				f->in_hand = true;
				f->hand = hand_index[h];
			}
		}
	}
}

/* ---- a frame: independent units, run by the tasks, merged in order ------------------ */

/* Matcher finger i: its outline's sharpness (touch or hover), written to
 * f, and its contours. */
static void finger_unit(struct tracer *o, const struct region_tree *tree, const struct image_u8 *grey,
			struct finger_det *f, int32_t i, struct detections *out)
{
	if (trace(o, tree, f->region) < 0) {
		out->overflow = true;
		return;
	}
	if (o->cfg->touch_sharpness > 0) {
		f->sharpness = outline_sharpness(o, grey);
		f->hover = f->sharpness < o->cfg->touch_sharpness;
	}
	if (o->cfg->contours)
		contours_of(o, tree, f->region, CONTOUR_FINGER, i, grey, out);
}

/* Bright region r as a hand: its fingertips (hand index -1) and, when it
 * has any, its contours (owner -1). Returns the tips. */
static int hand_unit(struct tracer *o, const struct region_tree *tree, const struct image_u8 *grey, int32_t r,
		     struct detections *out)
{
	int n = trace(o, tree, r);
	if (n <= 0) {
		out->overflow |= n < 0;
		return 0;
	}
	int tips = hand_tips(o, grey, -1, tree->width, tree->height, out);
	if (tips > 0 && o->cfg->contours)
		contours_of(o, tree, r, CONTOUR_BLOB, -1, grey, out);
	return tips;
}

static void blob_unit(struct tracer *o, const struct region_tree *tree, const struct image_u8 *grey,
		      const struct blob_det *b, int32_t i, struct detections *out)
{
	if (trace(o, tree, b->region) < 0)
		out->overflow = true;
	else
		contours_of(o, tree, b->region, CONTOUR_BLOB, i, grey, out);
}

/* A bright region large enough to be a hand and not the whole table:
 * what the tree alone says (outline_begin() runs these before the
 * matcher has found its fingers). */
static bool hand_shape(const struct outline_config *c, const struct region_tree *tree, int32_t r)
{
	const struct region *g = &tree->regions[r];
	const float fs = c->finger_size_px;
	int w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
	int side = w > h ? w : h;
	if (!g->colour || side <= 2.0f * fs || (float)g->area < 3.0f * fs * fs)
		return false;
	/* The table itself, lit from below, fills the frame: no hand. */
	return w < tree->width - 2 || h < tree->height - 2;
}

/* A hand's shape that is not a matcher's finger. */
static bool hand_candidate(const struct outline_config *c, const struct region_tree *tree, int32_t r,
			   const struct detections *det)
{
	return hand_shape(c, tree, r) && !region_is_reported(det, r);
}

/* The next unit published and not yet taken, or -1. */
static int unit_next(struct outline *s)
{
	int k = atomic_load_explicit(&s->next_unit, memory_order_relaxed);
	/* acquire: the unit, and the detections it reads, were written before
	 * it was published */
	while (k < atomic_load_explicit(&s->published, memory_order_acquire))
		if (atomic_compare_exchange_weak_explicit(&s->next_unit, &k, k + 1, memory_order_relaxed,
							  memory_order_relaxed))
			return k;
	return -1;
}

static void units_task(void *arg, int task)
{
	struct outline *s = arg;
	struct tracer *o = s->t[task];
	struct detections *out = &o->out;
	detections_clear(out);
	for (;;) {
		const int k = unit_next(s);
		if (k < 0)
			break;
		struct unit *u = &s->units[s->order[k].at];
		const int32_t p0 = out->n_points;
		u->task = (uint8_t)task;
		u->c0 = out->n_contours;
		u->f0 = out->n_fingers;
		if (u->kind == UNIT_FINGER)
			finger_unit(o, s->tree, s->grey, &s->det->fingers[u->index], u->index, out);
		else if (u->kind == UNIT_HAND)
			u->tips = hand_unit(o, s->tree, s->grey, u->index, out);
		else
			blob_unit(o, s->tree, s->grey, &s->det->blobs[u->index], u->index, out);
		/* A full list (or a trace overflow) leaves the unit to the
		 * merge, which runs it into the frame's list. */
		u->ran = !out->overflow;
		if (!u->ran) {
			out->n_contours = u->c0;
			out->n_points = p0;
			out->n_fingers = u->f0;
			out->overflow = false;
		}
		u->c1 = out->n_contours;
		u->f1 = out->n_fingers;
	}
}

/* A worker's units_task(): task 0 is the calling thread's. */
static void worker_task(void *arg, int task)
{
	units_task(arg, task + 1);
}

/* The units of one kind, in the order the merge visits them. */
struct cursor {
	int at, end;
};

/* area: a hand's region's, else 0. */
static void units_add(struct outline *s, enum unit_kind kind, int32_t index, int32_t area)
{
	if (s->n_units < OUTLINE_MAX_UNITS) {
		s->order[s->n_units] = (struct unit_key){area, s->n_units};
		s->units[s->n_units++] = (struct unit){.kind = (uint8_t)kind, .index = index};
	}
}

static int key_cmp(const void *a, const void *b)
{
	const struct unit_key *p = a, *q = b;
	if (p->area != q->area)
		return p->area > q->area ? -1 : 1;
	return (p->at > q->at) - (p->at < q->at);
}

/* The unit of index, when the tasks ran it; units of lower indices the
 * merge did not ask for (hands outline_begin() ran on regions the matcher
 * made fingers) are passed over. */
static const struct unit *unit_take(const struct outline *s, struct cursor *cu, int32_t index)
{
	while (cu->at < cu->end && s->units[cu->at].index < index)
		cu->at++;
	if (cu->at >= cu->end || s->units[cu->at].index != index)
		return NULL;
	const struct unit *u = &s->units[cu->at++];
	return u->ran ? u : NULL;
}

/* Unit u's contours into det, each where contour_add() would have put it. */
static void copy_contours(const struct outline *s, const struct unit *u, struct detections *det)
{
	const struct detections *out = &s->t[u->task]->out;
	for (int32_t k = u->c0; k < u->c1; k++) {
		if (!contour_room(&s->cfg, det)) {
			det->overflow = true;
			return;
		}
		struct contour_det *c = &det->contours[det->n_contours++];
		*c = out->contours[k];
		memcpy(&det->points[det->n_points], &out->points[c->first], (size_t)c->n * sizeof *det->points);
		c->first = det->n_points;
		det->n_points += c->n;
	}
}

/* The units of a frame, hands (the largest) first, then blobs that can be
 * no hand, then the matcher's fingers; cursors in the merge's order. The
 * hands are those outline_begin() published, when it did. */
static void units_plan(struct outline *s, const struct region_tree *tree, const struct detections *det,
		       struct cursor *hands, struct cursor *blobs, struct cursor *fingers)
{
	const struct outline_config *c = &s->cfg;
	hands->at = 0;
	if (s->begun) {
		s->n_units = s->n_hand_units;
	} else {
		s->n_units = 0;
		for (int32_t r = 0; c->hands && c->finger_size_px > 0 && r < tree->n_regions; r++)
			if (hand_candidate(c, tree, r, det))
				units_add(s, UNIT_HAND, r, tree->regions[r].area);
		sort_inplace(s->order, (size_t)s->n_units, sizeof *s->order, key_cmp);
	}
	hands->end = blobs->at = s->n_units;
	for (int32_t i = 0; c->contours && i < det->n_blobs; i++) {
		const struct blob_det *b = &det->blobs[i];
		if (b->region >= 0 && !(c->hands && c->finger_size_px > 0 && hand_candidate(c, tree, b->region, det)))
			units_add(s, UNIT_BLOB, i, 0);
	}
	blobs->end = fingers->at = s->n_units;
	for (int32_t i = 0; (c->contours || c->touch_sharpness > 0) && i < det->n_fingers; i++)
		if (det->fingers[i].region >= 0)
			units_add(s, UNIT_FINGER, i, 0);
	fingers->end = s->n_units;
}

static bool frame_fits(const struct outline *s, const struct region_tree *tree, const struct image_u8 *grey)
{
	return tree->width <= s->max_w && tree->height <= s->max_h && grey && grey->width == tree->width &&
	       grey->height == tree->height;
}

void outline_begin(struct outline *s, const struct region_tree *tree, const struct image_u8 *grey)
{
	outline_cancel(s);
	if (!s || s->n_tasks < 2 || !outline_needed(&s->cfg) || !s->cfg.hands || !(s->cfg.finger_size_px > 0) ||
	    !frame_fits(s, tree, grey))
		return;
	s->n_units = 0;
	for (int32_t r = 0; r < tree->n_regions; r++)
		if (hand_shape(&s->cfg, tree, r))
			units_add(s, UNIT_HAND, r, tree->regions[r].area);
	if (s->n_units == 0)
		return;
	sort_inplace(s->order, (size_t)s->n_units, sizeof *s->order, key_cmp);
	s->n_hand_units = s->n_units;
	s->tree = tree;
	s->grey = grey;
	s->det = NULL;
	atomic_store_explicit(&s->next_unit, 0, memory_order_relaxed);
	atomic_store_explicit(&s->published, s->n_units, memory_order_release);
	const int workers = s->n_tasks - 1;
	pool_start(s->pool, worker_task, s, s->n_units < workers ? s->n_units : workers);
	s->begun = true;
}

void outline_cancel(struct outline *s)
{
	if (!s || !s->begun)
		return;
	pool_wait(s->pool);
	s->begun = false;
}

int outline_process(struct outline *s, const struct region_tree *tree, const struct image_u8 *grey,
		    struct detections *det)
{
	if (!s || !outline_needed(&s->cfg) || !frame_fits(s, tree, grey)) {
		outline_cancel(s);
		return s && outline_needed(&s->cfg) ? ERR_SIZE : 0;
	}
	const struct outline_config *c = &s->cfg;
	struct tracer *o = s->t[0];
	const int32_t n_fingers0 = det->n_fingers;
	const bool measure = c->touch_sharpness > 0;

	/* The units run on the tasks where there are two or more; the merge
	 * below then copies their output in the order one thread makes it,
	 * and runs there whatever they did not run. After outline_begin() the
	 * workers have the hands already: the other units join them, and this
	 * thread takes what is left. */
	struct cursor hands = {0, 0}, blobs = {0, 0}, fingers = {0, 0};
	if (s->begun && s->tree == tree && s->grey == grey) {
		units_plan(s, tree, det, &hands, &blobs, &fingers);
		s->det = det;
		atomic_store_explicit(&s->published, s->n_units, memory_order_release);
		units_task(s, 0);
		outline_cancel(s);
	} else if (s->n_tasks > 1) {
		outline_cancel(s);
		units_plan(s, tree, det, &hands, &blobs, &fingers);
		if (s->n_units >= 2) {
			s->tree = tree;
			s->grey = grey;
			s->det = det;
			atomic_store_explicit(&s->next_unit, 0, memory_order_relaxed);
			atomic_store_explicit(&s->published, s->n_units, memory_order_relaxed);
			pool_run(s->pool, units_task, s, s->n_units < s->n_tasks ? s->n_units : s->n_tasks);
		} else {
			hands.end = blobs.end = fingers.end = 0;
		}
	}

	/* Fingers the matcher found: outline, sharpness. */
	for (int32_t i = 0; i < n_fingers0 && (c->contours || measure); i++) {
		struct finger_det *f = &det->fingers[i];
		if (f->region < 0)
			continue;
		const struct unit *u = unit_take(s, &fingers, i);
		if (u)
			copy_contours(s, u, det);
		else
			finger_unit(o, tree, grey, f, i, det);
	}

	/* Hands: big bright regions with fingertips at their ends. */
	float hand_box[4 * OUTLINE_MAX_HANDS];
	int32_t hand_index[OUTLINE_MAX_HANDS];
	int n_hands = 0;
	const float fs = c->finger_size_px;
	for (int32_t r = 0; c->hands && fs > 0 && r < tree->n_regions && n_hands < OUTLINE_MAX_HANDS; r++) {
		if (!hand_candidate(c, tree, r, det))
			continue;
		const struct unit *u = unit_take(s, &hands, r);
		const int32_t f0 = det->n_fingers, c0 = det->n_contours, p0 = det->n_points;
		int tips;
		/* Tips go in first with hand index -1, so a hand without tips
		 * leaves the blobs alone. A unit's tips are copied when the
		 * list has room for all of them (else hand_tips() stops where
		 * the list is full: run it here). */
		if (u && det->n_fingers + u->tips < det->cap_fingers) {
			tips = u->tips;
			if (tips == 0)
				continue;
			const struct detections *out = &s->t[u->task]->out;
			memcpy(&det->fingers[det->n_fingers], &out->fingers[u->f0], (size_t)tips * sizeof *det->fingers);
			det->n_fingers += tips;
			copy_contours(s, u, det);
		} else {
			tips = hand_unit(o, tree, grey, r, det);
		}
		if (tips == 0)
			continue;
		const struct region *g = &tree->regions[r];
		int32_t hb = hand_blob(tree, r, det);
		if (hb < 0) {
			det->n_fingers = f0;
			det->n_contours = c0;
			det->n_points = p0;
			break;
		}
		for (int32_t k = f0; k < det->n_fingers; k++) {
			det->fingers[k].hand = hb;
			det->fingers[k].hover = measure && det->fingers[k].sharpness < c->touch_sharpness;
			if (!measure)
				det->fingers[k].sharpness = 0;
		}
		for (int32_t k = c0; k < det->n_contours; k++)
			det->contours[k].owner = hb;
		hand_box[4 * n_hands + 0] = (float)g->x0;
		hand_box[4 * n_hands + 1] = (float)g->y0;
		hand_box[4 * n_hands + 2] = (float)g->x1;
		hand_box[4 * n_hands + 3] = (float)g->y1;
		hand_index[n_hands++] = hb;
	}
	if (n_hands)
		fingers_to_hands(det, n_fingers0, hand_box, n_hands, hand_index, fs);

	/* Blobs (hands done above). */
	for (int32_t i = 0; c->contours && i < det->n_blobs; i++) {
		const struct blob_det *b = &det->blobs[i];
		if (b->hand || b->region < 0)
			continue;
		const struct unit *u = unit_take(s, &blobs, i);
		if (u)
			copy_contours(s, u, det);
		else
			blob_unit(o, tree, grey, b, i, det);
	}
	return 0;
}
