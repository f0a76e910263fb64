#include "segment.h"

#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"

struct segment {
	struct segment_config cfg;
	int32_t cap_runs, cap_regions;
	struct run *runs;
	int32_t *parent;        /* union-find over run indices */
	int32_t *row_first_run; /* max_height + 1 */
	int32_t *row_regions;   /* regions that existed when row y started labelling */
	struct region *regions;
	int32_t *adj;
	struct region_tree tree;
	bool overflow_logged;
};

struct segment *segment_create(const struct segment_config *cfg, int *err)
{
	struct segment *s = NULL;
	int e = ERR_RANGE;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->adj_cap < 2 || cfg->adj_cap > 64) {
		log_error("segment: bad config (size %dx%d, adj_cap %d)", cfg ? cfg->max_width : 0,
			  cfg ? cfg->max_height : 0, cfg ? cfg->adj_cap : 0);
		goto fail;
	}
	e = ERR_NOMEM;
	s = calloc(1, sizeof *s);
	if (!s)
		goto fail;
	s->cfg = *cfg;
	s->cap_runs = regions_run_capacity(cfg->max_width, cfg->max_height);
	s->cap_regions = regions_region_capacity(cfg->max_width, cfg->max_height);
	s->runs = malloc((size_t)s->cap_runs * sizeof *s->runs);
	s->parent = malloc((size_t)s->cap_runs * sizeof *s->parent);
	s->row_first_run = malloc(((size_t)cfg->max_height + 1) * sizeof *s->row_first_run);
	s->row_regions = malloc(((size_t)cfg->max_height + 1) * sizeof *s->row_regions);
	s->regions = malloc((size_t)s->cap_regions * sizeof *s->regions);
	s->adj = malloc((size_t)s->cap_regions * (size_t)cfg->adj_cap * sizeof *s->adj);
	if (!s->runs || !s->parent || !s->row_first_run || !s->row_regions || !s->regions || !s->adj)
		goto fail;
	if (err)
		*err = 0;
	return s;
fail:
	segment_destroy(s);
	if (err)
		*err = e;
	return NULL;
}

void segment_destroy(struct segment *s)
{
	if (!s)
		return;
	free(s->runs);
	free(s->parent);
	free(s->row_first_run);
	free(s->row_regions);
	free(s->regions);
	free(s->adj);
	free(s);
}

/* Appends the runs of one row; returns the new run count, or -1 when the
 * capacity would be exceeded (nothing of this row is kept then). */
static int32_t row_extract(const uint64_t *row, int width, struct run *runs, int32_t n, int32_t cap)
{
	const int n_words = (width + 63) >> 6;
	int x = 0;
	uint64_t flip = (row[0] & 1u) ? ~(uint64_t)0 : 0;
	while (x < width) {
		int wi = x >> 6;
		/* Bits that differ from the current colour, at or after x. */
		uint64_t w = (row[wi] ^ flip) & (~(uint64_t)0 << (x & 63));
		while (!w && ++wi < n_words)
			w = row[wi] ^ flip;
		int end = w ? (wi << 6) + __builtin_ctzll(w) : width;
		if (end > width)
			end = width;
		if (n >= cap)
			return -1;
		runs[n].x = x;
		runs[n].len = end - x;
		runs[n].colour = flip ? 255 : 0;
		n++;
		x = end;
		flip = ~flip;
	}
	return n;
}

static inline int32_t uf_find(int32_t *p, int32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

/* Joins same-coloured runs of two consecutive rows that overlap in x. Both
 * rows cover [0, width) with alternating colours, so a merge walk visits
 * exactly the overlapping pairs. */
static void rows_union(const struct run *runs, int32_t *p, int32_t a, int32_t a_end, int32_t b, int32_t b_end)
{
	while (a < a_end && b < b_end) {
		if (runs[a].colour == runs[b].colour) {
			int32_t rb = uf_find(p, b);
			int32_t ra = uf_find(p, a);
			if (ra < rb)
				p[rb] = ra;
			else if (rb < ra)
				p[ra] = rb;
		}
		int32_t ea = runs[a].x + runs[a].len, eb = runs[b].x + runs[b].len;
		a += ea <= eb;
		b += eb <= ea;
	}
}

static inline int64_t sum_sq(int64_t n) /* 0^2 + ... + n^2 */
{
	return n * (n + 1) * (2 * n + 1) / 6;
}

/* Gives every run its final region and accumulates region statistics.
 * Returns the row at which the region capacity ran out, or -1. */
static int label_runs(struct segment *s, int width, int height)
{
	struct run *runs = s->runs;
	int32_t *p = s->parent;
	struct region *regs = s->regions;
	int32_t n_regions = 0;
	for (int y = 0; y < height; y++) {
		s->row_regions[y] = n_regions;
		const int64_t yy = y;
		const uint8_t edge_row = (y == 0 || y == height - 1) ? REGION_BORDER : 0;
		for (int32_t k = s->row_first_run[y]; k < s->row_first_run[y + 1]; k++) {
			struct run *rn = &runs[k];
			struct region *r;
			const int32_t x0 = rn->x, len = rn->len, x1 = x0 + len - 1;
			if (p[k] == k) {
				if (n_regions >= s->cap_regions)
					return y;
				rn->region = n_regions;
				r = &regs[n_regions++];
				r->colour = rn->colour;
				r->flags = 0;
				r->n_adj = 0;
				r->x0 = x0;
				r->x1 = x1;
				r->y0 = y;
				r->area = 0;
				r->sum_x = r->sum_y = r->sum_xx = r->sum_yy = r->sum_xy = 0;
			} else {
				rn->region = runs[uf_find(p, k)].region;
				r = &regs[rn->region];
				if (x0 < r->x0)
					r->x0 = x0;
				if (x1 > r->x1)
					r->x1 = x1;
			}
			r->y1 = y;
			const int64_t sx = (int64_t)len * x0 + (int64_t)len * (len - 1) / 2;
			r->area += len;
			r->sum_x += sx;
			r->sum_y += len * yy;
			r->sum_xx += sum_sq(x1) - (x0 > 0 ? sum_sq(x0 - 1) : 0);
			r->sum_yy += len * yy * yy;
			r->sum_xy += sx * yy;
			r->flags |= edge_row | ((x0 == 0 || x1 == width - 1) ? REGION_BORDER : 0);
		}
	}
	s->row_regions[height] = n_regions;
	s->tree.n_regions = n_regions;
	return -1;
}

static void saturate(struct region *regs, int32_t *adj, int cap, int32_t a)
{
	struct region *r = &regs[a];
	const int32_t *l = adj + (int64_t)a * cap;
	for (int i = 0; i < r->n_adj; i++)
		regs[l[i]].flags |= REGION_FRAGMENTED;
	r->n_adj = 0;
	r->flags |= REGION_SATURATED;
}

/* Records b in a's list; a region with no free slot left saturates. */
static inline void adj_add_one(struct region *regs, int32_t *adj, int cap, int32_t a, int32_t b)
{
	struct region *r = &regs[a];
	if (r->flags & REGION_SATURATED) {
		regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	int32_t *l = adj + (int64_t)a * cap;
	for (int i = 0; i < r->n_adj; i++)
		if (l[i] == b)
			return;
	if (r->n_adj == cap) {
		saturate(regs, adj, cap, a);
		regs[b].flags |= REGION_FRAGMENTED;
		return;
	}
	l[r->n_adj++] = b;
}

struct edge_cache {
	int32_t a, b;
};

static inline void adj_add(struct segment *s, struct edge_cache *c, int32_t a, int32_t b)
{
	if (a > b) {
		int32_t t = a;
		a = b;
		b = t;
	}
	if (a == c->a && b == c->b)
		return;
	c->a = a;
	c->b = b;
	adj_add_one(s->regions, s->adj, s->cfg.adj_cap, a, b);
	adj_add_one(s->regions, s->adj, s->cfg.adj_cap, b, a);
}

static void build_adjacency(struct segment *s, int height)
{
	const struct run *runs = s->runs;
	struct edge_cache c = {-1, -1};
	for (int y = 0; y < height; y++) {
		int32_t b = s->row_first_run[y], b_end = s->row_first_run[y + 1];
		for (int32_t k = b; k + 1 < b_end; k++)
			adj_add(s, &c, runs[k].region, runs[k + 1].region);
		if (y == 0)
			continue;
		int32_t a = s->row_first_run[y - 1], a_end = b;
		while (a < a_end && b < b_end) {
			if (runs[a].colour != runs[b].colour)
				adj_add(s, &c, runs[a].region, runs[b].region);
			int32_t ea = runs[a].x + runs[a].len, eb = runs[b].x + runs[b].len;
			a += ea <= eb;
			b += eb <= ea;
		}
	}
}

int segment_process(struct segment *s, const struct bitmask *mask, const struct region_tree **out)
{
	if (!s || !mask || !out)
		return ERR_RANGE;
	const int width = mask->width, height = mask->height;
	if (width < 1 || height < 1 || width > s->cfg.max_width || height > s->cfg.max_height ||
	    mask->stride_words < (width + 63) / 64) {
		log_error("segment: frame %dx%d exceeds the configured %dx%d", width, height, s->cfg.max_width,
			  s->cfg.max_height);
		return ERR_SIZE;
	}
	struct region_tree *t = &s->tree;
	t->width = width;
	t->height = height;
	t->overflow = false;
	t->adj_cap = s->cfg.adj_cap;
	t->regions = s->regions;
	t->adj = s->adj;
	t->runs = s->runs;
	t->row_first_run = s->row_first_run;

	int32_t n = 0;
	int y = 0;
	for (; y < height; y++) {
		s->row_first_run[y] = n;
		int32_t m = row_extract(bitmask_row(mask, y), width, s->runs, n, s->cap_runs);
		if (m < 0)
			break;
		for (int32_t k = n; k < m; k++)
			s->parent[k] = k;
		if (y > 0)
			rows_union(s->runs, s->parent, s->row_first_run[y - 1], n, n, m);
		n = m;
	}
	if (y < height) {
		t->overflow = true;
		for (; y <= height; y++)
			s->row_first_run[y] = n;
	}
	s->row_first_run[height] = n;

	int cut = label_runs(s, width, height);
	if (cut >= 0) {
		/* Out of region slots: keep only the rows before `cut`, whose
		 * regions' roots all lie before it, and label again. */
		t->overflow = true;
		for (int yy = cut; yy <= height; yy++)
			s->row_first_run[yy] = s->row_first_run[cut];
		label_runs(s, width, height);
	}
	t->n_runs = s->row_first_run[height];
	if (t->overflow)
		log_once(&s->overflow_logged, LOG_WARN, "segment: frame has more runs or regions than capacity; tree cut short");
	build_adjacency(s, height);
	*out = t;
	return 0;
}
