/*
 * label_cases.h - masks and a tree comparison shared by the GPU segmenter's
 * tests: the CPU simulation (tests/test_label_sim.c) and the GPU equality
 * test (tests/gpu/gpu_test.c). Header-only (static functions): the GPU test
 * links without tests/common.
 */
#ifndef TT_LABEL_CASES_H
#define TT_LABEL_CASES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../src/core/image.h"
#include "../../src/core/regions.h"

static inline uint32_t lc_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static inline void lc_paint(struct bitmask *m, int x0, int y0, int w, int h, int white, int ring)
{
	for (int y = y0 > 0 ? y0 : 0; y < y0 + h && y < m->height; y++)
		for (int x = x0 > 0 ? x0 : 0; x < x0 + w && x < m->width; x++) {
			if (ring && y > y0 && y < y0 + h - 1 && x > x0 && x < x0 + w - 1)
				continue;
			uint64_t *wd = &m->bits[(size_t)y * (size_t)m->stride_words + (size_t)(x >> 6)];
			if (white)
				*wd |= 1ull << (x & 63);
			else
				*wd &= ~(1ull << (x & 63));
		}
}

/* Kinds of mask: 0 noise of a random density (1/16 .. 15/16 white), 1 a
 * ground with rectangles and rings, 2 the same with specks, 3 a pixel
 * checkerboard, 4 fine stripes, 5 nested rings (a symbol-like tree), 6 all
 * one colour. Padding bits past the width are random: the segmenters must
 * ignore them. */
enum { LC_KINDS = 7 };

static inline void lc_mask(struct bitmask *m, int kind, uint32_t *rng)
{
	const int w = m->width, h = m->height;
	const uint32_t dens = 1 + lc_rand(rng) % 15;
	for (int y = 0; y < h; y++)
		for (int i = 0; i < m->stride_words; i++) {
			uint64_t v = 0;
			if (kind == 0) {
				for (int b = 0; b < 64; b++)
					if ((lc_rand(rng) & 15) < dens)
						v |= 1ull << b;
			} else {
				v = ((uint64_t)lc_rand(rng) << 32) | lc_rand(rng);
			}
			m->bits[(size_t)y * (size_t)m->stride_words + (size_t)i] = v;
		}
	if (kind == 0)
		return;
	if (kind == 3 || kind == 4) {
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				lc_paint(m, x, y, 1, 1, kind == 3 ? ((x + y) & 1) : ((x >> 1) & 1), 0);
		return;
	}
	lc_paint(m, 0, 0, w, h, (int)(lc_rand(rng) & 1), 0);
	if (kind == 6)
		return;
	if (kind == 5) {
		const int cx = (int)(lc_rand(rng) % (uint32_t)w), cy = (int)(lc_rand(rng) % (uint32_t)h);
		for (int r = w > h ? w : h, c = 0; r > 0; r -= 1 + (int)(lc_rand(rng) % 4), c ^= 1)
			lc_paint(m, cx - r, cy - r, 2 * r + 1, 2 * r + 1, c, 0);
		return;
	}
	const int n = 1 + (int)(lc_rand(rng) % 60);
	for (int i = 0; i < n; i++) {
		int x0 = (int)(lc_rand(rng) % (uint32_t)w), y0 = (int)(lc_rand(rng) % (uint32_t)h);
		int rw = 1 + (int)(lc_rand(rng) % (uint32_t)(w / 2 + 1));
		int rh = 1 + (int)(lc_rand(rng) % (uint32_t)(h / 2 + 1));
		lc_paint(m, x0, y0, rw, rh, (int)(lc_rand(rng) & 1), lc_rand(rng) % 3 == 0);
	}
	if (kind == 2)
		for (int i = 0; i < w * h / 40; i++) {
			int x = (int)(lc_rand(rng) % (uint32_t)w), y = (int)(lc_rand(rng) % (uint32_t)h);
			m->bits[(size_t)y * (size_t)m->stride_words + (size_t)(x >> 6)] ^= 1ull << (x & 63);
		}
}

#define LC_DIFF(...)                                \
	do {                                        \
		snprintf(why, cap, __VA_ARGS__);    \
		return 1;                           \
	} while (0)

/* 0 when the trees are identical array for array (runs, row_first_run,
 * regions with every field, the first n_adj adjacency slots of each region,
 * counts, overflow); else 1 and the first difference in why. */
static inline int lc_trees_differ(const struct region_tree *a, const struct region_tree *b, char *why, size_t cap)
{
	if (a->width != b->width || a->height != b->height || a->adj_cap != b->adj_cap)
		LC_DIFF("size %dx%d cap %d vs %dx%d cap %d", a->width, a->height, (int)a->adj_cap, b->width,
			b->height, (int)b->adj_cap);
	if (a->overflow != b->overflow)
		LC_DIFF("overflow %d vs %d", a->overflow, b->overflow);
	if (a->n_runs != b->n_runs || a->n_regions != b->n_regions)
		LC_DIFF("runs %d vs %d, regions %d vs %d", (int)a->n_runs, (int)b->n_runs, (int)a->n_regions,
			(int)b->n_regions);
	for (int y = 0; y <= a->height; y++)
		if (a->row_first_run[y] != b->row_first_run[y])
			LC_DIFF("row_first_run[%d] %d vs %d", y, (int)a->row_first_run[y], (int)b->row_first_run[y]);
	for (int32_t k = 0; k < a->n_runs; k++) {
		const struct run *p = &a->runs[k], *q = &b->runs[k];
		if (p->x != q->x || p->len != q->len || p->region != q->region || p->colour != q->colour)
			LC_DIFF("run %d: x %d len %d region %d colour %d vs x %d len %d region %d colour %d", (int)k,
				(int)p->x, (int)p->len, (int)p->region, p->colour, (int)q->x, (int)q->len,
				(int)q->region, q->colour);
	}
	for (int32_t r = 0; r < a->n_regions; r++) {
		const struct region *p = &a->regions[r], *q = &b->regions[r];
		if (p->colour != q->colour || p->flags != q->flags || p->n_adj != q->n_adj)
			LC_DIFF("region %d: colour %d flags %d n_adj %d vs colour %d flags %d n_adj %d", (int)r,
				p->colour, p->flags, (int)p->n_adj, q->colour, q->flags, (int)q->n_adj);
		if (p->x0 != q->x0 || p->y0 != q->y0 || p->x1 != q->x1 || p->y1 != q->y1 || p->area != q->area)
			LC_DIFF("region %d: box %d,%d-%d,%d area %d vs box %d,%d-%d,%d area %d", (int)r, (int)p->x0,
				(int)p->y0, (int)p->x1, (int)p->y1, (int)p->area, (int)q->x0, (int)q->y0, (int)q->x1,
				(int)q->y1, (int)q->area);
		if (p->sum_x != q->sum_x || p->sum_y != q->sum_y || p->sum_xx != q->sum_xx || p->sum_yy != q->sum_yy ||
		    p->sum_xy != q->sum_xy)
			LC_DIFF("region %d: moments differ", (int)r);
		const int32_t *la = region_adj(a, r), *lb = region_adj(b, r);
		for (int i = 0; i < p->n_adj; i++)
			if (la[i] != lb[i])
				LC_DIFF("region %d: neighbour %d is %d vs %d", (int)r, i, (int)la[i], (int)lb[i]);
	}
	return 0;
}

#undef LC_DIFF

#endif
