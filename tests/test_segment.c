/* test_segment.c - the segmenter on hand-made and random bitmasks, checked
 * against a naive flood fill. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/log.h"
#include "../src/core/regions.h"
#include "../src/segment/segment.h"
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
	struct segment_config c = {w, h, cap};
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

/* A region with more neighbours than adj_cap saturates; they fragment. */
static void test_saturation(void **state)
{
	(void)state;
	static const char *const rows[] = {
		"#############",
		"#...........#",
		"#.#.#.#.#.#.#",
		"#...........#",
		"#############",
	};
	struct bitmask m;
	mask_from_rows(&m, rows, 5);
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
	mask_from_rows(&m, rows, 5);
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

static void test_errors_and_overflow(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR - 1);
	int err = 0;
	struct segment_config bad = {0, 10, 8};
	assert_null(segment_create(&bad, &err));
	assert_int_equal(err, ERR_RANGE);
	struct segment_config bad_cap = {10, 10, 65};
	assert_null(segment_create(&bad_cap, &err));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_diagonal),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_random_vs_flood),
		cmocka_unit_test(test_errors_and_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
