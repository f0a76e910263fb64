/* decode.c - the matcher's decoding: canonical strings, leaf filter, lookup,
 * centre and angle (match_int.h step 2). */
#include "match_int.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/sort.h"
#include "../segment/segment.h"

#define CANON_CAP (TREES_MAX_NODES + 2)
/* Leaves of at most this bounding-box width + height are left out of the
 * leaf-size filter (amoeba.md §6). */
#define LEAF_FILTER_MIN_SIZE 2
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
/* Three leaves merged in a row (merged_decode, two nodes short): up to
 * MERGED3_AREA_MAX_X10 / 10 times the median area, elongation at least
 * MERGED3_ELONGATION. */
#define MERGED3_AREA_MAX_X10 45
#ifndef MERGED_MAX_SHORT
#define MERGED_MAX_SHORT 2
#endif
#define MERGED3_ELONGATION 5.0
/* even_leaves (leaves_even): no leaf under 1 / EVEN_LEAF_DIV of the
 * median area of its colour. */
#define EVEN_LEAF_DIV 3

/* ---- canonical strings ------------------------------------------------ */

struct canon_ctx {
	const struct match *m;  /* NULL: the tree's lists */
	const struct region_tree *tree;
	const uint8_t *state;   /* NULL: children are all neighbours but the parent */
	const int32_t *parent;
	int32_t dup, dup2;      /* leaves written 1 + dup_times times (merged ones); -1 none */
	int32_t uncut;          /* this node's ST_CUT children are left out; -1 none */
	int dup_times;
	int nodes;
};

static int is_child(const struct canon_ctx *c, int32_t n, int32_t from, int32_t k)
{
	if (k == from)
		return 0;
	if (!c->state)
		return 1;
	if (n == c->uncut && (c->state[k] & ST_CUT))
		return 0;
	return (c->state[k] & (ST_RESOLVED | ST_SPECK)) == ST_RESOLVED && c->parent[k] == n;
}

/* Whether string a (la bytes) sorts after b (lb bytes), as memcmp() and
 * then the longer: byte by byte here, the strings being a few bytes (a
 * leaf's one) and memcmp()'s call costing more than their bytes. */
static int seg_greater(const char *a, int la, const char *b, int lb)
{
	const int n = la < lb ? la : lb;
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return (unsigned char)a[i] > (unsigned char)b[i];
	return la > lb;
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
		for (int d = 0; (l[i] == c->dup || l[i] == c->dup2) && d < c->dup_times; d++) {
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
		bool moved = false;
		for (int i = 0; i < n_child; i++) {
			int v = i, j = i;
			while (j > 0 && seg_greater(out + off[v], len[v], out + off[order[j - 1]], len[order[j - 1]])) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
			moved |= j != i;
		}
		/* Already in order (often: leaves, and the list's own order). */
		if (!moved)
			return pos;
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
	struct canon_ctx c = {.tree = tree, .dup = -1, .dup2 = -1, .uncut = -1};
	return canon_string(&c, root, parent, buf, cap);
}

/* ---- decoding a candidate ------------------------------------------------ */

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
		 int32_t root, int32_t id, int32_t nodes, bool completed, const struct leaf_acc *a)
{
	if (*n >= cap) {
		*overflow = true;
		return;
	}
	struct fiducial_det *d = &list[(*n)++];
	d->id = id;
	d->root = root;
	d->n_nodes = nodes;
	d->completed = completed;
	d->votes = 0;
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
		if (kept_child(m, k, n)) {
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

/* Round leaves side by side: the larger eigenvalue of the pixel
 * covariance at least ratio times the smaller (a disc: 1; two touching
 * equal discs: 5; three in a row: about 12). */
static bool elongated(const struct region *g, double ratio)
{
	const double n = g->area, mx = g->sum_x / n, my = g->sum_y / n;
	const double cxx = g->sum_xx / n - mx * mx, cyy = g->sum_yy / n - my * my, cxy = g->sum_xy / n - mx * my;
	const double tr = 0.5 * (cxx + cyy), det = sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
	const double l1 = tr + det, l2 = tr - det;
	return l2 > 0 ? l1 >= ratio * l2 : l1 > 0;
}

/* The areas of the leaves of colour c (0 black, 1 white) among leaf[0..n),
 * ascending, into area; returns how many. */
static int colour_areas(const struct match *m, const struct region_tree *t, const int32_t *leaf, int n, int c,
			int *area)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if ((reg(m, t, leaf[i])->colour ? 1 : 0) == c)
			area[k++] = reg(m, t, leaf[i])->area;
	sort_inplace(area, (size_t)k, sizeof(int), cmp_int);
	return k;
}

static bool moved_in_set(const struct tree_set *set, const char *canon, int j, int dh);
static bool opened_ring(const struct match *m, const struct region_tree *t, int32_t leaf, const char *canon);
static bool blob_bay(const struct match *m, const struct region_tree *t, int32_t root);
static bool wall_piece(const struct match *m, const struct region_tree *t, int32_t root, int32_t leaf);

/* A candidate `short_by` nodes (1 or 2) short of a symbol whose leaves of
 * one colour are all alike but a few outsized, elongated ones: leaves
 * merged (a motion streak or blur bridged the gap between them). One node
 * short: exactly one leaf has about twice the median area (two discs side
 * by side) and is counted twice. Two nodes short: either two such leaves,
 * each counted twice, or one leaf of about three times the median area,
 * elongated like three discs in a row, counted three times; no leaf of
 * another size stands out. The tree so counted is decoded when it is in
 * the set; the merged leaves weigh as many times in centre and angle, and
 * the size filter (§6) judges the other leaves. Without leaves that stand
 * out this way nothing is guessed: which leaf went missing is then
 * unknown, and the default set has other symbols one leaf away. One leaf
 * counted twice that may be a one-hole blob whose wall a cut opened
 * (opened_ring, a dot), or beside a blob whose hole opened into a bay of
 * its outline (blob_bay: the node lost may be that hole; a dot or a hole
 * counted twice alike; every scale and pass but the small-symbol pass,
 * few_specks without bays, whose 1-2 px walls and holes leave ragged
 * outlines), or a dot that may be a piece of a broken blob's wall
 * (wall_piece), reads nothing and sets *ring: the caller then tries no
 * other reading. */
static bool merged_decode(struct match *m, const struct region_tree *t, int32_t root, int short_by,
			  struct leaf_acc *a, int32_t *id, bool *ring)
{
	int32_t leaf[TREES_MAX_NODES];
	uint8_t leaf_depth[TREES_MAX_NODES];
	int n = leaves_list(m, t, root, 0, leaf, leaf_depth, 0);
	if (n < 4)
		return false;
	for (int c = 0; c < 2; c++) {
		int area[TREES_MAX_NODES];
		const int k = colour_areas(m, t, leaf, n, c, area);
		if (k < MERGED_MIN_LEAVES)
			continue;
		const int med = area[(k - 1) / 2];
		/* big[]: the outsized leaves; mult: how many each stands for. */
		int big[2] = {-1, -1}, n_big = 0, mult = 2;
		bool odd = false;
		for (int i = 0; i < n && !odd; i++) {
			const struct region *g = reg(m, t, leaf[i]);
			if ((g->colour ? 1 : 0) != c)
				continue;
			if (10 * g->area >= MERGED_AREA_X10 * med) {
				const bool triple = short_by == 2 && 10 * g->area > MERGED_AREA_MAX_X10 * med;
				if (triple ? 10 * g->area > MERGED3_AREA_MAX_X10 * med || !elongated(g, MERGED3_ELONGATION)
					   : 10 * g->area > MERGED_AREA_MAX_X10 * med || !elongated(g, MERGED_ELONGATION))
					return false;
				if (n_big == 2) {
					odd = true;
					break;
				}
				if (triple)
					mult = 3;
				big[n_big++] = i;
			} else if (10 * g->area > MERGED_ALONE_X10 * med) {
				odd = true;
			}
		}
		if (odd || n_big < 1)
			continue;
		/* As many nodes as were lost: (mult - 1) a leaf. */
		if (n_big == 2 ? mult != 2 || short_by != 2 : mult - 1 != short_by)
			continue;
		char buf[CANON_CAP];
		struct canon_ctx cc = {.m = m, .tree = t, .state = m->state, .parent = m->parent,
				       .dup = leaf[big[0]], .dup2 = n_big == 2 ? leaf[big[1]] : -1,
				       .dup_times = mult - 1, .uncut = -1};
		if (canon_string(&cc, root, -1, buf, sizeof buf) <= 0)
			return false;
		int32_t got = tree_set_lookup(m->cfg.trees, buf);
		if (got < 0)
			return false;
		if (n_big == 1 && mult == 2 &&
		    ((leaf_depth[big[0]] == 1 &&
		      (opened_ring(m, t, leaf[big[0]], buf) || wall_piece(m, t, root, leaf[big[0]]))) ||
		     ((m->cfg.bays || !m->cfg.few_specks) && blob_bay(m, t, root)))) {
			*ring = true;
			return false;
		}
		struct leaf_acc u;
		memset(&u, 0, sizeof u);
		for (int i = 0; i < n; i++) {
			if (i == big[0] || i == big[1])
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
		for (int b = 0; b < n_big; b++) {
			const struct region *g = reg(m, t, leaf[big[b]]);
			const double d = leaf_depth[big[b]], w = (mult - 1) * M_PI * (d + 0.5) * (d + 0.5);
			const double mx = 0.5 * (g->x0 + g->x1), my = 0.5 * (g->y0 + g->y1);
			a->cx += w * mx;
			a->cy += w * my;
			a->cw += w;
			if (!g->colour) {
				a->bx += w * mx;
				a->by += w * my;
				a->bw += w;
			}
		}
		*id = got;
		return true;
	}
	return false;
}

/* moved_in_set(set, canon, j, 1), looked up once a j: known[j] 0 not
 * looked up yet, 1 the tree is in the set, 2 not. */
static bool moved_memo(const struct tree_set *set, const char *canon, uint8_t *known, int j)
{
	if (!known[j])
		known[j] = moved_in_set(set, canon, j, 1) ? 1 : 2;
	return known[j] == 1;
}

/* Whether the boxes of regions a and b lie within gap pixels of each
 * other (0: they overlap or touch). */
static bool boxes_near(const struct region *a, const struct region *b, int gap)
{
	return a->x0 <= b->x1 + gap && b->x0 <= a->x1 + gap && a->y0 <= b->y1 + gap && b->y0 <= a->y1 + gap;
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

/* Whether the canonical children a (the root's, after its colour letter
 * and depth digit) hold every child of b, as multisets; both in canonical
 * order (descending), so one pass over each. */
static bool children_hold(const char *a, const char *b)
{
	while (*b) {
		int lb = 1;
		while (b[lb] && b[lb] != '1')
			lb++;
		for (;;) {
			if (!*a)
				return false;
			int la = 1;
			while (a[la] && a[la] != '1')
				la++;
			const char *ca = a;
			a += la;
			if (la == lb && !memcmp(ca, b, (size_t)lb))
				break;
			if (seg_greater(b, lb, ca, la))
				return false;
		}
		b += lb;
	}
	return true;
}

/* A root the frame's edge may have cut (ST_CUT): beyond the edge there may
 * be more branches, and a branch on the edge may have lost or gained
 * nodes there. What is certain is its branches clear of the edge; the
 * symbol is read only when exactly one tree of the set holds them all, and
 * that is the tree read (a tree of the set that the cut turned into
 * another stays unread). */
static bool cut_unique(const struct match *m, const struct region_tree *t, int32_t root, int32_t id)
{
	char buf[CANON_CAP];
	struct canon_ctx c = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1, .dup2 = -1,
			      .uncut = root};
	if (canon_string(&c, root, -1, buf, sizeof buf) < 2)
		return false;
	const int n = tree_set_count(m->cfg.trees);
	int found = 0;
	for (int i = 0; i < n; i++) {
		const char *tok = tree_set_token(m->cfg.trees, i);
		if (tok[0] != buf[0] || !children_hold(tok + 2, buf + 2))
			continue;
		if (i != id || ++found > 1)
			return false;
	}
	return found == 1;
}

/* Whether every leaf of the sub-tree at root (specks left out) has at
 * least 1 / EVEN_LEAF_DIV of the median area of the leaves of its colour.
 * A blob's wall that a threshold broke leaves a sliver beside it, a leaf
 * the size filter (§6, on box sides) still takes for a dot, while the
 * blob lost a hole: the same node count, another symbol of the set. */
static bool leaves_even(const struct match *m, const struct region_tree *t, int32_t root)
{
	int32_t leaf[TREES_MAX_NODES];
	uint8_t leaf_depth[TREES_MAX_NODES];
	const int n = leaves_list(m, t, root, 0, leaf, leaf_depth, 0);
	if (n < 0)
		return false;
	for (int c = 0; c < 2; c++) {
		int area[TREES_MAX_NODES];
		const int k = colour_areas(m, t, leaf, n, c, area);
		if (!k)
			continue;
		if (EVEN_LEAF_DIV * area[0] < area[(k - 1) / 2])
			return false;
	}
	return true;
}

/* ---- a blob cut in two ---------------------------------------------------- */

/* The pair's box (the union of their boxes and a pixel around it) is read
 * up to CUT_BOX_MAX pixels a side: a larger pair is no thin-walled blob of
 * a symbol small enough for a 1 px cut to split. */
#define CUT_BOX_MAX 40
/* Pixels of the root's area that the pair must enclose, its 1 px gaps
 * bridged, for the read to be taken for a cut (cut_pocket). */
#define CUT_MIN_POCKET 2
/* A plain leaf of a dot's area beside a blob is taken for a cut's piece
 * too where it fills under CUT_DOT_FILL of its moment ellipse
 * (filled_solidity): a whole dot fills about 1. */
#define CUT_DOT_FILL 0.85
/* The root's specks (of at most SPECK_MAX_AREA px) in the pair's box that
 * cut_pocket takes for walls, at most. */
#define CUT_SPECKS 4
/* A plain leaf of the root of at most 1 / SPECK_DOT_DIV of the median
 * plain leaf's area is taken for a speck, not a dot (speck_read). */
#define SPECK_DOT_DIV 2
/* An outsized leaf to which a closing by a square of 2 RING_CLOSE + 1 px
 * adds a pocket (ring_pocket) of at least 1 / RING_POCKET_DIV of its area,
 * and CUT_MIN_POCKET px, is taken for a one-hole blob opened
 * (opened_ring). */
#define RING_CLOSE 2
#define RING_POCKET_DIV 4
/* A plain leaf of the root of at least HOLE_CLOSED_X times the median
 * plain leaf's area may be a one-hole blob whose hole closed
 * (closed_hole_read, specked_leaf_read). */
#define HOLE_CLOSED_X 3
/* A plain leaf that may be a two-hole blob whose holes closed
 * (closed_blob_read): it fills under CLOSED_BLOB_SOLIDITY of its moment
 * ellipse. */
#define CLOSED_BLOB_SOLIDITY 0.85
/* A blob whose largest hole has HOLES_UNEVEN_X times the area of its
 * smallest or more holds something else than a symbol's holes
 * (holes_uneven). */
#define HOLES_UNEVEN_X 7
/* A blob's hole of at least MERGED_AREA_X10 / 10 times the symbol's median
 * hole, elongated at least MERGED_HOLE_ELONGATION (two touching equal
 * discs: 5), where that median is MERGED_HOLE_MIN px or more, is taken for
 * two holes run together (merged_hole_read). */
#define MERGED_HOLE_ELONGATION 5.0
#define MERGED_HOLE_MIN 4
/* A child of the root that fills under BAY_SOLIDITY of its moment ellipse,
 * its holes taken for it, may have a hole opened into a bay (bay_read). */
#define BAY_SOLIDITY 0.94
/* A plain leaf of at least 1 / CHIP_MIN_DIV of the median plain leaf's
 * area and at most that median, that fills under CHIP_SOLIDITY of its
 * moment ellipse or is CHIP_ELONGATION times as long as wide or more
 * (elongated), or over the median up to 3/2 of it, that elongated and at
 * most 2 px across (chip_shape), beside a child of one or two holes (CHIP_MAX_HOLES) that
 * fills under CHIP_BLOB_SOLIDITY of its ellipse, may be a piece of that
 * child's wall (chip_read). */
#define CHIP_MIN_DIV 2
#define CHIP_SOLIDITY 0.8
#define CHIP_ELONGATION 3.5
#define CHIP_MAX_HOLES 2
#define CHIP_BLOB_SOLIDITY 0.96
/* ... and for a merged leaf's read (blob_bay), a pocket of a
 * 1 / BAY_MERGED_DIV of the median hole is enough. */
#define BAY_MERGED_DIV 2
/* A plain leaf of ARC_MIN_AREA pixels or more and at least 1 /
 * ARC_MIN_DIV of the median plain leaf's area that fills under
 * ARC_SOLIDITY of its moment ellipse (filled_solidity) and has
 * ARC_THIN times the square of its depth (region_depth) in pixels or more
 * is an arc, no dot (arc_read). */
#define ARC_MIN_AREA 20
#define ARC_MIN_DIV 2
#define ARC_SOLIDITY 0.65
#define ARC_THIN 12
/* ... and a plain leaf of at least the median plain leaf's area that
 * fills under RING_ARC_SOLIDITY of its moment ellipse and to which a
 * closing adds a pocket of a quarter of its area (RING_POCKET_DIV, as
 * opened_ring asks) is an arc of a ring, no dot, where a plain sibling
 * lies within RING_ARC_GAP px (arc_read). */
#define RING_ARC_SOLIDITY 0.85
#define RING_ARC_GAP 3
/* Two plain leaves of 1 / RING_PAIR_DIV to 3/2 of the median plain leaf's
 * area, each filling under RING_PAIR_SOLIDITY of its moment ellipse, that
 * a closing of the two together gives a pocket of the median hole, are a
 * ring's two arcs, no dots (ring_pair_read). */
#define RING_PAIR_DIV 2
#define RING_PAIR_SOLIDITY 0.9
/* ... of at least RING_PAIR_POCKET_NUM / RING_PAIR_POCKET_DEN of the
 * median hole (ring_pair_read): a one-hole blob's hole may be smaller
 * than the other blobs' holes. */
#define RING_PAIR_POCKET_NUM 3
#define RING_PAIR_POCKET_DEN 4
/* A blob of MERGED_BLOB_HOLES holes or more whose outline has a bay of at
 * least MERGED_BLOB_BAY times the symbol's median hole is two blobs run
 * together (merged_blob_read). */
#define MERGED_BLOB_HOLES 5
#define MERGED_BLOB_BAY 2
/* ... and a small-symbol read (match_config.specks_unconfirmed) with such
 * a blob whose bay has MERGED_BLOB_DOUBT median holes or more stands only
 * where the enlarged frame confirms it: that pass's threshold joins two
 * blobs of a symbol of 30-40 px across 1-2 px of the root's area, which
 * leaves a bay of about a hole (oblique, reacTIVision's set, seed 76,
 * frame 10: a 36 px 107 read as 97, a 3-hole and a one-hole blob joined
 * into a blob of 5 holes, one a 1 px piece of the root's area, filling
 * 0.79 of its ellipse, a bay of 6 px against holes of 5). Over the
 * realistic presets at 24 and 48 frames with the three sets and oblique
 * seeds 60-76, 78 and 80, that pass's reads with a blob of 5 holes or
 * more under BAY_SOLIDITY had bays of 1.2 median holes (filling 0.54 and
 * 0.79 of the ellipse) where the ID was not in the frame (2 reads), and
 * of 0.1-0.5 median holes (0.92-0.94) where it was (4), but for one read
 * that another rule left fuzzy (1.1). */
#define MERGED_BLOB_DOUBT 1
/* A blob of fewer holes, from JOINED_FEW_HOLES, is two blobs run together
 * where it fills under JOINED_BAY_SOLIDITY of its ellipse and its bay has
 * JOINED_FEW_BAY median holes or more (joined_few_read). */
#define JOINED_FEW_HOLES 3
#define JOINED_FEW_BAY 4
/* A dot of the hairline round's read of DOT_FILL_MIN_AREA px or more is
 * judged by how much of its moment ellipse it fills (dots_odd,
 * match_config.dot_min_fill); a smaller one's moments are its pixels'
 * noise. */
#define DOT_FILL_MIN_AREA 10
/* A blob of two holes or more that fills under JOINED_SOLIDITY of its
 * moment ellipse may be two blobs run together (joined_read); one under
 * JOINED_BAND_SOLIDITY too where a dot-sized plain leaf is at least
 * JOINED_BAND_ELONGATION as elongated (covariance eigenvalues; two
 * touching equal discs: 5), a piece of a shadow's band; so may one under
 * JOINED_BAY_SOLIDITY whose outline a closing gives a bay of
 * 1 / BAY_MERGED_DIV of the median hole. */
#define JOINED_SOLIDITY 0.8
#define JOINED_BAND_SOLIDITY 0.85
#define JOINED_BAND_ELONGATION 5.0
#define JOINED_BAY_SOLIDITY 0.86
/* A blob's hole of at most 1 / ENCLOSED_DIV of the median hole may be a
 * piece of the root's area two blobs run together enclosed
 * (enclosed_read). */
#define ENCLOSED_DIV 2

/* The root's children of canon (canonical, with colour letter) as slices
 * seg[i], len[i] (each starts with its "1"; in canon's descending order).
 * Returns their count, or -1 where there are more than TREES_MAX_NODES. */
static int child_slices(const char *canon, const char **seg, int *len)
{
	const char *s = canon + 2;
	int n = 0;
	for (int i = 0; s[i];) {
		if (n >= TREES_MAX_NODES)
			return -1;
		int l = 1;
		while (s[i + l] && s[i + l] != '1')
			l++;
		seg[n] = s + i;
		len[n++] = l;
		i += l;
	}
	return n;
}

/* Whether the slice seg, len is a child of j holes: "1" then j "2". */
static bool holes_slice(const char *seg, int len, int j)
{
	if (len != j + 1)
		return false;
	for (int k = 1; k < len; k++)
		if (seg[k] != '2')
			return false;
	return true;
}

/* Whether the tree canon (canonical, with colour letter) is a tree of the
 * set with one hole moved between a blob and the root's plain leaves: a
 * child of the root that has j holes (children that are all leaves, "1"
 * then j "2"; with j = 0 a plain leaf) given dh (+1, +2, -1 or -2) holes,
 * and one plain leaf of the root taken away (dh +1, +2) or -dh added (dh
 * -1, -2), the same node count (dh +2: one node more). dh +1: canon is
 * that tree with one blob cut in two, the cut running through a hole
 * (which joined the root's area), one piece keeping the blob's other holes
 * and the other a plain leaf (cut_read, opened_ring); dh +2: canon is that
 * tree with a piece of a blob's wall broken off where two holes opened
 * (wall_piece); dh -1: canon is that tree with a dot lost and a hole of a
 * blob split in two (split_read); dh -2: with two dots lost and a hole
 * split in three (shattered_read). */
static bool moved_in_set(const struct tree_set *set, const char *canon, int j, int dh)
{
	const char *seg[TREES_MAX_NODES];
	int len[TREES_MAX_NODES];
	const int n = child_slices(canon, seg, len);
	if (n < 0)
		return false;
	/* Children in descending order: plain leaves ("1") come last; the
	 * last is the one taken away. */
	int end = n;
	if (dh > 0 && (n < 1 || len[--end] != 1))
		return false;
	if (dh < 0 && j < -dh)
		return false;
	int pick = -1;
	for (int i = 0; i < end && pick < 0; i++)
		if (holes_slice(seg[i], len[i], j))
			pick = i;
	if (pick < 0)
		return false;
	/* The changed child ("1" then j + dh "2") goes where its order puts
	 * it: before the first child that is not greater than it. */
	const int kl = j + 1 + dh;
	char kid[TREES_MAX_NODES + 1];
	if (kl > (int)sizeof kid || (dh < 0 && strlen(canon) + 1 - dh > CANON_CAP))
		return false;
	kid[0] = '1';
	memset(kid + 1, '2', (size_t)kl - 1);
	char buf[CANON_CAP];
	int p = 2;
	bool placed = false;
	buf[0] = canon[0];
	buf[1] = canon[1];
	for (int i = 0; i < end; i++) {
		if (i == pick)
			continue;
		if (!placed && !seg_greater(seg[i], len[i], kid, kl)) {
			memcpy(buf + p, kid, (size_t)kl);
			p += kl;
			placed = true;
		}
		memcpy(buf + p, seg[i], (size_t)len[i]);
		p += len[i];
	}
	if (!placed) {
		memcpy(buf + p, kid, (size_t)kl);
		p += kl;
	}
	for (int z = dh; z < 0; z++)
		buf[p++] = '1';
	buf[p] = 0;
	return tree_set_lookup(set, buf) >= 0;
}

/* Whether the root of canon (its colour letter and its own digit) over the
 * children seg[0..n) (slices, len[i] long, in any order; sorted here into
 * descending order again, by insertion: a dozen children at most) is a
 * tree of the set. */
static bool slices_in_set(const struct tree_set *set, const char *canon, const char **seg, int *len, int n)
{
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && seg_greater(seg[k], len[k], seg[k - 1], len[k - 1]); k--) {
			const char *ts = seg[k];
			const int tl = len[k];
			seg[k] = seg[k - 1];
			len[k] = len[k - 1];
			seg[k - 1] = ts;
			len[k - 1] = tl;
		}
	char buf[CANON_CAP];
	int p = 2;
	buf[0] = canon[0];
	buf[1] = canon[1];
	for (int i = 0; i < n; i++) {
		memcpy(buf + p, seg[i], (size_t)len[i]);
		p += len[i];
	}
	buf[p] = 0;
	return tree_set_lookup(set, buf) >= 0;
}

/* Whether the tree canon (canonical, with colour letter) is a tree of the
 * set with one hole moved from a blob to a plain leaf: a child of the root
 * that has j holes (children that are all leaves, "1" then j "2") given
 * j - 1, and one plain leaf of the root given one hole, the same node
 * count. False for j < 2: a one-hole blob's hole so moved gives canon
 * again. */
static bool hole_to_leaf_in_set(const struct tree_set *set, const char *canon, int j)
{
	if (j < 2 || j >= TREES_MAX_NODES)
		return false;
	/* The root's children as slices of canon; the two changed ones (the
	 * blob of j - 1 holes, the leaf of one) are prefixes of kid. */
	char kid[TREES_MAX_NODES];
	kid[0] = '1';
	memset(kid + 1, '2', (size_t)j - 1);
	const char *seg[TREES_MAX_NODES];
	int len[TREES_MAX_NODES], pick = -1, leaf = -1;
	const int n = child_slices(canon, seg, len);
	for (int i = 0; i < n; i++) {
		if (pick < 0 && holes_slice(seg[i], len[i], j))
			pick = i;
		else if (len[i] == 1)
			leaf = i;
	}
	if (pick < 0 || leaf < 0)
		return false;
	seg[pick] = kid;
	len[pick] = j;
	seg[leaf] = kid;
	len[leaf] = 2;
	return slices_in_set(set, canon, seg, len, n);
}

/* Whether the tree canon (canonical, with colour letter) is a tree of the
 * set with two blobs run together: a child of the root that has j holes
 * (children that are all leaves, "1" then j "2") split into two children
 * with holes (each one or more), the same node count. With leaf, the two
 * have j holes between them and one plain leaf of the root is taken away
 * (the join took a leaf for a dot, joined_read); without, they have j - 1
 * (the join enclosed a piece of the root's area as a hole,
 * enclosed_read). */
static bool split_in_set(const struct tree_set *set, const char *canon, int j, bool leaf_lost)
{
	const int sum = leaf_lost ? j : j - 1;
	if (sum < 2 || j >= TREES_MAX_NODES)
		return false;
	const char *seg[TREES_MAX_NODES + 1];
	int len[TREES_MAX_NODES + 1], pick = -1, leaf = -1;
	const int n = child_slices(canon, seg, len);
	for (int i = 0; i < n; i++) {
		if (pick < 0 && holes_slice(seg[i], len[i], j))
			pick = i;
		else if (len[i] == 1)
			leaf = i;
	}
	if (pick < 0 || (leaf_lost && leaf < 0))
		return false;
	if (!leaf_lost)
		leaf = -1;
	/* The two pieces are prefixes of one string of j "2" after a "1". */
	char kid[TREES_MAX_NODES + 1];
	kid[0] = '1';
	memset(kid + 1, '2', (size_t)j);
	for (int a = sum - 1; 2 * a >= sum; a--) {
		const char *sg[TREES_MAX_NODES + 1];
		int ln[TREES_MAX_NODES + 1], m = 0;
		for (int i = 0; i < n; i++)
			if (i != pick && i != leaf) {
				sg[m] = seg[i];
				ln[m++] = len[i];
			}
		sg[m] = kid;
		ln[m++] = a + 1;
		sg[m] = kid;
		ln[m++] = sum - a + 1;
		if (slices_in_set(set, canon, sg, ln, m))
			return true;
	}
	return false;
}

/* The bits of v reversed (bit i to bit 63 - i). */
static inline uint64_t bits_reversed(uint64_t v)
{
	v = __builtin_bswap64(v);
	v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
	v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
	return ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
}

/* The bits of p at or above a bit of x (x within p) in the same run of
 * p's ones: the carry of p + x runs from each bit of x up its run. */
static inline uint64_t run_up(uint64_t x, uint64_t p)
{
	return x | (((p + x) ^ p ^ x) & p);
}

/* The runs of p's ones (p as a row, rp the same reversed) that hold a bit
 * of x (within p): up from x, and down as up in the reversed row. */
static inline uint64_t run_fill(uint64_t x, uint64_t p, uint64_t rp)
{
	return run_up(x, p) | bits_reversed(run_up(bits_reversed(x), rp));
}

/* A row's bits and their 8-neighbours in the row (the rows above and
 * below are or-ed in by the caller); bits past the box are the caller's
 * to mask. */
static inline uint64_t bits_spread(uint64_t v)
{
	return v | v << 1 | v >> 1;
}

/* Row masks of a cut_pocket() box: a bit a pixel, bit x - x0 of row y - y0. */
enum { CUT_ROOT, CUT_LEAF, CUT_BLOB, CUT_SPECK, CUT_CODES };
_Static_assert(CUT_BOX_MAX < 64, "a cut_pocket() box's row fits a word");

/* The pixels of regions reg[0..n) in the box x0..x1, y0..y1 (at most
 * CUT_BOX_MAX a side) into rows[code[i]][y - y0], which the caller
 * zeroed. Reads the runs of the box's rows alone. */
static void box_bits(const struct region_tree *t, int x0, int y0, int x1, int y1,
		     uint64_t (*rows)[CUT_BOX_MAX], const int32_t *reg, const uint8_t *code, int n)
{
	for (int y = y0; y <= y1; y++) {
		const int32_t hi = t->row_first_run[y + 1];
		for (int32_t k = segment_run_first_after(t, y, x0); k < hi && t->runs[k].x <= x1; k++) {
			const struct run *u = &t->runs[k];
			int i = 0;
			while (i < n && u->region != reg[i])
				i++;
			if (i == n)
				continue;
			const int from = u->x < x0 ? x0 : u->x, to = u->x + u->len - 1 > x1 ? x1 : u->x + u->len - 1;
			rows[code[i]][y - y0] |= ((2ull << (to - from)) - 1) << (from - x0);
		}
	}
}

/* The pixels of regions reg[0..n) in the box x0..x1, y0..y1 (at most
 * CUT_BOX_MAX a side; each code[i] under CUT_CODES) into grid (the box's
 * top left at grid[0], stride bytes a row): code[i] where reg[i] lies, the
 * rest untouched. Read as box_bits() reads them, then a byte a pixel for
 * the tests that walk pixels. */
static void box_paint(const struct region_tree *t, int x0, int y0, int x1, int y1, uint8_t *grid, int stride,
		      const int32_t *reg, const uint8_t *code, int n)
{
	uint64_t rows[CUT_CODES][CUT_BOX_MAX];
	memset(rows, 0, sizeof rows);
	box_bits(t, x0, y0, x1, y1, rows, reg, code, n);
	for (int c = 0; c < CUT_CODES; c++)
		for (int y = 0; y <= y1 - y0; y++)
			for (uint64_t v = rows[c][y]; v; v &= v - 1)
				grid[(ptrdiff_t)y * stride + __builtin_ctzll(v)] = (uint8_t)c;
}

/* The pixels of the root's area that leaf l and its sibling s enclose
 * once every pixel of that area touching both (8-neighbours) is taken for
 * a 1 px cut and bridged: the hole of one blob that a thin cut split, now
 * part of the root's area, lies between the two pieces. Two whole leaves
 * side by side enclose nothing or next to nothing, however close: each is
 * convex where the other faces it, so their gap bridged is a waist, no
 * ring. The way out runs through 8-neighbours: the pieces are 4-connected
 * regions, so with the bridges they close a ring that way, while the
 * channel between two leaves corner to corner, bridged at both ends by
 * pixels that touch both, would leave a 2 px pocket to a 4-connected fill
 * (25 runs of 24 frames of the realistic presets with reacTIVision's set:
 * 1400 of 32600 pairs tried enclose a pixel or more that way, 48 this
 * way). A speck of the root's area in a gap is a piece of the wall that
 * the cut left: it is a wall, and a pixel that touches it and either piece
 * is bridged (where a hard shadow's edge crosses a gamma-encoded frame the
 * third scale's first pass cut a 54 px 3's one-hole blob of
 * reacTIVision's set into arcs of 20 and 9 px 3 px apart with a 1 px
 * speck between, read as 31: sheet-half, --gamma 2.2, seed 501, frame
 * 17). 0 where the pair's
 * box is over CUT_BOX_MAX a side or the hairline round merged other
 * regions into one of the three (region_merged: its runs are partly its
 * members'); a region whose list alone that round rebuilt keeps its own
 * pixels, and its pocket is read: where a speck beside a symbol had the
 * round rebuild its root's list, the round read the tree again and a
 * one-hole blob's ring cut into a 19 px arc and a 4 px piece, held in the
 * first round, stood as another ID (dim, reacTIVision's set, seed 46,
 * frame 45: a 34 px 150 read as 189). Reads the runs of the box alone.
 * The box is read as a bit a pixel, a row a word (CUT_BOX_MAX < 64): the
 * bridges and the fill work on whole rows (a byte a pixel and a fill of
 * a pixel a step took 35,000 instructions a pair, an eighth of
 * std-1080's matching); the pixels reached are the same. */
static int cut_pocket(const struct match *m, const struct region_tree *t, int32_t root, int32_t l, int32_t s)
{
	if (region_merged(m, root) || region_merged(m, l) || region_merged(m, s))
		return 0;
	const struct region *a = &t->regions[l], *b = &t->regions[s];
	int x0 = (a->x0 < b->x0 ? a->x0 : b->x0) - 1, y0 = (a->y0 < b->y0 ? a->y0 : b->y0) - 1;
	int x1 = (a->x1 > b->x1 ? a->x1 : b->x1) + 1, y1 = (a->y1 > b->y1 ? a->y1 : b->y1) + 1;
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 >= t->width ? t->width - 1 : x1;
	y1 = y1 >= t->height ? t->height - 1 : y1;
	const int w = x1 - x0 + 1, h = y1 - y0 + 1;
	if (w > CUT_BOX_MAX || h > CUT_BOX_MAX || w < 3 || h < 3)
		return 0;
	/* The root's specks in the box are walls too (CUT_SPECKS at most). */
	int32_t rg[3 + CUT_SPECKS] = {root, l, s};
	uint8_t code[3 + CUT_SPECKS] = {CUT_ROOT, CUT_LEAF, CUT_BLOB};
	int n_rg = 3, n_adj;
	const int32_t *ra = adj_of(m, t, root, &n_adj);
	for (int i = 0; i < n_adj && n_rg < 3 + CUT_SPECKS; i++) {
		const struct region *g = &t->regions[ra[i]];
		if (m->parent[ra[i]] == root && (m->state[ra[i]] & (ST_RESOLVED | ST_SPECK)) == (ST_RESOLVED | ST_SPECK) &&
		    g->x0 >= x0 && g->x1 <= x1 && g->y0 >= y0 && g->y1 <= y1) {
			rg[n_rg] = ra[i];
			code[n_rg++] = CUT_SPECK;
		}
	}
	uint64_t px[CUT_CODES][CUT_BOX_MAX];
	memset(px, 0, sizeof px);
	box_bits(t, x0, y0, x1, y1, px, rg, code, n_rg);
	/* A pixel that touches both lies within a pixel of both boxes; one
	 * that joins a speck to either, within two. Those of the root's area
	 * there that touch a leaf and the blob, or the speck and either, are
	 * bridged: walls. */
	const int grow = n_rg > 3 ? 2 : 1;
	const int bx0 = (a->x0 > b->x0 ? a->x0 : b->x0) - grow, by0 = (a->y0 > b->y0 ? a->y0 : b->y0) - grow;
	const int bx1 = (a->x1 < b->x1 ? a->x1 : b->x1) + grow, by1 = (a->y1 < b->y1 ? a->y1 : b->y1) + grow;
	const int cx0 = (bx0 < x0 ? x0 : bx0) - x0, cx1 = (bx1 > x1 ? x1 : bx1) - x0;
	const int cy0 = (by0 < y0 ? y0 : by0) - y0, cy1 = (by1 > y1 ? y1 : by1) - y0;
	const uint64_t full = (1ull << w) - 1;
	const uint64_t near = cx1 >= cx0 ? ((2ull << (cx1 - cx0)) - 1) << cx0 : 0;
	/* pass: the root's area not bridged and the pixels of no region read
	 * here, which the fill goes through; root: the root's area not bridged. */
	uint64_t pass[CUT_BOX_MAX], rpass[CUT_BOX_MAX], root_px[CUT_BOX_MAX], reach[CUT_BOX_MAX];
	for (int y = 0; y < h; y++) {
		uint64_t bridge = 0;
		if (near && y >= cy0 && y <= cy1) {
			uint64_t d[CUT_CODES];
			for (int c = CUT_LEAF; c < CUT_CODES; c++)
				d[c] = bits_spread((y > 0 ? px[c][y - 1] : 0) | px[c][y] |
						   (y < h - 1 ? px[c][y + 1] : 0));
			bridge = px[CUT_ROOT][y] & near &
				 ((d[CUT_LEAF] & d[CUT_BLOB]) | (d[CUT_SPECK] & (d[CUT_LEAF] | d[CUT_BLOB])));
		}
		root_px[y] = px[CUT_ROOT][y] & ~bridge;
		pass[y] = full & ~(px[CUT_LEAF][y] | px[CUT_BLOB][y] | px[CUT_SPECK][y] | bridge);
		rpass[y] = bits_reversed(pass[y]);
		/* The fill starts from the box's edge: the first and last rows
		 * whole, else their ends. */
		const uint64_t edge = y == 0 || y == h - 1 ? full : 1ull | 1ull << (w - 1);
		reach[y] = run_fill(edge & pass[y], pass[y], rpass[y]);
	}
	/* What the edge reaches through the root's area and other regions
	 * (8-neighbours): row by row, down and up, until a sweep adds none. */
	for (bool more = true; more;) {
		more = false;
		for (int dir = 0; dir < 2; dir++)
			for (int i = 0; i < h; i++) {
				const int y = dir ? h - 1 - i : i;
				const uint64_t from =
					bits_spread((y > 0 ? reach[y - 1] : 0) | (y < h - 1 ? reach[y + 1] : 0));
				const uint64_t add = from & pass[y] & ~reach[y];
				if (add) {
					reach[y] = run_fill(reach[y] | add, pass[y], rpass[y]);
					more = true;
				}
			}
	}
	int pocket = 0;
	for (int y = 0; y < h; y++)
		pocket += __builtin_popcountll(root_px[y] & ~reach[y]);
	return pocket;
}

/* The depth of region k: the largest city-block distance of one of its
 * pixels from the nearest pixel outside it (1 on its outline), or
 * INT_MAX where its box is over CUT_BOX_MAX a side or the hairline round
 * rebuilt it (its runs are its members'). Reads the runs of k's box
 * alone; the grid is on the stack. */
static int region_depth(const struct match *m, const struct region_tree *t, int32_t k)
{
	const struct region *g = &t->regions[k];
	const int w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
	if ((m->flags[k] & FLAG_REPAIRED) || w > CUT_BOX_MAX || h > CUT_BOX_MAX)
		return INT_MAX;
	/* The box in a frame of 0 a pixel wide; k's pixels 1, then their
	 * distance, forward and back (two passes of the city-block metric). */
	enum { SIDE = CUT_BOX_MAX + 2 };
	const int gw = w + 2;
	uint8_t px[SIDE * SIDE];
	memset(px, 0, (size_t)(gw * (h + 2)));
	const uint8_t one = 1;
	box_paint(t, g->x0, g->y0, g->x1, g->y1, px + gw + 1, gw, &k, &one, 1);
	for (int y = 1; y <= h; y++)
		for (int x = 1; x <= w; x++) {
			uint8_t *p = px + y * gw + x;
			if (*p) {
				const uint8_t u = p[-gw] < p[-1] ? p[-gw] : p[-1];
				*p = (uint8_t)(u + 1);
			}
		}
	int depth = 0;
	for (int y = h; y >= 1; y--)
		for (int x = w; x >= 1; x--) {
			uint8_t *p = px + y * gw + x;
			if (!*p)
				continue;
			const uint8_t u = p[gw] < p[1] ? p[gw] : p[1];
			if (u + 1 < *p)
				*p = (uint8_t)(u + 1);
			depth = *p > depth ? *p : depth;
		}
	return depth;
}

/* The size of the largest 4-connected set of pixels that a closing by a
 * square of 2 RING_CLOSE + 1 px a side adds to the w x h bit rows px (a
 * bit a pixel, at most 64 a row): dilated, then eroded, each along the
 * rows by shifts and along the columns by or-ing (and-ing) rows. Outside
 * the grid nothing is dilated: it adds nothing to the dilation and takes a
 * pixel away in the erosion. The sets are filled a run at a time. */
static int closing_pocket(const uint64_t *px, int w, int h)
{
	enum { R = RING_CLOSE, SIDE = CUT_BOX_MAX + 2 * RING_CLOSE };
	const uint64_t full = w >= 64 ? ~0ull : (1ull << w) - 1;
	uint64_t a[SIDE], b[SIDE];
	for (int y = 0; y < h; y++) {
		uint64_t d = px[y];
		for (int s = 1; s <= R; s++)
			d |= px[y] << s | px[y] >> s;
		a[y] = d & full;
	}
	for (int y = 0; y < h; y++) {
		uint64_t d = 0;
		for (int q = y - R; q <= y + R; q++)
			if (q >= 0 && q < h)
				d |= a[q];
		b[y] = d;
	}
	for (int y = 0; y < h; y++) {
		uint64_t e = b[y];
		for (int s = 1; s <= R; s++)
			e &= b[y] << s & b[y] >> s;
		a[y] = e & full;
	}
	uint64_t add[SIDE], radd[SIDE];
	for (int y = 0; y < h; y++) {
		uint64_t e = y >= R && y + R < h ? full : 0;
		for (int q = y - R; q <= y + R && e; q++)
			e &= a[q];
		add[y] = e & ~px[y];
		radd[y] = bits_reversed(add[y]);
	}
	int best = 0;
	for (int y0 = 0; y0 < h; y0++)
		while (add[y0]) {
			uint64_t set[SIDE] = {0};
			set[y0] = run_fill(add[y0] & -add[y0], add[y0], radd[y0]);
			for (bool more = true; more;) {
				more = false;
				for (int dir = 0; dir < 2; dir++)
					for (int i = 0; i < h; i++) {
						const int y = dir ? h - 1 - i : i;
						const uint64_t from = (y > 0 ? set[y - 1] : 0) | (y < h - 1 ? set[y + 1] : 0);
						const uint64_t more_px = from & add[y] & ~set[y];
						if (more_px) {
							set[y] = run_fill(set[y] | more_px, add[y], radd[y]);
							more = true;
						}
					}
			}
			int size = 0;
			for (int y = 0; y < h; y++) {
				size += __builtin_popcountll(set[y]);
				add[y] &= ~set[y];
				radd[y] = bits_reversed(add[y]);
			}
			best = size > best ? size : best;
		}
	return best;
}
_Static_assert(CUT_BOX_MAX + 2 * RING_CLOSE <= 64, "a ring_pocket() grid's row fits a word");

/* The largest 4-connected set of pixels that a closing by a square of
 * 2 RING_CLOSE + 1 px a side adds to region l (dilated, then eroded),
 * l's holes (its children in the tree being read, specks left out) taken
 * for l, or 0 where l's box is over CUT_BOX_MAX a side: a one-hole blob
 * whose wall a cut opened gets its hole back, with the gap (up to
 * 2 RING_CLOSE px), while two dots merged get the notches of their waist
 * and an outline its ragged pixels, each few; a blob's holes add nothing
 * (they are filled first), but one that opened into a bay of its outline
 * does. Reads the runs of l's box alone, as a bit a pixel (closing_pocket;
 * a byte a pixel and a closing trying each offset cost 280,000
 * instructions a blob of a 640x480 frame). */
static int ring_pocket(const struct match *m, const struct region_tree *t, int32_t l)
{
	const struct region *g = &t->regions[l];
	const int bw = g->x1 - g->x0 + 1, bh = g->y1 - g->y0 + 1;
	if (bw > CUT_BOX_MAX || bh > CUT_BOX_MAX)
		return 0;
	/* l and its holes, all painted as l. */
	int32_t part[TREES_MAX_NODES + 1];
	uint8_t code[TREES_MAX_NODES + 1] = {0};
	int n_part = 0, n_k;
	part[n_part++] = l;
	const int32_t *lk = adj_of(m, t, l, &n_k);
	for (int z = 0; z < n_k && n_part <= TREES_MAX_NODES; z++)
		if (kept_child(m, lk[z], l))
			part[n_part++] = lk[z];
	/* The box and RING_CLOSE px around it, where the dilation reaches. */
	enum { R = RING_CLOSE, SIDE = CUT_BOX_MAX + 2 * RING_CLOSE };
	uint64_t box[1][CUT_BOX_MAX], px[SIDE];
	memset(box, 0, sizeof box);
	memset(px, 0, sizeof px);
	box_bits(t, g->x0, g->y0, g->x1, g->y1, box, part, code, n_part);
	for (int y = 0; y < bh; y++)
		px[y + R] = box[0][y] << R;
	return closing_pocket(px, bw + 2 * R, bh + 2 * R);
}

/* Whether region k has children in the tree being read (resolved, no
 * speck left out, k their parent): the canonical string's test, where
 * m->dc leaves out the specks a small root's read keeps in its blobs. */
static bool has_kids(const struct match *m, const struct region_tree *t, int32_t k)
{
	int n_k;
	const int32_t *l = adj_of(m, t, k, &n_k);
	for (int z = 0; z < n_k; z++)
		if (kept_child(m, l[z], k))
			return true;
	return false;
}

/* Whether area a is that of a dot: 3/4 to 3/2 of med, the median area of
 * the root's plain leaves. A piece of a blob's wall that a cut left is
 * seldom the size of the dots: smaller (a sliver of the wall) or larger
 * (half of a blob), while a dot that a blob's bay holds is one. */
static bool dot_sized(int64_t a, int64_t med)
{
	return 4 * a >= 3 * med && 2 * a <= 3 * med;
}

/* A root's children, as root_children() finds them: match_tree_decode()
 * finds them once for its guards (the *_read() functions take them as c). */
struct root_kids {
	int32_t kid[TREES_MAX_NODES]; /* every child */
	int area[TREES_MAX_NODES];    /* the plain leaves' areas, ascending */
	int n_leaf;
	bool plain[TREES_MAX_NODES];  /* kid[i] is a plain leaf */
	int n;                        /* root_children()'s answer */
	/* kid[i]'s leaf_holes() and filled_solidity(), found when a guard
	 * first asks (KID_UNKNOWN, a negative solidity: not yet): a whole
	 * read meets a dozen guards, most asking them of the same blobs. */
	int holes[TREES_MAX_NODES];
	double solidity[TREES_MAX_NODES];
	int pocket[TREES_MAX_NODES]; /* ring_pocket() of kid[i] */
	int median_hole;             /* median_hole() of the children */
	/* near[i]: the children whose boxes lie within two pixels of
	 * kid[i]'s (boxes_near), as bits over kid[], i left out; all found
	 * at once when a guard first asks (near_known). */
	uint64_t near[TREES_MAX_NODES];
	bool near_known;
};
#define KID_UNKNOWN (-2)

/* The children of root in the tree being read (resolved, no speck left
 * out) into c->kid, and the areas of those that are plain leaves (no
 * children: has_kids) into c->area in ascending order, c->n_leaf of them.
 * Returns the children's number, or -1 where they are more than
 * TREES_MAX_NODES (and puts it in c->n). */
static int root_children(const struct match *m, const struct region_tree *t, int32_t root, struct root_kids *c)
{
	int32_t *kid = c->kid;
	int *area = c->area, *n_leaf = &c->n_leaf;
	int n = 0, n_adj;
	const int32_t *l = adj_of(m, t, root, &n_adj);
	*n_leaf = 0;
	c->median_hole = KID_UNKNOWN;
	c->near_known = false;
	for (int i = 0; i < n_adj; i++) {
		const int32_t k = l[i];
		if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[k] != root)
			continue;
		if (n >= TREES_MAX_NODES)
			return c->n = -1;
		c->plain[n] = !has_kids(m, t, k);
		c->holes[n] = KID_UNKNOWN;
		c->solidity[n] = -1.0;
		c->pocket[n] = KID_UNKNOWN;
		kid[n++] = k;
		if (!c->plain[n - 1])
			continue;
		/* Insertion: a dozen at most. */
		const int v = reg(m, t, k)->area;
		int z = (*n_leaf)++;
		for (; z > 0 && area[z - 1] > v; z--)
			area[z] = area[z - 1];
		area[z] = v;
	}
	return c->n = n;
}

static int leaf_holes(const struct match *m, const struct region_tree *t, int32_t k);
static double filled_solidity(const struct match *m, const struct region_tree *t, int32_t k);
static int median_hole(const struct match *m, const struct region_tree *t, const int32_t *kid, int n);

/* leaf_holes(), filled_solidity() and ring_pocket() of c->kid[q], and
 * median_hole() of c's children: each found once a read, when a guard
 * first asks. */
static int kid_holes(const struct match *m, const struct region_tree *t, struct root_kids *c, int q)
{
	if (c->holes[q] == KID_UNKNOWN)
		c->holes[q] = leaf_holes(m, t, c->kid[q]);
	return c->holes[q];
}

static double kid_solidity(const struct match *m, const struct region_tree *t, struct root_kids *c, int q)
{
	if (c->solidity[q] < 0.0)
		c->solidity[q] = filled_solidity(m, t, c->kid[q]);
	return c->solidity[q];
}

static int kid_pocket(const struct match *m, const struct region_tree *t, struct root_kids *c, int q)
{
	if (c->pocket[q] == KID_UNKNOWN)
		c->pocket[q] = ring_pocket(m, t, c->kid[q]);
	return c->pocket[q];
}

static int kids_median_hole(const struct match *m, const struct region_tree *t, struct root_kids *c)
{
	if (c->median_hole == KID_UNKNOWN)
		c->median_hole = median_hole(m, t, c->kid, c->n);
	return c->median_hole;
}

/* The children of c within two pixels of c->kid[i] (c->near): the cut,
 * chip and ring-pair guards each tried every pair of a read's children,
 * most of them far apart; the pairs are tried once a read. */
static uint64_t kids_near(const struct match *m, const struct region_tree *t, struct root_kids *c, int i)
{
	if (!c->near_known) {
		for (int a = 0; a < c->n; a++)
			c->near[a] = 0;
		for (int a = 0; a < c->n; a++) {
			const struct region *ra = reg(m, t, c->kid[a]);
			for (int b = a + 1; b < c->n; b++)
				if (boxes_near(ra, reg(m, t, c->kid[b]), 2)) {
					c->near[a] |= 1ull << b;
					c->near[b] |= 1ull << a;
				}
		}
		c->near_known = true;
	}
	return c->near[i];
}

/* Whether one of the dots of a symbol's root (its children that are
 * plain leaves, c->plain; specks left out) is more elongated than
 * dot_max_elongation or larger than dot_max_area times the median dot
 * (match.h), or, where the hairline round rebuilt the root (FLAG_REPAIRED),
 * has DOT_FILL_MIN_AREA px or more and fills under dot_min_fill of its
 * moment ellipse (filled_solidity): a bent piece of a blob's wall, no
 * disc. c holds the root's children; a read (id >= 0) walked its whole
 * tree, so they are there (c->n >= 0). */
static bool dots_odd(const struct match *m, const struct region_tree *t, int32_t root,
		     struct root_kids *c)
{
	if (c->n < 0)
		return true;
	for (int i = 0; i < c->n && m->cfg.dot_max_elongation > 0; i++)
		if (c->plain[i] && elongated(reg(m, t, c->kid[i]), m->cfg.dot_max_elongation))
			return true;
	for (int i = 0; i < c->n && m->cfg.dot_min_fill > 0 && (m->flags[root] & FLAG_REPAIRED); i++)
		if (c->plain[i] && reg(m, t, c->kid[i])->area >= DOT_FILL_MIN_AREA &&
		    kid_solidity(m, t, c, i) < m->cfg.dot_min_fill)
			return true;
	if (m->cfg.dot_max_area <= 0 || c->n_leaf == 0)
		return false;
	return c->area[c->n_leaf - 1] > m->cfg.dot_max_area * c->area[(c->n_leaf - 1) / 2];
}

/* The holes of region k where its children (in the tree being read) are
 * all leaves: what moved_in_set() calls j; -1 where one has children. */
static int leaf_holes(const struct match *m, const struct region_tree *t, int32_t k)
{
	int n_k, j = 0;
	const int32_t *lk = adj_of(m, t, k, &n_k);
	for (int z = 0; z < n_k && j >= 0; z++) {
		const int32_t g = lk[z];
		if (kept_child(m, g, k))
			j = has_kids(m, t, g) ? -1 : j + 1;
	}
	return j;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with one blob cut in two (moved_in_set) and the image
 * says so: a plain leaf of the root and a sibling, a pixel or less apart,
 * that enclose a pocket of the root's area (cut_pocket) of at least
 * CUT_MIN_POCKET pixels, the hole the cut opened, where the leaf is not
 * the size of the root's dots (dot_sized), or is but fills under
 * CUT_DOT_FILL of its moment ellipse (filled_solidity: a motion streak
 * broke a two-hole blob of a 79 px 128 of reacTIVision's set into a blob
 * and a bent 45 px piece among dots of 32-35, filling 0.754, and the first
 * scale read 143), or the sibling is a plain leaf too. A whole dot in a
 * bay of a blob's outline encloses a pocket too (a 51 px 83 on the dim
 * preset, 8 px), which its size and shape keep; two whole dots enclose
 * nothing or next to nothing (cut_pocket), while a one-hole
 * blob's ring cut twice leaves two arcs about a dot's area each, around
 * its hole (ring arcs: where a hard shadow's edge crosses a tilted sheet,
 * the closing pass read a 42 px 3 of reacTIVision's set so as 31, arcs of
 * 16 and 19 px among dots of 15-17, a 6 px pocket). The sizes are tried
 * first, so a read whose plain leaves are all dot-sized and apart costs
 * their sort alone; then the set (only pairs whose uncut tree is in it),
 * then the pixels. In the passes
 * for small symbols (few_specks: the small-symbol and upsampled passes)
 * no size is asked: there walls and holes are 1-2 px, so the piece a cut
 * leaves is a dot's size (a 27.5 px 76 of reacTIVision's set read as 71
 * by the small-symbol pass: a 5 px piece among dots of 4-5 px, a 2 px
 * pocket), and the symbols a bay's dot could cost are the first scale's
 * to read. */
static bool cut_read(const struct match *m, const struct region_tree *t, int32_t root,
		     struct root_kids *c, const char *canon)
{
	const int n = c->n;
	if (n < 0 || !c->n_leaf)
		return false;
	const int64_t med = c->area[(c->n_leaf - 1) / 2];
	/* known[j]: 0 not looked up, 1 the uncut tree is in the set, 2 not. */
	uint8_t known[TREES_MAX_NODES + 1] = {0};
	for (int i = 0; i < n; i++) {
		/* A cut's plain leaf beside a blob is no dot: most reads end
		 * here, their pixels unread. Beside another plain leaf it may be
		 * one (a ring's arcs); each such pair is tried once. */
		if (!c->plain[i])
			continue;
		const bool dot = !m->cfg.few_specks && dot_sized(reg(m, t, c->kid[i])->area, med);
		/* disc: -1 not measured yet, else whether the dot-sized leaf
		 * fills its moment ellipse as a dot does (CUT_DOT_FILL). */
		int disc = -1;
		for (uint64_t near = kids_near(m, t, c, i); near; near &= near - 1) {
			const int q = __builtin_ctzll(near);
			const int j = kid_holes(m, t, c, q);
			/* A dot-sized leaf and a plain leaf before it were tried
			 * from that leaf's loop. */
			if (j < 0 || (dot && j == 0 && q < i))
				continue;
			if (dot && j > 0) {
				if (disc < 0)
					disc = kid_solidity(m, t, c, i) >= CUT_DOT_FILL;
				if (disc)
					continue;
			}
			if (moved_memo(m->cfg.trees, canon, known, j) &&
			    cut_pocket(m, t, root, c->kid[i], c->kid[q]) >= CUT_MIN_POCKET)
				return true;
		}
	}
	return false;
}

/* The median area of the holes of the root's n children kid[] (their
 * children, specks left out: the symbol's leaves under its blobs), or 0
 * where they have none. */
static int median_hole(const struct match *m, const struct region_tree *t, const int32_t *kid, int n)
{
	int hole[TREES_MAX_NODES], n_hole = 0;
	for (int q = 0; q < n; q++) {
		int n_k;
		const int32_t *lk = adj_of(m, t, kid[q], &n_k);
		for (int z = 0; z < n_k && n_hole < TREES_MAX_NODES; z++)
			if (kept_child(m, lk[z], kid[q]))
				hole[n_hole++] = reg(m, t, lk[z])->area;
	}
	if (!n_hole)
		return 0;
	sort_inplace(hole, (size_t)n_hole, sizeof(int), cmp_int);
	return hole[(n_hole - 1) / 2];
}

/* The pocket a closing must give a blob to show a bay of its outline: 1 /
 * BAY_MERGED_DIV of the symbol's median hole med, at least CUT_MIN_POCKET. */
static int bay_pocket_min(int med)
{
	const int half = med / BAY_MERGED_DIV;
	return half > CUT_MIN_POCKET ? half : CUT_MIN_POCKET;
}

/* Whether one of the root's n children kid[] with j holes, all leaves
 * (leaf_holes; j = 0: a plain leaf), shows a hole opened into a bay of its
 * outline: a closing gives it a pocket of the root's area (ring_pocket,
 * its holes filled first) of at least the median hole's area of the
 * symbol (the leaves under the root's children; CUT_MIN_POCKET without
 * holes). In the passes that keep noise (few_specks) a blob that lost a
 * hole while a noise speck was taken for a dot shows it so: a 26 px 56
 * of reacTIVision's set read as 17 by the upsampled pass (a 7 px dot
 * among dots of 18-20 enlarged px, a bay of 16 px against holes of 6-14),
 * while the right reads whose smallest dot is as small show pockets of
 * 0-3 px (a dot's ragged outline). A region the hairline round rebuilt
 * shows none (its runs are its members'). */
static bool hole_opened(const struct match *m, const struct region_tree *t, const int32_t *kid, int n, int j)
{
	const int med = median_hole(m, t, kid, n);
	const int need = med > CUT_MIN_POCKET ? med : CUT_MIN_POCKET;
	for (int q = 0; q < n; q++)
		if (!(m->flags[kid[q]] & FLAG_REPAIRED) && leaf_holes(m, t, kid[q]) == j && ring_pocket(m, t, kid[q]) >= need)
			return true;
	return false;
}

/* Whether the tree canon is one hole moved from another tree of the set:
 * with a plain leaf taken away and a hole given to one of the root's
 * children whose children are all leaves (moved_in_set), each such
 * child's hole count tried once; where opened, only if a blob that would
 * get the hole back opened one into a bay of its outline (hole_opened). */
static bool hole_moved(const struct match *m, const struct region_tree *t, struct root_kids *c,
		       const char *canon, bool opened)
{
	/* tried[j]: a blob of j holes (a plain leaf: 0) looked up already. */
	bool tried[TREES_MAX_NODES + 1] = {false};
	for (int q = 0; q < c->n; q++) {
		const int j = kid_holes(m, t, c, q);
		if (j < 0 || tried[j])
			continue;
		tried[j] = true;
		if (moved_in_set(m->cfg.trees, canon, j, 1) && (!opened || hole_opened(m, t, c->kid, c->n, j)))
			return true;
	}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a blob's hole lost and a speck taken for a dot:
 * its smallest plain leaf has at most 1 / SPECK_DOT_DIV of the median
 * plain leaf's area, and the tree with a plain leaf taken away and a hole given
 * to a child of the root whose children are all leaves is in the set
 * (moved_in_set): the same node count, so the read passes every count,
 * and the leaf-size filter (§6, on box sides) passes a 2 x 2 px speck
 * among 3 x 4 px dots. Where a hard shadow's edge crosses a symbol, the
 * threshold closes or opens a blob's hole in the shadow and leaves a
 * speck of the edge's band, or of a dot the light shrank, in the root's
 * area: on the sheet-half preset with reacTIVision's set a 41 px 6 read as
 * 38 (a 3 px speck against dots of 11) by the scaled pass, a 39 px 11 as
 * 40 (3 px against 14) by the deblurring pass, a 52 px 5 as 28 and a 44 px
 * 6 as 63 (4 px against 11) by the scaled pass's lower rungs, and a 43
 * px 1 as 48 (4 px against dots of 7-10, half the median of 8: "at most",
 * not "under", half) by the scaled pass (seed 524, frame 17). A dot the
 * light shrank can be as small (a 39 px 11 with a 4 px dot against 15,
 * left fuzzy so). In the passes whose threshold keeps noise (few_specks),
 * whose small symbols' dots are 1-2 px and vary by their pixels, the
 * image must show the lost hole too: a blob that would get it back opened
 * it into a bay of its outline (hole_opened). Not for doubtful reads
 * (match_config.doubtful), which stand
 * only where no other read disagrees and cancel a read of another ID
 * there: on the room preset the ratio pass's right 207 (a dot of 8 px
 * against 20) cancelled the scaled pass's completed 200, which stood once
 * the 207 was fuzzy. The sizes are tried first, so most reads end at
 * their sort. */
static bool speck_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
		       const char *canon)
{
	if (m->cfg.doubtful)
		return false;
	const int n = c->n;
	if (n < 0 || !c->n_leaf || SPECK_DOT_DIV * c->area[0] > c->area[(c->n_leaf - 1) / 2])
		return false;
	return hole_moved(m, t, c, canon, m->cfg.few_specks);
}

/* Whether a symbol read whole at root, canon its string, is one hole
 * moved from another tree of the set: the tree with a plain leaf taken
 * away and a hole given to one of the root's children whose children are
 * all leaves (a plain leaf among them) is in the set (moved_in_set), what
 * speck_read() asks without the speck (match_config.moved_unconfirmed). */
static bool moved_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
		       const char *canon)
{
	if (c->n < 0 || !c->n_leaf)
		return false;
	return hole_moved(m, t, c, canon, false);
}

/* How much of its moment ellipse region k fills with its holes (its
 * children in the tree being read, specks left out) taken for it: its
 * pixels over the area of the ellipse of its second moments. A filled
 * disc gives 1, a filled square at any turn 0.955; a blob whose hole
 * opened into a bay of its outline gives less. */
static double filled_solidity(const struct match *m, const struct region_tree *t, int32_t k)
{
	const struct region *g = reg(m, t, k);
	double n = g->area, sx = (double)g->sum_x, sy = (double)g->sum_y;
	double sxx = (double)g->sum_xx, syy = (double)g->sum_yy, sxy = (double)g->sum_xy;
	int n_k;
	const int32_t *lk = adj_of(m, t, k, &n_k);
	for (int z = 0; z < n_k; z++) {
		if (!kept_child(m, lk[z], k))
			continue;
		const struct region *h = reg(m, t, lk[z]);
		n += h->area;
		sx += (double)h->sum_x;
		sy += (double)h->sum_y;
		sxx += (double)h->sum_xx;
		syy += (double)h->sum_yy;
		sxy += (double)h->sum_xy;
	}
	const double mx = sx / n, my = sy / n;
	const double cxx = sxx / n - mx * mx, cyy = syy / n - my * my, cxy = sxy / n - mx * my;
	const double det = cxx * cyy - cxy * cxy;
	return det > 0 ? n / (4 * M_PI * sqrt(det)) : 0;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with one blob cut in two, the piece of its wall taken
 * for a dot, where the cut leaves no pocket for cut_read() to find: a
 * plain leaf of ARC_MIN_AREA px or more and at least 1 / ARC_MIN_DIV of
 * the median plain leaf's area, that fills under ARC_SOLIDITY of its
 * moment ellipse (filled_solidity) and is thin (ARC_THIN times the square
 * of its depth, region_depth, or more pixels), lies within two pixels of
 * a sibling whose children are all leaves (j of them), and the tree with
 * that leaf taken away and a hole given to a child of j holes is in the
 * set (moved_in_set). A dot is a disc however the tilt foreshortens it:
 * it fills its ellipse (specks of a few pixels stray, hence the size) and
 * its area over its depth squared is pi times its elongation. A piece of
 * a ring or of a two-hole blob's wall is a bent band, which fills little
 * of its ellipse and is 4 times as long as wide by that measure: in a
 * hand's hard shadow on a tilted sheet (oblique, reacTIVision's set, seed
 * 60, frame 13) the upsampled pass read a 50 px 190 as 133, a two-hole
 * blob broken into a one-hole blob and an arc of 79 enlarged px (dots of
 * 42-55), 0.58 of its ellipse and 2 px deep (79 / 4 = 20), the opened
 * hole wide open to the root's area between them. Either test alone
 * holds for right reads too: over the realistic presets at 24 and 48
 * frames and oblique seeds 60-75 with the set's other tests, under 0.7 of
 * the ellipse held for 40 reads of an ID in the frame (a dot with a
 * shadow's hairline tail, 0.68 and 4 deep), and right reads' leaves 1 px
 * deep fill 0.69; both (0.65, 12) hold for none of them and for 3 reads
 * of an ID not in the frame (areas over depth squared 14-20). A ring (a
 * one-hole blob) whose wall breaks on both sides of its hole leaves two
 * arcs the hole's width apart, each about a dot's area or more, and the
 * read has a dot too many and a blob too few, as with a cut: a plain leaf
 * of at least the median plain leaf's area is taken for such an arc where
 * it fills under RING_ARC_SOLIDITY of its ellipse, a closing gives it a
 * pocket of a quarter of its area or more (ring_pocket, RING_POCKET_DIV:
 * the hole it bent around, as opened_ring asks of a leaf counted twice),
 * a plain leaf lies within RING_ARC_GAP px, and the tree with a leaf
 * taken away and a hole given to a plain leaf is in the set. In the
 * shadow of a tilted sheet (oblique, reacTIVision's set, seed 66, frame
 * 11) the second scale read a 50 px 131 as 202 so: a crescent of 23 px
 * (dots of 12-16) filling 0.68 of its ellipse, a pocket of 7 px, 3 px from
 * a straight 16 px arc across the hole. Over the realistic presets at 24
 * and 48 frames with the three sets and oblique seeds 60-75 such a leaf
 * came with 5 reads, each of an ID not in the frame (two stood: a 78 on
 * sheet-half, a 160 on oblique at 48 frames), and reads of an ID in the
 * frame whose plain leaf has such a pocket have it under the median area
 * or beside a blob. The sizes are tried first, then the solidity, the
 * depth or the pocket, then the set. */
static bool arc_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
		     const char *canon)
{
	const int n = c->n;
	if (n < 0 || !c->n_leaf)
		return false;
	const int64_t med = c->area[(c->n_leaf - 1) / 2];
	/* known[j]: 0 not looked up, 1 the uncut tree is in the set, 2 not. */
	uint8_t known[TREES_MAX_NODES + 1] = {0};
	for (int i = 0; i < n; i++) {
		const struct region *a = reg(m, t, c->kid[i]);
		if (a->area < ARC_MIN_AREA || ARC_MIN_DIV * a->area < med || !c->plain[i])
			continue;
		const double sol = kid_solidity(m, t, c, i);
		if (sol <= 0 || sol >= (a->area >= med ? RING_ARC_SOLIDITY : ARC_SOLIDITY))
			continue;
		/* gap: how far the sibling may lie; a ring's arc is paired with
		 * plain leaves alone (ring). */
		int gap = 2;
		bool ring = false;
		const int depth = sol < ARC_SOLIDITY ? region_depth(m, t, c->kid[i]) : INT_MAX;
		if (depth == INT_MAX || a->area < (int64_t)ARC_THIN * depth * depth) {
			const int pocket = a->area >= med && !(m->flags[c->kid[i]] & FLAG_REPAIRED)
						   ? kid_pocket(m, t, c, i)
						   : 0;
			if (pocket < CUT_MIN_POCKET || RING_POCKET_DIV * pocket < a->area)
				continue;
			gap = RING_ARC_GAP;
			ring = true;
		}
		for (int q = 0; q < n; q++) {
			const struct region *b = reg(m, t, c->kid[q]);
			if (q == i || !boxes_near(a, b, gap))
				continue;
			const int j = kid_holes(m, t, c, q);
			if (j < 0 || (ring && j > 0))
				continue;
			if (moved_memo(m->cfg.trees, canon, known, j))
				return true;
		}
	}
	return false;
}

/* The largest 4-connected set of pixels that a closing by a square of
 * 2 RING_CLOSE + 1 px a side adds to regions l and s taken together, as
 * ring_pocket() reads one region (closing_pocket), or 0 where their box
 * is over CUT_BOX_MAX a side or the hairline round merged other regions
 * into either (region_merged: its runs are partly its members'). The two
 * arcs of a ring broken on both sides of its hole get the hole back with
 * the gaps; two dots side by side get the waist between them. */
static int pair_pocket(const struct match *m, const struct region_tree *t, int32_t l, int32_t s)
{
	if (region_merged(m, l) || region_merged(m, s))
		return 0;
	const struct region *a = &t->regions[l], *b = &t->regions[s];
	const int x0 = a->x0 < b->x0 ? a->x0 : b->x0, y0 = a->y0 < b->y0 ? a->y0 : b->y0;
	const int x1 = a->x1 > b->x1 ? a->x1 : b->x1, y1 = a->y1 > b->y1 ? a->y1 : b->y1;
	const int bw = x1 - x0 + 1, bh = y1 - y0 + 1;
	if (bw > CUT_BOX_MAX || bh > CUT_BOX_MAX)
		return 0;
	enum { R = RING_CLOSE, SIDE = CUT_BOX_MAX + 2 * RING_CLOSE };
	const int32_t part[2] = {l, s};
	const uint8_t code[2] = {0, 0};
	uint64_t box[1][CUT_BOX_MAX], px[SIDE];
	memset(box, 0, sizeof box);
	memset(px, 0, sizeof px);
	box_bits(t, x0, y0, x1, y1, box, part, code, 2);
	for (int y = 0; y < bh; y++)
		px[y + R] = box[0][y] << R;
	return closing_pocket(px, bw + 2 * R, bh + 2 * R);
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a one-hole blob's ring broken on both sides of its
 * hole into two arcs taken for dots, where the gaps are too wide for
 * cut_read()'s 1 px bridges and the arcs too small or too full for
 * arc_read(): two plain leaves of 1 / RING_PAIR_DIV to 3/2 of the median
 * plain leaf's area, their boxes within two pixels, each filling under
 * RING_PAIR_SOLIDITY of its moment ellipse (filled_solidity), a closing of
 * the two together giving a pocket of the root's area of at least three
 * quarters of the symbol's median hole (pair_pocket; CUT_MIN_POCKET without
 * holes), and
 * the tree with a plain leaf taken away and a hole given to a plain leaf
 * in the set (moved_in_set). On a tilted sheet where a hard shadow's edge
 * crossed a 38 px 7 of reacTIVision's set (seed 40, frame 7) the closing
 * pass read 40 so: a crescent of 16 px (filling 0.853) over its opened
 * hole and a 24 px piece (0.887) 2 px below it, among dots of 15-16 px, an
 * 11 px pocket against a median hole of 7; nothing else read the place.
 * Whole dots fill about all their ellipse, and two side by side close
 * only the waist between them, mostly under a median hole. Over the
 * realistic presets at 24 and 48 frames with the three sets, oblique seeds
 * 60-75, sheet-half 501-524 and the small, tilted-sheet, gamma-encoded and
 * blurred sets such pairs came in 30 reads, all of IDs in no frame of
 * their set but a 107 of oblique (seed 74), an ID of the set's frames,
 * whose detections stayed the same. Not in the passes that keep noise
 * (few_specks), whose enlarged small symbols' dots are ragged: there such
 * pairs came with 6 reads of IDs in the frames. Three quarters, not the
 * whole median hole: the first scale read a 36 px 4 of reacTIVision's set
 * on a phone's view of the sheet (seed 409, frame 17) as 80, its one-hole
 * blob cut by a shadow's edge into arcs of 14 and 7 px whose pocket, 12
 * px, fell short of the three- and six-hole blobs' median hole of 14;
 * over 58 sets of 24 frames of the realistic presets at fresh seeds and
 * 39 more (about 20,000 symbols) no other read changed. The sizes, then
 * the solidity, then the set, then the pixels are tried. */
static bool ring_pair_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			   const char *canon)
{
	const int n = c->n;
	if (m->cfg.few_specks || n < 0 || c->n_leaf < 2)
		return false;
	const int64_t med = c->area[(c->n_leaf - 1) / 2];
	/* arc[i]: 0 not looked at, 1 an arc's size and solidity, 2 not. */
	uint8_t arc[TREES_MAX_NODES] = {0};
	uint8_t known[TREES_MAX_NODES + 1] = {0};
	int need = -1;
	for (int i = 0; i < n; i++)
		/* Each pair once: only the near children after i. */
		for (uint64_t near = c->plain[i] ? kids_near(m, t, c, i) & (~0ull << i << 1) : 0; near;
		     near &= near - 1) {
			const int q = __builtin_ctzll(near);
			if (!c->plain[q])
				continue;
			const int k[2] = {i, q};
			bool both = true;
			for (int z = 0; z < 2 && both; z++) {
				if (!arc[k[z]]) {
					const int64_t a = reg(m, t, c->kid[k[z]])->area;
					arc[k[z]] = RING_PAIR_DIV * a >= med && 2 * a <= 3 * med &&
							    kid_solidity(m, t, c, k[z]) < RING_PAIR_SOLIDITY
						    ? 1
						    : 2;
				}
				both = arc[k[z]] == 1;
			}
			if (!both || !moved_memo(m->cfg.trees, canon, known, 0))
				continue;
			if (need < 0) {
				const int mh = kids_median_hole(m, t, c) * RING_PAIR_POCKET_NUM / RING_PAIR_POCKET_DEN;
				need = mh > CUT_MIN_POCKET ? mh : CUT_MIN_POCKET;
			}
			if (pair_pocket(m, t, c->kid[i], c->kid[q]) >= need)
				return true;
		}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a blob's hole opened into a bay of its outline and
 * a leaf taken for a dot, whatever that leaf's size: a child of the root
 * whose children are all leaves (j of them) fills under BAY_SOLIDITY of
 * its moment ellipse (filled_solidity), the tree with a plain leaf taken
 * away and a hole given to a child with j holes is in the set
 * (moved_in_set), and a closing gives that child a pocket of the root's
 * area of at least the symbol's median hole (ring_pocket, as hole_opened
 * asks). Where a hard shadow's band or a patch of sunlight crosses a
 * blob, the threshold opens one of its holes into the root's area and
 * leaves a piece of its wall, or of the band, about a dot's size, which
 * speck_read (a speck) misses: on the sheet-half preset with
 * reacTIVision's set the deblurring pass read a 49 px 5 as 6, and the
 * ratio pass a 34 px 4 as 55, with nothing else read there. Over the
 * whole reads of sheet-half at seeds 501-524 and a tilted sheet (33 000),
 * the set and the pocket held for 35 wrong reads and 11 right ones, each
 * of those read so by another pass too, and every such blob filled under
 * 0.94 of its ellipse, while whole blobs fill 0.94-1 (a read in 60 has a
 * candidate blob under 0.94). The solidity is tried first, then the set,
 * then the pixels. */
static bool bay_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
		     const char *canon)
{
	const int n = c->n;
	if (n < 0)
		return false;
	/* known[j]: 0 not looked up, 1 the tree with a hole given to a child
	 * of j holes is in the set, 2 not. */
	uint8_t known[TREES_MAX_NODES + 1] = {0};
	int need = -1;
	for (int q = 0; q < n; q++) {
		if ((m->flags[c->kid[q]] & FLAG_REPAIRED) || kid_solidity(m, t, c, q) >= BAY_SOLIDITY)
			continue;
		const int j = kid_holes(m, t, c, q);
		if (j < 0)
			continue;
		if (!moved_memo(m->cfg.trees, canon, known, j))
			continue;
		if (need < 0) {
			const int med = kids_median_hole(m, t, c);
			need = med > CUT_MIN_POCKET ? med : CUT_MIN_POCKET;
		}
		if (kid_pocket(m, t, c, q) >= need)
			return true;
	}
	return false;
}

/* Whether plain leaf c->kid[i] of the root is no dot but a piece of a blob's
 * wall, as chip_read() asks: under the median plain leaf (over false)
 * where it fills under CHIP_SOLIDITY of its moment ellipse
 * (filled_solidity) or is CHIP_ELONGATION times as long as wide or more
 * (elongated); over it (up to 3/2 of it) where it is that elongated and
 * a band at most 2 px across too (region_depth 1: no pixel of it two
 * pixels inside). A wall is 1-2 px thick: on the sheet-half preset drawn
 * gamma-encoded and read linear (reacTIVision's set, seed 501, frame 2)
 * the ratio pass read a 47 px 5 as 28, a 9 px sliver of a two-hole
 * blob's wall (a 3 x 5 px box, 5.1:1, filling 0.806) among dots of 7-8
 * px beside the blob one hole short, filling 0.905. Over the median the
 * elongation alone lost the upsampled pass's right 4 of sheet-half (seed
 * 509, frame 8): a dot of 65 px against 53, 5.2:1 and 4 px deep, beside a
 * one-hole blob filling 0.798. */
static bool chip_shape(const struct match *m, const struct region_tree *t, struct root_kids *c, int i, bool over)
{
	const struct region *g = reg(m, t, c->kid[i]);
	if (over)
		return elongated(g, CHIP_ELONGATION) && region_depth(m, t, c->kid[i]) <= 1;
	return elongated(g, CHIP_ELONGATION) || kid_solidity(m, t, c, i) < CHIP_SOLIDITY;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a piece of a blob's wall broken off and taken for
 * a dot, the blob one hole short: a plain leaf of 1 / CHIP_MIN_DIV of the
 * median plain leaf's area up to 3/2 of that median, not a disc
 * (chip_shape: under the median it fills under CHIP_SOLIDITY of its
 * moment ellipse or is CHIP_ELONGATION times as long as wide; over it it
 * is that elongated and at most 2 px across), its box within two
 * pixels of a sibling whose children are all leaves, one or two of them
 * (j, CHIP_MAX_HOLES), that fills under CHIP_BLOB_SOLIDITY of its
 * ellipse, where the tree with that leaf taken away and a hole given to a
 * child of j holes is in the set (moved_in_set). Where a bright patch
 * crosses a two-hole blob of reacTIVision's set on the sheet-half preset,
 * the threshold opens one hole into the root's area and cuts off a bent
 * or elongated piece of its wall about a dot's size, and the blob keeps
 * one hole: a 52 px 6 read as 38 (seed 521 frame 5 and seed 530 frame 5;
 * 45 px, seed 526 frame 6) by the third scale's first, closing and
 * upsampled passes, the piece 7-14 px (0.5-1 of the median dot; 54-62
 * upsampled), filling 0.74-0.79 of its ellipse or 3.7-5.2 times as long
 * as wide, the blob 0.85-0.95 of its ellipse with a pocket of 0-5 px,
 * below what bay_read asks. A dot is a disc, however the sheet's tilt
 * foreshortens it (sheet-half dots are up to 3 times as long as wide),
 * and the blobs beside such leaves in right reads mostly fill 0.97-1 of
 * their ellipse. The leaf's size, then the blob's holes and solidity,
 * then the leaf's shape, then the set are tried. */
static bool chip_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
		      const char *canon)
{
	const int n = c->n;
	if (n < 0 || !c->n_leaf)
		return false;
	const int med = c->area[c->n_leaf / 2];
	/* known[j]: 0 not looked up, 1 the tree with a hole given to a child
	 * of j holes is in the set, 2 not. */
	uint8_t known[TREES_MAX_NODES + 1] = {0};
	for (int i = 0; i < n; i++) {
		const struct region *g = reg(m, t, c->kid[i]);
		const bool over = g->area > med;
		if (!c->plain[i] || 2 * g->area > 3 * med || CHIP_MIN_DIV * g->area < med)
			continue;
		/* shape: 0 not looked at, 1 a disc, 2 not. */
		int shape = 0;
		for (uint64_t near = kids_near(m, t, c, i); near; near &= near - 1) {
			const int q = __builtin_ctzll(near);
			if (c->plain[q])
				continue;
			const int j = kid_holes(m, t, c, q);
			if (j < 1 || j > CHIP_MAX_HOLES || kid_solidity(m, t, c, q) >= CHIP_BLOB_SOLIDITY)
				continue;
			if (!shape)
				shape = chip_shape(m, t, c, i, over) ? 2 : 1;
			if (shape == 1)
				break;
			if (moved_memo(m->cfg.trees, canon, known, j))
				return true;
		}
	}
	return false;
}

/* Whether a symbol read whole at root may be another tree of the set with
 * two of its blobs run together: a child of the root whose children are
 * all leaves, MERGED_BLOB_HOLES of them or more, fills under BAY_SOLIDITY
 * of its moment ellipse (filled_solidity) and a closing gives it a pocket
 * of the root's area (ring_pocket) of at least MERGED_BLOB_BAY times the
 * symbol's median hole (and CUT_MIN_POCKET). Where two blobs of a small
 * symbol touch, the threshold joins them across the root's area between
 * them, which leaves a bay of that area in the joined outline and encloses
 * pieces of it as holes, and takes a dot into the wall now and then: a
 * blob of the two blobs' holes and more, read as the neighbouring ID with
 * the same node count (the first scale read a 50 px 38 of reacTIVision's
 * set in a wide-angle lens's corner as 35, a blob of 7 holes of 2-4 px
 * with a bay of 7 px, barrel at 48 frames, frame 28; and a 37 px 61 at the
 * frame's top edge as 54, a blob of 11 holes with a bay of 7 px: oblique,
 * seed 63, frame 19). A whole blob of that many holes is a round or oval
 * patch, convex where a hole opened into a bay keeps a pocket of about a
 * hole (bay_read). Over the realistic presets at 24 and 48 frames and
 * oblique seeds 60-75, the reads held (6) were all of an ID not in the
 * frame, with pockets of 2-2.75 median holes, while reads of an ID in the
 * frame with a blob of 5 holes or more under BAY_SOLIDITY had pockets of
 * at most 1.65. Any tree: which blobs were joined the set cannot tell.
 * bay: the pocket asked, in median holes (MERGED_BLOB_BAY; the small-symbol
 * pass's doubt asks MERGED_BLOB_DOUBT). */
static bool merged_blob_read(const struct match *m, const struct region_tree *t, struct root_kids *c, int bay_x)
{
	const int n = c->n;
	int need = -1;
	for (int q = 0; q < n; q++) {
		if ((m->flags[c->kid[q]] & FLAG_REPAIRED) || kid_holes(m, t, c, q) < MERGED_BLOB_HOLES ||
		    kid_solidity(m, t, c, q) >= BAY_SOLIDITY)
			continue;
		if (need < 0) {
			const int bay = bay_x * kids_median_hole(m, t, c);
			need = bay > CUT_MIN_POCKET ? bay : CUT_MIN_POCKET;
		}
		if (kid_pocket(m, t, c, q) >= need)
			return true;
	}
	return false;
}

/* Whether a symbol read whole, c its root's children, may be another tree
 * of the set with two of its blobs run together, the join a blob of
 * JOINED_FEW_HOLES holes up to MERGED_BLOB_HOLES (merged_blob_read's
 * least) that fills under JOINED_BAY_SOLIDITY of its moment ellipse
 * (filled_solidity) and that a closing gives a pocket of the root's area
 * (ring_pocket) of at least JOINED_FEW_BAY times the symbol's median hole
 * (and CUT_MIN_POCKET). Any tree, as merged_blob_read(): where the node
 * count is made up elsewhere neither joined_read() (a leaf lost) nor
 * enclosed_read() (a piece of the root enclosed) finds the other tree.
 * Where a shadow's edge crosses a 30 px 192 of our set, the first scale
 * joined a one-hole blob to the two-hole blob (a three-hole blob of 53
 * px filling 0.78 of its ellipse, a 7 px pocket against a median hole of
 * 1 px) while the four-hole blob took a 1 px speck for a fifth hole,
 * reading 176 (shadow-small, seed 91, frame 2); every hole of the symbol
 * is 1-2 px; the read's other blobs filled 1.00-1.03 of theirs. The
 * solidity is tried first, then the pocket. */
static bool joined_few_read(const struct match *m, const struct region_tree *t, struct root_kids *c)
{
	int need = -1;
	for (int q = 0; q < c->n; q++) {
		const int32_t k = c->kid[q];
		if (c->plain[q] || (m->flags[k] & FLAG_REPAIRED))
			continue;
		const int j = kid_holes(m, t, c, q);
		if (j < JOINED_FEW_HOLES || j >= MERGED_BLOB_HOLES || kid_solidity(m, t, c, q) >= JOINED_BAY_SOLIDITY)
			continue;
		if (need < 0) {
			const int bay = JOINED_FEW_BAY * kids_median_hole(m, t, c);
			need = bay > CUT_MIN_POCKET ? bay : CUT_MIN_POCKET;
		}
		if (kid_pocket(m, t, c, q) >= need)
			return true;
	}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with two of its blobs run together around a piece of
 * the root's area (match_config.enclosed, the deblurring pass; in the
 * other passes where its holes are all small, below): a child
 * of the root whose children are all leaves, three or more, fills under
 * BAY_SOLIDITY of its moment ellipse (filled_solidity), holds a hole of
 * at most 1 / ENCLOSED_DIV of the symbol's median hole, a closing gives
 * it a pocket (ring_pocket) of at least 1 / BAY_MERGED_DIV of that median
 * (and CUT_MIN_POCKET), and the tree with that child split in two
 * children with holes, one hole fewer between them, is in the set
 * (split_in_set): the same node count. A motion streak smears two blobs
 * side by side into each other; the root's area between them is left as
 * a sliver across the streak, enclosed as a hole, and the joined outline
 * keeps a notch where they met: the deblurring pass read a 59 px 151 of
 * reacTIVision's set as 162 so (motion, 48 frames, seed 37, frame 41: a
 * blob of 8 holes and one of 2 joined into one of 11, a 5 px hole against
 * holes of 15-22, filling 0.93 of its ellipse, a 9 px pocket against a
 * median hole of 18), nothing else reading the place. Over the realistic
 * presets at 24 and 48 frames with both sets and 44 sets more (motion,
 * oblique, sheet-half and six other presets at other seeds), that pass's
 * 11 reads of an ID in the frame with a blob of three holes or more under
 * BAY_SOLIDITY had holes of 0.55 of the median or more and pockets of
 * 0.4 of it at most. In every pass the rule held right reads too (4 over
 * those sets, each read by another pass as well: a three-hole blob's hole
 * shrunk in a shadow beside a bay of 0.6-3 median holes). Outside that
 * pass (every scale and pass) the rule asks more: the blob fills under
 * JOINED_BAY_SOLIDITY, as two blobs joined do, and every hole of it is at
 * most 1 / ENCLOSED_DIV of the median, not its least alone. Where a hard
 * shadow's edge darkens two blobs side by side, it joins them across the
 * root's area between them and shrinks all their holes, the enclosed
 * piece among them: the third scale's pass by symbol size read a 40 px 9
 * of reacTIVision's set as 64 so (sheet-half, seed 522, frame 21: a
 * two-hole and a one-hole blob joined into one of four holes of 1-2 px
 * against a median hole of 5, filling 0.825 of its ellipse, a 3 px
 * pocket). A three-hole blob one of whose holes shrank in a shadow keeps
 * its other holes, and the one whole blob of small holes that the sets
 * showed (a 59 px 5 in a shadow's edge, sheet-half, seed 520) filled
 * 0.923. The solidity is tried first, then the holes, the set and the
 * pixels. */
static bool enclosed_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			  const char *canon)
{
	const int n = c->n;
	int med = -1;
	for (int q = 0; q < n; q++) {
		if (c->plain[q] || (m->flags[c->kid[q]] & FLAG_REPAIRED))
			continue;
		const int j = kid_holes(m, t, c, q);
		if (j < 3)
			continue;
		const double sol = kid_solidity(m, t, c, q);
		if (sol >= (m->cfg.enclosed ? BAY_SOLIDITY : JOINED_BAY_SOLIDITY))
			continue;
		int least = INT_MAX, most = 0, n_k;
		const int32_t *lk = adj_of(m, t, c->kid[q], &n_k);
		for (int z = 0; z < n_k; z++)
			if (kept_child(m, lk[z], c->kid[q])) {
				const int a = reg(m, t, lk[z])->area;
				least = a < least ? a : least;
				most = a > most ? a : most;
			}
		if (med < 0)
			med = kids_median_hole(m, t, c);
		const int need = bay_pocket_min(med);
		if (ENCLOSED_DIV * least <= med && (m->cfg.enclosed || ENCLOSED_DIV * most <= med) &&
		    split_in_set(m->cfg.trees, canon, j, false) && kid_pocket(m, t, c, q) >= need)
			return true;
	}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with two of its blobs run together and a leaf taken for
 * a dot: a child of the root whose children are all leaves, two of them
 * or more, fills under JOINED_SOLIDITY of its moment ellipse
 * (filled_solidity), and the tree with that child split in two children
 * with holes and a plain leaf taken away is in the set (split_in_set):
 * the same node count. Where a hard shadow's edge crosses two blobs side
 * by side, its dark joins them across the root's area between them and
 * leaves a piece of its band, or a speck, about a dot's size: the
 * upsampled pass's Lanczos read (third.c, up_sharp) of the places of
 * sheet-half symbols of 43-48 px of reacTIVision's set read a 2 as 18, a
 * 3 as 19 and a 6 as 40 so, joined blobs of two and two holes (0.70 of
 * their ellipse; the 2's, whose blob of six holes filled 0.82), three and
 * one (0.73) and two and two (0.68), their pockets under
 * merged_blob_read()'s or their boxes over its reach. Of the other 150
 * reads of that read over sheet-half 501-512, room 80-91 (both sets) and
 * oblique 60-67 at 24 frames, none had a blob under 0.84 whose split the
 * set holds. In every scale and pass (before, that pass's alone): the
 * second scale read a 36 px 7 of reacTIVision's set as 10 on the
 * phone-half preset (seed 41, frame 39: a two- and a three-hole blob
 * joined, filling 0.76, a 7 px piece among dots of 6-12), where the first
 * scale's hairline round read it right but weaker; over the 24- and
 * 48-frame sets it held no read that no other read of the place made
 * right, and 6 places more were read right (docs/recognition.md). A blob
 * of up to JOINED_BAND_SOLIDITY is held too where a dot-sized plain leaf
 * (dot_sized) is as elongated as a band's piece (JOINED_BAND_ELONGATION):
 * the Lanczos read's Sauvola threshold read a 41 px 2 of reacTIVision's
 * set as 11 on the sheet (sheet-half and the gamma-encoded sheet at 48
 * frames, frame 38), its two-hole blobs joined into a blob of four
 * filling 0.805 and a piece of the edge's band of 1.2 median dots, its
 * covariance 9.8:1, taken for a dot. Over the 24- and 48-frame sets and
 * sheet-half 501-524, the gamma sheet, phone-half and shadow-small at
 * other seeds, such reads with a blob of 0.80-0.85 were 7 wrong and 14
 * right ones; the right ones' dot-sized leaves had at most 4.6:1, 5 of
 * the wrong ones 5.1-11.7:1. A blob filling up to JOINED_BAY_SOLIDITY is
 * held too where a closing gives it a bay of half the median hole
 * (ring_pocket, as blob_bay asks): the Lanczos read took a 29 px 59 of
 * reacTIVision's set for 88 on the shadow-small preset (seed 44, frame
 * 30: two one-hole blobs joined, filling 0.82 of the ellipse around an
 * 8 px bay against holes of 8-12 enlarged px, an 11 px piece among dots
 * of 16-21). Between 0.8 and 0.86 the right reads of the 24- and
 * 48-frame sets and phone-half 501-508 had bays of 0.2-0.33 median holes,
 * but for a 103 px 84 whose place another read holds; the wrong ones
 * 0.2-1.6, most over a half. The solidity is tried first, then the
 * leaves, then the set, then the pixels. */
static bool joined_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			const char *canon)
{
	const int n = c->n;
	if (n < 0 || !c->n_leaf)
		return false;
	const int64_t med = c->area[(c->n_leaf - 1) / 2];
	/* band: a dot-sized plain leaf as elongated as a band's piece; -1
	 * not looked at yet. */
	int band = -1;
	for (int q = 0; q < n; q++) {
		if (m->flags[c->kid[q]] & FLAG_REPAIRED)
			continue;
		const int j = kid_holes(m, t, c, q);
		if (j < 2)
			continue;
		const double sol = kid_solidity(m, t, c, q);
		if (sol >= JOINED_BAY_SOLIDITY)
			continue;
		if (sol >= JOINED_SOLIDITY && sol < JOINED_BAND_SOLIDITY && band < 0) {
			band = 0;
			for (int i = 0; i < n && !band; i++) {
				const struct region *g = reg(m, t, c->kid[i]);
				band = c->plain[i] && dot_sized(g->area, med) &&
				       elongated(g, JOINED_BAND_ELONGATION);
			}
		}
		if (!split_in_set(m->cfg.trees, canon, j, true))
			continue;
		if (sol < JOINED_SOLIDITY || (sol < JOINED_BAND_SOLIDITY && band > 0))
			return true;
		if (kid_pocket(m, t, c, q) >= bay_pocket_min(kids_median_hole(m, t, c)))
			return true;
	}
	return false;
}

/* Whether a child of root with holes may have lost one into a bay of its
 * outline: it fills under BAY_SOLIDITY of its moment ellipse and a
 * closing gives it a pocket of the root's area (ring_pocket) of at least
 * 1 / BAY_MERGED_DIV of the symbol's median hole (and CUT_MIN_POCKET).
 * Then a leaf of about twice the median area need not be two merged
 * (merged_decode): where a hard shadow's edge crosses a symbol of a
 * gamma-encoded frame, the third scale's first pass opened a 3-hole
 * blob's hole (a 13 px pocket against holes of 17, the blob filling 0.879
 * of its ellipse) and the edge's dark band grew a dot to 1.6 times the
 * median (2.6 times as long as wide), which counted twice read a 61 px 6
 * of reacTIVision's set as 63 (sheet-half, --gamma 2.2, seed 501, frame
 * 11), and the first scale on the phone-half preset (seed 41, frame 42)
 * read a 52 px 1 as 71: a three-hole blob's hole opened (a 10 px pocket
 * against holes of 10-13, 0.87 of its ellipse) while a one-hole blob's
 * ring broke into a 7 px and an 11 px arc, the larger counted twice. A
 * hole counted twice is as doubtful: the deblurring pass read a 53 px 1
 * as 48 so on a gamma-encoded sheet (the gamma set at 48 frames, frame
 * 47: a three-hole blob's hole opened, an 8 px pocket against holes of 7,
 * the blob filling 0.879; two holes of another blob run together, 16 px,
 * 8 times as long as wide, counted twice; a 4 px speck for a dot). Any
 * tree: the set cannot tell which node was lost. */
static bool blob_bay(const struct match *m, const struct region_tree *t, int32_t root)
{
	struct root_kids c;
	const int n = root_children(m, t, root, &c);
	int need = -1;
	for (int q = 0; q < n; q++) {
		if ((m->flags[c.kid[q]] & FLAG_REPAIRED) || kid_holes(m, t, &c, q) < 1 ||
		    kid_solidity(m, t, &c, q) >= BAY_SOLIDITY)
			continue;
		if (need < 0)
			need = bay_pocket_min(kids_median_hole(m, t, &c));
		if (kid_pocket(m, t, &c, q) >= need)
			return true;
	}
	return false;
}

/* Whether the leaf that a read one node short counts twice (merged_decode,
 * a leaf of the root) may be a piece of a blob's wall instead, broken off
 * where two of the blob's holes opened into the root's area: a child of
 * the root with holes, its box within 2 px of the leaf's, that fills
 * under BAY_SOLIDITY of its moment ellipse (filled_solidity, its holes
 * taken for it), where the tree read (the leaf counted once) with that
 * leaf taken away and two holes given to that child is in the set
 * (moved_in_set, dh 2): the same node count as the reading that counts
 * the leaf twice. A motion streak across a three-hole blob of our set
 * broke its wall between the holes (motion, 48 frames, seed 37, frame
 * 42: the first scale read an 84 px 201 as 212): one piece kept a hole,
 * two holes opened into the root's area, and the rest of the wall, a
 * bent band of 79 px among dots of 30 (2.6 times the median, 17 times as
 * long as wide, as two dots the streak ran together are), was counted
 * twice; the piece with the hole filled 0.86 of its ellipse. Over the
 * realistic presets at 24 and 48 frames with both sets and 52 sets more
 * at 24 frames (motion seeds 60-67 with both sets, oblique and
 * sheet-half, six other presets), the rule held 9 reads of IDs not in the
 * frame (children filling 0.78-0.93) and one right read, which another
 * pass read as well (sun, seed 60, reacTIVision's set, frame 4: a 58 px
 * 81 whose four-hole blob filled 0.879 in a hard shadow beside a 37 px
 * dot-and-edge piece); the other right reads with such a leaf had such
 * children filling 0.964 or more. The boxes and the solidity are tried
 * first, then the set. */
static bool wall_piece(const struct match *m, const struct region_tree *t, int32_t root, int32_t leaf)
{
	struct root_kids c;
	const int n = root_children(m, t, root, &c);
	const struct region *l = reg(m, t, leaf);
	char raw[CANON_CAP];
	raw[0] = 0;
	for (int q = 0; q < n; q++) {
		const struct region *b = reg(m, t, c.kid[q]);
		if (c.plain[q] || (m->flags[c.kid[q]] & FLAG_REPAIRED) || !boxes_near(l, b, 2))
			continue;
		const int j = kid_holes(m, t, &c, q);
		if (j < 1 || kid_solidity(m, t, &c, q) >= BAY_SOLIDITY)
			continue;
		if (!raw[0]) {
			struct canon_ctx cc = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1,
					       .dup2 = -1, .uncut = -1};
			if (canon_string(&cc, root, -1, raw, sizeof raw) <= 0)
				return false;
		}
		if (moved_in_set(m->cfg.trees, raw, j, 2))
			return true;
	}
	return false;
}

/* Whether a blob of the symbol at root (a child of the root) has holes
 * (its children that are leaves, specks left out) of uneven areas: the
 * largest HOLES_UNEVEN_X times the smallest or more. A symbol's holes are
 * drawn alike; the reads of reacTIVision's set on the small preset (20-28
 * px), and of both sets on the tilt, barrel, shadow and sun presets at
 * 24 frames, have under 7 times between a blob's holes, whatever the
 * pass (every realistic preset at 24 frames with both sets, and
 * sheet-half at seeds 501-524: under 6.5). A card's white margin taken
 * for a root holds the whole symbol as one "blob", whose holes are the
 * symbol's holes (3-4 px) and the pieces of its own root (29-30 px), and
 * noise specks of the margin as its "dots": the first scale read a 26 px
 * 171 so as a 54 px 90 (small, 24-28 px, seed 58). Two blobs joined
 * across a hard shadow's band hold the band's noise between them as 1-2 px
 * holes beside their own 4-7 px ones (a small root's read keeps them): the
 * scaled pass's lower rung read a 33 px 4 of reacTIVision's set so as a
 * 48 px 51 on sheet-half (seed 520, frame 22), 7 times apart. */
static bool holes_uneven(const struct match *m, const struct region_tree *t, int32_t root)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, root, &n_adj);
	for (int i = 0; i < n_adj; i++) {
		const int32_t k = l[i];
		if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[k] != root)
			continue;
		int lo = 0, hi = 0, n_k;
		const int32_t *lk = adj_of(m, t, k, &n_k);
		for (int z = 0; z < n_k; z++) {
			const int32_t g = lk[z];
			if ((m->state[g] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[g] != k || has_kids(m, t, g))
				continue;
			const int a = reg(m, t, g)->area;
			lo = !lo || a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
		if (lo && hi >= HOLES_UNEVEN_X * lo)
			return true;
	}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with two holes of a blob run together and a piece taken
 * for a dot: a blob whose children are all leaves holds a hole of at
 * least MERGED_AREA_X10 / 10 times the symbol's median hole (median_hole)
 * and elongated like two discs side by side or more
 * (MERGED_HOLE_ELONGATION), and the tree with that blob given one more
 * hole and a plain leaf taken away is in the set (moved_in_set): the same
 * node count, so every count passes, and the leaf-size filter (§6) judges
 * holes and dots apart. Where a hard shadow's edge crosses a symbol the
 * wall between two holes breaks in the edge's band, and a speck of the
 * band or a piece of a wall stays in the root's area: on the oblique
 * preset with reacTIVision's set the upsampled pass read a 32 px 5 as 28
 * (a hole of 34 enlarged px against holes of 12-21, elongation 7.5) and a
 * 30 px 189 as 209 (54 px against 18-27, 9.4), nothing else reading
 * their places. Over the whole reads of the oblique preset's 16 seeds
 * (22 000) such a hole came with 4 wrong reads and 3 right ones (the
 * ratio pass's, elongation 5.4 and 5.9, whose places other passes read
 * right too). Holes are judged
 * where their median has MERGED_HOLE_MIN px or more: smaller ones are a
 * few pixels whose shape says nothing (1-2 px holes in a line). The sizes
 * are tried first, then the shape, then the set. */
static bool merged_hole_read(const struct match *m, const struct region_tree *t, int32_t root,
			     struct root_kids *c, const char *canon)
{
	/* The holes' smallest and largest area first: no hole has 1.6 times
	 * the median where none has 1.6 times the smallest, and most reads
	 * end here, nothing sorted. */
	int lo = 0, hi = 0, n_adj;
	const int32_t *l = adj_of(m, t, root, &n_adj);
	for (int i = 0; i < n_adj; i++) {
		if (!kept_child(m, l[i], root))
			continue;
		int n_k;
		const int32_t *lk = adj_of(m, t, l[i], &n_k);
		for (int z = 0; z < n_k; z++)
			if (kept_child(m, lk[z], l[i])) {
				const int a = reg(m, t, lk[z])->area;
				lo = !lo || a < lo ? a : lo;
				hi = a > hi ? a : hi;
			}
	}
	if (10 * hi < MERGED_AREA_X10 * lo || hi < MERGED_HOLE_MIN)
		return false;
	const int n = c->n;
	if (n < 0 || !c->n_leaf)
		return false;
	const int med = kids_median_hole(m, t, c);
	if (med < MERGED_HOLE_MIN)
		return false;
	for (int q = 0; q < n; q++) {
		const int j = kid_holes(m, t, c, q);
		if (j < 1)
			continue;
		int n_k;
		const int32_t *lk = adj_of(m, t, c->kid[q], &n_k);
		for (int z = 0; z < n_k; z++) {
			const int32_t g = lk[z];
			if (!kept_child(m, g, c->kid[q]))
				continue;
			const struct region *h = reg(m, t, g);
			if (10 * h->area >= MERGED_AREA_X10 * med && elongated(h, MERGED_HOLE_ELONGATION) &&
			    moved_in_set(m->cfg.trees, canon, j, 1))
				return true;
		}
	}
	return false;
}

/* Whether hole h of blob b is walled off from the outside by a single
 * pixel somewhere: a pixel of h, one of b and one of neither in a row or
 * a column. Reads the runs of b's box alone, on the stack; false where
 * that box is over CUT_BOX_MAX a side. */
static bool thin_wall(const struct region_tree *t, int32_t b, int32_t h)
{
	const struct region *g = &t->regions[b];
	enum { M = 2, SIDE = CUT_BOX_MAX + 2 * M };
	const int w = g->x1 - g->x0 + 1 + 2 * M, hh = g->y1 - g->y0 + 1 + 2 * M;
	if (w > SIDE || hh > SIDE)
		return false;
	uint8_t px[SIDE * SIDE];
	memset(px, 0, (size_t)(w * hh));
	box_paint(t, g->x0, g->y0, g->x1, g->y1, px + M * w + M, w, (const int32_t[]){b, h}, (const uint8_t[]){1, 2}, 2);
	const int step[4] = {1, -1, w, -w};
	for (int y = M; y < hh - M; y++)
		for (int x = M; x < w - M; x++) {
			const int i = y * w + x;
			if (px[i] != 2)
				continue;
			for (int k = 0; k < 4; k++)
				if (px[i + step[k]] == 1 && px[i + 2 * step[k]] == 0)
					return true;
		}
	return false;
}

/* Whether a read whole at root, canon its string, may be another tree of
 * the set with a dot bridged to a blob (match_config.thin_walls, the
 * upsampled pass and the deblurring pass's windows): the smallest of a
 * blob's two or more holes (its children all leaves) has under half the
 * symbol's median hole (the leaves under the root's children) and is
 * walled off from the root's area by a single pixel somewhere
 * (thin_wall), and the tree with that blob one hole short and
 * one more plain leaf is in the set (moved_in_set): the same node count.
 * Enlarged, a dot a pixel from a blob is joined to it by a 1 px bridge
 * that encloses a piece of the root's area as a small hole: the pass read
 * a 25 px 107 of reacTIVision's set as 94 so (small, 24-28 px, seed 57),
 * a 4 px hole against holes of 7-13. A one-hole blob is left alone: its
 * one hole may simply have shrunk (a right 34 with a 4 px hole). Holes
 * and walls are a few enlarged pixels there, so the sizes go first; a
 * thin wall alone is common (1300 of 6000 right reads have one). The
 * small-symbol pass (thin_walls off: its 1-2 px holes are often specks
 * walled off by a pixel) takes it as a doubt instead, its read standing
 * only where the enlarged frame confirms it (match_tree_decode): on the
 * room preset with reacTIVision's set (seed 88, frame 16) that pass read a
 * 37 px 40 at the frame's left edge as 58, a 1 px hole against holes of
 * 4-6, which the upsampled pass does not confirm. Over the realistic
 * presets at 24 and 48 frames with the three sets, oblique seeds 60-76,
 * 78 and 80 and room seeds 88 and 91, the rule held in that pass for 3
 * reads of an ID not in the frame and one of an ID in it (the mini set,
 * oblique at 48 frames, frame 45), whose place is still read right. */
static bool bridged_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			 const char *canon)
{
	const int n = c->n;
	if (n < 0)
		return false;
	const int med = kids_median_hole(m, t, c);
	if (!med)
		return false;
	for (int q = 0; q < n; q++) {
		const int j = kid_holes(m, t, c, q);
		if (j < 2 || (m->flags[c->kid[q]] & FLAG_REPAIRED))
			continue;
		int32_t small = -1;
		int n_k;
		const int32_t *lk = adj_of(m, t, c->kid[q], &n_k);
		for (int z = 0; z < n_k; z++) {
			const int32_t g = lk[z];
			if (kept_child(m, g, c->kid[q]) &&
			    (small < 0 || reg(m, t, g)->area < reg(m, t, small)->area))
				small = g;
		}
		if (small >= 0 && 2 * reg(m, t, small)->area < med && thin_wall(t, c->kid[q], small) &&
		    moved_in_set(m->cfg.trees, canon, j, -1))
			return true;
	}
	return false;
}

/* Whether a small-symbol read (match_config.specks_unconfirmed) whole at
 * root, canon its string, may be another tree of the set with a noise
 * speck taken for a blob's hole while a one-hole blob's hole closed: a
 * plain leaf of the root has at least HOLE_CLOSED_X times the median
 * plain leaf's area (the blob, filled), a blob of two or more holes, all
 * leaves, keeps a 1-2 px speck for one (as that pass's reads do), and the
 * tree with one of that blob's holes given to a plain leaf is in the set
 * (hole_to_leaf_in_set): the same node count, so the read passes every
 * count and the speck share. A 25 px 30 of reacTIVision's set read as 80
 * so (the small preset at 24-28 px, seed 48): a leaf of 20 px among dots
 * of 4-6. The sizes are tried first, so most reads end at their sort. */
static bool closed_hole_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			     const char *canon)
{
	const int n = c->n;
	if (n < 0 || c->n_leaf < 2 || c->area[c->n_leaf - 1] < HOLE_CLOSED_X * c->area[(c->n_leaf - 1) / 2])
		return false;
	/* tried[j]: a blob of j holes looked up already. */
	bool tried[TREES_MAX_NODES + 1] = {false};
	for (int q = 0; q < n; q++) {
		const int j = kid_holes(m, t, c, q);
		if (j < 2 || tried[j])
			continue;
		bool speck = false;
		int n_k;
		const int32_t *lk = adj_of(m, t, c->kid[q], &n_k);
		for (int z = 0; z < n_k && !speck; z++)
			speck = kept_child(m, lk[z], c->kid[q]) && reg(m, t, lk[z])->area <= SPECK_MAX_AREA;
		if (!speck)
			continue;
		tried[j] = true;
		if (hole_to_leaf_in_set(m->cfg.trees, canon, j))
			return true;
	}
	return false;
}

/* The area a plain leaf of a root's children c needs to be a blob whose
 * holes closed (HOLE_CLOSED_X times the median plain leaf), where c has at
 * least min_leaf plain leaves and its largest has that area; else -1. */
static int64_t closed_leaf_min(struct root_kids *c, int min_leaf)
{
	if (c->n < 0 || c->n_leaf < min_leaf)
		return -1;
	const int64_t big = (int64_t)HOLE_CLOSED_X * c->area[(c->n_leaf - 1) / 2];
	return c->area[c->n_leaf - 1] < big ? -1 : big;
}

/* Whether a symbol read whole, canon its string, may be another tree of
 * the set with a one-hole blob's hole closed and one more leaf taken for
 * a dot, whatever the leaves' sizes (match_config.closed_leaf): the tree
 * with a plain leaf taken away and a hole given to a plain leaf is in the
 * set (moved_in_set), the same node count. A wide local mean over a
 * deconvolved streak closes a one-hole blob into a leaf of a dot's size
 * and lifts a piece of the ringing to a dot: the deblurring pass's upper
 * rung read a streaked 57 px 55 of reacTIVision's set so as 89, all eight
 * plain leaves of 19-28 px (the motion preset, seed 37, frame 5), which
 * closed_ring_read() holds only where the leaf outgrew a ring. The rung
 * reads whole trees only (match_tree_decode): counting a leaf as two
 * merged ones, it read a 46 px 57 under a 4 px streak as 34 this way
 * too. Measured in docs/recognition.md, "The deblurring pass's upper
 * rung". */
static bool closed_leaf_read(const struct match *m, const char *canon)
{
	return moved_in_set(m->cfg.trees, canon, 0, 1);
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a one-hole blob's hole shrunk to specks and one
 * more leaf taken for a dot: a plain leaf of the root has at least
 * HOLE_CLOSED_X times the median plain leaf's area and holds a speck of
 * the other colour (specks are left out of the tree, so it reads as a
 * dot), and the tree with a plain leaf taken away and a hole given to a
 * plain leaf is in the set (moved_in_set): the same node count. Where a
 * shadow's soft edge crosses a symbol, the threshold closes a one-hole
 * blob's hole but for a pixel or two: the ink windows' fallback read a
 * 38 px 16 of reacTIVision's set at the frame's left edge as 38 so (room,
 * seed 88, frame 10: a 91 px leaf with two 1 px specks among dots of
 * 23-31, a 52 px piece of the root's edge taken for a dot). A dot holds a
 * speck now and then, but is the size of the others. Over the realistic
 * presets at 24 and 48 frames with the three sets, oblique seeds 60-76, 78
 * and 80 and room seeds 88 and 91, such a leaf came with 4 reads of an ID
 * not in the frame and one of an ID in it, which another rule leaves
 * fuzzy (shadow-small, reacTIVision's set, frame 15: 3.8 times the median,
 * in the small-symbol pass); right reads' leaves with specks and the tree
 * in the set had at most 2.3 times the median. The sizes are tried first,
 * then the specks, then the set. */
static bool specked_leaf_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			      const char *canon)
{
	const int n = c->n;
	const int64_t big = closed_leaf_min(c, 2);
	if (big < 0)
		return false;
	for (int q = 0; q < n; q++) {
		if (!c->plain[q] || reg(m, t, c->kid[q])->area < big)
			continue;
		int n_k;
		const int32_t *lk = adj_of(m, t, c->kid[q], &n_k);
		for (int z = 0; z < n_k; z++)
			if (m->parent[lk[z]] == c->kid[q] &&
			    (m->state[lk[z]] & (ST_RESOLVED | ST_SPECK)) == (ST_RESOLVED | ST_SPECK))
				return moved_in_set(m->cfg.trees, canon, 0, 1);
	}
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a one-hole blob's hole closed whole and one more
 * leaf taken for a dot: a plain leaf of the root has at least
 * HOLE_CLOSED_X times the median plain leaf's area and more than every
 * one-hole blob of the read (a ring's area and its hole's: the blob
 * filled), and the tree with a plain leaf taken away and a hole given to
 * a plain leaf is in the set (moved_in_set): the same node count.
 * specked_leaf_read()'s kind with no speck left in the leaf, the leaf's
 * size against the rings its cue instead: where a hard shadow's edge
 * crosses a 26 px 33 of reacTIVision's set, the upsampled pass's local
 * mean read of the place (mean_up) closed a one-hole blob into an 89 px
 * leaf among dots of 19-23 and rings of 58-68, took a 57 px piece of the
 * edge for a dot and read 69 (shadow-small, seed 91, frame 12); Sauvola's
 * read there, kept only where the mean's read holds none, read 33. A dot that
 * a speck or a shadow's piece joined is as large against the dots but no
 * larger than the rings: the scaled pass's right 52 px 8 on the tilted
 * sheet (frame 4), a 142 px leaf, 3.6 times the median, beside a 147 px
 * ring. */
static bool closed_ring_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			     const char *canon)
{
	const int64_t big = closed_leaf_min(c, 2);
	if (big < 0)
		return false;
	const int64_t leaf = c->area[c->n_leaf - 1];
	bool ring = false;
	for (int q = 0; q < c->n; q++) {
		if (c->plain[q] || kid_holes(m, t, c, q) != 1)
			continue;
		if (reg(m, t, c->kid[q])->area >= leaf)
			return false;
		ring = true;
	}
	return ring && moved_in_set(m->cfg.trees, canon, 0, 1);
}

/* Whether the tree canon (canonical, with colour letter) is a tree of the
 * set with a two-hole blob's holes closed: one of its plain leaves given
 * two holes ("1" then "22") and two more plain leaves taken away, the same
 * node count. */
static bool closed_blob_in_set(const struct tree_set *set, const char *canon)
{
	const char *seg[TREES_MAX_NODES];
	int len[TREES_MAX_NODES];
	const int n = child_slices(canon, seg, len);
	/* Plain leaves ("1") come last in canon's order. */
	if (n < 3 || len[n - 1] != 1 || len[n - 2] != 1 || len[n - 3] != 1)
		return false;
	seg[n - 3] = "122";
	len[n - 3] = 3;
	return slices_in_set(set, canon, seg, len, n - 2);
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a two-hole blob's holes closed and two more leaves
 * taken for dots: a plain leaf of the root has at least HOLE_CLOSED_X
 * times the median plain leaf's area, fills under CLOSED_BLOB_SOLIDITY of
 * its moment ellipse (filled_solidity), and the tree with it a two-hole
 * blob and two plain leaves fewer is in the set (closed_blob_in_set): the
 * same node count. specked_leaf_read's kind with two holes closed whole,
 * no speck left: where a hard shadow's edge crosses a 35 px 6 of
 * reacTIVision's set near the wide-angle lens's corner, the Lanczos read
 * of its place (up_sharp) closed a two-hole blob into a 71 px leaf (7.6
 * times as long as wide, filling 0.815) and took four pieces of the
 * edge's band (7-11 px) for dots, reading 105 (oblique, seed 61, frame
 * 16). Over the 24- and 48-frame sets, sheet-half 501-524 and oblique
 * 60-75 such a leaf came with 13 reads: the two whose places changed were
 * wrong (that 105; a 34 px 150 read as 189 on the dim preset at 48
 * frames, frame 45), 9 were of IDs in no frame of their set, 2 of an ID
 * in the set's frames (83, room at 48 frames and oblique 73), where the
 * detections stayed the same. The sizes are tried first, then the
 * solidity, then the set. */
static bool closed_blob_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			     const char *canon)
{
	const int n = c->n;
	const int64_t big = closed_leaf_min(c, 3);
	if (big < 0)
		return false;
	for (int q = 0; q < n; q++)
		if (c->plain[q] && reg(m, t, c->kid[q])->area >= big && !(m->flags[c->kid[q]] & FLAG_REPAIRED) &&
		    kid_solidity(m, t, c, q) < CLOSED_BLOB_SOLIDITY)
			return closed_blob_in_set(m->cfg.trees, canon);
	return false;
}

/* Whether leaf l, which merged_decode would count twice (canon: the tree
 * so counted), may be a one-hole blob whose wall a cut opened: the tree
 * with l a one-hole blob instead is in the set too (moved_in_set with no
 * hole: l's second count taken away and a hole given to l), and a
 * closing gives l a pocket (ring_pocket) of a quarter of its area or more
 * (RING_POCKET_DIV), the hole back. */
static bool opened_ring(const struct match *m, const struct region_tree *t, int32_t l, const char *canon)
{
	if (!moved_in_set(m->cfg.trees, canon, 0, 1))
		return false;
	const int d = ring_pocket(m, t, l);
	return d >= CUT_MIN_POCKET && RING_POCKET_DIV * d >= reg(m, t, l)->area;
}

/* ---- a root one level out ------------------------------------------------ */

/* A child of the root whose box spans at least RING_SPAN_NUM /
 * RING_SPAN_DEN of the root's box both ways, and holds the boxes of all
 * the root's other children (at least RING_MIN_HELD of them), makes the
 * root a ring around it (ring_read). */
#define RING_SPAN_NUM 3
#define RING_SPAN_DEN 4
#define RING_MIN_HELD 2

/* Whether root is a ring around the symbol's own root rather than a root:
 * one child spans most of its box and holds every other child's box.
 * A motion streak that smears a white blob across the black root's edge
 * joins it to the white card margin around a black-rooted symbol: that
 * margin, the blob with it, reads as a white root whose children are the
 * black root (its white leaves now holes) and the blob's holes (dots of
 * it) inside the black root's box, the node count of another symbol of a
 * set with both colours (the deblurring pass read a 55 px 207 of
 * reacTIVision's set as a 67 px 90 so on the motion preset, its lower
 * rung, with nothing else read there). A symbol's own blobs hold no other
 * leaf's box: of the 34 000 decoded reads of the realistic presets (the 9
 * of tilt to room at 48 frames with our set, reacTIVision's default set
 * and its mini set) 9 had a child spanning three quarters of the root both
 * ways, and the 5 whose child held all the others' boxes were no right
 * reads: that 90, a 117 px 90 around a 103 px 199 on shadow, and 44-52 px
 * roots of the mini set on small (around 22 px cards; one had hidden a
 * right read of a 22 px 3, frame 32) and blur (its recall the same
 * without it). */
static bool ring_read(const struct match *m, const struct region_tree *t, int32_t root,
		      struct root_kids *c)
{
	const int n = c->n;
	if (n < RING_MIN_HELD + 1)
		return false;
	const struct region *r = reg(m, t, root);
	const int64_t rw = r->x1 - r->x0 + 1, rh = r->y1 - r->y0 + 1;
	for (int i = 0; i < n; i++) {
		const struct region *b = reg(m, t, c->kid[i]);
		if (RING_SPAN_DEN * (int64_t)(b->x1 - b->x0 + 1) < RING_SPAN_NUM * rw ||
		    RING_SPAN_DEN * (int64_t)(b->y1 - b->y0 + 1) < RING_SPAN_NUM * rh)
			continue;
		bool held = true;
		for (int j = 0; j < n && held; j++) {
			const struct region *g = reg(m, t, c->kid[j]);
			held = j == i || (g->x0 >= b->x0 && g->x1 <= b->x1 && g->y0 >= b->y0 && g->y1 <= b->y1);
		}
		return held;
	}
	return false;
}

/* ---- a hole split corner to corner --------------------------------------- */

/* Holes of at most SPLIT_HOLE_SIDE pixels a side are tried for a split
 * (split_read): the 1-2 px holes of symbols under about 30 px. */
#define SPLIT_HOLE_SIDE 2
#define SPLIT_BOX (2 * SPLIT_HOLE_SIDE + 1)

/* Whether holes h and g, each at most SPLIT_HOLE_SIDE px a side, meet
 * corner to corner: a pixel of one has a diagonal neighbour in the other
 * (regions are 4-connected, so one hole thresholded as a checkerboard
 * is two). Reads the runs of their box alone, on the stack. */
static bool corner_touch(const struct region_tree *t, int32_t h, int32_t g)
{
	const struct region *a = &t->regions[h], *b = &t->regions[g];
	if (a->x1 - a->x0 >= SPLIT_HOLE_SIDE || a->y1 - a->y0 >= SPLIT_HOLE_SIDE ||
	    b->x1 - b->x0 >= SPLIT_HOLE_SIDE || b->y1 - b->y0 >= SPLIT_HOLE_SIDE || !boxes_near(a, b, 1))
		return false;
	const int x0 = a->x0 < b->x0 ? a->x0 : b->x0, y0 = a->y0 < b->y0 ? a->y0 : b->y0;
	const int x1 = a->x1 > b->x1 ? a->x1 : b->x1, y1 = a->y1 > b->y1 ? a->y1 : b->y1;
	const int w = x1 - x0 + 1, hh = y1 - y0 + 1;
	uint8_t px[SPLIT_BOX * SPLIT_BOX] = {0};
	box_paint(t, x0, y0, x1, y1, px, w, (const int32_t[]){h, g}, (const uint8_t[]){1, 2}, 2);
	for (int y = 0; y + 1 < hh; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t c = px[y * w + x];
			if (!c)
				continue;
			const uint8_t *below = px + (y + 1) * w + x;
			if ((x > 0 && below[-1] == 3 - c) || (x + 1 < w && below[1] == 3 - c))
				return true;
		}
	return false;
}

/* Whether two of the n holes meet corner to corner (corner_touch). */
static bool any_corner_touch(const struct region_tree *t, const int32_t *hole, int n)
{
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (corner_touch(t, hole[a], hole[b]))
				return true;
	return false;
}

/* Whether a symbol read whole at root, canon its string, may be another
 * tree of the set with a dot lost and one hole of a blob split in two:
 * the root holds a speck (a dot shrunk to 1-2 px is one: candidates.c
 * takes no specks of a small root's own area for dots), a blob has two
 * 1-2 px holes that meet corner to corner (a 2 x 2 px hole thresholded
 * as a checkerboard is two 4-connected holes), and the tree with that
 * blob one hole short and one more plain leaf is in the set: the same
 * node count, so the read passes every count. A 28.8 px 130 of
 * reacTIVision's set read as 175 by the first scale so. Not in the
 * passes whose threshold keeps noise (few_specks): there a speck in the
 * root is no sign of a lost dot (a right 28 px 81 of the small-symbol
 * pass, two holes of a blob corner to corner, would be lost). The speck
 * is looked for first, so most reads end there, their holes unread. */
static bool split_read(const struct match *m, const struct region_tree *t, int32_t root, const char *canon)
{
	if (m->cfg.few_specks)
		return false;
	int n_adj;
	const int32_t *l = adj_of(m, t, root, &n_adj);
	bool speck = false;
	for (int i = 0; i < n_adj && !speck; i++)
		speck = m->parent[l[i]] == root &&
			(m->state[l[i]] & (ST_RESOLVED | ST_SPECK)) == (ST_RESOLVED | ST_SPECK);
	if (!speck)
		return false;
	for (int i = 0; i < n_adj; i++) {
		const int32_t k = l[i];
		if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[k] != root)
			continue;
		/* Its holes (a hole with children of its own is no leaf, and then
		 * canon holds no such blob for moved_in_set to find). */
		int32_t hole[TREES_MAX_NODES];
		int n = 0, n_k;
		const int32_t *lk = adj_of(m, t, k, &n_k);
		for (int z = 0; z < n_k && n < TREES_MAX_NODES; z++) {
			const int32_t g = lk[z];
			if (kept_child(m, g, k))
				hole[n++] = g;
		}
		if (n < 2)
			continue;
		if (any_corner_touch(t, hole, n) && moved_in_set(m->cfg.trees, canon, n, -1))
			return true;
	}
	return false;
}

/* Whether a symbol read whole, c its root's children and canon its
 * string, may be another tree of the set with two dots lost and one hole
 * of a blob split in three: a blob has two holes that meet corner to
 * corner (corner_touch) and three holes or more of at most SPECK_MAX_AREA
 * px and at most half the symbol's median hole (median_hole), and the tree
 * with that blob two holes short and two more plain leaves is in the set
 * (moved_in_set): the same node count. split_read()'s kind with one piece
 * more, where the lost dots left no speck in the root: where a hard
 * shadow's edge crosses a 37 px 38 of reacTIVision's set, the third
 * scale's local mean split a three-hole blob's 4 px hole into pieces of
 * 1, 2 and 1 px (two meeting corner to corner) against holes of 4-8 px
 * and lost two dots, reading 46 (shadow-small, seed 93, frame 6). A right
 * read's blob whose 1-2 px holes are as small as the symbol's other holes
 * is no such blob (a 29 px 166 of shadow-small, holes of 1-4 px, median
 * 2: two pieces of at most half of it). Not in the passes whose threshold
 * keeps noise (few_specks), as split_read(). */
static bool shattered_read(const struct match *m, const struct region_tree *t, struct root_kids *c,
			   const char *canon)
{
	if (m->cfg.few_specks || c->n < 0)
		return false;
	int med = -1;
	for (int q = 0; q < c->n; q++) {
		const int32_t k = c->kid[q];
		int32_t hole[TREES_MAX_NODES];
		int n = 0, n_k;
		const int32_t *lk = adj_of(m, t, k, &n_k);
		for (int z = 0; z < n_k && n < TREES_MAX_NODES; z++)
			if (kept_child(m, lk[z], k))
				hole[n++] = lk[z];
		int pieces = 0;
		for (int a = 0; a < n; a++)
			pieces += reg(m, t, hole[a])->area <= SPECK_MAX_AREA;
		if (pieces < 3)
			continue;
		/* The median only where three holes are a speck's size: most
		 * reads end above. */
		if (med < 0)
			med = kids_median_hole(m, t, c);
		pieces = 0;
		for (int a = 0; a < n; a++)
			pieces += 2 * reg(m, t, hole[a])->area <= med && reg(m, t, hole[a])->area <= SPECK_MAX_AREA;
		if (pieces < 3)
			continue;
		if (any_corner_touch(t, hole, n) && moved_in_set(m->cfg.trees, canon, n, -2))
			return true;
	}
	return false;
}


void match_tree_decode(struct match *m, const struct region_tree *t, int32_t root, int height, int nodes,
		       struct detections *out)
{
	if (m->state[root] & ST_CUT) {
		/* Read whole and singled out, or left alone: no fuzzy symbol. */
		char buf[CANON_CAP];
		struct canon_ctx c = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1,
				      .dup2 = -1, .uncut = -1};
		if (!is_valid(m, height, nodes) || canon_string(&c, root, -1, buf, sizeof buf) <= 0 ||
		    !cut_unique(m, t, root, tree_set_lookup(m->cfg.trees, buf)))
			return;
	}
	struct leaf_acc a;
	memset(&a, 0, sizeof a);
	leaves_walk(m, t, root, 0, &a);
	int32_t id = -1;
	bool completed = false, read_whole = false;
	char canon[CANON_CAP];
	if (is_valid(m, height, nodes)) {
		struct canon_ctx c = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1,
				      .dup2 = -1, .uncut = -1};
		if (canon_string(&c, root, -1, canon, sizeof canon) > 0 && leaves_uniform(&a)) {
			id = tree_set_lookup(m->cfg.trees, canon);
			read_whole = true;
		}
	} else {
		/* A leaf that may be an opened blob leaves the symbol fuzzy: the
		 * completion would find both trees anyway. Matchers of whole
		 * trees only (even_leaves, closed_leaf) count no leaf twice. */
		bool ring = false;
		for (int k = 1; k <= MERGED_MAX_SHORT && id < 0 && !ring && !m->cfg.even_leaves && !m->cfg.closed_leaf;
		     k++)
			if (is_valid(m, height, nodes + k) && merged_decode(m, t, root, k, &a, &id, &ring))
				nodes += k;
		if (id < 0 && !ring && m->cfg.complete && !m->cfg.closed_leaf && is_fuzzy(m, height, nodes) &&
		    leaves_uniform(&a)) {
			char buf[CANON_CAP];
			struct canon_ctx c = {.m = m, .tree = t, .state = m->state, .parent = m->parent, .dup = -1, .dup2 = -1};
			int whole = nodes;
			if (canon_string(&c, root, -1, buf, sizeof buf) > 0 && (id = match_complete(m, buf, &whole)) >= 0) {
				nodes = whole;
				completed = true;
			}
		}
	}
	if (id >= 0 && ((m->cfg.even_leaves && !leaves_even(m, t, root)) || holes_uneven(m, t, root)))
		id = -1;
	/* The root's children, for the guards below (each read them itself
	 * before, up to six times a read). */
	struct root_kids kids = {.n = -1};
	if (id >= 0)
		root_children(m, t, root, &kids);
	/* A ring around the symbol's own root is no root (ring_read). */
	if (id >= 0 && ring_read(m, t, root, &kids))
		id = -1;
	const bool veto =
		id >= 0 &&
		(m->cfg.dot_max_elongation > 0 || m->cfg.dot_max_area > 0 || m->cfg.dot_min_fill > 0) &&
		dots_odd(m, t, root, &kids);
	/* A veto stays one where a speck was taken for a dot too: it still
	 * cancels its pass's reads of other IDs at its place (merge_vetoes; on
	 * the dim preset, reacTIVision's set, a veto of the ratio pass so left
	 * fuzzy let that pass's 17 stand at a 61 px 56). */
	if (id >= 0 && read_whole &&
	    ((!veto && (speck_read(m, t, &kids, canon) || (m->cfg.bays && bay_read(m, t, &kids, canon)) ||
		       chip_read(m, t, &kids, canon))) ||
	     cut_read(m, t, root, &kids, canon) ||
	     arc_read(m, t, &kids, canon) ||
	     ring_pair_read(m, t, &kids, canon) ||
	     specked_leaf_read(m, t, &kids, canon) ||
	     closed_ring_read(m, t, &kids, canon) ||
	     closed_blob_read(m, t, &kids, canon) ||
	     merged_blob_read(m, t, &kids, MERGED_BLOB_BAY) ||
	     joined_few_read(m, t, &kids) ||
	     enclosed_read(m, t, &kids, canon) ||
	     (m->cfg.closed_leaf && closed_leaf_read(m, canon)) ||
	     joined_read(m, t, &kids, canon) ||
	     split_read(m, t, root, canon) ||
	     shattered_read(m, t, &kids, canon) ||
	     merged_hole_read(m, t, root, &kids, canon) ||
	     (m->cfg.thin_walls && bridged_read(m, t, &kids, canon))))
		id = -1;
	/* A small-symbol read that may be another ID's with a hole closed,
	 * with two blobs run together whose bay is a median hole or more
	 * (merged_blob_read, MERGED_BLOB_DOUBT), or with a dot bridged to a
	 * blob (bridged_read, which that pass's thin_walls leaves off), stands
	 * only where the enlarged frame confirms it, as one with more specks
	 * than the share (third.c, small_confirm). */
	const bool doubt = id >= 0 && read_whole &&
			   ((m->cfg.specks_unconfirmed && (closed_hole_read(m, t, &kids, canon) ||
							   merged_blob_read(m, t, &kids, MERGED_BLOB_DOUBT) ||
							   bridged_read(m, t, &kids, canon))) ||
			    (m->cfg.moved_unconfirmed && moved_read(m, t, &kids, canon)));
	if (id >= 0) {
		const int32_t at = out->n_fids;
		emit(out->fids, &out->n_fids, out->cap_fids, &out->overflow, reg(m, t, root), root, id, nodes,
		     completed || m->again, &a);
		if (veto && out->n_fids > at)
			out->fids[at].completed = FIDUCIAL_VETO;
		else if (((m->flags[root] & FLAG_UNCONFIRMED) || doubt) && out->n_fids > at)
			out->fids[at].completed = FIDUCIAL_UNCONFIRMED;
	} else if (!m->again) {
		emit(out->fuzzy, &out->n_fuzzy, out->cap_fuzzy, &out->overflow, reg(m, t, root), root, -1, nodes, false,
		     &a);
	}
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
				sort_inplace(sizes[c], (size_t)n_sz[c], sizeof(int), cmp_int);
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
		match_tree_decode(m, t, root, height, n_alive, out);
}

/* Pass 0 decodes whole and over-full candidates; pass 1 reports the fuzzy
 * ones that are not part of a symbol found in pass 0. */
static void candidate_decode(struct match *m, const struct region_tree *t, int32_t root, int pass,
			     struct detections *out)
{
	const int h = m->height[root], n = m->dc[root] + 1;
	if (is_valid(m, h, n)) {
		if (pass == 0)
			match_tree_decode(m, t, root, h, n, out);
	} else if (is_fuzzy(m, h, n)) {
		if (pass == 1 && !m->claimed[root])
			match_tree_decode(m, t, root, h, n, out);
	} else if (pass == 0) {
		over_decode(m, t, root, out);
	}
}

void match_candidates_decode(struct match *m, const struct region_tree *t, int32_t n_cands, struct detections *out)
{
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n_cands; i++)
			candidate_decode(m, t, m->cands[i], pass, out);
}
