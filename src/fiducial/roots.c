/* roots.c - root regions for tracking, and the boxes claimed for the
 * classifiers (match_int.h step 4). */
#include "match_int.h"

#include <stdlib.h>

#include "../segment/segment.h"

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
		int32_t first = -1;
		for (int32_t k = segment_run_first_after(t, y, r->x0); k < hi && t->runs[k].x <= r->x1; k++)
			if (t->runs[k].region == g) {
				first = k;
				break;
			}
		if (first < 0)
			continue;
		int32_t a = first, b = hi;
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
void match_roots_find(const struct match *m, const struct region_tree *t, struct detections *out)
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
void match_claim_boxes(struct match *m, const struct region_tree *t, const struct detections *out)
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
