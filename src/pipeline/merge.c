/* merge.c - the threshold scales' symbols merged into one list (merge.h). */
#include "merge.h"

#include <stdbool.h>

/* Index of the first item of list within 0.3 of the larger size of f's
 * place, or -1. */
static int near_index(const struct fiducial_det *list, int n, const struct fiducial_det *f)
{
	for (int i = 0; i < n; i++) {
		float dx = list[i].x - f->x, dy = list[i].y - f->y;
		float r = 0.3f * (list[i].size_px > f->size_px ? list[i].size_px : f->size_px);
		if (dx * dx + dy * dy <= r * r)
			return i;
	}
	return -1;
}

static bool near_any(const struct fiducial_det *list, int n, const struct fiducial_det *f)
{
	return near_index(list, n, f) >= 0;
}

void merge_scale(struct detections *d, const struct detections *d2, struct merge_conflicts *c)
{
	for (int i = 0; i < d2->n_fids; i++) {
		const struct fiducial_det *f = &d2->fids[i];
		const int j = near_index(d->fids, d->n_fids, f);
		if (j >= 0 && d->fids[j].id == f->id)
			continue;
		if (j >= 0) {
			if (c->n < MERGE_CONFLICTS_MAX) {
				c->at[c->n] = d->fids[j];
				c->other[c->n++] = f->id;
			}
			if (d->n_fuzzy < d->cap_fuzzy) {
				d->fuzzy[d->n_fuzzy] = d->fids[j];
				d->fuzzy[d->n_fuzzy++].id = -1;
			}
			d->fids[j] = d->fids[--d->n_fids];
			continue;
		}
		const int k = near_index(c->at, c->n, f);
		if (k >= 0 && c->at[k].id != f->id && c->other[k] != f->id)
			continue;
		if (d->n_fids >= d->cap_fids) {
			d->overflow = true;
			break;
		}
		d->fids[d->n_fids] = *f;
		d->fids[d->n_fids++].root = -1;
	}
	for (int i = 0; i < d2->n_fuzzy; i++) {
		const struct fiducial_det *f = &d2->fuzzy[i];
		if (near_any(d->fids, d->n_fids, f) || near_any(d->fuzzy, d->n_fuzzy, f))
			continue;
		if (d->n_fuzzy >= d->cap_fuzzy)
			break;
		d->fuzzy[d->n_fuzzy] = *f;
		d->fuzzy[d->n_fuzzy++].root = -1;
	}
	int k = 0;
	for (int i = 0; i < d->n_fuzzy; i++)
		if (!near_any(d->fids, d->n_fids, &d->fuzzy[i]))
			d->fuzzy[k++] = d->fuzzy[i];
	d->n_fuzzy = k;
}
