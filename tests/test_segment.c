/* test_segment.c - the segmenter on hand-made and random bitmasks, checked
 * against a naive flood fill; the banded (multi-threaded) segmenter checked
 * against the single-threaded one, down to the matcher's detections; the
 * helpers over a finished tree (run search, neighbour walk, region merge). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/log.h"
#include "../src/core/image_io.h"
#include "../src/core/regions.h"
#include "../src/fiducial/match.h"
#include "../src/fiducial/trees.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/testutil.h"

/* Builds a bitmask from rows of '#' (black) and '.' (white). */
static void mask_from_rows(struct bitmask *m, const char *const *rows, int h)
{
	int w = (int)strlen(rows[0]);
	assert_int_equal(bitmask_alloc(m, w, h), 0);
	memset(m->bits, 0, (size_t)m->stride_words * (size_t)h * sizeof *m->bits);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			if (rows[y][x] == '.')
				m->bits[(size_t)y * (size_t)m->stride_words + (size_t)(x >> 6)] |= 1ull << (x & 63);
}

static struct segment *seg_new(int w, int h, int cap)
{
	struct segment_config c = {w, h, cap, 0, 0};
	int err = 1;
	struct segment *s = segment_create(&c, &err);
	assert_non_null(s);
	assert_int_equal(err, 0);
	return s;
}

static int32_t region_at(const struct region_tree *t, int x, int y)
{
	for (int32_t k = t->row_first_run[y]; k < t->row_first_run[y + 1]; k++)
		if (x >= t->runs[k].x && x < t->runs[k].x + t->runs[k].len)
			return t->runs[k].region;
	fail_msg("no run covers %d,%d", x, y);
	return -1;
}

static int adjacent(const struct region_tree *t, int32_t a, int32_t b)
{
	const int32_t *l = region_adj(t, a);
	for (int i = 0; i < t->regions[a].n_adj; i++)
		if (l[i] == b)
			return 1;
	return 0;
}

static void test_nested(void **state)
{
	(void)state;
	static const char *const rows[] = {
		"..........",
		".########.",
		".#......#.",
		".#.###..#.",
		".#.#.#..#.",
		".#.###.##.",
		".#......#.",
		".########.",
		"..........",
	};
	struct bitmask m;
	mask_from_rows(&m, rows, 9);
	struct segment *s = seg_new(16, 16, 8);
	const struct region_tree *t;
	assert_int_equal(segment_process(s, &m, &t), 0);
	assert_false(t->overflow);
	assert_int_equal(t->n_regions, 5);
	int32_t bg = region_at(t, 0, 0), ring = region_at(t, 1, 1), inside = region_at(t, 2, 2);
	int32_t blob = region_at(t, 3, 3), hole = region_at(t, 4, 4), nub = region_at(t, 7, 5);
	/* The nub at (7,5) touches the ring: same region. */
	assert_int_equal(nub, ring);
	assert_int_equal(t->regions[bg].colour, 255);
	assert_int_equal(t->regions[ring].colour, 0);
	assert_int_equal(t->regions[hole].colour, 255);
	assert_true(t->regions[bg].flags & REGION_BORDER);
	assert_false(t->regions[ring].flags & REGION_BORDER);
	assert_false(t->regions[hole].flags & REGION_BORDER);
	assert_int_equal(t->regions[hole].area, 1);
	assert_int_equal(t->regions[blob].area, 8);
	assert_int_equal(t->regions[blob].x0, 3);
	assert_int_equal(t->regions[blob].x1, 5);
	assert_int_equal(t->regions[blob].y0, 3);
	assert_int_equal(t->regions[blob].y1, 5);
	/* Moments of the 3x3 blob minus its centre (4,4). */
	assert_int_equal(t->regions[blob].sum_x, 8 * 4);
	assert_int_equal(t->regions[blob].sum_y, 8 * 4);
	assert_int_equal(t->regions[blob].sum_xx, 2 * (9 + 16 + 25) + (9 + 25));
	assert_int_equal(t->regions[ring].n_adj, 2);
	assert_int_equal(t->regions[inside].n_adj, 2);
	assert_int_equal(t->regions[blob].n_adj, 2);
	assert_int_equal(t->regions[hole].n_adj, 1);
	assert_true(adjacent(t, bg, ring) && adjacent(t, ring, bg));
	assert_true(adjacent(t, ring, inside) && adjacent(t, inside, blob) && adjacent(t, blob, hole));
	assert_false(adjacent(t, inside, hole));
	assert_false(adjacent(t, bg, inside));
	assert_int_equal(t->row_first_run[9], t->n_runs);
	segment_destroy(s);
	bitmask_free(&m);
}

/* Diagonal contact does not join (4-connectivity for both colours). */
static void test_diagonal(void **state)
{
	(void)state;
	static const char *const rows[] = {
		"......",
		".#....",
		"..#...",
		"...##.",
		"......",
	};
	struct bitmask m;
	mask_from_rows(&m, rows, 5);
	struct segment *s = seg_new(6, 5, 8);
	const struct region_tree *t;
	assert_int_equal(segment_process(s, &m, &t), 0);
	assert_int_equal(t->n_regions, 4);
	assert_true(region_at(t, 1, 1) != region_at(t, 2, 2));
	assert_true(region_at(t, 2, 2) != region_at(t, 3, 3));
	assert_int_equal(region_at(t, 3, 3), region_at(t, 4, 3));
	segment_destroy(s);
	bitmask_free(&m);
}

/* A white region around five 1 px black dots inside a black ring: six
 * neighbours. */
static const char *const dots_in_ring[] = {
	"#############",
	"#...........#",
	"#.#.#.#.#.#.#",
	"#...........#",
	"#############",
};

/* A region with more neighbours than adj_cap saturates; they fragment. */
static void test_saturation(void **state)
{
	(void)state;
	struct bitmask m;
	mask_from_rows(&m, dots_in_ring, 5);
	struct segment *s = seg_new(13, 5, 4);
	const struct region_tree *t;
	assert_int_equal(segment_process(s, &m, &t), 0);
	int32_t in = region_at(t, 1, 1), ring = region_at(t, 0, 0);
	assert_true(t->regions[in].flags & REGION_SATURATED);
	assert_int_equal(t->regions[in].n_adj, 0);
	for (int x = 2; x <= 10; x += 2)
		assert_true(t->regions[region_at(t, x, 2)].flags & REGION_FRAGMENTED);
	assert_true(t->regions[ring].flags & REGION_FRAGMENTED);
	segment_destroy(s);
	bitmask_free(&m);

	/* With room for 6 neighbours nothing saturates. */
	mask_from_rows(&m, dots_in_ring, 5);
	s = seg_new(13, 5, 6);
	assert_int_equal(segment_process(s, &m, &t), 0);
	in = region_at(t, 1, 1);
	assert_int_equal(t->regions[in].flags, 0);
	assert_int_equal(t->regions[in].n_adj, 6);
	segment_destroy(s);
	bitmask_free(&m);
}

/* Naive 4-connected flood fill labels, for comparison. */
static int flood(const struct bitmask *m, int32_t *lab, int32_t *stack)
{
	int w = m->width, h = m->height, n = 0;
	for (int i = 0; i < w * h; i++)
		lab[i] = -1;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			if (lab[y * w + x] >= 0)
				continue;
			int c = bitmask_get(m, x, y), sp = 0;
			lab[y * w + x] = n;
			stack[sp++] = y * w + x;
			while (sp) {
				int p = stack[--sp], px = p % w, py = p / w;
				const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
				for (int d = 0; d < 4; d++) {
					int qx = px + dx[d], qy = py + dy[d];
					if (qx < 0 || qy < 0 || qx >= w || qy >= h || lab[qy * w + qx] >= 0 ||
					    bitmask_get(m, qx, qy) != c)
						continue;
					lab[qy * w + qx] = n;
					stack[sp++] = qy * w + qx;
				}
			}
			n++;
		}
	return n;
}

/* Random masks of widths around word boundaries: regions, areas, bounding
 * boxes, first moments and adjacency equal a naive flood fill's. */
static void test_random_vs_flood(void **state)
{
	(void)state;
	uint32_t rng = 12345;
	const int widths[] = {1, 63, 64, 65, 127, 130, 200};
	for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
		for (int density = 0; density < 3; density++) {
			int w = widths[wi], h = 37;
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			memset(m.bits, 0, (size_t)m.stride_words * (size_t)h * 8);
			/* Blocky noise so that regions have some size. */
			int blk = 1 + density * 2;
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					uint32_t v = (uint32_t)((x / blk) * 7919 + (y / blk) * 104729) ^ rng;
					v = v * 2654435761u;
					if ((v >> 16) & 1)
						m.bits[(size_t)y * m.stride_words + (size_t)(x >> 6)] |= 1ull << (x & 63);
				}
			test_rand(&rng);
			struct segment *s = seg_new(256, 64, 64);
			const struct region_tree *t;
			assert_int_equal(segment_process(s, &m, &t), 0);
			assert_false(t->overflow);
			assert_int_equal(segment_count_runs(s, &m), t->n_runs);
			int32_t *lab = malloc((size_t)w * h * sizeof *lab), *stack = malloc((size_t)w * h * 4 * sizeof *stack);
			int n = flood(&m, lab, stack);
			assert_int_equal(t->n_regions, n);
			/* Map flood labels to segment regions; must be a bijection. */
			int32_t *map = malloc((size_t)n * sizeof *map);
			int64_t *area = calloc((size_t)n, sizeof *area), *sx = calloc((size_t)n, sizeof *sx);
			for (int i = 0; i < n; i++)
				map[i] = -1;
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					int32_t r = region_at(t, x, y), l = lab[y * w + x];
					if (map[l] < 0)
						map[l] = r;
					assert_int_equal(map[l], r);
					area[l]++;
					sx[l] += x;
					assert_true(x >= t->regions[r].x0 && x <= t->regions[r].x1);
					assert_true(y >= t->regions[r].y0 && y <= t->regions[r].y1);
					assert_int_equal(t->regions[r].colour, bitmask_get(&m, x, y) ? 255 : 0);
				}
			for (int i = 0; i < n; i++) {
				assert_int_equal(t->regions[map[i]].area, area[i]);
				assert_int_equal(t->regions[map[i]].sum_x, sx[i]);
			}
			/* Adjacency: every listed neighbour really touches, and an
			 * unsaturated region lists every region it touches. */
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					int32_t a = lab[y * w + x];
					if (x + 1 < w && lab[y * w + x + 1] != a) {
						int32_t ra = map[a], rb = map[lab[y * w + x + 1]];
						if (!(t->regions[ra].flags & REGION_SATURATED))
							assert_true(adjacent(t, ra, rb));
						if (t->regions[rb].flags & REGION_SATURATED)
							assert_true(t->regions[ra].flags & REGION_FRAGMENTED);
					}
					if (y + 1 < h && lab[(y + 1) * w + x] != a) {
						int32_t ra = map[a], rb = map[lab[(y + 1) * w + x]];
						if (!(t->regions[ra].flags & REGION_SATURATED))
							assert_true(adjacent(t, ra, rb));
					}
				}
			for (int32_t r = 0; r < t->n_regions; r++)
				assert_true(t->regions[r].n_adj <= t->adj_cap);
			free(map);
			free(area);
			free(sx);
			free(lab);
			free(stack);
			segment_destroy(s);
			bitmask_free(&m);
		}
	}
}

/* The tree's contract computed pixel by pixel: regions numbered by their
 * first pixel in raster order (flood()'s labels), statistics summed per
 * pixel, and the lists built from the contacts in raster order (in each row
 * the left/right ones, then those with the row above), each recorded in both
 * regions' lists; a region whose list would pass cap saturates and every
 * neighbour, past and future, is fragmented. */
struct naive_tree {
	int32_t n;
	struct region *regs;
	int32_t *adj;
};

static void naive_add_one(struct naive_tree *nt, int cap, int32_t a, int32_t b)
{
	struct region *r = &nt->regs[a];
	int32_t *l = nt->adj + (size_t)a * (size_t)cap;
	if (r->flags & REGION_SATURATED) {
		nt->regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	for (int i = 0; i < r->n_adj; i++)
		if (l[i] == b)
			return;
	if (r->n_adj == cap) {
		for (int i = 0; i < r->n_adj; i++)
			nt->regs[l[i]].flags |= REGION_FRAGMENTED;
		r->n_adj = 0;
		r->flags |= REGION_SATURATED;
		nt->regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	l[r->n_adj++] = b;
}

static void naive_tree_build(struct naive_tree *nt, const struct bitmask *m, const int32_t *lab, int32_t n, int cap)
{
	const int w = m->width, h = m->height;
	nt->n = n;
	nt->regs = calloc((size_t)n, sizeof *nt->regs);
	nt->adj = malloc((size_t)n * (size_t)cap * sizeof *nt->adj);
	assert_non_null(nt->regs);
	assert_non_null(nt->adj);
	for (int32_t i = 0; i < n; i++)
		nt->regs[i].x0 = nt->regs[i].y0 = INT32_MAX;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			struct region *r = &nt->regs[lab[y * w + x]];
			r->colour = bitmask_get(m, x, y) ? 255 : 0;
			r->x0 = x < r->x0 ? x : r->x0;
			r->x1 = x > r->x1 ? x : r->x1;
			r->y0 = y < r->y0 ? y : r->y0;
			r->y1 = y;
			r->area++;
			r->sum_x += x;
			r->sum_y += y;
			r->sum_xx += (int64_t)x * x;
			r->sum_yy += (int64_t)y * y;
			r->sum_xy += (int64_t)x * y;
			if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
				r->flags |= REGION_BORDER;
		}
	for (int y = 0; y < h; y++) {
		for (int x = 0; x + 1 < w; x++) {
			int32_t a = lab[y * w + x], b = lab[y * w + x + 1];
			if (a != b) {
				naive_add_one(nt, cap, a, b);
				naive_add_one(nt, cap, b, a);
			}
		}
		for (int x = 0; y > 0 && x < w; x++) {
			int32_t a = lab[(y - 1) * w + x], b = lab[y * w + x];
			if (a != b) {
				naive_add_one(nt, cap, a, b);
				naive_add_one(nt, cap, b, a);
			}
		}
	}
}

static void naive_tree_check(const struct naive_tree *nt, const struct region_tree *t)
{
	assert_int_equal(t->n_regions, nt->n);
	for (int32_t i = 0; i < nt->n; i++) {
		const struct region *a = &nt->regs[i], *b = &t->regions[i];
		assert_int_equal(a->colour, b->colour);
		assert_int_equal(a->flags, b->flags);
		assert_true(a->x0 == b->x0 && a->x1 == b->x1 && a->y0 == b->y0 && a->y1 == b->y1);
		assert_int_equal(a->area, b->area);
		assert_true(a->sum_x == b->sum_x && a->sum_y == b->sum_y);
		assert_true(a->sum_xx == b->sum_xx && a->sum_yy == b->sum_yy && a->sum_xy == b->sum_xy);
		assert_int_equal(a->n_adj, b->n_adj);
		assert_memory_equal(nt->adj + (size_t)i * (size_t)t->adj_cap, region_adj(t, i),
				    (size_t)a->n_adj * sizeof(int32_t));
	}
}

/* Blocky noise, from fine (hundreds of regions, thousands of touching pairs,
 * more than the segmenter's pair cache holds) to coarse; the tree must equal
 * the pixel-by-pixel contract exactly, lists in order, at several caps, with
 * the serial and the banded segmenter. */
static void test_exact_vs_naive(void **state)
{
	(void)state;
	const int sizes[][2] = {{1, 5}, {70, 1}, {130, 40}, {640, 200}};
	const int caps[] = {2, 4, 19, 64};
	uint32_t rng = 4242;
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (int blk = 1; blk <= 5; blk += 2) {
			const int w = sizes[si][0], h = sizes[si][1];
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			memset(m.bits, 0, (size_t)m.stride_words * (size_t)h * 8);
			uint32_t seed = test_rand(&rng);
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					uint32_t v = ((uint32_t)(x / blk) * 7919u + (uint32_t)(y / blk) * 104729u) ^ seed;
					if (((v * 2654435761u) >> 16) & 1)
						m.bits[(size_t)y * m.stride_words + (size_t)(x >> 6)] |= 1ull << (x & 63);
				}
			int32_t *lab = malloc((size_t)w * h * sizeof *lab), *stack = malloc((size_t)w * h * 4 * sizeof *stack);
			assert_non_null(lab);
			assert_non_null(stack);
			int32_t n = flood(&m, lab, stack);
			for (size_t ci = 0; ci < sizeof caps / sizeof *caps; ci++) {
				struct naive_tree nt;
				naive_tree_build(&nt, &m, lab, n, caps[ci]);
				for (int threads = 1; threads <= 3; threads += 2) {
					/* Room for pure noise: a run and a region a pixel. */
					struct segment_config sc = {640, 800, caps[ci], 640 * 200, 640 * 200};
					int err = 1;
					struct segment *s = segment_create_threaded(&sc, threads, &err);
					assert_non_null(s);
					assert_int_equal(segment_set_band_min_rows(s, 8), 0);
					const struct region_tree *t;
					assert_int_equal(segment_process(s, &m, &t), 0);
					assert_false(t->overflow);
					naive_tree_check(&nt, t);
					segment_destroy(s);
				}
				free(nt.regs);
				free(nt.adj);
			}
			free(lab);
			free(stack);
			bitmask_free(&m);
		}
}

static void test_errors_and_overflow(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR - 1);
	int err = 0;
	struct segment_config bad = {0, 10, 8, 0, 0};
	assert_null(segment_create(&bad, &err));
	assert_int_equal(err, ERR_RANGE);
	struct segment_config bad_cap = {10, 10, 65, 0, 0};
	assert_null(segment_create(&bad_cap, &err));
	struct segment_config ok = {10, 10, 8, 0, 0};
	assert_null(segment_create_threaded(&ok, 65, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_null(segment_create_threaded(&ok, -1, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_int_equal(segment_set_band_min_rows(NULL, 4), ERR_RANGE);
	segment_destroy(NULL);

	struct segment *s = seg_new(128, 128, 8);
	struct bitmask m;
	assert_int_equal(bitmask_alloc(&m, 129, 10), 0);
	memset(m.bits, 0, (size_t)m.stride_words * 10 * 8);
	const struct region_tree *t = NULL;
	assert_int_equal(segment_process(s, &m, &t), ERR_SIZE);
	bitmask_free(&m);

	/* A full checkerboard has more runs than any sane capacity. */
	assert_int_equal(bitmask_alloc(&m, 128, 128), 0);
	for (int y = 0; y < 128; y++)
		for (int wd = 0; wd < m.stride_words; wd++)
			m.bits[(size_t)y * m.stride_words + wd] = (y & 1) ? 0xaaaaaaaaaaaaaaaaull : 0x5555555555555555ull;
	assert_int_equal(segment_process(s, &m, &t), 0);
	assert_true(t->overflow);
	assert_true(t->n_runs <= regions_run_capacity(128, 128));
	for (int32_t k = 0; k < t->n_runs; k++)
		assert_true(t->runs[k].region >= 0 && t->runs[k].region < t->n_regions);
	/* And the next, ordinary frame is whole again. */
	memset(m.bits, 0xff, (size_t)m.stride_words * 128 * 8);
	for (int y = 0; y < 128; y++)
		m.bits[(size_t)y * m.stride_words + 1] = 0;
	assert_int_equal(segment_process(s, &m, &t), 0);
	assert_false(t->overflow);
	assert_int_equal(t->n_regions, 2);
	bitmask_free(&m);
	segment_destroy(s);
	log_set_level(LOG_INFO);
}

/* ---- banded segmenter against the single-threaded one ------------------- */

/* Same regions (as run sets: the runs are the same, so region a of t1 maps
 * to the region of t2 holding the same runs), same statistics and flags,
 * same neighbour sets after mapping. Fills map (t1 region -> t2 region). */
static void trees_equivalent(const struct region_tree *t1, const struct region_tree *t2, int32_t *map)
{
	assert_int_equal(t1->width, t2->width);
	assert_int_equal(t1->height, t2->height);
	assert_int_equal(t1->overflow, t2->overflow);
	assert_int_equal(t1->n_runs, t2->n_runs);
	assert_int_equal(t1->n_regions, t2->n_regions);
	assert_int_equal(t1->adj_cap, t2->adj_cap);
	assert_memory_equal(t1->row_first_run, t2->row_first_run, ((size_t)t1->height + 1) * sizeof(int32_t));
	int32_t *back = malloc(((size_t)t1->n_regions + 1) * sizeof *back);
	assert_non_null(back);
	for (int32_t r = 0; r < t1->n_regions; r++)
		map[r] = back[r] = -1;
	for (int32_t k = 0; k < t1->n_runs; k++) {
		const struct run *a = &t1->runs[k], *b = &t2->runs[k];
		assert_int_equal(a->x, b->x);
		assert_int_equal(a->len, b->len);
		assert_int_equal(a->colour, b->colour);
		assert_true(a->region >= 0 && a->region < t1->n_regions);
		assert_true(b->region >= 0 && b->region < t2->n_regions);
		if (map[a->region] < 0 && back[b->region] < 0) {
			map[a->region] = b->region;
			back[b->region] = a->region;
		}
		assert_int_equal(map[a->region], b->region);
		assert_int_equal(back[b->region], a->region);
	}
	for (int32_t r = 0; r < t1->n_regions; r++) {
		const struct region *a = &t1->regions[r], *b = &t2->regions[map[r]];
		assert_int_equal(a->colour, b->colour);
		assert_int_equal(a->flags, b->flags);
		assert_int_equal(a->x0, b->x0);
		assert_int_equal(a->y0, b->y0);
		assert_int_equal(a->x1, b->x1);
		assert_int_equal(a->y1, b->y1);
		assert_int_equal(a->area, b->area);
		assert_true(a->sum_x == b->sum_x && a->sum_y == b->sum_y);
		assert_true(a->sum_xx == b->sum_xx && a->sum_yy == b->sum_yy && a->sum_xy == b->sum_xy);
		assert_int_equal(a->n_adj, b->n_adj);
		for (int i = 0; i < a->n_adj; i++)
			assert_true(adjacent(t2, map[r], map[region_adj(t1, r)[i]]));
	}
	free(back);
}

/* The banded segmenter numbers regions by first run and lists neighbours
 * in raster order of first contact, like the serial one; the matcher sums
 * leaf positions in list order, so that order is part of the contract. */
static void trees_identical(const struct region_tree *t1, const struct region_tree *t2)
{
	for (int32_t k = 0; k < t1->n_runs; k++)
		assert_int_equal(t1->runs[k].region, t2->runs[k].region);
	for (int32_t r = 0; r < t1->n_regions; r++)
		for (int i = 0; i < t1->regions[r].n_adj; i++)
			assert_int_equal(region_adj(t1, r)[i], region_adj(t2, r)[i]);
}

static void mask_paint(struct bitmask *m, int x0, int y0, int w, int h, int white, int ring)
{
	for (int y = y0; y < y0 + h && y < m->height; y++)
		for (int x = x0; x < x0 + w && x < m->width; x++) {
			if (ring && y > y0 && y < y0 + h - 1 && x > x0 && x < x0 + w - 1)
				continue;
			uint64_t *wd = &m->bits[(size_t)y * m->stride_words + (size_t)(x >> 6)];
			if (white)
				*wd |= 1ull << (x & 63);
			else
				*wd &= ~(1ull << (x & 63));
		}
}

/* Rectangles and rings on a plain ground, some specks, or pure noise (which
 * overflows the run capacity at some sizes); the padding bits past the
 * width are random too. */
static void mask_random(struct bitmask *m, uint32_t *rng)
{
	for (int y = 0; y < m->height; y++)
		for (int i = 0; i < m->stride_words; i++)
			m->bits[(size_t)y * m->stride_words + i] = ((uint64_t)test_rand(rng) << 32) | test_rand(rng);
	int mode = (int)(test_rand(rng) % 4);
	if (mode == 0)
		return;
	mask_paint(m, 0, 0, m->width, m->height, (int)(test_rand(rng) & 1), 0);
	int n = (int)(test_rand(rng) % (uint32_t)(mode * 30 + 1));
	for (int i = 0; i < n; i++) {
		int x0 = (int)(test_rand(rng) % (uint32_t)m->width), y0 = (int)(test_rand(rng) % (uint32_t)m->height);
		int w = 1 + (int)(test_rand(rng) % (uint32_t)(m->width / 2 + 1));
		int h = 1 + (int)(test_rand(rng) % (uint32_t)(m->height / 2 + 1));
		mask_paint(m, x0, y0, w, h, (int)(test_rand(rng) & 1), test_rand(rng) % 3 == 0);
	}
	if (mode == 3)
		for (int i = 0; i < m->width * m->height / 50; i++) {
			int x = (int)(test_rand(rng) % (uint32_t)m->width), y = (int)(test_rand(rng) % (uint32_t)m->height);
			m->bits[(size_t)y * m->stride_words + (size_t)(x >> 6)] ^= 1ull << (x & 63);
		}
}

enum { N_BANDED = 8 };
static const int banded_threads[N_BANDED] = {2, 3, 4, 7, 2, 3, 4, 7};
static const int banded_min_rows[N_BANDED] = {1, 1, 1, 1, 0, 0, 0, 2};

static void test_threads_random(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR);
	const int max_w = 200, max_h = 160;
	const int caps[3] = {3, 8, 19};
	uint32_t rng = 777;
	int32_t *map = malloc((size_t)regions_region_capacity(max_w, max_h) * sizeof *map);
	assert_non_null(map);
	for (int c = 0; c < 3; c++) {
		struct segment *ref = seg_new(max_w, max_h, caps[c]), *par[N_BANDED];
		for (int i = 0; i < N_BANDED; i++) {
			struct segment_config sc = {max_w, max_h, caps[c], 0, 0};
			int err = 1;
			par[i] = segment_create_threaded(&sc, banded_threads[i], &err);
			assert_non_null(par[i]);
			assert_int_equal(err, 0);
			assert_int_equal(segment_set_band_min_rows(par[i], banded_min_rows[i]), 0);
		}
		for (int it = 0; it < 30; it++) {
			/* Heights 1..8 (fewer rows than bands), then any. */
			int w = 1 + (int)(test_rand(&rng) % (uint32_t)max_w);
			int h = it < 8 ? 1 + it : it == 29 ? max_h : 1 + (int)(test_rand(&rng) % (uint32_t)max_h);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			mask_random(&m, &rng);
			const struct region_tree *t1, *t2;
			assert_int_equal(segment_process(ref, &m, &t1), 0);
			for (int i = 0; i < N_BANDED; i++) {
				assert_int_equal(segment_process(par[i], &m, &t2), 0);
				trees_equivalent(t1, t2, map);
				trees_identical(t1, t2);
			}
			bitmask_free(&m);
		}
		for (int i = 0; i < N_BANDED; i++)
			segment_destroy(par[i]);
		segment_destroy(ref);
	}
	free(map);
	log_set_level(LOG_INFO);
}

static void dets_equal(const struct detections *a, const struct detections *b, const int32_t *map)
{
	assert_int_equal(a->n_fids, b->n_fids);
	assert_int_equal(a->n_fuzzy, b->n_fuzzy);
	assert_int_equal(a->n_roots, b->n_roots);
	assert_int_equal(a->n_fingers, b->n_fingers);
	assert_int_equal(a->n_blobs, b->n_blobs);
	assert_int_equal(a->overflow, b->overflow);
	for (int i = 0; i < a->n_fids + a->n_fuzzy; i++) {
		const struct fiducial_det *p = i < a->n_fids ? &a->fids[i] : &a->fuzzy[i - a->n_fids];
		const struct fiducial_det *q = i < a->n_fids ? &b->fids[i] : &b->fuzzy[i - a->n_fids];
		assert_int_equal(p->id, q->id);
		assert_true(p->x == q->x && p->y == q->y && p->angle == q->angle && p->size_px == q->size_px);
		assert_int_equal(map[p->root], q->root);
		assert_int_equal(p->n_nodes, q->n_nodes);
	}
	for (int i = 0; i < a->n_roots; i++) {
		assert_true(a->roots[i].x == b->roots[i].x && a->roots[i].y == b->roots[i].y);
		assert_int_equal(map[a->roots[i].region], b->roots[i].region);
	}
	for (int i = 0; i < a->n_fingers; i++) {
		assert_true(a->fingers[i].x == b->fingers[i].x && a->fingers[i].y == b->fingers[i].y);
		assert_int_equal(map[a->fingers[i].region], b->fingers[i].region);
	}
	for (int i = 0; i < a->n_blobs; i++) {
		assert_true(a->blobs[i].x == b->blobs[i].x && a->blobs[i].angle == b->blobs[i].angle);
		assert_int_equal(map[a->blobs[i].region], b->blobs[i].region);
	}
}

/* Real camera-sized frames: the tree and the matcher's detections are the
 * same with 1, 2, 3, 4 and 7 threads. */
static void test_threads_shared_frames(void **state)
{
	(void)state;
	const char *tp = test_shared_path("fiducials/reactivision/default.trees");
	const char *dir = test_shared_path("scenes/std-1080/frame_00000.png");
	if (!tp || !dir)
		skip();
	struct tree_set *set = NULL;
	assert_int_equal(tree_set_load(test_shared_path("fiducials/reactivision/default.trees"), &set), 0);
	const int threads[] = {1, 2, 3, 4, 7};
	enum { N_T = sizeof threads / sizeof *threads };
	struct segment *seg[N_T];
	struct match *mat[N_T];
	struct detections det[N_T];
	const int w = 1920, h = 1080;
	for (int i = 0; i < N_T; i++) {
		struct segment_config sc = {w, h, tree_set_max_nodes(set), 0, 0};
		struct match_config mc = {.trees = set, .max_width = w, .max_height = h, .finger_size_px = 12,
					  .finger_sensitivity = 0.5f, .finger_min_contrast = 20, .blob_min_px = 8,
					  .blob_max_px = 200, .root_min_px = 20, .root_max_px = 400};
		int err = 1;
		seg[i] = segment_create_threaded(&sc, threads[i], &err);
		assert_non_null(seg[i]);
		mat[i] = match_create(&mc, &err);
		assert_non_null(mat[i]);
		assert_int_equal(detections_alloc(&det[i], 256), 0);
	}
	int32_t *map = malloc((size_t)regions_region_capacity(w, h) * sizeof *map);
	assert_non_null(map);
	for (int fr = 0; fr < 8; fr++) {
		char rel[96];
		snprintf(rel, sizeof rel, "scenes/std-1080/frame_%05d.png", fr);
		const char *path = test_shared_path(rel);
		if (!path)
			break;
		struct image_u8 grey, bin;
		struct bitmask m;
		assert_int_equal(image_read(path, &grey), 0);
		assert_int_equal(grey.width, w);
		assert_int_equal(grey.height, h);
		assert_int_equal(image_u8_alloc(&bin, w, h), 0);
		bernsen_cpu(&grey, 4, 48, &bin);
		assert_int_equal(bitmask_alloc(&m, w, h), 0);
		bitmask_from_image(&m, &bin);
		const struct region_tree *t[N_T];
		for (int i = 0; i < N_T; i++) {
			assert_int_equal(segment_process(seg[i], &m, &t[i]), 0);
			assert_int_equal(match_process(mat[i], t[i], &grey, &det[i]), 0);
		}
		assert_false(t[0]->overflow);
		assert_true(det[0].n_fids > 0);
		for (int i = 1; i < N_T; i++) {
			trees_equivalent(t[0], t[i], map);
			trees_identical(t[0], t[i]);
			dets_equal(&det[0], &det[i], map);
		}
		bitmask_free(&m);
		image_u8_free(&bin);
		image_u8_free(&grey);
	}
	for (int i = 0; i < N_T; i++) {
		detections_free(&det[i]);
		match_destroy(mat[i]);
		segment_destroy(seg[i]);
	}
	free(map);
	tree_set_free(set);
}

/* Configured caps bound a frame of fine detail: a checkerboard of 8-pixel
 * squares with more runs, or more regions, than allowed is cut short at a
 * row, flagged, counted, and the threaded segmenter cuts it the same. */
static void checker8(struct bitmask *m)
{
	for (int y = 0; y < m->height; y++)
		for (int wd = 0; wd < m->stride_words; wd++)
			m->bits[(size_t)y * m->stride_words + wd] = ((y >> 3) & 1) ? 0xff00ff00ff00ff00ull : 0x00ff00ff00ff00ffull;
}

static void test_configured_caps(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR - 1);
	const int n = 512;
	struct bitmask m;
	assert_int_equal(bitmask_alloc(&m, n, n), 0);
	checker8(&m);
	const struct { int32_t runs, regions; } caps[] = {{5000, 0}, {0, 1000}, {3000, 200}};
	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		struct segment_config sc = {.max_width = n, .max_height = n, .adj_cap = 8,
					    .max_runs = caps[c].runs, .max_regions = caps[c].regions};
		int err = 1;
		struct segment *ser = segment_create(&sc, &err);
		struct segment *par = segment_create_threaded(&sc, 4, &err);
		assert_non_null(ser);
		assert_non_null(par);
		const int32_t max_runs = caps[c].runs ? caps[c].runs : regions_run_capacity(n, n);
		const int32_t max_regions = caps[c].regions ? caps[c].regions : regions_region_capacity(n, n);
		for (int frame = 1; frame <= 2; frame++) {
			const struct region_tree *t1, *t2;
			assert_int_equal(segment_process(ser, &m, &t1), 0);
			assert_true(t1->overflow);
			assert_true(t1->n_runs > 0 && t1->n_runs <= max_runs);
			assert_true(t1->n_regions > 0 && t1->n_regions <= max_regions);
			for (int32_t k = 0; k < t1->n_runs; k++)
				assert_true(t1->runs[k].region >= 0 && t1->runs[k].region < t1->n_regions);
			assert_int_equal(segment_overflows(ser), frame);
			assert_int_equal(segment_process(par, &m, &t2), 0);
			trees_identical(t1, t2);
			assert_int_equal(segment_overflows(par), frame);
		}
		segment_destroy(par);
		segment_destroy(ser);
	}
	/* Caps that hold the frame change nothing; the count of runs alone
	 * (segment_count_runs) is the tree's, and the capacity the config's. */
	struct segment_config roomy = {.max_width = n, .max_height = n, .adj_cap = 8,
				       .max_runs = n * n / 8, .max_regions = n * n / 64};
	struct segment *s = segment_create(&roomy, NULL);
	const struct region_tree *t;
	assert_int_equal(segment_run_capacity(s), n * n / 8);
	assert_int_equal(segment_count_runs(s, &m), n * n / 8);
	assert_int_equal(segment_process(s, &m, &t), 0);
	assert_false(t->overflow);
	assert_int_equal(t->n_runs, n * n / 8);
	assert_int_equal(t->n_regions, n * n / 64);
	assert_int_equal(segment_overflows(s), 0);
	segment_destroy(s);
	struct segment_config bad = {.max_width = n, .max_height = n, .adj_cap = 8, .max_runs = -1};
	assert_null(segment_create(&bad, NULL));
	bitmask_free(&m);
}

static int cmp_i32(const void *a, const void *b)
{
	const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The helpers over a finished tree: the run search against a linear scan,
 * the neighbour walk against the segmenter's own lists wherever a region
 * has one, its caps on a saturated region, and the region merge against
 * whole-frame sums. */
static void test_walks(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR);
	struct bitmask m;
	mask_from_rows(&m, dots_in_ring, 5);
	struct segment *s = seg_new(13, 5, 4);
	const struct region_tree *t;
	assert_int_equal(segment_process(s, &m, &t), 0);
	const int32_t in = region_at(t, 1, 1);
	assert_true(t->regions[in].flags & REGION_SATURATED);
	int32_t nb[64];
	/* The ring first (left of the first run), then the dots left to right. */
	assert_int_equal(segment_neighbours(t, in, nb, 64, 0, 64), 6);
	assert_int_equal(nb[0], region_at(t, 0, 1));
	for (int i = 0; i < 5; i++)
		assert_int_equal(nb[1 + i], region_at(t, 2 + 2 * i, 2));
	assert_int_equal(segment_neighbours(t, in, nb, 5, 0, 64), -1);
	assert_int_equal(segment_neighbours(t, in, nb, 64, 0, 5), -1);
	/* The 1 px dots do not count against big_cap; the ring does. */
	assert_int_equal(segment_neighbours(t, in, nb, 64, 1, 1), 6);
	assert_int_equal(segment_neighbours(t, in, nb, 64, 1, 0), -1);
	segment_destroy(s);
	bitmask_free(&m);

	const int w = 150, h = 110;
	assert_int_equal(bitmask_alloc(&m, w, h), 0);
	s = seg_new(w, h, 64);
	uint32_t rng = 4242;
	int n_checked = 0;
	for (int iter = 0; iter < 40; iter++) {
		mask_random(&m, &rng);
		assert_int_equal(segment_process(s, &m, &t), 0);
		for (int y = 0; y < h; y++)
			for (int32_t x = 0; x <= w; x += 7) {
				int32_t k = t->row_first_run[y];
				while (k < t->row_first_run[y + 1] && t->runs[k].x + t->runs[k].len <= x)
					k++;
				assert_int_equal(segment_run_first_after(t, y, x), k);
			}
		if (t->overflow)
			continue;
		struct region all = t->regions[0];
		for (int32_t g = 1; g < t->n_regions; g++)
			segment_region_merge(&all, &t->regions[g]);
		int64_t sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
		for (int64_t y = 0; y < h; y++)
			for (int64_t x = 0; x < w; x++) {
				sx += x;
				sy += y;
				sxx += x * x;
				syy += y * y;
				sxy += x * y;
			}
		assert_int_equal(all.area, w * h);
		assert_true(all.x0 == 0 && all.y0 == 0 && all.x1 == w - 1 && all.y1 == h - 1);
		assert_true(all.sum_x == sx && all.sum_y == sy && all.sum_xx == sxx && all.sum_yy == syy &&
			    all.sum_xy == sxy);
		assert_true(all.flags & REGION_BORDER);
		for (int32_t g = 0; g < t->n_regions; g++) {
			if (t->regions[g].flags & REGION_SATURATED)
				continue;
			const int n = segment_neighbours(t, g, nb, 64, 0, 64);
			assert_int_equal(n, t->regions[g].n_adj);
			int32_t want[64];
			memcpy(want, region_adj(t, g), (size_t)n * sizeof *want);
			qsort(want, (size_t)n, sizeof *want, cmp_i32);
			qsort(nb, (size_t)n, sizeof *nb, cmp_i32);
			assert_memory_equal(nb, want, (size_t)n * sizeof *nb);
			n_checked++;
		}
	}
	assert_true(n_checked > 1000);
	segment_destroy(s);
	bitmask_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_diagonal),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_random_vs_flood),
		cmocka_unit_test(test_exact_vs_naive),
		cmocka_unit_test(test_errors_and_overflow),
		cmocka_unit_test(test_configured_caps),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_threads_random),
		cmocka_unit_test(test_threads_shared_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
