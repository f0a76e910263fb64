/* test_classify.c - fingers and blobs on a drawn scene run through the real
 * segmenter: a clean fingertip and one with a glint are fingers; rings,
 * streaks, big discs, flat (low-contrast) spots, claimed and border regions
 * and the white holes of an unreadable symbol are not. Blobs get the right
 * oriented box. With ../shared, finger recall on std-640 is measured too. */
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
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/fiducial/classify.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/testutil.h"

#define W 512
#define H 384
#define BG 60
#define FG 200

struct scene {
	struct image_u8 bin, grey;
	struct bitmask mask;
	struct segment *seg;
	const struct region_tree *tree;
	uint8_t *claimed;
	struct detections det;
};

static void ellipse(struct scene *s, float cx, float cy, float a, float b, float theta, int bin, int grey)
{
	float c = cosf(theta), sn = sinf(theta);
	int r = (int)ceilf(fmaxf(a, b)) + 1;
	for (int y = (int)cy - r; y <= (int)cy + r; y++)
		for (int x = (int)cx - r; x <= (int)cx + r; x++) {
			if (x < 0 || y < 0 || x >= W || y >= H)
				continue;
			float dx = (float)x - cx, dy = (float)y - cy;
			float u = (dx * c + dy * sn) / a, v = (-dx * sn + dy * c) / b;
			if (u * u + v * v <= 1.0f) {
				image_u8_row(&s->bin, y)[x] = (uint8_t)bin;
				if (grey >= 0)
					image_u8_row(&s->grey, y)[x] = (uint8_t)grey;
			}
		}
}

static void rect(struct scene *s, int x0, int y0, int x1, int y1, int bin, int grey)
{
	for (int y = y0; y <= y1; y++)
		for (int x = x0; x <= x1; x++) {
			image_u8_row(&s->bin, y)[x] = (uint8_t)bin;
			image_u8_row(&s->grey, y)[x] = (uint8_t)grey;
		}
}

static int32_t region_at(const struct region_tree *t, int x, int y)
{
	for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++)
		if (x >= t->runs[k].x && x < t->runs[k].x + t->runs[k].len)
			return t->runs[k].region;
	return -1;
}

static int setup(void **state)
{
	static struct scene s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(image_u8_alloc(&s.bin, W, H), 0);
	assert_int_equal(image_u8_alloc(&s.grey, W, H), 0);
	assert_int_equal(bitmask_alloc(&s.mask, W, H), 0);
	for (int y = 0; y < H; y++) {
		memset(image_u8_row(&s.bin, y), 0, W);
		memset(image_u8_row(&s.grey, y), BG, W);
	}
	/* 1: a fingertip, 18 px */
	ellipse(&s, 60, 60, 9, 9, 0, 255, FG);
	/* 2: a fingertip with a glint (one small dark hole) */
	ellipse(&s, 140, 60, 9, 9, 0, 255, FG);
	rect(&s, 140, 59, 141, 60, 0, BG);
	/* 3: two holes */
	ellipse(&s, 220, 60, 9, 9, 0, 255, FG);
	rect(&s, 216, 59, 217, 61, 0, BG);
	rect(&s, 223, 59, 224, 61, 0, BG);
	/* 4: a streak, 30 x 8 */
	ellipse(&s, 300, 60, 15, 4, 0, 255, FG);
	/* 5: a streak at 45 degrees clockwise on screen, 40 x 12 */
	ellipse(&s, 400, 60, 20, 6, (float)M_PI / 4, 255, FG);
	/* 6: a ring */
	ellipse(&s, 60, 160, 12, 12, 0, 255, FG);
	ellipse(&s, 60, 160, 7, 7, 0, 0, BG);
	/* 7: a big disc, 60 px */
	ellipse(&s, 200, 180, 30, 30, 0, 255, FG);
	/* 8: white after thresholding but flat in the camera image */
	ellipse(&s, 320, 160, 9, 9, 0, 255, -1);
	/* 9: to be claimed by a symbol */
	ellipse(&s, 400, 160, 9, 9, 0, 255, FG);
	/* 10: cut by the border */
	ellipse(&s, 3, 300, 9, 9, 0, 255, FG);
	/* 11: an unreadable symbol: white card, black body, three white holes */
	rect(&s, 300, 240, 420, 320, 255, FG);
	rect(&s, 310, 250, 410, 310, 0, BG);
	ellipse(&s, 330, 280, 6, 6, 0, 255, FG);
	ellipse(&s, 360, 280, 6, 6, 0, 255, FG);
	ellipse(&s, 390, 280, 6, 6, 0, 255, FG);

	bitmask_from_image(&s.mask, &s.bin);
	struct segment_config sc = { .max_width = W, .max_height = H, .adj_cap = 19 };
	int err = 0;
	s.seg = segment_create(&sc, &err);
	assert_non_null(s.seg);
	assert_int_equal(segment_process(s.seg, &s.mask, &s.tree), 0);
	s.claimed = calloc((size_t)s.tree->n_regions, 1);
	assert_non_null(s.claimed);
	int32_t r9 = region_at(s.tree, 400, 160);
	assert_true(r9 >= 0);
	s.claimed[r9] = 1;
	assert_int_equal(detections_alloc(&s.det, 64), 0);
	*state = &s;
	return 0;
}

static int teardown(void **state)
{
	struct scene *s = *state;
	detections_free(&s->det);
	free(s->claimed);
	segment_destroy(s->seg);
	bitmask_free(&s->mask);
	image_u8_free(&s->bin);
	image_u8_free(&s->grey);
	return 0;
}

static struct match_config config(float finger, float blob_min, float blob_max)
{
	struct match_config c;
	memset(&c, 0, sizeof(c));
	c.max_width = W;
	c.max_height = H;
	c.finger_size_px = finger;
	c.finger_sensitivity = 0.5f;
	c.finger_min_contrast = 16;
	c.blob_min_px = blob_min;
	c.blob_max_px = blob_max;
	return c;
}

static void test_fingers(void **state)
{
	struct scene *s = *state;
	struct match_config c = config(18, 0, 0);
	detections_clear(&s->det);
	fingers_find(&c, s->tree, &s->grey, s->claimed, &s->det);
	assert_int_equal(s->det.n_fingers, 2);
	const float xs[2] = { 60, 140 };
	for (int i = 0; i < 2; i++) {
		const struct finger_det *f = &s->det.fingers[i];
		int k = fabsf(f->x - xs[0]) < fabsf(f->x - xs[1]) ? 0 : 1;
		assert_float_equal(f->x, xs[k], 0.3);
		assert_float_equal(f->y, 60, 0.3);
		assert_float_equal(f->diameter_px, 19, 1.01);
		assert_true(f->roundness > 0.85f && f->roundness <= 1.0f);
		assert_float_equal(f->contrast, FG - BG, 2);
		assert_int_equal(f->region, region_at(s->tree, (int)xs[k] - 5, 60));
	}
	/* Off, and a size that fits nothing drawn. */
	detections_clear(&s->det);
	c.finger_size_px = 0;
	fingers_find(&c, s->tree, &s->grey, s->claimed, &s->det);
	assert_int_equal(s->det.n_fingers, 0);
	c.finger_size_px = 100;
	fingers_find(&c, s->tree, &s->grey, s->claimed, &s->det);
	assert_int_equal(s->det.n_fingers, 0);
	/* A stricter contrast demand rejects them all. */
	c = config(18, 0, 0);
	c.finger_min_contrast = FG - BG + 10;
	fingers_find(&c, s->tree, &s->grey, s->claimed, &s->det);
	assert_int_equal(s->det.n_fingers, 0);
	/* Without the claim, the claimed disc is a finger too. */
	c = config(18, 0, 0);
	fingers_find(&c, s->tree, &s->grey, NULL, &s->det);
	assert_int_equal(s->det.n_fingers, 3);
}

static void test_finger_overflow(void **state)
{
	struct scene *s = *state;
	struct match_config c = config(18, 0, 0);
	struct detections small;
	assert_int_equal(detections_alloc(&small, 1), 0);
	fingers_find(&c, s->tree, &s->grey, s->claimed, &small);
	assert_int_equal(small.n_fingers, 1);
	assert_true(small.overflow);
	detections_free(&small);
}

static void test_blobs(void **state)
{
	struct scene *s = *state;
	struct match_config c = config(0, 20, 80);
	detections_clear(&s->det);
	blobs_find(&c, s->tree, s->claimed, &s->det);
	/* streak, rotated streak, ring, big disc; not the fingers (too small),
	 * not the card (too big), not the border disc */
	assert_int_equal(s->det.n_blobs, 4);
	int seen = 0;
	for (int i = 0; i < s->det.n_blobs; i++) {
		const struct blob_det *b = &s->det.blobs[i];
		assert_true(b->w >= b->h);
		assert_true(b->angle >= 0 && b->angle < (float)M_PI);
		if (fabsf(b->x - 300) < 1 && fabsf(b->y - 60) < 1) {
			assert_float_equal(b->w, 31, 1.5);
			assert_float_equal(b->h, 9, 1.5);
			assert_true(b->angle < 0.05f || b->angle > (float)M_PI - 0.05f);
			seen |= 1;
		} else if (fabsf(b->x - 400) < 1 && fabsf(b->y - 60) < 1) {
			assert_float_equal(b->w, 41, 2);
			assert_float_equal(b->h, 13, 2);
			assert_float_equal(b->angle, M_PI / 4, 0.05);
			assert_int_equal((int)b->area_px, s->tree->regions[b->region].area);
			seen |= 2;
		} else if (fabsf(b->x - 200) < 1 && fabsf(b->y - 180) < 1) {
			assert_float_equal(b->w, 61, 2);
			assert_float_equal(b->h, 61, 2);
			seen |= 4;
		} else if (fabsf(b->x - 60) < 1 && fabsf(b->y - 160) < 1) {
			seen |= 8;
		}
	}
	assert_int_equal(seen, 15);
	detections_clear(&s->det);
	c.blob_max_px = 0;
	blobs_find(&c, s->tree, s->claimed, &s->det);
	assert_int_equal(s->det.n_blobs, 0);
}

static bool blob_near(const struct detections *d, float x, float y, float min_w)
{
	for (int i = 0; i < d->n_blobs; i++)
		if (fabsf(d->blobs[i].x - x) < 2 && fabsf(d->blobs[i].y - y) < 2 && d->blobs[i].w >= min_w)
			return true;
	return false;
}

/* Blobs are the untagged regions: a found finger, and the white card around
 * a symbol (box holding the symbol's, at most twice its side), are not
 * blobs; a card much bigger than its symbol is an object of its own. */
static void test_blobs_not_reported(void **state)
{
	struct scene *s = *state;
	struct match_config c = config(18, 10, 200);
	detections_clear(&s->det);
	blobs_find(&c, s->tree, s->claimed, &s->det);
	assert_true(blob_near(&s->det, 60, 60, 0));     /* the fingertip, while no finger is found */
	assert_true(blob_near(&s->det, 360, 280, 100));   /* the card, while no symbol is found */

	detections_clear(&s->det);
	fingers_find(&c, s->tree, &s->grey, s->claimed, &s->det);
	assert_true(s->det.n_fingers >= 2);
	struct fiducial_det *f = &s->det.fids[s->det.n_fids++];
	memset(f, 0, sizeof *f);
	f->x = 360;
	f->y = 280;
	f->size_px = 62;
	blobs_find(&c, s->tree, s->claimed, &s->det);
	assert_false(blob_near(&s->det, 60, 60, 0));
	assert_false(blob_near(&s->det, 360, 280, 100));
	for (int i = 0; i < s->det.n_blobs; i++)
		for (int k = 0; k < s->det.n_fingers; k++)
			assert_int_not_equal(s->det.blobs[i].region, s->det.fingers[k].region);
	assert_true(blob_near(&s->det, 300, 60, 0)); /* the streak stays */

	s->det.n_blobs = 0;
	f->size_px = 40; /* the card is three times the symbol: an object */
	blobs_find(&c, s->tree, s->claimed, &s->det);
	assert_true(blob_near(&s->det, 360, 280, 100));
	detections_clear(&s->det);
}

/* Finger recall on a shared scene, when ../shared is there: the daemon's
 * own path (Bernsen r 6, gate 32; segment; classify) at finger size 18. */
static void test_shared_std640_recall(void **state)
{
	(void)state;
	const char *dir = test_shared_path("scenes/std-640");
	if (!dir)
		skip();
	char base[512];
	snprintf(base, sizeof(base), "%s", dir);
	char path[600];
	snprintf(path, sizeof(path), "%s/truth.json", base);
	FILE *f = fopen(path, "r");
	if (!f)
		skip();
	static char json[1 << 20];
	size_t n = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	json[n] = '\0';

	struct segment_config sc = { .max_width = 640, .max_height = 480, .adj_cap = 19 };
	int err = 0;
	struct segment *seg = segment_create(&sc, &err);
	assert_non_null(seg);
	struct image_u8 grey = { 0 }, bin = { 0 };
	struct bitmask mask = { 0 };
	struct detections det;
	assert_int_equal(detections_alloc(&det, 256), 0);
	struct match_config c = config(18, 0, 0);
	c.max_width = 640;
	c.max_height = 480;
	int total = 0, found = 0, false_pos = 0;
	/* A tiny reader for this one file's shape: frames in order, each with
	 * "fingers": [{"x": .., "y": .., "r": ..}, ...]. */
	const char *p = strstr(json, "\"frame\"");
	if (!p)
		skip();
	for (int frame = 0; frame < 24; frame++) {
		p = strstr(p, "\"fingers\"");
		if (!p)
			break;
		const char *end = strchr(p, ']');
		float tx[16], ty[16], tr[16];
		int nt = 0;
		for (const char *q = strstr(p, "\"x\""); q && q < end && nt < 16; q = strstr(q + 1, "\"x\"")) {
			tx[nt] = strtof(strchr(q, ':') + 1, NULL);
			const char *qy = strstr(q, "\"y\"");
			const char *qr = strstr(q, "\"r\"");
			ty[nt] = strtof(strchr(qy, ':') + 1, NULL);
			tr[nt] = strtof(strchr(qr, ':') + 1, NULL);
			nt++;
		}
		p = end;
		snprintf(path, sizeof(path), "%s/frame_%05d.png", base, frame);
		if (image_read(path, &grey) != 0)
			break;
		if (!bin.data) {
			assert_int_equal(image_u8_alloc(&bin, grey.width, grey.height), 0);
			assert_int_equal(bitmask_alloc(&mask, grey.width, grey.height), 0);
		}
		bernsen_cpu(&grey, 6, 32, &bin);
		bitmask_from_image(&mask, &bin);
		const struct region_tree *tree;
		assert_int_equal(segment_process(seg, &mask, &tree), 0);
		detections_clear(&det);
		fingers_find(&c, tree, &grey, NULL, &det);
		int used[256] = { 0 };
		for (int k = 0; k < nt; k++) {
			total++;
			for (int i = 0; i < det.n_fingers; i++)
				if (!used[i] && hypotf(det.fingers[i].x - tx[k], det.fingers[i].y - ty[k]) < tr[k]) {
					used[i] = 1;
					found++;
					break;
				}
		}
		for (int i = 0; i < det.n_fingers; i++)
			false_pos += !used[i];
		image_u8_free(&grey);
	}
	printf("std-640 fingers (no symbol claims): %d of %d found, %d false\n", found, total, false_pos);
	assert_true(total >= 100);
	assert_true(found * 100 >= total * 95);
	detections_free(&det);
	image_u8_free(&bin);
	bitmask_free(&mask);
	segment_destroy(seg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fingers),
		cmocka_unit_test(test_finger_overflow),
		cmocka_unit_test(test_blobs),
		cmocka_unit_test(test_blobs_not_reported),
		cmocka_unit_test(test_shared_std640_recall),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
