/* test_label_sim.c - the GPU segmenter's kernels (cuda/label_kernels.h) run
 * on the CPU, each kernel's threads one after another in ascending,
 * descending and random order, against segment_process(): the trees must be
 * identical array for array. Random masks of every kind, size and density,
 * odd widths, every adjacency cap, the saturation rule, run and region
 * overflow, and the shared camera frames thresholded by the CPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/label_kernels.h"
#include "../src/core/image.h"
#include "../src/core/image_io.h"
#include "../src/core/log.h"
#include "../src/core/regions.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/label_cases.h"
#include "common/testutil.h"

/* The simulated device: the arrays label.cu allocates, the same sizes. */
struct sim {
	struct lk_args g;
	struct lk_hdr hdr, out_hdr;
	int max_w, max_h;
	uint32_t slots;
	int64_t *perm;
	int64_t perm_cap;
	int order;       /* 0 ascending, 1 descending, 2 random */
	uint32_t rng;
	struct region_tree tree;
};

static void *garbage(size_t n)
{
	void *p = malloc(n ? n : 1);
	assert_non_null(p);
	memset(p, 0xa5, n);
	return p;
}

static struct sim *sim_create(int max_w, int max_h, int adj_cap, int32_t max_runs, int32_t max_regions)
{
	struct sim *s = calloc(1, sizeof *s);
	assert_non_null(s);
	struct lk_args *g = &s->g;
	s->max_w = max_w;
	s->max_h = max_h;
	g->cap_runs = max_runs > 0 ? max_runs : regions_run_capacity(max_w, max_h);
	g->cap_regions = max_regions > 0 ? max_regions : regions_region_capacity(max_w, max_h);
	g->adj_cap = adj_cap;
	s->slots = lk_table_slots(g->cap_regions);
	g->table_mask = s->slots - 1;
	const size_t rows = (size_t)max_h + 1, runs = (size_t)g->cap_runs, regs = (size_t)g->cap_regions;
	g->hdr = &s->hdr;
	memset(&s->hdr, 0, sizeof s->hdr);
	g->row_count = garbage(rows * sizeof(int64_t));
	g->rf64 = garbage(rows * sizeof(int64_t));
	g->out_hdr = &s->out_hdr;
	memset(&s->out_hdr, 0xa5, sizeof s->out_hdr);
	g->out_runs = garbage(runs * sizeof(struct run));
	g->out_rf = garbage(rows * sizeof(int32_t));
	g->out_regions = garbage(regs * sizeof(struct region));
	g->out_adj = garbage(regs * (size_t)adj_cap * sizeof(int32_t));
	g->row_of = garbage(runs * sizeof(int32_t));
	g->xend = garbage(runs * sizeof(int32_t));
	g->parent = garbage(runs * sizeof(int32_t));
	g->above = garbage(runs * sizeof(int32_t));
	g->runs = garbage(runs * sizeof(struct run));
	g->root_flag = garbage((runs + 1) * sizeof(int32_t));
	g->rid = garbage((runs + 1) * sizeof(int32_t));
	g->regions = garbage(regs * sizeof(struct region));
	g->sums = garbage(regs * LK_REPS * LK_SUMS * sizeof(int64_t));
	g->flags = garbage(regs * sizeof(uint32_t));
	g->deg = garbage(regs * sizeof(int32_t));
	g->slot_key = garbage(regs * (size_t)adj_cap * sizeof(uint64_t));
	g->slot_nb = garbage(regs * (size_t)adj_cap * sizeof(int32_t));
	g->table_pair = malloc(s->slots * sizeof(uint64_t));
	g->table_first = malloc(s->slots * sizeof(uint64_t));
	g->used = garbage(s->slots * sizeof(int32_t));
	assert_non_null(g->table_pair);
	assert_non_null(g->table_first);
	memset(g->table_pair, 0xff, s->slots * sizeof(uint64_t));
	memset(g->table_first, 0xff, s->slots * sizeof(uint64_t));
	s->rng = 99;
	return s;
}

static void sim_destroy(struct sim *s)
{
	struct lk_args *g = &s->g;
	free(g->row_count);
	free(g->sums);
	free(g->rf64);
	free(g->out_runs);
	free(g->out_rf);
	free(g->out_regions);
	free(g->out_adj);
	free(g->row_of);
	free(g->xend);
	free(g->parent);
	free(g->above);
	free(g->runs);
	free(g->root_flag);
	free(g->rid);
	free(g->regions);
	free(g->flags);
	free(g->deg);
	free(g->slot_key);
	free(g->slot_nb);
	free(g->table_pair);
	free(g->table_first);
	free(g->used);
	free(s->perm);
	free(s);
}

typedef void (*kernel_fn)(const struct lk_args *, int64_t);
typedef int64_t (*live_fn)(const struct lk_args *);

/* Threads 0..n-1 of kernel k, but not past its live end (read once before
 * the launch, as every GPU thread reads it at its start). */
static void launch_live(struct sim *s, kernel_fn k, live_fn live, int64_t n)
{
	const int64_t end = live(&s->g);
	if (end < n)
		n = end;
	if (s->order == 0) {
		for (int64_t t = 0; t < n; t++)
			k(&s->g, t);
		return;
	}
	if (s->order == 1) {
		for (int64_t t = n - 1; t >= 0; t--)
			k(&s->g, t);
		return;
	}
	if (n > s->perm_cap) {
		free(s->perm);
		s->perm = malloc((size_t)n * sizeof *s->perm);
		assert_non_null(s->perm);
		s->perm_cap = n;
	}
	for (int64_t t = 0; t < n; t++)
		s->perm[t] = t;
	for (int64_t t = n - 1; t > 0; t--) {
		const int64_t j = (int64_t)(lc_rand(&s->rng) % (uint32_t)(t + 1));
		const int64_t v = s->perm[t];
		s->perm[t] = s->perm[j];
		s->perm[j] = v;
	}
	for (int64_t t = 0; t < n; t++)
		k(&s->g, s->perm[t]);
}
#define launch(s, name, n) launch_live(s, lk_k_##name, lk_live_##name, n)

/* The launch sequence of label.cu, the prefix sums as loops. */
static const struct region_tree *sim_process(struct sim *s, const struct bitmask *m)
{
	struct lk_args *g = &s->g;
	assert_true(m->width <= s->max_w && m->height <= s->max_h);
	g->mask = m->bits;
	g->stride_words = m->stride_words;
	g->width = m->width;
	g->height = m->height;
	g->n_words = (m->width + 63) / 64;
	const int h = m->height;
	launch(s, start, (int64_t)s->slots > h + 1 ? (int64_t)s->slots : h + 1);
	int64_t acc = 0;
	for (int y = 0; y <= h; y++) {
		g->rf64[y] = acc;
		acc += g->row_count[y];
	}
	launch(s, cut, (int64_t)h * g->n_words);
	launch(s, union, g->cap_runs);
	launch(s, squash, g->cap_runs);
	launch(s, join, g->cap_runs);
	launch(s, flatten, (int64_t)g->cap_runs + 1);
	int32_t racc = 0;
	for (int64_t k = 0; k <= g->cap_runs; k++) {
		g->rid[k] = racc;
		racc += g->root_flag[k];
	}
	launch(s, open, g->cap_runs);
	launch(s, stats, g->cap_runs);
	launch(s, pairs, s->slots);
	launch(s, export, g->cap_runs);
	launch(s, frag, s->slots);
	const int64_t slots = (int64_t)g->cap_regions * g->adj_cap;
	launch(s, finish, slots > h + 1 ? slots : h + 1);
	/* The tree as the host gets it: the exported arrays only. */
	assert_int_equal(s->out_hdr.error, 0);
	struct region_tree *t = &s->tree;
	t->width = m->width;
	t->height = h;
	t->n_regions = s->out_hdr.n_regions;
	t->regions = g->out_regions;
	t->adj_cap = g->adj_cap;
	t->adj = g->out_adj;
	t->n_runs = s->out_hdr.n_runs;
	t->runs = g->out_runs;
	t->row_first_run = g->out_rf;
	t->overflow = s->out_hdr.y_cut < h;
	return t;
}

static int n_compared;

static void same_tree(struct segment *seg, struct sim *s, const struct bitmask *m, const char *what)
{
	const struct region_tree *ref = NULL;
	assert_int_equal(segment_process(seg, m, &ref), 0);
	for (int order = 0; order < 3; order++) {
		s->order = order;
		const struct region_tree *t = sim_process(s, m);
		char why[256];
		if (lc_trees_differ(ref, t, why, sizeof why))
			fail_msg("%s (%dx%d, adj_cap %d, order %d): %s", what, m->width, m->height, (int)ref->adj_cap,
				 order, why);
		n_compared++;
	}
}

static void test_random_masks(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR);
	const int max_w = 200, max_h = 160;
	const int caps[] = {2, 3, 8, 19, 64};
	uint32_t rng = 4242;
	for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
		struct segment_config sc = {max_w, max_h, caps[c], 0, 0};
		struct segment *seg = segment_create(&sc, NULL);
		assert_non_null(seg);
		struct sim *s = sim_create(max_w, max_h, caps[c], 0, 0);
		for (int it = 0; it < 60; it++) {
			const int w = 1 + (int)(lc_rand(&rng) % max_w), h = 1 + (int)(lc_rand(&rng) % max_h);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			lc_mask(&m, it % LC_KINDS, &rng);
			same_tree(seg, s, &m, "random");
			bitmask_free(&m);
		}
		sim_destroy(s);
		segment_destroy(seg);
	}
	log_set_level(LOG_INFO);
}

static void test_odd_sizes(void **state)
{
	(void)state;
	const int ws[] = {1, 2, 3, 31, 63, 64, 65, 127, 128, 129, 191, 193};
	const int hs[] = {1, 2, 3, 5, 64, 65};
	uint32_t rng = 7;
	struct segment_config sc = {193, 65, 8, 0, 0};
	struct segment *seg = segment_create(&sc, NULL);
	struct sim *s = sim_create(193, 65, 8, 0, 0);
	for (size_t i = 0; i < sizeof ws / sizeof *ws; i++)
		for (size_t j = 0; j < sizeof hs / sizeof *hs; j++)
			for (int kind = 0; kind < LC_KINDS; kind++) {
				struct bitmask m;
				assert_int_equal(bitmask_alloc(&m, ws[i], hs[j]), 0);
				lc_mask(&m, kind, &rng);
				same_tree(seg, s, &m, "odd size");
				bitmask_free(&m);
			}
	sim_destroy(s);
	segment_destroy(seg);
}

/* Capacities far below the frame: cut short at a row for runs, for regions,
 * for both; also capacities that the first row alone exceeds. */
static void test_overflow(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR - 1);
	uint32_t rng = 31337;
	const struct { int32_t runs, regions; } caps[] = {{5000, 0}, {0, 1000}, {3000, 200}, {1, 0}, {0, 1},
							 {40, 3}, {700, 50}, {0, 77}};
	for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
		const int n = 160;
		struct segment_config sc = {n, n, 8, caps[c].runs, caps[c].regions};
		struct segment *seg = segment_create(&sc, NULL);
		assert_non_null(seg);
		struct sim *s = sim_create(n, n, 8, caps[c].runs, caps[c].regions);
		for (int it = 0; it < 20; it++) {
			const int w = 1 + (int)(lc_rand(&rng) % n), h = 1 + (int)(lc_rand(&rng) % n);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			lc_mask(&m, it % LC_KINDS, &rng);
			same_tree(seg, s, &m, "overflow");
			bitmask_free(&m);
		}
		sim_destroy(s);
		segment_destroy(seg);
	}
	log_set_level(LOG_INFO);
}

/* The CPU-thresholded camera frames of the shared sets, at the matcher's
 * adjacency cap of the default symbols (19) and a small one. */
static void test_shared_frames(void **state)
{
	(void)state;
	const char *sets[] = {"std-1080", "std-640", "clutter-640", "blur-640", "dim-640", "small-640", "nofid-640",
			      "motion-640"};
	int n_frames = 0;
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
		for (int fr = 0; fr < 2; fr++) {
			char rel[96];
			snprintf(rel, sizeof rel, "scenes/%s/frame_%05d.png", sets[i], fr * 3);
			const char *path = test_shared_path(rel);
			if (!path)
				continue;
			struct image_u8 grey, bin;
			assert_int_equal(image_read(path, &grey), 0);
			const int w = grey.width, h = grey.height;
			assert_int_equal(image_u8_alloc(&bin, w, h), 0);
			bernsen_cpu(&grey, 4 + fr * 2, 48, &bin);
			struct bitmask m;
			assert_int_equal(bitmask_alloc(&m, w, h), 0);
			bitmask_from_image(&m, &bin);
			const int cap = fr ? 6 : 19;
			struct segment_config sc = {w, h, cap, 0, 0};
			struct segment *seg = segment_create(&sc, NULL);
			struct sim *s = sim_create(w, h, cap, 0, 0);
			same_tree(seg, s, &m, rel);
			n_frames++;
			sim_destroy(s);
			segment_destroy(seg);
			bitmask_free(&m);
			image_u8_free(&bin);
			image_u8_free(&grey);
		}
	if (!n_frames)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_masks),
		cmocka_unit_test(test_odd_sizes),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_shared_frames),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	printf("label simulation: %d trees compared\n", n_compared);
	return rc;
}
