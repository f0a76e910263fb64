#include "match.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "classify.h"

#define BAD_FLAGS (REGION_BORDER | REGION_SATURATED | REGION_FRAGMENTED)
#define CANON_CAP (TREES_MAX_NODES + 2)

/* A leaf this small or smaller (pixels) is taken for sensor noise inside the
 * region around it, not for a node of the tree. */
#define SPECK_MAX_AREA 2
/* Leaves of at most this bounding-box width + height are left out of the
 * leaf-size filter (amoeba.md §6). */
#define LEAF_FILTER_MIN_SIZE 2

enum node_state {
	ST_RESOLVED = 1u << 0, /* its sub-tree is complete; parent[] is set */
	ST_DEAD = 1u << 1,     /* too deep or too big to be inside a symbol */
	ST_SPECK = 1u << 2,    /* noise leaf: ignored by the tree */
};

/* Over-full candidates (noise added leaves) hold up to this many nodes. */
#define OVER_MAX_NODES 128
#define PRUNE_MAX_ITER 4
/* Merged leaves (merged_decode): a leaf of at least MERGED_AREA_X10 / 10
 * times the median area of the leaves of its colour, among at least
 * MERGED_MIN_LEAVES, and no other leaf of that colour above
 * MERGED_ALONE_X10 / 10 times it. */
#define MERGED_MIN_LEAVES 4
#define MERGED_AREA_X10 16
#define MERGED_ALONE_X10 13
#define MERGED_AREA_MAX_X10 30
#define MERGED_ELONGATION 2.5
/* Small symbols (small_candidate): roots whose sub-tree covers at most
 * SMALL_ROOT_PX squared pixels (a card of about 40 px), in a box of at
 * most SMALL_BOX_PX a side (that square turned 45 degrees). A root that
 * touches the background must fill its sub-tree's moment ellipse to at
 * least SMALL_SOLIDITY: a filled square at any turn gives 0.955, a disc 1,
 * the roots of small symbols measure 0.955-0.97; a ring or card margin
 * around a foreign region (a b symbol's black root that lost its leaves)
 * measured 0.87-0.934. */
#define SMALL_ROOT_PX 32
#define SMALL_BOX_PX (SMALL_ROOT_PX * 3 / 2)
#define SMALL_SOLIDITY 0.945
/* Lists rebuilt without specks (lists_repair): at most REPAIR_MAX groups a
 * frame from at most SEED_MAX seeds; a group of at most REPAIR_MAX_MEMBERS
 * regions, each with at most REPAIR_MAX_NEIGH neighbours and specks. */
#define REPAIR_MAX 64
#define REPAIR_MAX_NEIGH 64
#define REPAIR_MAX_MEMBERS 16
#define REPAIR_POOL (REPAIR_MAX * 128)
#define SEED_MAX 1024
/* Matcher flags beyond the tree's: the region's list is in repair_pool;
 * the region was merged into another or flipped (a speck). */
#define FLAG_REPAIRED (1u << 7)
#define FLAG_GONE (1u << 6)
/* claimed[]: 0, part of a decoded symbol, of a fuzzy one, or of a fuzzy one
 * of the first round (which the second may still decode). */
#define CLAIM_SYMBOL 1
#define CLAIM_FUZZY 2
#define CLAIM_FUZZY_FIRST 3

struct match {
	struct match_config cfg;
	int32_t cap_regions;
	uint8_t *state;
	uint8_t *n_done;  /* resolved children (specks included) */
	uint8_t *height;
	int32_t *dc;      /* descendants, specks excluded */
	int32_t *parent;
	int32_t *queue;
	int32_t *cands;   /* candidate roots, full and fuzzy */
	uint8_t *claimed;
	/* Region flags as the matcher sees them: the tree's, except for
	 * regions whose lists were rebuilt without specks (lists_repair). */
	uint8_t *flags;
	int32_t *repair_at; /* read only where flags has FLAG_REPAIRED: offset in repair_pool */
	int32_t repair_pool[REPAIR_POOL];  /* a list: count, merged index or -1, neighbours */
	int32_t n_repair_pool;
	struct region merged[REPAIR_MAX];  /* a group's region: its members together */
	int32_t seeds[SEED_MAX];           /* regions lists_repair starts from */
	int32_t n_seeds;
	/* valid[d] bit n-1: some tree of depth d has n nodes. */
	uint64_t valid[11];
	uint64_t fuzzy_ok[11];
	/* over[h][n]: a sub-tree of height h with n nodes may be a symbol with
	 * noise leaves added (h = d or d + 1, N < n <= 2N). */
	uint8_t over[11][OVER_MAX_NODES + 1];
	int max_depth, max_nodes, dead_nodes;
	bool again;       /* the second round, on rebuilt lists: decoded symbols only */
};

static int config_apply(struct match *m, const struct match_config *cfg)
{
	if (!cfg->trees || tree_set_count(cfg->trees) < 1) {
		log_error("match: no tree set");
		return ERR_CONFIG;
	}
	memset(m->valid, 0, sizeof m->valid);
	memset(m->fuzzy_ok, 0, sizeof m->fuzzy_ok);
	memset(m->over, 0, sizeof m->over);
	for (int i = 0; i < tree_set_count(cfg->trees); i++) {
		int d = 0, n = 0;
		if (tree_token_info(tree_set_token(cfg->trees, i), &d, &n) < 0 || d > 9 || n > 64 || n < 1)
			continue;
		m->valid[d] |= 1ull << (n - 1);
		/* Fuzzy: 1 or 2 descendants missing, at least 3 left. */
		for (int k = 1; k <= 2; k++)
			if (n - k >= 4)
				m->fuzzy_ok[d] |= 1ull << (n - k - 1);
		for (int h = d; h <= d + 1; h++)
			for (int k = n + 1; k <= 2 * n && k <= OVER_MAX_NODES; k++)
				m->over[h][k] = 1;
	}
	m->max_depth = tree_set_max_depth(cfg->trees);
	m->max_nodes = tree_set_max_nodes(cfg->trees);
	m->dead_nodes = 2 * m->max_nodes < OVER_MAX_NODES ? 2 * m->max_nodes : OVER_MAX_NODES;
	m->cfg = *cfg;
	return 0;
}

static int32_t region_cap(const struct match_config *cfg)
{
	return cfg->max_regions > 0 ? cfg->max_regions : regions_region_capacity(cfg->max_width, cfg->max_height);
}

struct match *match_create(const struct match_config *cfg, int *err)
{
	struct match *m = NULL;
	int e = ERR_RANGE;
	if (!cfg || cfg->max_width < 1 || cfg->max_height < 1 || cfg->max_width > IMAGE_MAX_SIDE ||
	    cfg->max_height > IMAGE_MAX_SIDE || cfg->max_regions < 0 || cfg->max_regions > REGIONS_MAX_CAPACITY) {
		log_error("match: bad frame size or region capacity");
		goto fail;
	}
	e = ERR_NOMEM;
	m = calloc(1, sizeof *m);
	if (!m)
		goto fail;
	m->cap_regions = region_cap(cfg);
	size_t n = (size_t)m->cap_regions;
	m->state = malloc(n);
	m->n_done = malloc(n);
	m->height = malloc(n);
	m->claimed = malloc(n);
	m->flags = malloc(n);
	m->repair_at = malloc(n * sizeof *m->repair_at);
	m->dc = malloc(n * sizeof *m->dc);
	m->parent = malloc(n * sizeof *m->parent);
	m->queue = malloc(n * sizeof *m->queue);
	m->cands = malloc(n * sizeof *m->cands);
	if (!m->state || !m->n_done || !m->height || !m->claimed || !m->dc || !m->parent || !m->queue ||
	    !m->cands || !m->flags || !m->repair_at)
		goto fail;
	e = config_apply(m, cfg);
	if (e < 0)
		goto fail;
	if (err)
		*err = 0;
	return m;
fail:
	match_destroy(m);
	if (err)
		*err = e;
	return NULL;
}

void match_destroy(struct match *m)
{
	if (!m)
		return;
	free(m->state);
	free(m->n_done);
	free(m->height);
	free(m->claimed);
	free(m->flags);
	free(m->repair_at);
	free(m->dc);
	free(m->parent);
	free(m->queue);
	free(m->cands);
	free(m);
}

int match_set_config(struct match *m, const struct match_config *cfg)
{
	if (!m || !cfg)
		return ERR_RANGE;
	if (region_cap(cfg) > m->cap_regions) {
		log_error("match: new frame size %dx%d exceeds the one created for", cfg->max_width, cfg->max_height);
		return ERR_RANGE;
	}
	struct match_config keep_max = *cfg;
	keep_max.max_width = m->cfg.max_width;
	keep_max.max_height = m->cfg.max_height;
	return config_apply(m, &keep_max);
}

/* ---- adjacency as the matcher sees it --------------------------------- */

/* Region r's neighbour list: the tree's, or its rebuilt one (m may be NULL:
 * the tree's). */
static inline const int32_t *adj_of(const struct match *m, const struct region_tree *t, int32_t r, int *n)
{
	if (m && (m->flags[r] & FLAG_REPAIRED)) {
		const int32_t *p = m->repair_pool + m->repair_at[r];
		*n = p[0];
		return p + 2;
	}
	*n = t->regions[r].n_adj;
	return region_adj(t, r);
}

/* Region r's statistics: the tree's, or its group's (lists_repair). */
static const struct region *reg(const struct match *m, const struct region_tree *t, int32_t r)
{
	if (m->flags[r] & FLAG_REPAIRED) {
		const int32_t mi = m->repair_pool[m->repair_at[r] + 1];
		if (mi >= 0)
			return &m->merged[mi];
	}
	return &t->regions[r];
}

/* ---- canonical strings ------------------------------------------------ */

struct canon_ctx {
	const struct match *m;  /* NULL: the tree's lists */
	const struct region_tree *tree;
	const uint8_t *state;   /* NULL: children are all neighbours but the parent */
	const int32_t *parent;
	int32_t dup;            /* this leaf is written twice (a merged pair); -1 none */
	int nodes;
};

static int is_child(const struct canon_ctx *c, int32_t n, int32_t from, int32_t k)
{
	if (k == from)
		return 0;
	if (!c->state)
		return 1;
	return (c->state[k] & (ST_RESOLVED | ST_SPECK)) == ST_RESOLVED && c->parent[k] == n;
}

static int seg_greater(const char *a, int la, const char *b, int lb)
{
	int r = memcmp(a, b, (size_t)(la < lb ? la : lb));
	return r > 0 || (r == 0 && la > lb);
}

/* Writes the string of the sub-tree at n into out; returns its length or
 * ERR_RANGE. Children's strings are written in place, then their slices are
 * put in descending order. */
static int canon_node(struct canon_ctx *c, int32_t n, int32_t from, int depth, char *out, int cap)
{
	if (depth > 9 || cap < 1 || ++c->nodes > TREES_MAX_NODES)
		return ERR_RANGE;
	int n_adj;
	const int32_t *l = adj_of(c->m, c->tree, n, &n_adj);
	int off[TREES_MAX_NODES], len[TREES_MAX_NODES], n_child = 0;
	int pos = 1;
	out[0] = (char)('0' + depth);
	for (int i = 0; i < n_adj; i++) {
		if (!is_child(c, n, from, l[i]))
			continue;
		if (n_child >= TREES_MAX_NODES)
			return ERR_RANGE;
		int k = canon_node(c, l[i], n, depth + 1, out + pos, cap - pos);
		if (k < 0)
			return k;
		off[n_child] = pos;
		len[n_child++] = k;
		pos += k;
		if (l[i] == c->dup) {
			if (n_child >= TREES_MAX_NODES || pos + k > cap || ++c->nodes > TREES_MAX_NODES)
				return ERR_RANGE;
			memcpy(out + pos, out + pos - k, (size_t)k);
			off[n_child] = pos;
			len[n_child++] = k;
			pos += k;
		}
	}
	if (n_child > 1) {
		int order[TREES_MAX_NODES];
		for (int i = 0; i < n_child; i++) {
			int v = i, j = i;
			while (j > 0 && seg_greater(out + off[v], len[v], out + off[order[j - 1]], len[order[j - 1]])) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		char tmp[CANON_CAP];
		int t = 0;
		for (int i = 0; i < n_child; i++) {
			memcpy(tmp + t, out + off[order[i]], (size_t)len[order[i]]);
			t += len[order[i]];
		}
		memcpy(out + 1, tmp, (size_t)t);
	}
	return pos;
}

static int canon_string(struct canon_ctx *c, int32_t root, int32_t from, char *buf, size_t cap)
{
	char tmp[CANON_CAP];
	c->nodes = 0;
	int n = canon_node(c, root, from, 0, tmp, (int)sizeof tmp - 1);
	if (n < 0)
		return n;
	if ((size_t)n + 2 > cap)
		return ERR_RANGE;
	buf[0] = c->tree->regions[root].colour ? 'w' : 'b';
	memcpy(buf + 1, tmp, (size_t)n);
	buf[n + 1] = 0;
	return n + 1;
}

int match_canonical_string(const struct region_tree *tree, int32_t root, int32_t parent, char *buf, size_t cap)
{
	if (!tree || !buf || root < 0 || root >= tree->n_regions || parent >= tree->n_regions)
		return ERR_RANGE;
	if (parent < 0) {
		/* The parent is the neighbour that encloses the root. */
		const struct region *r = &tree->regions[root];
		const int32_t *l = region_adj(tree, root);
		for (int i = 0; i < r->n_adj; i++) {
			const struct region *q = &tree->regions[l[i]];
			if (q->x0 <= r->x0 && q->y0 <= r->y0 && q->x1 >= r->x1 && q->y1 >= r->y1 &&
			    (q->x0 < r->x0 || q->y0 < r->y0 || q->x1 > r->x1 || q->y1 > r->y1)) {
				parent = l[i];
				break;
			}
		}
	}
	struct canon_ctx c = {.tree = tree, .dup = -1};
	return canon_string(&c, root, parent, buf, cap);
}

/* ---- candidates --------------------------------------------------------- */

struct leaf_acc {
	double cx, cy, cw;  /* weighted midpoints, all leaves */
	double bx, by, bw;  /* black leaves */
	int n[2];           /* leaves per colour that enter the size filter */
	int sum_size[2], min_size[2], max_size[2];
};

static void leaves_walk(const struct match *m, const struct region_tree *t, int32_t n, int depth, struct leaf_acc *a)
{
	const struct region *r = reg(m, t, n);
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	int n_child = 0;
	m->claimed[n] = CLAIM_SYMBOL;
	for (int i = 0; i < n_adj; i++) {
		int32_t k = l[i];
		if ((m->state[k] & ST_RESOLVED) && m->parent[k] == n) {
			if (m->state[k] & ST_SPECK) {
				m->claimed[k] = CLAIM_SYMBOL;
				continue;
			}
			n_child++;
			leaves_walk(m, t, k, depth + 1, a);
		}
	}
	if (n_child || depth == 0)
		return;
	const double w = M_PI * (depth + 0.5) * (depth + 0.5);
	const double mx = 0.5 * (r->x0 + r->x1), my = 0.5 * (r->y0 + r->y1);
	a->cx += w * mx;
	a->cy += w * my;
	a->cw += w;
	int c = r->colour ? 1 : 0;
	if (!c) {
		a->bx += w * mx;
		a->by += w * my;
		a->bw += w;
	}
	int size = (r->x1 - r->x0 + 1) + (r->y1 - r->y0 + 1);
	if (size <= LEAF_FILTER_MIN_SIZE)
		return;
	if (a->n[c] == 0 || size < a->min_size[c])
		a->min_size[c] = size;
	if (a->n[c] == 0 || size > a->max_size[c])
		a->max_size[c] = size;
	a->n[c]++;
	a->sum_size[c] += size;
}

static int leaves_uniform(const struct leaf_acc *a)
{
	for (int c = 0; c < 2; c++) {
		if (!a->n[c])
			continue;
		/* min < avg / 2 or max > 2 avg, in integers: avg = sum / n. */
		if (2 * a->min_size[c] * a->n[c] < a->sum_size[c] || a->max_size[c] * a->n[c] > 2 * a->sum_size[c])
			return 0;
	}
	return 1;
}

static void emit(struct fiducial_det *list, int32_t *n, int32_t cap, bool *overflow, const struct region *r,
		 int32_t root, int32_t id, int32_t nodes, const struct leaf_acc *a)
{
	if (*n >= cap) {
		*overflow = true;
		return;
	}
	struct fiducial_det *d = &list[(*n)++];
	d->id = id;
	d->root = root;
	d->n_nodes = nodes;
	int w = r->x1 - r->x0 + 1, h = r->y1 - r->y0 + 1;
	d->size_px = (float)(w > h ? w : h);
	if (a->cw > 0) {
		double x = a->cx / a->cw, y = a->cy / a->cw;
		d->x = (float)x;
		d->y = (float)y;
		double ang = 0;
		if (a->bw > 0) {
			ang = atan2(y - a->by / a->bw, x - a->bx / a->bw) - M_PI / 2;
			ang = fmod(ang, 2 * M_PI);
			if (ang < 0)
				ang += 2 * M_PI;
			if (ang >= 2 * M_PI)
				ang = 0;
		}
		d->angle = (float)ang;
		if (d->angle >= (float)(2 * M_PI))
			d->angle = 0;
	} else {
		d->x = 0.5f * (float)(r->x0 + r->x1);
		d->y = 0.5f * (float)(r->y0 + r->y1);
		d->angle = 0;
	}
}

static int is_valid(const struct match *m, int height, int nodes)
{
	return height >= 0 && height <= 10 && nodes >= 1 && nodes <= 64 && ((m->valid[height] >> (nodes - 1)) & 1u);
}

static int is_fuzzy(const struct match *m, int height, int nodes)
{
	return height >= 0 && height <= 10 && nodes >= 4 && nodes <= 64 && ((m->fuzzy_ok[height] >> (nodes - 1)) & 1u);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Leaves of the sub-tree at n (specks left out), with their depth. */
static int leaves_list(const struct match *m, const struct region_tree *t, int32_t n, int depth, int32_t *leaf,
		       uint8_t *leaf_depth, int n_leaf)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	int n_child = 0;
	for (int i = 0; i < n_adj; i++) {
		int32_t k = l[i];
		if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) == ST_RESOLVED && m->parent[k] == n) {
			n_child++;
			n_leaf = leaves_list(m, t, k, depth + 1, leaf, leaf_depth, n_leaf);
			if (n_leaf < 0)
				return n_leaf;
		}
	}
	if (n_child || depth == 0)
		return n_leaf;
	if (n_leaf >= TREES_MAX_NODES)
		return ERR_RANGE;
	leaf[n_leaf] = n;
	leaf_depth[n_leaf] = (uint8_t)depth;
	return n_leaf + 1;
}

/* Two round leaves side by side: the larger eigenvalue of the pixel
 * covariance at least MERGED_ELONGATION times the smaller (a disc: 1;
 * two touching equal discs: 5). */
static bool elongated(const struct region *g)
{
	const double n = g->area, mx = g->sum_x / n, my = g->sum_y / n;
	const double cxx = g->sum_xx / n - mx * mx, cyy = g->sum_yy / n - my * my, cxy = g->sum_xy / n - mx * my;
	const double tr = 0.5 * (cxx + cyy), det = sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
	const double l1 = tr + det, l2 = tr - det;
	return l2 > 0 ? l1 >= MERGED_ELONGATION * l2 : l1 > 0;
}

/* A candidate one node short of a symbol whose leaves of one colour are
 * all alike but one, which has about twice their area and is elongated
 * like two discs side by side: two leaves merged
 * (a motion streak or blur bridged the gap between them). It is decoded as
 * the tree with that leaf counted twice, when that tree is in the set;
 * the leaf then weighs twice in centre and angle, and the size filter
 * (§6) judges the other leaves. Without a leaf that stands out this way
 * nothing is guessed: which leaf went missing is then unknown, and the
 * default set has other symbols one leaf away. */
static bool merged_decode(struct match *m, const struct region_tree *t, int32_t root, struct leaf_acc *a,
			  int32_t *id)
{
	int32_t leaf[TREES_MAX_NODES];
	uint8_t leaf_depth[TREES_MAX_NODES];
	int n = leaves_list(m, t, root, 0, leaf, leaf_depth, 0);
	if (n < 4)
		return false;
	for (int c = 0; c < 2; c++) {
		int area[TREES_MAX_NODES], k = 0;
		for (int i = 0; i < n; i++)
			if ((reg(m, t, leaf[i])->colour ? 1 : 0) == c)
				area[k++] = reg(m, t, leaf[i])->area;
		if (k < MERGED_MIN_LEAVES)
			continue;
		qsort(area, (size_t)k, sizeof(int), cmp_int);
		const int med = area[(k - 1) / 2];
		int big = -1, n_big = 0;
		for (int i = 0; i < n; i++) {
			const struct region *g = reg(m, t, leaf[i]);
			if ((g->colour ? 1 : 0) != c)
				continue;
			if (10 * g->area >= MERGED_AREA_X10 * med) {
				if (10 * g->area > MERGED_AREA_MAX_X10 * med || !elongated(g))
					return false;
				big = i;
				n_big++;
			} else if (10 * g->area > MERGED_ALONE_X10 * med) {
				n_big = 2;
			}
		}
		if (n_big != 1)
			continue;
		char buf[CANON_CAP];
		struct canon_ctx cc = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = leaf[big]};
		if (canon_string(&cc, root, -1, buf, sizeof buf) <= 0)
			return false;
		int32_t got = tree_set_lookup(m->cfg.trees, buf);
		if (got < 0)
			return false;
		struct leaf_acc u;
		memset(&u, 0, sizeof u);
		for (int i = 0; i < n; i++) {
			if (i == big)
				continue;
			const struct region *g = reg(m, t, leaf[i]);
			int size = (g->x1 - g->x0 + 1) + (g->y1 - g->y0 + 1), cg = g->colour ? 1 : 0;
			if (size <= LEAF_FILTER_MIN_SIZE)
				continue;
			if (u.n[cg] == 0 || size < u.min_size[cg])
				u.min_size[cg] = size;
			if (u.n[cg] == 0 || size > u.max_size[cg])
				u.max_size[cg] = size;
			u.n[cg]++;
			u.sum_size[cg] += size;
		}
		if (!leaves_uniform(&u))
			return false;
		const struct region *g = reg(m, t, leaf[big]);
		const double d = leaf_depth[big], w = M_PI * (d + 0.5) * (d + 0.5);
		const double mx = 0.5 * (g->x0 + g->x1), my = 0.5 * (g->y0 + g->y1);
		a->cx += w * mx;
		a->cy += w * my;
		a->cw += w;
		if (!g->colour) {
			a->bx += w * mx;
			a->by += w * my;
			a->bw += w;
		}
		*id = got;
		return true;
	}
	return false;
}

/* Marks the sub-tree at n (specks included) as claimed by a fuzzy symbol. */
static void claim_fuzzy(struct match *m, const struct region_tree *t, int32_t n, int depth)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	m->claimed[n] = CLAIM_FUZZY;
	if (depth > 10)
		return;
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n)
			claim_fuzzy(m, t, l[i], depth + 1);
}

static void tree_decode(struct match *m, const struct region_tree *t, int32_t root, int height, int nodes,
			struct detections *out)
{
	struct leaf_acc a;
	memset(&a, 0, sizeof a);
	leaves_walk(m, t, root, 0, &a);
	int32_t id = -1;
	if (is_valid(m, height, nodes)) {
		char buf[CANON_CAP];
		struct canon_ctx c = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1};
		if (canon_string(&c, root, -1, buf, sizeof buf) > 0 && leaves_uniform(&a))
			id = tree_set_lookup(m->cfg.trees, buf);
	} else if (is_valid(m, height, nodes + 1) && merged_decode(m, t, root, &a, &id)) {
		nodes++;
	}
	if (id >= 0)
		emit(out->fids, &out->n_fids, out->cap_fids, &out->overflow, reg(m, t, root), root, id, nodes, &a);
	else if (!m->again)
		emit(out->fuzzy, &out->n_fuzzy, out->cap_fuzzy, &out->overflow, reg(m, t, root), root, -1, nodes, &a);
	if (id < 0)
		claim_fuzzy(m, t, root, 0);
}

/* An over-full candidate: leaves far smaller than the median leaf of their
 * colour in this sub-tree are noise (motion ghosts, sensor specks) and are
 * dropped, repeatedly while some are; what is left must be a whole symbol.
 * The leaf-size filter would refuse such leaves anyway, so dropping them
 * cannot turn a symbol the filter accepts into another one. */
static void over_decode(struct match *m, const struct region_tree *t, int32_t root, struct detections *out)
{
	int32_t node[OVER_MAX_NODES + 1];
	int16_t up[OVER_MAX_NODES + 1];
	uint8_t depth[OVER_MAX_NODES + 1], n_kids[OVER_MAX_NODES + 1], alive[OVER_MAX_NODES + 1];
	int n = 0;
	node[0] = root;
	up[0] = -1;
	depth[0] = 0;
	n = 1;
	for (int i = 0; i < n; i++) {
		int n_adj;
		const int32_t *l = adj_of(m, t, node[i], &n_adj);
		n_kids[i] = 0;
		alive[i] = 1;
		if (m->claimed[node[i]] && m->claimed[node[i]] != CLAIM_FUZZY_FIRST)
			return;
		for (int j = 0; j < n_adj; j++) {
			int32_t k = l[j];
			if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[k] != node[i])
				continue;
			if (n > OVER_MAX_NODES || depth[i] >= 9)
				return;
			node[n] = k;
			up[n] = (int16_t)i;
			depth[n] = (uint8_t)(depth[i] + 1);
			n_kids[i]++;
			n++;
		}
	}
	int n_alive = n;
	for (int iter = 0; iter < PRUNE_MAX_ITER; iter++) {
		int sizes[2][OVER_MAX_NODES + 1], n_sz[2] = {0, 0};
		for (int i = 1; i < n; i++) {
			if (!alive[i] || n_kids[i])
				continue;
			const struct region *g = reg(m, t, node[i]);
			int c = g->colour ? 1 : 0;
			sizes[c][n_sz[c]++] = (g->x1 - g->x0 + 1) + (g->y1 - g->y0 + 1);
		}
		int median[2] = {0, 0};
		for (int c = 0; c < 2; c++)
			if (n_sz[c]) {
				qsort(sizes[c], (size_t)n_sz[c], sizeof(int), cmp_int);
				median[c] = sizes[c][n_sz[c] / 2];
			}
		int pruned = 0;
		for (int i = 1; i < n; i++) {
			if (!alive[i] || n_kids[i])
				continue;
			const struct region *g = reg(m, t, node[i]);
			int c = g->colour ? 1 : 0;
			if (2 * ((g->x1 - g->x0 + 1) + (g->y1 - g->y0 + 1)) >= median[c])
				continue;
			alive[i] = 0;
			n_kids[up[i]]--;
			m->state[node[i]] |= ST_SPECK;
			n_alive--;
			pruned++;
		}
		if (!pruned)
			break;
	}
	int height = 0;
	for (int i = 0; i < n; i++)
		if (alive[i] && depth[i] > height)
			height = depth[i];
	if (is_valid(m, height, n_alive) || is_fuzzy(m, height, n_alive))
		tree_decode(m, t, root, height, n_alive, out);
}

/* Pass 0 decodes whole and over-full candidates; pass 1 reports the fuzzy
 * ones that are not part of a symbol found in pass 0. */
static void candidate_decode(struct match *m, const struct region_tree *t, int32_t root, int pass,
			     struct detections *out)
{
	const int h = m->height[root], n = m->dc[root] + 1;
	if (is_valid(m, h, n)) {
		if (pass == 0)
			tree_decode(m, t, root, h, n, out);
	} else if (is_fuzzy(m, h, n)) {
		if (pass == 1 && !m->claimed[root])
			tree_decode(m, t, root, h, n, out);
	} else if (pass == 0) {
		over_decode(m, t, root, out);
	}
}

/* ---- saturated lists rebuilt without specks ------------------------------ */

/* First run of row y that ends right of x. */
static int32_t run_first_after(const struct region_tree *t, int y, int32_t x)
{
	int32_t a = t->row_first_run[y], b = t->row_first_run[y + 1];
	while (a < b) {
		int32_t mid = a + (b - a) / 2;
		if (t->runs[mid].x + t->runs[mid].len <= x)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Adds q to the set s (n entries, at most cap). Returns false when full. */
static bool set_add(int32_t *s, int *n, int cap, int32_t q)
{
	for (int i = 0; i < *n; i++)
		if (s[i] == q)
			return true;
	if (*n >= cap)
		return false;
	s[(*n)++] = q;
	return true;
}

static bool set_has(const int32_t *s, int n, int32_t q)
{
	for (int i = 0; i < n; i++)
		if (s[i] == q)
			return true;
	return false;
}

static bool is_speck(const struct region_tree *t, int32_t q)
{
	return t->regions[q].area <= SPECK_MAX_AREA;
}

/* Adds q to the set s like set_add, counting the regions that are not
 * specks in *n_big; false when full or when that count exceeds big_cap. */
static bool neigh_add(const struct region_tree *t, int32_t *s, int *n, int cap, int *n_big, int big_cap, int32_t q)
{
	for (int i = *n - 1; i >= 0; i--)
		if (s[i] == q)
			return true;
	if (*n >= cap || (!is_speck(t, q) && ++*n_big > big_cap))
		return false;
	s[(*n)++] = q;
	return true;
}

/* Region g's neighbours from the runs (its list was dropped), in raster
 * order of first contact. Returns their count, or -1 when more than cap
 * or more than big_cap of them are not specks (the table, a textured
 * area: given up after a few rows). */
static int neigh_from_runs(const struct region_tree *t, int32_t g, int32_t *nb, int cap, int big_cap)
{
	const struct region *r = &t->regions[g];
	int n = 0, n_big = 0;
	for (int y = r->y0; y <= r->y1; y++) {
		const int32_t lo = t->row_first_run[y], hi = t->row_first_run[y + 1];
		for (int32_t k = run_first_after(t, y, r->x0); k < hi && t->runs[k].x <= r->x1; k++) {
			const struct run *u = &t->runs[k];
			if (u->region != g)
				continue;
			if (k > lo && !neigh_add(t, nb, &n, cap, &n_big, big_cap, t->runs[k - 1].region))
				return -1;
			for (int yy = y - 1; yy <= y + 1; yy += 2) {
				if (yy < 0 || yy >= t->height)
					continue;
				const int32_t hi2 = t->row_first_run[yy + 1];
				for (int32_t j = run_first_after(t, yy, u->x); j < hi2 && t->runs[j].x < u->x + u->len; j++)
					if (t->runs[j].colour != u->colour &&
					    !neigh_add(t, nb, &n, cap, &n_big, big_cap, t->runs[j].region))
						return -1;
			}
			if (k + 1 < hi && !neigh_add(t, nb, &n, cap, &n_big, big_cap, t->runs[k + 1].region))
				return -1;
		}
	}
	return n;
}

/* The group around region g that lists_repair rebuilds: g and the islands
 * of its colour joined to it through specks (members), the specks, the
 * members' other neighbours (nb) and the other regions that touch the
 * specks (other). */
struct repair_group {
	int32_t mem[REPAIR_MAX_MEMBERS], speck[REPAIR_MAX_NEIGH], nb[REPAIR_MAX_NEIGH], other[REPAIR_MAX_NEIGH];
	int n_mem, n_speck, n_nb, n_other;
};

/* Region x's neighbours as the matcher sees them; a saturated region's
 * from the runs, into buf. NULL when there are more than REPAIR_MAX_NEIGH. */
static const int32_t *list_of(const struct match *m, const struct region_tree *t, int32_t x, int32_t *buf, int *n)
{
	if (!(m->flags[x] & REGION_SATURATED))
		return adj_of(m, t, x, n);
	*n = neigh_from_runs(t, x, buf, REPAIR_MAX_NEIGH, t->adj_cap + REPAIR_MAX_MEMBERS);
	return *n < 0 ? NULL : buf;
}

/* An island: a region cut off by a hairline, so that specks outnumber its
 * other neighbours. A hole that a speck merely bridges to the region
 * around its ring (one speck, one ring) is not one. -1: a region no group
 * may hold (on the border, too big, too many neighbours). */
static int island(const struct match *m, const struct region_tree *t, int32_t x, int max_side)
{
	const struct region *r = &t->regions[x];
	if ((r->flags & REGION_BORDER) || r->x1 - r->x0 >= max_side || r->y1 - r->y0 >= max_side)
		return -1;
	int32_t buf[REPAIR_MAX_NEIGH];
	int n, n_speck = 0;
	const int32_t *l = list_of(m, t, x, buf, &n);
	if (!l)
		return -1;
	for (int i = 0; i < n; i++)
		n_speck += is_speck(t, l[i]);
	return 2 * n_speck > n;
}

/* Collects g's group; false when it outgrows its bounds. */
static bool group_collect(const struct match *m, const struct region_tree *t, int32_t g, int max_side,
			  struct repair_group *gr)
{
	gr->n_mem = gr->n_speck = gr->n_nb = gr->n_other = 0;
	gr->mem[gr->n_mem++] = g;
	int x0 = t->regions[g].x0, y0 = t->regions[g].y0, x1 = t->regions[g].x1, y1 = t->regions[g].y1;
	for (int i = 0; i < gr->n_mem; i++) {
		const int32_t x = gr->mem[i];
		const struct region *rx = &t->regions[x];
		int32_t buf[REPAIR_MAX_NEIGH];
		int n;
		if ((m->flags[x] & FLAG_GONE) || (rx->flags & REGION_BORDER))
			return false;
		const int32_t *l = list_of(m, t, x, buf, &n);
		if (!l)
			return false;
		x0 = rx->x0 < x0 ? rx->x0 : x0;
		y0 = rx->y0 < y0 ? rx->y0 : y0;
		x1 = rx->x1 > x1 ? rx->x1 : x1;
		y1 = rx->y1 > y1 ? rx->y1 : y1;
		if (x1 - x0 >= max_side || y1 - y0 >= max_side)
			return false;
		for (int j = 0; j < n; j++) {
			const int32_t q = l[j];
			if (m->flags[q] & FLAG_GONE)
				return false;
			if (!is_speck(t, q)) {
				if (!set_add(gr->nb, &gr->n_nb, REPAIR_MAX_NEIGH, q))
					return false;
				continue;
			}
			if (set_has(gr->speck, gr->n_speck, q))
				continue;
			if (!set_add(gr->speck, &gr->n_speck, REPAIR_MAX_NEIGH, q))
				return false;
			int nq;
			const int32_t *lq = adj_of(m, t, q, &nq);
			for (int k = 0; k < nq; k++) {
				const int32_t o = lq[k];
				if (set_has(gr->mem, gr->n_mem, o) || set_has(gr->other, gr->n_other, o))
					continue;
				if (m->flags[o] & FLAG_GONE)
					return false;
				const int is = island(m, t, o, max_side);
				if (is < 0 || !set_add(is ? gr->mem : gr->other, is ? &gr->n_mem : &gr->n_other,
						       is ? REPAIR_MAX_MEMBERS : REPAIR_MAX_NEIGH, o))
					return false;
			}
		}
	}
	int n = 0;
	for (int j = 0; j < gr->n_nb; j++)
		if (!set_has(gr->mem, gr->n_mem, gr->nb[j]))
			gr->nb[n++] = gr->nb[j];
	gr->n_nb = n;
	n = 0;
	for (int j = 0; j < gr->n_other; j++)
		if (!set_has(gr->nb, gr->n_nb, gr->other[j]))
			gr->other[n++] = gr->other[j];
	gr->n_other = n;
	return gr->n_nb <= t->adj_cap;
}

/* Puts list l (n entries) in the pool for region r, members of the group
 * mapped to its first, specks left out (the caller checked the room); mi:
 * r's statistics in m->merged, or -1 for the tree's. */
static void pool_put(struct match *m, int32_t r, int32_t mi, const int32_t *l, int n, const struct repair_group *gr)
{
	int32_t *p = m->repair_pool + m->n_repair_pool;
	int k = 0;
	for (int i = 0; i < n; i++) {
		int32_t q = l[i];
		if (set_has(gr->speck, gr->n_speck, q))
			continue;
		if (set_has(gr->mem, gr->n_mem, q))
			q = gr->mem[0];
		set_add(p + 2, &k, n, q);
	}
	p[0] = k;
	p[1] = mi;
	m->repair_at[r] = m->n_repair_pool;
	m->n_repair_pool += 2 + k;
	m->flags[r] |= FLAG_REPAIRED;
}

/* Motion streaks leave 1 px diagonal hairlines that shatter into specks:
 * they overflow a region's list (REGION_SATURATED) and cut small islands
 * off it. From each seed (a saturated region, or a speck between regions:
 * its largest neighbour) a group is rebuilt as if its specks were not
 * there: the specks leave every list, and the islands (regions of the
 * seed's colour that touch more specks than other regions) join the seed
 * region g, whose list, from the runs where g's was dropped, holds the
 * members' other neighbours; the lists around are mapped the same way. A
 * region a speck merely bridges to g (a hole whose ring it breaks) stays
 * itself. When g's list fits adj_cap, the group is kept: g loses
 * REGION_SATURATED, REGION_FRAGMENTED follows the new lists, the other
 * members and the specks are FLAG_GONE. Only groups within half the
 * frame's smaller side, off the border, and not part of a decoded symbol.
 * Returns the number of groups kept. */
static int lists_repair(struct match *m, const struct region_tree *t)
{
	m->n_repair_pool = 0;
	if (!t->runs || !t->row_first_run || t->overflow)
		return 0;
	const int max_side = (t->width < t->height ? t->width : t->height) / 2;
	int32_t done[REPAIR_MAX];
	int n_done = 0;
	struct repair_group gr;
	for (int32_t i_seed = 0; i_seed < m->n_seeds && n_done < REPAIR_MAX; i_seed++) {
		const int32_t s = m->seeds[i_seed];
		const struct region *r = &t->regions[s];
		int32_t g = -1;
		if (m->flags[s] & FLAG_GONE)
			continue;
		if (r->flags & REGION_SATURATED) {
			g = s;
		} else {
			const int32_t *l = region_adj(t, s);
			for (int i = 0; i < r->n_adj; i++)
				if (g < 0 || t->regions[l[i]].area > t->regions[g].area)
					g = l[i];
		}
		if (g < 0 || (m->flags[g] & FLAG_GONE) || m->claimed[g] == CLAIM_SYMBOL ||
		    !group_collect(m, t, g, max_side, &gr))
			continue;
		/* A part of a decoded symbol: the second round would skip it. */
		bool found = false;
		for (int i = 1; i < gr.n_mem && !found; i++)
			found = m->claimed[gr.mem[i]] == CLAIM_SYMBOL;
		if (found)
			continue;
		int need = 2 + gr.n_nb;
		for (int j = 0; j < gr.n_nb + gr.n_other; j++) {
			const int32_t q = j < gr.n_nb ? gr.nb[j] : gr.other[j - gr.n_nb];
			if (!(m->flags[q] & REGION_SATURATED)) {
				int nq;
				adj_of(m, t, q, &nq);
				need += 2 + nq;
			}
		}
		if (m->n_repair_pool + need > REPAIR_POOL)
			break;
		int32_t mi = -1;
		if (gr.n_mem > 1 || reg(m, t, g) != &t->regions[g]) {
			struct region *u = &m->merged[n_done];
			mi = n_done;
			*u = *reg(m, t, g);
			for (int i = 1; i < gr.n_mem; i++) {
				const struct region *v = reg(m, t, gr.mem[i]);
				u->x0 = v->x0 < u->x0 ? v->x0 : u->x0;
				u->y0 = v->y0 < u->y0 ? v->y0 : u->y0;
				u->x1 = v->x1 > u->x1 ? v->x1 : u->x1;
				u->y1 = v->y1 > u->y1 ? v->y1 : u->y1;
				u->area += v->area;
				u->sum_x += v->sum_x;
				u->sum_y += v->sum_y;
				u->sum_xx += v->sum_xx;
				u->sum_yy += v->sum_yy;
				u->sum_xy += v->sum_xy;
			}
		}
		pool_put(m, g, mi, gr.nb, gr.n_nb, &gr);
		for (int j = 0; j < gr.n_nb + gr.n_other; j++) {
			const int32_t q = j < gr.n_nb ? gr.nb[j] : gr.other[j - gr.n_nb];
			if (m->flags[q] & REGION_SATURATED)
				continue;
			int nq;
			const int32_t *lq = adj_of(m, t, q, &nq);
			int32_t tmp[64];
			memcpy(tmp, lq, (size_t)nq * sizeof *tmp);
			pool_put(m, q, -1, tmp, nq, &gr);
		}
		m->flags[g] &= (uint8_t)~REGION_SATURATED;
		for (int i = 1; i < gr.n_mem; i++)
			m->flags[gr.mem[i]] |= FLAG_GONE | REGION_FRAGMENTED;
		for (int i = 0; i < gr.n_speck; i++)
			m->flags[gr.speck[i]] |= FLAG_GONE | REGION_FRAGMENTED;
		done[n_done++] = g;
	}
	/* REGION_FRAGMENTED again from the new lists: touches a saturated region. */
	for (int i = 0; i < n_done; i++) {
		if (m->flags[done[i]] & FLAG_GONE)
			continue;
		int n;
		const int32_t *l = adj_of(m, t, done[i], &n);
		for (int j = -1; j < n; j++) {
			const int32_t q = j < 0 ? done[i] : l[j];
			if (m->flags[q] & (REGION_SATURATED | FLAG_GONE))
				continue;
			int nq;
			const int32_t *lq = adj_of(m, t, q, &nq);
			bool touches = false;
			for (int k = 0; k < nq && !touches; k++)
				touches = (m->flags[lq[k]] & REGION_SATURATED) != 0;
			if (touches)
				m->flags[q] |= REGION_FRAGMENTED;
			else
				m->flags[q] &= (uint8_t)~REGION_FRAGMENTED;
		}
	}
	return n_done;
}

/* Bottom-up from the leaves (amoeba.md §5): a region whose neighbours but
 * one are finished sub-trees is finished too, and the remaining neighbour is
 * its parent. Returns the number of candidate roots put in m->cands. */
struct subtree_sum {
	int nodes, height;
	double n, sx, sy, sxx, syy, sxy;  /* pixel moments of the sub-tree's regions together */
};

/* Nodes, height and filled moments of the resolved sub-tree at n, specks
 * included. */
static void subtree_sum(const struct match *m, const struct region_tree *t, int32_t n, int depth,
			struct subtree_sum *s)
{
	const struct region *g = reg(m, t, n);
	s->nodes++;
	if (depth > s->height)
		s->height = depth;
	s->n += g->area;
	s->sx += (double)g->sum_x;
	s->sy += (double)g->sum_y;
	s->sxx += (double)g->sum_xx;
	s->syy += (double)g->sum_yy;
	s->sxy += (double)g->sum_xy;
	if (depth > 10 || s->nodes > TREES_MAX_NODES)
		return;
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n)
			subtree_sum(m, t, l[i], depth + 1, s);
}

static void specks_keep(struct match *m, const struct region_tree *t, int32_t n, int depth)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	m->state[n] &= (uint8_t)~ST_SPECK;
	if (depth > 10)
		return;
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n)
			specks_keep(m, t, l[i], depth + 1);
}

/* A small resolved region p (SMALL_ROOT_PX) that is not a whole
 * symbol as counted, or that touches a saturated region, read at its own
 * scale. On small symbols the holes of the blobs shrink to 1-2 px, the
 * size of the specks that are noise on bigger ones: when the sub-tree is
 * no symbol without its specks but is one with them, they are its leaves
 * (p's counts then include them). And the ring and card margin, a pixel
 * or so wide, merge with the table, so the root touches the saturated
 * background (REGION_FRAGMENTED): such a root's list is still complete,
 * and it is taken when its sub-tree is a whole symbol that fills its
 * moment ellipse (SMALL_SOLIDITY), as the inside of a ring does and a
 * piece of margin or table around a foreign region does not. True: p is
 * a whole candidate now. */
static bool small_candidate(struct match *m, const struct region_tree *t, int32_t p)
{
	const struct region *g = reg(m, t, p);
	if (g->x1 - g->x0 >= SMALL_BOX_PX || g->y1 - g->y0 >= SMALL_BOX_PX)
		return false;
	const bool frag = (m->flags[p] & REGION_FRAGMENTED) != 0;
	const int h = m->height[p], n = m->dc[p] + 1;
	struct subtree_sum s;
	memset(&s, 0, sizeof s);
	subtree_sum(m, t, p, 0, &s);
	if (s.n > SMALL_ROOT_PX * SMALL_ROOT_PX)
		return false;
	const bool with_specks = !is_valid(m, h, n) && s.nodes > n && is_valid(m, s.height, s.nodes);
	if (!with_specks && !(frag && is_valid(m, h, n)))
		return false;
	if (frag) {
		const double mx = s.sx / s.n, my = s.sy / s.n;
		const double cxx = s.sxx / s.n - mx * mx, cyy = s.syy / s.n - my * my, cxy = s.sxy / s.n - mx * my;
		const double det = cxx * cyy - cxy * cxy;
		if (det <= 0 || s.n < SMALL_SOLIDITY * 4 * M_PI * sqrt(det))
			return false;
	}
	if (with_specks) {
		specks_keep(m, t, p, 0);
		m->height[p] = (uint8_t)s.height;
		m->dc[p] = s.nodes - 1;
	}
	return true;
}

static int32_t candidates_find(struct match *m, const struct region_tree *t)
{
	int32_t qt = 0, n_cands = 0;
	const int max_side = (t->width < t->height ? t->width : t->height) / 2;
	if (!m->again)
		m->n_seeds = 0;
	for (int32_t r = 0; r < t->n_regions; r++) {
		m->n_done[r] = 0;
		m->height[r] = 0;
		m->dc[r] = 0;
		m->state[r] = 0;
		if (!m->again) {
			const struct region *g = &t->regions[r];
			m->claimed[r] = 0;
			m->flags[r] = g->flags;
			/* Seeds of lists_repair: saturated parts, specks between regions. */
			if (m->n_seeds < SEED_MAX &&
			    ((g->area <= SPECK_MAX_AREA && g->n_adj >= 2) ||
			     ((g->flags & (REGION_SATURATED | REGION_BORDER)) == REGION_SATURATED &&
			      g->x1 - g->x0 < max_side && g->y1 - g->y0 < max_side)))
				m->seeds[m->n_seeds++] = r;
		}
		int n_adj;
		const int32_t *l = adj_of(m, t, r, &n_adj);
		if (n_adj == 1 && !(m->flags[r] & BAD_FLAGS)) {
			m->state[r] = ST_RESOLVED | (reg(m, t, r)->area <= SPECK_MAX_AREA ? ST_SPECK : 0);
			m->parent[r] = l[0];
			m->queue[qt++] = r;
		}
	}
	for (int32_t qh = 0; qh < qt; qh++) {
		const int32_t r = m->queue[qh];
		const int32_t p = m->parent[r];
		/* A fragmented region may still be a small symbol's root (small_candidate). */
		if ((m->flags[p] & (REGION_BORDER | REGION_SATURATED)) || (m->state[p] & (ST_RESOLVED | ST_DEAD)) ||
		    ((m->flags[p] & REGION_FRAGMENTED) &&
		     (t->regions[p].x1 - t->regions[p].x0 >= SMALL_BOX_PX ||
		      t->regions[p].y1 - t->regions[p].y0 >= SMALL_BOX_PX)))
			continue;
		m->n_done[p]++;
		if (!(m->state[r] & ST_SPECK)) {
			if (m->height[r] + 1 > m->height[p])
				m->height[p] = (uint8_t)(m->height[r] + 1);
			m->dc[p] += m->dc[r] + 1;
		}
		if (m->height[p] > m->max_depth + 1 || m->dc[p] + 1 > m->dead_nodes) {
			m->state[p] |= ST_DEAD;
			continue;
		}
		int n_adj;
		const int32_t *l = adj_of(m, t, p, &n_adj);
		if (m->n_done[p] != n_adj - 1)
			continue;
		m->state[p] |= ST_RESOLVED;
		m->parent[p] = -1;
		if ((m->flags[p] & REGION_FRAGMENTED) || !is_valid(m, m->height[p], m->dc[p] + 1)) {
			if (small_candidate(m, t, p)) {
				m->cands[n_cands++] = p;
				continue;
			}
			/* Its other neighbour is the saturated background. */
			if (m->flags[p] & REGION_FRAGMENTED)
				continue;
		}
		const int h = m->height[p], n = m->dc[p] + 1;
		if (is_valid(m, h, n)) {
			/* Candidates do not nest: do not climb past one. */
			m->cands[n_cands++] = p;
			continue;
		}
		/* A fuzzy or over-full one may also be a part of a symbol
		 * (a blob whose hole holds a speck): try it, and climb on. */
		if (is_fuzzy(m, h, n) || m->over[h][n])
			m->cands[n_cands++] = p;
		for (int i = 0; i < n_adj; i++) {
			int32_t k = l[i];
			if (!((m->state[k] & ST_RESOLVED) && m->parent[k] == p)) {
				m->parent[p] = k;
				break;
			}
		}
		if (m->parent[p] >= 0)
			m->queue[qt++] = p;
	}
	return n_cands;
}

/* True when some region of the sub-tree at n is claimed by a symbol. */
static bool subtree_claimed(const struct match *m, const struct region_tree *t, int32_t n, int depth)
{
	if (m->claimed[n] == CLAIM_SYMBOL)
		return true;
	if (depth > 10)
		return false;
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n && subtree_claimed(m, t, l[i], depth + 1))
			return true;
	return false;
}

/* The second round: the tree again with rebuilt lists (lists_repair), for
 * what the first left alone. Only decoded symbols are kept; a fuzzy one of
 * the first round where one is now decoded is dropped. So a symbol the
 * tree as segmented yields is reported exactly as without the repair. */
static void again_decode(struct match *m, const struct region_tree *t, struct detections *out)
{
	const int32_t n_fids = out->n_fids;
	for (int32_t r = 0; r < t->n_regions; r++)
		if (m->claimed[r] == CLAIM_FUZZY)
			m->claimed[r] = CLAIM_FUZZY_FIRST;
	m->again = true;
	const int32_t n_cands = candidates_find(m, t);
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n_cands; i++) {
			const int32_t c = m->cands[i];
			const int h = m->height[c], n = m->dc[c] + 1;
			if (subtree_claimed(m, t, c, 0))
				continue;
			if (pass == 0 && is_valid(m, h, n))
				tree_decode(m, t, c, h, n, out);
			else if (pass == 1 && is_fuzzy(m, h, n))
				tree_decode(m, t, c, h, n, out);
		}
	m->again = false;
	for (int32_t i = n_fids; i < out->n_fids; i++) {
		const struct region *q = reg(m, t, out->fids[i].root);
		int32_t k = 0;
		for (int32_t j = 0; j < out->n_fuzzy; j++) {
			const struct fiducial_det *z = &out->fuzzy[j];
			if (z->x >= (float)q->x0 && z->x <= (float)q->x1 && z->y >= (float)q->y0 && z->y <= (float)q->y1)
				continue;
			out->fuzzy[k++] = *z;
		}
		out->n_fuzzy = k;
	}
}

/* Region g's area with what it encloses: the boxes of its neighbours that
 * lie inside its own box (holes; for a root ring, the black region that
 * holds the blobs). O(neighbours); a saturated region has none listed. */
static int64_t filled_area(const struct region_tree *t, int32_t g)
{
	const struct region *r = &t->regions[g];
	const int32_t *l = region_adj(t, g);
	int64_t filled = r->area;
	for (int i = 0; i < r->n_adj; i++) {
		const struct region *q = &t->regions[l[i]];
		if (q->x0 > r->x0 && q->y0 > r->y0 && q->x1 < r->x1 && q->y1 < r->y1)
			filled += (int64_t)(q->x1 - q->x0 + 1) * (q->y1 - q->y0 + 1);
	}
	return filled;
}

/* Pixels between region g's first and last pixel of each of its rows (a
 * ring broken open on one side still spans its box). Runs of a row are
 * sorted by x: binary searches and short walks in from the ends of its box
 * find them. */
static int64_t row_span_fill(const struct region_tree *t, int32_t g)
{
	const struct region *r = &t->regions[g];
	int64_t filled = 0;
	for (int y = r->y0; y <= r->y1; y++) {
		const int32_t hi = t->row_first_run[y + 1];
		int32_t a = t->row_first_run[y], b = hi;
		while (a < b) {
			int32_t mid = a + (b - a) / 2;
			if (t->runs[mid].x + t->runs[mid].len <= r->x0)
				a = mid + 1;
			else
				b = mid;
		}
		int32_t first = -1;
		for (int32_t k = a; k < hi && t->runs[k].x <= r->x1; k++)
			if (t->runs[k].region == g) {
				first = k;
				break;
			}
		if (first < 0)
			continue;
		a = first;
		b = hi;
		while (a < b) {
			int32_t mid = a + (b - a) / 2;
			if (t->runs[mid].x <= r->x1)
				a = mid + 1;
			else
				b = mid;
		}
		for (int32_t k = a - 1; k >= first; k--)
			if (t->runs[k].region == g) {
				filled += t->runs[k].x + t->runs[k].len - t->runs[first].x;
				break;
			}
	}
	return filled;
}

/* A ring broken open by a gap keeps its centroid near its box centre; half
 * a ring (an arch, the other half split off) does not. */
static bool centroid_central(const struct region *r)
{
	const int64_t w = r->x1 - r->x0 + 1, h = r->y1 - r->y0 + 1;
	const int64_t dx = 2 * r->sum_x - (int64_t)r->area * (r->x0 + r->x1);
	const int64_t dy = 2 * r->sum_y - (int64_t)r->area * (r->y0 + r->y1);
	/* |centroid - centre| <= a tenth of the side, times 2 area */
	return 10 * llabs(dx) <= 2 * w * r->area && 10 * llabs(dy) <= 2 * h * r->area;
}

/* A symbol's root is either a filled white area (black blobs in it) or a
 * thin white ring around one black region that holds the blobs. A ring
 * fills little of its box, but with what it encloses it does (or, broken
 * open by blur, with its row spans, centroid still central); long bars, L
 * shapes and half rings stay out. Black regions are offered too: when blur
 * breaks the black card edge, the ring merges with the table and the black
 * region inside it is what is left of the symbol's shape. */
static void roots_find(const struct match *m, const struct region_tree *t, struct detections *out)
{
	const float lo = m->cfg.root_min_px, hi = m->cfg.root_max_px;
	if (hi <= 0)
		return;
	for (int32_t r = 0; r < t->n_regions; r++) {
		const struct region *g = &t->regions[r];
		if (g->flags & REGION_BORDER)
			continue;
		int w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
		int big = w > h ? w : h, small = w > h ? h : w;
		if (big < lo || big > hi || 3 * small < 2 * big)
			continue;
		const int64_t box = (int64_t)w * h;
		if (4 * (int64_t)g->area < box && 4 * filled_area(t, r) < box &&
		    (!t->runs || !centroid_central(g) || 4 * row_span_fill(t, r) < box))
			continue;
		if (out->n_roots >= out->cap_roots) {
			out->overflow = true;
			return;
		}
		struct root_det *d = &out->roots[out->n_roots++];
		d->x = 0.5f * (float)(g->x0 + g->x1);
		d->y = 0.5f * (float)(g->y0 + g->y1);
		d->size_px = (float)big;
		d->region = r;
	}
}

/* Regions inside a symbol's root box are part of the symbol for the
 * classifiers, even when the tree did not take them (specks, damage). */
static void claim_boxes(struct match *m, const struct region_tree *t, const struct detections *out)
{
	const int32_t n_boxes = out->n_fids + out->n_fuzzy;
	if (!n_boxes)
		return;
	for (int32_t r = 0; r < t->n_regions; r++) {
		if (m->claimed[r])
			continue;
		const struct region *g = &t->regions[r];
		for (int32_t i = 0; i < n_boxes; i++) {
			const struct fiducial_det *d = i < out->n_fids ? &out->fids[i] : &out->fuzzy[i - out->n_fids];
			const struct region *q = reg(m, t, d->root);
			if (g->x0 >= q->x0 && g->x1 <= q->x1 && g->y0 >= q->y0 && g->y1 <= q->y1) {
				m->claimed[r] = 1;
				break;
			}
		}
	}
}

int match_process(struct match *m, const struct region_tree *tree, const struct image_u8 *grey,
		  struct detections *out)
{
	if (!m || !tree || !out)
		return ERR_RANGE;
	if (tree->n_regions > m->cap_regions) {
		log_error("match: %d regions exceed the capacity %d", tree->n_regions, m->cap_regions);
		return ERR_SIZE;
	}
	detections_clear(out);
	out->width = tree->width;
	out->height = tree->height;
	m->again = false;
	int32_t n_cands = candidates_find(m, tree);
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n_cands; i++)
			candidate_decode(m, tree, m->cands[i], pass, out);
	if (lists_repair(m, tree) > 0)
		again_decode(m, tree, out);
	roots_find(m, tree, out);
	const bool want_fingers = m->cfg.finger_size_px > 0 && grey;
	const bool want_blobs = m->cfg.blob_max_px > 0;
	if (want_fingers || want_blobs) {
		claim_boxes(m, tree, out);
		if (want_fingers)
			fingers_find(&m->cfg, tree, grey, m->claimed, out);
		if (want_blobs)
			blobs_find(&m->cfg, tree, m->claimed, out);
	}
	return 0;
}
