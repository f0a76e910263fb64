/* candidates.c - the matcher's bottom-up walk to candidate roots
 * (match_int.h step 1). */
#include "match_int.h"

#define BAD_FLAGS (REGION_BORDER | REGION_SATURATED | REGION_FRAGMENTED)

/* Bottom-up from the leaves (amoeba.md §5): a region whose neighbours but
 * one are finished sub-trees is finished too, and the remaining neighbour is
 * its parent. Returns the number of candidate roots put in m->cands. */
int32_t match_candidates_find(struct match *m, const struct region_tree *t)
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
		const int32_t r = m->queue[qh];
		const int32_t p = m->parent[r];
		if ((m->flags[p] & BAD_FLAGS) || (m->state[p] & (ST_RESOLVED | ST_DEAD)))
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
