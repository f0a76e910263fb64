/* test_fiducial.c - tree sets, canonical strings and the amoeba matcher on
 * hand-drawn symbols; with ../shared present also every printed symbol of
 * the reacTIVision default set and a few synthetic camera frames. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/detect.h"
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/fiducial/match.h"
#include "../src/fiducial/trees.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/testutil.h"

static struct tree_set *set_parse(const char *text)
{
	struct tree_set *s = NULL;
	assert_int_equal(tree_set_parse(text, strlen(text), "test", &s), 0);
	assert_non_null(s);
	return s;
}

static int set_parse_err(const char *text)
{
	struct tree_set *s = (struct tree_set *)1;
	int rc = tree_set_parse(text, strlen(text), "test", &s);
	assert_null(s);
	return rc;
}

static void test_canonicalize(void **state)
{
	(void)state;
	char buf[80];
	assert_int_equal(tree_canonicalize("011212", buf, sizeof buf), 0);
	assert_string_equal(buf, "w012121");
	assert_int_equal(tree_canonicalize("b0", buf, sizeof buf), 0);
	assert_string_equal(buf, "b0");
	assert_int_equal(tree_canonicalize("w0112232", buf, sizeof buf), 0);
	assert_string_equal(buf, "w0123221");
	/* The spec's example is canonical already. */
	assert_int_equal(tree_canonicalize("w0122222212212121111", buf, sizeof buf), 0);
	assert_string_equal(buf, "w0122222212212121111");
	assert_int_equal(tree_canonicalize("w", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("w1", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("w02", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("w010", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("w0a", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("x01", buf, sizeof buf), ERR_FORMAT);
	assert_int_equal(tree_canonicalize("w0122", buf, 4), ERR_RANGE);
	char big[80] = "w0";
	memset(big + 2, '1', 64);
	big[66] = 0;
	assert_int_equal(tree_canonicalize(big, buf, sizeof buf), ERR_RANGE);
	int d = 0, n = 0;
	assert_int_equal(tree_token_info("w0122222212212121111", &d, &n), 0);
	assert_int_equal(d, 2);
	assert_int_equal(n, 19);
}

static void test_set_parse(void **state)
{
	(void)state;
	struct tree_set *s = set_parse("w0122\n0121\r\n  b0122\tw01\n\n");
	assert_int_equal(tree_set_count(s), 4);
	assert_int_equal(tree_set_lookup(s, "w0122"), 0);
	assert_int_equal(tree_set_lookup(s, "w0121"), 1);
	assert_int_equal(tree_set_lookup(s, "b0122"), 2);
	assert_int_equal(tree_set_lookup(s, "b0121"), -1);
	assert_int_equal(tree_set_lookup(s, "w01"), 3);
	assert_string_equal(tree_set_token(s, 1), "w0121");
	assert_null(tree_set_token(s, 4));
	assert_null(tree_set_token(s, -1));
	assert_int_equal(tree_set_max_nodes(s), 4);
	assert_int_equal(tree_set_min_nodes(s), 2);
	assert_int_equal(tree_set_max_depth(s), 2);
	tree_set_free(s);

	log_set_level(LOG_ERROR - 1);
	/* A duplicate still uses up its ID; lookups give the first. */
	s = set_parse("w01\nw01\nw011\n");
	assert_int_equal(tree_set_count(s), 3);
	assert_int_equal(tree_set_lookup(s, "w01"), 0);
	assert_string_equal(tree_set_token(s, 1), "w01");
	assert_int_equal(tree_set_lookup(s, "w011"), 2);
	tree_set_free(s);

	assert_int_equal(set_parse_err(""), ERR_FORMAT);
	assert_int_equal(set_parse_err(" \n\t "), ERR_FORMAT);
	assert_int_equal(set_parse_err("w01\nw0x1\n"), ERR_FORMAT);
	assert_int_equal(set_parse_err("w01\nw0112\n"), ERR_FORMAT); /* not canonical */
	assert_int_equal(set_parse_err("w01\n1\n"), ERR_FORMAT);
	char big[200];
	snprintf(big, sizeof big, "w01\nw0%0100d\n", 0);
	assert_int_equal(set_parse_err(big), ERR_RANGE);
	tree_set_free(NULL);

	struct tree_set *t = NULL;
	assert_int_equal(tree_set_load("/nonexistent/x.trees", &t), ERR_IO);
	assert_null(t);
	char path[600];
	snprintf(path, sizeof path, "%s/bad.trees", test_tmpdir());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("w01\nw011\nw0z\n", f);
	fclose(f);
	assert_int_equal(tree_set_load(path, &t), ERR_FORMAT);
	f = fopen(path, "w");
	fputs("w01\nw011\n", f);
	fclose(f);
	assert_int_equal(tree_set_load(path, &t), 0);
	assert_int_equal(tree_set_count(t), 2);
	tree_set_free(t);
	remove(path);
	log_set_level(LOG_INFO);
}

/* ---- hand-drawn symbols ---- */

static void rect(struct image_u8 *img, int x0, int y0, int x1, int y1, uint8_t v)
{
	for (int y = y0; y <= y1; y++)
		memset(image_u8_row(img, y) + x0, v, (size_t)(x1 - x0 + 1));
}

/* A w x h image filled with v: the paper (or the black field) a test
 * draws its symbol on. */
static void paper(struct image_u8 *img, int w, int h, uint8_t v)
{
	assert_int_equal(image_u8_alloc(img, w, h), 0);
	rect(img, 0, 0, w - 1, h - 1, v);
}

/* A side x side card: white paper, a black root from 5 px in, its white
 * area from 12 px in; the test draws the symbol's blobs and dots. */
static void card(struct image_u8 *img, int side)
{
	paper(img, side, side, 255);
	rect(img, 5, 5, side - 6, side - 6, 0);
	rect(img, 12, 12, side - 13, side - 13, 255);
}

enum {
	DRAW_SPECKS = 1,
	DRAW_NO_DOT = 2,
	DRAW_BIG_DOT = 4,
	DRAW_INVERT = 8,
	DRAW_NOISE = 16,
	DRAW_HAIRLINE = 32,
	DRAW_CUT_HOLE = 64
};

/* A symbol of tree w012211 on an 80x80 white table: black ring, white root,
 * a black blob with two white holes and two black dots. */
static void draw_symbol(struct image_u8 *img, int flags)
{
	assert_int_equal(image_u8_alloc(img, 80, 80), 0);
	rect(img, 0, 0, 79, 79, 255);
	rect(img, 5, 5, 74, 74, 0);
	rect(img, 12, 12, 67, 67, 255);
	rect(img, 20, 20, 44, 44, 0);
	rect(img, 24, 24, 29, 29, 255);
	rect(img, 35, 35, 40, 40, 255);
	rect(img, 52, 20, 57, 25, 0);
	if (flags & DRAW_BIG_DOT)
		rect(img, 48, 46, 65, 65, 0);
	else if (!(flags & DRAW_NO_DOT))
		rect(img, 52, 52, 57, 57, 0);
	if (flags & DRAW_SPECKS) {
		rect(img, 48, 62, 48, 62, 0);     /* in the root */
		rect(img, 54, 22, 54, 22, 255);   /* in a dot */
	}
	if (flags & DRAW_NOISE) {
		rect(img, 47, 30, 48, 31, 0);     /* 2x2 dots: too big for specks */
		rect(img, 26, 26, 27, 27, 0);     /* one inside a hole */
	}
	if (flags & DRAW_HAIRLINE)   /* a white diagonal in the blob: six 1 px specks */
		for (int i = 0; i < 6; i++)
			rect(img, 38 + i, 21 + i, 38 + i, 21 + i, 255);
	if (flags & DRAW_CUT_HOLE)   /* a black diagonal across a hole: two islands */
		for (int i = 0; i < 6; i++)
			rect(img, 24 + i, 24 + i, 24 + i, 24 + i, 0);
	if (flags & DRAW_INVERT)
		for (int y = 0; y < 80; y++)
			for (int x = 0; x < 80; x++)
				image_u8_row(img, y)[x] = (uint8_t)(255 - image_u8_row(img, y)[x]);
}

struct rig {
	struct segment *seg;
	struct match *mat;
	struct detections det;
	struct bitmask mask;
	const struct region_tree *tree;
};

static bool rig_complete; /* match_config.complete for rig_run */
static bool rig_few_specks; /* match_config.few_specks for rig_run */
static bool rig_unconfirmed; /* match_config.specks_unconfirmed for rig_run */
static bool rig_moved; /* match_config.moved_unconfirmed for rig_run */
static bool rig_closed; /* match_config.closed_leaf for rig_run */

static void rig_run(struct rig *r, const struct tree_set *set, const struct image_u8 *grey, float root_max)
{
	int err;
	struct segment_config sc = {grey->width, grey->height, tree_set_max_nodes(set), 0, 0};
	struct match_config mc = {.trees = set, .max_width = grey->width, .max_height = grey->height,
				  .root_min_px = 20, .root_max_px = root_max, .complete = rig_complete,
				  .few_specks = rig_few_specks, .specks_unconfirmed = rig_unconfirmed,
				  .moved_unconfirmed = rig_moved, .closed_leaf = rig_closed};
	r->seg = segment_create(&sc, &err);
	r->mat = match_create(&mc, &err);
	assert_non_null(r->seg);
	assert_non_null(r->mat);
	assert_int_equal(detections_alloc(&r->det, 64), 0);
	assert_int_equal(bitmask_alloc(&r->mask, grey->width, grey->height), 0);
	bitmask_from_image(&r->mask, grey);
	assert_int_equal(segment_process(r->seg, &r->mask, &r->tree), 0);
	assert_int_equal(match_process(r->mat, r->tree, grey, &r->det), 0);
}

/* What rig_run read: one symbol of ID id, or (id < 0) no symbol and one
 * fuzzy one. */
static void rig_expect(const struct rig *r, int32_t id)
{
	if (id < 0) {
		assert_int_equal(r->det.n_fids, 0);
		assert_int_equal(r->det.n_fuzzy, 1);
	} else {
		assert_int_equal(r->det.n_fids, 1);
		assert_int_equal(r->det.fids[0].id, id);
	}
}

static void rig_free(struct rig *r)
{
	detections_free(&r->det);
	bitmask_free(&r->mask);
	match_destroy(r->mat);
	segment_destroy(r->seg);
}

/* rig_run, rig_expect and rig_free: the tests that ask only what was read. */
static void rig_check(const struct tree_set *set, const struct image_u8 *grey, float root_max, int32_t id)
{
	struct rig r;
	rig_run(&r, set, grey, root_max);
	rig_expect(&r, id);
	rig_free(&r);
}

/* A matcher given another set derives its node-count tables again, also
 * where the new set was parsed after the old one was freed and may have
 * its address: the tables are keyed by tree_set_serial(), and a set
 * without the drawn symbol's shape (6 nodes, depth 2) decodes nothing. */
static void test_match_new_set(void **state)
{
	(void)state;
	struct tree_set *a = set_parse("w0111111\n");
	struct image_u8 img;
	draw_symbol(&img, 0);
	struct rig r;
	rig_run(&r, a, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	const uint64_t serial_a = tree_set_serial(a);
	assert_true(serial_a != 0);
	tree_set_free(a);
	struct tree_set *b = set_parse("w0111111\nw012211\n");
	assert_true(tree_set_serial(b) != 0 && tree_set_serial(b) != serial_a);
	struct match_config mc = {.trees = b, .max_width = img.width, .max_height = img.height, .root_min_px = 20,
				  .root_max_px = 100};
	assert_int_equal(match_set_config(r.mat, &mc), 0);
	assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
	rig_expect(&r, 1);
	/* Options alone changed: the same set, the same read. */
	mc.even_leaves = true;
	assert_int_equal(match_set_config(r.mat, &mc), 0);
	assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
	rig_expect(&r, 1);
	rig_free(&r);
	image_u8_free(&img);
	tree_set_free(b);
}

static void test_match_drawn(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;

	draw_symbol(&img, 0);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	assert_int_equal(r.det.n_fuzzy, 0);
	const struct fiducial_det *d = &r.det.fids[0];
	assert_int_equal(d->id, 1);
	assert_int_equal(d->n_nodes, 6);
	assert_float_equal(d->size_px, 56, 1e-6);
	/* §7: leaf bbox midpoints weighted pi (d + 1/2)^2. */
	const double w1 = M_PI * 2.25, w2 = M_PI * 6.25;
	const double cx = (w2 * (26.5 + 37.5) + w1 * (54.5 + 54.5)) / (2 * w1 + 2 * w2);
	const double cy = (w2 * (26.5 + 37.5) + w1 * (22.5 + 54.5)) / (2 * w1 + 2 * w2);
	double a = atan2(cy - 38.5, cx - 54.5) - M_PI / 2;
	while (a < 0)
		a += 2 * M_PI;
	assert_float_equal(d->x, cx, 1e-3);
	assert_float_equal(d->y, cy, 1e-3);
	assert_float_equal(d->angle, a, 1e-4);
	/* The root region is offered for tracking. */
	int found_root = 0;
	for (int i = 0; i < r.det.n_roots; i++)
		found_root |= r.det.roots[i].region == d->root;
	assert_true(found_root);
	char buf[80];
	assert_int_equal(match_canonical_string(r.tree, d->root, -1, buf, sizeof buf), 7);
	assert_string_equal(buf, "w012211");
	int32_t ring = -1;
	for (int i = 0; i < r.tree->regions[d->root].n_adj; i++)
		if (r.tree->regions[region_adj(r.tree, d->root)[i]].colour == 0 &&
		    r.tree->regions[region_adj(r.tree, d->root)[i]].x0 == 5)
			ring = region_adj(r.tree, d->root)[i];
	assert_true(ring >= 0);
	assert_int_equal(match_canonical_string(r.tree, d->root, ring, buf, sizeof buf), 7);
	assert_string_equal(buf, "w012211");
	int32_t bg = region_adj(r.tree, ring)[0] == d->root ? region_adj(r.tree, ring)[1] : region_adj(r.tree, ring)[0];
	assert_int_equal(match_canonical_string(r.tree, ring, bg, buf, sizeof buf), 8);
	assert_string_equal(buf, "b0123322");
	assert_int_equal(match_canonical_string(r.tree, ring, bg, buf, 5), ERR_RANGE);
	rig_free(&r);

	/* Noise specks inside the root and inside a leaf change nothing. */
	image_u8_free(&img);
	draw_symbol(&img, DRAW_SPECKS);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 1);
	assert_float_equal(r.det.fids[0].x, cx, 1e-3);
	assert_float_equal(r.det.fids[0].y, cy, 1e-3);
	rig_free(&r);

	/* Small noise dots make the tree over-full; they are pruned by size. */
	image_u8_free(&img);
	draw_symbol(&img, DRAW_NOISE);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 1);
	assert_int_equal(r.det.fids[0].n_nodes, 6);
	assert_float_equal(r.det.fids[0].x, cx, 1e-3);
	assert_float_equal(r.det.fids[0].y, cy, 1e-3);
	rig_free(&r);

	/* Inverted print: the b-variant's ID, angle turned by pi. */
	image_u8_free(&img);
	draw_symbol(&img, DRAW_INVERT);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 2);
	/* Its black root is offered for root tracking too. */
	found_root = 0;
	for (int i = 0; i < r.det.n_roots; i++)
		found_root |= r.det.roots[i].region == r.det.fids[0].root;
	assert_true(found_root);
	rig_free(&r);

	/* A lost dot leaves a damaged symbol: fuzzy, never an ID. */
	image_u8_free(&img);
	draw_symbol(&img, DRAW_NO_DOT);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, -1);
	assert_int_equal(r.det.fuzzy[0].id, -1);
	assert_int_equal(r.det.fuzzy[0].n_nodes, 5);
	rig_free(&r);

	/* One dot far bigger than the other: the leaf filter refuses it. */
	image_u8_free(&img);
	draw_symbol(&img, DRAW_BIG_DOT);
	rig_run(&r, set, &img, 0);
	rig_expect(&r, -1);
	assert_int_equal(r.det.n_roots, 0);
	rig_free(&r);

	image_u8_free(&img);
	tree_set_free(set);
}

/* Motion streaks leave 1 px diagonal hairlines that shatter into specks:
 * enough of them overflow a region's neighbour list (REGION_SATURATED), and
 * a hairline across a hole cuts it into islands that the specks separate.
 * The lists are rebuilt from the runs as if the specks were not there; the
 * symbol is found where it is found without the hairlines. */
static void test_match_hairlines(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;

	draw_symbol(&img, 0);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	const struct fiducial_det clean = r.det.fids[0];
	rig_free(&r);
	image_u8_free(&img);

	const int cases[] = {DRAW_HAIRLINE, DRAW_CUT_HOLE, DRAW_HAIRLINE | DRAW_CUT_HOLE};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		draw_symbol(&img, cases[c]);
		rig_run(&r, set, &img, 100);
		/* The blob with the hairline has more neighbours than slots. */
		int32_t blob = -1;
		for (int32_t k = 0; k < r.tree->n_regions; k++)
			if (r.tree->regions[k].x0 == 20 && r.tree->regions[k].y0 == 20 && r.tree->regions[k].x1 == 44)
				blob = k;
		assert_true(blob >= 0);
		if (cases[c] & DRAW_HAIRLINE)
			assert_true(r.tree->regions[blob].flags & REGION_SATURATED);
		assert_int_equal(r.det.n_fids, 1);
		assert_int_equal(r.det.n_fuzzy, 0);
		assert_int_equal(r.det.fids[0].id, clean.id);
		assert_int_equal(r.det.fids[0].n_nodes, 6);
		assert_float_equal(r.det.fids[0].x, clean.x, 1e-3);
		assert_float_equal(r.det.fids[0].y, clean.y, 1e-3);
		assert_float_equal(r.det.fids[0].angle, clean.angle, 1e-4);
		assert_float_equal(r.det.fids[0].size_px, clean.size_px, 1e-6);
		/* Read from rebuilt lists: weaker than a whole tree (merge.h). */
		assert_int_equal(r.det.fids[0].completed, 1);
		assert_int_equal(clean.completed, 0);
		rig_free(&r);
		image_u8_free(&img);
	}

	/* The same damage on a symbol the set does not hold finds nothing. */
	tree_set_free(set);
	set = set_parse("w0111111\nw0122111\n");
	draw_symbol(&img, DRAW_HAIRLINE | DRAW_CUT_HOLE);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	image_u8_free(&img);
	tree_set_free(set);
}

/* Six black dots in a white root; merge != 0 bridges two neighbours into
 * one elongated leaf (a motion streak), merge < 0 draws a round dot of the
 * same area instead of the two. */
static void draw_dots(struct image_u8 *img, int merge)
{
	assert_int_equal(image_u8_alloc(img, 80, 80), 0);
	rect(img, 0, 0, 79, 79, 255);
	rect(img, 5, 5, 74, 74, 0);
	rect(img, 12, 12, 67, 67, 255);
	for (int i = 0; i < 3; i++)
		rect(img, 20 + 10 * i, 24, 25 + 10 * i, 29, 0);
	rect(img, 40, 40, 45, 45, 0);
	if (merge > 0)
		rect(img, 20, 40, 35, 45, 0);
	else if (merge < 0)
		rect(img, 23, 38, 32, 47, 0);
	else {
		rect(img, 20, 40, 25, 45, 0);
		rect(img, 30, 40, 35, 45, 0);
	}
}

/* Two leaves merged into one elongated leaf of about twice the area are
 * decoded as the symbol with both, at the same centre; a big round leaf
 * (a filled hole, a blob) is not taken for a merged pair. */
static void test_match_merged(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\n");
	struct image_u8 img;
	struct rig r;

	draw_dots(&img, 0);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 0);
	const struct fiducial_det whole = r.det.fids[0];
	assert_float_equal(whole.x, 32.5, 1e-3);
	assert_float_equal(whole.y, 34.5, 1e-3);
	rig_free(&r);

	image_u8_free(&img);
	draw_dots(&img, 1);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	assert_int_equal(r.det.n_fuzzy, 0);
	assert_int_equal(r.det.fids[0].id, 0);
	assert_int_equal(r.det.fids[0].n_nodes, 7);
	assert_float_equal(r.det.fids[0].x, whole.x, 1e-3);
	assert_float_equal(r.det.fids[0].y, whole.y, 1e-3);
	assert_float_equal(r.det.fids[0].angle, whole.angle, 1e-4);
	rig_free(&r);

	image_u8_free(&img);
	draw_dots(&img, -1);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, -1);
	assert_int_equal(r.det.fuzzy[0].n_nodes, 6);
	rig_free(&r);

	/* The completed tree must be in the set. */
	image_u8_free(&img);
	tree_set_free(set);
	set = set_parse("w01111111\nw0122221\n");
	draw_dots(&img, 1);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);

	image_u8_free(&img);
	tree_set_free(set);
}

/* A symbol of 18 nodes, w0 1222 122 and ten dots (w012221221111111111),
 * on a 120x120 white table; lost dots (at most two) are left out. */
static void draw_big(struct image_u8 *img, int lost)
{
	assert_int_equal(image_u8_alloc(img, 120, 120), 0);
	rect(img, 0, 0, 119, 119, 255);
	rect(img, 5, 5, 114, 114, 0);
	rect(img, 12, 12, 107, 107, 255);
	rect(img, 20, 20, 44, 44, 0);
	rect(img, 24, 24, 28, 28, 255);
	rect(img, 34, 24, 38, 28, 255);
	rect(img, 24, 34, 28, 38, 255);
	rect(img, 52, 20, 76, 44, 0);
	rect(img, 56, 24, 60, 28, 255);
	rect(img, 66, 34, 70, 38, 255);
	for (int i = lost; i < 10; i++)
		rect(img, 20 + 12 * (i % 5), 60 + 20 * (i / 5), 25 + 12 * (i % 5), 65 + 20 * (i / 5), 0);
}

/* A fuzzy tree of at least COMPLETE_MIN_NODES nodes that exactly one tree
 * of the set holds, with one or two of its descendants taken away, is read
 * as that tree; where two trees hold it, or the tree is small, it stays
 * fuzzy. */
static void test_match_complete(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012221221111111111\nw0111111\n");
	struct image_u8 img;
	struct rig r;

	/* Off (the default): a lost dot leaves it fuzzy. */
	draw_big(&img, 1);
	rig_check(set, &img, 0, -1);
	image_u8_free(&img);

	rig_complete = true;
	for (int lost = 0; lost <= 3; lost++) {
		draw_big(&img, lost);
		rig_run(&r, set, &img, 0);
		if (lost <= 2) {
			rig_expect(&r, 0);
			assert_int_equal(r.det.fids[0].n_nodes, 18);
			assert_int_equal(r.det.n_fuzzy, 0);
		} else {
			assert_int_equal(r.det.n_fids, 0);
		}
		rig_free(&r);
		image_u8_free(&img);
	}

	/* A second tree that holds the damaged one (a dot with a hole): which
	 * one lost the nodes is unknown. */
	tree_set_free(set);
	set = set_parse("w012221221111111111\nw012221221211111111\n");
	draw_big(&img, 1);
	rig_run(&r, set, &img, 0);
	rig_expect(&r, -1);
	assert_int_equal(r.det.fuzzy[0].n_nodes, 17);
	rig_free(&r);
	image_u8_free(&img);

	/* Under COMPLETE_MIN_NODES: a lost dot stays fuzzy (test_match_drawn). */
	tree_set_free(set);
	set = set_parse("w012221221111111111\nw012211\n");
	draw_symbol(&img, DRAW_NO_DOT);
	rig_check(set, &img, 100, -1);
	image_u8_free(&img);
	tree_set_free(set);
	rig_complete = false;
}

/* A symbol w012211 drawn straight on a black table, as small symbols come
 * out of the threshold: ring and card margin merged into the table, which
 * white specks saturate (so the root is REGION_FRAGMENTED), and the holes of
 * the blob 1 px each. Root side `side`; the blob and dots scale with it. */
static void draw_small_dot(struct image_u8 *img, int side, int dot);

static void draw_small(struct image_u8 *img, int side)
{
	draw_small_dot(img, side, side / 6);
}

/* As draw_small, with the second dot `dot` px a side. */
static void draw_small_dot(struct image_u8 *img, int side, int dot)
{
	assert_int_equal(image_u8_alloc(img, 96, 96), 0);
	rect(img, 0, 0, 95, 95, 0);
	for (int i = 0; i < 12; i++) {
		rect(img, 3 + 7 * i, 3, 4 + 7 * i, 4, 255);
		rect(img, 3 + 7 * i, 90, 4 + 7 * i, 91, 255);
	}
	const int o = 10, u = side / 6;
	rect(img, o, o, o + side - 1, o + side - 1, 255);
	rect(img, o + u / 2, o + u / 2, o + u / 2 + 3 * u, o + u / 2 + 2 * u, 0);
	rect(img, o + u / 2 + u, o + u / 2 + u, o + u / 2 + u, o + u / 2 + u, 255);
	rect(img, o + u / 2 + 2 * u, o + u / 2 + u, o + u / 2 + 2 * u, o + u / 2 + u, 255);
	rect(img, o + 4 * u, o + u / 2, o + 5 * u - 1, o + 3 * u / 2 - 1, 0);
	rect(img, o + 4 * u, o + 4 * u, o + 4 * u + dot - 1, o + 4 * u + dot - 1, 0);
}

/* Small symbols are read at their own scale: 1 px holes count as leaves and
 * a root touching the saturated table is taken when its sub-tree is a whole
 * symbol; on a big root the same 1 px holes stay specks and a root touching
 * the table stays out. */
static void test_match_small(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;

	draw_small(&img, 18);
	rig_run(&r, set, &img, 100);
	assert_true(r.tree->regions[r.tree->regions[0].colour ? 1 : 0].flags & REGION_SATURATED);
	rig_expect(&r, 1);
	assert_int_equal(r.det.fids[0].n_nodes, 6);
	rig_free(&r);
	image_u8_free(&img);

	draw_small(&img, 60);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	image_u8_free(&img);

	/* A 1 px speck directly in the root (a dot's place) is not taken for a
	 * dot: with it the tree would be w012211 as above, but such a speck is
	 * paper texture as often, and taking it turned a symbol whose blob
	 * lost a hole, or whose dot merged with the ring, into another one.
	 * The 1 px holes in the blob still count. */
	draw_small_dot(&img, 18, 1);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	image_u8_free(&img);
	tree_set_free(set);
}

/* Where specks are taken for leaves but the threshold keeps noise (the
 * small-symbol pass, few_specks), they may make at most a fifth of a
 * tree: draw_small's two 1 px holes are 2 of its 6 nodes and it is not
 * read; with one hole of 2 x 2 px (no speck) the other may be one. */
static void test_match_few_specks(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;
	rig_few_specks = true;
	draw_small(&img, 18);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	/* The second hole grown to 2 x 2 px: one speck of 6 nodes. */
	rect(&img, 17, 14, 18, 15, 255);
	rig_check(set, &img, 100, 1);
	rig_few_specks = false;
	/* Without the rule both are read. */
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	rig_free(&r);
	image_u8_free(&img);
	draw_small(&img, 18);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	rig_free(&r);
	image_u8_free(&img);
	tree_set_free(set);
}

/* With specks_unconfirmed, a tree whose specks pass a fifth of its nodes
 * but not a third is read as FIDUCIAL_UNCONFIRMED (the engine keeps it
 * only where another threshold's tree confirms it): draw_small's two 1 px
 * holes, 2 of 6 nodes, are; with a third 1 px hole in the blob, 3 of 7,
 * nothing is read. A tree within the fifth is read as before. */
static void test_match_specks_unconfirmed(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\nw0122211\n");
	struct image_u8 img;
	struct rig r;
	rig_few_specks = rig_unconfirmed = true;
	draw_small(&img, 18);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 1);
	assert_int_equal(r.det.fids[0].completed, FIDUCIAL_UNCONFIRMED);
	rig_free(&r);
	/* A third 1 px hole in the blob: 3 specks of 7 nodes. */
	rect(&img, 19, 14, 19, 14, 255);
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	image_u8_free(&img);
	/* The second hole grown to 2 x 2 px: one speck of 6, a whole read. */
	draw_small(&img, 18);
	rect(&img, 17, 14, 18, 15, 255);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 1);
	assert_int_equal(r.det.fids[0].completed, 0);
	rig_free(&r);
	rig_few_specks = rig_unconfirmed = false;
	image_u8_free(&img);
	tree_set_free(set);
}

/* A small root with a 1 px speck for a blob's hole and a plain leaf of
 * `big` px a side among 2 x 2 px dots, on the saturated table (as
 * draw_small): w0122111, or with the speck's hole moved to the big leaf
 * (the hole of a one-hole blob that closed) w0121211. */
static void draw_closed_hole(struct image_u8 *img, int big)
{
	assert_int_equal(image_u8_alloc(img, 96, 96), 0);
	rect(img, 0, 0, 95, 95, 0);
	for (int i = 0; i < 12; i++) {
		rect(img, 3 + 7 * i, 3, 4 + 7 * i, 4, 255);
		rect(img, 3 + 7 * i, 90, 4 + 7 * i, 91, 255);
	}
	rect(img, 10, 10, 29, 29, 255);
	rect(img, 12, 12, 19, 17, 0);
	rect(img, 14, 14, 15, 15, 255);
	rect(img, 17, 14, 17, 14, 255);
	rect(img, 22, 12, 23, 13, 0);
	rect(img, 22, 22, 23, 23, 0);
	rect(img, 12, 22, 11 + big, 21 + big, 0);
}

/* A small-symbol read (specks_unconfirmed) whose blob keeps a speck for a
 * hole, with a plain leaf of at least HOLE_CLOSED_X times the median
 * plain leaf's area, where the tree with that hole given to a plain leaf
 * is in the set too, is read as FIDUCIAL_UNCONFIRMED (decode.c,
 * closed_hole_read) although its specks are within the fifth; not with a
 * dot-sized leaf, nor where that tree is not in the set, nor outside the
 * small-symbol pass. */
static void test_match_closed_hole(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0122111\nw0121211\n");
	struct tree_set *lone = set_parse("w0122111\nb0121211\n");
	struct image_u8 img;
	struct rig r;
	rig_few_specks = rig_unconfirmed = true;
	draw_closed_hole(&img, 4);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 0);
	assert_int_equal(r.det.fids[0].completed, FIDUCIAL_UNCONFIRMED);
	rig_free(&r);
	/* No tree with the hole moved in the set. */
	rig_run(&r, lone, &img, 100);
	rig_expect(&r, 0);
	assert_int_equal(r.det.fids[0].completed, 0);
	rig_free(&r);
	/* Not the small-symbol pass. */
	rig_unconfirmed = false;
	rig_run(&r, set, &img, 100);
	assert_int_equal(r.det.n_fids, 1);
	assert_int_equal(r.det.fids[0].completed, 0);
	rig_free(&r);
	image_u8_free(&img);
	/* A leaf of 9 px among dots of 4: under HOLE_CLOSED_X times. */
	rig_unconfirmed = true;
	draw_closed_hole(&img, 3);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 0);
	assert_int_equal(r.det.fids[0].completed, 0);
	rig_free(&r);
	rig_few_specks = rig_unconfirmed = false;
	image_u8_free(&img);
	tree_set_free(lone);
	tree_set_free(set);
}

/* match_holds: a symbol's tree holds a read tree with the same colour
 * whose branches go one to one into its own, less at most the given
 * number of nodes; a tree with a node more or a hole moved is not held. */
static void test_match_holds(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0122211\nw012211\nb012211\n");
	assert_true(match_holds(set, 0, "w0122211", 0));
	assert_true(match_holds(set, 0, "w012211", 1));
	assert_false(match_holds(set, 0, "w012211", 0));
	assert_true(match_holds(set, 0, "w01211", 2));
	assert_false(match_holds(set, 0, "w0111", 2));
	assert_true(match_holds(set, 0, "w0111", 3));
	assert_false(match_holds(set, 0, "w012121", 2)); /* a hole in a dot */
	assert_false(match_holds(set, 1, "w0122211", 2)); /* a hole more */
	assert_false(match_holds(set, 1, "w0122111", 2)); /* a dot more */
	assert_false(match_holds(set, 2, "w012211", 2)); /* the other colour */
	assert_true(match_holds(set, 2, "b01221", 1));
	assert_false(match_holds(set, 3, "w012211", 2)); /* no such ID */
	assert_false(match_holds(set, 1, "", 2));
	tree_set_free(set);
}

/* A small card whose black ring broke at its corners leaves four bars in
 * the white margin, which touches the table; the margin as a root would
 * take the bars for dots. draw_small with its second dot replaced by a
 * 1 x 10 px bar has the tree w012211 but is not read; with the dot it is
 * (test_match_small). */
static void test_match_small_bar(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;
	draw_small_dot(&img, 18, 0);
	rect(&img, 25, 16, 25, 25, 0);
	rig_run(&r, set, &img, 100);
	assert_true(r.tree->regions[r.tree->regions[0].colour ? 1 : 0].flags & REGION_SATURATED);
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	/* The bar gone and the 3 x 3 dot back: read. */
	rect(&img, 25, 16, 25, 25, 255);
	rect(&img, 22, 22, 24, 24, 0);
	rig_check(set, &img, 100, 1);
	image_u8_free(&img);
	tree_set_free(set);
}

/* A blob's hole filled and a sliver beside it (a thin wall a threshold
 * broke off): w012211 reads as w012111, the same node count, the sliver
 * passing the size filter (§6, box sides 1 + 7 against the dots' 6 + 6).
 * With even_leaves a leaf under a third of its colour's median area (7
 * against 36 px) leaves the symbol fuzzy; the whole symbol still reads.
 * The damaged one is read in a set without w012211, where the speck rule
 * (test_match_speck_dot) leaves it alone. Nor does even_leaves read an
 * outsized elongated leaf as two merged ones (a small blob whose wall
 * broke open is one). */
static void test_match_even_leaves(void **state)
{
	(void)state;
	struct tree_set *whole = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int damaged = 0; damaged < 2; damaged++)
		for (int even = 0; even < 2; even++) {
			struct tree_set *set = damaged ? alone : whole;
			struct image_u8 img;
			draw_symbol(&img, 0);
			if (damaged) {
				rect(&img, 35, 35, 40, 40, 0);
				rect(&img, 48, 30, 48, 36, 0);
			}
			struct rig r;
			rig_run(&r, set, &img, 100);
			struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
						  .root_max_px = 100, .even_leaves = even};
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			rig_expect(&r, damaged && even ? -1 : 0);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(whole);
	tree_set_free(alone);
	/* Nor are merged leaves read: two dots bridged (test_match_merged). */
	struct tree_set *set = set_parse("w0111111\nw012211\n");
	for (int even = 0; even < 2; even++) {
		struct image_u8 img;
		draw_dots(&img, 1);
		struct rig r;
		rig_run(&r, set, &img, 100);
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100, .even_leaves = even};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		assert_int_equal(r.det.n_fids, !even);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* A blob's hole filled and a piece of wall taken for a dot, large enough
 * for even_leaves (w012211 read as w012111, as the ratio pass's broken
 * walls on the sheet-half preset): with dot_max_elongation a bar-shaped
 * dot (3 x 14 px, variance ratio 24) makes the read a FIDUCIAL_VETO, and
 * with dot_max_area so does a square dot over three times the median
 * dot's area (11 x 11 against 6 x 6); neither check touches the whole
 * symbol, and without them the damaged ones read as the other ID. */
static void test_match_dot_veto(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\nw012111\n");
	for (int damage = 0; damage < 3; damage++)
		for (int check = 0; check < 2; check++) {
			struct image_u8 img;
			draw_symbol(&img, 0);
			if (damage) {
				rect(&img, 35, 35, 40, 40, 0);
				if (damage == 1)
					rect(&img, 48, 32, 50, 45, 0);
				else
					rect(&img, 46, 29, 56, 39, 0);
			}
			struct rig r;
			rig_run(&r, set, &img, 100);
			struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
						  .root_max_px = 100, .even_leaves = true,
						  .dot_max_elongation = check && damage != 2 ? 6.0f : 0.0f,
						  .dot_max_area = check && damage != 1 ? 3.0f : 0.0f};
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			rig_expect(&r, damage ? 1 : 0);
			assert_int_equal(r.det.fids[0].completed, check && damage ? FIDUCIAL_VETO : 0);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(set);
}

/* A bent piece of wall taken for a dot in a read from the hairline round's
 * lists (match_config.dot_min_fill, the ratio pass): the damaged symbol
 * of test_match_dot_veto (w012211 with its second hole filled, read as
 * w012111), its piece of wall an L of 2 px bands (28 px, filling half its
 * moment ellipse, 3.5 times as long as wide in variance: no veto by
 * elongation or area), 3 px from the blob. With the blob's hairline of
 * specks (DRAW_HAIRLINE) the root's list is rebuilt (FLAG_REPAIRED) and
 * with dot_min_fill the read is a FIDUCIAL_VETO; without dot_min_fill it
 * is read from the rebuilt lists (completed 1), and without the hairline
 * (no rebuilt root) it is read whole either way. */
static void test_match_dot_fill_veto(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\nw012111\n");
	for (int hair = 0; hair < 2; hair++)
		for (int check = 0; check < 2; check++) {
			struct image_u8 img;
			draw_symbol(&img, hair ? DRAW_HAIRLINE : 0);
			rect(&img, 35, 35, 40, 40, 0);
			rect(&img, 47, 32, 48, 39, 0);
			rect(&img, 49, 38, 54, 39, 0);
			struct rig r;
			rig_run(&r, set, &img, 100);
			struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
						  .root_max_px = 100, .even_leaves = true,
						  .dot_min_fill = check ? 0.75f : 0.0f};
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			detections_clear(&r.det);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			rig_expect(&r, 1);
			assert_int_equal(r.det.fids[0].completed, !hair ? 0 : check ? FIDUCIAL_VETO : 1);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(set);
}

/* A read one hole moved from another (decode.c, moved_read;
 * match_config.moved_unconfirmed): w012211 with its second hole filled
 * and a 6 x 6 px leaf in the root's area, a dot's size (36 px, the dots'
 * area, so no speck), reads w012111. With moved_unconfirmed and both trees
 * in the set it is read as FIDUCIAL_UNCONFIRMED (the engine keeps it only
 * where a second threshold reads it too); without it, or with w012111
 * alone in the set, whole (completed 0). The symbol drawn whole is no
 * such read: neither of its moves (w012221, w012212) is in the set. */
static void test_match_moved_unconfirmed(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		if (kind < 3) {
			rect(&img, 35, 35, 40, 40, 0);
			rect(&img, 58, 36, 63, 41, 0);
		}
		struct rig r;
		rig_moved = kind != 1;
		rig_run(&r, kind == 2 ? alone : both, &img, 100);
		rig_moved = false;
		rig_expect(&r, kind == 2 ? 0 : kind == 3 ? 0 : 1);
		assert_int_equal(r.det.fids[0].completed, kind == 0 ? FIDUCIAL_UNCONFIRMED : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A read that may be another tree with a one-hole blob closed and a leaf
 * more taken for a dot (decode.c, closed_leaf_read; match_config.
 * closed_leaf, the deblurring pass's upper rung): w012211 drawn whole,
 * with w012212 (a plain leaf taken away and a hole given to the other)
 * in the set too, stays fuzzy with closed_leaf; without it, or with
 * w012211 alone in the set, it is read. */
static void test_match_closed_leaf(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012212\n");
	struct tree_set *alone = set_parse("w012211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		struct rig r;
		rig_closed = kind != 1;
		rig_run(&r, kind == 2 ? alone : both, &img, 100);
		rig_closed = false;
		rig_expect(&r, kind == 0 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A blob's hole lost and a speck taken for a dot (decode.c, speck_read):
 * w012211 with its second hole filled and a 3 x 3 px speck in the root's
 * area reads w012111, the same node count, the speck passing the size
 * filter (§6, box sides 3 + 3 against the dots' 6 + 6). Under half the
 * median dot's area (9 against 36 px) while the set holds w012211, the
 * tree with that leaf taken away and the blob's hole back, the read stays
 * fuzzy, and so does it with a 6 x 3 px speck (18 px, half the median:
 * on sheet-half, seed 524, the scaled pass read a 1 of reacTIVision's set
 * as 48 with a 4 px speck against a median dot of 8). A 5 x 4 px leaf
 * (20 px, over half) is read, and so is the
 * speck in a set without w012211 and in the passes that keep noise
 * (few_specks) or whose reads are doubtful (the ratio pass: such a read
 * still cancels another pass's read of another ID at its place). A read
 * that is a veto as well (dot_max_area: a 4 x 4 px speck beside a dot
 * grown to 132 px) stays a veto (FIDUCIAL_VETO), which still cancels its
 * pass's other reads at its place (merge_vetoes). In the passes that keep
 * noise the read stays fuzzy where the blob shows the hole it lost as a
 * bay (hole_opened): a 4 px wide slot from the filled hole to the blob's
 * edge, 40 px that a 5 x 5 closing fills, at least the other hole's 36;
 * a 4 x 4 px notch (16 px) is no such hole and the read stands. */
static void test_match_speck_dot(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 9; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		rect(&img, 35, 35, 40, 40, 0);
		if (kind == 6 || kind == 7)
			rect(&img, kind == 6 ? 35 : 41, 36, 44, 39, 255);
		if (kind == 1) {
			rect(&img, 60, 37, 64, 40, 0);
		} else if (kind == 8) {
			rect(&img, 60, 38, 65, 40, 0);
		} else if (kind == 4) {
			rect(&img, 60, 38, 63, 41, 0);
			rect(&img, 46, 46, 56, 56, 0);
		} else {
			rect(&img, 60, 38, 62, 40, 0);
		}
		struct rig r;
		rig_few_specks = kind == 3 || kind == 6 || kind == 7;
		rig_run(&r, kind == 2 ? alone : both, &img, 100);
		rig_few_specks = false;
		if (kind == 4) {
			struct match_config mc = {.trees = both, .max_width = 80, .max_height = 80, .root_min_px = 20,
						  .root_max_px = 100, .dot_max_area = 3.0f};
			assert_int_equal(r.det.n_fids, 0);
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			rig_expect(&r, 1);
			assert_int_equal(r.det.fids[0].completed, FIDUCIAL_VETO);
		} else if (kind == 5) {
			struct match_config mc = {.trees = both, .max_width = 80, .max_height = 80, .root_min_px = 20,
						  .root_max_px = 100, .doubtful = true};
			assert_int_equal(r.det.n_fids, 0);
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			rig_expect(&r, 1);
		} else {
			rig_expect(&r, kind == 0 || kind == 6 || kind == 8 ? -1 : (kind == 2 ? 0 : 1));
		}
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A blob's holes of uneven areas (decode.c, holes_uneven): w012211 with its
 * second hole shrunk to 2 x 2 px (4 px against the first's 36, a ninth)
 * or to 1 x 5 px (5 px, 36 / 7.2) stays fuzzy, though the leaf-size filter
 * (§6, box sides 4 and 6 against 12) passes it; shrunk to 3 x 3 px (9 px,
 * a quarter) it is read. */
static void test_match_holes_uneven(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		rect(&img, 35, 35, 40, 40, 0);
		if (kind == 2)
			rect(&img, 37, 36, 37, 40, 255);
		else
			rect(&img, 37, 37, 38 + kind, 38 + kind, 255);
		rig_check(set, &img, 100, kind == 1 ? 0 : -1);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* Two holes of a blob run together (decode.c, merged_hole_read):
 * w012211 whose second hole is a 14 x 6 px slot (84 px, over 1.6 times
 * the other hole's 36; elongation 5.6, two discs side by side or more)
 * has the node count of w012221 (the slot two holes, a dot fewer), and
 * every leaf passes the size filter (§6, box sides 20 against 12). With both trees in the set the read
 * stays fuzzy. A 12 x 3 px slot (36 px, elongation 18, no larger than
 * the other hole), a round 10 x 10 px hole (100 px, elongation 1), or the
 * 14 x 6 px slot where the set holds no w012221 is read. */
static void test_match_merged_hole(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012221\n");
	struct tree_set *alone = set_parse("w012211\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		rect(&img, 35, 35, 40, 40, 0);
		if (kind == 1)
			rect(&img, 28, 36, 39, 38, 255);
		else if (kind == 2)
			rect(&img, 32, 32, 41, 41, 255);
		else
			rect(&img, 28, 35, 41, 40, 255);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A one-hole blob's ring cut twice (decode.c, cut_read): two 36 px dots
 * and a 10 x 10 px blob around a 4 x 4 px hole, whose ring two 1 px cuts
 * (above and below the hole) split into arcs of 36 and 42 px, each a dot's
 * area: the tree w01111 has as many nodes as the whole w01211, and its
 * leaves pass the size filter. The arcs enclose the opened hole once the
 * cuts are bridged, so the read stays fuzzy. Two whole dots a pixel apart
 * where the blob was enclose nothing and read w01111; so does the cut
 * blob where the set holds no w01211. */
static void test_match_ring_arcs(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01211\nw01111\n");
	struct tree_set *alone = set_parse("w01111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 25, 25, 0);
		rect(&img, 52, 20, 57, 25, 0);
		if (kind == 1) {
			rect(&img, 38, 42, 43, 47, 0);
			rect(&img, 45, 42, 50, 47, 0);
		} else {
			rect(&img, 40, 40, 49, 49, 0);
			rect(&img, 43, 43, 46, 46, 255);
			rect(&img, 44, 40, 44, 42, 255);
			rect(&img, 44, 47, 44, 49, 255);
		}
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : kind == 1 ? 1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A one-hole blob's ring cut twice, one cut 3 px wide with a 1 px speck of
 * the wall left in it (decode.c, cut_pocket): the blob of
 * test_match_ring_arcs, its top cut 3 px wide; the arcs (33 and 39 px, a
 * dot's area) enclose the opened hole only with the speck taken for a
 * wall and the pixels between it and each arc bridged, so the read stays
 * fuzzy. The same cut without the speck encloses nothing and reads
 * w01111. (The set's third tree lets the root hold the speck: the
 * segmenter caps a region's neighbours at the set's largest tree.) */
static void test_match_ring_arcs_speck(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01211\nw01111\nw011111111\n");
	for (int kind = 0; kind < 2; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 25, 25, 0);
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 40, 40, 49, 49, 0);
		rect(&img, 43, 43, 46, 46, 255);
		rect(&img, 43, 40, 45, 42, 255);
		rect(&img, 44, 47, 44, 49, 255);
		if (kind == 0)
			rect(&img, 44, 41, 44, 41, 0);
		rig_check(both, &img, 100, kind == 0 ? -1 : 1);
		image_u8_free(&img);
	}
	tree_set_free(both);
}

/* A ring broken into two arcs read by the hairline round (decode.c,
 * cut_pocket, region_merged): the cut blob of test_match_ring_arcs beside
 * a dot holding six 1 px white specks (more neighbours than the set's
 * largest tree: saturated). The round rebuilds the dot's list and the
 * root's without merging anything into either, so their pixels are their
 * own and the arcs' pocket is read: no symbol (where any rebuilt region
 * was taken for pocketless the round read w01111). Drawn whole, the blob
 * reads w01211 through the round. */
static void test_match_ring_arcs_relisted(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01211\nw01111\n");
	for (int kind = 0; kind < 2; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 25, 25, 0);
		rect(&img, 52, 20, 57, 25, 0);
		static const int speck[6][2] = {{53, 21}, {55, 21}, {54, 22}, {53, 23}, {55, 23}, {54, 24}};
		for (int i = 0; i < 6; i++)
			rect(&img, speck[i][0], speck[i][1], speck[i][0], speck[i][1], 255);
		rect(&img, 40, 40, 49, 49, 0);
		rect(&img, 43, 43, 46, 46, 255);
		if (kind == 0) {
			rect(&img, 44, 40, 44, 42, 255);
			rect(&img, 44, 47, 44, 49, 255);
		}
		struct rig r;
		rig_run(&r, both, &img, 100);
		int32_t dot = -1;
		for (int32_t k = 0; k < r.tree->n_regions; k++)
			if (r.tree->regions[k].x0 == 52 && r.tree->regions[k].y0 == 20 && r.tree->regions[k].x1 == 57)
				dot = k;
		assert_true(dot >= 0);
		assert_true(r.tree->regions[dot].flags & REGION_SATURATED);
		if (kind == 0) {
			assert_int_equal(r.det.n_fids, 0);
		} else {
			assert_int_equal(r.det.n_fids, 1);
			assert_int_equal(r.det.fids[0].id, 0);
			assert_int_equal(r.det.fids[0].completed, 1);
		}
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
}

/* A leaf of about twice the dots' area beside a blob whose hole opened into
 * a bay (decode.c, merged_decode, blob_bay): the blob of test_match_bay
 * (one 4 x 4 px hole, a second joined to its edge by a 2 px channel),
 * three 36 px dots and a 66 px leaf 11 x 6 px: w0121111, one node short of
 * w01211111 with the leaf counted twice, and of w01221111 with the hole
 * back. With match_config.bays, or with no option (the first and second
 * scales), the read stays fuzzy; the blob drawn with no bay (a true
 * one-hole blob) reads w01211111, and so does the bay with few_specks
 * alone (the small-symbol pass). */
static void test_match_merged_bay(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w01211111\nw01221111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 44, 44, 0);
		rect(&img, 25, 25, 28, 28, 255);
		if (kind != 1) {
			rect(&img, 36, 36, 39, 39, 255);
			rect(&img, 40, 37, 44, 38, 255);
		}
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 36, 57, 41, 0);
		rect(&img, 52, 52, 57, 57, 0);
		rect(&img, 20, 52, 30, 57, 0);
		struct rig r;
		rig_run(&r, set, &img, 100);
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100, .bays = kind < 2, .few_specks = kind == 2};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 || kind == 3 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* A hole of about twice the holes' area beside a blob whose hole opened
 * into a bay (decode.c, merged_decode, blob_bay): the blob of
 * test_match_merged_bay (one 4 x 4 px hole, a second joined to its edge
 * by a 2 px channel), a blob of two 16 px holes and a 4 x 9 px one, and
 * three 36 px dots: w0122212111, one node short of w01222212111 with the
 * long hole counted twice, and of w01222122111 with the bay's hole back.
 * With match_config.bays the read stays fuzzy, as for a dot counted
 * twice; the first blob drawn with no bay reads w01222212111, and so does
 * the bay in the small-symbol pass's matcher (few_specks without bays). */
static void test_match_merged_hole_bay(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w01222212111\nw01222122111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 44, 44, 0);
		rect(&img, 25, 25, 28, 28, 255);
		if (kind != 1) {
			rect(&img, 36, 36, 39, 39, 255);
			rect(&img, 40, 37, 44, 38, 255);
		}
		rect(&img, 48, 20, 63, 46, 0);
		rect(&img, 51, 23, 54, 26, 255);
		rect(&img, 57, 23, 60, 26, 255);
		rect(&img, 51, 31, 54, 39, 255);
		rect(&img, 20, 52, 25, 57, 0);
		rect(&img, 36, 52, 41, 57, 0);
		rect(&img, 52, 52, 57, 57, 0);
		struct rig r;
		rig_run(&r, set, &img, 100);
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100, .bays = kind != 2, .few_specks = kind == 2};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* A leaf of about twice the dots' area beside a broken blob (decode.c,
 * merged_decode, wall_piece): a 25 x 25 px blob around a 4 x 4 px hole
 * and a second 4 x 4 px hole joined to its edge by a 2 px channel (a bay,
 * filling under BAY_SOLIDITY of its ellipse), a 6 x 12 px bar 1 px from
 * it and three 36 px dots: w0121111, one node short of w01211111 with the
 * bar counted twice, and of w01222111 with the bar taken away and two
 * holes given back to the blob. With both trees in the set the read
 * stays fuzzy; the blob drawn with no bay (a whole one-hole blob), the bar
 * drawn 6 px from the blob, or the set without w01222111 read
 * w01211111. In the small-symbol pass's matcher (few_specks without
 * bays), where blob_bay, which holds this bay too, is off. */
static void test_match_wall_piece(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01211111\nw01222111\n");
	struct tree_set *alone = set_parse("w01211111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 40, 40, 0);
		rect(&img, 21, 21, 24, 24, 255);
		if (kind != 1) {
			rect(&img, 32, 32, 35, 35, 255);
			rect(&img, 36, 33, 40, 34, 255);
		}
		const int bx = kind == 2 ? 47 : 42;
		rect(&img, bx, 28, bx + 5, 39, 0);
		rect(&img, 58, 16, 63, 21, 0);
		rect(&img, 58, 50, 63, 55, 0);
		rect(&img, 20, 52, 25, 57, 0);
		rig_few_specks = true;
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		rig_few_specks = false;
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A blob's hole opened into a bay while a dot-sized leaf was taken for a
 * dot (decode.c, bay_read): a 25 x 25 px blob around a 4 x 4 px hole and
 * a second 4 x 4 px hole joined to the blob's edge by a 2 px channel,
 * three 36 px dots: w012111, the node count of w012211 (the hole back, a
 * dot fewer), and no leaf is a speck. The blob fills under BAY_SOLIDITY of
 * its ellipse and a closing gives it back a pocket larger than its hole,
 * so the read stays fuzzy with both trees in the set and
 * match_config.bays, also with the upsampled pass's other settings
 * (few_specks, even_leaves, thin_walls), which now takes bays too. Drawn
 * without the bay (a true w012111) it is read; so is the bay where the
 * set holds no w012211, or without bays (with the upsampled pass's other
 * settings too). */
static void test_match_bay(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 6; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 44, 44, 0);
		rect(&img, 25, 25, 28, 28, 255);
		if (kind != 1) {
			rect(&img, 36, 36, 39, 39, 255);
			rect(&img, 40, 37, 44, 38, 255);
		}
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 36, 57, 41, 0);
		rect(&img, 52, 52, 57, 57, 0);
		struct rig r;
		const struct tree_set *set = kind == 2 ? alone : both;
		rig_run(&r, set, &img, 100);
		const bool up = kind >= 4;
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100, .bays = kind != 3 && kind != 5, .few_specks = up,
					  .even_leaves = up, .thin_walls = up};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 || kind == 4 ? -1 : kind == 2 ? 0 : 1);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A piece of a blob's wall broken off as a "dot" beside the blob one hole
 * short (decode.c, chip_read): the blob of test_match_bay (a 25 x 25 px
 * blob around a 4 x 4 px hole, a second hole opened to its edge), a
 * 2 x 12 px bar 1 px to its right and two 36 px dots: w012111, the node
 * count of w012211 (the bar back in the blob's wall around a second hole).
 * The bar is 24 px, between half the median dot and the median dot, and
 * far longer than wide; the blob fills under CHIP_BLOB_SOLIDITY of its
 * ellipse. Without bays (no bay_read) the read stays fuzzy with both
 * trees in the set. The bar drawn as a 5 x 5 px dot, or the set holding
 * no w012211, it is read. */
static void test_match_chip(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 44, 44, 0);
		rect(&img, 25, 25, 28, 28, 255);
		if (kind == 1)
			rect(&img, 46, 30, 50, 34, 0);
		else
			rect(&img, 46, 30, 47, 41, 0);
		rect(&img, 56, 20, 61, 25, 0);
		rect(&img, 56, 52, 61, 57, 0);
		struct rig r;
		const struct tree_set *set = kind == 2 ? alone : both;
		rig_run(&r, set, &img, 100);
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 ? -1 : kind == 2 ? 0 : 1);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A thin piece of a blob's wall larger than the dots, beside the blob one
 * hole short (decode.c, chip_read, chip_shape): the blob of
 * test_match_chip, a 2 x 12 px bar 1 px to its right and two 5 x 4 px
 * dots: w012111, the node count of w012211. The bar's 24 px are over the
 * median dot (20) and under 3/2 of it, far longer than wide and no pixel
 * of it two pixels inside: with both trees in the set the read stays
 * fuzzy. Drawn 3 px wide (3 x 8 px, as many pixels, as elongated as a
 * tilted dot may be and 2 px deep), or with the set holding no w012211,
 * it is read. */
static void test_match_chip_thin(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 44, 44, 0);
		rect(&img, 25, 25, 28, 28, 255);
		if (kind == 1)
			rect(&img, 46, 30, 48, 37, 0);
		else
			rect(&img, 46, 30, 47, 41, 0);
		rect(&img, 56, 20, 60, 23, 0);
		rect(&img, 56, 52, 60, 55, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : kind == 2 ? 0 : 1);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* The ring of test_match_ring_pair: 10 x 12 px with a 3 px wall around a
 * 4 x 6 px hole, cut by a 2 px gap on each side, one a row lower than the
 * other, into two U's of 42 px. */
static void broken_ring(struct image_u8 *img)
{
	rect(img, 20, 20, 29, 31, 0);
	rect(img, 23, 23, 26, 28, 255);
	rect(img, 20, 24, 22, 25, 255);
	rect(img, 27, 26, 29, 27, 255);
}

/* A ring broken on both sides of its hole into two arcs taken for dots
 * (decode.c, ring_pair_read): a 10 x 12 px ring with a 3 px wall around a
 * 4 x 6 px hole, cut by a 2 px gap on each side, one a row lower than the
 * other, into two U's of 42 px with legs of 1 and 3 px (their boxes a row
 * apart), and three 7 x 7 px dots: w011111, the node count of w012111 (a
 * one-hole blob for the two arcs). The gaps are too wide for a cut's 1 px
 * bridges (cut_read) and the U's under the dots' area and too full for
 * arc_read; a closing of the two together gives the hole back. With both
 * trees in the set the read stays fuzzy. Two 7 x 6 px rectangles in their
 * place a row apart (as many pixels, filling their ellipse), or the set
 * holding no w012111, it is read. */
static void test_match_ring_pair(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012111\nw011111\n");
	struct tree_set *alone = set_parse("w011111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		if (kind == 1) {
			rect(&img, 21, 19, 27, 24, 0);
			rect(&img, 21, 26, 27, 31, 0);
		} else {
			broken_ring(&img);
		}
		rect(&img, 50, 20, 56, 26, 0);
		rect(&img, 50, 40, 56, 46, 0);
		rect(&img, 20, 50, 26, 56, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : kind == 2 ? 0 : 1);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* The two arcs of test_match_ring_pair beside a two-hole blob whose holes
 * are larger than the ring's (decode.c, RING_PAIR_POCKET_NUM): w012211111,
 * the node count of w012212111 (the arcs one one-hole blob). A one-hole
 * blob's hole may be drawn smaller than the other blobs' holes, so the
 * pair's pocket need reach only three quarters of the median hole: with
 * 7 x 7 px holes (49 px) the read stays fuzzy, as it did not when the
 * pocket had to reach the whole median hole. With 8 x 8 px holes the
 * pocket falls under three quarters of 64 and it is read, as it is where
 * the set holds no w012212111. */
static void test_match_ring_pair_small_hole(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012212111\nw012211111\n");
	struct tree_set *alone = set_parse("w012211111\n");
	for (int kind = 0; kind < 3; kind++) {
		const int h = kind == 1 ? 8 : 7;
		struct image_u8 img;
		card(&img, 80);
		broken_ring(&img);
		rect(&img, 36, 40, 36 + 2 * h + 8, 40 + h + 5, 0);
		rect(&img, 39, 43, 38 + h, 42 + h, 255);
		rect(&img, 42 + h, 43, 41 + 2 * h, 42 + h, 255);
		rect(&img, 44, 16, 50, 22, 0);
		rect(&img, 56, 16, 62, 22, 0);
		rect(&img, 20, 54, 26, 60, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : kind == 2 ? 0 : 1);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A piece of a blob's wall taken for a dot (decode.c, arc_read): a one-hole
 * blob of 15 x 15 px and, below it, a U of a 3 px band (75 px, the dots
 * 36) open towards the blob, its ends 2 and 6 px from it: w012111, the
 * node count of w012211 (the piece back in the blob's wall around a second
 * hole). The U fills half its moment ellipse and is 3 px thin, its box
 * within two pixels of the blob's and its pixels too far for a cut's
 * pocket (cut_read), so with both trees in the set the read stays fuzzy.
 * The U drawn as a 6 x 6 px dot, or the set holding no w012211, it is
 * read. */
static void test_match_arc(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 20, 20, 34, 34, 0);
		rect(&img, 25, 25, 29, 29, 255);
		if (kind == 1) {
			rect(&img, 33, 40, 38, 45, 0);
		} else {
			rect(&img, 30, 44, 42, 46, 0);
			rect(&img, 30, 40, 32, 43, 0);
			rect(&img, 40, 36, 42, 43, 0);
		}
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 52, 57, 57, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : kind == 2 ? 0 : 1);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A ring broken into two arcs (decode.c, arc_read): beside a one-hole
 * blob, a C (36 px: a 3 x 8 px back and two 3 x 2 px arms) bent around a
 * 3 x 4 px gap, a straight 2 x 8 px bar across the gap 3 px from the
 * arms, and two 5 x 5 px dots: w0121111, the node count of w0121211 (the C
 * and the bar one one-hole blob). The C is no thinner than ARC_THIN times
 * its depth squared, but it fills under RING_ARC_SOLIDITY of its ellipse,
 * a closing gives it a pocket of over a quarter of its area and it has
 * the median dot's area or more, so with both trees in the set the read
 * stays fuzzy. Read where the gap is filled but for a column (a pocket of
 * 4 px), where the bar lies 4 px from the arms (over RING_ARC_GAP), or
 * where the set holds no w0121211. */
static void test_match_ring_arc_gap(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w0121111\nw0121211\n");
	struct tree_set *alone = set_parse("w0121111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 30, 30, 0);
		rect(&img, 21, 21, 25, 25, 255);
		rect(&img, 37, 42, 39, 49, 0);
		rect(&img, 40, 42, 42, 43, 0);
		rect(&img, 40, 48, 42, 49, 0);
		if (kind == 1)
			rect(&img, 40, 44, 41, 47, 0);
		const int bar = kind == 2 ? 46 : 45;
		rect(&img, bar, 42, bar + 1, 49, 0);
		rect(&img, 54, 20, 58, 24, 0);
		rect(&img, 54, 54, 58, 58, 0);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together with a bay of a hole or two (decode.c,
 * merged_blob_read, MERGED_BLOB_DOUBT): a blob of five 4 x 4 px holes
 * with a 4 x 6 px notch (24 px: over one median hole, under the
 * MERGED_BLOB_BAY two that leave a read fuzzy) read by the small-symbol
 * pass (few_specks, specks_unconfirmed) is FIDUCIAL_UNCONFIRMED, for the
 * enlarged frame to confirm. Outside that pass, or with the notch filled,
 * it is read as it is. */
static void test_match_merged_blob_doubt(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012222211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 45, 40, 0);
		if (kind != 2)
			rect(&img, 29, 35, 32, 40, 255);
		rect(&img, 19, 20, 22, 23, 255);
		rect(&img, 19, 28, 22, 31, 255);
		rect(&img, 19, 35, 22, 38, 255);
		rect(&img, 38, 20, 41, 23, 255);
		rect(&img, 38, 30, 41, 33, 255);
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 52, 57, 57, 0);
		rig_few_specks = true;
		rig_unconfirmed = kind != 1;
		struct rig r;
		rig_run(&r, set, &img, 100);
		rig_expect(&r, 0);
		assert_int_equal(r.det.fids[0].completed, kind == 0 ? FIDUCIAL_UNCONFIRMED : 0);
		rig_free(&r);
		rig_few_specks = rig_unconfirmed = false;
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* Two blobs run together (decode.c, merged_blob_read): a blob of three
 * 3 x 3 px holes and one of two, 4 px apart and joined across the top of
 * the gap, so the root's area between them is a bay of the joined blob
 * (80 px against holes of 9), which fills 0.80 of its moment ellipse:
 * w012222211, a blob of five holes, stays fuzzy whatever the set holds.
 * The gap filled (a whole five-hole blob) it is read. The joined blob
 * with one hole fewer (four, under MERGED_BLOB_HOLES) stays fuzzy too, by
 * joined_few_read: it fills under JOINED_BAY_SOLIDITY and its bay has
 * JOINED_FEW_BAY median holes or more. */
static void test_match_merged_blob(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012222211\nw01222211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 45, 40, 0);
		if (kind != 1)
			rect(&img, 29, 21, 32, 40, 255);
		rect(&img, 20, 22, 22, 24, 255);
		rect(&img, 20, 28, 22, 30, 255);
		if (kind != 2)
			rect(&img, 20, 34, 22, 36, 255);
		rect(&img, 37, 24, 39, 26, 255);
		rect(&img, 37, 32, 39, 34, 255);
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 52, 57, 57, 0);
		rig_check(set, &img, 100, kind == 1 ? 0 : -1);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* Two blobs run together around a piece of the root's area (decode.c,
 * enclosed_read; match_config.enclosed, the deblurring pass): a blob of
 * two 3 x 3 px holes and one of one, 3 px apart, joined across the top 12
 * rows of the gap, which encloses a 2 x 2 px piece of the root's area as
 * a hole and leaves the gap's lower 13 rows a notch of the joined outline
 * (filling under BAY_SOLIDITY of its ellipse): w01222211, a blob of four
 * holes (no merged_blob_read), the node count of w01221211 (the two blobs
 * apart, the piece gone). With both trees in the set and enclosed the
 * read stays fuzzy; the set without w01221211, the piece drawn as large
 * as the holes (3 x 3 px), the notch filled (a whole blob), or without
 * enclosed it reads w01222211. */
static void test_match_enclosed(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01222211\nw01221211\n");
	struct tree_set *alone = set_parse("w01222211\n");
	for (int kind = 0; kind < 5; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 27, 40, 0);
		rect(&img, 31, 16, 42, 40, 0);
		rect(&img, 28, 16, 30, kind == 3 ? 40 : 27, 0);
		rect(&img, 28, 20, kind == 2 ? 30 : 29, kind == 2 ? 22 : 21, 255);
		rect(&img, 20, 20, 22, 22, 255);
		rect(&img, 20, 32, 22, 34, 255);
		rect(&img, 35, 26, 37, 28, 255);
		rect(&img, 52, 20, 57, 25, 0);
		rect(&img, 52, 52, 57, 57, 0);
		const struct tree_set *set = kind == 1 ? alone : both;
		struct rig r;
		rig_run(&r, set, &img, 100);
		struct match_config mc = {.trees = set, .max_width = 80, .max_height = 80, .root_min_px = 20,
					  .root_max_px = 100, .enclosed = kind != 4};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together around a piece of the root's area in a shadow
 * (decode.c, enclosed_read outside match_config.enclosed): an L of a
 * 12 x 25 px blob with two 2 x 2 px holes and a 12 x 12 px one with one,
 * 4 px apart and joined across the top 8 rows of the gap, which encloses
 * a 2 x 2 px piece of the root's area and leaves a 4 x 4 px notch below
 * the bridge, beside a 26 x 26 px blob of five 4 x 4 px holes and two
 * dots: w01222221222211, the node count of w01222221221211 (the L two
 * blobs, the piece gone). The L's holes are all at most half the median
 * hole (16 px) and it fills under JOINED_BAY_SOLIDITY of its moment
 * ellipse, so with both trees in the set the read stays fuzzy in every
 * pass (kind 0), and in the deblurring pass's matcher (enclosed, kind
 * 3). The L's holes drawn as large as the other blob's (only the piece
 * small) it is read but in the deblurring pass (kinds 1 and 4); the set
 * holding no w01222221221211, it is read (kind 2). */
static void test_match_enclosed_shadow(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01222221222211\nw01222221221211\n");
	struct tree_set *alone = set_parse("w01222221222211\n");
	for (int kind = 0; kind < 5; kind++) {
		const int h = kind == 1 || kind == 4 ? 3 : 1;
		struct image_u8 img;
		card(&img, 100);
		rect(&img, 16, 16, 27, 40, 0);
		rect(&img, 32, 16, 43, 27, 0);
		rect(&img, 28, 16, 31, 23, 0);
		rect(&img, 29, 19, 30, 20, 255);
		rect(&img, 19, 19, 19 + h, 19 + h, 255);
		rect(&img, 19, 32, 19 + h, 32 + h, 255);
		rect(&img, 36, 20, 36 + h, 20 + h, 255);
		rect(&img, 50, 16, 75, 41, 0);
		rect(&img, 54, 20, 57, 23, 255);
		rect(&img, 66, 20, 69, 23, 255);
		rect(&img, 60, 27, 63, 30, 255);
		rect(&img, 54, 34, 57, 37, 255);
		rect(&img, 66, 34, 69, 37, 255);
		rect(&img, 20, 60, 25, 65, 0);
		rect(&img, 60, 60, 65, 65, 0);
		const struct tree_set *set = kind == 2 ? alone : both;
		struct rig r;
		rig_run(&r, set, &img, 120);
		struct match_config mc = {.trees = set, .max_width = 100, .max_height = 100, .root_min_px = 20,
					  .root_max_px = 120, .enclosed = kind >= 3};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		detections_clear(&r.det);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 || kind >= 3 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together while a leaf was taken for a dot (decode.c,
 * joined_read, every scale and pass): an L of
 * two 12 px arms with two 4 x 4 px holes in each, and two 6 x 6 px dots:
 * w01222211, the node count of w01221221 (the L two blobs of two holes, a
 * dot fewer). No hole opened into a bay, four holes only (no
 * merged_blob_read); the L fills under JOINED_SOLIDITY of its moment
 * ellipse, so with both trees in the set the read stays fuzzy, also with
 * a matcher of no option (the first and second scales'). The L's corner
 * filled out to a square (a whole blob), or the set holding no w01221221,
 * it is read. */
static void test_match_joined(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01222211\nw01221221\n");
	struct tree_set *alone = set_parse("w01222211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 47, 27, 0);
		rect(&img, 16, 16, 27, 47, 0);
		if (kind == 1)
			rect(&img, 16, 16, 47, 47, 0);
		rect(&img, 32, 20, 35, 23, 255);
		rect(&img, 40, 20, 43, 23, 255);
		rect(&img, 20, 32, 23, 35, 255);
		rect(&img, 20, 40, 23, 43, 255);
		rect(&img, 54, 20, 59, 25, 0);
		rect(&img, 54, 54, 59, 59, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together beside a piece of a shadow's band taken for a dot
 * (decode.c, joined_read, JOINED_BAND_SOLIDITY): two 12 x 12 px squares,
 * each around a 4 x 4 px hole, joined by a 5 x 4 px neck (filling 0.82 of
 * its moment ellipse: over JOINED_SOLIDITY, under JOINED_BAND_SOLIDITY),
 * a 6 x 6 px dot and a 3 x 12 px bar of a dot's area: w0122111, the node
 * count of w0121211 (two one-hole blobs, a dot fewer). The bar is a band's
 * piece, no dot, so with both trees in the set the read stays fuzzy. The
 * bar drawn as a 6 x 6 px dot, the squares drawn as one 29 x 12 px blob (a whole blob), or the set holding no w0121211, it is
 * read. */
static void test_match_joined_band(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w0122111\nw0121211\n");
	struct tree_set *alone = set_parse("w0122111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 18, 27, 29, 0);
		rect(&img, 33, 18, 44, 29, 0);
		rect(&img, 28, kind == 2 ? 18 : 22, 32, kind == 2 ? 29 : 25, 0);
		rect(&img, 20, 22, 23, 25, 255);
		rect(&img, 37, 22, 40, 25, 255);
		rect(&img, 18, 50, 23, 55, 0);
		rect(&img, 32, 50, 37, 55, 0);
		if (kind == 1)
			rect(&img, 48, 50, 53, 55, 0);
		else
			rect(&img, 46, 51, 57, 53, 0);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together around a bay (decode.c, joined_read,
 * JOINED_BAY_SOLIDITY): two 16 x 12 px blobs of two 4 x 4 px holes, 4 px
 * apart, joined by a 6 px bridge at one end, leave a 10 x 4 px bay; the
 * joined blob fills 0.83 of its ellipse (over JOINED_SOLIDITY) and a
 * closing fills the bay (over half the 16 px median hole), so with both
 * trees in the set the read (w01222211, the node count of w01221221)
 * stays fuzzy. The bridge across the whole width (no bay, one blob), or
 * the set holding no w01221221, it is read. */
static void test_match_joined_bay(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01222211\nw01221221\n");
	struct tree_set *alone = set_parse("w01222211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 31, 27, 0);
		rect(&img, 16, 32, 31, 43, 0);
		rect(&img, 16, 28, kind == 1 ? 31 : 21, 31, 0);
		rect(&img, 19, 20, 22, 23, 255);
		rect(&img, 25, 20, 28, 23, 255);
		rect(&img, 19, 36, 22, 39, 255);
		rect(&img, 25, 36, 28, 39, 255);
		rect(&img, 54, 20, 59, 25, 0);
		rect(&img, 54, 54, 59, 59, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A two-hole blob whose holes closed (decode.c, closed_blob_read): a
 * dumbbell of two 6 x 6 px squares and a 4 x 2 px neck (80 px, filling
 * 0.78 of its moment ellipse, under CLOSED_BLOB_SOLIDITY) and three 4 x 4 px
 * dots: w01111, the node count of w01221 (the dumbbell a two-hole blob,
 * two dots fewer). With both trees in the set the read stays fuzzy; the
 * dumbbell drawn as a 9 x 9 px square (a disc's fill), or the set holding
 * no w012211, it is read. */
static void test_match_closed_blob(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01111\nw01221\n");
	struct tree_set *alone = set_parse("w01111\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		card(&img, 80);
		if (kind == 1) {
			rect(&img, 20, 20, 28, 28, 0);
		} else {
			rect(&img, 20, 20, 25, 25, 0);
			rect(&img, 26, 22, 29, 23, 0);
			rect(&img, 30, 20, 35, 25, 0);
		}
		rect(&img, 45, 20, 48, 23, 0);
		rect(&img, 20, 45, 23, 48, 0);
		rect(&img, 45, 45, 48, 48, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A dot bridged to a blob (decode.c, bridged_read; match_config.thin_walls,
 * the upsampled pass): w012211 with a third hole of 3 x 3 px (9 px, under
 * half the others' 36) a single pixel from the blob's edge reads
 * w0122211, the same node count as w0122111 (that hole a dot instead);
 * with thin_walls and both trees in the set it stays fuzzy. Two pixels
 * from the edge, without thin_walls, or with w0122211 alone in the set
 * it is read. */
static void test_match_bridged(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w0122211\nw0122111\n");
	struct tree_set *alone = set_parse("w0122211\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		const int x0 = kind == 1 ? 40 : 41;
		rect(&img, x0, 22, x0 + 2, 24, 255);
		struct rig r;
		rig_run(&r, kind == 3 ? alone : both, &img, 100);
		struct match_config mc = {.trees = kind == 3 ? alone : both, .max_width = 80, .max_height = 80,
					  .root_min_px = 20, .root_max_px = 100, .thin_walls = kind != 2};
		assert_int_equal(match_set_config(r.mat, &mc), 0);
		assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
		rig_expect(&r, kind == 0 ? -1 : 0);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A dot bridged to a blob in the small-symbol pass (decode.c,
 * bridged_read; few_specks and specks_unconfirmed, thin_walls off): the
 * drawing of test_match_bridged is read, as FIDUCIAL_UNCONFIRMED with
 * both trees in the set, for the enlarged frame to confirm. Read as it is
 * where the third hole lies two pixels from the blob's edge, where the set
 * holds w0122211 alone, or outside that pass (few_specks alone). */
static void test_match_bridged_small(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w0122211\nw0122111\n");
	struct tree_set *alone = set_parse("w0122211\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		const int x0 = kind == 1 ? 40 : 41;
		rect(&img, x0, 22, x0 + 2, 24, 255);
		rig_few_specks = true;
		rig_unconfirmed = kind != 2;
		struct rig r;
		rig_run(&r, kind == 3 ? alone : both, &img, 100);
		rig_expect(&r, 0);
		assert_int_equal(r.det.fids[0].completed, kind == 0 ? FIDUCIAL_UNCONFIRMED : 0);
		rig_free(&r);
		rig_few_specks = rig_unconfirmed = false;
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A one-hole blob whose hole shrank to a speck (decode.c,
 * specked_leaf_read): beside a one-hole blob, a 9 x 9 px leaf holding a
 * 1 px white speck (specks are left out of the tree: a plain leaf of 80
 * px) and two 5 x 5 px dots: w012111, the node count of w012121 (the leaf
 * a one-hole blob, a dot fewer). The leaf has over HOLE_CLOSED_X times
 * the median dot, so with both trees in the set the read stays fuzzy.
 * Read without the speck, with the leaf 7 x 7 px (under three times the
 * dots), or where the set holds no w012121. */
static void test_match_specked_leaf(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012111\nw012121\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		rect(&img, 16, 16, 30, 30, 0);
		rect(&img, 21, 21, 25, 25, 255);
		const int side = kind == 2 ? 7 : 9;
		rect(&img, 40, 40, 39 + side, 39 + side, 0);
		if (kind != 1)
			rect(&img, 43, 43, 43, 43, 255);
		rect(&img, 54, 20, 58, 24, 0);
		rect(&img, 54, 54, 58, 58, 0);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A one-hole blob whose hole closed whole (decode.c, closed_ring_read):
 * beside a 9 x 9 px one-hole blob (a 3 x 3 hole: a 72 px ring), an
 * 11 x 11 px leaf with no speck (121 px, the blob filled) and two 6 x 6
 * px dots: w012111, the node count of w012121 (the leaf a one-hole blob,
 * a dot fewer). The leaf has over HOLE_CLOSED_X times the median dot and
 * more than the ring, so with both trees in the set the read stays fuzzy.
 * Read where the ring is larger than the leaf (13 x 13 px around a 5 x 5
 * hole: 144 px), with the leaf 8 x 8 px (under three times the dots), or
 * where the set holds no w012121. */
static void test_match_closed_ring(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w012111\nw012121\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		card(&img, 80);
		if (kind == 1) {
			rect(&img, 16, 16, 28, 28, 0);
			rect(&img, 20, 20, 24, 24, 255);
		} else {
			rect(&img, 18, 18, 26, 26, 0);
			rect(&img, 21, 21, 23, 23, 255);
		}
		const int side = kind == 2 ? 8 : 11;
		rect(&img, 40, 40, 39 + side, 39 + side, 0);
		rect(&img, 54, 20, 59, 25, 0);
		rect(&img, 20, 54, 25, 59, 0);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A blob cut in two (decode.c, cut_read): w012211 with 1 px cuts of the
 * root's white through the blob's wall on two sides of its second hole
 * (left, to the blob's edge, and below): the lower left piece is a plain
 * leaf (113 px against the dots' 36), the hole joined the root's area,
 * and the tree w012111 has as many nodes as the whole one; its leaves pass
 * the size filter (box sides 17 + 7 against the dots' 6 + 6). The pair
 * encloses the opened hole once the cuts are bridged, so the read stays
 * fuzzy. A true w012111 whose third dot lies a pixel from the one-hole
 * blob (side by side, or corner to corner) encloses nothing and is read;
 * so is the cut one where the set holds no tree it is a cut of. */
static void test_match_cut_blob(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		if (kind == 0 || kind == 3) {
			rect(&img, 20, 37, 34, 37, 255);
			rect(&img, 37, 41, 37, 44, 255);
		} else {
			rect(&img, 35, 35, 40, 40, 0);
			if (kind == 1)
				rect(&img, 46, 30, 50, 35, 0);
			else
				rect(&img, 46, 46, 50, 50, 0);
		}
		struct rig r;
		rig_run(&r, kind == 3 ? alone : set, &img, 100);
		if (kind == 0) {
			rig_expect(&r, -1);
		} else {
			rig_expect(&r, kind == 3 ? 0 : 1);
			assert_int_equal(r.det.fids[0].completed, 0);
		}
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
	tree_set_free(alone);
}

/* A blob cut in two where the piece is a dot's size (decode.c, cut_read):
 * draw_symbol's blob cut from its lower edge into its second hole on
 * both sides of a 6 x 7 px corner, which keeps 36 px, the dots' area, and
 * reads w012111 like test_match_cut_blob's cut. The first scale's matcher
 * reads it (a dot in a blob's bay encloses a pocket too); in the passes
 * for small symbols (few_specks), where a cut's piece is a dot's size, it
 * stays fuzzy. */
static void test_match_cut_dot_piece(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\nw012111\n");
	for (int few = 0; few < 2; few++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		rect(&img, 30, 37, 34, 37, 255);
		rect(&img, 30, 38, 30, 44, 255);
		rect(&img, 37, 41, 37, 44, 255);
		struct rig r;
		rig_few_specks = few;
		rig_run(&r, set, &img, 100);
		rig_few_specks = false;
		rig_expect(&r, few ? -1 : 1);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* A blob cut in two where the piece has a dot's area but no dot's shape
 * (decode.c, cut_read, CUT_DOT_FILL): draw_symbol's blob cut from its
 * lower edge into its second hole left of it and right of it, the piece
 * an L of 44 px around the hole's lower left corner (the dots' 36 px;
 * filling 0.65 of its moment ellipse, a dot about 1). The read w012111
 * stays fuzzy in the first scale's matcher too, where a dot-sized piece
 * filling its ellipse (test_match_cut_dot_piece) is read; it is read where
 * the set holds no tree it is a cut of. */
static void test_match_cut_bent_piece(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w012211\nw012111\n");
	struct tree_set *alone = set_parse("w012111\n");
	for (int kind = 0; kind < 2; kind++) {
		struct image_u8 img;
		draw_symbol(&img, 0);
		rect(&img, 32, 34, 35, 34, 255);
		rect(&img, 32, 35, 32, 44, 255);
		rect(&img, 41, 40, 41, 44, 255);
		rig_check(kind ? alone : set, &img, 100, kind ? 0 : -1);
		image_u8_free(&img);
	}
	tree_set_free(set);
	tree_set_free(alone);
}

/* A hole split corner to corner (decode.c, split_read): draw_small's blob
 * with a third 1 px hole diagonal to its first (one 2 x 2 px hole
 * thresholded as a checkerboard is two 4-connected holes) and a 1 px speck
 * in the root's own area (a dot shrunk: candidates.c takes it for no dot)
 * reads w0122211, which is w0122111 with a dot lost and a hole split: it
 * stays fuzzy while the set holds both. It is read without the speck,
 * with the third hole apart from the others, or where the set holds no
 * w0122111. */
static void test_match_split_hole(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w0122211\nw0122111\n");
	struct tree_set *alone = set_parse("w0122211\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_small(&img, 18);
		if (kind == 2)
			rect(&img, 19, 16, 19, 16, 255);
		else
			rect(&img, 15, 15, 15, 15, 255);
		if (kind != 1)
			rect(&img, 25, 18, 25, 18, 0);
		rig_check(kind == 3 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* Two blobs run together into one of three holes (decode.c,
 * joined_few_read): a 10 x 10 px blob with two 2 x 2 px holes and one
 * with one, 4 px apart, joined by a 3 px bridge at their left: a blob of
 * three holes filling about 0.77 of its moment ellipse, whose 4 px gap a
 * closing fills (a pocket of about 28 px against a median hole of 4), and
 * two dots: w0122211 stays fuzzy, whatever the set. Read where the gap is
 * filled (one whole blob), or where the holes are 3 x 3 px (the pocket
 * under JOINED_FEW_BAY median holes). */
static void test_match_joined_few(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0122211\n");
	for (int kind = 0; kind < 3; kind++) {
		struct image_u8 img;
		const int h = kind == 2 ? 2 : 1;
		card(&img, 80);
		rect(&img, 16, 16, 25, 25, 0);
		rect(&img, 16, 30, 25, 39, 0);
		rect(&img, 16, 26, kind == 1 ? 25 : 18, 29, 0);
		rect(&img, 18, 18, 18 + h, 18 + h, 255);
		rect(&img, 22, 21, 22 + h, 21 + h, 255);
		rect(&img, 20, 34, 20 + h, 34 + h, 255);
		rect(&img, 50, 20, 54, 24, 0);
		rect(&img, 50, 50, 54, 54, 0);
		rig_check(set, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* A hole split in three (decode.c, shattered_read): a 24 px white root
 * on the black field holding a blob with two 2 x 2 px holes and three 1
 * px ones, two of them corner to corner (one 2 x 2 px hole thresholded as
 * pieces), a blob with two 2 x 2 px holes and a dot, no speck in the root:
 * w01222221221, which is w01222122111 with two dots lost and a hole split
 * in three: it stays fuzzy while the set holds both (the pieces are at
 * most half the median hole, 4 px). It is read with the pieces apart (no
 * two corner to corner), where the set holds no w01222122111, or where the
 * other holes are 1 x 2 px and one piece 2 px (the median 2: two pieces
 * of at most half of it). */
static void test_match_shattered_hole(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01222221221\nw01222122111\n");
	struct tree_set *alone = set_parse("w01222221221\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		const int hw = kind == 3 ? 0 : 1;
		assert_int_equal(image_u8_alloc(&img, 96, 96), 0);
		rect(&img, 0, 0, 95, 95, 0);
		for (int i = 0; i < 12; i++) {
			rect(&img, 3 + 7 * i, 3, 4 + 7 * i, 4, 255);
			rect(&img, 3 + 7 * i, 90, 4 + 7 * i, 91, 255);
		}
		rect(&img, 10, 10, 33, 33, 255);
		rect(&img, 12, 12, 25, 19, 0);
		rect(&img, 14, 14, 14 + hw, 15, 255);
		rect(&img, 18, 14, 18 + hw, 15, 255);
		rect(&img, 22, 14, 22, 14, 255);
		rect(&img, kind == 1 ? 24 : 23, 15, kind == 1 ? 24 : 23, 15, 255);
		rect(&img, 22, 17, 22, kind == 3 ? 18 : 17, 255);
		rect(&img, 12, 22, 21, 29, 0);
		rect(&img, 14, 24, 14 + hw, 25, 255);
		rect(&img, 18, 24, 18 + hw, 25, 255);
		rect(&img, 26, 24, 29, 27, 0);
		rig_check(kind == 2 ? alone : both, &img, 100, kind == 0 ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(alone);
}

/* A one-hole blob whose wall a cut opened (decode.c, opened_ring): three
 * 36 px dots, a one-hole blob and a 16 x 6 px blob around an 8 x 2 px hole
 * whose right wall is gone, 72 px, elongated like two dots side by side;
 * merged_decode would read it as two dots bridged (w01211111) while the
 * blob with its hole is w01212111. A closing gives it back a 24 px
 * pocket (the hole and the gap, a third of its area), so the read stays
 * fuzzy with both trees in the set; the set without w01212111 still reads it as two
 * dots, and so does the set with it where the two dots are bridged whole
 * (draw_dots: a convex leaf), or where the blob's hole is closed (read
 * whole). */
static void test_match_opened_ring(void **state)
{
	(void)state;
	struct tree_set *both = set_parse("w01211111\nw01212111\n");
	struct tree_set *dots = set_parse("w01211111\n");
	for (int kind = 0; kind < 4; kind++) {
		struct image_u8 img;
		draw_dots(&img, 1);
		rect(&img, 42, 42, 43, 43, 255);
		if (kind != 2)
			rect(&img, 24, 42, kind == 3 ? 31 : 35, 43, 255);
		struct rig r;
		rig_run(&r, kind == 1 ? dots : both, &img, 100);
		if (kind == 0) {
			rig_expect(&r, -1);
			assert_int_equal(r.det.fuzzy[0].n_nodes, 7);
		} else {
			rig_expect(&r, kind == 3);
			assert_int_equal(r.det.fids[0].n_nodes, 8);
		}
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(both);
	tree_set_free(dots);
}

/* A root one level out (decode.c, ring_read): a white card margin around
 * a black region that fills 70 of its 80 px, joined by a white bridge to a
 * white blob inside that region (a streak smeared across the black
 * root's edge), so the margin's children are the black region with its
 * four white holes and the blob's two black holes, the tree w01222211 read
 * whole: it stays fuzzy. The same tree drawn as a symbol (a white root in
 * its black ring, the four-hole blob beside the two dots) reads. */
static void test_match_margin_root(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w01222211\n");
	for (int margin = 0; margin < 2; margin++) {
		struct image_u8 img;
		paper(&img, 100, 100, 255);
		rect(&img, 5, 5, 94, 94, 0);
		if (margin) {
			rect(&img, 10, 10, 89, 89, 255);
			rect(&img, 15, 15, 84, 84, 0);
			rect(&img, 30, 25, 69, 50, 255);
			rect(&img, 45, 15, 54, 24, 255);
			rect(&img, 36, 32, 41, 37, 0);
			rect(&img, 58, 32, 63, 37, 0);
			for (int i = 0; i < 4; i++)
				rect(&img, 22 + 17 * i, 62, 27 + 17 * i, 67, 255);
		} else {
			rect(&img, 12, 12, 87, 87, 255);
			rect(&img, 20, 20, 59, 45, 0);
			for (int i = 0; i < 4; i++)
				rect(&img, 24 + 9 * i, 30, 29 + 9 * i, 35, 255);
			rect(&img, 30, 65, 35, 70, 0);
			rect(&img, 60, 65, 65, 70, 0);
		}
		rig_check(set, &img, 100, margin ? -1 : 0);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

/* The blob (two holes) and two dots of w012211 inside a white root whose
 * box starts at (x, y), 56 px a side. */
static void draw_inside(struct image_u8 *img, int x, int y)
{
	rect(img, x + 8, y + 8, x + 32, y + 32, 0);
	rect(img, x + 12, y + 12, x + 17, y + 17, 255);
	rect(img, x + 23, y + 23, x + 28, y + 28, 255);
	rect(img, x + 40, y + 8, x + 45, y + 13, 0);
	rect(img, x + 40, y + 40, x + 45, y + 45, 0);
}

/* A big root whose ring merged with a saturated region (as a shadow edge's
 * dark band joins a ring to the table): its list is complete, and it is
 * decoded when its sub-tree fills its moment ellipse; a root with a notch
 * (an L: something cut into it) is not, nor is either with
 * no_merged_rings. */
static void test_match_merged_ring(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	for (int notch = 0; notch < 2; notch++)
		for (int off = 0; off < 2; off++) {
			struct image_u8 img;
			paper(&img, 96, 96, 0);
			for (int i = 0; i < 12; i++) {
				rect(&img, 3 + 7 * i, 3, 4 + 7 * i, 4, 255);
				rect(&img, 3 + 7 * i, 90, 4 + 7 * i, 91, 255);
			}
			rect(&img, 14, 14, 69, 69, 255);
			if (notch)
				rect(&img, 14, 56, 40, 69, 0);
			draw_inside(&img, 14, 14);
			struct rig r;
			struct match_config mc = {.trees = set, .max_width = 96, .max_height = 96,
						  .root_min_px = 20, .root_max_px = 100, .no_merged_rings = off};
			rig_run(&r, set, &img, 100);
			assert_int_equal(match_set_config(r.mat, &mc), 0);
			assert_int_equal(match_process(r.mat, r.tree, &img, &r.det), 0);
			assert_true(r.tree->regions[0].flags & REGION_SATURATED);
			int want = !notch && !off;
			assert_int_equal(r.det.n_fids, want);
			if (want)
				assert_int_equal(r.det.fids[0].id, 1);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(set);
}

/* A small card whose thin ring broke in places joins its white margin to
 * the white halo that Bernsen paints around it: a big flat root touching
 * the table that holds the card's black region whole and the ring's
 * pieces as dots (a 26 px 155 of reacTIVision's default set read as a
 * 54 px 99). The halo's noise specks saturate it, and the repair round
 * rebuilds it. test_match_merged_ring's root with eight 1 px specks (more
 * neighbours than the set's 7 nodes) and its second dot replaced by a
 * 2 x 12 px arc of ring (the tree still w012211) is not read; with the
 * dot it is, from the repair round. */
static void test_match_merged_ring_bar(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	paper(&img, 128, 128, 0);
	for (int i = 0; i < 16; i++) {
		rect(&img, 3 + 7 * i, 3, 4 + 7 * i, 4, 255);
		rect(&img, 3 + 7 * i, 122, 4 + 7 * i, 123, 255);
	}
	rect(&img, 14, 14, 69, 69, 255);
	draw_inside(&img, 14, 14);
	for (int i = 0; i < 8; i++)
		rect(&img, 17 + 4 * i, 66, 17 + 4 * i, 66, 0);
	rect(&img, 54, 54, 59, 59, 255);
	rect(&img, 52, 58, 63, 59, 0);
	struct rig r;
	rig_run(&r, set, &img, 100);
	int32_t root = -1;
	for (int32_t k = 0; k < r.tree->n_regions; k++)
		if (r.tree->regions[k].x0 == 14 && r.tree->regions[k].y0 == 14)
			root = k;
	assert_true(root >= 0 && (r.tree->regions[root].flags & REGION_SATURATED));
	assert_int_equal(r.det.n_fids, 0);
	rig_free(&r);
	/* The arc gone and the dot back: read. */
	rect(&img, 52, 58, 63, 59, 255);
	rect(&img, 54, 54, 59, 59, 0);
	rig_run(&r, set, &img, 100);
	rig_expect(&r, 1);
	assert_true(r.det.fids[0].completed);
	rig_free(&r);
	image_u8_free(&img);
	tree_set_free(set);
}

/* A root that reaches the frame's edge: decoded when only a short stretch
 * of it lies there (a corner that left the frame cannot hide a leaf); when
 * a long one does, only where the branches seen single out one tree of the
 * set (here also w0122111, which has one dot more, could lie beyond the
 * edge: nothing). */
static void test_match_border_root(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct tree_set *more = set_parse("w0111111\nw012211\nb012211\nw0122111\n");
	for (int wide = 0; wide < 2; wide++)
		for (int amb = 0; amb < 2; amb++) {
			struct image_u8 img;
			paper(&img, 80, 80, 255);
			rect(&img, 5, 0, 74, 74, 0);
			rect(&img, 12, 12, 67, 67, 255);
			if (wide)
				rect(&img, 30, 0, 49, 11, 255);
			else
				rect(&img, 38, 0, 40, 11, 255);
			draw_inside(&img, 12, 12);
			struct rig r;
			rig_run(&r, amb ? more : set, &img, 100);
			const int want = !wide || !amb;
			assert_int_equal(r.det.n_fids, want);
			if (want)
				assert_int_equal(r.det.fids[0].id, 1);
			assert_int_equal(r.det.n_fuzzy, 0);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(set);
	tree_set_free(more);
}

/* A symbol the frame's edge cuts through a leaf: a one-hole blob whose
 * hole the edge opened, under a root that reaches the edge. Its tree
 * w01221211 is read when its other branches (a two-hole blob and two dots)
 * single out that tree in the set, and not where w012212111 holds them
 * too, nor where the cut blob lost its hole (a dot on the edge, w01221111
 * as seen: the same branches seen, so the same answer). */
static void test_match_cut_leaf(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w01221211\nw0111111\nb012211\n");
	struct tree_set *more = set_parse("w01221211\nw0111111\nb012211\nw012212111\n");
	for (int amb = 0; amb < 2; amb++)
		for (int hole = 0; hole < 2; hole++) {
			struct image_u8 img;
			paper(&img, 80, 80, 255);
			rect(&img, 5, 0, 74, 74, 0);
			rect(&img, 12, 0, 67, 67, 255);
			draw_inside(&img, 12, 12);
			rect(&img, 30, 0, 42, 6, 0);
			if (hole)
				rect(&img, 34, 0, 38, 2, 255);
			struct rig r;
			rig_run(&r, amb ? more : set, &img, 100);
			const int want = !amb && hole;
			assert_int_equal(r.det.n_fids, want);
			if (want) {
				assert_int_equal(r.det.fids[0].id, 0);
				assert_int_equal(r.det.fids[0].n_nodes, 8);
			}
			assert_int_equal(r.det.n_fuzzy, 0);
			rig_free(&r);
			image_u8_free(&img);
		}
	tree_set_free(set);
	tree_set_free(more);
}

static int roots_with_size(const struct rig *r, float size, float cx, float cy)
{
	int n = 0;
	for (int i = 0; i < r->det.n_roots; i++)
		n += fabsf(r->det.roots[i].size_px - size) < 0.5f && fabsf(r->det.roots[i].x - cx) < 0.6f &&
		     fabsf(r->det.roots[i].y - cy) < 0.6f;
	return n;
}

/* A symbol whose root is a thin white ring around one black region (the
 * blobs inside it) must offer that ring for root tracking when its tree is
 * gone, also with the ring broken open on one side; a thin white L of the
 * same box is no root. When the black card edge breaks and the ring merges
 * with the table, the black region inside it is offered instead. */
static void test_match_ring_roots(void **state)
{
	(void)state;
	struct tree_set *set = set_parse("w0111111\nw012211\nb012211\n");
	struct image_u8 img;
	struct rig r;
	for (int shape = 0; shape < 4; shape++) {
		paper(&img, 100, 100, 255);
		rect(&img, 10, 10, 89, 89, 0);
		if (shape < 2) {
			rect(&img, 16, 16, 83, 83, 255);
			rect(&img, 19, 19, 80, 80, 0);
			/* streaked leaves: not a tree of the set */
			rect(&img, 30, 30, 45, 34, 255);
			rect(&img, 50, 60, 70, 63, 255);
			if (shape == 1)
				rect(&img, 80, 40, 83, 55, 0);
		} else if (shape == 2) {
			rect(&img, 16, 16, 19, 83, 255);
			rect(&img, 16, 80, 83, 83, 255);
		} else {
			rect(&img, 10, 10, 89, 89, 255);
			rect(&img, 19, 19, 80, 80, 0);
			rect(&img, 30, 30, 45, 34, 255);
		}
		rig_run(&r, set, &img, 100);
		assert_int_equal(r.det.n_fids, 0);
		assert_int_equal(roots_with_size(&r, 68, 49.5f, 49.5f), shape < 2 ? 1 : 0);
		assert_int_equal(roots_with_size(&r, 62, 49.5f, 49.5f), shape == 0 || shape == 3);
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

static void test_match_errors(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR - 1);
	int err = 0;
	struct match_config mc = {.trees = NULL, .max_width = 64, .max_height = 64};
	assert_null(match_create(&mc, &err));
	assert_int_equal(err, ERR_CONFIG);
	struct tree_set *set = set_parse("w01\n");
	mc.trees = set;
	mc.max_width = 0;
	assert_null(match_create(&mc, &err));
	mc.max_width = 64;
	struct match *m = match_create(&mc, &err);
	assert_non_null(m);
	mc.max_width = 4096;
	assert_int_equal(match_set_config(m, &mc), ERR_RANGE);
	mc.max_width = 32;
	assert_int_equal(match_set_config(m, &mc), 0);
	match_destroy(m);
	match_destroy(NULL);
	tree_set_free(set);
	log_set_level(LOG_INFO);
}

/* ---- the reacTIVision default set (../shared) ---- */

static struct tree_set *shared_default(void)
{
	const char *p = test_shared_path("fiducials/reactivision/default.trees");
	if (!p)
		return NULL;
	struct tree_set *s = NULL;
	assert_int_equal(tree_set_load(p, &s), 0);
	return s;
}

static void test_shared_symbols(void **state)
{
	(void)state;
	struct tree_set *set = shared_default();
	if (!set)
		skip();
	assert_int_equal(tree_set_count(set), 216);
	assert_int_equal(tree_set_max_nodes(set), 19);
	assert_int_equal(tree_set_max_depth(set), 2);
	assert_int_equal(tree_set_lookup(set, "w0122222212212121111"), 0);
	for (int id = 0; id < 216; id++) {
		char rel[128];
		snprintf(rel, sizeof rel, "fiducials/reactivision/symbols/default/fid_%03d.png", id);
		const char *p = test_shared_path(rel);
		assert_non_null(p);
		struct image_u8 img;
		assert_int_equal(image_read(p, &img), 0);
		struct rig r;
		rig_run(&r, set, &img, 0);
		if (r.det.n_fids != 1 || r.det.fids[0].id != id)
			fail_msg("fid_%03d.png: %d symbols, first ID %d", id, r.det.n_fids,
				 r.det.n_fids ? r.det.fids[0].id : -1);
		char buf[80];
		assert_true(match_canonical_string(r.tree, r.det.fids[0].root, -1, buf, sizeof buf) > 0);
		assert_string_equal(buf, tree_set_token(set, id));
		rig_free(&r);
		image_u8_free(&img);
	}
	tree_set_free(set);
}

struct truth {
	int id;
	double x, y, angle, size;
};

static double key_num(const char *obj, const char *end, const char *key)
{
	const char *k = strstr(obj, key);
	if (!k || k > end)
		return NAN;
	k = strchr(k + strlen(key), ':');
	return k ? strtod(k + 1, NULL) : NAN;
}

/* The fiducials of frame `frame` in a scene's truth.json (a plain scan:
 * the files are machine-written, one object per symbol). */
static int truth_frame(const char *text, int frame, struct truth *out, int cap)
{
	char pat[32];
	const char *p = text;
	for (;;) {
		p = strstr(p, "\"frame\"");
		if (!p)
			return -1;
		const char *c = strchr(p, ':');
		if (c && atoi(c + 1) == frame)
			break;
		p++;
	}
	snprintf(pat, sizeof pat, "\"fingers\"");
	const char *stop = strstr(p, pat);
	const char *fids = strstr(p, "\"fiducials\"");
	if (!stop || !fids || fids > stop)
		return 0;
	int n = 0;
	for (const char *o = strchr(fids, '{'); o && o < stop && n < cap; o = strchr(o + 1, '{')) {
		const char *e = strchr(o, '}');
		out[n].id = (int)key_num(o, e, "\"id\"");
		out[n].x = key_num(o, e, "\"x\"");
		out[n].y = key_num(o, e, "\"y\"");
		out[n].angle = key_num(o, e, "\"angle\"");
		out[n].size = key_num(o, e, "\"size\"");
		n++;
	}
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void scene_check(const char *scene, int n_frames, int radius, int gate)
{
	struct tree_set *set = shared_default();
	char rel[256];
	snprintf(rel, sizeof rel, "scenes/%s/truth.json", scene);
	const char *tp = set ? test_shared_path(rel) : NULL;
	if (!tp) {
		tree_set_free(set);
		skip();
	}
	FILE *f = fopen(tp, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc((size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = 0;
	fclose(f);
	int n_t = 0, n_found = 0, n_bad = 0, n_err = 0;
	double pos[512], ang[512];
	for (int fr = 0; fr < n_frames; fr++) {
		struct truth t[64];
		int n = truth_frame(text, fr, t, 64);
		assert_true(n > 0);
		snprintf(rel, sizeof rel, "scenes/%s/frame_%05d.png", scene, fr);
		struct image_u8 grey, bin;
		assert_int_equal(image_read(test_shared_path(rel), &grey), 0);
		assert_int_equal(image_u8_alloc(&bin, grey.width, grey.height), 0);
		bernsen_cpu(&grey, radius, gate, &bin);
		struct rig r;
		rig_run(&r, set, &bin, 0);
		char used[64] = {0};
		for (int i = 0; i < n; i++) {
			n_t++;
			int best = -1;
			double bd = 1e9;
			for (int j = 0; j < r.det.n_fids && j < 64; j++) {
				double dd = hypot(r.det.fids[j].x - t[i].x, r.det.fids[j].y - t[i].y);
				if (!used[j] && dd < bd) {
					bd = dd;
					best = j;
				}
			}
			if (best < 0 || bd >= 0.3 * t[i].size)
				continue;
			used[best] = 1;
			if (r.det.fids[best].id != t[i].id) {
				n_bad++;
				continue;
			}
			n_found++;
			double da = fmod(r.det.fids[best].angle - t[i].angle + 3 * M_PI, 2 * M_PI) - M_PI;
			pos[n_err] = bd;
			ang[n_err++] = fabs(da) * 180 / M_PI;
		}
		for (int j = 0; j < r.det.n_fids && j < 64; j++)
			n_bad += !used[j];
		rig_free(&r);
		image_u8_free(&grey);
		image_u8_free(&bin);
	}
	qsort(pos, (size_t)n_err, sizeof *pos, cmp_d);
	qsort(ang, (size_t)n_err, sizeof *ang, cmp_d);
	print_message("%s: %d/%d found, %d wrong or false, position p95 %.2f px, angle p95 %.2f deg\n", scene,
		      n_found, n_t, n_bad, pos[(int)(0.95 * n_err)], ang[(int)(0.95 * n_err)]);
	assert_true(n_found >= 0.99 * n_t);
	assert_int_equal(n_bad, 0);
	assert_true(n_err > 0 && pos[(int)(0.95 * n_err)] < 1.0);
	assert_true(ang[(int)(0.95 * n_err)] < 2.0);
	free(text);
	tree_set_free(set);
}

static void test_shared_std640(void **state)
{
	(void)state;
	scene_check("std-640", 6, 4, 48);
}

static void test_shared_std1080(void **state)
{
	(void)state;
	scene_check("std-1080", 2, 4, 48);
}

static void test_shared_clutter(void **state)
{
	(void)state;
	scene_check("clutter-640", 4, 4, 48);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonicalize),
		cmocka_unit_test(test_set_parse),
		cmocka_unit_test(test_match_new_set),
		cmocka_unit_test(test_match_drawn),
		cmocka_unit_test(test_match_merged),
		cmocka_unit_test(test_match_complete),
		cmocka_unit_test(test_match_small),
		cmocka_unit_test(test_match_few_specks),
		cmocka_unit_test(test_match_specks_unconfirmed),
		cmocka_unit_test(test_match_moved_unconfirmed),
		cmocka_unit_test(test_match_closed_leaf),
		cmocka_unit_test(test_match_closed_hole),
		cmocka_unit_test(test_match_holds),
		cmocka_unit_test(test_match_small_bar),
		cmocka_unit_test(test_match_merged_ring),
		cmocka_unit_test(test_match_merged_ring_bar),
		cmocka_unit_test(test_match_even_leaves),
		cmocka_unit_test(test_match_dot_veto),
		cmocka_unit_test(test_match_dot_fill_veto),
		cmocka_unit_test(test_match_cut_blob),
		cmocka_unit_test(test_match_cut_dot_piece),
		cmocka_unit_test(test_match_cut_bent_piece),
		cmocka_unit_test(test_match_split_hole),
		cmocka_unit_test(test_match_shattered_hole),
		cmocka_unit_test(test_match_joined_few),
		cmocka_unit_test(test_match_speck_dot),
		cmocka_unit_test(test_match_holes_uneven),
		cmocka_unit_test(test_match_merged_hole),
		cmocka_unit_test(test_match_ring_arcs),
		cmocka_unit_test(test_match_ring_arcs_speck),
		cmocka_unit_test(test_match_ring_arcs_relisted),
		cmocka_unit_test(test_match_merged_bay),
		cmocka_unit_test(test_match_merged_hole_bay),
		cmocka_unit_test(test_match_wall_piece),
		cmocka_unit_test(test_match_bay),
		cmocka_unit_test(test_match_chip),
		cmocka_unit_test(test_match_chip_thin),
		cmocka_unit_test(test_match_ring_pair),
		cmocka_unit_test(test_match_ring_pair_small_hole),
		cmocka_unit_test(test_match_arc),
		cmocka_unit_test(test_match_merged_blob),
		cmocka_unit_test(test_match_enclosed),
		cmocka_unit_test(test_match_enclosed_shadow),
		cmocka_unit_test(test_match_merged_blob_doubt),
		cmocka_unit_test(test_match_ring_arc_gap),
		cmocka_unit_test(test_match_joined),
		cmocka_unit_test(test_match_joined_band),
		cmocka_unit_test(test_match_joined_bay),
		cmocka_unit_test(test_match_closed_blob),
		cmocka_unit_test(test_match_bridged),
		cmocka_unit_test(test_match_bridged_small),
		cmocka_unit_test(test_match_specked_leaf),
		cmocka_unit_test(test_match_closed_ring),
		cmocka_unit_test(test_match_opened_ring),
		cmocka_unit_test(test_match_margin_root),
		cmocka_unit_test(test_match_border_root),
		cmocka_unit_test(test_match_cut_leaf),
		cmocka_unit_test(test_match_hairlines),
		cmocka_unit_test(test_match_ring_roots),
		cmocka_unit_test(test_match_errors),
		cmocka_unit_test(test_shared_symbols),
		cmocka_unit_test(test_shared_std640),
		cmocka_unit_test(test_shared_std1080),
		cmocka_unit_test(test_shared_clutter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
