/* The per-frame engine (src/pipeline/engine.h): the daemon's script from a
 * grey frame to tracked objects, on frames drawn by our renderer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "../src/config/config.h"
#include "../src/core/clock.h"
#include "../src/core/err.h"
#include "../src/core/log.h"
#include "../src/fiducial/render.h"
#include "../src/fiducial/trees.h"
#include "../src/pipeline/engine.h"
#include "../src/pipeline/merge.h"
#include "../src/pipeline/settings.h"
#include "../src/pipeline/windows.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/testutil.h"

#define W 320
#define H 240

struct fixture {
	struct tree_set *trees;
	struct track *trk;
	struct engine *eng;
};

/* The gate_range of the engines make_engine3 makes: 0 (every frame at the
 * gate) unless a test of the frame's gate sets it, and puts it back. */
static int gate_range;

/* make_engine3's configuration (on f's tracker). */
static struct engine_config config3(struct fixture *f, int radius2, bool scale3, float mean_scale3)
{
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 6, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .gate_range = gate_range, .radius2 = radius2, .median2 = 3,
				   .scale3 = scale3, .mode3 = THRESHOLD_MEAN, .mean_scale3 = mean_scale3,
				   .match = {.trees = f->trees, .root_min_px = 12, .root_max_px = 120},
				   .tracker = f->trk, .max_detections = 64};
	return ec;
}

static struct engine *make_engine3(struct fixture *f, int radius2, bool scale3, float mean_scale3)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	f->trk = track_create(&tk, &err);
	assert_non_null(f->trk);
	struct engine_config ec = config3(f, radius2, scale3, mean_scale3);
	f->eng = engine_create(&ec, &err);
	assert_non_null(f->eng);
	return f->eng;
}

static int setup(void **state)
{
	static struct fixture f;
	memset(&f, 0, sizeof f);
	log_set_level(LOG_ERROR);
	assert_int_equal(tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &f.trees), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	engine_destroy(f->eng);
	track_destroy(f->trk);
	tree_set_free(f->trees);
	memset(f, 0, sizeof *f);
	return 0;
}

static struct engine *make_engine(struct fixture *f, int radius2)
{
	return make_engine3(f, radius2, false, 0.0f);
}

/* A grey table lit unevenly: bright in the middle, dark at the edges. */
static void draw_table(struct image_u8 *img, int amplitude)
{
	for (int y = 0; y < H; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < W; x++) {
			int dx = x - W / 2, dy = y - H / 2;
			int v = 150 + amplitude - amplitude * (dx * dx + dy * dy) / (W * W / 4 + H * H / 4);
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
}

static void test_decodes_and_tracks(void **state)
{
	struct fixture *f = *state;
	struct engine *e = make_engine(f, 3);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	const char *tok = tree_set_token(f->trees, 5);
	assert_int_equal(render_symbol(tok, 90, 0.7f, 110, 120, &img, NULL), 0);
	float tx, ty, ta;
	assert_int_equal(render_symbol_truth(tok, 90, 0.7f, 110, 120, &tx, &ty, &ta), 0);
	struct tracked_state st;
	for (uint64_t i = 1; i <= 3; i++)
		assert_int_equal(engine_process(e, &img, i, (int64_t)i * 33000000, &st), 0);
	/* Both scales decode the symbol; the merge keeps one. */
	assert_int_equal(engine_detections(e)->n_fids, 1);
	assert_int_equal(st.n_objects, 1);
	assert_int_equal(st.objects[0].class_id, 5);
	assert_true(fabsf(st.objects[0].x * W - tx) < 1.0f);
	assert_true(fabsf(st.objects[0].y * H - ty) < 1.0f);
	assert_int_equal(strcmp(engine_backend(e), "cpu"), 0);
	image_u8_free(&img);
}

/* A hard shadow edge (the line x = edge_x, a penumbra of pen pixels) darkens
 * everything left of it to dark percent. */
static void draw_shadow(struct image_u8 *img, float edge_x, float pen, int dark)
{
	for (int y = 0; y < H; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < W; x++) {
			float t = (edge_x - (float)x) / pen + 0.5f;
			t = t < 0 ? 0 : t > 1 ? 1 : t;
			float k = 1.0f - t * (float)(100 - dark) / 100.0f;
			row[x] = (uint8_t)((float)row[x] * k + 0.5f);
		}
	}
}

/* Runs img twice through engine e (made on f's tracker), keeps its gate
 * statistics in *gs (when not NULL), destroys engine, tracker and image.
 * id >= 0: 1 where symbol id was decoded alone, 0 where nothing was,
 * negative where another ID was; id < 0: the fingers found. */
static int probe_finish(struct fixture *f, struct engine *e, struct image_u8 *img, int id,
			struct engine_gate_stats *gs)
{
	struct tracked_state st;
	for (uint64_t i = 1; i <= 2; i++)
		assert_int_equal(engine_process(e, img, i, (int64_t)i * 33000000, &st), 0);
	const struct detections *d = engine_detections(e);
	int r = id < 0 ? d->n_fingers : 0;
	for (int i = 0; i < d->n_fids && id >= 0; i++)
		r = d->fids[i].id == id && r == 0 ? 1 : -1;
	if (gs)
		*gs = *engine_gate_stats(e);
	engine_destroy(e);
	track_destroy(f->trk);
	f->eng = NULL;
	f->trk = NULL;
	image_u8_free(img);
	return r;
}

/* Draws symbol id at size px under a shadow edge (draw_shadow), runs two
 * frames through engine e (made on f's tracker), destroys both; 1: the
 * symbol decoded alone, 0: nothing decoded, negative: another ID. */
static int probe_run(struct fixture *f, struct engine *e, int size, float edge, float pen, int dark, int id)
{
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	const char *tok = tree_set_token(f->trees, id);
	assert_int_equal(render_symbol(tok, size, 0.4f, 160, 120, &img, NULL), 0);
	draw_shadow(&img, edge, pen, dark);
	return probe_finish(f, e, &img, id, NULL);
}

/* 1: the symbol decoded alone, 0: nothing decoded, negative: another ID. */
static int shadow_probe_sized(struct fixture *f, bool scale3, float mean_scale3, int size, float edge, float pen,
			      int dark, int id)
{
	return probe_run(f, make_engine3(f, 2, scale3, mean_scale3), size, edge, pen, dark, id);
}

static int shadow_probe(struct fixture *f, bool scale3, float edge, float pen, int dark, int id)
{
	return shadow_probe_sized(f, scale3, 0.0f, 80, edge, pen, dark, id);
}

/* A hard shadow edge through the middle of a symbol (its left half at 40%
 * of the light, a 2.5 px penumbra): Bernsen turns the shadowed side's card
 * black on both scales and the symbol is lost; the third scale's local mean
 * keeps it, with its own ID and nothing else. */
static void test_third_scale_under_shadow(void **state)
{
	struct fixture *f = *state;
	for (int id = 0; id < 6; id++) {
		assert_int_equal(shadow_probe(f, false, 160, 2.5f, 40, id), 0);
		assert_int_equal(shadow_probe(f, true, 160, 2.5f, 40, id), 1);
	}
}

/* A 32 px symbol under the same edge, half lit: the local mean's 33 px
 * window (mean_radius 16) spans the whole symbol and closes holes next to
 * the edge; the second pass at a radius from the symbol's size (0.12 of
 * the branching region's side, about 4 px) keeps symbols 2 and 11, and with it
 * no symbol reads as another ID. */
static void test_third_scale_radius_follows_symbol(void **state)
{
	struct fixture *f = *state;
	const int lost[] = {2, 11};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(shadow_probe_sized(f, true, 0.0f, 32, 160, 2.0f, 50, lost[i]), 0);
		assert_int_equal(shadow_probe_sized(f, true, 0.12f, 32, 160, 2.0f, 50, lost[i]), 1);
	}
	for (int id = 0; id < 12; id++)
		assert_true(shadow_probe_sized(f, true, 0.12f, 32, 160, 2.0f, 50, id) >= 0);
}

/* A tracker and an engine with the third scale's passes as by default
 * (mean_scale3 0.115), the closing pass at close_scale3 (0: off), the
 * ratio pass at ratio3 (0: off) with its larger radii as large says, and
 * symbols of at most root_max_px. */
static int passes_dark; /* engine_config.close_dark for passes_engine() */

static struct engine *passes_engine(struct fixture *f, float close_scale3, int ratio3, bool large, int root_max_px)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	f->trk = track_create(&tk, &err);
	assert_non_null(f->trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 8, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = 2, .median2 = 3, .scale3 = true, .mode3 = THRESHOLD_MEAN,
				   .mean_scale3 = 0.115f, .close_scale3 = close_scale3, .close_pct = 70,
				   .close_dark = passes_dark, .ratio3 = ratio3, .ratio3_large = large,
				   .match = {.trees = f->trees, .root_min_px = 12, .root_max_px = (float)root_max_px},
				   .tracker = f->trk, .max_detections = 64};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	return e;
}

/* 1: symbol id (size px, a shadow edge at x = edge, penumbra pen, dark
 * percent of the light) decoded alone by the engine with the third
 * scale's passes as by default (mean_scale3 0.115) and the closing pass at
 * close_scale3 (0: off); 0: nothing decoded; negative: another ID. */
static int closing_probe(struct fixture *f, float close_scale3, int size, float edge, float pen, int dark, int id)
{
	return probe_run(f, passes_engine(f, close_scale3, 0, false, 160), size, edge, pen, dark, id);
}

/* An 80 px symbol, a hard shadow edge 10 px left or right of its centre,
 * the shadowed side at 25% of the light: the passes of Bernsen and the
 * local mean turn a band of the shadowed card black beside the edge and
 * decode none of symbols 0-11; the closing pass (close_scale3 0.04, a
 * radius of about 3 px) decodes each, and no other ID. */
static void test_closing_pass_under_shadow(void **state)
{
	struct fixture *f = *state;
	const float edges[] = {150, 170};
	for (int k = 0; k < 2; k++)
		for (int id = 0; id < 12; id++) {
			assert_int_equal(closing_probe(f, 0.0f, 80, edges[k], 2.0f, 25, id), 0);
			assert_int_equal(closing_probe(f, 0.04f, 80, edges[k], 2.0f, 25, id), 1);
		}
}

/* A hard shadow's straight edge (a penumbra of pen pixels) darkens the
 * side of the frame its normal (angle a) points to, from the signed
 * distance d past the frame's centre on, to dark percent of the light. */
static void draw_shadow_slanted(struct image_u8 *img, float a, float d, float pen, int dark)
{
	const float nx = cosf(a), ny = sinf(a);
	for (int y = 0; y < H; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < W; x++) {
			float t = (nx * (float)(x - W / 2) + ny * (float)(y - H / 2) - d) / pen + 0.5f;
			t = t < 0 ? 0 : t > 1 ? 1 : t;
			float k = 1.0f - t * (float)(100 - dark) / 100.0f;
			row[x] = (uint8_t)((float)row[x] * k + 0.5f);
		}
	}
}

/* Symbol 1 of reacTIVision's set, 110 px at 4.7 rad, a hard shadow's edge
 * slanted across it (normal at 4.0 rad, 4 px past its centre, 2 px
 * penumbra, a quarter of the light): the scaled pass at its window's own
 * radius leaves a band of the shadowed paper along the edge as a long
 * dot, and without the dot vetoes there read it as 4, which no other
 * pass of the engine (the closing and ratio passes off) disagreed with.
 * With them that read is vetoed: nothing is read, never another ID. The
 * same streak read 1 as 11 on the sheet preset tilted 40-50 degrees. */
static void test_scaled_pass_dot_vetoes(void **state)
{
	struct fixture *f = *state;
	const char *path = test_shared_path("fiducials/reactivision/default.trees");
	if (!path)
		skip();
	struct tree_set *own = f->trees;
	assert_int_equal(tree_set_load(path, &f->trees), 0);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 1), 110, 4.7f, 160, 120, &img, NULL), 0);
	draw_shadow_slanted(&img, 4.0f, 4.0f, 2.0f, 25);
	assert_int_equal(probe_finish(f, passes_engine(f, 0.0f, 0, false, 160), &img, 1, NULL), 0);
	tree_set_free(f->trees);
	f->trees = own;
}

/* 1: symbol id (size px, a shadow edge at x = edge, penumbra pen, dark
 * percent of the light) decoded alone by the engine with the third
 * scale's passes as by default, the ratio pass's larger radii
 * (ratio3_large) as large says; 0: nothing decoded; negative: another
 * ID. */
static int ratio_large_probe(struct fixture *f, bool large, int size, float edge, float pen, int dark, int id)
{
	return probe_run(f, passes_engine(f, 0.04f, 16, large, 240), size, edge, pen, dark, id);
}

/* A 200 px symbol under a hard shadow's edge 50 or 20 px left or 20 px
 * right of its centre (penumbra 2 px, half the light): at the first
 * scale's radius the shadowed paper between its blobs is flat and every
 * pass paints it black (symbols 4, 6, 8 and 9 lost at 20 px left, 3-4 of
 * 12 at the others); the ratio pass's larger radii read each of 0-11,
 * and no other ID. */
static void test_ratio_pass_large_symbols(void **state)
{
	struct fixture *f = *state;
	const int lost[] = {4, 6, 8, 9};
	for (int i = 0; i < 4; i++)
		assert_int_equal(ratio_large_probe(f, false, 200, 140, 2.0f, 50, lost[i]), 0);
	const float edges[] = {110, 140, 180};
	for (int k = 0; k < 3; k++)
		for (int id = 0; id < 12; id++)
			assert_int_equal(ratio_large_probe(f, true, 200, edges[k], 2.0f, 50, id), 1);
}

/* A 28 px symbol whose left side a hard shadow keeps at 35 % of the light,
 * its edge (a 1 px penumbra) 8 px left of the centre: the passes read 5
 * of symbols 0-11 (1, 2, 4, 7, 11) with the ink windows' closing at
 * close_pct (70) alone; the ramp's lit side, carried into the shadow by
 * the closing's running maximum, turns the shadowed paper beside the ink
 * black. The same closing 5 points lower there (third.c,
 * THIRD_INK_PCT_LESS) reads 0, 3, 5, 6 and 9 too, and no symbol as
 * another ID. */
static void test_ink_windows_lower_pct(void **state)
{
	struct fixture *f = *state;
	const int gained[] = {0, 3, 5, 6, 9};
	for (int i = 0; i < 5; i++)
		assert_int_equal(closing_probe(f, 0.04f, 28, 152, 1.0f, 35, gained[i]), 1);
	for (int id = 0; id < 12; id++)
		assert_true(closing_probe(f, 0.04f, 28, 152, 1.0f, 35, id) >= 0);
}

/* 1: symbol id (size px at the frame's centre) under two hard shadows of
 * lights of their own, each keeping dark percent of the light, their
 * edges (2 px penumbrae) at x = a and x = b (a > b): left of b the paper
 * keeps dark^2 of the light; noise of +-3 levels; read by the engine with
 * the third scale's passes as by default and close_dark (0: off); 0:
 * nothing decoded; negative: another ID. */
static int dark_probe(struct fixture *f, int close_dark, int size, float a, float b, int dark, int id)
{
	passes_dark = close_dark;
	struct engine *e = passes_engine(f, 0.04f, 16, true, 160);
	passes_dark = 0;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	assert_int_equal(render_symbol(tree_set_token(f->trees, id), (float)size, 0.4f, 160, 120, &img, NULL), 0);
	draw_shadow(&img, a, 2.0f, dark);
	draw_shadow(&img, b, 2.0f, dark);
	uint32_t rng = 777u;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const int v = image_u8_row(&img, y)[x] + (int)(test_rand(&rng) % 7) - 3;
			image_u8_row(&img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	return probe_finish(f, e, &img, id, NULL);
}

/* An 80 px symbol under two shadows of 30 %, their edges 30 px right and
 * 10 px left of its centre: left of the second the paper keeps 9 % of
 * the light, about 23 grey levels, under the gate of 32. No pass reads
 * any of symbols 0-11 at the gate; the closing pass read again on the
 * median at half of it (close_dark 50) reads 8 of them, and none as
 * another ID. */
static void test_closing_dark(void **state)
{
	struct fixture *f = *state;
	const int read[] = {1, 3, 4, 5, 6, 7, 10, 11};
	for (int i = 0; i < 8; i++)
		assert_int_equal(dark_probe(f, 50, 80, 190, 150, 30, read[i]), 1);
	for (int id = 0; id < 12; id++) {
		assert_int_equal(dark_probe(f, 0, 80, 190, 150, 30, id), 0);
		assert_true(dark_probe(f, 50, 80, 190, 150, 30, id) >= 0);
	}
}

/* A tracker and an engine with the third scale's passes as by default,
 * the deblurring pass as blur_probe()'s deblur says (its area bound pct
 * of the frame, 0: none, where deblur is not 2), and img allocated and
 * drawn with the table. */
static struct engine *blur_engine(struct fixture *f, int deblur, int pct, struct image_u8 *img)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	f->trk = track_create(&tk, &err);
	assert_non_null(f->trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 8, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = 2, .median2 = 3, .scale3 = true, .mode3 = THRESHOLD_MEAN,
				   .mean_scale3 = 0.115f, .close_scale3 = 0.04f, .close_pct = 70, .radius_small = 1,
				   .deblur3 = deblur > 0, .deblur3_pct = deblur == 2 ? 1 : pct, .defocus3 = deblur != 3,
				   .deblur3_high = deblur != 4, .deblur3_bias = deblur == 5 ? 16 : 7,
				   .match = {.trees = f->trees, .root_min_px = 12, .root_max_px = 160},
				   .tracker = f->trk, .max_detections = 64};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	assert_int_equal(image_u8_alloc(img, W, H), 0);
	draw_table(img, 30);
	return e;
}

/* img read twice by e; its detections. */
static const struct detections *blur_read(struct engine *e, const struct image_u8 *img)
{
	struct tracked_state st;
	for (uint64_t i = 1; i <= 2; i++)
		assert_int_equal(engine_process(e, img, i, (int64_t)i * 33000000, &st), 0);
	return engine_detections(e);
}

static void blur_close(struct fixture *f, struct engine *e, struct image_u8 *img)
{
	engine_destroy(e);
	track_destroy(f->trk);
	f->eng = NULL;
	f->trk = NULL;
	image_u8_free(img);
}

/* 1: symbol id (size px, turned by 0.4 rad, at the frame's centre) under a
 * streak of len px at angle a (len > 0) or out of focus by a Gaussian of
 * -len px (len < 0), noise +-3, decoded alone by the engine with the third
 * scale's passes as by default, the deblurring pass off (deblur 0), on
 * (1), or on with its area bound at 1% of the frame (2: less than any
 * window), on without its defocus branch (3), on without its upper rung
 * (4: THIRD_DEBLUR_HIGH_RADIUS), on with its local means' bias at
 * mean_bias's 16 instead of deblur3_bias's 7 (5); 0: nothing decoded;
 * negative: another ID. */
static int blur_probe(struct fixture *f, int deblur, int size, float len, float a, int id)
{
	struct image_u8 img;
	struct engine *e = blur_engine(f, deblur, 0, &img);
	assert_int_equal(render_symbol(tree_set_token(f->trees, id), (float)size, 0.4f, 160, 120, &img, NULL), 0);
	uint32_t rng = 12345u;
	if (len > 0.0f)
		test_streak(&img, len, a, 3, &rng);
	else
		test_defocus(&img, -len, 3, &rng);
	const struct detections *d = blur_read(e, &img);
	int r = 0;
	for (int i = 0; i < d->n_fids; i++)
		r = d->fids[i].id == id && r == 0 ? 1 : -1;
	blur_close(f, e, &img);
	return r;
}

/* Symbols 0-11 under blur_probe()'s blur (size, len, a), read with the
 * deblurring pass as deblur `without` says and on (1): each is read at
 * least as well with the pass, none as another ID; how many were read
 * each way into *off and *on. With bound, the pass bound to less area than
 * its window (2) reads as without it (0). */
static void blur_tally(struct fixture *f, int without, int size, float len, float a, bool bound, int *off, int *on)
{
	*off = *on = 0;
	for (int id = 0; id < 12; id++) {
		const int x = blur_probe(f, without, size, len, a, id), y = blur_probe(f, 1, size, len, a, id);
		if (bound)
			assert_int_equal(blur_probe(f, 2, size, len, a, id), x);
		assert_true(x >= 0);
		assert_true(y >= x);
		*off += x;
		*on += y;
	}
}

/* A 72 px symbol under a 6 px streak (noise +-3): the other passes lose
 * most of symbols 0-11 (dots smeared to a fraction of their contrast, holes
 * filled); the deblurring pass undoes the streak and decodes nearly all,
 * and none as another ID; bound to less area than its window, it is as if
 * off. */
static void test_deblur_pass_under_streak(void **state)
{
	int off, on;
	blur_tally(*state, 0, 72, 6.0f, 0.5f, true, &off, &on);
	assert_true(off <= 4);
	assert_true(on >= 10);
}

/* Symbols 0-11 of 68 px under a 6 px streak at 1.5 rad (noise +-3): the
 * deblurring pass's upper rung (THIRD_DEBLUR_HIGH_RADIUS) reads at least
 * two more than the pass without it (9 -> 12 when written), loses none
 * and reads none as another ID. With mean_bias's 16 for the pass's local
 * means (before deblur3_bias) it read two more at 64 px too (0 -> 2; 6 ->
 * 8 at 68 px); with the pass's own bias 64 px reads 5 either way. */
static void test_deblur_upper_rung(void **state)
{
	int off, on;
	blur_tally(*state, 4, 68, 6.0f, 1.5f, false, &off, &on);
	assert_true(on >= off + 2);
}

/* Symbols 0-11 of 56 px under a 5 px streak at 0.5 rad and of 72 px under
 * a 7 px one at 1.5 rad (noise +-3): the deblurring pass's local means
 * with its own bias (deblur3_bias, 7) read at least three more of each
 * than with mean_bias's 16 (3 -> 7 and 3 -> 8 when written), lose none and
 * read none as another ID. (Not everywhere: at 64 px under 6 px at 0.5
 * rad 16 read 10, 7 read 9.) */
static void test_deblur_bias(void **state)
{
	int off, on;
	blur_tally(*state, 5, 56, 5.0f, 0.5f, false, &off, &on);
	assert_true(on >= off + 3);
	blur_tally(*state, 5, 72, 7.0f, 1.5f, false, &off, &on);
	assert_true(on >= off + 3);
}

/* Symbols 0-11 of 64 px out of focus (a Gaussian of 2.4 px, noise +-3):
 * the passes before the deblurring pass, and that pass without its defocus
 * branch, read at most a third of them (none when this was written: dots
 * and holes under 5 px keep a fraction of their contrast); with the
 * branch, which reads the blur and undoes it, at least 10 (11), and none
 * as another ID. */
static void test_deblur_pass_out_of_focus(void **state)
{
	int off, on;
	blur_tally(*state, 3, 64, -2.4f, 0.0f, false, &off, &on);
	assert_true(off <= 4);
	assert_true(on >= 10);
}

/* Symbol 0 at 100 px and symbols 1-6 at small px, out of focus by a
 * Gaussian of sigma px (noise +-3), read by the engine as blur_probe()
 * does (deblur as there): how many of symbols 1-6 were read, or -1 where
 * any symbol was read as another ID. */
static int focus_probe(struct fixture *f, int deblur, int small, float sigma)
{
	struct image_u8 img;
	struct engine *e = blur_engine(f, deblur, 50, &img);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 0), 100.0f, 0.4f, 70, 120, &img, NULL), 0);
	static const int at[6][2] = {{170, 50}, {230, 50}, {290, 50}, {170, 180}, {230, 180}, {290, 180}};
	for (int i = 0; i < 6; i++)
		assert_int_equal(render_symbol(tree_set_token(f->trees, i + 1), (float)small, 0.3f * (float)i, at[i][0],
					       at[i][1], &img, NULL),
				 0);
	uint32_t rng = 4242u;
	test_defocus(&img, sigma, 3, &rng);
	const struct detections *d = blur_read(e, &img);
	int r = 0;
	for (int i = 0; i < d->n_fids; i++) {
		const int id = d->fids[i].id;
		const float dx = d->fids[i].x - (float)(id == 0 ? 70 : at[(id - 1) % 6][0]);
		const float dy = d->fids[i].y - (float)(id == 0 ? 120 : at[(id - 1) % 6][1]);
		if (id > 6 || dx * dx + dy * dy > 100.0f)
			r = -100;
		r += id >= 1 && id <= 6;
	}
	blur_close(f, e, &img);
	return r < 0 ? -1 : r;
}

/* Symbols 1-6 of 58-62 px beside a 100 px symbol 0, out of focus by a
 * Gaussian of 2.0-2.4 px (nine frames): the small symbols' own windows
 * hold too few long steps to read the blur, the large one's reads it.
 * With the deblurring pass's whole-frame read (the second frame
 * deconvolved under the median blur of the first frame's windows, where
 * most read one), at least 21 of the 54 are read (22; 17 with the defocus
 * branch's windows alone, 7 without the branch), every frame at least as
 * many as without the branch, none as another ID or in the wrong place. */
static void test_deblur_pass_whole_frame(void **state)
{
	int on = 0;
	for (int small = 58; small <= 62; small += 2)
		for (int k = 0; k < 3; k++) {
			const float sigma = 2.0f + 0.2f * (float)k;
			const int a = focus_probe(*state, 3, small, sigma), b = focus_probe(*state, 1, small, sigma);
			assert_true(a >= 0);
			assert_true(b >= a);
			on += b;
		}
	assert_true(on >= 21);
}

/* A band of hard shadow (dark percent of the light) across img: the
 * points within width / 2 of the line through (cx, cy) at angle a, with
 * a penumbra of pen pixels on both edges. */
static void draw_band(struct image_u8 *img, float cx, float cy, float a, float width, float pen, int dark)
{
	const float nx = -sinf(a), ny = cosf(a);
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++) {
			const float d = fabsf(((float)x - cx) * nx + ((float)y - cy) * ny);
			float t = (width / 2 - d) / pen + 0.5f;
			t = t < 0 ? 0 : t > 1 ? 1 : t;
			row[x] = (uint8_t)((float)row[x] * (1.0f - t * (float)(100 - dark) / 100.0f) + 0.5f);
		}
	}
}

/* Symbols 0-5 of size px, sharp, under two bands of hard shadow whose
 * edges have a penumbra of pen px (noise +-3), or out of focus by a
 * Gaussian of -pen px without shadows (pen < 0), read over three frames
 * by the engine with the deblurring pass as blur_probe()'s deblur says
 * (blur_engine()); the frames it deconvolved whole, its windows
 * deconvolved for a defocus into *defocused and the windows it looked at
 * into *windows. */
static int64_t shadow_focus_probe(struct fixture *f, int deblur, int size, float pen, int64_t *defocused,
				  int64_t *windows)
{
	struct image_u8 img;
	struct engine *e = blur_engine(f, deblur, 0, &img);
	static const int at[6][2] = {{60, 60}, {160, 50}, {260, 70}, {70, 180}, {170, 170}, {265, 185}};
	for (int i = 0; i < 6; i++)
		assert_int_equal(render_symbol(tree_set_token(f->trees, i), (float)size, 0.5f + 0.9f * (float)i, at[i][0],
					       at[i][1], &img, NULL),
				 0);
	uint32_t rng = 777u;
	if (pen > 0.0f) {
		draw_band(&img, 110, 120, 0.9f, 44, pen, 35);
		draw_band(&img, 230, 120, 2.3f, 36, pen, 40);
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++) {
				rng = rng * 1103515245u + 12345u;
				const int v = image_u8_row(&img, y)[x] + (int)((rng >> 16) % 7u) - 3;
				image_u8_row(&img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
	} else {
		test_defocus(&img, -pen, 3, &rng);
	}
	struct tracked_state st;
	for (uint64_t i = 1; i <= 3; i++)
		assert_int_equal(engine_process(e, &img, i, (int64_t)i * 33000000, &st), 0);
	const struct engine_third_stats *ts = engine_third_stats(e);
	const int64_t whole = ts->deblur_frames;
	*defocused = ts->deblur_defocused;
	*windows = ts->deblur_windows;
	blur_close(f, e, &img);
	return whole;
}

/* Sharp symbols of 24-28 px under two bands of hard shadow whose edges
 * have a penumbra of 4-5 px: the deblurring pass's windows read the
 * penumbra as a defocus (their long steps are nearly all the shadows'
 * edges, the symbols' own too short), and their median blur was once
 * enough to read the next frames whole (2 of 3). The print's sharpest
 * steps are sharp, so no frame is read whole now; out of focus by a
 * Gaussian of 2.2 or 2.6 px, frames are (and 40 px symbols' small
 * windows at 2.6 px too). */
static void test_deblur_frame_sharp_print(void **state)
{
	int64_t defocused, windows, plain, none;
	for (int size = 24; size <= 28; size += 2)
		for (int pen = 4; pen <= 5; pen++) {
			assert_int_equal(shadow_focus_probe(*state, 1, size, (float)pen, &defocused, &windows), 0);
			assert_true(defocused > 0);
			/* Nor are the small symbols' windows read for a defocus
			 * (the frame's most windows read one, so they were):
			 * the pass looks at the windows it looks at without
			 * its defocus branch. */
			shadow_focus_probe(*state, 3, size, (float)pen, &none, &plain);
			assert_int_equal(windows, plain);
		}
	assert_true(shadow_focus_probe(*state, 1, 60, -2.2f, &defocused, &windows) > 0);
	assert_true(shadow_focus_probe(*state, 1, 40, -2.6f, &defocused, &windows) > 0);
	shadow_focus_probe(*state, 3, 40, -2.6f, &none, &plain);
	assert_true(windows > plain);
}

/* Symbol 5 (80 px) on the unevenly lit table, the frame's grey then
 * squeezed into lo..hi (a dim camera) with noise of +-amp (a fixed
 * sequence), through the three scales at gate 32 and gate_range range;
 * 1: decoded alone, 0: nothing decoded, negative: another ID. The gate
 * statistics land in *gs. */
static int dim_probe(struct fixture *f, int range, int lo, int hi, int amp, struct engine_gate_stats *gs)
{
	gate_range = range;
	struct engine *e = make_engine3(f, 2, true, 0.115f);
	gate_range = 0;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 5), 80, 0.4f, 160, 120, &img, NULL), 0);
	uint32_t seed = 12345;
	for (int y = 0; y < H; y++) {
		uint8_t *row = image_u8_row(&img, y);
		for (int x = 0; x < W; x++) {
			seed = seed * 1103515245u + 12345u;
			const int n = amp ? (int)((seed >> 16) % (uint32_t)(2 * amp + 1)) - amp : 0;
			const int v = lo + row[x] * (hi - lo) / 255 + n;
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	return probe_finish(f, e, &img, 5, gs);
}

/* A dim camera: ink and paper 26 grey levels apart, under the gate (32),
 * so Bernsen's flat rule paints the symbol black at the fixed gate and
 * every scale loses it. Read at the frame's gate (its range of about 26
 * levels over 192 scales the gate under half, so half: 16) it is decoded.
 * With noise of +-8 (a deviation of about 5) the gate is not lowered but
 * raised over the noise (8 times its deviation). */
static void test_frame_gate_dim(void **state)
{
	struct fixture *f = *state;
	struct engine_gate_stats gs;
	assert_int_equal(dim_probe(f, 0, 40, 66, 0, &gs), 0);
	assert_int_equal(gs.frames, 2);
	assert_int_equal(gs.low_frames, 0);
	assert_int_equal(gs.lowest, 32);
	assert_int_equal(dim_probe(f, 192, 40, 66, 0, &gs), 1);
	assert_int_equal(gs.low_frames, 2);
	assert_int_equal(gs.lowest, 16);
	dim_probe(f, 192, 40, 66, 8, &gs);
	assert_int_equal(gs.frames, 2);
	assert_int_equal(gs.low_frames, 0);
	assert_int_equal(gs.high_frames, 2);
	assert_true(gs.highest > 32 && gs.highest < 64);
	/* Noise of +-14 (a deviation of about 8) over the full range: the
	 * gate is raised to its cap, twice the configured one, and the symbol
	 * is still read. */
	assert_int_equal(dim_probe(f, 192, 0, 255, 14, &gs), 1);
	assert_int_equal(gs.high_frames, 2);
	assert_int_equal(gs.highest, 64);
	/* A bright frame keeps the gate. */
	assert_int_equal(dim_probe(f, 192, 0, 255, 0, &gs), 1);
	assert_int_equal(gs.low_frames, 0);
}

/* A fingertip on a dim, nearly flat table (grey 40-47): a disc of
 * radius 5 peak grey levels brighter, falling off over 8 px more, through
 * an engine finding fingers of 18 px (finger_min_contrast 16) at Bernsen
 * radius 8, gate and gate_range as given; returns the fingers found, the
 * gate statistics in *gs. */
static int finger_probe(struct fixture *f, int range, int gate, int peak, struct engine_gate_stats *gs)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	f->trk = track_create(&tk, &err);
	assert_non_null(f->trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 8, .gate = gate, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .gate_range = range,
				   .match = {.trees = f->trees, .root_min_px = 12, .root_max_px = 120,
					     .finger_size_px = 18, .finger_sensitivity = 0.5f, .finger_min_contrast = 16},
				   .tracker = f->trk, .max_detections = 64};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const float d = hypotf((float)(x - 160), (float)(y - 120));
			const float t = d < 5.0f ? 1.0f : d < 13.0f ? (13.0f - d) / 8.0f : 0.0f;
			image_u8_row(&img, y)[x] = (uint8_t)(40 + (int)lrintf((float)peak * t) + (x * 7 / W));
		}
	return probe_finish(f, e, &img, -1, gs);
}

/* A fingertip 24 levels over a dim table: at the fixed gate (32) its
 * window is flat and it is lost; the frame's gate (16: the frame spans
 * about 30 levels) finds it. A fainter one (18 levels), whose mean
 * stands out from its surround by less than finger_min_contrast (16): at
 * a fixed gate of 16 (the same mask) it is still lost; at the frame's
 * gate the finger contrast is scaled down with the gate (to 8) and it is
 * found. */
static void test_frame_gate_fingers(void **state)
{
	struct engine_gate_stats gs;
	assert_int_equal(finger_probe(*state, 0, 32, 24, &gs), 0);
	assert_int_equal(finger_probe(*state, 192, 32, 24, &gs), 1);
	assert_int_equal(gs.lowest, 16);
	assert_int_equal(finger_probe(*state, 0, 16, 18, &gs), 0);
	assert_int_equal(finger_probe(*state, 192, 32, 18, &gs), 1);
}

/* Bits x0 <= x < x1, y0 <= y < y1 of m set to a checkerboard of 4 px
 * squares (structure: both colours in every tile it covers). */
static void mask_checker(struct bitmask *m, int x0, int y0, int x1, int y1)
{
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			if (((x / 4) + (y / 4)) & 1)
				m->bits[(size_t)y * m->stride_words + x / 64] |= 1ull << (x % 64);
}

static void mask_clear(struct bitmask *m)
{
	memset(m->bits, 0, (size_t)m->stride_words * (size_t)H * sizeof *m->bits);
}

/* The third scale's windows of mask m: from its tree, as the engine finds them. */
#define WINDOWS_SCRATCH (4 * ((W + WINDOWS_TILE - 1) / WINDOWS_TILE) * ((H + WINDOWS_TILE - 1) / WINDOWS_TILE) + 8192)
static int find_windows(struct segment *seg, const struct bitmask *m, const struct detections *d, int pad,
			int32_t *scratch, struct window *win, int cap)
{
	const struct region_tree *tree = NULL;
	assert_int_equal(segment_process(seg, m, &tree), 0);
	struct windows_scan scan;
	windows_scan(&scan, tree, d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	return windows_find(&scan, pad, NULL, win, cap);
}

/* Windows of tree by windows_find's rule (rule: NULL or the radius rule),
 * or (small_px > 0) by windows_find_small's, with the engine's scan: small
 * structure judged up to 64 px. */
static int find_in(const struct region_tree *tree, const struct detections *d, int small_px, int pad,
		   const struct windows_radius *rule, int32_t *scratch, struct window *win)
{
	struct windows_scan scan;
	windows_scan(&scan, tree, d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	return small_px > 0 ? windows_find_small(&scan, small_px, pad, win, 4) : windows_find(&scan, pad, rule, win, 4);
}

/* Bits x0 <= x < x1, y0 <= y < y1 of m set (on) or cleared. */
static void mask_rect(struct bitmask *m, int x0, int y0, int x1, int y1, bool on)
{
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			uint64_t *w = &m->bits[(size_t)y * m->stride_words + x / 64];
			*w = on ? *w | 1ull << (x % 64) : *w & ~(1ull << (x % 64));
		}
}

/* A white card side px a side at (x0, y0) holding a 3 x 3 grid of black
 * 8 px dots: a region that branches as a symbol's root does. */
static void mask_card(struct bitmask *m, int x0, int y0, int side)
{
	mask_rect(m, x0, y0, x0 + side, y0 + side, true);
	for (int i = 1; i <= 3; i++)
		for (int j = 1; j <= 3; j++) {
			const int cx = x0 + side * i / 4, cy = y0 + side * j / 4;
			mask_rect(m, cx - 4, cy - 4, cx + 4, cy + 4, false);
		}
}

struct win_fixture {
	struct bitmask m;
	struct detections d;
	struct segment *seg;
};

/* A segmenter, a mask and cap detections of the test frame's size. */
static void win_fixture_open(struct win_fixture *f, int cap)
{
	int err = 0;
	struct segment_config sc = {.max_width = W, .max_height = H, .adj_cap = 16};
	f->seg = segment_create(&sc, &err);
	assert_non_null(f->seg);
	assert_int_equal(bitmask_alloc(&f->m, W, H), 0);
	assert_int_equal(detections_alloc(&f->d, cap), 0);
}

static void win_fixture_close(struct win_fixture *f)
{
	detections_free(&f->d);
	bitmask_free(&f->m);
	segment_destroy(f->seg);
}

/* Islands (windows_scan's n_islands) that decoded symbols explain, on
 * random symbols: white 3 px dots every 10 px on black, each an island,
 * count where no symbol's box (its centre +- 0.85 of its size + 4 px)
 * holds the dot's box, wherever the symbols lie (across the scan's cells
 * of 128 px, past the frame's edges), as few small ones and as many large
 * ones (more than the scan's index of symbols by cell holds). */
static void test_windows_explained(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 64);
	static int32_t scratch[WINDOWS_SCRATCH];
	mask_clear(&f.m);
	for (int y = 6; y + 3 <= H; y += 10)
		for (int x = 6; x + 3 <= W; x += 10)
			mask_rect(&f.m, x, y, x + 3, y + 3, true);
	const struct region_tree *tree = NULL;
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	uint32_t seed = 7;
	for (int trial = 0; trial < 200; trial++) {
		/* Every other trial, first 50 symbols far above or below the
		 * frame whose boxes span its width (3 cells each): more than the
		 * index has room for. */
		const int decoys = trial % 2 ? 50 : 0;
		f.d.n_fids = decoys + 1 + (int)(test_rand(&seed) % 10);
		for (int i = 0; i < f.d.n_fids; i++) {
			const float size = i < decoys ? 400.0f : 4.0f + (float)(test_rand(&seed) % 60);
			f.d.fids[i] = (struct fiducial_det){.id = 1,
							  .x = (float)(test_rand(&seed) % 4000) / 10.0f - 40.0f,
							  .y = (float)(test_rand(&seed) % 3200) / 10.0f - 40.0f,
							  .size_px = size};
			if (i < decoys)
				f.d.fids[i].y = i % 2 ? -400.0f : H + 400.0f;
		}
		int expect = 0;
		for (int y = 6; y + 3 <= H; y += 10)
			for (int x = 6; x + 3 <= W; x += 10) {
				bool in = false;
				for (int i = 0; i < f.d.n_fids && !in; i++) {
					const float half = 0.85f * f.d.fids[i].size_px + 4.0f;
					in = (float)x >= f.d.fids[i].x - half && (float)(x + 2) <= f.d.fids[i].x + half &&
					     (float)y >= f.d.fids[i].y - half && (float)(y + 2) <= f.d.fids[i].y + half;
				}
				expect += !in;
			}
		struct windows_scan scan;
		windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
		assert_false(scan.whole);
		assert_int_equal(scan.n_islands, expect);
	}
	win_fixture_close(&f);
}

/* The third scale's windows: structure that no decoded symbol explains
 * gets a window around it, grown by the pad; a decoded symbol's box, a
 * finger's, a uniform area, a speck and a lone round region (a finger
 * that was not looked for: one boundary in each tile) get none; structure
 * over most of the frame is the whole frame. */
static void test_windows(void **state)
{
	(void)state;
	struct bitmask m;
	struct detections d;
	int err = 0;
	struct segment_config sc = {.max_width = W, .max_height = H, .adj_cap = 16};
	struct segment *seg = segment_create(&sc, &err);
	assert_non_null(seg);
	assert_int_equal(bitmask_alloc(&m, W, H), 0);
	assert_int_equal(detections_alloc(&d, 8), 0);
	static int32_t scratch[WINDOWS_SCRATCH];
	assert_true(windows_scratch_len(W, H, regions_region_capacity(W, H)) <= WINDOWS_SCRATCH);
	struct window win[4];
	memset(m.bits, 0, (size_t)m.stride_words * (size_t)H * sizeof *m.bits);
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 0);
	/* A speck: no branching region. */
	m.bits[(size_t)100 * m.stride_words + 1] = 0x7;
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 0);
	/* A disc 30 px across at (250, 180): two regions in each tile it meets. */
	for (int y = 150; y < 210; y++)
		for (int x = 220; x < 280; x++)
			if ((x - 250) * (x - 250) + (y - 180) * (y - 180) <= 15 * 15)
				m.bits[(size_t)y * m.stride_words + x / 64] |= 1ull << (x % 64);
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 0);
	/* Structure in tiles (2..3, 2..3): one window, grown by 16. */
	mask_checker(&m, 70, 70, 120, 120);
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 1);
	assert_int_equal(win[0].x0, 64 - 16);
	assert_int_equal(win[0].y0, 64 - 16);
	assert_int_equal(win[0].x1, 128 + 16);
	assert_int_equal(win[0].y1, 128 + 16);
	/* A decoded symbol over it explains it; so does a finger. */
	d.n_fids = 1;
	d.fids[0] = (struct fiducial_det){.id = 1, .x = 95, .y = 95, .size_px = 40};
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 0);
	/* Structure beside it, partly in its box: a window all the same. */
	mask_checker(&m, 124, 70, 168, 120);
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 1);
	assert_true(win[0].x0 <= 124 && win[0].x1 >= 168);
	memset(m.bits, 0, (size_t)m.stride_words * (size_t)H * sizeof *m.bits);
	mask_checker(&m, 70, 70, 120, 120);
	d.n_fids = 0;
	d.n_fingers = 1;
	d.fingers[0] = (struct finger_det){.x = 95, .y = 95, .diameter_px = 50};
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), 0);
	d.n_fingers = 0;
	/* Two groups whose grown boxes overlap are one window. */
	mask_checker(&m, 200, 70, 220, 90);
	assert_int_equal(find_windows(seg, &m, &d, 40, scratch, win, 4), 1);
	assert_int_equal(win[0].x0, 64 - 40);
	assert_int_equal(win[0].x1, 224 + 40);
	/* Structure over most of the frame: the whole frame. */
	mask_checker(&m, 0, 0, W, H);
	assert_int_equal(find_windows(seg, &m, &d, 16, scratch, win, 4), -1);
	detections_free(&d);
	bitmask_free(&m);
	segment_destroy(seg);
}

/* A mask, a detections list and a segmenter for the windows' tests. */
/* The longest side of the live regions in a window (windows_live_side,
 * the ratio pass's large rungs): a card of 50 px reads 50 in a window
 * that holds it (the left 100 columns hold it whole), one of 130 px 130;
 * a window that holds part of a card, or none, reads 0 (a region counts
 * where its box lies in the window), and a card that a decoded symbol
 * explains reads 0. */
static void test_windows_live_side(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	const struct window all = {0, 0, W, H, 0}, part = {0, 0, 100, H, 0}, none = {200, 0, W, H, 0};
	const int sides[] = {50, 130};
	for (int k = 0; k < 2; k++) {
		mask_clear(&f.m);
		mask_card(&f.m, 40, 40, sides[k]);
		const struct region_tree *tree = NULL;
		assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
		struct windows_scan scan;
		f.d.n_fids = 0;
		windows_scan(&scan, tree, &f.d, 240, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
		assert_int_equal(windows_live_side(&scan, &all), sides[k]);
		assert_int_equal(windows_live_side(&scan, &part), k == 0 ? sides[k] : 0);
		assert_int_equal(windows_live_side(&scan, &none), 0);
		f.d.n_fids = 1;
		f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 40 + sides[k] / 2, .y = 40 + sides[k] / 2,
						    .size_px = (float)sides[k]};
		windows_scan(&scan, tree, &f.d, 240, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
		assert_int_equal(windows_live_side(&scan, &all), 0);
	}
	win_fixture_close(&f);
}

/* A card's rim that joined a fingertip's rim (Bernsen draws a dark rim
 * around both; where the fingertip nears the card they touch): the joined
 * region touches the table, the card and the fingertip, three regions, as
 * a symbol's root does, and reaches past the decoded symbol's box. With
 * nothing found it gets a window; the symbol decoded on the card explains
 * it (its card is no branch), and so does the fingertip found. */
static void test_windows_finger_rim(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	mask_clear(&f.m);
	for (int y = 20; y < 144; y++)
		for (int x = 60; x < 144; x++) {
			const int r2 = (x - 100) * (x - 100) + (y - 38) * (y - 38);
			const bool card_rim = y >= 60 && y < 144 && !(x >= 64 && x < 140 && y >= 64 && y < 140);
			const bool finger_rim = r2 <= 14 * 14 && r2 > 10 * 10;
			const bool bridge = x >= 98 && x < 103 && y >= 50 && y < 60;
			if (card_rim || finger_rim || bridge)
				f.m.bits[(size_t)y * f.m.stride_words + x / 64] |= 1ull << (x % 64);
		}
	assert_int_equal(find_windows(f.seg, &f.m, &f.d, 16, scratch, win, 4), 1);
	f.d.n_fids = 1;
	f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 102, .y = 102, .size_px = 76};
	assert_int_equal(find_windows(f.seg, &f.m, &f.d, 16, scratch, win, 4), 0);
	f.d.n_fids = 0;
	f.d.n_fingers = 1;
	f.d.fingers[0] = (struct finger_det){.x = 100, .y = 38, .diameter_px = 20};
	assert_int_equal(find_windows(f.seg, &f.m, &f.d, 16, scratch, win, 4), 0);
	win_fixture_close(&f);
}

/* A black square of side s at (x, y) with two white holes of 6 x 6 px:
 * a region that branches (its surround and two children). */
static void mask_symbol(struct bitmask *m, int x, int y, int side)
{
	for (int j = y; j < y + side; j++)
		for (int i = x; i < x + side; i++) {
			const bool hole = j >= y + 4 && j < y + 10 && ((i >= x + 4 && i < x + 10) || (i >= x + 12 && i < x + 18));
			if (!hole)
				m->bits[(size_t)j * m->stride_words + i / 64] |= 1ull << (i % 64);
		}
}

/* The radius rule: the ratio of the side, rounded, clamped; each window
 * gets the radius of its largest branching region; overlapping windows of
 * different radii stay apart, of one radius are joined, and with a rule
 * the answer is never the whole frame. */
static void test_windows_radius(void **state)
{
	(void)state;
	const struct windows_radius rule = {0.12f, 3, 63};
	assert_int_equal(windows_radius(&rule, 100), 12);
	assert_int_equal(windows_radius(&rule, 50), 6);
	assert_int_equal(windows_radius(&rule, 10), 3);
	assert_int_equal(windows_radius(&rule, 1000), 63);
	struct bitmask m;
	struct detections d;
	int err = 0;
	struct segment_config sc = {.max_width = W, .max_height = H, .adj_cap = 16};
	struct segment *seg = segment_create(&sc, &err);
	assert_non_null(seg);
	assert_int_equal(bitmask_alloc(&m, W, H), 0);
	assert_int_equal(detections_alloc(&d, 8), 0);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	memset(m.bits, 0, (size_t)m.stride_words * (size_t)H * sizeof *m.bits);
	mask_symbol(&m, 20, 20, 60);  /* tiles 0..2: radius 7 */
	mask_symbol(&m, 140, 80, 24); /* tiles 4..5, 2..3: radius 3 (2.88) */
	const struct region_tree *tree = NULL;
	assert_int_equal(segment_process(seg, &m, &tree), 0);
	assert_int_equal(find_in(tree, &d, 0, 8, &rule, scratch, win), 2);
	int big = win[0].radius == 7 ? 0 : 1;
	assert_int_equal(win[big].radius, 7);
	assert_int_equal(win[1 - big].radius, 3);
	assert_int_equal(win[big].x0, 0);
	assert_int_equal(win[big].x1, 96 + 8);
	assert_int_equal(win[1 - big].x0, 128 - 8);
	assert_int_equal(win[1 - big].y1, 128 + 8);
	/* Grown until they overlap: one window without a rule, two with. */
	assert_int_equal(find_in(tree, &d, 0, 24, NULL, scratch, win), 1);
	assert_int_equal(win[0].radius, 0);
	assert_int_equal(find_in(tree, &d, 0, 24, &rule, scratch, win), 2);
	/* Covering most of the frame: the whole frame without a rule, the
	 * windows with one. */
	assert_int_equal(find_in(tree, &d, 0, 200, NULL, scratch, win), -1);
	assert_int_equal(find_in(tree, &d, 0, 200, &rule, scratch, win), 2);
	/* A small symbol whose tiles meet the big one's: one group, whose
	 * radius is its largest region's. */
	mask_symbol(&m, 20, 100, 30);
	assert_int_equal(segment_process(seg, &m, &tree), 0);
	assert_int_equal(find_in(tree, &d, 0, 8, &rule, scratch, win), 2);
	big = win[0].radius == 7 ? 0 : 1;
	assert_int_equal(win[big].radius, 7);
	assert_int_equal(win[big].y1, 160 + 8);
	detections_free(&d);
	bitmask_free(&m);
	segment_destroy(seg);
}

/* A black square of side s at (x, y) with two white holes of h x 2 px. */
static void mask_small(struct bitmask *m, int x, int y, int side, int h)
{
	for (int j = y; j < y + side; j++)
		for (int i = x; i < x + side; i++) {
			const bool hole = j >= y + 4 && j < y + 6 && ((i >= x + 4 && i < x + 4 + h) || (i >= x + 10 && i < x + 10 + h));
			if (!hole)
				m->bits[(size_t)j * m->stride_words + i / 64] |= 1ull << (i % 64);
		}
}

/* Small structure (windows_find_small): a 20 px root whose two children
 * are 6 px gets a window (grown by the pad) where windows_find's 16 px
 * children find none; with 2 px children (specks), or 48 px across, none. */
/* A black square side px a side at (x0, y0) on white, holding a white
 * one-pixel speck every 4 px: a region with more neighbours than a list
 * of 16 holds (saturated), as a streaked symbol's root. */
static void mask_speckled(struct bitmask *m, int x0, int y0, int side)
{
	mask_rect(m, x0, y0, x0 + side, y0 + side, false);
	for (int y = y0 + 2; y < y0 + side - 1; y += 4)
		for (int x = x0 + 2; x < x0 + side - 1; x += 4)
			mask_rect(m, x, y, x + 1, y + 1, true);
}

/* windows_find_saturated: a window around a saturated region of a
 * symbol's size that no decoded symbol explains, and none where
 * windows_find's rule sees no branches; none for one under 256 px, one
 * as large as the scan's symbol bound (120 px), or one in a decoded
 * symbol's box. */
static void test_windows_saturated(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	struct windows_scan scan;
	/* side, decoded symbol over it, windows expected */
	const struct {
		int side;
		bool decoded;
		int windows;
	} cases[] = {{40, false, 1}, {40, true, 0}, {14, false, 0}, {130, false, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		mask_rect(&f.m, 0, 0, W, H, true);
		mask_speckled(&f.m, 60, 60, cases[c].side);
		f.d.n_fids = 0;
		if (cases[c].decoded) {
			f.d.n_fids = 1;
			f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 80, .y = 80, .size_px = 40};
		}
		assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
		windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
		assert_int_equal(windows_find(&scan, 16, NULL, win, 4), 0);
		assert_int_equal(windows_find_saturated(&scan, 16, NULL, win, 4), cases[c].windows);
		if (cases[c].windows) {
			assert_true(win[0].x0 <= 60 && win[0].y0 <= 60);
			assert_true(win[0].x1 >= 60 + cases[c].side && win[0].y1 >= 60 + cases[c].side);
		}
	}
	win_fixture_close(&f);
}

static void test_windows_small(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	mask_clear(&f.m);
	mask_small(&f.m, 100, 100, 20, 3);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	assert_int_equal(find_in(tree, &f.d, 0, 8, NULL, scratch, win), 0);
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 1);
	assert_int_equal(win[0].x0, 96 - 8);
	assert_int_equal(win[0].y0, 96 - 8);
	assert_int_equal(win[0].x1, 128 + 8);
	assert_int_equal(win[0].y1, 128 + 8);
	/* Explained by a decoded symbol there: none. */
	f.d.n_fids = 1;
	f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 110, .y = 110, .size_px = 20};
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 0);
	f.d.n_fids = 0;
	mask_clear(&f.m);
	mask_small(&f.m, 100, 100, 20, 1);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 0);
	mask_clear(&f.m);
	mask_small(&f.m, 100, 100, 48, 3);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 0);
	win_fixture_close(&f);
}

/* Squeezed structure (windows_find_small): a 32 px root whose two
 * children are 2 px specks, as a symbol a barrel lens squeezes near the
 * frame's edge keeps of its holes in the first scale, gets a window; the
 * same at 20 px (test_windows_small) and at 26 px gets none. */
static void test_windows_squeezed(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	mask_clear(&f.m);
	mask_small(&f.m, 100, 100, 32, 1);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 1);
	assert_int_equal(win[0].x0, 96 - 8);
	mask_clear(&f.m);
	mask_small(&f.m, 100, 100, 26, 1);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	assert_int_equal(find_in(tree, &f.d, 40, 8, NULL, scratch, win), 0);
	win_fixture_close(&f);
}

/* n islands of m: 4 px squares of the other colour, 10 px apart in rows
 * of three from (x, y). */
static void mask_islands(struct bitmask *m, int x, int y, int n)
{
	for (int k = 0; k < n; k++)
		for (int j = 0; j < 4; j++)
			for (int i = 0; i < 4; i++) {
				const int px = x + 10 * (k % 3) + i, py = y + 10 * (k / 3) + j;
				m->bits[(size_t)py * m->stride_words + px / 64] |= 1ull << (px % 64);
			}
}

/* Islands (windows_find_islands): nine 4 px islands in one dark region,
 * a symbol's holes and dots whose ring and blobs joined the table, branch
 * nowhere (windows_find_small finds none) but get a window: the 3 x 3
 * tiles around their tile, grown by the pad. Seven get none, and none
 * where a decoded symbol explains them. */
static void test_windows_islands(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	struct windows_scan scan;
	mask_clear(&f.m);
	mask_islands(&f.m, 100, 100, 9);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(windows_find_small(&scan, 64, 8, win, 4), 0);
	assert_int_equal(windows_find_islands(&scan, 64, 8, win, 4), 1);
	assert_int_equal(win[0].x0, 2 * WINDOWS_TILE - 8);
	assert_int_equal(win[0].y0, 2 * WINDOWS_TILE - 8);
	assert_int_equal(win[0].x1, 5 * WINDOWS_TILE + 8);
	assert_int_equal(win[0].y1, 5 * WINDOWS_TILE + 8);
	f.d.n_fids = 1;
	f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 112, .y = 112, .size_px = 30};
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(windows_find_islands(&scan, 64, 8, win, 4), 0);
	f.d.n_fids = 0;
	mask_clear(&f.m);
	mask_islands(&f.m, 100, 100, 7);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(windows_find_islands(&scan, 64, 8, win, 4), 0);
	win_fixture_close(&f);
}

/* The region of tree whose box is x0 <= x < x1, y0 <= y < y1 (-1: none). */
static int32_t region_at(const struct region_tree *tree, int x0, int y0, int x1, int y1)
{
	for (int32_t r = 0; r < tree->n_regions; r++) {
		const struct region *g = &tree->regions[r];
		if (g->x0 == x0 && g->y0 == y0 && g->x1 == x1 - 1 && g->y1 == y1 - 1)
			return r;
	}
	return -1;
}

/* Islands around a blob (windows_blobs): a bright hand 120 x 60 px on a
 * dark table, a rim of nine 4 px white specks 23-46 px above its edge (the
 * noise the first scale thresholds there on a DI table), all in the tile
 * row above the hand's: without the blob, islands and a window; with it
 * found as a blob (or a hand) they lie in what surrounds it, in tiles
 * within the reach (30 px), taken back, no window; at a reach of 8 px
 * their tiles are not near it and they stay. Islands nested in a blob (a
 * card taken for a blob: white dots in its black squares, their neighbour
 * in its box) stay. */
static void test_windows_blobs(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	struct windows_scan scan;
	mask_clear(&f.m);
	mask_rect(&f.m, 100, 112, 220, 172, true);
	mask_islands(&f.m, 140, 66, 9);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	const int32_t hand = region_at(tree, 100, 112, 220, 172);
	assert_true(hand >= 0);
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	windows_blobs(&scan, 30);
	assert_int_equal(scan.n_islands, 9);
	assert_int_equal(windows_find_islands(&scan, 64, 8, win, 4), 1);
	f.d.n_blobs = 1;
	f.d.blobs[0] = (struct blob_det){.x = 160, .y = 142, .w = 120, .h = 60, .region = hand, .hand = true};
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	windows_blobs(&scan, 8);
	assert_int_equal(scan.n_islands, 9);
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	windows_blobs(&scan, 30);
	assert_int_equal(scan.n_islands, 0);
	assert_int_equal(windows_find_islands(&scan, 64, 8, win, 4), 0);
	/* A card of 60 px taken for a blob, 3 x 3 black squares of 8 px each
	 * holding a white 2 x 2 dot. */
	mask_clear(&f.m);
	mask_card(&f.m, 100, 100, 60);
	for (int i = 1; i <= 3; i++)
		for (int j = 1; j <= 3; j++)
			mask_rect(&f.m, 100 + 60 * i / 4 - 1, 100 + 60 * j / 4 - 1, 100 + 60 * i / 4 + 1,
				  100 + 60 * j / 4 + 1, true);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	const int32_t card = region_at(tree, 100, 100, 160, 160);
	assert_true(card >= 0);
	f.d.blobs[0] = (struct blob_det){.x = 130, .y = 130, .w = 60, .h = 60, .region = card};
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(scan.n_islands, 9);
	windows_blobs(&scan, 30);
	assert_int_equal(scan.n_islands, 9);
	f.d.n_blobs = 0;
	win_fixture_close(&f);
}

/* Islands around a bright region that is no blob (windows_blobs'
 * RIM_MIN_ISLANDS): a hand 240 px wide on a dark table, not found as a blob
 * (with outlines off, one wider than blob_max), and a row of n 4 px white
 * specks 21-24 px above its edge. 32 of them, a rim's count, are taken
 * back at a reach of 30 px; 31 (a few pieces of an unread symbol) stay,
 * and so do 32 beside a bright strip under the mean's window in area
 * (4 x 30 x 30 px). */
static int rim_islands_left(int n, int strip_h)
{
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	const struct region_tree *tree = NULL;
	struct windows_scan scan;
	mask_clear(&f.m);
	mask_rect(&f.m, 40, 160, 280, 160 + strip_h, true);
	for (int k = 0; k < n; k++)
		mask_rect(&f.m, 40 + 7 * k, 136, 44 + 7 * k, 140, true);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	windows_scan(&scan, tree, &f.d, 120, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(scan.n_islands, n);
	windows_blobs(&scan, 30);
	const int left = scan.n_islands;
	win_fixture_close(&f);
	return left;
}

static void test_windows_rim_islands(void **state)
{
	(void)state;
	assert_int_equal(rim_islands_left(32, 60), 0);
	assert_int_equal(rim_islands_left(31, 60), 31);
	assert_int_equal(rim_islands_left(32, 12), 32);
}

/* A hand-like region (windows_find's branch share): a bright region of
 * 200 x 150 px on a dark table with two holes of 16 and 25 px touches
 * three regions of 16 px or more, as a symbol's root does, but its holes
 * hold 0.14 % of it: no window. A card of 130 px holding nine 8 px dots
 * (7 % of it) keeps its window. */
static void test_windows_branch_share(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	const struct region_tree *tree = NULL;
	mask_clear(&f.m);
	mask_rect(&f.m, 60, 40, 260, 190, true);
	mask_rect(&f.m, 100, 80, 104, 84, false);
	mask_rect(&f.m, 200, 150, 205, 155, false);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	struct windows_scan scan;
	windows_scan(&scan, tree, &f.d, 240, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(scan.n_live, 0);
	assert_int_equal(windows_find(&scan, 16, NULL, win, 4), 0);
	mask_clear(&f.m);
	mask_card(&f.m, 60, 40, 130);
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	windows_scan(&scan, tree, &f.d, 240, 64, NULL, 0, scratch, WINDOWS_SCRATCH);
	assert_int_equal(windows_find(&scan, 16, NULL, win, 4), 1);
	win_fixture_close(&f);
}

/* grey's x0 <= x < x1, y0 <= y < y1 set to a checkerboard of 2 px
 * squares of grey a and b. */
static void grey_checker(struct image_u8 *g, int x0, int y0, int x1, int y1, uint8_t a, uint8_t b)
{
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			g->data[(size_t)y * (size_t)g->stride + x] = ((x / 2) + (y / 2)) & 1 ? a : b;
}

/* Marks scan's ink tiles (windows_ink) from its grey g's blocks at gate
 * 32, radius 8. */
static void ink_mark(struct windows_scan *scan, const struct image_u8 *g)
{
	static struct windows_block blocks[((W + 15) / 16) * ((H + 15) / 16)];
	static uint8_t lohi[2 * ((W + 15) / 16) * ((H + 15) / 16)];
	assert_true(windows_ink_blocks_cap(g->width, g->height) <= (int)(sizeof blocks / sizeof *blocks));
	threshold_block_extremes_cpu(g, lohi);
	windows_ink(scan, 8, blocks, windows_ink_blocks(lohi, g->width, g->height, 32, blocks));
}

/* Ink windows of grey (w x h) over mask m's tree, gate 32, pad 32. */
static int ink_in(struct segment *seg, const struct bitmask *m, const struct image_u8 *g, const struct detections *d,
		  int32_t *scratch, struct window *win)
{
	const struct region_tree *tree = NULL;
	assert_int_equal(segment_process(seg, m, &tree), 0);
	struct windows_scan scan;
	windows_scan(&scan, tree, d, 120, 64, g, 0, scratch, WINDOWS_SCRATCH);
	ink_mark(&scan, g);
	return windows_find_ink(&scan, 32, 3, win, 4);
}

/* grey's x0 <= x < x1, y0 <= y < y1 set to v. */
static void grey_fill(struct image_u8 *g, int x0, int y0, int x1, int y1, uint8_t v)
{
	for (int y = y0; y < y1; y++)
		memset(g->data + (size_t)y * (size_t)g->stride + x0, v, (size_t)(x1 - x0));
}

/* Ink (windows_ink, windows_find_ink): print in a shadow (paper 80, ink
 * 10) beside lit paper (230), where the first mask is black, gets a
 * window around its tiles whose blocks the light reaches (within the
 * radius, 8) and hold a stroke (the block at x 128 holds the print's last
 * two columns, dark with no paper left of them: none), grown by the pad,
 * at the radius asked for; so does a dark band 11 px wide (paper within 6
 * px of its middle on both sides). A flat table, a shadow's step, print
 * whose paper no brighter light reaches (the flat rule's black), a hand's
 * dim edge beside its palm, the same edge blurred with noise along it, a
 * dark band 12 px wide, print too dark for the gate, print in a decoded
 * symbol's box, print where the mask is white and print in tiles where
 * the first mask's structure has a window (windows_find) get none; the
 * blocks past the last whole 16 columns count too. */
static void test_windows_ink(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	struct image_u8 g;
	assert_int_equal(image_u8_alloc(&g, W, H), 0);
	mask_clear(&f.m);
	grey_fill(&g, 0, 0, W, H, 128);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	grey_fill(&g, W / 2, 0, W, H, 43);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	grey_fill(&g, 0, 0, W, H, 230);
	grey_fill(&g, 96, 96, 160, 160, 80);
	grey_checker(&g, 100, 100, 130, 130, 10, 80);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 1);
	assert_int_equal(win[0].x0, 3 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].y0, 3 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].x1, 4 * WINDOWS_TILE + 32);
	assert_int_equal(win[0].y1, 5 * WINDOWS_TILE + 32);
	assert_int_equal(win[0].radius, 3);
	f.d.n_fids = 1;
	f.d.fids[0] = (struct fiducial_det){.id = 1, .x = 115, .y = 115, .size_px = 30};
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	f.d.n_fids = 0;
	mask_checker(&f.m, 96, 96, 160, 160);
	assert_int_equal(find_windows(f.seg, &f.m, &f.d, 16, scratch, win, 4), 1);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	memset(f.m.bits, 0xff, (size_t)f.m.stride_words * (size_t)H * sizeof *f.m.bits);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	mask_clear(&f.m);
	grey_fill(&g, 0, 0, W, H, 80);
	grey_checker(&g, 100, 100, 130, 130, 10, 80);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	/* A hand's dim edge (50 beside a table of 10) near its brighter
	 * palm (110): a step, no stroke. */
	grey_fill(&g, 0, 0, W, H, 110);
	grey_fill(&g, 96, 96, 160, 160, 50);
	grey_fill(&g, 96, 96, 104, 160, 10);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	/* The same edge blurred, its noise crossing the block's mid-grey (30)
	 * back and forth: dark between bright along the rows, but never a
	 * fraction of the paper beside it. */
	static const uint8_t soft[] = {20, 34, 26, 34, 40, 45};
	for (int i = 0; i < (int)sizeof soft; i++)
		grey_fill(&g, 104 + i, 96, 105 + i, 160, soft[i]);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	/* A dark band (10) on shadowed paper (80) beside lit paper: 11 px
	 * wide a stroke (paper within 6 px of its middle on both sides), 12
	 * px wide none. */
	grey_fill(&g, 0, 0, W, H, 230);
	grey_fill(&g, 96, 96, 160, 160, 80);
	grey_fill(&g, 99, 96, 110, 160, 10);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 1);
	grey_fill(&g, 110, 96, 111, 160, 10);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	grey_fill(&g, 0, 0, W, H, 30);
	grey_fill(&g, 96, 96, 160, 160, 24);
	grey_checker(&g, 96, 96, 160, 160, 4, 24);
	assert_int_equal(ink_in(f.seg, &f.m, &g, &f.d, scratch, win), 0);
	/* A frame 300 px wide: print in its last 12 columns. */
	struct bitmask m2;
	struct image_u8 g2;
	assert_int_equal(bitmask_alloc(&m2, 300, 200), 0);
	assert_int_equal(image_u8_alloc(&g2, 300, 200), 0);
	grey_fill(&g2, 0, 0, 300, 200, 230);
	assert_int_equal(ink_in(f.seg, &m2, &g2, &f.d, scratch, win), 0);
	grey_fill(&g2, 288, 96, 300, 128, 80);
	grey_checker(&g2, 290, 100, 300, 110, 10, 80);
	assert_int_equal(ink_in(f.seg, &m2, &g2, &f.d, scratch, win), 1);
	assert_int_equal(win[0].x0, 9 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].x1, 300);
	image_u8_free(&g2);
	bitmask_free(&m2);
	image_u8_free(&g);
	win_fixture_close(&f);
}

/* windows_ink_blocks' rule spelled out pixel by pixel for the block at
 * (x, y) of g: its darkest grey *lo and brightest *hi on every other row,
 * hi at least gate and lo at most a quarter of it. */
static bool ink_block_ref(const struct image_u8 *g, int x, int y, int gate, int *lo, int *hi)
{
	const int x1 = x + 16 < g->width ? x + 16 : g->width, y1 = y + 16 < g->height ? y + 16 : g->height;
	*lo = 255;
	*hi = 0;
	for (int yy = y; yy < y1; yy += 2)
		for (int i = x; i < x1; i++) {
			const int v = g->data[(size_t)yy * (size_t)g->stride + (size_t)i];
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
		}
	return *hi >= gate && 100 * (*hi - *lo) >= 75 * *hi;
}

/* The grey's blocks of ink and paper (windows_ink_blocks of the grey's
 * threshold_block_extremes_cpu) on random frames of 200 x 150 (cut
 * blocks at the right and the bottom): patches
 * of random grey and noise with random bars, at random gates; the blocks
 * are the rule's (ink_block_ref), in order, with their extremes, and the
 * frames hold blocks of both kinds. */
static void test_windows_ink_blocks(void **state)
{
	(void)state;
	struct image_u8 g;
	assert_int_equal(image_u8_alloc(&g, 200, 150), 0);
	static struct windows_block blocks[13 * 10];
	static uint8_t lohi[2 * 13 * 10];
	assert_int_equal(windows_ink_blocks_cap(200, 150), 13 * 10);
	uint32_t seed = 14;
	int n_ink = 0, n_none = 0;
	for (int frame = 0; frame < 60; frame++) {
		for (int cy = 0; cy < 150; cy += 8)
			for (int cx = 0; cx < 200; cx += 8) {
				const int base = (int)(test_rand(&seed) % 256), noise = (int)(test_rand(&seed) % 3) * 20;
				for (int y = cy; y < cy + 8 && y < 150; y++)
					for (int x = cx; x < cx + 8 && x < 200; x++) {
						const int v = base + (noise ? (int)(test_rand(&seed) % (uint32_t)(2 * noise + 1)) - noise : 0);
						g.data[(size_t)y * (size_t)g.stride + (size_t)x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
					}
			}
		for (int bar = 0; bar < 80; bar++) {
			const int x0 = (int)(test_rand(&seed) % 200), y0 = (int)(test_rand(&seed) % 150);
			const int w = 1 + (int)(test_rand(&seed) % 14), h = 1 + (int)(test_rand(&seed) % 14);
			const int v = (int)(test_rand(&seed) % 256);
			grey_fill(&g, x0, y0, x0 + w < 200 ? x0 + w : 200, y0 + h < 150 ? y0 + h : 150, (uint8_t)v);
		}
		const int gate = (int)(test_rand(&seed) % 64);
		threshold_block_extremes_cpu(&g, lohi);
		const int n = windows_ink_blocks(lohi, 200, 150, gate, blocks);
		int k = 0;
		for (int y = 0; y < 150; y += 16)
			for (int x = 0; x < 200; x += 16) {
				int lo, hi;
				if (!ink_block_ref(&g, x, y, gate, &lo, &hi)) {
					n_none++;
					continue;
				}
				assert_true(k < n);
				assert_int_equal(blocks[k].x, x);
				assert_int_equal(blocks[k].y, y);
				assert_int_equal(blocks[k].lo, lo);
				assert_int_equal(blocks[k].hi, hi);
				k++;
				n_ink++;
			}
		assert_int_equal(k, n);
	}
	assert_true(n_ink > 500 && n_none > 500);
	image_u8_free(&g);
}

/* The ink tiles not yet read (windows_find_ink_unread): print in a
 * shadow beside lit paper makes ink in the tiles at (3, 3) and (3, 4);
 * with no read their window is windows_find_ink's; a read symbol whose box
 * holds the first tile's centre leaves the second's window; one whose box
 * holds both centres leaves none. */
static void test_windows_ink_unread(void **state)
{
	(void)state;
	struct win_fixture f;
	win_fixture_open(&f, 8);
	static int32_t scratch[WINDOWS_SCRATCH];
	struct window win[4];
	struct image_u8 g;
	assert_int_equal(image_u8_alloc(&g, W, H), 0);
	mask_clear(&f.m);
	grey_fill(&g, 0, 0, W, H, 230);
	grey_fill(&g, 96, 96, 160, 160, 80);
	grey_checker(&g, 100, 100, 130, 130, 10, 80);
	const struct region_tree *tree = NULL;
	assert_int_equal(segment_process(f.seg, &f.m, &tree), 0);
	struct windows_scan scan;
	windows_scan(&scan, tree, &f.d, 120, 64, &g, 0, scratch, WINDOWS_SCRATCH);
	ink_mark(&scan, &g);
	struct detections read;
	assert_int_equal(detections_alloc(&read, 4), 0);
	assert_int_equal(windows_find_ink_unread(&scan, &read, 32, 3, win, 4), 1);
	assert_int_equal(win[0].x0, 3 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].y0, 3 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].x1, 4 * WINDOWS_TILE + 32);
	assert_int_equal(win[0].y1, 5 * WINDOWS_TILE + 32);
	read.n_fids = 1;
	read.fids[0] = (struct fiducial_det){.id = 1, .x = 112, .y = 108, .size_px = 16};
	assert_int_equal(windows_find_ink_unread(&scan, &read, 32, 3, win, 4), 1);
	assert_int_equal(win[0].y0, 4 * WINDOWS_TILE - 32);
	assert_int_equal(win[0].y1, 5 * WINDOWS_TILE + 32);
	read.fids[0] = (struct fiducial_det){.id = 1, .x = 112, .y = 128, .size_px = 40};
	assert_int_equal(windows_find_ink_unread(&scan, &read, 32, 3, win, 4), 0);
	detections_free(&read);
	image_u8_free(&g);
	win_fixture_close(&f);
}

/* Softens img: each inner pixel mixed with its 3 x 3 mean, the mean's
 * share blur, and given uniform noise of +-noise (a fixed LCG from seed);
 * copy (img's size) receives img as it was. */
static void soften3(struct image_u8 *img, struct image_u8 *copy, float blur, int noise, unsigned seed)
{
	const int w = img->width, h = img->height;
	for (int y = 0; y < h; y++)
		memcpy(image_u8_row(copy, y), image_u8_row(img, y), (size_t)w);
	unsigned r = seed;
	for (int y = 1; y < h - 1; y++)
		for (int x = 1; x < w - 1; x++) {
			int sum = 0;
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++)
					sum += image_u8_row(copy, y + dy)[x + dx];
			r = r * 1103515245u + 12345u;
			const float mix = (1.0f - blur) * (float)image_u8_row(copy, y)[x] + blur * (float)sum / 9.0f;
			const int v = (int)(mix + 0.5f) + (int)((r >> 16) % (unsigned)(2 * noise + 1)) - noise;
			image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
}

/* An engine of the daemon's defaults as c sets them (CPU backend) for
 * w x h frames of set, and its tracker in *trk (probe_read frees both). */
static struct engine *probe_engine(const struct tree_set *set, const struct tt_config *c, int w, int h,
				   struct track **trk)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	*trk = track_create(&tk, &err);
	assert_non_null(*trk);
	struct engine_config ec;
	engine_config_from(c, set, *trk, w, h, &ec);
	ec.backend = "cpu";
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	return e;
}

/* img (w x h, allocated here) a table of grey `table` with symbol id of
 * set drawn on it, size px across at angle about (cx, cy), ink 30 on a
 * card of 220. */
static void probe_card(struct image_u8 *img, int w, int h, uint8_t table, const struct tree_set *set, int id,
		       float size, float angle, float cx, float cy)
{
	assert_int_equal(image_u8_alloc(img, w, h), 0);
	for (int y = 0; y < h; y++)
		memset(image_u8_row(img, y), table, (size_t)w);
	struct render_options ro;
	render_options_default(&ro);
	ro.black = 30;
	ro.white = 220;
	assert_int_equal(render_symbol(tree_set_token(set, id), size, angle, cx, cy, img, &ro), 0);
}

/* Runs img twice through e, then destroys e and its tracker trk: 1 where
 * symbol id was decoded alone, 0 where nothing was, -1 where another ID
 * was. */
static int probe_read(struct engine *e, struct track *trk, struct image_u8 *img, int id)
{
	struct tracked_state st;
	for (uint64_t i = 1; i <= 2; i++)
		assert_int_equal(engine_process(e, img, i, (int64_t)i * 33000000, &st), 0);
	const struct detections *d = engine_detections(e);
	int r = 0;
	for (int i = 0; i < d->n_fids; i++)
		r = d->fids[i].id == id && r == 0 ? 1 : -1;
	engine_destroy(e);
	track_destroy(trk);
	return r;
}

/* The set of the tree strings in text (one a line), parsed or the test
 * fails. */
static struct tree_set *test_set(const char *text)
{
	struct tree_set *set = NULL;
	assert_int_equal(tree_set_parse(text, strlen(text), "test", &set), 0);
	return set;
}

/* probe_read, then frees the probe's frame img and its other image. */
static int probe_read_free(struct engine *e, struct track *trk, struct image_u8 *img, struct image_u8 *other, int id)
{
	const int res = probe_read(e, trk, img, id);
	image_u8_free(img);
	image_u8_free(other);
	return res;
}


/* 1: the symbol id of set decoded alone, 0: nothing, negative: another ID;
 * drawn size px across on a dark table, softened by blur (the weight of a
 * 3 x 3 box mean mixed in), through an engine whose third scale has the
 * small-symbol pass at radius_small and the upsampled pass at radius_up
 * (gate 16) with its closing read at close_up; a hard shadow (a third of
 * the light, a 2 px penumbra) darkens the frame right of the vertical line
 * edge px right of the symbol's centre (none where that is past the
 * frame), before the blur. */
static int up_probe(const struct tree_set *set, int id, float size, float blur, int radius_small, int radius_up,
			int close_up, float edge, bool sharp_up)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	struct track *trk = track_create(&tk, &err);
	assert_non_null(trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 6, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = 2, .median2 = 3, .scale3 = true, .mode3 = THRESHOLD_MEAN,
				   .mean_scale3 = 0.115f, .radius_small = radius_small,
				   .radius_up = radius_up, .gate_up = 16, .close_up = close_up, .close_up_pct = 80,
				   .sharp_up = sharp_up, .match = {.trees = set, .root_min_px = 12, .root_max_px = 120},
				   .tracker = trk, .max_detections = 64};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	struct image_u8 img, copy;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	assert_int_equal(image_u8_alloc(&copy, W, H), 0);
	for (int y = 0; y < H; y++)
		memset(image_u8_row(&img, y), 40, W);
	assert_int_equal(render_symbol(tree_set_token(set, id), size, 0.4f, 160.3f, 120.6f, &img, NULL), 0);
	for (int y = 0; edge < (float)W && y < H; y++)
		for (int x = 0; x < W; x++) {
			const float t = ((float)x - (160.3f + edge)) / 2.0f + 0.5f;
			const float k = t <= 0.0f ? 1.0f : t >= 1.0f ? 1.0f / 3.0f : 1.0f - t * 2.0f / 3.0f;
			image_u8_row(&img, y)[x] = (uint8_t)((float)image_u8_row(&img, y)[x] * k + 0.5f);
		}
	soften3(&img, &copy, blur, 0, 0);
	const int r = probe_read(e, trk, &img, id);
	image_u8_free(&img);
	image_u8_free(&copy);
	return r;
}

static int pass_probe(const struct tree_set *set, int id, float size, float blur, int radius_small, int radius_up)
{
	return up_probe(set, id, size, blur, radius_small, radius_up, 0, (float)W, false);
}

static int small_probe(const struct tree_set *set, int id, float size, float blur, int radius_small)
{
	return pass_probe(set, id, size, blur, radius_small, 0);
}

/* Symbols of 22-24 px whose 1 px holes the second scale's median erases
 * and the first scale's radius closes: the small-symbol pass reads them,
 * and over sizes 16-28 px and three blurs it adds no wrong ID (these six
 * trees are one or two nodes apart: at 20-24 px the other scales read
 * three of the drawings as another ID, with or without the pass). */
static void test_small_symbol_pass(void **state)
{
	(void)state;
	static const char text[] = "w0122211\nw01222111\nw0122111\nw012211\nb0122211\nw012121\n";
	struct tree_set *set = test_set(text);
	assert_int_equal(small_probe(set, 2, 22, 0.6f, 0), 0);
	assert_int_equal(small_probe(set, 2, 22, 0.6f, 1), 1);
	assert_int_equal(small_probe(set, 3, 22, 0.6f, 0), 0);
	assert_int_equal(small_probe(set, 3, 22, 0.6f, 1), 1);
	assert_int_equal(small_probe(set, 4, 24, 0.3f, 0), 0);
	assert_int_equal(small_probe(set, 4, 24, 0.3f, 1), 1);
	for (int id = 0; id < 6; id++)
		for (int size = 16; size <= 28; size += 2)
			for (int b = 0; b < 3; b++)
				if (small_probe(set, id, (float)size, 0.3f * (float)b, 0) >= 0)
					assert_true(small_probe(set, id, (float)size, 0.3f * (float)b, 1) >= 0);
	tree_set_free(set);
}

/* Symbols of 24-26 px of our set whose blobs hold up to 14 holes of about
 * 1 px: Bernsen at radius 1 on the frame merges them (every other pass
 * reads nothing), the upsampled pass reads them; over 24-40 px and three
 * blurs it turns no read into another ID and no miss into one. */
static void test_up_pass(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\nb012222222222221221111111\nw012222222222222222122111\n";
	struct tree_set *set = test_set(text);
	for (int id = 0; id < 6; id++) {
		assert_int_equal(pass_probe(set, id, 24, 0, 1, 0), 0);
		assert_int_equal(pass_probe(set, id, 24, 0, 1, 2), 1);
	}
	assert_int_equal(pass_probe(set, 2, 26, 0.6f, 1, 0), 0);
	assert_int_equal(pass_probe(set, 2, 26, 0.6f, 1, 2), 1);
	for (int id = 0; id < 6; id++)
		for (int size = 24; size <= 40; size += 4)
			for (int b = 0; b < 3; b++) {
				const int without = pass_probe(set, id, (float)size, 0.3f * (float)b, 1, 0);
				const int with = pass_probe(set, id, (float)size, 0.3f * (float)b, 1, 2);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* Symbols of 22-24 px of reacTIVision's set (its first eight trees) whose
 * 1-2 px holes the bilinear enlargement blends into their walls: no pass
 * reads them, the upsampled pass's Lanczos read (sharp_up) does; over
 * 22-30 px and three blurs it turns no read into another ID and no miss
 * into one. */
static void test_up_sharp(void **state)
{
	(void)state;
	static const char text[] = "w0122222212212121111\nw0122212221222121111\nw0122212221221221111\nw0122212221212121111\n"
				   "w0122222212221211111\nw0122222212212111111\nw0122222212222221111\nw0122222221212121111\n";
	struct tree_set *set = test_set(text);
	static const struct {
		int id, size, blur;
	} gained[] = {{2, 22, 2}, {4, 24, 2}, {6, 22, 0}, {6, 23, 1}};
	for (size_t i = 0; i < sizeof gained / sizeof gained[0]; i++) {
		const float size = (float)gained[i].size, blur = 0.3f * (float)gained[i].blur;
		assert_int_equal(up_probe(set, gained[i].id, size, blur, 1, 2, 4, (float)W, false), 0);
		assert_int_equal(up_probe(set, gained[i].id, size, blur, 1, 2, 4, (float)W, true), 1);
	}
	for (int id = 0; id < 8; id++)
		for (int size = 22; size <= 30; size += 2)
			for (int b = 0; b < 3; b++) {
				const int without = up_probe(set, id, (float)size, 0.3f * (float)b, 1, 2, 4, (float)W, false);
				const int with = up_probe(set, id, (float)size, 0.3f * (float)b, 1, 2, 4, (float)W, true);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* The same symbols of 26-28 px crossed by a hard shadow's edge: the
 * Lanczos read's Bernsen reads nothing whole there, its closing read
 * does (without it no pass reads them); over 24-32 px and edges left of,
 * on and right of the centre the Lanczos read turns no read into another
 * ID and no miss into one. */
static void test_up_sharp_edge(void **state)
{
	(void)state;
	static const char text[] = "w0122222212212121111\nw0122212221222121111\nw0122212221221221111\nw0122212221212121111\n"
				   "w0122222212221211111\nw0122222212212111111\nw0122222212222221111\nw0122222221212121111\n";
	struct tree_set *set = test_set(text);
	static const struct {
		int id, size, edge;
	} gained[] = {{0, 26, -6}, {1, 28, 3}, {7, 28, 0}};
	for (size_t i = 0; i < sizeof gained / sizeof gained[0]; i++) {
		const float size = (float)gained[i].size, edge = (float)gained[i].edge;
		assert_int_equal(up_probe(set, gained[i].id, size, 0.3f, 1, 2, 4, edge, false), 0);
		assert_int_equal(up_probe(set, gained[i].id, size, 0.3f, 1, 2, 4, edge, true), 1);
	}
	for (int id = 0; id < 8; id++)
		for (int size = 24; size <= 32; size += 4)
			for (int edge = -6; edge <= 6; edge += 6) {
				const int without = up_probe(set, id, (float)size, 0.3f, 1, 2, 4, (float)edge, false);
				const int with = up_probe(set, id, (float)size, 0.3f, 1, 2, 4, (float)edge, true);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* The daemon's defaults (config_defaults) with ink_up, mean_up,
 * sauvola_up and encode_up as given and sharpen_up off (the read after
 * them), over a symbol of set drawn as in a hard shadow:
 * table 150, card 220, ink 30, at 0.4 rad, the light scaled by `shadow`
 * left of a step edge px right of the symbol's centre (a 2 px ramp), half
 * blurred by a 3 x 3 box and given uniform noise of +-noise (a fixed LCG
 * from seed). 1: read as id and nothing else; 0: not read; -1: another ID
 * read. */
static int shade_probe(const struct tree_set *set, int id, float size, float edge, float shadow, int noise,
		       unsigned seed, bool ink_up, bool mean_up, bool sauvola_up, bool encode_up)
{
	struct tt_config c;
	config_defaults(&c);
	c.ink_up = ink_up;
	c.mean_up = mean_up;
	c.sauvola_up = sauvola_up;
	c.encode_up = encode_up;
	c.sharpen_up = false;
	struct track *trk;
	struct engine *e = probe_engine(set, &c, W, H, &trk);
	struct image_u8 img, copy;
	probe_card(&img, W, H, 150, set, id, size, 0.4f, 160.3f, 120.6f);
	assert_int_equal(image_u8_alloc(&copy, W, H), 0);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const float t = ((float)x - (160.3f + edge)) / 2.0f + 0.5f;
			const float k = t <= 0.0f ? shadow : t >= 1.0f ? 1.0f : shadow + t * (1.0f - shadow);
			image_u8_row(&img, y)[x] = (uint8_t)((float)image_u8_row(&img, y)[x] * k + 0.5f);
		}
	soften3(&img, &copy, 0.5f, noise, seed);
	return probe_read_free(e, trk, &img, &copy, id);
}

/* shade_probe() with the upsampled pass's local-mean reads (ink_up and
 * mean_up) both on or both off, Sauvola's after them as the defaults, the
 * encoded read off. */
static int ink_probe(const struct tree_set *set, int id, float size, float edge, float shadow, int noise,
		     unsigned seed, bool ink_up)
{
	return shade_probe(set, id, size, edge, shadow, noise, seed, ink_up, ink_up, true, false);
}

/* Over the first eight symbols of set at 24-32 px with a shadow's edge
 * across them (a third of the light, noise 5), the upsampled pass's reads
 * as `with` (ink_up, mean_up, sauvola_up, encode_up) turn no read of `without` into
 * another ID and no miss into one. */
static void shade_no_worse(const struct tree_set *set, const bool without[4], const bool with[4])
{
	for (int id = 0; id < 8; id++)
		for (int size = 24; size <= 32; size += 4)
			for (int edge = -4; edge <= 12; edge += 8) {
				const float sz = (float)size, ed = (float)edge;
				const int before =
					shade_probe(set, id, sz, ed, 0.3f, 5, 7u, without[0], without[1], without[2], without[3]);
				const int after = shade_probe(set, id, sz, ed, 0.3f, 5, 7u, with[0], with[1], with[2], with[3]);
				assert_true(after >= before);
			}
}

/* reacTIVision's first eight trees, as test_up_sharp's. */
static const char rtv8[] = "w0122222212212121111\nw0122212221222121111\nw0122212221221221111\nw0122212221212121111\n"
			   "w0122222212221211111\nw0122222212212111111\nw0122222212222221111\nw0122222221212121111\n";

/* A symbol the upsampled pass's reads gain: id at size px with the
 * shadow's edge edge px right of its centre (a third of the light) and
 * noise, read as shade_probe() does with (ink_up, mean_up, sauvola_up,
 * encode_up; encode_up false where not given) as off: nothing; as on: the
 * symbol alone. */
struct shade_gain {
	int id, size, edge, noise;
	bool off[4], on[4];
};

static void shade_gained(const struct tree_set *set, const struct shade_gain *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const float size = (float)g[i].size, edge = (float)g[i].edge;
		const bool *off = g[i].off, *on = g[i].on;
		assert_int_equal(
			shade_probe(set, g[i].id, size, edge, 0.3f, g[i].noise, 7u, off[0], off[1], off[2], off[3]), 0);
		assert_int_equal(shade_probe(set, g[i].id, size, edge, 0.3f, g[i].noise, 7u, on[0], on[1], on[2], on[3]),
				 1);
	}
}

/* Symbols of 24-30 px of reacTIVision's set mostly in a hard shadow (a
 * third of the light) with noise: no pass reads them, the upsampled
 * pass's local-mean read (ink_up) does: of the ink windows (noise 5), as
 * the Lanczos read's third at a fuzzy place (the 26 px 7, noise 3), and
 * Sauvola's as its fourth (the 32 px 7);
 * over 24-32 px and edges across the symbol it turns no read into another
 * ID and no miss into one. */
static void test_up_ink(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
	/* ink_probe() without and with ink_up. */
#define INK_GAIN {false, false, true}, {true, true, true}
	static const struct shade_gain gained[] = {
		{5, 24, 8, 5, INK_GAIN}, {5, 30, 0, 5, INK_GAIN}, {7, 26, -4, 3, INK_GAIN}, {7, 32, 4, 5, INK_GAIN}};
#undef INK_GAIN
	shade_gained(set, gained, sizeof gained / sizeof gained[0]);
	shade_no_worse(set, (const bool[4]){false, false, true}, (const bool[4]){true, true, true});
	tree_set_free(set);
}

/* Symbols of 24-28 px of reacTIVision's set mostly in a hard shadow (a
 * third of the light) with noise, which no pass read (the ink windows'
 * read on, Sauvola's read off both ways): the upsampled pass's own
 * windows read as the ink windows are (mean_up: Lanczos-3 and the small
 * local mean) read them. Over 24-32 px and edges across the symbol it
 * turns no read into another ID and no miss into one. */
static void test_up_mean(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
#define MEAN_GAIN {true, false, false}, {true, true, false}
	static const struct shade_gain gained[] = {
		{2, 26, -4, 3, MEAN_GAIN}, {5, 24, -4, 3, MEAN_GAIN}, {4, 28, -4, 5, MEAN_GAIN}};
#undef MEAN_GAIN
	shade_gained(set, gained, sizeof gained / sizeof gained[0]);
	shade_no_worse(set, (const bool[4]){true, false, false}, (const bool[4]){true, true, false});
	tree_set_free(set);
}

/* The same symbols where the small local mean reads nothing whole:
 * Sauvola's rule after it on the same enlargement (sauvola_up) reads the
 * 26 px 1 and the 28 px 6 in the ink windows (mean_up off) and the 26 px
 * 4 and the 24 px 7 after the upsampled pass's own windows' local-mean
 * read (mean_up on); nothing did without it. Over 24-32 px and edges
 * across the symbol it turns no read into another ID and no miss into
 * one, either way. */
static void test_up_sauvola(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
	/* Sauvola's read off and on, mean_up off or on both ways. */
#define SAUVOLA_GAIN(mean_up) {true, mean_up, false}, {true, mean_up, true}
	static const struct shade_gain gained[] = {{1, 26, 12, 5, SAUVOLA_GAIN(false)}, {6, 28, 4, 5, SAUVOLA_GAIN(false)},
						   {4, 26, -4, 3, SAUVOLA_GAIN(true)}, {7, 24, 12, 3, SAUVOLA_GAIN(true)}};
#undef SAUVOLA_GAIN
	shade_gained(set, gained, sizeof gained / sizeof gained[0]);
	for (int mean_up = 0; mean_up <= 1; mean_up++)
		shade_no_worse(set, (const bool[4]){true, mean_up, false}, (const bool[4]){true, mean_up, true});
	tree_set_free(set);
}

/* The same symbols where neither the small local mean nor Sauvola's rule
 * reads anything whole: the local mean once more on the enlargement
 * encoded with gamma 2.2 (encode_up) reads them (of the 720 probes of
 * the first eight symbols at 24-32 px, edges -4..12 px, noise 3 and 5, 40
 * more, none fewer, none as another ID when this was written). Over
 * 24-32 px and edges across the symbol it turns no read into another ID
 * and no miss into one. */
static void test_up_encoded(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
#define ENCODE_GAIN {true, true, true, false}, {true, true, true, true}
	static const struct shade_gain gained[] = {{0, 26, 0, 3, ENCODE_GAIN},  {2, 24, -4, 3, ENCODE_GAIN},
						   {6, 28, -4, 3, ENCODE_GAIN}, {1, 32, 4, 3, ENCODE_GAIN},
						   {7, 24, 0, 5, ENCODE_GAIN},  {4, 30, -4, 5, ENCODE_GAIN}};
#undef ENCODE_GAIN
	shade_gained(set, gained, sizeof gained / sizeof gained[0]);
	shade_no_worse(set, (const bool[4]){true, true, true, false}, (const bool[4]){true, true, true, true});
	tree_set_free(set);
}

/* img blurred by a Gaussian of sigma px (separable, taps to 3 sigma,
 * edges clamped; copy: scratch of its size), then given uniform noise of
 * +-noise (a fixed LCG from seed): a slightly soft camera. */
static void gauss_soften(struct image_u8 *img, struct image_u8 *copy, float sigma, int noise, unsigned seed)
{
	const int w = img->width, h = img->height, r = (int)(3.0f * sigma + 1.0f);
	float k[32], sum = 0.0f;
	for (int i = -r; i <= r; i++)
		sum += k[i + r] = expf(-0.5f * (float)(i * i) / (sigma * sigma));
	for (int i = 0; i <= 2 * r; i++)
		k[i] /= sum;
	for (int pass = 0; pass < 2; pass++) {
		for (int y = 0; y < h; y++)
			memcpy(image_u8_row(copy, y), image_u8_row(img, y), (size_t)w);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				float v = 0.0f;
				for (int i = -r; i <= r; i++) {
					int sx = pass ? x : x + i, sy = pass ? y + i : y;
					sx = sx < 0 ? 0 : sx >= w ? w - 1 : sx;
					sy = sy < 0 ? 0 : sy >= h ? h - 1 : sy;
					v += k[i + r] * (float)image_u8_row(copy, sy)[sx];
				}
				image_u8_row(img, y)[x] = (uint8_t)(v + 0.5f);
			}
	}
	unsigned rnd = seed;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			rnd = rnd * 1103515245u + 12345u;
			const int v = image_u8_row(img, y)[x] + (int)((rnd >> 16) % (unsigned)(2 * noise + 1)) - noise;
			image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
}

/* 1: the symbol id of set decoded alone, 0: nothing, negative: another ID;
 * drawn size px across (card 220, ink 30) at angle rad on a table of 90,
 * softened by gauss_soften() (sigma, noise), through an engine with the
 * daemon's defaults but sharpen_up as given. */
static int soft_probe(const struct tree_set *set, int id, float size, float angle, float sigma, int noise,
		      bool sharpen_up)
{
	struct tt_config c;
	config_defaults(&c);
	c.sharpen_up = sharpen_up;
	struct track *trk;
	struct engine *e = probe_engine(set, &c, W, H, &trk);
	struct image_u8 img, copy;
	probe_card(&img, W, H, 90, set, id, size, angle, 160.3f, 120.6f);
	assert_int_equal(image_u8_alloc(&copy, W, H), 0);
	gauss_soften(&img, &copy, sigma, noise, 7u);
	return probe_read_free(e, trk, &img, &copy, id);
}

/* Symbols of 26-34 px of reacTIVision's set seen by a slightly soft camera
 * (a Gaussian of 0.9-1.3 px, noise 3) on a dark table: no read holds
 * them, the upsampled pass's sharpened reads (sharpen_up) do (the last
 * four only the stronger mask, UP_SHARPEN_STRONG). Over the first eight
 * symbols at 26 and 30 px and blurs of 0.9 and 1.1 px they turn no read
 * into another ID and no miss into one (of 384 probes at 24-34 px, blurs
 * 0.7-1.3 px and two angles, 7 more read, none fewer, none as another ID
 * when this was written). */
static void test_up_sharpened(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
	static const struct {
		int id, size;
		float sigma, angle;
	} gained[] = {{1, 26, 0.9f, 0.9f}, {6, 32, 1.1f, 0.4f}, {7, 28, 0.9f, 0.4f}, {3, 32, 1.3f, 0.9f},
		      {3, 34, 1.3f, 0.4f},  {7, 30, 1.1f, 0.4f}, {7, 32, 1.1f, 0.4f}};
	for (size_t i = 0; i < sizeof gained / sizeof gained[0]; i++) {
		const float size = (float)gained[i].size;
		assert_int_equal(soft_probe(set, gained[i].id, size, gained[i].angle, gained[i].sigma, 3, false), 0);
		assert_int_equal(soft_probe(set, gained[i].id, size, gained[i].angle, gained[i].sigma, 3, true), 1);
	}
	for (int id = 0; id < 8; id++)
		for (int size = 26; size <= 30; size += 4)
			for (int b = 0; b < 2; b++) {
				const float sigma = 0.9f + 0.2f * (float)b;
				const int without = soft_probe(set, id, (float)size, 0.4f, sigma, 3, false);
				const int with = soft_probe(set, id, (float)size, 0.4f, sigma, 3, true);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* 1: the symbol id of set decoded alone, 0: nothing, negative: another ID;
 * drawn size px across (card 220, ink 30) at 0.4 rad on a table of 90,
 * squeezed across to squeeze of its width as fine_probe() does (a barrel
 * lens near the frame's left or right edge), the light scaled by `shadow`
 * left of a step edge px right of the symbol's centre (a 2 px ramp) as
 * ink_probe() does, half blurred by a 3 x 3 box and given uniform noise
 * of +-noise (a fixed LCG), through an engine with the daemon's defaults. */
static int squeeze_probe(const struct tree_set *set, int id, float size, float squeeze, float edge, float shadow,
			 int noise)
{
	struct tt_config c;
	config_defaults(&c);
	struct track *trk;
	struct engine *e = probe_engine(set, &c, W, H, &trk);
	struct image_u8 wide, img;
	probe_card(&wide, W, H, 90, set, id, size, 0.4f, 160.3f, 120.6f);
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const float a = 160.0f + ((float)x - 160.0f) / squeeze, b = a + 1.0f / squeeze;
			float sum = 0.0f;
			for (int k = (int)floorf(a); (float)k < b; k++) {
				const float lo = (float)k > a ? (float)k : a, hi = (float)(k + 1) < b ? (float)(k + 1) : b;
				sum += (hi - lo) * (float)(k >= 0 && k < W ? image_u8_row(&wide, y)[k] : 90);
			}
			const float t = ((float)x - (160.3f + edge)) / 2.0f + 0.5f;
			const float light = t <= 0.0f ? shadow : t >= 1.0f ? 1.0f : shadow + t * (1.0f - shadow);
			image_u8_row(&img, y)[x] = (uint8_t)(sum * squeeze * light + 0.5f);
		}
	soften3(&img, &wide, 0.5f, 0, 0);
	unsigned r = 7u;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			r = r * 1103515245u + 12345u;
			const int v = image_u8_row(&img, y)[x] + (int)((r >> 16) % (unsigned)(2 * noise + 1)) - noise;
			image_u8_row(&img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	return probe_read_free(e, trk, &img, &wide, id);
}

/* Symbols of our set squeezed across to 0.6 (a barrel lens near the
 * frame's edge) and half in a shadow (half the light): the ink windows'
 * local-mean read (ink_up) reads the 48 px 4 whole with a box of 44 px,
 * over its cap INK_UP_WHOLE_PX, and the frame enlarged twice by Bernsen
 * (small_confirm) leaves a tree that 4's holds less a node or two, so it
 * stands (before: capped, and nothing else read it); over sizes and edges
 * across the symbol no read is another ID. */
static void test_up_ink_confirmed(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\nb012222222222221221111111\nw012222222222222222122111\n";
	struct tree_set *set = test_set(text);
	assert_int_equal(squeeze_probe(set, 4, 48.0f, 0.6f, 8.0f, 0.5f, 3), 1);
	for (int id = 0; id < 6; id++)
		for (int size = 40; size <= 56; size += 8)
			for (int edge = -8; edge <= 8; edge += 8)
				assert_true(squeeze_probe(set, id, (float)size, 0.6f, (float)edge, 0.5f, 3) >= 0);
	tree_set_free(set);
}

/* 1: the symbol id of set decoded alone, 0: nothing, -1: another ID;
 * drawn size px across at angle rad (card 220, ink 30) on a table of 150
 * in a frame of 160 x 120 (its centre moved 0.37 px right and 0.23 down),
 * mixed with its 3 x 3 mean by blur and given uniform noise of +-4 (a fixed
 * LCG from seed 1), through an engine with the daemon's defaults and
 * sharp_up as given; the upsampled pass's local-mean and Sauvola reads
 * (mean_up, sauvola_up) off unless ink_reads: where on, they read the
 * same place and outvote the wrong read themselves. */
static int lanczos_check_probe(const struct tree_set *set, int id, float size, float angle, float blur,
			       bool sharp_up, bool ink_reads)
{
	enum { LW = 160, LH = 120 };
	struct tt_config c;
	config_defaults(&c);
	c.sharp_up = sharp_up;
	c.mean_up = c.sauvola_up = ink_reads;
	struct track *trk;
	struct engine *e = probe_engine(set, &c, LW, LH, &trk);
	struct image_u8 img, copy;
	probe_card(&img, LW, LH, 150, set, id, size, angle, 80.37f, 60.23f);
	assert_int_equal(image_u8_alloc(&copy, LW, LH), 0);
	soften3(&img, &copy, blur, 4, 1u);
	return probe_read_free(e, trk, &img, &copy, id);
}

/* A 27.5 px 5 of reacTIVision's set (a four-hole and three two-hole blobs)
 * whose enlarged blobs join two two-hole blobs by a bridge that encloses a
 * piece of the root as a fifth hole: the upsampled pass reads 62's tree
 * (five-, four- and two-hole blobs), which the radius-2 check does not
 * contradict; the Lanczos check (third.c, sharp_check) reads 5 whole
 * there and leaves the place fuzzy (with the daemon's defaults the
 * upsampled pass's local-mean reads of the place also keep it from a
 * wrong ID). Over 24-28 px and four angles of either symbol, sharp_up
 * turns no read into another ID and no miss into one. */
static void test_lanczos_check(void **state)
{
	(void)state;
	static const char text[] = "w0122221221221221111\nw0122222122221221111\n";
	struct tree_set *set = test_set(text);
	assert_int_equal(lanczos_check_probe(set, 0, 27.5f, 5.82f, 0.8f, false, false), -1);
	assert_int_equal(lanczos_check_probe(set, 0, 27.5f, 5.82f, 0.8f, true, false), 0);
	assert_true(lanczos_check_probe(set, 0, 27.5f, 5.82f, 0.8f, true, true) >= 0);
	for (int id = 0; id < 2; id++)
		for (int size = 24; size <= 28; size++)
			for (int a = 0; a < 4; a++) {
				const float angle = 0.1f + 1.57f * (float)a;
				const int without = lanczos_check_probe(set, id, (float)size, angle, 0.8f, false, false);
				const int with = lanczos_check_probe(set, id, (float)size, angle, 0.8f, true, false);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* Symbols of 44-52 px squeezed across to 0.5-0.7 (a barrel lens near the
 * frame's edge) and half in a shadow (half the light), whose boxes span
 * over 40 px: the upsampled pass's Lanczos read (up_sharp) of the places
 * of their fuzzy reads, once capped at 40 px (UP_SHARP_MAX_PX), reads
 * these (nothing did before); over sizes, squeezes and edges across the
 * symbol no read is another ID. */
static void test_up_sharp_squeezed(void **state)
{
	(void)state;
	static const char ours[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\nb012222222222221221111111\nw012222222222222222122111\n";
	struct tree_set *rtv = NULL, *set = NULL;
	assert_int_equal(tree_set_parse(rtv8, strlen(rtv8), "test", &rtv), 0);
	assert_int_equal(tree_set_parse(ours, strlen(ours), "test", &set), 0);
	static const struct {
		int ours, id, size, squeeze, edge;
	} gained[] = {{0, 1, 44, 6, 0}, {0, 3, 44, 5, -8}, {0, 6, 52, 5, 0}, {1, 2, 52, 5, 0}, {1, 3, 44, 6, 0}};
	for (size_t i = 0; i < sizeof gained / sizeof gained[0]; i++)
		assert_int_equal(squeeze_probe(gained[i].ours ? set : rtv, gained[i].id, (float)gained[i].size,
					       0.1f * (float)gained[i].squeeze, (float)gained[i].edge, 0.5f, 3),
				 1);
	for (int id = 0; id < 6; id++)
		for (int size = 44; size <= 52; size += 8)
			for (int q = 5; q <= 7; q++)
				for (int edge = -8; edge <= 8; edge += 8)
					assert_true(squeeze_probe(set, id, (float)size, 0.1f * (float)q, (float)edge, 0.5f, 3) >= 0);
	tree_set_free(rtv);
	tree_set_free(set);
}

/* A 24 px symbol of reacTIVision's set in a hard shadow (a third of the
 * light) with noise of +-3: the deblurring pass's streak estimate there
 * came out under 1 px (0 px: a kernel point at 0 / 0, written outside the
 * kernel, and the daemon died); now no streak, and the frame is read. */
static void test_deblur_short_streak(void **state)
{
	(void)state;
	struct tree_set *set = test_set(rtv8);
	assert_true(ink_probe(set, 5, 24.0f, 0.0f, 0.3f, 3, 7u, false) >= 0);
	assert_true(ink_probe(set, 5, 24.0f, 0.0f, 0.3f, 3, 7u, true) >= 0);
	tree_set_free(set);
}

/* 1: the symbol id of set decoded alone, 0: nothing, negative: another ID;
 * drawn size px across on a dark table, then squeezed across to squeeze
 * of its width (each pixel the mean of the drawing over its span, as a
 * barrel lens shrinks a symbol near the frame's left or right edge
 * radially), softened by blur as in up_probe(), through an engine with
 * the third scale's passes on as by default and the upsampled pass's
 * fine read on or off (fine_up) with its Lanczos reads (sharp_up): the read
 * three times enlarged reads some of these symbols too. */
static int fine_probe(const struct tree_set *set, int id, float size, float squeeze, float blur, bool fine_up)
{
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	struct track *trk = track_create(&tk, &err);
	assert_non_null(trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 6, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = 2, .median2 = 3, .scale3 = true, .mode3 = THRESHOLD_MEAN,
				   .mean_scale3 = 0.115f, .radius_small = 1, .radius_small_check = 2,
				   .radius_up = 2, .gate_up = 16, .close_up = 4, .close_up_pct = 80, .sharp_up = fine_up,
				   .fine_up = fine_up, .match = {.trees = set, .root_min_px = 12, .root_max_px = 120},
				   .tracker = trk, .max_detections = 64};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	struct image_u8 wide, img;
	assert_int_equal(image_u8_alloc(&wide, W, H), 0);
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	for (int y = 0; y < H; y++)
		memset(image_u8_row(&wide, y), 40, W);
	assert_int_equal(render_symbol(tree_set_token(set, id), size, 0.4f, 160.3f, 120.6f, &wide, NULL), 0);
	/* Frame pixel x spans [c + (x - c) / squeeze, c + (x + 1 - c) / squeeze)
	 * of the drawing, c = 160. */
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			const float a = 160.0f + ((float)x - 160.0f) / squeeze, b = a + 1.0f / squeeze;
			float sum = 0.0f;
			for (int k = (int)floorf(a); (float)k < b; k++) {
				const float lo = (float)k > a ? (float)k : a, hi = (float)(k + 1) < b ? (float)(k + 1) : b;
				sum += (hi - lo) * (float)(k >= 0 && k < W ? image_u8_row(&wide, y)[k] : 40);
			}
			image_u8_row(&img, y)[x] = (uint8_t)(sum * squeeze + 0.5f);
		}
	soften3(&img, &wide, blur, 0, 0);
	const int r = probe_read(e, trk, &img, id);
	image_u8_free(&wide);
	image_u8_free(&img);
	return r;
}

/* Symbols of our set of 32-44 px squeezed across to 0.5-0.6 of their width,
 * as a barrel lens (k1 -0.35) shrinks them near the frame's edges: their
 * 1-1.5 px holes and walls across defeat every other read, the upsampled
 * pass's fine read (fine_up) reads them (and its read three times enlarged
 * some); over sizes, squeezes and blurs
 * it turns no read into another ID and no miss into one. */
static void test_up_fine(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\nb012222222222221221111111\nw012222222222222222122111\n";
	struct tree_set *set = test_set(text);
	static const struct {
		int id, size, squeeze, blur;
	} gained[] = {{0, 40, 5, 0}, {0, 44, 5, 1}, {2, 36, 6, 1}, {3, 44, 5, 0}, {4, 32, 6, 0}};
	for (size_t i = 0; i < sizeof gained / sizeof gained[0]; i++) {
		const float size = (float)gained[i].size, squeeze = 0.1f * (float)gained[i].squeeze,
			    blur = 0.3f * (float)gained[i].blur;
		assert_int_equal(fine_probe(set, gained[i].id, size, squeeze, blur, false), 0);
		assert_int_equal(fine_probe(set, gained[i].id, size, squeeze, blur, true), 1);
	}
	for (int id = 0; id < 6; id++)
		for (int size = 32; size <= 48; size += 4)
			for (int q = 5; q <= 7; q++)
				for (int b = 0; b < 2; b++) {
					const float squeeze = 0.1f * (float)q, blur = 0.3f * (float)b;
					const int without = fine_probe(set, id, (float)size, squeeze, blur, false);
					assert_true(fine_probe(set, id, (float)size, squeeze, blur, true) >= without);
				}
	tree_set_free(set);
}


/* The fine read's floor (THIRD_UP_FINE_MIN_PX): symbols of 22 px of
 * reacTIVision's set squeezed to 0.8 of their width and blurred, which
 * without the floor the fine read reads as another ID (Lanczos's ringing
 * raises a speck taken for a dot while a hole is lost); with it they are
 * missed as without the read. */
static void test_up_fine_floor(void **state)
{
	(void)state;
	const char *path = test_shared_path("fiducials/reactivision/default.trees");
	if (!path)
		skip();
	struct tree_set *set = NULL;
	assert_int_equal(tree_set_load(path, &set), 0);
	static const int ids[] = {45, 153};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		assert_int_equal(fine_probe(set, ids[i], 22, 0.8f, 0.3f, false), 0);
		assert_int_equal(fine_probe(set, ids[i], 22, 0.8f, 0.3f, true), 0);
	}
	tree_set_free(set);
}

/* Symbols of 36-60 px crossed by a hard shadow's edge: Bernsen on the
 * enlarged part turns a band of the shadowed paper beside the edge black,
 * joined to the symbol (no pass reads them); the upsampled pass's closing
 * read (close_up) does, and over sizes, edges and blurs turns no read into
 * another ID and no miss into one. */
static void test_up_close(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\nb012222222222221221111111\nw012222222222222222122111\n"
				   "w0122212111\nw01221211\nb012212111\n";
	struct tree_set *set = test_set(text);
	static const struct {
		int id, size, edge;
	} lost[] = {{1, 44, 0}, {2, 52, -4}, {3, 44, -4}, {4, 60, 0}, {5, 36, 8}};
	for (size_t i = 0; i < sizeof lost / sizeof lost[0]; i++)
		for (int b = 0; b < 2; b++) {
			const float blur = 0.3f * (float)b, size = (float)lost[i].size, edge = (float)lost[i].edge;
			assert_int_equal(up_probe(set, lost[i].id, size, blur, 1, 2, 0, edge, false), 0);
			assert_int_equal(up_probe(set, lost[i].id, size, blur, 1, 2, 4, edge, false), 1);
		}
	for (int id = 0; id < 9; id++)
		for (int size = 28; size <= 60; size += 16)
			for (int edge = -8; edge <= 8; edge += 8) {
				const int without = up_probe(set, id, (float)size, 0.0f, 1, 2, 0, (float)edge, false);
				const int with = up_probe(set, id, (float)size, 0.0f, 1, 2, 4, (float)edge, false);
				assert_true(with >= without);
			}
	tree_set_free(set);
}

/* An engine on the CPU with the third scale's passes on (the small-symbol
 * and upsampled passes among them), for W x H frames of the symbols in
 * text; *set and *trk are its symbol set and tracker, the caller's to free. */
static struct engine *small_passes_engine(const char *text, struct tree_set **set, struct track **trk)
{
	assert_int_equal(tree_set_parse(text, strlen(text), "test", set), 0);
	struct track_config tk = {.max_items = 64, .linger_frames = 2, .dead_band_px = 0.5f};
	int err = 0;
	*trk = track_create(&tk, &err);
	assert_non_null(*trk);
	struct engine_config ec = {.width = W, .height = H, .backend = "cpu",
				   .thr = {.mode = THRESHOLD_BERNSEN, .radius = 6, .gate = 32, .tile = 10,
					   .mean_radius = 16, .mean_bias = 16},
				   .radius2 = 2, .median2 = 3, .scale3 = true, .mode3 = THRESHOLD_MEAN,
				   .mean_scale3 = 0.115f, .radius_small = 1, .radius_up = 2, .gate_up = 16,
				   .match = {.trees = *set, .root_min_px = 12, .root_max_px = 120},
				   .tracker = *trk, .max_detections = 128};
	struct engine *e = engine_create(&ec, &err);
	assert_non_null(e);
	return e;
}

/* A frame full of 24 px symbols (7 x 5, 41 px apart, four IDs; only the
 * upsampled pass reads them): it runs over the whole frame, wider than a
 * tile, tile by tile; every symbol is read once, with its ID, also the
 * column and row on the seam between two tiles' cores (x, y = 192),
 * which a tile without its reach cuts (11 of 35 lost). */
static void test_up_pass_tiles(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\nw012222212212212121211111\n"
				   "w012212212212121211111111\n";
	struct tree_set *set = NULL;
	struct track *trk = NULL;
	struct engine *e = small_passes_engine(text, &set, &trk);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	for (int y = 0; y < H; y++)
		memset(image_u8_row(&img, y), 40, W);
	int n = 0;
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 7; i++, n++)
			assert_int_equal(render_symbol(tree_set_token(set, n % 4), 24, 0.4f, 28.3f + 41 * (float)i,
						       32.6f + 41 * (float)j, &img, NULL),
					 0);
	struct tracked_state st;
	for (uint64_t f = 1; f <= 2; f++)
		assert_int_equal(engine_process(e, &img, f, (int64_t)f * 33000000, &st), 0);
	const struct detections *d = engine_detections(e);
	assert_true(engine_third_stats(e)->up_area_px >= 2 * (int64_t)W * H);
	assert_int_equal(d->n_fids, n);
	for (int k = 0; k < n; k++) {
		const float x = 28.3f + 41 * (float)(k % 7), y = 32.6f + 41 * (float)(k / 7);
		int found = 0;
		for (int q = 0; q < d->n_fids; q++)
			found += fabsf(d->fids[q].x - x) < 3 && fabsf(d->fids[q].y - y) < 3 && d->fids[q].id == k % 4;
		assert_int_equal(found, 1);
	}
	engine_destroy(e);
	track_destroy(trk);
	image_u8_free(&img);
	tree_set_free(set);
}

/* Sensor noise (+-6 levels) on a flat table lit just above mid-grey,
 * with four pairs of outliers that reach the first scale's gate within
 * Bernsen's window: the noise around each pair is thresholded into specks
 * (small structure that no symbol explains: a window a frame without the
 * rule), but its grey varies by the noise alone, and neither small pass
 * opens a window there. A 24 px symbol on the same table still gets its
 * window and is read. */
static void test_small_passes_skip_noise(void **state)
{
	(void)state;
	static const char text[] = "w012222222222212221212111\nw012222221222212222122111\n";
	struct tree_set *set = NULL;
	struct track *trk = NULL;
	struct engine *e = small_passes_engine(text, &set, &trk);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	uint32_t seed = 12345;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			seed = seed * 1664525u + 1013904223u;
			image_u8_row(&img, y)[x] = (uint8_t)(130 - 6 + (int)(seed >> 24) % 13);
		}
	for (int p = 0; p < 4; p++) {
		const int x0 = 60 + 30 * p, y0 = 40 + 50 * p;
		image_u8_row(&img, y0)[x0] = 148;
		image_u8_row(&img, y0 + 4)[x0 + 3] = 112;
	}
	struct tracked_state st;
	for (uint64_t f = 1; f <= 2; f++)
		assert_int_equal(engine_process(e, &img, f, (int64_t)f * 33000000, &st), 0);
	assert_int_equal(engine_third_stats(e)->small_windows, 0);
	assert_int_equal(engine_third_stats(e)->up_windows, 0);
	assert_int_equal(engine_detections(e)->n_fids, 0);
	assert_int_equal(render_symbol(tree_set_token(set, 1), 24, 0.4f, 250.3f, 120.6f, &img, NULL), 0);
	for (uint64_t f = 3; f <= 4; f++)
		assert_int_equal(engine_process(e, &img, f, (int64_t)f * 33000000, &st), 0);
	assert_true(engine_third_stats(e)->small_windows > 0);
	const struct detections *d = engine_detections(e);
	assert_int_equal(d->n_fids, 1);
	assert_int_equal(d->fids[0].id, 1);
	engine_destroy(e);
	track_destroy(trk);
	image_u8_free(&img);
	tree_set_free(set);
}

/* Split calls in the overlapped order give the same answer as one call,
 * with and without the second scale (collected after the first, on its
 * worker: the next frame's submit must not hand it that frame's mask). */
static void overlapped_order(struct fixture *f, int radius2)
{
	struct engine *e = make_engine(f, radius2);
	struct image_u8 a, b;
	assert_int_equal(image_u8_alloc(&a, W, H), 0);
	assert_int_equal(image_u8_alloc(&b, W, H), 0);
	draw_table(&a, 20);
	draw_table(&b, 20);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 1), 80, 0.0f, 80, 120, &a, NULL), 0);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 2), 80, 0.0f, 240, 120, &b, NULL), 0);
	struct tracked_state st;
	assert_int_equal(engine_submit(e, &a), 0);
	assert_int_equal(engine_collect(e), 0);
	assert_int_equal(engine_submit(e, &b), 0); /* b's threshold before a's segmentation */
	assert_int_equal(engine_finish(e, &a, 1, 1, &st), 0);
	assert_int_equal(st.n_objects, 1);
	assert_int_equal(st.objects[0].class_id, 1);
	assert_int_equal(engine_collect(e), 0);
	assert_int_equal(engine_finish(e, &b, 2, 2, &st), 0);
	assert_int_equal(engine_detections(e)->n_fids, 1);
	assert_int_equal(engine_detections(e)->fids[0].id, 2);
	image_u8_free(&a);
	image_u8_free(&b);
	engine_destroy(e);
	track_destroy(f->trk);
	f->eng = NULL;
	f->trk = NULL;
}

static void test_overlapped_order(void **state)
{
	overlapped_order(*state, 0);
	overlapped_order(*state, 3);
}

/* A frame collected and never detected (the pipeline skips the detect
 * when the collect fails) leaves its second scale to be collected; the
 * second scale switched off before the next frame must not be collected
 * then; nor one switched off and on again between a collect and its
 * detect (a new scale, nothing submitted to it). */
static void test_pending_second_scale_switched_off(void **state)
{
	struct fixture *f = *state;
	struct engine *e = make_engine(f, 3);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 20);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 1), 80, 0.0f, 160, 120, &img, NULL), 0);
	assert_int_equal(engine_submit(e, &img), 0);
	assert_int_equal(engine_collect(e), 0);
	struct engine_config off = config3(f, 0, false, 0.0f);
	assert_int_equal(engine_set_config(e, &off), 0);
	struct tracked_state st;
	assert_int_equal(engine_process(e, &img, 1, 1, &st), 0);
	assert_int_equal(st.n_objects, 1);
	assert_int_equal(st.objects[0].class_id, 1);
	struct engine_config on = config3(f, 3, false, 0.0f);
	assert_int_equal(engine_set_config(e, &on), 0);
	assert_int_equal(engine_submit(e, &img), 0);
	assert_int_equal(engine_collect(e), 0);
	assert_int_equal(engine_set_config(e, &off), 0);
	assert_int_equal(engine_set_config(e, &on), 0);
	assert_int_equal(engine_finish(e, &img, 2, 2, &st), 0);
	assert_int_equal(engine_detections(e)->n_fids, 1);
	assert_int_equal(engine_detections(e)->fids[0].id, 1);
	image_u8_free(&img);
}

/* The heap in use (glibc's count of the main arena and its mapped
 * chunks: engines are created and freed on the calling thread). */
static size_t heap_in_use(void)
{
	const struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* An engine with the daemon's defaults, its third scale switched off and
 * on again live (as the window and a reload may), then destroyed, gives
 * back all it took: the heap in use after 20 more such cycles is within
 * 256 KB of what it was after the first four. The upsampled pass's fine,
 * local-mean and Sauvola thresholds and its read three times enlarged
 * (a matcher of 43 KB and a threshold) were left behind by every engine
 * destroyed and every switch off. Under a sanitizer's allocator mallinfo2
 * counts nothing and LeakSanitizer checks instead. */
static void test_engine_frees_all_it_took(void **state)
{
	struct fixture *f = *state;
	struct tt_config c;
	config_defaults(&c);
	size_t base = 0;
	for (int i = 0; i < 24; i++) {
		struct track *trk;
		struct engine *e = probe_engine(f->trees, &c, W, H, &trk);
		struct engine_config ec;
		engine_config_from(&c, f->trees, trk, W, H, &ec);
		ec.backend = "cpu";
		ec.scale3 = false;
		assert_int_equal(engine_set_config(e, &ec), 0);
		ec.scale3 = true;
		assert_int_equal(engine_set_config(e, &ec), 0);
		engine_destroy(e);
		track_destroy(trk);
		if (i == 3)
			base = heap_in_use();
	}
	const size_t now = heap_in_use();
	print_message("heap in use after 4 cycles %zu bytes, after 24 %zu\n", base, now);
	assert_true(now <= base + 256 * 1024);
}

/* The workers change nothing but timing: the same detections whether a
 * frame comes while they still spin or after they went to sleep. */
static void test_workers_asleep_same_result(void **state)
{
	struct fixture *f = *state;
	struct engine *e = make_engine(f, 3);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&img, 30);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 7), 90, 0.4f, 160, 120, &img, NULL), 0);
	struct tracked_state st;
	assert_int_equal(engine_process(e, &img, 1, 1, &st), 0);
	assert_int_equal(engine_detections(e)->n_fids, 1);
	const struct fiducial_det want = engine_detections(e)->fids[0]; /* a copy: the array is reused */
	for (uint64_t i = 2; i < 12; i++) {
		assert_int_equal(engine_submit(e, &img), 0);
		if (i % 3 == 0)
			clock_sleep_ns(3000000); /* past the spin: the workers sleep */
		assert_int_equal(engine_collect(e), 0);
		assert_int_equal(engine_finish(e, &img, i, (int64_t)i, &st), 0);
		const struct detections *got = engine_detections(e);
		assert_int_equal(got->n_fids, 1);
		assert_int_equal(got->fids[0].id, want.id);
		assert_true(got->fids[0].x == want.x && got->fids[0].y == want.y && got->fids[0].angle == want.angle);
	}
	image_u8_free(&img);
}

static void test_wrong_size_refused(void **state)
{
	struct fixture *f = *state;
	struct engine *e = make_engine(f, 3);
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, W + 2, H), 0);
	assert_int_equal(engine_submit(e, &img), ERR_SIZE);
	assert_int_equal(engine_collect(e), ERR_AGAIN);
	image_u8_free(&img);
}

/* The equaliser subtracts the captured background: a frame equal to it is
 * flat (nothing found, not even noise), a symbol placed on it is found. */
static void test_equaliser(void **state)
{
	struct fixture *f = *state;
	struct engine *e = make_engine(f, 0);
	struct image_u8 bg, img;
	assert_int_equal(image_u8_alloc(&bg, W, H), 0);
	assert_int_equal(image_u8_alloc(&img, W, H), 0);
	draw_table(&bg, 90);
	struct tracked_state st;
	engine_equalize(e, true);
	assert_false(engine_equalizing(e));
	assert_int_equal(engine_process(e, &bg, 1, 1, &st), 0);
	assert_true(engine_equalizing(e));
	/* A flat equalised frame is below the gate everywhere: one region. */
	assert_int_equal(engine_detections(e)->n_fids, 0);
	image_u8_copy(&img, &bg);
	assert_int_equal(render_symbol(tree_set_token(f->trees, 7), 90, 1.0f, 200, 110, &img, NULL), 0);
	assert_int_equal(engine_process(e, &img, 2, 2, &st), 0);
	assert_int_equal(st.n_objects, 1);
	assert_int_equal(st.objects[0].class_id, 7);
	engine_equalize(e, false);
	assert_false(engine_equalizing(e));
	image_u8_free(&bg);
	image_u8_free(&img);
}

static struct fiducial_det fid_at(int32_t id, float x, float y)
{
	struct fiducial_det f = {.id = id, .x = x, .y = y, .size_px = 40, .root = 7};
	return f;
}

/* Three empty detection lists of eight each (the merge tests'). */
static void three_lists(struct detections *a, struct detections *b, struct detections *c)
{
	assert_int_equal(detections_alloc(a, 8), 0);
	assert_int_equal(detections_alloc(b, 8), 0);
	assert_int_equal(detections_alloc(c, 8), 0);
}

/* The scales' symbols merged: one ID at a place is kept once; the first
 * scale's symbol stands against a later scale's other ID; where two later
 * scales decode different IDs at a place the first left empty, neither is
 * kept (the one merged first becomes fuzzy); elsewhere a later scale adds
 * its own. */
static void test_merge_disagreement(void **state)
{
	(void)state;
	struct detections d, d2, d3;
	three_lists(&d, &d2, &d3);

	d.fids[d.n_fids++] = fid_at(5, 100, 100);
	d.fids[d.n_fids++] = fid_at(6, 200, 100);
	d2.fids[d2.n_fids++] = fid_at(5, 102, 101); /* agrees */
	d2.fids[d2.n_fids++] = fid_at(9, 201, 99);  /* the first scale's 6 stands */
	d2.fids[d2.n_fids++] = fid_at(4, 100, 200); /* places of its own */
	d2.fids[d2.n_fids++] = fid_at(8, 300, 300);
	for (int i = 0; i < d2.n_fids; i++)
		d2.fids[i].root = 3;
	merge_scale(&d, &d2);
	assert_int_equal(d.n_fids, 4);
	assert_int_equal(d.n_fuzzy, 0);

	d3.fids[d3.n_fids++] = fid_at(2, 301, 300); /* disagrees with the second's 8 */
	d3.fids[d3.n_fids++] = fid_at(3, 200, 101); /* the first scale's 6 stands */
	d3.fids[d3.n_fids++] = fid_at(4, 101, 200); /* agrees with the second */
	merge_scale(&d, &d3);
	assert_int_equal(d.n_fids, 3);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++) {
		const struct fiducial_det *f = &d.fids[i];
		seen |= (f->id == 5 && f->root == 7) << 0 | (f->id == 6 && f->root == 7) << 1 |
			(f->id == 4 && f->root == -1) << 2;
	}
	assert_int_equal(seen, 7);
	assert_int_equal(d.n_fuzzy, 1);
	assert_int_equal(d.fuzzy[0].id, -1);
	assert_true(fabsf(d.fuzzy[0].x - 300) < 1 && fabsf(d.fuzzy[0].y - 300) < 1);
	detections_free(&d);
	detections_free(&d2);
	detections_free(&d3);
}

/* The small-symbol pass's check (merge_check): a symbol that a second read
 * at its place gives as another ID with a root of its colour becomes fuzzy;
 * one the check reads alike, or not at all, or as a root of the other
 * colour (a b symbol's white card margin read one level out) stands. */
static void test_merge_check(void **state)
{
	(void)state;
	static const char text[] = "w0122211\nw01222111\nb0122211\n";
	struct tree_set *set = test_set(text);
	struct detections d, c;
	assert_int_equal(detections_alloc(&d, 8), 0);
	assert_int_equal(detections_alloc(&c, 8), 0);
	d.fids[d.n_fids++] = fid_at(0, 100, 100);
	d.fids[d.n_fids++] = fid_at(2, 200, 100);
	d.fids[d.n_fids++] = fid_at(1, 300, 300);
	d.fids[d.n_fids++] = fid_at(0, 400, 400);
	c.fids[c.n_fids++] = fid_at(1, 101, 101); /* another ID, w root: both lost */
	c.fids[c.n_fids++] = fid_at(0, 199, 101); /* w around a b symbol: the margin */
	c.fids[c.n_fids++] = fid_at(1, 300, 301); /* agrees */
	for (int i = 0; i < d.n_fids;)
		i += !merge_check(&d, i, &c, set);
	assert_int_equal(d.n_fids, 3);
	assert_int_equal(d.n_fuzzy, 1);
	assert_int_equal(d.fuzzy[0].id, -1);
	assert_true(fabsf(d.fuzzy[0].x - 100) < 1 && fabsf(d.fuzzy[0].y - 100) < 1);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++)
		seen |= (d.fids[i].id == 2) << 0 | (d.fids[i].id == 1) << 1 | (d.fids[i].id == 0 && d.fids[i].x > 350) << 2;
	assert_int_equal(seen, 7);
	detections_free(&d);
	detections_free(&c);
	tree_set_free(set);
}

/* An unconfirmed read (merge_confirm) becomes a completed one where the
 * tree read at its place by another threshold is its ID's less a node or
 * two; where that tree is another ID's, has a node its ID's lacks, or
 * there is none, it becomes fuzzy. */
static void test_merge_confirm(void **state)
{
	(void)state;
	static const char text[] = "w0122211\nw012211\nb0122211\n";
	struct tree_set *set = test_set(text);
	struct detections d;
	assert_int_equal(detections_alloc(&d, 8), 0);
	static const char *const canon[] = {"w012211", "w0122211", "w0122111", NULL, "b012211"};
	for (int k = 0; k < 5; k++) {
		d.fids[d.n_fids] = fid_at(0, 100.0f * (float)k, 100);
		d.fids[d.n_fids++].completed = FIDUCIAL_UNCONFIRMED;
	}
	int kept = 0;
	for (int k = 0, i = 0; k < 5; k++) {
		/* The list's order changes as reads move: find read k by place. */
		for (i = 0; i < d.n_fids && fabsf(d.fids[i].x - 100.0f * (float)k) > 1; i++)
			;
		assert_true(i < d.n_fids);
		kept += !merge_confirm(&d, i, canon[k], set);
	}
	assert_int_equal(kept, 2);
	assert_int_equal(d.n_fids, 2);
	assert_int_equal(d.n_fuzzy, 3);
	for (int i = 0; i < d.n_fids; i++) {
		assert_int_equal(d.fids[i].completed, 1);
		assert_true(d.fids[i].x < 150);
	}
	for (int i = 0; i < d.n_fuzzy; i++)
		assert_int_equal(d.fuzzy[i].id, -1);
	detections_free(&d);
	tree_set_free(set);
}

/* Reads an unconfirmed read of another ID contradicts (merge_contradicted):
 * a lone read of another ID at a failed read's place becomes fuzzy; one
 * that another read of its ID backs there, one of the failed read's own
 * ID, and one elsewhere stand. */
static void test_merge_contradicted(void **state)
{
	(void)state;
	struct detections d;
	assert_int_equal(detections_alloc(&d, 8), 0);
	const struct fiducial_det failed[] = {fid_at(3, 100, 100), fid_at(3, 200, 100), fid_at(4, 300, 100)};
	d.fids[d.n_fids++] = fid_at(5, 101, 100); /* alone, another ID: leaves */
	d.fids[d.n_fids++] = fid_at(6, 201, 101); /* backed by the next: stands */
	d.fids[d.n_fids++] = fid_at(6, 199, 100);
	d.fids[d.n_fids++] = fid_at(4, 301, 99);  /* the failed read's own ID: stands */
	d.fids[d.n_fids++] = fid_at(7, 500, 500); /* elsewhere: stands */
	d.fids[d.n_fids++] = fid_at(8, 99, 101);  /* alone at the first place too: leaves */
	merge_contradicted(&d, failed, 3);
	assert_int_equal(d.n_fids, 4);
	assert_int_equal(d.n_fuzzy, 2);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++)
		seen |= (d.fids[i].id == 6) << 0 | (d.fids[i].id == 4) << 1 | (d.fids[i].id == 7) << 2 |
			(d.fids[i].id == 5 || d.fids[i].id == 8) << 3;
	assert_int_equal(seen, 7);
	for (int i = 0; i < d.n_fuzzy; i++) {
		assert_int_equal(d.fuzzy[i].id, -1);
		assert_true(fabsf(d.fuzzy[i].x - 100) < 2);
	}
	merge_contradicted(&d, failed, 0);
	assert_int_equal(d.n_fids, 4);
	detections_free(&d);
}

/* The first scale's whole symbol against one read of the third alone
 * (merge_lone_pair): both become fuzzy, the third's read whole or
 * completed; a third-scale read that agrees, has a vote, is a veto or
 * unconfirmed, or shares its place with another third-scale read, or a
 * second-scale read at the place, leaves both lists as they were. */
static void test_merge_lone_pair(void **state)
{
	(void)state;
	struct detections d, d2, d3;
	assert_int_equal(detections_alloc(&d, 16), 0);
	assert_int_equal(detections_alloc(&d2, 16), 0);
	assert_int_equal(detections_alloc(&d3, 16), 0);
	for (int k = 0; k < 8; k++)
		d.fids[d.n_fids++] = fid_at(10 + k, 100.0f * (float)(k + 1), 100);
	d3.fids[d3.n_fids++] = fid_at(20, 101, 101); /* alone, whole: both leave */
	d3.fids[d3.n_fids++] = fid_at(11, 201, 100); /* agrees */
	d3.fids[d3.n_fids++] = fid_at(22, 300, 101); /* completed: both leave */
	d3.fids[d3.n_fids - 1].completed = 1;
	d3.fids[d3.n_fids++] = fid_at(23, 401, 100); /* a vote */
	d3.fids[d3.n_fids - 1].votes = 1;
	d3.fids[d3.n_fids++] = fid_at(24, 500, 99); /* two reads there */
	d3.fids[d3.n_fids++] = fid_at(14, 501, 101);
	d3.fids[d3.n_fids++] = fid_at(25, 600, 100); /* the second scale reads there */
	d2.fids[d2.n_fids++] = fid_at(15, 601, 100);
	d3.fids[d3.n_fids++] = fid_at(26, 700, 101); /* a veto */
	d3.fids[d3.n_fids - 1].completed = FIDUCIAL_VETO;
	d3.fids[d3.n_fids++] = fid_at(27, 801, 100); /* unconfirmed */
	d3.fids[d3.n_fids - 1].completed = FIDUCIAL_UNCONFIRMED;
	for (int i = 0; i < d3.n_fids; i++)
		d3.fids[i].root = -1;
	merge_lone_pair(&d, &d3, &d2);
	assert_int_equal(d.n_fids, 6);
	assert_int_equal(d3.n_fids, 7);
	assert_int_equal(d.n_fuzzy, 2);
	assert_int_equal(d3.n_fuzzy, 2);
	for (int i = 0; i < 2; i++) {
		const float x = 100.0f * (float)(2 * i + 1);
		assert_true(fabsf(d.fuzzy[i].x - x) < 2 && fabsf(d3.fuzzy[i].x - x) < 2);
	}
	for (int i = 0; i < d.n_fids; i++)
		assert_true(d.fids[i].id != 10 && d.fids[i].id != 12);
	/* Without the second scale's list its read does not count. */
	merge_lone_pair(&d, &d3, NULL);
	assert_int_equal(d.n_fids, 5);
	detections_free(&d);
	detections_free(&d2);
	detections_free(&d3);
}

/* A Lanczos read of the upsampled pass (merge_sharp_stands) stands where
 * the bilinear read left no fuzzy tree at its place, or one its ID's tree
 * lacks nodes of, or another ID's, or one with a node more; not where that
 * tree is its ID's whole. */
static void test_merge_sharp_stands(void **state)
{
	(void)state;
	static const char text[] = "w0122211\nw012211\nb0122211\n";
	struct tree_set *set = test_set(text);
	assert_true(merge_sharp_stands(0, NULL, set));
	assert_true(merge_sharp_stands(0, "w012211", set));
	assert_true(merge_sharp_stands(0, "w0122111", set));
	assert_true(merge_sharp_stands(0, "w01222111", set));
	assert_false(merge_sharp_stands(0, "w0122211", set));
	assert_false(merge_sharp_stands(1, "w012211", set));
	assert_true(merge_sharp_stands(2, "w0122211", set));
	tree_set_free(set);
}

/* The tie-break (merge_tie_break): a third read that gives the second
 * scale's ID puts the second scale's symbol in the first's place; one that
 * gives the first's, another ID, or nothing leaves the first standing. */
static void test_merge_tie_break(void **state)
{
	(void)state;
	struct detections d, third;
	assert_int_equal(detections_alloc(&d, 8), 0);
	assert_int_equal(detections_alloc(&third, 8), 0);
	d.fids[d.n_fids++] = fid_at(5, 100, 100);
	const struct fiducial_det other = fid_at(9, 101, 100);
	assert_false(merge_tie_break(&d, 0, &other, &third)); /* nothing read */
	third.fids[third.n_fids++] = fid_at(5, 100, 101);
	assert_false(merge_tie_break(&d, 0, &other, &third)); /* sides with the first */
	third.fids[0].id = 7;
	assert_false(merge_tie_break(&d, 0, &other, &third)); /* a third ID */
	assert_int_equal(d.fids[0].id, 5);
	assert_int_equal(d.fids[0].root, 7);
	third.fids[0].id = 9;
	assert_true(merge_tie_break(&d, 0, &other, &third)); /* sides with the second */
	assert_int_equal(d.n_fids, 1);
	assert_int_equal(d.fids[0].id, 9);
	assert_int_equal(d.fids[0].root, -1);
	assert_true(fabsf(d.fids[0].x - 101) < 1e-3f);
	third.fids[0] = fid_at(9, 300, 300); /* elsewhere: not this place's read */
	d.fids[0] = fid_at(5, 100, 100);
	assert_false(merge_tie_break(&d, 0, &other, &third));
	detections_free(&d);
	detections_free(&third);
}

/* A completed symbol (read from a fuzzy tree) gives way to a whole tree of
 * another ID at its place from any scale, and a completed one from a later
 * scale never unseats a whole one; agreeing scales make it whole. */
static void test_merge_completed(void **state)
{
	(void)state;
	struct detections d, d2;
	assert_int_equal(detections_alloc(&d, 8), 0);
	assert_int_equal(detections_alloc(&d2, 8), 0);
	d.fids[d.n_fids++] = fid_at(5, 100, 100);
	d.fids[0].completed = 1;
	d.fids[d.n_fids++] = fid_at(6, 200, 100);
	d.fids[d.n_fids++] = fid_at(7, 300, 100);
	d.fids[2].completed = 1;
	d2.fids[d2.n_fids++] = fid_at(9, 101, 100); /* whole: replaces the completed 5 */
	d2.fids[d2.n_fids++] = fid_at(8, 200, 101); /* completed: the whole 6 stands */
	d2.fids[1].completed = 1;
	d2.fids[d2.n_fids++] = fid_at(7, 301, 100); /* agrees: 7 is whole now */
	merge_scale(&d, &d2);
	assert_int_equal(d.n_fids, 3);
	assert_int_equal(d.n_fuzzy, 0);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++) {
		const struct fiducial_det *f = &d.fids[i];
		seen |= (f->id == 9 && f->root == -1 && !f->completed) << 0 | (f->id == 6 && f->root == 7) << 1 |
			(f->id == 7 && f->root == 7 && !f->completed) << 2;
	}
	assert_int_equal(seen, 7);
	detections_free(&d);
	detections_free(&d2);
}

/* A doubtful symbol (the third scale's ratio pass) stands only where
 * nothing else reads its place: against another ID merged from a later
 * scale, whole or completed, both become fuzzy; the first scale's own
 * symbol stands against it; alone it is added, still doubtful; a read
 * that agrees takes its place. */
static void test_merge_doubtful(void **state)
{
	(void)state;
	struct detections d, d2, d3;
	three_lists(&d, &d2, &d3);
	d.fids[d.n_fids++] = fid_at(5, 100, 100);
	d2.fids[d2.n_fids++] = fid_at(4, 100, 200); /* whole, from a later scale */
	d2.fids[d2.n_fids++] = fid_at(3, 200, 200); /* completed, from a later scale */
	d2.fids[1].completed = 1;
	d2.fids[d2.n_fids++] = fid_at(2, 300, 200); /* whole: a doubtful read agrees */
	merge_scale(&d, &d2);
	assert_int_equal(d.n_fids, 4);
	d3.fids[d3.n_fids++] = fid_at(9, 101, 100); /* the first scale's 5 stands */
	d3.fids[d3.n_fids++] = fid_at(8, 101, 200); /* against the whole 4: neither */
	d3.fids[d3.n_fids++] = fid_at(7, 201, 200); /* against the completed 3: neither */
	d3.fids[d3.n_fids++] = fid_at(2, 301, 200); /* agrees with the whole 2 */
	d3.fids[d3.n_fids++] = fid_at(1, 500, 500); /* alone, then a whole read agrees */
	d3.fids[d3.n_fids++] = fid_at(6, 400, 400); /* alone */
	for (int i = 0; i < d3.n_fids; i++)
		d3.fids[i].completed = FIDUCIAL_DOUBTFUL;
	merge_scale(&d, &d3);
	struct detections d4;
	assert_int_equal(detections_alloc(&d4, 8), 0);
	d4.fids[d4.n_fids++] = fid_at(1, 502, 501);
	d4.fids[0].angle = 1.5f;
	merge_scale(&d, &d4);
	assert_int_equal(d.n_fids, 4);
	assert_int_equal(d.n_fuzzy, 2);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++) {
		const struct fiducial_det *f = &d.fids[i];
		seen |= (f->id == 5 && f->root == 7 && !f->completed) << 0 | (f->id == 2 && !f->completed) << 1 |
			(f->id == 6 && f->root == -1 && f->completed == FIDUCIAL_DOUBTFUL) << 2 |
			(f->id == 1 && !f->completed && fabsf(f->x - 502) < 1e-3f && fabsf(f->angle - 1.5f) < 1e-6f) << 3;
	}
	assert_int_equal(seen, 15);
	detections_free(&d4);
	for (int i = 0; i < d.n_fuzzy; i++) {
		assert_int_equal(d.fuzzy[i].id, -1);
		assert_true(fabsf(d.fuzzy[i].y - 200) < 1);
	}
	detections_free(&d);
	detections_free(&d2);
	detections_free(&d3);
}

/* Two reads that agreed stand against a doubtful one: a 161 read whole by
 * the second scale and again by a pass of the third, and a doubtful read
 * of 125 at its place (the deblurring pass across a hard shadow's edge,
 * shadow preset, seed 234, frame 23). A doubtful read's agreement is no
 * such vote: that merged symbol still gives way to a doubtful other ID. */
static void test_merge_doubtful_agreed(void **state)
{
	(void)state;
	struct detections d, d2, d3;
	three_lists(&d, &d2, &d3);
	d2.fids[d2.n_fids++] = fid_at(161, 100, 100);
	d2.fids[d2.n_fids++] = fid_at(4, 300, 300);
	merge_scale(&d, &d2);
	d3.fids[d3.n_fids++] = fid_at(161, 101, 100); /* agrees: a vote */
	d3.fids[d3.n_fids++] = fid_at(4, 301, 300);   /* agrees, but doubtful */
	d3.fids[1].completed = FIDUCIAL_DOUBTFUL;
	d3.fids[d3.n_fids++] = fid_at(125, 100, 101); /* doubtful: the two stand */
	d3.fids[d3.n_fids++] = fid_at(9, 300, 301);   /* doubtful: neither */
	d3.fids[2].completed = d3.fids[3].completed = FIDUCIAL_DOUBTFUL;
	merge_scale(&d, &d3);
	assert_int_equal(d.n_fids, 1);
	assert_int_equal(d.fids[0].id, 161);
	assert_int_equal(d.fids[0].votes, 1);
	assert_int_equal(d.n_fuzzy, 1);
	assert_true(fabsf(d.fuzzy[0].x - 300) < 1);
	detections_free(&d);
	detections_free(&d2);
	detections_free(&d3);
}

/* A fallback read (the lower rungs of the third scale's scaled pass)
 * holds a place only while no other read does: it gives way to the first
 * scale's own symbol, to a later scale's whole or completed read, and to a
 * later read that agrees or not; alone it stands, still a fallback; against
 * a doubtful read or another fallback of another ID neither stands. */
static void test_merge_fallback(void **state)
{
	(void)state;
	struct detections d, d2, d3, d4;
	assert_int_equal(detections_alloc(&d, 16), 0);
	assert_int_equal(detections_alloc(&d2, 16), 0);
	assert_int_equal(detections_alloc(&d3, 16), 0);
	assert_int_equal(detections_alloc(&d4, 16), 0);
	d.fids[d.n_fids++] = fid_at(5, 100, 100);
	d2.fids[d2.n_fids++] = fid_at(4, 100, 200); /* whole, from a later scale */
	d2.fids[d2.n_fids++] = fid_at(3, 200, 200); /* completed, from a later scale */
	d2.fids[1].completed = 1;
	merge_scale(&d, &d2);
	d3.fids[d3.n_fids++] = fid_at(9, 101, 100);  /* the first scale's 5 stands */
	d3.fids[d3.n_fids++] = fid_at(8, 101, 200);  /* against the lone merged 4: neither */
	d3.fids[d3.n_fids++] = fid_at(7, 201, 200);  /* against the lone merged 3: neither */
	d3.fids[d3.n_fids++] = fid_at(6, 400, 400);  /* alone: stands */
	d3.fids[d3.n_fids++] = fid_at(1, 500, 500);  /* alone, then a whole read agrees */
	d3.fids[d3.n_fids++] = fid_at(2, 600, 600);  /* alone, then a lone whole 11 there: neither */
	d3.fids[d3.n_fids++] = fid_at(12, 700, 700); /* alone, then a doubtful 13: neither */
	d3.fids[d3.n_fids++] = fid_at(14, 800, 800); /* two fallbacks of two IDs: neither */
	d3.fids[d3.n_fids++] = fid_at(15, 801, 800);
	d3.fids[d3.n_fids++] = fid_at(16, 900, 900); /* alone, then a 17 two reads agreed on */
	for (int i = 0; i < d3.n_fids; i++)
		d3.fids[i].completed = FIDUCIAL_FALLBACK;
	merge_scale(&d, &d3);
	d4.fids[d4.n_fids++] = fid_at(1, 502, 501);
	d4.fids[d4.n_fids++] = fid_at(11, 601, 600);
	d4.fids[d4.n_fids++] = fid_at(13, 701, 700);
	d4.fids[2].completed = FIDUCIAL_DOUBTFUL;
	d4.fids[d4.n_fids++] = fid_at(17, 901, 900);
	d4.fids[3].votes = 1;
	merge_scale(&d, &d4);
	assert_int_equal(d.n_fids, 4);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++) {
		const struct fiducial_det *f = &d.fids[i];
		seen |= (f->id == 5 && f->root == 7 && !f->completed) << 0 |
			(f->id == 6 && f->completed == FIDUCIAL_FALLBACK) << 1 |
			(f->id == 1 && !f->completed && fabsf(f->x - 502) < 1e-3f && f->votes == 0) << 2 |
			(f->id == 17 && !f->completed && f->votes == 1) << 3;
	}
	assert_int_equal(seen, 15);
	/* Fuzzy: the 4 and the 3 (x 100 and 200, y 200), the 2, the 12 and the 14. */
	assert_int_equal(d.n_fuzzy, 5);
	for (int i = 0; i < d.n_fuzzy; i++) {
		const float x = d.fuzzy[i].x;
		assert_int_equal(d.fuzzy[i].id, -1);
		assert_true(fabsf(x - 100) < 2 || fabsf(x - 200) < 2 || fabsf(x - 600) < 2 || fabsf(x - 700) < 2 ||
			    fabsf(x - 800) < 2);
	}
	detections_free(&d);
	detections_free(&d2);
	detections_free(&d3);
	detections_free(&d4);
}

/* A pass's vetoes (merge_vetoes): a veto moves the reads of other IDs at
 * its place to the fuzzy list, whether they come before or after it, and
 * goes there itself; a read of its own ID there, and reads elsewhere,
 * stay. The ratio pass on the dim preset (seed 46, frame 7) read a 56 as
 * 17 at radius 8 and as 29 at radius 3, the 29 with a dot like a broken
 * wall: the 17 must not stand alone. */
static void test_merge_vetoes(void **state)
{
	(void)state;
	for (int order = 0; order < 2; order++) {
		struct detections d;
		assert_int_equal(detections_alloc(&d, 8), 0);
		struct fiducial_det veto = fid_at(29, 118, 140), other = fid_at(17, 118, 142);
		veto.completed = FIDUCIAL_VETO;
		other.completed = FIDUCIAL_DOUBTFUL;
		d.fids[d.n_fids++] = order ? other : veto;
		d.fids[d.n_fids++] = fid_at(29, 119, 141); /* the veto's own ID */
		d.fids[d.n_fids++] = fid_at(4, 300, 300);  /* elsewhere */
		d.fids[d.n_fids++] = order ? veto : other;
		merge_vetoes(&d);
		assert_int_equal(d.n_fids, 2);
		for (int i = 0; i < d.n_fids; i++) {
			assert_true(d.fids[i].id == 29 || d.fids[i].id == 4);
			assert_int_not_equal(d.fids[i].completed, FIDUCIAL_VETO);
		}
		assert_int_equal(d.n_fuzzy, 2);
		for (int i = 0; i < d.n_fuzzy; i++) {
			assert_int_equal(d.fuzzy[i].id, -1);
			assert_int_not_equal(d.fuzzy[i].completed, FIDUCIAL_VETO);
		}
		detections_free(&d);
	}
	/* Without a veto nothing moves. */
	struct detections d;
	assert_int_equal(detections_alloc(&d, 8), 0);
	d.fids[d.n_fids++] = fid_at(17, 118, 142);
	d.fids[d.n_fids++] = fid_at(29, 118, 140);
	merge_vetoes(&d);
	assert_int_equal(d.n_fids, 2);
	assert_int_equal(d.n_fuzzy, 0);
	detections_free(&d);
}

/* Reads counted before the merge (merge_majority): the shadow preset
 * (seed 334, frame 2) read a 133 as 212 in the first scale and as 133 in
 * the third scale's window and its ratio pass; the sheet-half preset
 * (seed 241, frame 18) read a 2 as a whole 48 in the scaled pass and as a
 * completed 2 in the closing and upsampled passes. A read that two reads
 * of another ID outvote moves to its list's fuzzy symbols, whichever list
 * holds it and in whatever order; two doubtful or fallback reads outvote
 * nothing; a tie, a lone read and reads elsewhere stay. */
static void test_merge_majority(void **state)
{
	(void)state;
	for (int order = 0; order < 2; order++) {
		struct detections d1, d2, d3;
		assert_int_equal(detections_alloc(&d1, 8), 0);
		assert_int_equal(detections_alloc(&d2, 8), 0);
		assert_int_equal(detections_alloc(&d3, 16), 0);
		struct fiducial_det a = fid_at(133, 264, 67), b = fid_at(133, 265, 67);
		b.completed = FIDUCIAL_DOUBTFUL;
		d1.fids[d1.n_fids++] = fid_at(212, 264, 68); /* outvoted, the first scale's own */
		d3.fids[d3.n_fids++] = order ? b : a;
		d3.fids[d3.n_fids++] = order ? a : b;
		struct fiducial_det w = fid_at(48, 310, 211), c = fid_at(2, 309, 212);
		c.completed = 1;
		d3.fids[d3.n_fids++] = order ? c : w; /* the whole 48: outvoted */
		d3.fids[d3.n_fids++] = c;
		d3.fids[d3.n_fids++] = order ? w : c;
		struct fiducial_det f = fid_at(7, 500, 500), g = fid_at(7, 501, 500);
		f.completed = FIDUCIAL_DOUBTFUL;
		g.completed = FIDUCIAL_FALLBACK;
		d2.fids[d2.n_fids++] = fid_at(9, 500, 501); /* two weak reads: it stays */
		d3.fids[d3.n_fids++] = f;
		d3.fids[d3.n_fids++] = g;
		d1.fids[d1.n_fids++] = fid_at(109, 100, 100); /* a tie: both stay */
		d2.fids[d2.n_fids++] = fid_at(119, 100, 101);
		d1.fids[d1.n_fids++] = fid_at(5, 50, 400); /* alone */
		struct detections *lists[3] = {&d1, &d2, &d3};
		merge_majority(lists, 3);
		assert_int_equal(d1.n_fids, 2);
		assert_int_equal(d1.n_fuzzy, 1);
		assert_int_equal(d1.fuzzy[0].id, -1);
		assert_true(fabsf(d1.fuzzy[0].x - 264) < 1);
		for (int i = 0; i < d1.n_fids; i++)
			assert_true(d1.fids[i].id == 109 || d1.fids[i].id == 5);
		assert_int_equal(d2.n_fids, 2);
		assert_int_equal(d2.n_fuzzy, 0);
		assert_int_equal(d3.n_fids, 6);
		assert_int_equal(d3.n_fuzzy, 1);
		assert_true(fabsf(d3.fuzzy[0].x - 310) < 1);
		for (int i = 0; i < d3.n_fids; i++)
			assert_true(d3.fids[i].id == 133 || d3.fids[i].id == 2 || d3.fids[i].id == 7);
		detections_free(&d1);
		detections_free(&d2);
		detections_free(&d3);
	}
}

/* A pass's two reads (merge_second_read): the upsampled pass read a
 * 32 px 15 half in a hard shadow as a whole 95 by Bernsen and as 15 by
 * the closing (the sun preset, reacTIVision's set, seed 42, frame 1).
 * The first read that a second one contradicts moves to the fuzzy list
 * and the second becomes doubtful; a second read that agrees, first reads
 * elsewhere and reads before `first` stay as they are. */
static void test_merge_second_read(void **state)
{
	(void)state;
	struct detections d;
	assert_int_equal(detections_alloc(&d, 16), 0);
	d.fids[d.n_fids++] = fid_at(95, 409, 60);  /* another pass's: before first */
	d.fids[d.n_fids++] = fid_at(95, 409, 59);  /* first reads from here */
	d.fids[d.n_fids++] = fid_at(12, 200, 200); /* agreed on below */
	d.fids[d.n_fids++] = fid_at(30, 100, 100); /* no second read there */
	struct fiducial_det c = fid_at(15, 408, 59), a = fid_at(12, 201, 200);
	c.completed = a.completed = 1;
	d.fids[d.n_fids++] = c;
	d.fids[d.n_fids++] = a;
	merge_second_read(&d, 1, 4);
	assert_int_equal(d.n_fids, 5);
	assert_int_equal(d.n_fuzzy, 1);
	assert_int_equal(d.fuzzy[0].id, -1);
	assert_true(fabsf(d.fuzzy[0].y - 59) < 1e-3f);
	int seen = 0;
	for (int i = 0; i < d.n_fids; i++) {
		const struct fiducial_det *f = &d.fids[i];
		seen |= (f->id == 95 && fabsf(f->y - 60) < 1e-3f) << 0 | (f->id == 12 && !f->completed) << 1 |
			(f->id == 30) << 2 | (f->id == 15 && f->completed == FIDUCIAL_DOUBTFUL) << 3 |
			(f->id == 12 && f->completed == 1) << 4;
	}
	assert_int_equal(seen, 31);
	detections_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_decodes_and_tracks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlapped_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_second_scale_switched_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_engine_frees_all_it_took, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_asleep_same_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_size_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_equaliser, setup, teardown),
		cmocka_unit_test_setup_teardown(test_third_scale_under_shadow, setup, teardown),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_windows_explained),
		cmocka_unit_test(test_windows_finger_rim),
		cmocka_unit_test(test_small_passes_skip_noise),
		cmocka_unit_test(test_merge_disagreement),
		cmocka_unit_test(test_merge_completed),
		cmocka_unit_test(test_merge_doubtful),
		cmocka_unit_test(test_merge_doubtful_agreed),
		cmocka_unit_test(test_merge_fallback),
		cmocka_unit_test(test_merge_vetoes),
		cmocka_unit_test(test_merge_majority),
		cmocka_unit_test(test_merge_second_read),
		cmocka_unit_test(test_merge_check),
		cmocka_unit_test(test_merge_confirm),
		cmocka_unit_test(test_merge_contradicted),
		cmocka_unit_test(test_merge_lone_pair),
		cmocka_unit_test(test_merge_sharp_stands),
		cmocka_unit_test(test_merge_tie_break),
		cmocka_unit_test_setup_teardown(test_third_scale_radius_follows_symbol, setup, teardown),
		cmocka_unit_test(test_windows_radius),
		cmocka_unit_test(test_windows_live_side),
		cmocka_unit_test(test_windows_small),
		cmocka_unit_test(test_windows_saturated),
		cmocka_unit_test(test_windows_squeezed),
		cmocka_unit_test(test_windows_islands),
		cmocka_unit_test(test_windows_blobs),
		cmocka_unit_test(test_windows_rim_islands),
		cmocka_unit_test(test_windows_branch_share),
		cmocka_unit_test(test_windows_ink),
		cmocka_unit_test(test_windows_ink_blocks),
		cmocka_unit_test(test_windows_ink_unread),
		cmocka_unit_test_setup_teardown(test_closing_dark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ink_windows_lower_pct, setup, teardown),
		cmocka_unit_test(test_small_symbol_pass),
		cmocka_unit_test(test_up_pass),
		cmocka_unit_test(test_up_sharp),
		cmocka_unit_test(test_up_ink),
		cmocka_unit_test(test_up_ink_confirmed),
		cmocka_unit_test(test_up_mean),
		cmocka_unit_test(test_up_sauvola),
		cmocka_unit_test(test_up_encoded),
		cmocka_unit_test(test_up_sharpened),
		cmocka_unit_test(test_up_sharp_squeezed),
		cmocka_unit_test(test_deblur_short_streak),
		cmocka_unit_test(test_up_sharp_edge),
		cmocka_unit_test(test_lanczos_check),
		cmocka_unit_test(test_up_fine),
		cmocka_unit_test(test_up_fine_floor),
		cmocka_unit_test(test_up_close),
		cmocka_unit_test(test_up_pass_tiles),
		cmocka_unit_test_setup_teardown(test_closing_pass_under_shadow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scaled_pass_dot_vetoes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratio_pass_large_symbols, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_bias, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_pass_under_streak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_upper_rung, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_pass_whole_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_frame_sharp_print, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deblur_pass_out_of_focus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_gate_dim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_gate_fingers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
