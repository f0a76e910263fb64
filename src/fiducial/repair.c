/* repair.c - the matcher's hairline round: lists rebuilt without specks,
 * decoded again (match_int.h step 3). */
#include "match_int.h"

#include <string.h>

#include "../segment/segment.h"

/* A group of the repair round: at most REPAIR_MAX_MEMBERS regions, each
 * with at most REPAIR_MAX_NEIGH neighbours and specks. */
#define REPAIR_MAX_NEIGH 64
#define REPAIR_MAX_MEMBERS 16

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
	*n = segment_neighbours(t, x, buf, REPAIR_MAX_NEIGH, SPECK_MAX_AREA, t->adj_cap + REPAIR_MAX_MEMBERS);
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
		/* Before the list: a saturated region's walks all its runs, and a
		 * too big one (the table) is a seed's largest neighbour often. */
		x0 = rx->x0 < x0 ? rx->x0 : x0;
		y0 = rx->y0 < y0 ? rx->y0 : y0;
		x1 = rx->x1 > x1 ? rx->x1 : x1;
		y1 = rx->y1 > y1 ? rx->y1 : y1;
		if (x1 - x0 >= max_side || y1 - y0 >= max_side)
			return false;
		const int32_t *l = list_of(m, t, x, buf, &n);
		if (!l)
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
	/* Regions whose group failed since the last one kept: many seeds share
	 * their largest neighbour, and a saturated one's list walks its runs. */
	int32_t failed[REPAIR_MAX];
	int n_failed = 0;
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
		    set_has(failed, n_failed, g))
			continue;
		if (!group_collect(m, t, g, max_side, &gr)) {
			set_add(failed, &n_failed, REPAIR_MAX, g);
			continue;
		}
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
			for (int i = 1; i < gr.n_mem; i++)
				segment_region_merge(u, reg(m, t, gr.mem[i]));
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
		n_failed = 0;
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
	const int32_t n_cands = match_candidates_find(m, t);
	for (int pass = 0; pass < 2; pass++)
		for (int32_t i = 0; i < n_cands; i++) {
			const int32_t c = m->cands[i];
			const int h = m->height[c], n = m->dc[c] + 1;
			if (subtree_claimed(m, t, c, 0))
				continue;
			if (pass == 0 && is_valid(m, h, n))
				match_tree_decode(m, t, c, h, n, out);
			else if (pass == 1 && is_fuzzy(m, h, n))
				match_tree_decode(m, t, c, h, n, out);
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

void match_repair_round(struct match *m, const struct region_tree *t, struct detections *out)
{
	if (lists_repair(m, t) > 0)
		again_decode(m, t, out);
}
