/* Outline room: the Canny reference on images whose edges are known, its
 * hysteresis against a brute-force relaxation, its borders, and region-of-
 * interest runs against the full frame. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/outline/canny.h"
#include "common/testutil.h"

/* Caller buffers for one frame, filled with a sentinel so untouched pixels show. */
struct outs {
	uint8_t *edge, *dir;
	uint16_t *mag;
	struct canny_out o;
};

static void outs_alloc(struct outs *b, int w, int h)
{
	size_t n = (size_t)w * h;
	b->edge = malloc(n);
	b->dir = malloc(n);
	b->mag = malloc(n * sizeof *b->mag);
	assert_non_null(b->edge);
	assert_non_null(b->dir);
	assert_non_null(b->mag);
	memset(b->edge, 0xee, n);
	memset(b->dir, 0xee, n);
	memset(b->mag, 0xee, n * sizeof *b->mag);
	b->o.edge = b->edge;
	b->o.mag = b->mag;
	b->o.dir = b->dir;
	b->o.stride = w;
}

static void outs_free(struct outs *b)
{
	free(b->edge);
	free(b->dir);
	free(b->mag);
}

static struct canny *make(int w, int h, int sigma, int low, int high)
{
	struct canny_config cfg = {w, h, sigma, low, high};
	int err = 1;
	struct canny *c = canny_create(&cfg, &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	return c;
}

/* Discs and boxes of random grey on a noisy background: edges of every
 * direction, contrast and curvature, touching and crossing the border. */
static void fill_shapes(struct image_u8 *img, uint32_t *rng, int noise)
{
	int w = img->width, h = img->height, bg = (int)(test_rand(rng) % 256);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(img, y)[x] = (uint8_t)bg;
	int n = 1 + (int)(test_rand(rng) % 8);
	for (int k = 0; k < n; k++) {
		int cx = (int)(test_rand(rng) % (unsigned)w), cy = (int)(test_rand(rng) % (unsigned)h);
		int r = 1 + (int)(test_rand(rng) % (unsigned)(1 + (w + h) / 6)), v = (int)(test_rand(rng) % 256);
		int disc = (int)(test_rand(rng) & 1);
		for (int y = cy - r; y <= cy + r; y++)
			for (int x = cx - r; x <= cx + r; x++)
				if (x >= 0 && y >= 0 && x < w && y < h &&
				    (!disc || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r))
					image_u8_row(img, y)[x] = (uint8_t)v;
	}
	if (noise)
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				int v = image_u8_row(img, y)[x] + (int)(test_rand(rng) % (unsigned)(2 * noise + 1)) - noise;
				image_u8_row(img, y)[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
}

static void test_taps(void **state)
{
	(void)state;
	int w[CANNY_MAX_RADIUS + 1];
	assert_int_equal(canny_gauss_taps(0, w), 0);
	assert_int_equal(w[0], 256);
	for (int s = 1; s <= CANNY_MAX_SIGMA_TENTHS; s++) {
		int r = canny_gauss_taps(s, w), sum = w[0];
		assert_in_range(r, 0, CANNY_MAX_RADIUS);
		for (int i = 1; i <= CANNY_MAX_RADIUS; i++) {
			sum += 2 * w[i];
			if (i > r)
				assert_int_equal(w[i], 0);
			else
				assert_true(w[i] > 0 && (i == 1 || w[i] <= w[i - 1])); /* rounding may leave w[0] < w[1] */
		}
		assert_int_equal(sum, 256);
	}
	assert_int_equal(canny_gauss_taps(4, w) > 0, 1); /* sigma 0.4: one tap a side */
	assert_int_equal(canny_gauss_taps(-1, w), ERR_RANGE);
	assert_int_equal(canny_gauss_taps(CANNY_MAX_SIGMA_TENTHS + 1, w), ERR_RANGE);
}

static void test_config_errors(void **state)
{
	(void)state;
	const struct canny_config bad[] = {
		{0, 10, 10, 10, 20},  {10, 0, 10, 10, 20}, {IMAGE_MAX_SIDE + 1, 10, 10, 10, 20},
		{10, 10, -1, 10, 20}, {10, 10, 41, 10, 20}, {10, 10, 10, 0, 20},
		{10, 10, 10, 30, 20}, {10, 10, 10, 10, CANNY_MAG_MAX + 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int err = 0;
		assert_null(canny_create(&bad[i], &err));
		assert_int_equal(err, ERR_RANGE);
	}
	struct canny *c = make(16, 8, 10, 10, 20);
	struct canny_config grow = {17, 8, 10, 10, 20}, ok = {16, 8, 20, 5, 5};
	assert_int_equal(canny_set_config(c, &grow), ERR_RANGE);
	assert_int_equal(canny_set_config(c, &ok), 0);
	int w[CANNY_MAX_RADIUS + 1];
	assert_int_equal(canny_taps(c, w), canny_gauss_taps(20, w));

	struct image_u8 big, small;
	assert_int_equal(image_u8_alloc(&big, 17, 8), 0);
	assert_int_equal(image_u8_alloc(&small, 16, 8), 0);
	memset(small.data, 0, (size_t)small.stride * small.height);
	struct outs b;
	outs_alloc(&b, 17, 8);
	assert_int_equal(canny_process(c, &big, &b.o), ERR_SIZE);
	b.o.stride = 15;
	assert_int_equal(canny_process(c, &small, &b.o), ERR_SIZE);
	b.o.stride = 16;
	b.o.edge = NULL;
	assert_int_equal(canny_process(c, &small, &b.o), ERR_RANGE);
	canny_destroy(c);
	canny_destroy(NULL);
	outs_free(&b);
	image_u8_free(&big);
	image_u8_free(&small);
}

static void test_flat_has_no_edges(void **state)
{
	(void)state;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 23, 17), 0);
	memset(img.data, 77, (size_t)img.stride * img.height);
	struct canny *c = make(23, 17, 14, 1, 1);
	struct outs b;
	outs_alloc(&b, 23, 17);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int i = 0; i < 23 * 17; i++) {
		assert_int_equal(b.edge[i], 0);
		assert_int_equal(b.mag[i], 0);
		assert_int_equal(b.dir[i], CANNY_DIR_H);
	}
	outs_free(&b);
	canny_destroy(c);
	image_u8_free(&img);
}

/* A vertical step: dark up to column k-1, bright from k. Without blur the
 * magnitude is 4 x contrast at columns k-1 and k, and the uneven tie-break
 * keeps column k-1, in every row (the border rows too: replicated). With
 * blur the edge stays one pixel wide at k-1 or k. */
static void test_step_edge(void **state)
{
	(void)state;
	const int w = 20, h = 12, k = 8;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(x < k ? 50 : 200);
	struct outs b;
	outs_alloc(&b, w, h);
	struct canny *c = make(w, h, 0, 100, 300);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int i = y * w + x;
			assert_int_equal(b.edge[i], x == k - 1);
			assert_int_equal(b.mag[i], (x == k - 1 || x == k) ? 600 : 0);
			assert_int_equal(b.dir[i], CANNY_DIR_H);
		}
	for (int sigma = 5; sigma <= CANNY_MAX_SIGMA_TENTHS; sigma += 7) {
		struct canny_config cfg = {w, h, sigma, 20, 60};
		assert_int_equal(canny_set_config(c, &cfg), 0);
		assert_int_equal(canny_process(c, &img, &b.o), 0);
		for (int y = 0; y < h; y++) {
			int n = 0;
			for (int x = 0; x < w; x++)
				n += b.edge[y * w + x];
			assert_int_equal(n, 1);
			assert_true(b.edge[y * w + k - 1] || b.edge[y * w + k]);
		}
	}
	/* The same step turned on its side: one row, direction V. */
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(y < 5 ? 200 : 50);
	struct canny_config cfg0 = {w, h, 0, 100, 300};
	assert_int_equal(canny_set_config(c, &cfg0), 0);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			assert_int_equal(b.edge[y * w + x], y == 4);
			if (y == 4)
				assert_int_equal(b.dir[y * w + x], CANNY_DIR_V);
		}
	outs_free(&b);
	canny_destroy(c);
	image_u8_free(&img);
}

/* A ramp of slope 2: a band of equal gradient (16 inside, 8 on the two
 * border columns, where the frame is replicated). Suppression keeps only
 * the first pixel of the plateau (column 1, the uneven tie-break), so the
 * band thins to one line. */
static void test_ramp_thins_to_one_line(void **state)
{
	(void)state;
	const int w = 40, h = 9;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(20 + 2 * x);
	struct outs b;
	outs_alloc(&b, w, h);
	struct canny *c = make(w, h, 0, 1, 1);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			assert_int_equal(b.mag[y * w + x], x == 0 || x == w - 1 ? 8 : 16);
			assert_int_equal(b.edge[y * w + x], x == 1);
		}
	outs_free(&b);
	canny_destroy(c);
	image_u8_free(&img);
}

/* Two vertical steps: A's upper half is strong (contrast 100, M 400) and
 * its lower half weak (contrast 30, M 120); B is weak all along. A is one
 * chain from top to bottom; B has no strong pixel and vanishes until high
 * drops to its level. A diagonal weak step (C) touches A's strong part only
 * through corners: 8-connectivity carries it. */
static void test_hysteresis_chains(void **state)
{
	(void)state;
	const int w = 48, h = 40;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			int v = 100;
			if (x >= 10 && x < 30)
				v = y < 20 ? 200 : 130;
			if (x >= 38)
				v = 130;
			image_u8_row(&img, y)[x] = (uint8_t)v;
		}
	struct outs b;
	outs_alloc(&b, w, h);
	struct canny *c = make(w, h, 0, 100, 300);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++) {
		assert_true(b.edge[y * w + 9] || b.edge[y * w + 10]); /* A (its corner bends into column 10) */
		assert_int_equal(b.edge[y * w + 37], 0); /* B */
	}
	struct canny_config lower = {w, h, 0, 100, 120};
	assert_int_equal(canny_set_config(c, &lower), 0);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		assert_int_equal(b.edge[y * w + 37], 1);

	/* C: a staircase diagonal, weak (contrast 30) below row 8 and strong
	 * above it (contrast rising to 150 at the top, gently, so that no
	 * crosswise edge cuts the chain); pass 1 has no strong part */
	for (int pass = 0; pass < 2; pass++) {
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				image_u8_row(&img, y)[x] =
					(uint8_t)(x < 10 || x - 10 > y ? 100 : y < 8 && pass == 0 ? 130 + 15 * (8 - y) : 130);
		struct canny_config diag = {w, h, 0, 60, 300};
		assert_int_equal(canny_set_config(c, &diag), 0);
		assert_int_equal(canny_process(c, &img, &b.o), 0);
		int n_rows = 0, n_any = 0;
		for (int y = 0; y < h; y++) {
			int row = 0;
			for (int x = 0; x < w; x++) {
				n_any += b.edge[y * w + x];
				if (x >= y + 9 && x <= y + 12)
					row |= b.edge[y * w + x];
			}
			n_rows += y >= 8 && y < w - 12 && row; /* where the diagonal is inside the frame */
		}
		if (pass == 0)
			assert_int_equal(n_rows, w - 20); /* every row of the weak part */
		else
			assert_int_equal(n_any, 0); /* nothing strong: nothing at all */
	}
	outs_free(&b);
	canny_destroy(c);
	image_u8_free(&img);
}

/* Hysteresis the obvious way: the candidates are the edges of a run with
 * high = low; grow the edges from the pixels with M >= high until nothing
 * changes. */
static void ref_hysteresis(const uint8_t *cand, const uint16_t *mag, int w, int h, int high, uint8_t *edge)
{
	for (int i = 0; i < w * h; i++)
		edge[i] = cand[i] && mag[i] >= high;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				if (!cand[y * w + x] || edge[y * w + x])
					continue;
				for (int dy = -1; dy <= 1; dy++)
					for (int dx = -1; dx <= 1; dx++) {
						int qx = x + dx, qy = y + dy;
						if (qx >= 0 && qy >= 0 && qx < w && qy < h && edge[qy * w + qx] &&
						    !edge[y * w + x]) {
							edge[y * w + x] = 1;
							changed = 1;
						}
					}
			}
	}
}

static void test_hysteresis_matches_relaxation(void **state)
{
	(void)state;
	uint32_t rng = 1234;
	for (int iter = 0; iter < 40; iter++) {
		int w = 1 + (int)(test_rand(&rng) % 90), h = 1 + (int)(test_rand(&rng) % 70);
		int sigma = (int)(test_rand(&rng) % 25), low = 1 + (int)(test_rand(&rng) % 200);
		int high = low + (int)(test_rand(&rng) % 400);
		struct image_u8 img;
		assert_int_equal(image_u8_alloc(&img, w, h), 0);
		fill_shapes(&img, &rng, (int)(test_rand(&rng) % 30));
		struct outs a, b;
		outs_alloc(&a, w, h);
		outs_alloc(&b, w, h);
		uint8_t *ref = malloc((size_t)w * h);
		assert_non_null(ref);
		struct canny *c = make(w, h, sigma, low, low);
		assert_int_equal(canny_process(c, &img, &a.o), 0);
		struct canny_config cfg = {w, h, sigma, low, high};
		assert_int_equal(canny_set_config(c, &cfg), 0);
		assert_int_equal(canny_process(c, &img, &b.o), 0);
		ref_hysteresis(a.edge, a.mag, w, h, high, ref);
		assert_memory_equal(b.edge, ref, (size_t)w * h);
		assert_memory_equal(a.mag, b.mag, (size_t)w * h * sizeof *a.mag);
		free(ref);
		outs_free(&a);
		outs_free(&b);
		canny_destroy(c);
		image_u8_free(&img);
	}
}

/* The frame border: a step between columns 0 and 1 is an edge on column 0
 * (M outside the frame is 0); tiny frames run. */
static void test_borders(void **state)
{
	(void)state;
	const int w = 10, h = 6;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(x == 0 ? 10 : 210);
	struct outs b;
	outs_alloc(&b, w, h);
	struct canny *c = make(w, h, 0, 50, 100);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			assert_int_equal(b.edge[y * w + x], x == 0);
			assert_int_equal(b.mag[y * w + x], x <= 1 ? 800 : 0);
		}
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(x == w - 1 ? 10 : 210);
	assert_int_equal(canny_process(c, &img, &b.o), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			assert_int_equal(b.edge[y * w + x], x == w - 2);
	static const int tiny[][2] = {{1, 1}, {1, 6}, {7, 1}, {2, 2}, {3, 1}};
	for (size_t t = 0; t < sizeof tiny / sizeof tiny[0]; t++) {
		struct image_u8 s = img;
		s.width = tiny[t][0];
		s.height = tiny[t][1];
		struct canny_config cfg = {w, h, 30, 1, 1};
		assert_int_equal(canny_set_config(c, &cfg), 0);
		memset(b.edge, 0xee, (size_t)w * h);
		b.o.stride = s.width;
		assert_int_equal(canny_process(c, &s, &b.o), 0);
		for (int i = 0; i < s.width * s.height; i++)
			assert_true(b.edge[i] <= 1);
		assert_int_equal(b.edge[s.width * s.height], 0xee);
	}
	outs_free(&b);
	canny_destroy(c);
	image_u8_free(&img);
}

/* Marks in comp the candidates 8-connected inside r to one that lies on a
 * side of r that is not the frame border. */
static void touching_ring(const uint8_t *cand, int w, int h, struct canny_rect r, uint8_t *touch, int32_t *stack)
{
	int x1 = r.x + r.width, y1 = r.y + r.height, n = 0;
	memset(touch, 0, (size_t)w * h);
	for (int y = r.y; y < y1; y++)
		for (int x = r.x; x < x1; x++) {
			int ring = (x == r.x && r.x > 0) || (y == r.y && r.y > 0) || (x == x1 - 1 && x1 < w) ||
				   (y == y1 - 1 && y1 < h);
			if (ring && cand[y * w + x]) {
				touch[y * w + x] = 1;
				stack[n++] = y * w + x;
			}
		}
	while (n > 0) {
		int p = stack[--n], px = p % w, py = p / w;
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				int qx = px + dx, qy = py + dy;
				if (qx < r.x || qy < r.y || qx >= x1 || qy >= y1 || touch[qy * w + qx] ||
				    !cand[qy * w + qx])
					continue;
				touch[qy * w + qx] = 1;
				stack[n++] = qy * w + qx;
			}
	}
}

static void test_roi_matches_full_frame(void **state)
{
	(void)state;
	uint32_t rng = 99;
	int n_exact_edges = 0;
	for (int iter = 0; iter < 60; iter++) {
		int w = 2 + (int)(test_rand(&rng) % 120), h = 2 + (int)(test_rand(&rng) % 90);
		int sigma = (int)(test_rand(&rng) % (CANNY_MAX_SIGMA_TENTHS + 1)), low = 1 + (int)(test_rand(&rng) % 150);
		int high = low + (int)(test_rand(&rng) % 300);
		struct image_u8 img;
		assert_int_equal(image_u8_alloc(&img, w, h), 0);
		fill_shapes(&img, &rng, (int)(test_rand(&rng) % 20));
		struct outs full, cand, roi;
		outs_alloc(&full, w, h);
		outs_alloc(&cand, w, h);
		uint8_t *touch = malloc((size_t)w * h);
		int32_t *stack = malloc((size_t)w * h * sizeof *stack);
		assert_non_null(touch);
		assert_non_null(stack);
		struct canny *c = make(w, h, sigma, low, low);
		assert_int_equal(canny_process(c, &img, &cand.o), 0);
		struct canny_config cfg = {w, h, sigma, low, high};
		assert_int_equal(canny_set_config(c, &cfg), 0);
		assert_int_equal(canny_process(c, &img, &full.o), 0);
		for (int k = 0; k < 4; k++) {
			struct canny_rect r;
			/* small ones and ones covering most of the frame */
			int big = k & 1;
			r.x = (int)(test_rand(&rng) % (unsigned)(big ? w / 4 + 1 : w));
			r.y = (int)(test_rand(&rng) % (unsigned)(big ? h / 4 + 1 : h));
			r.width = 1 + (int)(test_rand(&rng) % (unsigned)(w - r.x));
			r.height = 1 + (int)(test_rand(&rng) % (unsigned)(h - r.y));
			if (big) {
				r.width = w - r.x - (int)(test_rand(&rng) % (unsigned)(w / 4 + 1));
				r.height = h - r.y - (int)(test_rand(&rng) % (unsigned)(h / 4 + 1));
				if (r.width < 1)
					r.width = 1;
				if (r.height < 1)
					r.height = 1;
			}
			/* the ROI's candidates: a run with high = low over the same rectangle */
			struct canny_config cc = {w, h, sigma, low, low};
			outs_alloc(&roi, w, h);
			assert_int_equal(canny_set_config(c, &cc), 0);
			assert_int_equal(canny_process_roi(c, &img, &r, &roi.o), 0);
			uint8_t *roi_cand = malloc((size_t)w * h);
			assert_non_null(roi_cand);
			memcpy(roi_cand, roi.edge, (size_t)w * h);
			for (int y = r.y; y < r.y + r.height; y++)
				for (int x = r.x; x < r.x + r.width; x++)
					assert_int_equal(roi_cand[y * w + x], cand.edge[y * w + x]);
			touching_ring(roi_cand, w, h, r, touch, stack);
			assert_int_equal(canny_set_config(c, &cfg), 0);
			assert_int_equal(canny_process_roi(c, &img, &r, &roi.o), 0);
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					int i = y * w + x;
					int in = x >= r.x && y >= r.y && x < r.x + r.width && y < r.y + r.height;
					if (!in) {
						assert_int_equal(roi.edge[i], 0xee);
						assert_int_equal(roi.dir[i], 0xee);
						assert_int_equal(roi.mag[i], 0xeeee);
						continue;
					}
					assert_int_equal(roi.mag[i], full.mag[i]);
					assert_int_equal(roi.dir[i], full.dir[i]);
					assert_true(roi.edge[i] <= full.edge[i]);
					if (!touch[i]) {
						assert_int_equal(roi.edge[i], full.edge[i]);
						n_exact_edges += roi.edge[i];
					}
				}
			free(roi_cand);
			outs_free(&roi);
		}
		/* A rectangle reaching past the frame is clipped; one outside writes nothing. */
		struct canny_rect over = {-5, -5, w + 10, h + 10}, out = {w, 0, 5, 5};
		outs_alloc(&roi, w, h);
		assert_int_equal(canny_process_roi(c, &img, &over, &roi.o), 0);
		assert_memory_equal(roi.edge, full.edge, (size_t)w * h);
		memset(roi.edge, 0xee, (size_t)w * h);
		assert_int_equal(canny_process_roi(c, &img, &out, &roi.o), 0);
		for (int i = 0; i < w * h; i++)
			assert_int_equal(roi.edge[i], 0xee);
		outs_free(&roi);
		free(touch);
		free(stack);
		outs_free(&full);
		outs_free(&cand);
		canny_destroy(c);
		image_u8_free(&img);
	}
	assert_true(n_exact_edges > 100); /* the exact-region check saw real edges */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taps),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_flat_has_no_edges),
		cmocka_unit_test(test_step_edge),
		cmocka_unit_test(test_ramp_thins_to_one_line),
		cmocka_unit_test(test_hysteresis_chains),
		cmocka_unit_test(test_hysteresis_matches_relaxation),
		cmocka_unit_test(test_borders),
		cmocka_unit_test(test_roi_matches_full_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
