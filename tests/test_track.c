/* test_track.c - the tracker on synthetic detection sequences: fuzzy and
 * root-region tracking, finger debounce, dead band and the last zero-velocity
 * set, ID conflicts, session IDs, lingering, velocities, inversion,
 * velocities through inversion and calibration, blob size changes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "../src/core/detect.h"
#include "../src/core/err.h"
#include "../src/core/tracked.h"
#include "../src/track/track.h"
#include "common/testutil.h"

#define W 640
#define H 480
#define FRAME_NS 33333333LL
#define FPS (1e9 / (double)FRAME_NS)

struct fixture {
	struct track *t;
	struct detections d;
	struct tracked_state s;
	uint64_t frame;
};

static struct track_config default_config(void)
{
	struct track_config c;
	memset(&c, 0, sizeof(c));
	c.max_items = 32;
	c.linger_frames = 2;
	c.dead_band_px = 0.5f;
	c.dead_band_rad = 0.5f * (float)M_PI / 180.0f;
	return c;
}

static int setup_with(void **state, const struct track_config *c)
{
	static struct fixture f;
	memset(&f, 0, sizeof(f));
	int err = 0;
	f.t = track_create(c, &err);
	assert_non_null(f.t);
	assert_int_equal(err, 0);
	assert_int_equal(detections_alloc(&f.d, 64), 0);
	f.d.width = W;
	f.d.height = H;
	*state = &f;
	return 0;
}

static int setup(void **state)
{
	struct track_config c = default_config();
	return setup_with(state, &c);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	track_destroy(f->t);
	detections_free(&f->d);
	return 0;
}

static void add_fid(struct fixture *f, int id, float x, float y, float a)
{
	struct fiducial_det *d = &f->d.fids[f->d.n_fids++];
	*d = (struct fiducial_det){ .id = id, .x = x, .y = y, .angle = a, .size_px = 60, .root = 1000 + id, .n_nodes = 19 };
}

static void add_fuzzy(struct fixture *f, float x, float y, float a)
{
	struct fiducial_det *d = &f->d.fuzzy[f->d.n_fuzzy++];
	*d = (struct fiducial_det){ .id = -1, .x = x, .y = y, .angle = a, .size_px = 60, .root = 2000 + f->d.n_fuzzy, .n_nodes = 17 };
}

static void add_root(struct fixture *f, float x, float y, float size)
{
	struct root_det *d = &f->d.roots[f->d.n_roots++];
	*d = (struct root_det){ .x = x, .y = y, .size_px = size, .region = 3000 + f->d.n_roots };
}

static void add_finger(struct fixture *f, float x, float y)
{
	struct finger_det *d = &f->d.fingers[f->d.n_fingers++];
	*d = (struct finger_det){ .x = x, .y = y, .diameter_px = 18, .roundness = 0.9f, .contrast = 80, .region = 4000 + f->d.n_fingers };
}

static void add_blob(struct fixture *f, float x, float y, float angle)
{
	struct blob_det *d = &f->d.blobs[f->d.n_blobs++];
	*d = (struct blob_det){ .x = x, .y = y, .angle = angle, .w = 40, .h = 20, .area_px = 600, .region = 5000 + f->d.n_blobs };
}

/* Runs the tracker on what was added since the last step, then clears. */
static void step(struct fixture *f)
{
	assert_int_equal(track_process(f->t, &f->d, f->frame, (int64_t)(f->frame + 1) * FRAME_NS, &f->s), 0);
	f->frame++;
	detections_clear(&f->d);
	f->d.width = W;
	f->d.height = H;
}

static const struct tracked_object *only_object(const struct fixture *f)
{
	assert_int_equal(f->s.n_objects, 1);
	return &f->s.objects[0];
}

static void test_fuzzy_and_root_keep_fast_symbol(void **state)
{
	struct fixture *f = *state;
	const float vx = 25; /* px a frame: fast */
	float x = 100, y = 200;
	for (int i = 0; i < 3; i++, x += vx) {
		add_fid(f, 5, x, y, 1.0f);
		step(f);
	}
	const uint32_t sid = only_object(f)->session_id;
	/* only a damaged tree, where the prediction says, angle off by a bit */
	add_fuzzy(f, x + 2, y - 1, 1.05f);
	step(f);
	assert_int_equal(only_object(f)->session_id, sid);
	assert_int_equal(only_object(f)->class_id, 5);
	assert_int_equal(only_object(f)->how, TRACKED_FUZZY);
	assert_float_equal(only_object(f)->x, (x + 2) / W, 1e-4);
	x += vx;
	/* only the root region, plus an unrelated small white square elsewhere */
	add_root(f, x, y, 58);
	add_root(f, 500, 400, 20);
	step(f);
	assert_int_equal(only_object(f)->session_id, sid);
	assert_int_equal(only_object(f)->how, TRACKED_ROOT);
	assert_float_equal(only_object(f)->x, x / W, 1e-4);
	/* angle kept (1.05 was trusted: close to the prediction) */
	assert_float_equal(only_object(f)->angle, 1.05f, 1e-3);
	x += vx;
	add_fid(f, 5, x, y, 1.0f);
	step(f);
	assert_int_equal(only_object(f)->session_id, sid);
	assert_int_equal(only_object(f)->how, TRACKED_DECODED);
}

/* The matcher reads a symbol for 10 frames, then motion blur destroys its
 * tree for 10 (only its root region, a white ring or square, is left), then
 * it is read again: one session all along, placed where the symbol is (the
 * root's bbox centre plus the offset learnt while it was read), carried by
 * the prediction along its 7 px a frame. */
static void test_root_carries_through_motion_blur(void **state)
{
	struct fixture *f = *state;
	const float vx = 5, vy = -5, dx = 3.5f, dy = -2.5f;
	float x = 200, y = 300;
	uint32_t sid = 0;
	for (int i = 0; i < 30; i++, x += vx, y += vy) {
		if (i < 10 || i >= 20) {
			add_fid(f, 7, x, y, 2.0f);
			/* its root region, reported by the matcher as well */
			struct root_det *r = &f->d.roots[f->d.n_roots++];
			*r = (struct root_det){ .x = x - dx, .y = y - dy, .size_px = 62, .region = 1007 };
		} else {
			/* the streaked root (a new region each frame), a little larger,
			 * and another white square farther away than the gate */
			add_root(f, x - dx, y - dy, 68);
			add_root(f, x + 50, y, 60);
		}
		step(f);
		const struct tracked_object *o = only_object(f);
		if (i == 0)
			sid = o->session_id;
		assert_int_equal(o->session_id, sid);
		assert_int_equal(o->class_id, 7);
		assert_int_equal(o->how, i >= 10 && i < 20 ? TRACKED_ROOT : TRACKED_DECODED);
		assert_float_equal(o->x * W, x, 0.05);
		assert_float_equal(o->y * H, y, 0.05);
		assert_float_equal(o->angle, 2.0f, 1e-3);
	}
}

static void test_fuzzy_and_root_never_create(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 5; i++) {
		add_fuzzy(f, 100, 100, 0);
		add_root(f, 300, 300, 60);
		step(f);
		assert_int_equal(f->s.n_objects, 0);
	}
	/* A fuzzy tree far from a known object does not carry it. */
	add_fid(f, 3, 100, 100, 0);
	step(f);
	add_fuzzy(f, 400, 300, 0);
	step(f);
	assert_int_equal(only_object(f)->how, TRACKED_PREDICTED);
}

static void test_finger_tap(void **state)
{
	struct fixture *f = *state;
	add_finger(f, 200, 150);
	step(f);
	assert_int_equal(f->s.n_cursors, 0); /* debounced */
	add_finger(f, 201, 150);
	step(f);
	assert_int_equal(f->s.n_cursors, 1);
	assert_true(f->s.cursors[0].changed);
	assert_float_equal(f->s.cursors[0].x, 201.0f / W, 1e-5);
	assert_float_equal(f->s.cursors[0].diameter, 18.0f / W, 1e-5);
	step(f);
	assert_int_equal(f->s.n_cursors, 0); /* gone at once */
	/* A one-frame glint is never reported. */
	add_finger(f, 50, 50);
	step(f);
	step(f);
	add_finger(f, 50, 50);
	step(f);
	assert_int_equal(f->s.n_cursors, 0);
}

static void test_two_fingers_nearest_neighbour(void **state)
{
	struct fixture *f = *state;
	float ax = 100, bx = 160;
	for (int i = 0; i < 3; i++) {
		add_finger(f, bx, 100);
		add_finger(f, ax, 100);
		step(f);
		ax += 4;
		bx -= 4;
	}
	assert_int_equal(f->s.n_cursors, 2);
	uint32_t sa = 0, sb = 0;
	for (int i = 0; i < 2; i++) {
		if (f->s.cursors[i].x < 130.0f / W)
			sa = f->s.cursors[i].session_id;
		else
			sb = f->s.cursors[i].session_id;
	}
	assert_true(sa && sb && sa != sb);
	for (int i = 0; i < 3; i++) {
		add_finger(f, ax, 100);
		add_finger(f, bx, 100);
		step(f);
		ax += 4;
		bx -= 4;
	}
	for (int i = 0; i < 2; i++) {
		if (f->s.cursors[i].session_id == sa)
			assert_true(f->s.cursors[i].x < 130.0f / W);
		else
			assert_int_equal(f->s.cursors[i].session_id, sb);
	}
}

static void test_resting_object_no_jitter(void **state)
{
	struct fixture *f = *state;
	uint32_t rng = 12345;
	int sets = 0;
	for (int i = 0; i < 30; i++) {
		float nx = ((float)(test_rand(&rng) % 1000) / 1000.0f - 0.5f) * 0.4f;
		float ny = ((float)(test_rand(&rng) % 1000) / 1000.0f - 0.5f) * 0.4f;
		float na = ((float)(test_rand(&rng) % 1000) / 1000.0f - 0.5f) * 0.4f * (float)M_PI / 180.0f;
		add_fid(f, 1, 320 + nx, 240 + ny, 2.0f + na);
		step(f);
		if (only_object(f)->changed)
			sets++;
		if (i > 0) {
			assert_false(only_object(f)->changed);
			assert_true(only_object(f)->X == 0 && only_object(f)->Y == 0 && only_object(f)->A == 0);
		}
	}
	assert_int_equal(sets, 1);
	/* Moving: a set every frame, then exactly one set with zero velocity. */
	float x = 320;
	for (int i = 0; i < 4; i++) {
		x += 3;
		add_fid(f, 1, x, 240, 2.0f);
		step(f);
		assert_true(only_object(f)->changed);
		assert_true(only_object(f)->X > 0);
	}
	add_fid(f, 1, x, 240, 2.0f);
	step(f);
	assert_true(only_object(f)->changed);
	assert_true(only_object(f)->X == 0 && only_object(f)->Y == 0);
	assert_true(only_object(f)->m < 0); /* it slowed down */
	for (int i = 0; i < 3; i++) {
		add_fid(f, 1, x + 0.1f, 240, 2.0f);
		step(f);
		assert_false(only_object(f)->changed);
	}
}

static void test_id_flicker(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 20; i++) {
		add_fid(f, 7, 300, 200, 0.5f);
		step(f);
	}
	const uint32_t sid = only_object(f)->session_id;
	add_fid(f, 8, 300.5f, 200, 0.5f); /* one odd frame */
	step(f);
	assert_int_equal(only_object(f)->class_id, 7);
	assert_int_equal(only_object(f)->session_id, sid);
	for (int i = 0; i < 5; i++) {
		add_fid(f, 7, 300, 200, 0.5f);
		step(f);
		assert_int_equal(only_object(f)->class_id, 7);
		assert_int_equal(only_object(f)->session_id, sid);
	}
	/* Two odd frames, then back: still 7. */
	add_fid(f, 8, 300, 200, 0.5f);
	step(f);
	add_fid(f, 8, 300, 200, 0.5f);
	step(f);
	add_fid(f, 7, 300, 200, 0.5f);
	step(f);
	assert_int_equal(only_object(f)->class_id, 7);
	assert_int_equal(only_object(f)->session_id, sid);
	/* Persistent: replaced within the cap of 9 frames, by a new session. */
	int switched_at = -1;
	for (int i = 0; i < 12; i++) {
		add_fid(f, 8, 300, 200, 0.5f);
		step(f);
		if (only_object(f)->class_id == 8 && switched_at < 0) {
			switched_at = i;
			assert_int_not_equal(only_object(f)->session_id, sid);
			assert_true(only_object(f)->changed);
		}
	}
	assert_true(switched_at >= 1 && switched_at < 9);
}

static void test_young_object_corrected_quickly(void **state)
{
	struct fixture *f = *state;
	add_fid(f, 4, 300, 200, 0);
	step(f);
	int switched_at = -1;
	for (int i = 0; i < 6 && switched_at < 0; i++) {
		add_fid(f, 9, 300, 200, 0);
		step(f);
		if (only_object(f)->class_id == 9)
			switched_at = i;
	}
	assert_true(switched_at >= 1 && switched_at <= 3);
}

static void test_sessions_unique_never_reused(void **state)
{
	struct fixture *f = *state;
	uint32_t seen[64];
	int n_seen = 0;
	for (int round = 0; round < 3; round++) {
		for (int k = 0; k < 2; k++) {
			add_fid(f, 10 + round, 100, 100, 0);
			add_finger(f, 300, 300);
			add_blob(f, 500, 100, 0.3f);
			step(f);
		}
		assert_int_equal(f->s.n_objects, 1);
		assert_int_equal(f->s.n_cursors, 1);
		assert_int_equal(f->s.n_blobs, 1);
		uint32_t ids[3] = { f->s.objects[0].session_id, f->s.cursors[0].session_id,
				    f->s.blobs[0].session_id };
		for (int i = 0; i < 3; i++) {
			for (int j = 0; j < n_seen; j++)
				assert_int_not_equal(ids[i], seen[j]);
			seen[n_seen++] = ids[i];
		}
		/* Everything goes away (objects after lingering). */
		for (int k = 0; k < 4; k++)
			step(f);
		assert_int_equal(f->s.n_objects + f->s.n_cursors + f->s.n_blobs, 0);
		if (round == 1)
			track_reset(f->t);
	}
	assert_int_equal(n_seen, 9);
}

static void test_linger(void **state)
{
	struct fixture *f = *state;
	float x = 100;
	for (int i = 0; i < 4; i++, x += 10) {
		add_fid(f, 2, x, 100, 0);
		step(f);
	}
	const uint32_t sid = only_object(f)->session_id;
	/* last seen at x - 10; lost for linger_frames frames, kept at the prediction */
	for (int i = 1; i <= 2; i++) {
		step(f);
		assert_int_equal(only_object(f)->session_id, sid);
		assert_int_equal(only_object(f)->how, TRACKED_PREDICTED);
		assert_float_equal(only_object(f)->x, (x - 10 + 10.0f * (float)i) / W, 1e-3);
	}
	step(f);
	assert_int_equal(f->s.n_objects, 0);
	/* Found again while lingering: same session. */
	for (int i = 0; i < 3; i++) {
		add_fid(f, 2, 200, 100, 0);
		step(f);
	}
	const uint32_t sid2 = only_object(f)->session_id;
	assert_int_not_equal(sid2, sid);
	step(f);
	add_fid(f, 2, 200, 100, 0);
	step(f);
	assert_int_equal(only_object(f)->session_id, sid2);
	assert_int_equal(only_object(f)->how, TRACKED_DECODED);
}

static void test_velocity(void **state)
{
	struct fixture *f = *state;
	float x = 100, y = 400, a = 0.2f;
	for (int i = 0; i < 5; i++) {
		add_fid(f, 6, x, y, a);
		add_finger(f, 500, 50.0f + 6.0f * (float)i);
		step(f);
		x += 30;
		y -= 12;
		a += 0.1f;
	}
	const struct tracked_object *o = only_object(f);
	assert_float_equal(o->X, 30.0 * FPS / W, 1e-3);
	assert_float_equal(o->Y, -12.0 * FPS / H, 1e-3);
	assert_float_equal(o->A, 0.1 * FPS / (2 * M_PI), 1e-3);
	assert_float_equal(o->m, 0, 1e-2); /* steady speed */
	assert_int_equal(f->s.n_cursors, 1);
	assert_float_equal(f->s.cursors[0].Y, 6.0 * FPS / H, 1e-3);
	assert_float_equal(f->s.cursors[0].X, 0, 1e-6);
	/* Angle wrap: 6.2 -> 0.05 is a small clockwise step, not a big turn back. */
	add_fid(f, 6, x, y, 6.2f);
	step(f);
	add_fid(f, 6, x, y, 0.05f);
	step(f);
	assert_true(only_object(f)->A > 0);
	assert_true(only_object(f)->A < 0.2 * FPS / (2 * M_PI));
}

static void test_invert(void **state)
{
	struct fixture *f = *state;
	struct track_config c = default_config();
	c.invert_x = true;
	c.invert_y = true;
	c.invert_angle = true;
	assert_int_equal(track_set_config(f->t, &c), 0);
	for (int i = 0; i < 3; i++) {
		add_fid(f, 1, 100.0f + 10.0f * (float)i, 50, 1.0f);
		step(f);
	}
	const struct tracked_object *o = only_object(f);
	assert_float_equal(o->x, (W - 1 - 120.0f) / W, 1e-5);
	assert_float_equal(o->y, (H - 1 - 50.0f) / H, 1e-5);
	assert_float_equal(o->angle, 2 * M_PI - 1.0, 1e-5);
	assert_true(o->X < 0);
	c.max_items = 99;
	assert_int_equal(track_set_config(f->t, &c), ERR_RANGE);
}

static void test_calibration_applied(void **state)
{
	struct fixture *f = *state;
	static struct calib_map m;
	calib_map_identity(&m, 3, 3);
	for (int k = 0; k < 9; k++)
		m.pts[k][0] += 0.1f;
	m.identity = false;
	struct track_config c = default_config();
	c.calib = &m;
	assert_int_equal(track_set_config(f->t, &c), 0);
	add_fid(f, 1, 320, 240, 0);
	step(f);
	assert_float_equal(only_object(f)->x, 0.4f, 1e-4);
	assert_float_equal(only_object(f)->y, 0.5f, 1e-4);
}

static void test_blob_debounce_and_angle(void **state)
{
	struct fixture *f = *state;
	add_blob(f, 300, 300, 3.1f);
	step(f);
	assert_int_equal(f->s.n_blobs, 0);
	add_blob(f, 300, 300, 0.02f); /* across the pi wrap: same orientation */
	step(f);
	assert_int_equal(f->s.n_blobs, 1);
	const struct tracked_blob *b = &f->s.blobs[0];
	assert_true(b->angle >= 0 && b->angle < M_PI);
	assert_float_equal(b->w, 40.0f / W, 1e-5);
	assert_float_equal(b->h, 20.0f / H, 1e-5);
	assert_float_equal(b->area, 600.0f / (W * H), 1e-7);
	step(f);
	assert_int_equal(f->s.n_blobs, 0);
}

static void test_overflow_and_bad_input(void **state)
{
	struct fixture *f = *state;
	for (int i = 0; i < 60; i++) {
		add_fid(f, i, 10.0f * (float)i, 10, 0);
		add_finger(f, 10.0f * (float)i, 300);
	}
	step(f);
	assert_true(f->s.n_objects <= 32);
	assert_int_equal(f->s.n_objects, 32);
	struct detections bad = f->d;
	bad.width = 0;
	assert_int_equal(track_process(f->t, &bad, 0, 0, &f->s), ERR_RANGE);
	int err = 0;
	struct track_config c = default_config();
	c.max_items = 0;
	assert_null(track_create(&c, &err));
	assert_int_equal(err, ERR_RANGE);
	track_destroy(NULL);
}

static void test_one_euro_smooths(void **state)
{
	struct fixture *f = *state;
	struct track_config c = default_config();
	c.dead_band_px = 0;
	c.euro_objects = (struct one_euro_config){ .enabled = true, .min_cutoff_hz = 1.0f, .beta = 0.0f, .d_cutoff_hz = 1.0f };
	assert_int_equal(track_set_config(f->t, &c), 0);
	add_fid(f, 1, 100, 100, 0);
	step(f);
	add_fid(f, 1, 110, 100, 0);
	step(f);
	float x = only_object(f)->x * W;
	assert_true(x > 100.5f && x < 109.5f); /* a step is followed, but smoothed */
}

/* One object, finger and blob moving 10 px right and 6 px down a frame
 * (objects also turning 0.1 rad); the last frame's reported states. */
static void run_motion(struct fixture *f, struct tracked_object *o, struct tracked_cursor *c,
		       struct tracked_blob *b, struct tracked_object *o_prev,
		       struct tracked_cursor *c_prev, struct tracked_blob *b_prev)
{
	float x = 200, y = 150, a = 1.0f;
	for (int i = 0; i < 5; i++, x += 10, y += 6, a += 0.1f) {
		add_fid(f, 3, x, y, a);
		add_finger(f, x + 100, y + 100);
		add_blob(f, x + 200, y, 0.3f + 0.5f * a);
		if (i == 4) {
			*o_prev = f->s.objects[0];
			*c_prev = f->s.cursors[0];
			*b_prev = f->s.blobs[0];
		}
		step(f);
	}
	assert_int_equal(f->s.n_objects, 1);
	assert_int_equal(f->s.n_cursors, 1);
	assert_int_equal(f->s.n_blobs, 1);
	*o = f->s.objects[0];
	*c = f->s.cursors[0];
	*b = f->s.blobs[0];
}

/* The velocities are the change of what the client is told, step by step. */
static void assert_velocity_is_derivative(const struct tracked_object *o,
					  const struct tracked_object *op,
					  const struct tracked_cursor *c,
					  const struct tracked_cursor *cp, const struct tracked_blob *b,
					  const struct tracked_blob *bp)
{
	assert_float_equal(o->X, (o->x - op->x) * FPS, 1e-3);
	assert_float_equal(o->Y, (o->y - op->y) * FPS, 1e-3);
	double da = fmod(o->angle - op->angle + 3 * M_PI, 2 * M_PI) - M_PI;
	assert_float_equal(o->A, da / (2 * M_PI) * FPS, 1e-3);
	assert_float_equal(c->X, (c->x - cp->x) * FPS, 1e-3);
	assert_float_equal(c->Y, (c->y - cp->y) * FPS, 1e-3);
	assert_float_equal(b->X, (b->x - bp->x) * FPS, 1e-3);
	assert_float_equal(b->Y, (b->y - bp->y) * FPS, 1e-3);
	double db = fmod(b->angle - bp->angle + 1.5 * M_PI, M_PI) - 0.5 * M_PI;
	assert_float_equal(b->A, db / (2 * M_PI) * FPS, 1e-3);
}

static void test_velocity_follows_inversion(void **state)
{
	struct fixture *f = *state;
	struct tracked_object o, op, io, iop;
	struct tracked_cursor c, cp, ic, icp;
	struct tracked_blob b, bp, ib, ibp;
	run_motion(f, &o, &c, &b, &op, &cp, &bp);
	assert_float_equal(o.X, 10.0 * FPS / W, 1e-3);
	assert_float_equal(o.Y, 6.0 * FPS / H, 1e-3);
	assert_float_equal(o.A, 0.1 * FPS / (2 * M_PI), 1e-3);

	track_reset(f->t);
	struct track_config cfg = default_config();
	cfg.invert_x = true;
	cfg.invert_angle = true;
	assert_int_equal(track_set_config(f->t, &cfg), 0);
	run_motion(f, &io, &ic, &ib, &iop, &icp, &ibp);
	assert_velocity_is_derivative(&io, &iop, &ic, &icp, &ib, &ibp);
	assert_float_equal(io.X, -o.X, 1e-5);
	assert_float_equal(io.Y, o.Y, 1e-5);
	assert_float_equal(io.A, -o.A, 1e-5);
	assert_float_equal(io.r, -o.r, 1e-3);
	assert_float_equal(io.m, o.m, 1e-3);
	assert_float_equal(ic.X, -c.X, 1e-5);
	assert_float_equal(ic.Y, c.Y, 1e-5);
	assert_float_equal(ib.X, -b.X, 1e-5);
	assert_float_equal(ib.A, -b.A, 1e-5);
	assert_true(io.X < 0 && ic.X < 0 && ib.X < 0);

	track_reset(f->t);
	cfg = default_config();
	cfg.invert_y = true;
	assert_int_equal(track_set_config(f->t, &cfg), 0);
	run_motion(f, &io, &ic, &ib, &iop, &icp, &ibp);
	assert_float_equal(io.X, o.X, 1e-5);
	assert_float_equal(io.Y, -o.Y, 1e-5);
	assert_float_equal(ic.Y, -c.Y, 1e-5);
	assert_float_equal(ib.Y, -b.Y, 1e-5);
}

static void test_velocity_follows_calibration(void **state)
{
	struct fixture *f = *state;
	struct tracked_object o, op, co, cop;
	struct tracked_cursor c, cp, cc, ccp;
	struct tracked_blob b, bp, cb, cbp;
	run_motion(f, &o, &c, &b, &op, &cp, &bp);

	/* The table is half the camera's view around the centre: each control
	 * point of a regular grid lies twice as far from the centre in the
	 * image, so reported = 0.5 + (camera - 0.5) / 2. */
	static struct calib_map m;
	calib_map_identity(&m, 5, 5);
	for (int k = 0; k < 25; k++)
		for (int d = 0; d < 2; d++)
			m.pts[k][d] = 0.5f + 2.0f * (m.pts[k][d] - 0.5f);
	m.identity = false;
	track_reset(f->t);
	struct track_config cfg = default_config();
	cfg.calib = &m;
	assert_int_equal(track_set_config(f->t, &cfg), 0);
	run_motion(f, &co, &cc, &cb, &cop, &ccp, &cbp);
	assert_float_equal(co.x, 0.5 + (o.x - 0.5) / 2, 1e-4);
	assert_velocity_is_derivative(&co, &cop, &cc, &ccp, &cb, &cbp);
	assert_float_equal(co.X, 0.5 * o.X, 1e-3);
	assert_float_equal(co.Y, 0.5 * o.Y, 1e-3);
	assert_float_equal(co.A, o.A, 1e-3); /* a uniform scale keeps angles */
	assert_float_equal(cc.X, 0.5 * c.X, 1e-3);
	assert_float_equal(cb.Y, 0.5 * b.Y, 1e-3);
	/* The dead band stays in pixels: 0.4 px of noise is still no move. */
	for (int i = 0; i < 3; i++) {
		add_fid(f, 3, 250.0f + (i & 1 ? 0.4f : 0.0f), 180, 1.5f);
		step(f);
	}
	for (int i = 0; i < 3; i++) {
		add_fid(f, 3, 250.0f + (i & 1 ? 0.4f : 0.0f), 180, 1.5f);
		step(f);
		assert_false(only_object(f)->changed);
		assert_true(only_object(f)->X == 0 && only_object(f)->Y == 0);
	}
}

static void add_blob_sized(struct fixture *f, float w, float h, float area)
{
	struct blob_det *d = &f->d.blobs[f->d.n_blobs++];
	*d = (struct blob_det){ .x = 300, .y = 200, .angle = 0.4f, .w = w, .h = h, .area_px = area, .region = 5001 };
}

static bool blob_changed_after(struct fixture *f, float w, float h, float area)
{
	add_blob_sized(f, w, h, area);
	step(f);
	assert_int_equal(f->s.n_blobs, 1);
	assert_true(f->s.blobs[0].X == 0 && f->s.blobs[0].Y == 0);
	return f->s.blobs[0].changed;
}

static void test_blob_size_change_in_place(void **state)
{
	struct fixture *f = *state;
	add_blob_sized(f, 40, 20, 600);
	step(f);
	assert_int_equal(f->s.n_blobs, 0); /* debounced */
	assert_true(blob_changed_after(f, 40, 20, 600)); /* announced */
	assert_false(blob_changed_after(f, 40, 20, 600));
	/* noise: under a pixel on a side, under 5 % of the area */
	assert_false(blob_changed_after(f, 40.8f, 19.3f, 620));
	assert_false(blob_changed_after(f, 39.5f, 20.5f, 585));
	/* grows on one side only */
	assert_true(blob_changed_after(f, 43, 20, 610));
	assert_float_equal(f->s.blobs[0].w, 43.0f / W, 1e-6);
	assert_false(blob_changed_after(f, 43, 20, 610));
	/* same box, area 10 % larger (a hole closed) */
	assert_true(blob_changed_after(f, 43, 20, 671));
	assert_float_equal(f->s.blobs[0].area, 671.0f / (W * H), 1e-8);
	assert_false(blob_changed_after(f, 43, 20, 671));
	/* the height, slowly: compared with the last set, not the last frame */
	assert_false(blob_changed_after(f, 43, 20.6f, 671));
	assert_false(blob_changed_after(f, 43, 21.0f, 671));
	assert_true(blob_changed_after(f, 43, 21.4f, 671));
}

static void test_owner_blob_size_change(void **state)
{
	struct fixture *f = *state;
	struct track_config cfg = default_config();
	cfg.blobs_for_objects = true;
	cfg.blobs_for_fingers = true;
	assert_int_equal(track_set_config(f->t, &cfg), 0);
	float sizes[] = { 60, 60, 60, 61, 60, 64, 64 };
	float diam[] = { 18, 18, 18, 19, 18, 22, 22 };
	bool obj_blob_set[] = { true, false, false, false, false, true, false };
	bool finger_blob_set[] = { false, true, false, false, false, true, false };
	for (int i = 0; i < 7; i++) {
		struct fiducial_det *d = &f->d.fids[f->d.n_fids++];
		*d = (struct fiducial_det){ .id = 4, .x = 100, .y = 100, .angle = 1, .size_px = sizes[i], .root = 1004, .n_nodes = 19 };
		struct finger_det *g = &f->d.fingers[f->d.n_fingers++];
		*g = (struct finger_det){ .x = 400, .y = 300, .diameter_px = diam[i], .roundness = 0.9f, .contrast = 80, .region = 4001 };
		step(f);
		if (i == 0)
			continue; /* the finger is debounced */
		assert_int_equal(f->s.n_objects, 1);
		assert_int_equal(f->s.n_cursors, 1);
		assert_int_equal(f->s.n_blobs, 2);
		/* 2Dobj and 2Dcur carry no size: only the 2Dblb set is due */
		assert_false(f->s.objects[0].changed);
		assert_int_equal(f->s.cursors[0].changed, i == 1);
		const struct tracked_blob *ob = &f->s.blobs[0], *fb = &f->s.blobs[1];
		assert_int_equal(ob->session_id, f->s.objects[0].session_id);
		assert_int_equal(fb->session_id, f->s.cursors[0].session_id);
		assert_int_equal(ob->changed, obj_blob_set[i]);
		assert_int_equal(fb->changed, finger_blob_set[i]);
		assert_float_equal(ob->w, sizes[i] / W, 1e-6);
	}
}

static void add_card(struct fixture *f, float x, float y, float side)
{
	struct blob_det *d = &f->d.blobs[f->d.n_blobs++];
	*d = (struct blob_det){ .x = x, .y = y, .angle = 0.2f, .w = side, .h = side - 2, .area_px = side * 4, .region = 5001 };
}

/* A symbol's white card comes as a blob when the matcher could not tie it
 * to a symbol of this frame (read only by the second scale, or carried or
 * lingering): the tracker drops blobs lying on a tracked object, with or
 * without blobs_for_objects, and keeps the ones beside it or much larger. */
static void test_card_of_tracked_symbol_not_a_blob(void **state)
{
	struct fixture *f = *state;
	for (int pass = 0; pass < 2; pass++) {
		struct track_config cfg = default_config();
		cfg.blobs_for_objects = pass == 1;
		assert_int_equal(track_set_config(f->t, &cfg), 0);
		track_reset(f->t);
		/* read, its card (a 60 px symbol on a 72 px card, 4 px off centre) with it */
		for (int i = 0; i < 3; i++) {
			add_fid(f, 7, 200, 200, 0);
			add_card(f, 204, 198, 72);
			add_blob(f, 400, 300, 0.3f); /* a blob elsewhere */
			step(f);
		}
		assert_int_equal(f->s.n_objects, 1);
		assert_int_equal(f->s.n_blobs, 1 + pass);
		assert_float_equal(f->s.blobs[0].x, 400.0f / W, 1e-3);
		if (pass)
			assert_int_equal(f->s.blobs[1].session_id, f->s.objects[0].session_id);
		/* not read: the object lingers at its place; its card is still no blob */
		for (int i = 0; i < 2; i++) {
			add_card(f, 204, 198, 72);
			add_blob(f, 400, 300, 0.3f);
			step(f);
			assert_int_equal(f->s.n_objects, 1);
			assert_int_equal(f->s.objects[0].how, TRACKED_PREDICTED);
			assert_int_equal(f->s.n_blobs, 1 + pass);
			assert_float_equal(f->s.blobs[0].x, 400.0f / W, 1e-3);
		}
		/* the object gone, the card is a blob again (from its second frame) */
		for (int i = 0; i < 3; i++) {
			add_card(f, 204, 198, 72);
			step(f);
		}
		assert_int_equal(f->s.n_objects, 0);
		assert_int_equal(f->s.n_blobs, 1);
		/* beside a symbol (more than half its size from its centre) or
		 * larger than twice it (a hand over it): blobs */
		track_reset(f->t);
		for (int i = 0; i < 3; i++) {
			add_fid(f, 7, 200, 200, 0);
			add_card(f, 235, 200, 50);
			add_card(f, 200, 200, 125);
			step(f);
		}
		assert_int_equal(f->s.n_blobs, 2 + pass);
	}
}

/* Outline stage outputs (track.h, 7): touching fingers are the cursors,
 * hovering ones follow only with hover_out; a change between the two is a
 * new session; a fingertip carries its hand blob's session; contours go
 * out with their item's session, mapped like positions (invert_x). */
static int setup_outlines(void **state)
{
	struct track_config c = default_config();
	c.hover_out = true;
	c.invert_x = true;
	c.max_contours = 8;
	c.max_contour_points = 64;
	int rc = setup_with(state, &c);
	struct fixture *f = *state;
	assert_int_equal(detections_alloc_outlines(&f->d, 8, 8), 0);
	return rc;
}

static void add_outline_frame(struct fixture *f, bool second_hovers)
{
	add_blob(f, 300, 300, 0.5f);                      /* the hand */
	f->d.blobs[0].hand = true;
	add_finger(f, 100, 100);                          /* a fingertip of it, touching */
	f->d.fingers[0].sharpness = 0.45f;
	f->d.fingers[0].in_hand = true;
	f->d.fingers[0].hand = 0;
	add_finger(f, 200, 100);                          /* a lone one */
	f->d.fingers[1].sharpness = second_hovers ? 0.15f : 0.45f;
	f->d.fingers[1].hover = second_hovers;
	/* a 4-point outline of the lone finger */
	f->d.contours[0] = (struct contour_det){.owner_kind = CONTOUR_FINGER, .owner = 1, .first = 0, .n = 4};
	const float px[4] = {190, 210, 210, 190}, py[4] = {90, 90, 110, 110};
	for (int i = 0; i < 4; i++)
		f->d.points[i] = (struct contour_point){px[i], py[i]};
	f->d.n_contours = 1;
	f->d.n_points = 4;
}

static void test_touch_hover_hands_contours(void **state)
{
	struct fixture *f = *state;
	add_outline_frame(f, true);
	step(f);
	add_outline_frame(f, true);
	step(f);
	assert_int_equal(f->s.n_cursors, 1);
	assert_int_equal(f->s.n_hover, 1);
	assert_int_equal(f->s.n_blobs, 1);
	const struct tracked_cursor *t = &f->s.cursors[0], *h = &f->s.cursors[1];
	assert_true(t->touch_measured && !t->hover);
	assert_true(h->hover);
	assert_int_equal(t->hand_session, f->s.blobs[0].session_id);
	assert_int_equal(h->hand_session, 0);
	assert_int_equal(f->s.n_contours, 1);
	assert_int_equal(f->s.contours[0].session_id, h->session_id);
	assert_int_equal(f->s.contours[0].n, 4);
	/* inverted like positions: x' = (W - 1 - x) / W */
	assert_float_equal(f->s.contour_points[0].x, (W - 1 - 190.0f) / W, 1e-5);
	assert_float_equal(f->s.contour_points[0].y, 90.0f / H, 1e-5);
	const uint32_t hover_sid = h->session_id, touch_sid = t->session_id;

	/* The lone finger comes down: a new session, now a cursor. */
	add_outline_frame(f, false);
	step(f);
	assert_int_equal(f->s.n_cursors, 2);
	assert_int_equal(f->s.n_hover, 0);
	bool seen_new = false;
	for (int i = 0; i < 2; i++) {
		assert_true(f->s.cursors[i].session_id != hover_sid);
		seen_new |= f->s.cursors[i].session_id != touch_sid;
	}
	assert_true(seen_new);

	/* Without hover_out a hovering finger and its outline are not reported. */
	struct track_config c = default_config();
	c.invert_x = true;
	c.max_contours = 8;
	c.max_contour_points = 64;
	assert_int_equal(track_set_config(f->t, &c), 0);
	add_outline_frame(f, true);
	step(f);
	assert_int_equal(f->s.n_cursors, 1);
	assert_int_equal(f->s.n_hover, 0);
	assert_int_equal(f->s.n_contours, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fuzzy_and_root_keep_fast_symbol, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_carries_through_motion_blur, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fuzzy_and_root_never_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finger_tap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_fingers_nearest_neighbour, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resting_object_no_jitter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_id_flicker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_young_object_corrected_quickly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sessions_unique_never_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_linger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_velocity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calibration_applied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_debounce_and_angle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow_and_bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_euro_smooths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_velocity_follows_inversion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_velocity_follows_calibration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blob_size_change_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_owner_blob_size_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_card_of_tracked_symbol_not_a_blob, setup, teardown),
		cmocka_unit_test_setup_teardown(test_touch_hover_hands_contours, setup_outlines, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
