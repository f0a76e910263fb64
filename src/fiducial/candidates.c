/* candidates.c - the matcher's bottom-up walk to candidate roots
 * (match_int.h step 1). */
#include <math.h>
#include <string.h>

#include "match_int.h"

#define BAD_FLAGS (REGION_BORDER | REGION_SATURATED | REGION_FRAGMENTED)
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
/* ... and none of its leaves is a bar of this elongation (has_bar_leaf; nor
 * of a bigger one that the repair round rebuilt, merged_ring_root). */
#define SMALL_BAR_RATIO 8.0
/* With match_config.few_specks, a small root takes specks for at most
 * 1 / SPECK_LEAVES_DIV of its nodes; with specks_unconfirmed, for up to
 * 1 / SPECK_UNCONFIRMED_DIV as an unconfirmed read. */
#define SPECK_LEAVES_DIV 5
#define SPECK_UNCONFIRMED_DIV 3
/* A root that touches the frame's edge (border_root): at most 1 /
 * BORDER_CONTACT_DIV of its box's longer side lies on the edge. */
#define BORDER_CONTACT_DIV 8

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

/* Nodes and height of the resolved sub-tree at n counting the specks that
 * small_candidate takes for leaves: those inside a region of the root's
 * sub-tree (depth >= 2 from the root), never the root's own (depth 1). A
 * 1-2 px speck directly in a root's area is as likely paper texture or
 * threshold noise as a dot, and one such speck taken for a dot while a
 * blob's hole closed, or a dot merged with the ring, reads as another
 * symbol of the set (a default symbol one hole or dot from another). */
static void speck_count(const struct match *m, const struct region_tree *t, int32_t n, int depth, int *nodes,
			int *height)
{
	(*nodes)++;
	if (depth > *height)
		*height = depth;
	if (depth > 10 || *nodes > TREES_MAX_NODES)
		return;
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n &&
		    (depth >= 1 || !(m->state[l[i]] & ST_SPECK)))
			speck_count(m, t, l[i], depth + 1, nodes, height);
}

static void specks_keep(struct match *m, const struct region_tree *t, int32_t n, int depth)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, n, &n_adj);
	m->state[n] &= (uint8_t)~ST_SPECK;
	if (depth > 10)
		return;
	for (int i = 0; i < n_adj; i++)
		if ((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == n &&
		    (depth >= 1 || !(m->state[l[i]] & ST_SPECK)))
			specks_keep(m, t, l[i], depth + 1);
}

/* Whether the sub-tree's pixels fill their moment ellipse to at least
 * SMALL_SOLIDITY, as the inside of a ring does (a filled convex
 * quadrilateral with rounded corners). */
static bool fills_ellipse(const struct subtree_sum *s)
{
	const double mx = s->sx / s->n, my = s->sy / s->n;
	const double cxx = s->sxx / s->n - mx * mx, cyy = s->syy / s->n - my * my, cxy = s->sxy / s->n - mx * my;
	const double det = cxx * cyy - cxy * cxy;
	return det > 0 && s->n >= SMALL_SOLIDITY * 4 * M_PI * sqrt(det);
}

/* A leaf shaped like a bar: the larger eigenvalue of its pixel covariance
 * at least SMALL_BAR_RATIO times the smaller (a disc 1, two touching discs
 * 5, a 17 x 4 px bar 19). */
static bool bar(const struct region *g)
{
	const double n = g->area, mx = g->sum_x / n, my = g->sum_y / n;
	const double cxx = g->sum_xx / n - mx * mx, cyy = g->sum_yy / n - my * my, cxy = g->sum_xy / n - mx * my;
	const double tr = 0.5 * (cxx + cyy), det = sqrt(0.25 * (cxx - cyy) * (cxx - cyy) + cxy * cxy);
	return tr - det > 0 ? tr + det >= SMALL_BAR_RATIO * (tr - det) : tr + det > 0;
}

/* Whether a leaf child of p (more than a speck) is a bar: the pieces of a
 * small symbol's ring, broken at its corners, lie in the card margin
 * around it as four bars, which the margin (a white root touching the
 * background) would take for dots. */
static bool has_bar_leaf(const struct match *m, const struct region_tree *t, int32_t p)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, p, &n_adj);
	for (int i = 0; i < n_adj; i++) {
		const int32_t k = l[i];
		if ((m->state[k] & (ST_RESOLVED | ST_SPECK)) != ST_RESOLVED || m->parent[k] != p || m->height[k] != 0)
			continue;
		const struct region *g = reg(m, t, k);
		if (g->area > 2 * SPECK_MAX_AREA && bar(g))
			return true;
	}
	return false;
}

/* A fragmented root of a box of SMALL_BOX_PX a side or more (smaller ones
 * are small_candidate's alone: a white margin around a small b symbol,
 * merged with its card, can hold a tree of the set): its sub-tree fills
 * its moment ellipse (a shadow's dark band that cut into it and brought
 * foreign branches leaves a notch), and, where the repair round rebuilt
 * its list (FLAG_REPAIRED), none of its leaves is a bar (has_bar_leaf).
 * A small card whose thin ring broke in places joins its white margin to
 * the white halo that Bernsen's flat rule paints around it: one flat
 * region of about twice the card's side whose noise specks saturate it
 * in the first round and which the repair round rebuilds; it fills its
 * ellipse, touches the table, and holds the card's black region whole
 * and the ring's pieces as "dots" (a 26 px 155 of reacTIVision's default
 * set read as a 54 px 99). Arcs of a ring run along it (8:1 and more); a
 * round dot, or two merged, does not. The first round's merged roots
 * keep their bar leaves: there the test cost right reads (motion and
 * room with our set) and traded one for a wrong ID (dim with
 * reacTIVision's set). */
static bool merged_ring_root(struct match *m, const struct region_tree *t, int32_t p)
{
	const struct region *g = reg(m, t, p);
	if (m->cfg.no_merged_rings || (g->x1 - g->x0 < SMALL_BOX_PX && g->y1 - g->y0 < SMALL_BOX_PX))
		return false;
	struct subtree_sum s;
	memset(&s, 0, sizeof s);
	subtree_sum(m, t, p, 0, &s);
	return fills_ellipse(&s) && !((m->flags[p] & FLAG_REPAIRED) && has_bar_leaf(m, t, p));
}

/* A small resolved region p (SMALL_ROOT_PX) that is not a whole
 * symbol as counted, or that touches a saturated region, read at its own
 * scale. On small symbols the holes of the blobs shrink to 1-2 px, the
 * size of the specks that are noise on bigger ones: when the sub-tree is
 * no symbol without its specks but is one with those inside its regions
 * (speck_count: not p's own), they are its leaves (p's counts then
 * include them). And the ring and card margin, a pixel
 * or so wide, merge with the table, so the root touches the saturated
 * background (REGION_FRAGMENTED): such a root's list is still complete,
 * and it is taken when its sub-tree is a whole symbol that fills its
 * moment ellipse (SMALL_SOLIDITY), as the inside of a ring does and a
 * piece of margin or table around a foreign region does not. True: p is
 * a whole candidate now. A fragmented root with a bar-shaped leaf is no
 * candidate (has_bar_leaf: the margin of a card whose ring broke). With
 * few_specks (the small-symbol pass, whose threshold has no median and
 * keeps 1-2 px noise), specks may make at most a fifth of the nodes
 * (SPECK_LEAVES_DIV): a tree that needs more of them read a hole lost
 * here and a noise speck taken there, one or two changes that turn a
 * dense symbol into another of its set. With specks_unconfirmed too, such
 * a tree whose specks make at most a third of its nodes
 * (SPECK_UNCONFIRMED_DIV) is taken but marked FLAG_UNCONFIRMED: most are
 * right (the holes of symbols under 28 px are specks), and the engine
 * keeps one only where another threshold's tree confirms it. */
static bool small_candidate(struct match *m, const struct region_tree *t, int32_t p)
{
	const struct region *g = reg(m, t, p);
	m->flags[p] &= (uint8_t)~FLAG_UNCONFIRMED;
	if (g->x1 - g->x0 >= SMALL_BOX_PX || g->y1 - g->y0 >= SMALL_BOX_PX)
		return false;
	const bool frag = (m->flags[p] & REGION_FRAGMENTED) != 0;
	const int h = m->height[p], n = m->dc[p] + 1;
	/* The counts first: most small regions are no symbol with or without
	 * specks, and their moments (subtree_sum) are never needed. */
	int sp_nodes = 0, sp_height = 0;
	speck_count(m, t, p, 0, &sp_nodes, &sp_height);
	const bool specks_valid = !is_valid(m, h, n) && sp_nodes > n && is_valid(m, sp_height, sp_nodes);
	const bool few = !m->cfg.few_specks || SPECK_LEAVES_DIV * (sp_nodes - n) <= sp_nodes;
	const bool unconfirmed =
		!few && m->cfg.specks_unconfirmed && SPECK_UNCONFIRMED_DIV * (sp_nodes - n) <= sp_nodes;
	const bool with_specks = specks_valid && (few || unconfirmed);
	if (!with_specks && !(frag && is_valid(m, h, n)))
		return false;
	struct subtree_sum s;
	memset(&s, 0, sizeof s);
	subtree_sum(m, t, p, 0, &s);
	if (s.n > SMALL_ROOT_PX * SMALL_ROOT_PX)
		return false;
	if (frag && (!fills_ellipse(&s) || has_bar_leaf(m, t, p)))
		return false;
	if (with_specks && unconfirmed)
		m->flags[p] |= FLAG_UNCONFIRMED;
	if (with_specks) {
		specks_keep(m, t, p, 0);
		m->height[p] = (uint8_t)sp_height;
		m->dc[p] = sp_nodes - 1;
	}
	return true;
}

/* A resolved region p that touches the frame's edge, read as a whole
 * symbol's root: its list is complete, but what lies beyond the edge is
 * unknown. A root is a convex rounded square (a quadrilateral under a
 * tilt) with its leaves inside, clear of its edge; where only a short
 * stretch of it lies on the frame's edge, only a cap no deeper than about
 * that stretch is cut off, too shallow to hide a leaf, and a leaf that the
 * edge cuts is itself on the edge and never resolves. So a valid tree with
 * at most 1 / BORDER_CONTACT_DIV of the root's longer side on the edge is
 * the whole symbol; any other valid one is read as cut (ST_CUT, see
 * cut_walk). Counted on the runs (none: never). */
static bool border_root(const struct match *m, const struct region_tree *t, int32_t p)
{
	if (!t->runs || (m->flags[p] & FLAG_REPAIRED))
		return false;
	const struct region *g = &t->regions[p];
	const int side = g->x1 - g->x0 > g->y1 - g->y0 ? g->x1 - g->x0 + 1 : g->y1 - g->y0 + 1;
	int64_t contact = 0;
	for (int y = g->y0; y <= g->y1; y++) {
		const int32_t lo = t->row_first_run[y], hi = t->row_first_run[y + 1];
		if (hi <= lo)
			continue;
		if (y == 0 || y == t->height - 1) {
			for (int32_t k = lo; k < hi; k++)
				if (t->runs[k].region == p)
					contact += t->runs[k].len;
		} else {
			contact += g->x0 == 0 && t->runs[lo].region == p;
			contact += g->x1 == t->width - 1 && t->runs[hi - 1].region == p;
		}
	}
	return contact * BORDER_CONTACT_DIV <= side;
}

/* Whether region a's box lies within region b's. */
static bool box_within(const struct match *m, const struct region_tree *t, int32_t a, int32_t b)
{
	const struct region *u = reg(m, t, a), *v = reg(m, t, b);
	return u->x0 >= v->x0 && u->x1 <= v->x1 && u->y0 >= v->y0 && u->y1 <= v->y1;
}

/* The parent that cut_walk gives region p: the one neighbour that is not
 * a resolved child of p, where it encloses p's box (a child lies inside
 * its parent, also where the edge clips both; the table around a symbol
 * does not lie inside its ring) and the first walk left it unresolved
 * (its regions keep their sub-trees); else -1. */
static int32_t cut_parent(const struct match *m, const struct region_tree *t, int32_t p)
{
	int n_adj;
	const int32_t *l = adj_of(m, t, p, &n_adj);
	for (int i = 0; i < n_adj; i++)
		if (!((m->state[l[i]] & ST_RESOLVED) && m->parent[l[i]] == p))
			return (m->state[l[i]] & ST_RESOLVED) || !box_within(m, t, p, l[i]) ? -1 : l[i];
	return -1;
}

/* Finished sub-tree r reports to its parent: the parent's height and node
 * count grow (specks add nothing), and a parent grown past any tree of the
 * set is dead. True when r was the parent's last neighbour but one, so the
 * parent is finished too; false while it waits, or when it is saturated (a
 * fragmented region may still be a root: its list is complete and the
 * saturated neighbour its parent), finished or dead already. */
static bool climb(struct match *m, const struct region_tree *t, int32_t r)
{
	const int32_t p = m->parent[r];
	if ((m->flags[p] & REGION_SATURATED) || (m->state[p] & (ST_RESOLVED | ST_DEAD)))
		return false;
	m->n_done[p]++;
	if (!(m->state[r] & ST_SPECK)) {
		if (m->height[r] + 1 > m->height[p])
			m->height[p] = (uint8_t)(m->height[r] + 1);
		m->dc[p] += m->dc[r] + 1;
	}
	if (m->height[p] > m->max_depth + 1 || m->dc[p] + 1 > m->dead_nodes) {
		m->state[p] |= ST_DEAD;
		return false;
	}
	int n_adj;
	adj_of(m, t, p, &n_adj);
	return m->n_done[p] == n_adj - 1;
}

/* A second walk, after the first, over what the frame's edge cut: a leaf on
 * the edge (a dot, or a hole the edge opened) and a region on the edge
 * that the first walk resolved but could not read as a root (a blob the
 * edge cut) climb on as in the first walk, and every region they complete
 * is marked ST_CUT. Regions the first walk resolved keep their parents and
 * counts, so its candidates stay as they were; the new ones are whole
 * symbols by (height, nodes) only, and decode only where their uncut
 * branches single out one tree of the set (decode.c). Returns the number
 * of candidates in m->cands. */
static int32_t cut_walk(struct match *m, const struct region_tree *t, int32_t n_cands)
{
	int32_t qt = 0;
	for (int32_t r = 0; r < t->n_regions; r++) {
		if ((m->flags[r] & BAD_FLAGS) != REGION_BORDER)
			continue;
		int n_adj;
		const int32_t *l = adj_of(m, t, r, &n_adj);
		if (!(m->state[r] & (ST_RESOLVED | ST_DEAD))) {
			if (n_adj != 1 || (m->state[l[0]] & ST_RESOLVED) || !box_within(m, t, r, l[0]))
				continue;
			m->state[r] = ST_RESOLVED | ST_CUT | (reg(m, t, r)->area <= SPECK_MAX_AREA ? ST_SPECK : 0);
			m->parent[r] = l[0];
			m->queue[qt++] = r;
		} else if ((m->state[r] & ST_RESOLVED) && m->parent[r] < 0 &&
			   !is_valid(m, m->height[r], m->dc[r] + 1)) {
			m->state[r] |= ST_CUT;
			m->parent[r] = cut_parent(m, t, r);
			if (m->parent[r] >= 0)
				m->queue[qt++] = r;
		}
	}
	for (int32_t qh = 0; qh < qt; qh++) {
		const int32_t p = m->parent[m->queue[qh]];
		if (!climb(m, t, m->queue[qh]))
			continue;
		m->state[p] |= ST_RESOLVED | ST_CUT;
		m->parent[p] = -1;
		if (m->flags[p] & REGION_FRAGMENTED)
			continue;
		if (is_valid(m, m->height[p], m->dc[p] + 1)) {
			m->cands[n_cands++] = p;
			continue;
		}
		m->parent[p] = cut_parent(m, t, p);
		if (m->parent[p] >= 0)
			m->queue[qt++] = p;
	}
	return n_cands;
}

/* Bottom-up from the leaves (amoeba.md §5): a region whose neighbours but
 * one are finished sub-trees is finished too, and the remaining neighbour is
 * its parent. Returns the number of candidate roots put in m->cands. */
int32_t match_candidates_find(struct match *m, const struct region_tree *t)
{
	int32_t qt = 0, n_cands = 0;
	const int max_side = (t->width < t->height ? t->width : t->height) / 2;
	if (!m->again)
		m->n_seeds = 0;
	/* Cleared whole, not region by region in the loop below: the loop's
	 * stores a region cost more than these. */
	const size_t n_reg = (size_t)t->n_regions;
	memset(m->n_done, 0, n_reg);
	memset(m->height, 0, n_reg);
	memset(m->dc, 0, n_reg * sizeof *m->dc);
	memset(m->state, 0, n_reg);
	if (!m->again)
		memset(m->claimed, 0, n_reg);
	for (int32_t r = 0; r < t->n_regions; r++) {
		if (!m->again) {
			const struct region *g = &t->regions[r];
			m->flags[r] = g->flags;
			/* Seeds of the repair round: saturated parts, specks between regions. */
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
		const int32_t p = m->parent[m->queue[qh]];
		if (!climb(m, t, m->queue[qh]))
			continue;
		int n_adj;
		const int32_t *l = adj_of(m, t, p, &n_adj);
		m->state[p] |= ST_RESOLVED;
		m->parent[p] = -1;
		/* On the frame's edge: a whole symbol or nothing, no climbing here
		 * (cut_walk climbs on). Where the edge may hide part of it, the
		 * decoder checks that what is seen singles out one tree. */
		if (m->flags[p] & REGION_BORDER) {
			if (is_valid(m, m->height[p], m->dc[p] + 1)) {
				if (!border_root(m, t, p))
					m->state[p] |= ST_CUT;
				m->cands[n_cands++] = p;
			}
			continue;
		}
		if ((m->flags[p] & REGION_FRAGMENTED) || !is_valid(m, m->height[p], m->dc[p] + 1)) {
			if (small_candidate(m, t, p)) {
				m->cands[n_cands++] = p;
				continue;
			}
		}
		const int h = m->height[p], n = m->dc[p] + 1;
		/* A root whose ring merged with a saturated region (a shadow edge's
		 * dark band joins it to the table): whole, or over-full or fuzzy,
		 * it is tried like any other; its only other neighbour is the
		 * saturated one, so there is nothing to climb to. */
		if (m->flags[p] & REGION_FRAGMENTED) {
			if ((is_valid(m, h, n) || is_fuzzy(m, h, n) || m->over[h][n]) && merged_ring_root(m, t, p))
				m->cands[n_cands++] = p;
			continue;
		}
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
	if (!m->again)
		n_cands = cut_walk(m, t, n_cands);
	return n_cands;
}
