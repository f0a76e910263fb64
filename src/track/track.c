#include "track.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "../core/sort.h"

#define TWO_PI 6.28318530717958647692f
#define PI_F 3.14159265358979323846f
/* When capture times are missing or out of order, assume a usual camera rate
 * rather than divide by zero. */
#define FALLBACK_DT_S (1.0 / 30.0)
/* Candidate pairs kept a frame per item: more than enough for any sane gate. */
#define PAIRS_PER_ITEM 16
#define CONFLICT_MAX_FRAMES 9

enum kind { KIND_OBJECT, KIND_FINGER, KIND_BLOB };

struct euro1 {
	float prev, dprev;
	bool init;
};

struct item {
	uint32_t session_id;  /* 0: finger/blob candidate, not yet reported */
	int32_t class_id;
	int age;              /* frames with a measurement (history) */
	int lost;             /* consecutive frames without one */
	bool matched;
	bool dead;
	uint8_t how;
	float mx, my, ma;     /* last raw measurement, px/rad */
	float x, y, a;        /* filtered estimate, px/rad */
	float vx, vy, va;     /* px/s, rad/s, for prediction */
	float px, py, pa;     /* this frame's prediction */
	int64_t t_seen;
	float size;           /* px: root side, finger diameter, blob long side */
	float w, h, area;     /* blobs */
	float roundness;
	/* symbol centre minus its root region's bbox centre, px, from the
	 * last decoded frame whose root was reported (objects) */
	float root_dx, root_dy;
	int32_t conflict_id;
	int conflict_n;
	bool conflict_seen;   /* a conflicting ID was decoded at its place this frame */
	struct euro1 fx, fy, fa;
	/* what was last reported */
	bool has_rep, moving, changed;
	float rx, ry, ra;     /* px/rad */
	int64_t t_rep;
	float X, Y, A, speed, m, r; /* reported units/s, turns/s, per s */
	float ox, oy, oa;     /* the reported pose: normalised, inverted, calibrated */
	/* blob geometry (px) at the last 2Dblb set, and whether one is due */
	float rw, rh, rarea;
	bool blob_changed;
	/* this frame's detection (-1 when not seen), touch and hand */
	int32_t det;
	bool touch_measured, hover, in_hand;
	int32_t hand_det;
};

struct pair {
	float d;
	int32_t det, item;
};

struct list {
	int32_t n;
	struct item *items;
};

struct track {
	struct track_config cfg;
	int32_t cap;
	uint32_t next_session;
	bool have_prev;
	int64_t t_prev_ns;
	bool overflow_logged;

	struct list objects, fingers, blobs;

	int32_t cap_pairs, n_pairs;
	struct pair *pairs;
	uint8_t *det_used;            /* cap entries */
	uint8_t *det_used2;           /* cap entries */

	struct tracked_object *out_objects;
	struct tracked_cursor *out_cursors;
	struct tracked_blob *out_blobs;
	struct tracked_contour *out_contours;
	struct tracked_point *out_points;
};

static float wrap_period(float a, float period)
{
	a = fmodf(a, period);
	if (a < 0)
		a += period;
	if (a >= period)
		a -= period;
	return a;
}

/* Whether (dx, dy) is shorter than r: the squares, where hypotf's call
 * and its care for overflow cost most of the roots' search (every root
 * against every symbol, every frame). */
static inline bool within(float dx, float dy, float r)
{
	return dx * dx + dy * dy < r * r;
}

/* Signed difference a - b folded into [-period/2, period/2). */
static float diff_period(float a, float b, float period)
{
	float d = wrap_period(a - b + 0.5f * period, period) - 0.5f * period;
	return d;
}

static float euro_alpha(float cutoff_hz, float dt)
{
	float tau = 1.0f / (TWO_PI * cutoff_hz);
	return 1.0f / (1.0f + tau / dt);
}

static float euro_step(struct euro1 *e, const struct one_euro_config *c, float v, float dt)
{
	if (!e->init) {
		e->prev = v;
		e->dprev = 0;
		e->init = true;
		return v;
	}
	float d = (v - e->prev) / dt;
	float dcut = c->d_cutoff_hz > 0 ? c->d_cutoff_hz : 1.0f;
	float ed = e->dprev + euro_alpha(dcut, dt) * (d - e->dprev);
	float mc = c->min_cutoff_hz > 0 ? c->min_cutoff_hz : 1.0f;
	float cutoff = mc + c->beta * fabsf(ed);
	float out = e->prev + euro_alpha(cutoff, dt) * (v - e->prev);
	e->prev = out;
	e->dprev = ed;
	return out;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	if (a->d != b->d)
		return a->d < b->d ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return a->det < b->det ? -1 : a->det > b->det;
}

static void pairs_add(struct track *t, int32_t det, int32_t item, float d)
{
	if (t->n_pairs >= t->cap_pairs) {
		log_once(&t->overflow_logged, LOG_WARN, "track: too many association candidates, some dropped");
		return;
	}
	t->pairs[t->n_pairs++] = (struct pair){ d, det, item };
}

/* Greedy nearest-first assignment: a global optimum is not worth its cost
 * when gates rarely overlap. The accepted pairs are left at the front of
 * t->pairs; returns their count. */
static int32_t pairs_assign(struct track *t, struct list *l, uint8_t *det_used)
{
	sort_inplace(t->pairs, (size_t)t->n_pairs, sizeof(*t->pairs), pair_cmp);
	int32_t kept = 0;
	for (int32_t k = 0; k < t->n_pairs; k++) {
		struct pair p = t->pairs[k];
		if (det_used[p.det] || l->items[p.item].matched)
			continue;
		det_used[p.det] = 1;
		l->items[p.item].matched = true;
		t->pairs[kept++] = p;
	}
	t->n_pairs = kept;
	return kept;
}

/* Prediction from the last measurement over the time since it: a lost item
 * keeps flying along its last velocity. */
static void list_predict(struct list *l, int64_t t_ns)
{
	for (int32_t i = 0; i < l->n; i++) {
		struct item *it = &l->items[i];
		float since = it->t_seen < t_ns ? (float)((double)(t_ns - it->t_seen) * 1e-9) : 0.0f;
		it->matched = false;
		it->px = it->mx + it->vx * since;
		it->py = it->my + it->vy * since;
		it->pa = it->ma + it->va * since;
	}
}

static const struct one_euro_config *kind_euro(const struct track *t, enum kind k)
{
	return k == KIND_OBJECT ? &t->cfg.euro_objects
	       : k == KIND_FINGER ? &t->cfg.euro_fingers
				   : &t->cfg.euro_blobs;
}

static float kind_period(enum kind k)
{
	return k == KIND_BLOB ? PI_F : TWO_PI;
}

/* A measurement of item `it` this frame. */
static void item_measure(struct track *t, struct item *it, enum kind k, float mx, float my, float ma,
			 int64_t t_ns, float dt)
{
	float period = kind_period(k);
	if (it->age > 0) {
		double dts = (double)(t_ns - it->t_seen) * 1e-9;
		if (!(dts > 0))
			dts = FALLBACK_DT_S;
		it->vx = (float)((mx - it->mx) / dts);
		it->vy = (float)((my - it->my) / dts);
		it->va = (float)(diff_period(ma, it->ma, period) / dts);
	}
	it->t_seen = t_ns;
	it->mx = mx;
	it->my = my;
	it->ma = wrap_period(ma, period);
	const struct one_euro_config *e = kind_euro(t, k);
	if (e->enabled) {
		/* The filter runs on an unwrapped angle near its last output. */
		float ua = it->fa.init ? it->fa.prev + diff_period(ma, it->fa.prev, period) : ma;
		it->x = euro_step(&it->fx, e, mx, dt);
		it->y = euro_step(&it->fy, e, my, dt);
		it->a = wrap_period(euro_step(&it->fa, e, ua, dt), period);
	} else {
		it->x = mx;
		it->y = my;
		it->a = it->ma;
	}
	it->age++;
	it->lost = 0;
}

static void item_init(struct item *it, int32_t class_id, float size)
{
	memset(it, 0, sizeof(*it));
	it->class_id = class_id;
	it->size = size;
	it->conflict_id = -1;
	it->det = -1;
}

static struct item *list_add(struct track *t, struct list *l)
{
	if (l->n >= t->cap) {
		log_once(&t->overflow_logged, LOG_WARN, "track: more than %d items, new ones dropped", t->cap);
		return NULL;
	}
	return &l->items[l->n++];
}

static void list_compact(struct list *l)
{
	int32_t k = 0;
	for (int32_t i = 0; i < l->n; i++)
		if (!l->items[i].dead)
			l->items[k++] = l->items[i];
	l->n = k;
}

/* Pixel position to reported (normalised, inverted, calibrated) position. */
static void report_position(const struct track *t, float px, float py, int width, int height,
			    float *ox, float *oy)
{
	float x = px / (float)width, y = py / (float)height;
	if (t->cfg.invert_x)
		x = ((float)width - 1.0f - px) / (float)width;
	if (t->cfg.invert_y)
		y = ((float)height - 1.0f - py) / (float)height;
	calib_map_apply(t->cfg.calib, &x, &y);
	const float top = 0.99999994f;
	*ox = x < 0 ? 0 : x > top ? top : x;
	*oy = y < 0 ? 0 : y > top ? top : y;
}

static float report_angle(const struct track *t, float a, float x, float y, float aspect, float period)
{
	if (period == TWO_PI)
		a = calib_map_angle(t->cfg.calib, x, y, a, aspect);
	if (t->cfg.invert_angle)
		a = period - a;
	return wrap_period(a, period);
}

/* The pose a client sees for the reported pixel pose (rx, ry, ra), with the
 * configuration of this frame (a reload may change inversion or the map). */
static void item_report_pose(const struct track *t, struct item *it, enum kind k, int width,
			     int height)
{
	report_position(t, it->rx, it->ry, width, height, &it->ox, &it->oy);
	it->oa = k == KIND_FINGER ? 0
				  : report_angle(t, it->ra, it->rx / (float)width, it->ry / (float)height,
						 (float)width / (float)height, kind_period(k));
}

/* The blob geometry a 2Dblb set carries: the blob's own box, or the owner's
 * square (objects) or circle (fingers) of side `size`. */
static void item_blob_size(const struct item *it, enum kind k, float *w, float *h, float *area)
{
	if (k == KIND_BLOB) {
		*w = it->w;
		*h = it->h;
		*area = it->area;
	} else {
		*w = *h = it->size;
		*area = it->size * it->size;
	}
}

/* Sides are integer bounding boxes for fingers and objects: a one-pixel
 * flicker is noise, so a side must change by more than the dead band and
 * more than a pixel. A measured area (blobs) by more than 5 %. */
static bool item_size_moved(const struct track *t, const struct item *it, enum kind k)
{
	float w, h, area;
	item_blob_size(it, k, &w, &h, &area);
	float band = fmaxf(t->cfg.dead_band_px, 1.0f);
	if (fabsf(w - it->rw) > band || fabsf(h - it->rh) > band)
		return true;
	return k == KIND_BLOB && fabsf(area - it->rarea) > 0.05f * it->rarea;
}

static void item_size_reported(struct item *it, enum kind k)
{
	item_blob_size(it, k, &it->rw, &it->rh, &it->rarea);
}

/* Dead band, "one last set when it stops", velocities and accelerations.
 * The dead band is in pixels; velocities are the change of the reported
 * (inverted, calibrated) pose, so a client integrating them follows the
 * positions it receives. Leaves the pose to report in it->ox, oy, oa. */
static void item_report(const struct track *t, struct item *it, enum kind k, int64_t t_ns, float dt,
			int width, int height)
{
	float period = kind_period(k);
	if (!it->has_rep) {
		it->rx = it->x;
		it->ry = it->y;
		it->ra = it->a;
		it->t_rep = t_ns;
		it->X = it->Y = it->A = it->speed = it->m = it->r = 0;
		it->has_rep = true;
		it->moving = false;
		it->changed = true;
		it->blob_changed = true;
		item_size_reported(it, k);
		item_report_pose(t, it, k, width, height);
		return;
	}
	float dx = it->x - it->rx, dy = it->y - it->ry;
	float da = k == KIND_FINGER ? 0 : diff_period(it->a, it->ra, period);
	bool move_pos = hypotf(dx, dy) >= t->cfg.dead_band_px;
	bool move_ang = k != KIND_FINGER && fabsf(da) >= t->cfg.dead_band_rad;
	bool move_size = item_size_moved(t, it, k);
	if (move_pos || move_ang) {
		double dtr = (double)(t_ns - it->t_rep) * 1e-9;
		if (!(dtr > 0))
			dtr = dt;
		item_report_pose(t, it, k, width, height);
		float ox0 = it->ox, oy0 = it->oy, oa0 = it->oa;
		if (move_pos) {
			it->rx = it->x;
			it->ry = it->y;
		}
		if (move_ang)
			it->ra = it->a;
		item_report_pose(t, it, k, width, height);
		float nX = (float)((it->ox - ox0) / dtr);
		float nY = (float)((it->oy - oy0) / dtr);
		float nA = k == KIND_FINGER ? 0 : (float)(diff_period(it->oa, oa0, period) / TWO_PI / dtr);
		float speed = hypotf(nX, nY);
		it->m = (float)((speed - it->speed) / dtr);
		it->r = (float)((nA - it->A) / dtr);
		it->X = nX;
		it->Y = nY;
		it->A = nA;
		it->speed = speed;
		it->t_rep = t_ns;
		it->moving = true;
		it->changed = true;
	} else if (it->moving) {
		it->m = -it->speed / dt;
		it->r = -it->A / dt;
		it->X = it->Y = it->A = it->speed = 0;
		it->t_rep = t_ns;
		it->moving = false;
		it->changed = true;
		item_report_pose(t, it, k, width, height);
	} else {
		it->m = it->r = 0;
		/* A blob that grows or shrinks in place is news for 2Dblb. */
		it->changed = k == KIND_BLOB && move_size;
		item_report_pose(t, it, k, width, height);
	}
	it->blob_changed = it->changed || move_size;
	if (it->blob_changed)
		item_size_reported(it, k);
}

static void config_sanitise(struct track_config *c)
{
	if (c->linger_frames < 0)
		c->linger_frames = 0;
	if (c->linger_frames > 10)
		c->linger_frames = 10;
	if (!(c->dead_band_px >= 0))
		c->dead_band_px = 0;
	if (!(c->dead_band_rad >= 0))
		c->dead_band_rad = 0;
}

struct track *track_create(const struct track_config *cfg, int *err)
{
	int rc = ERR_NOMEM;
	struct track *t = NULL;
	if (!cfg || cfg->max_items < 1 || cfg->max_items > 65536) {
		log_error("track: max_items must be 1..65536");
		rc = ERR_RANGE;
		goto fail;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->cfg = *cfg;
	config_sanitise(&t->cfg);
	t->cap = cfg->max_items;
	t->next_session = 1;
	size_t n = (size_t)t->cap;
	t->objects.items = calloc(n, sizeof(struct item));
	t->fingers.items = calloc(n, sizeof(struct item));
	t->blobs.items = calloc(n, sizeof(struct item));
	t->cap_pairs = t->cap * PAIRS_PER_ITEM;
	t->pairs = calloc((size_t)t->cap_pairs, sizeof(struct pair));
	t->det_used = calloc(n, 1);
	t->det_used2 = calloc(n, 1);
	t->out_objects = calloc(n, sizeof(*t->out_objects));
	t->out_cursors = calloc(n, sizeof(*t->out_cursors));
	t->out_blobs = calloc(n, sizeof(*t->out_blobs));
	if (!t->objects.items || !t->fingers.items || !t->blobs.items || !t->pairs || !t->det_used ||
	    !t->det_used2 || !t->out_objects || !t->out_cursors || !t->out_blobs)
		goto fail;
	if (cfg->max_contours > 0 && cfg->max_contour_points > 0) {
		t->out_contours = calloc((size_t)cfg->max_contours, sizeof(*t->out_contours));
		t->out_points = calloc((size_t)cfg->max_contour_points, sizeof(*t->out_points));
		if (!t->out_contours || !t->out_points)
			goto fail;
	}
	if (err)
		*err = 0;
	return t;
fail:
	track_destroy(t);
	if (err)
		*err = rc;
	return NULL;
}

void track_destroy(struct track *t)
{
	if (!t)
		return;
	free(t->objects.items);
	free(t->fingers.items);
	free(t->blobs.items);
	free(t->pairs);
	free(t->det_used);
	free(t->det_used2);
	free(t->out_objects);
	free(t->out_cursors);
	free(t->out_blobs);
	free(t->out_contours);
	free(t->out_points);
	free(t);
}

int track_set_config(struct track *t, const struct track_config *cfg)
{
	if (cfg->max_items != t->cap) {
		log_error("track: max_items cannot change while running (%d -> %d)", t->cap,
			  cfg->max_items);
		return ERR_RANGE;
	}
	if (cfg->max_contours != t->cfg.max_contours || cfg->max_contour_points != t->cfg.max_contour_points) {
		log_error("track: outline capacities cannot change while running");
		return ERR_RANGE;
	}
	t->cfg = *cfg;
	config_sanitise(&t->cfg);
	return 0;
}

void track_reset(struct track *t)
{
	t->objects.n = t->fingers.n = t->blobs.n = 0;
	t->have_prev = false;
}

static uint32_t session_new(struct track *t)
{
	uint32_t s = t->next_session++;
	if (t->next_session == 0)
		t->next_session = 1;
	return s;
}

/* The leaf-weighted centre of a symbol is not its root's bbox centre (a
 * few px on a 70 px symbol); remembered while the symbol is read, it puts
 * the root-carried object where the symbol is. */
static void root_offset_learn(struct item *it, const struct detections *det, const struct fiducial_det *f)
{
	if (f->root < 0)
		return;
	for (int32_t k = 0; k < det->n_roots; k++) {
		const struct root_det *r = &det->roots[k];
		if (r->region != f->root)
			continue;
		float dx = f->x - r->x, dy = f->y - r->y;
		if (hypotf(dx, dy) <= 0.25f * f->size_px) {
			it->root_dx = dx;
			it->root_dy = dy;
		}
		return;
	}
}

static void object_from_fid(struct track *t, struct item *it, const struct detections *det,
			    const struct fiducial_det *f, int64_t t_ns, float dt)
{
	item_init(it, f->id, f->size_px);
	it->session_id = session_new(t);
	it->how = TRACKED_DECODED;
	item_measure(t, it, KIND_OBJECT, f->x, f->y, f->angle, t_ns, dt);
	root_offset_learn(it, det, f);
}

/* ID-conflict threshold: a young object is corrected quickly, an old one
 * needs more evidence. */
static int conflict_frames(int age)
{
	int n = 3 + age / 10;
	return n > CONFLICT_MAX_FRAMES ? CONFLICT_MAX_FRAMES : n;
}

static void track_objects(struct track *t, const struct detections *det, int64_t t_ns, float dt)
{
	struct list *l = &t->objects;
	int32_t n_fids = det->n_fids < t->cap ? det->n_fids : t->cap;
	int32_t n_fuzzy = det->n_fuzzy < t->cap ? det->n_fuzzy : t->cap;
	int32_t n_roots = det->n_roots < t->cap ? det->n_roots : t->cap;

	list_predict(l, t_ns);
	for (int32_t i = 0; i < l->n; i++)
		l->items[i].conflict_seen = false;

	/* 1. decoded symbols, same ID, near the prediction */
	memset(t->det_used, 0, (size_t)t->cap);
	t->n_pairs = 0;
	for (int32_t d = 0; d < n_fids; d++) {
		const struct fiducial_det *f = &det->fids[d];
		for (int32_t i = 0; i < l->n; i++) {
			struct item *it = &l->items[i];
			if (it->class_id != f->id)
				continue;
			float gate = fmaxf(it->size, f->size_px);
			float dist = hypotf(f->x - it->px, f->y - it->py);
			if (dist <= gate)
				pairs_add(t, d, i, dist);
		}
	}
	int32_t n = pairs_assign(t, l, t->det_used);
	for (int32_t k = 0; k < n; k++) {
		struct item *it = &l->items[t->pairs[k].item];
		const struct fiducial_det *f = &det->fids[t->pairs[k].det];
		it->how = TRACKED_DECODED;
		it->size = f->size_px;
		item_measure(t, it, KIND_OBJECT, f->x, f->y, f->angle, t_ns, dt);
		root_offset_learn(it, det, f);
	}

	/* 2. another ID decoded at an unmatched object's place: a misread, or a
	 * new symbol put down where the old one was */
	t->n_pairs = 0;
	for (int32_t d = 0; d < n_fids; d++) {
		if (t->det_used[d])
			continue;
		const struct fiducial_det *f = &det->fids[d];
		for (int32_t i = 0; i < l->n; i++) {
			struct item *it = &l->items[i];
			if (it->matched)
				continue;
			const float dx = f->x - it->px, dy = f->y - it->py, gate = 0.5f * fmaxf(it->size, f->size_px);
			if (dx * dx + dy * dy <= gate * gate)
				pairs_add(t, d, i, hypotf(dx, dy));
		}
	}
	n = pairs_assign(t, l, t->det_used);
	for (int32_t k = 0; k < n; k++) {
		struct item *it = &l->items[t->pairs[k].item];
		const struct fiducial_det *f = &det->fids[t->pairs[k].det];
		if (it->conflict_id == f->id)
			it->conflict_n++;
		else {
			it->conflict_id = f->id;
			it->conflict_n = 1;
		}
		it->conflict_seen = true;
		/* A misread flickers on a symbol in view; another ID where a lost
		 * object was is a new symbol put down in its place. */
		if (it->lost > 0 || it->conflict_n >= conflict_frames(it->age)) {
			object_from_fid(t, it, det, f, t_ns, dt);
			it->matched = true;
			continue;
		}
		it->how = TRACKED_FUZZY;
		it->size = f->size_px;
		item_measure(t, it, KIND_OBJECT, f->x, f->y, it->ma, t_ns, dt);
	}

	/* 3. fuzzy symbols keep known objects (never create one) */
	memset(t->det_used2, 0, (size_t)t->cap);
	t->n_pairs = 0;
	for (int32_t d = 0; d < n_fuzzy; d++) {
		const struct fiducial_det *f = &det->fuzzy[d];
		for (int32_t i = 0; i < l->n; i++) {
			struct item *it = &l->items[i];
			/* A damaged tree revives an object missed for one frame, not
			 * one that has been gone for longer. */
			if (it->matched || it->lost > 1)
				continue;
			float dist = hypotf(f->x - it->px, f->y - it->py);
			if (dist <= it->size)
				pairs_add(t, d, i, dist);
		}
	}
	n = pairs_assign(t, l, t->det_used2);
	for (int32_t k = 0; k < n; k++) {
		struct item *it = &l->items[t->pairs[k].item];
		const struct fiducial_det *f = &det->fuzzy[t->pairs[k].det];
		/* A damaged tree's angle is only trusted when it agrees with the
		 * prediction. */
		float a = fabsf(diff_period(f->angle, it->pa, TWO_PI)) < 0.35f ? f->angle : it->ma;
		it->how = TRACKED_FUZZY;
		item_measure(t, it, KIND_OBJECT, f->x, f->y, a, t_ns, dt);
	}

	/* 4. a root region of about the object's size carries it, angle kept;
	 * only an object seen last frame and not matched yet can be carried
	 * (mostly none: the roots' loop below is the step's largest) */
	memset(t->det_used2, 0, (size_t)t->cap);
	t->n_pairs = 0;
	bool carried = false;
	for (int32_t i = 0; i < l->n && !carried; i++)
		carried = !l->items[i].matched && l->items[i].lost == 0;
	for (int32_t d = 0; carried && d < n_roots; d++) {
		const struct root_det *r = &det->roots[d];
		/* The root of a symbol read this frame, or the white card around
		 * it, belongs to that symbol. */
		bool taken = false;
		for (int32_t k = 0; k < det->n_fids && !taken; k++) {
			const struct fiducial_det *f = &det->fids[k];
			taken = f->root == r->region || within(f->x - r->x, f->y - r->y, 0.5f * f->size_px);
		}
		for (int32_t k = 0; k < det->n_fuzzy && !taken; k++) {
			const struct fiducial_det *f = &det->fuzzy[k];
			taken = f->root == r->region || within(f->x - r->x, f->y - r->y, 0.5f * f->size_px);
		}
		if (taken)
			continue;
		for (int32_t i = 0; i < l->n; i++) {
			struct item *it = &l->items[i];
			/* A bare white square is weak evidence: it only carries an
			 * object that was seen in the previous frame. */
			if (it->matched || it->lost > 0)
				continue;
			float ratio = r->size_px / fmaxf(it->size, 1.0f);
			if (ratio < 0.67f || ratio > 1.5f)
				continue;
			float dist = hypotf(r->x + it->root_dx - it->px, r->y + it->root_dy - it->py);
			if (dist <= 0.75f * it->size)
				pairs_add(t, d, i, dist);
		}
	}
	n = pairs_assign(t, l, t->det_used2);
	for (int32_t k = 0; k < n; k++) {
		struct item *it = &l->items[t->pairs[k].item];
		const struct root_det *r = &det->roots[t->pairs[k].det];
		it->how = TRACKED_ROOT;
		item_measure(t, it, KIND_OBJECT, r->x + it->root_dx, r->y + it->root_dy, it->ma, t_ns, dt);
	}

	for (int32_t i = 0; i < l->n; i++) {
		struct item *it = &l->items[i];
		if (!it->conflict_seen) {
			it->conflict_id = -1;
			it->conflict_n = 0;
		}
		if (it->matched)
			continue;
		/* 5. lost: linger at the prediction, then go */
		it->lost++;
		if (it->lost > t->cfg.linger_frames) {
			it->dead = true;
			continue;
		}
		it->how = TRACKED_PREDICTED;
		it->x = it->px;
		it->y = it->py;
		it->a = wrap_period(it->pa, TWO_PI);
	}
	list_compact(l);

	/* 6. new objects from the decoded symbols nobody claimed */
	for (int32_t d = 0; d < n_fids; d++) {
		if (t->det_used[d])
			continue;
		struct item *it = list_add(t, l);
		if (!it)
			break;
		object_from_fid(t, it, det, &det->fids[d], t_ns, dt);
	}
}

/* A blob on a known object's card: its centre within half the object's
 * size of the object's position this frame (decoded, carried or lingering)
 * and its long side at most BLOB_CARD_MAX sizes. The matcher drops the cards
 * of the symbols its own scale read; this catches those read only by the
 * second scale or not read this frame at all. */
#define BLOB_CARD_MAX 2.0f

static bool blob_on_object(const struct track *t, const struct blob_det *b)
{
	float side = fmaxf(b->w, b->h);
	for (int32_t i = 0; i < t->objects.n; i++) {
		const struct item *o = &t->objects.items[i];
		if (side <= BLOB_CARD_MAX * o->size && hypotf(b->x - o->x, b->y - o->y) <= 0.5f * o->size)
			return true;
	}
	return false;
}

/* Touch state and hand of a finger from its detection; a change between
 * touching and hovering starts a new session (track.h, 7). */
static void finger_touch(struct track *t, struct item *it, const struct finger_det *f)
{
	bool measured = f->sharpness > 0;
	if (it->session_id != 0 && f->hover != it->hover) {
		it->session_id = session_new(t);
		it->has_rep = false;
	}
	it->touch_measured = measured;
	it->hover = f->hover;
	it->in_hand = f->in_hand;
	it->hand_det = f->hand;
}

/* Fingers and blobs: nearest neighbour, one-frame debounce, gone at once. */
static void track_simple(struct track *t, enum kind k, const struct detections *det, int64_t t_ns,
			 float dt)
{
	struct list *l = k == KIND_FINGER ? &t->fingers : &t->blobs;
	int32_t n_det = k == KIND_FINGER ? det->n_fingers : det->n_blobs;
	if (n_det > t->cap)
		n_det = t->cap;

	list_predict(l, t_ns);
	for (int32_t i = 0; i < l->n; i++)
		l->items[i].det = -1;
	memset(t->det_used, 0, (size_t)t->cap);
	/* det_used2: blob detections that are a tracked symbol's card, neither
	 * matched nor made into blobs (objects are tracked before blobs). */
	memset(t->det_used2, 0, (size_t)t->cap);
	for (int32_t d = 0; k == KIND_BLOB && d < n_det; d++)
		t->det_used2[d] = blob_on_object(t, &det->blobs[d]);
	t->n_pairs = 0;
	for (int32_t d = 0; d < n_det; d++) {
		float x, y, size;
		if (t->det_used2[d])
			continue;
		if (k == KIND_FINGER) {
			x = det->fingers[d].x;
			y = det->fingers[d].y;
			size = det->fingers[d].diameter_px;
		} else {
			x = det->blobs[d].x;
			y = det->blobs[d].y;
			size = det->blobs[d].w;
		}
		for (int32_t i = 0; i < l->n; i++) {
			struct item *it = &l->items[i];
			float gate = 2.0f * fmaxf(size, it->size);
			float dist = hypotf(x - it->px, y - it->py);
			if (dist <= gate)
				pairs_add(t, d, i, dist);
		}
	}
	int32_t n = pairs_assign(t, l, t->det_used);
	for (int32_t p = 0; p < n; p++) {
		struct item *it = &l->items[t->pairs[p].item];
		int32_t d = t->pairs[p].det;
		it->det = d;
		if (k == KIND_FINGER) {
			const struct finger_det *f = &det->fingers[d];
			it->size = f->diameter_px;
			it->roundness = f->roundness;
			item_measure(t, it, k, f->x, f->y, 0, t_ns, dt);
			finger_touch(t, it, f);
		} else {
			const struct blob_det *b = &det->blobs[d];
			it->size = b->w;
			it->w = b->w;
			it->h = b->h;
			it->area = b->area_px;
			item_measure(t, it, k, b->x, b->y, b->angle, t_ns, dt);
		}
		if (it->session_id == 0 && it->age >= 2)
			it->session_id = session_new(t);
	}
	for (int32_t i = 0; i < l->n; i++)
		if (!l->items[i].matched)
			l->items[i].dead = true;
	list_compact(l);

	for (int32_t d = 0; d < n_det; d++) {
		if (t->det_used[d] || t->det_used2[d])
			continue;
		if (k == KIND_FINGER && det->fingers[d].roundness < t->cfg.finger_new_roundness)
			continue;
		struct item *it = list_add(t, l);
		if (!it)
			break;
		if (k == KIND_FINGER) {
			const struct finger_det *f = &det->fingers[d];
			item_init(it, -1, f->diameter_px);
			it->det = d;
			it->roundness = f->roundness;
			item_measure(t, it, k, f->x, f->y, 0, t_ns, dt);
			finger_touch(t, it, f);
		} else {
			const struct blob_det *b = &det->blobs[d];
			item_init(it, -1, b->w);
			it->det = d;
			it->w = b->w;
			it->h = b->h;
			it->area = b->area_px;
			item_measure(t, it, k, b->x, b->y, b->angle, t_ns, dt);
		}
	}
}

/* The session of the blob tracked from the finger's hand this frame. */
static uint32_t finger_hand_session(const struct track *t, const struct item *f)
{
	if (!f->in_hand || f->det < 0)
		return 0;
	for (int32_t i = 0; i < t->blobs.n; i++)
		if (t->blobs.items[i].det == f->hand_det)
			return t->blobs.items[i].session_id;
	return 0;
}

/* The reported session of the item matched to detection d this frame, 0
 * when none (track.h, 7). */
static uint32_t det_session(const struct track *t, uint8_t kind, int32_t d)
{
	const struct list *l = kind == CONTOUR_FINGER ? &t->fingers : &t->blobs;
	for (int32_t i = 0; i < l->n; i++) {
		const struct item *it = &l->items[i];
		if (it->det != d)
			continue;
		if (kind == CONTOUR_FINGER && it->hover && !t->cfg.hover_out)
			return 0;
		return it->session_id;
	}
	return 0;
}

static void contours_out(const struct track *t, const struct detections *det, struct tracked_state *out,
			 int width, int height)
{
	int32_t nc = 0, np = 0;
	for (int32_t c = 0; t->out_contours && c < det->n_contours && nc < t->cfg.max_contours; c++) {
		const struct contour_det *cd = &det->contours[c];
		uint32_t sid = det_session(t, cd->owner_kind, cd->owner);
		if (sid == 0 || np + cd->n > t->cfg.max_contour_points)
			continue;
		struct tracked_contour *tc = &t->out_contours[nc++];
		tc->session_id = sid;
		tc->hole = cd->hole;
		tc->first = np;
		tc->n = cd->n;
		for (int32_t i = 0; i < cd->n; i++) {
			const struct contour_point *p = &det->points[cd->first + i];
			struct tracked_point *q = &t->out_points[np++];
			report_position(t, p->x, p->y, width, height, &q->x, &q->y);
		}
	}
	out->n_contours = nc;
	out->contours = t->out_contours;
	out->contour_points = t->out_points;
}

int track_process(struct track *t, const struct detections *det, uint64_t frame, int64_t t_ns,
		  struct tracked_state *out)
{
	if (!t || !det || !out)
		return ERR_RANGE;
	if (det->width <= 0 || det->height <= 0) {
		log_error("track: detections without a frame size");
		return ERR_RANGE;
	}
	int width = det->width, height = det->height;
	double dtd = t->have_prev ? (double)(t_ns - t->t_prev_ns) * 1e-9 : FALLBACK_DT_S;
	if (!(dtd > 0))
		dtd = FALLBACK_DT_S;
	float dt = (float)dtd;
	t->have_prev = true;
	t->t_prev_ns = t_ns;

	track_objects(t, det, t_ns, dt);
	track_simple(t, KIND_FINGER, det, t_ns, dt);
	track_simple(t, KIND_BLOB, det, t_ns, dt);

	int32_t n_out = 0;
	for (int32_t i = 0; i < t->objects.n; i++) {
		struct item *it = &t->objects.items[i];
		item_report(t, it, KIND_OBJECT, t_ns, dt, width, height);
		struct tracked_object *o = &t->out_objects[n_out++];
		o->session_id = it->session_id;
		o->class_id = it->class_id;
		o->x = it->ox;
		o->y = it->oy;
		o->angle = it->oa;
		o->X = it->X;
		o->Y = it->Y;
		o->A = it->A;
		o->m = it->m;
		o->r = it->r;
		o->changed = it->changed;
		o->how = it->how;
		o->size = it->size / (float)width;
	}
	out->n_objects = n_out;

	/* Touching fingers first, then (hover_out) the hovering ones. */
	n_out = 0;
	int32_t n_touch = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < t->fingers.n; i++) {
			struct item *it = &t->fingers.items[i];
			if (it->session_id == 0 || it->hover != (pass == 1) || (pass == 1 && !t->cfg.hover_out))
				continue;
			item_report(t, it, KIND_FINGER, t_ns, dt, width, height);
			struct tracked_cursor *c = &t->out_cursors[n_out++];
			c->session_id = it->session_id;
			c->x = it->ox;
			c->y = it->oy;
			c->X = it->X;
			c->Y = it->Y;
			c->m = it->m;
			c->changed = it->changed;
			c->diameter = it->size / (float)width;
			c->touch_measured = it->touch_measured;
			c->hover = it->hover;
			c->hand_session = finger_hand_session(t, it);
		}
		if (pass == 0)
			n_touch = n_out;
	}
	out->n_cursors = n_touch;
	out->n_hover = n_out - n_touch;

	n_out = 0;
	for (int32_t i = 0; i < t->blobs.n; i++) {
		struct item *it = &t->blobs.items[i];
		if (it->session_id == 0)
			continue;
		item_report(t, it, KIND_BLOB, t_ns, dt, width, height);
		struct tracked_blob *b = &t->out_blobs[n_out++];
		b->session_id = it->session_id;
		b->x = it->ox;
		b->y = it->oy;
		b->angle = it->oa;
		b->w = it->w / (float)width;
		b->h = it->h / (float)height;
		b->area = it->area / ((float)width * (float)height);
		b->X = it->X;
		b->Y = it->Y;
		b->A = it->A;
		b->m = it->m;
		b->r = it->r;
		b->changed = it->changed;
	}
	/* Owners' blobs: same session, position and motion as the owner; a set
	 * also when only the owner's size changed. The reported objects are
	 * t->objects in order; the cursors are the fingers with a session. */
	for (int32_t i = 0; t->cfg.blobs_for_objects && i < out->n_objects && n_out < t->cfg.max_items; i++) {
		const struct tracked_object *o = &t->out_objects[i];
		float side = o->size * (float)width;
		struct tracked_blob *b = &t->out_blobs[n_out++];
		*b = (struct tracked_blob){.session_id = o->session_id, .x = o->x, .y = o->y,
					   .angle = fmodf(o->angle, PI_F), .w = side / (float)width,
					   .h = side / (float)height,
					   .area = side * side / ((float)width * (float)height),
					   .X = o->X, .Y = o->Y, .A = o->A, .m = o->m, .r = o->r,
					   .changed = t->objects.items[i].blob_changed};
	}
	for (int32_t i = 0, c_i = 0;
	     t->cfg.blobs_for_fingers && i < t->fingers.n && n_out < t->cfg.max_items; i++) {
		const struct item *it = &t->fingers.items[i];
		if (it->session_id == 0 || it->hover)
			continue;
		const struct tracked_cursor *c = &t->out_cursors[c_i++];
		float d = c->diameter * (float)width;
		struct tracked_blob *b = &t->out_blobs[n_out++];
		*b = (struct tracked_blob){.session_id = c->session_id, .x = c->x, .y = c->y, .angle = 0.0f,
					   .w = d / (float)width, .h = d / (float)height,
					   .area = PI_F * d * d / 4.0f / ((float)width * (float)height),
					   .X = c->X, .Y = c->Y, .m = c->m, .changed = it->blob_changed};
	}
	out->n_blobs = n_out;
	contours_out(t, det, out, width, height);

	out->frame = frame;
	out->t_capture_ns = t_ns;
	out->width = width;
	out->height = height;
	out->objects = t->out_objects;
	out->cursors = t->out_cursors;
	out->blobs = t->out_blobs;
	return 0;
}
