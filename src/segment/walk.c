#include "segment.h"

int32_t segment_run_first_after(const struct region_tree *t, int y, int32_t x)
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

/* Adds q to the set s (n entries) unless it is there; false when the set
 * is full or too many big regions are in it. Searched from the end: a run's
 * neighbours were mostly met by the run before it. */
static bool neighbour_add(const struct region_tree *t, int32_t *s, int *n, int cap, int *n_big,
			  int32_t small_area, int big_cap, int32_t q)
{
	for (int i = *n - 1; i >= 0; i--)
		if (s[i] == q)
			return true;
	if (*n >= cap || (t->regions[q].area > small_area && ++*n_big > big_cap))
		return false;
	s[(*n)++] = q;
	return true;
}

int segment_neighbours(const struct region_tree *t, int32_t g, int32_t *nb, int cap, int32_t small_area,
		       int big_cap)
{
	const struct region *r = &t->regions[g];
	int n = 0, n_big = 0;
	for (int y = r->y0; y <= r->y1; y++) {
		const int32_t lo = t->row_first_run[y], hi = t->row_first_run[y + 1];
		for (int32_t k = segment_run_first_after(t, y, r->x0); k < hi && t->runs[k].x <= r->x1; k++) {
			const struct run *u = &t->runs[k];
			if (u->region != g)
				continue;
			if (k > lo && !neighbour_add(t, nb, &n, cap, &n_big, small_area, big_cap, t->runs[k - 1].region))
				return -1;
			for (int yy = y - 1; yy <= y + 1; yy += 2) {
				if (yy < 0 || yy >= t->height)
					continue;
				const int32_t hi2 = t->row_first_run[yy + 1];
				for (int32_t j = segment_run_first_after(t, yy, u->x); j < hi2 && t->runs[j].x < u->x + u->len;
				     j++)
					if (t->runs[j].colour != u->colour &&
					    !neighbour_add(t, nb, &n, cap, &n_big, small_area, big_cap, t->runs[j].region))
						return -1;
			}
			if (k + 1 < hi && !neighbour_add(t, nb, &n, cap, &n_big, small_area, big_cap, t->runs[k + 1].region))
				return -1;
		}
	}
	return n;
}
