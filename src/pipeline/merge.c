/* merge.c - the threshold scales' symbols merged into one list (merge.h). */
#include "merge.h"

#include "../fiducial/match.h"
#include "../fiducial/trees.h"

/* Whether a and b are at one place (within 0.3 of the larger size). */
static bool same_place(const struct fiducial_det *a, const struct fiducial_det *b)
{
	const float dx = a->x - b->x, dy = a->y - b->y;
	const float r = 0.3f * (a->size_px > b->size_px ? a->size_px : b->size_px);
	return dx * dx + dy * dy <= r * r;
}

int merge_near(const struct fiducial_det *list, int n, const struct fiducial_det *f)
{
	for (int i = 0; i < n; i++)
		if (same_place(&list[i], f))
			return i;
	return -1;
}

static bool near_any(const struct fiducial_det *list, int n, const struct fiducial_det *f)
{
	return merge_near(list, n, f) >= 0;
}

/* d's symbol j becomes a fuzzy one (while the fuzzy list has room). */
static void drop(struct detections *d, int j)
{
	if (d->n_fuzzy < d->cap_fuzzy) {
		d->fuzzy[d->n_fuzzy] = d->fids[j];
		d->fuzzy[d->n_fuzzy++].id = -1;
	}
	d->fids[j] = d->fids[--d->n_fids];
}

void merge_scale(struct detections *d, const struct detections *d2)
{
	for (int i = 0; i < d2->n_fids; i++) {
		const struct fiducial_det *f = &d2->fids[i];
		const int j = merge_near(d->fids, d->n_fids, f);
		/* A fallback read holds a place only while no other read does:
		 * it gives way to any read that agrees or that two reads agreed
		 * on (and is no vote); against a fallback or a doubtful read of
		 * another ID, or a lone one merged from another pass, neither is
		 * believed: a fallback's ladder and the closing pass damage a
		 * shadowed small symbol in different ways (the sun preset with
		 * reacTIVision's set, seed 42: a 41 px 88 read as 106 by the
		 * closing pass against the scaled pass's fallback 88). The list's
		 * own symbol (root >= 0) stands against a fallback. */
		if (j >= 0 && (f->completed == FIDUCIAL_FALLBACK || d->fids[j].completed == FIDUCIAL_FALLBACK)) {
			const bool f_weak = f->completed == FIDUCIAL_FALLBACK || f->completed == FIDUCIAL_DOUBTFUL;
			const bool j_weak = d->fids[j].completed == FIDUCIAL_FALLBACK ||
					    (d->fids[j].completed == FIDUCIAL_DOUBTFUL && d->fids[j].root < 0 &&
					     d->fids[j].votes == 0);
			/* the non-fallback side of the two stands alone */
			const bool lone = d->fids[j].completed == FIDUCIAL_FALLBACK
						  ? f->votes == 0
						  : d->fids[j].root < 0 && d->fids[j].votes == 0;
			if (d->fids[j].id != f->id && ((f_weak && j_weak) || lone)) {
				drop(d, j);
			} else if (d->fids[j].completed == FIDUCIAL_FALLBACK && f->completed != FIDUCIAL_FALLBACK) {
				d->fids[j] = *f;
				d->fids[j].root = -1;
			}
			continue;
		}
		if (j >= 0 && d->fids[j].id == f->id) {
			/* A doubtful read gives its place to the read that agrees
			 * (and is no vote for it). */
			if (d->fids[j].completed == FIDUCIAL_DOUBTFUL && f->completed != FIDUCIAL_DOUBTFUL) {
				d->fids[j] = *f;
				d->fids[j].root = -1;
				continue;
			}
			if (f->completed < d->fids[j].completed)
				d->fids[j].completed = f->completed;
			d->fids[j].votes += f->completed != FIDUCIAL_DOUBTFUL;
			continue;
		}
		/* A doubtful read stands against no other, and no other against
		 * it but the list's own; two reads that agreed stand against it. */
		if (j >= 0 && (d->fids[j].completed == FIDUCIAL_DOUBTFUL || f->completed == FIDUCIAL_DOUBTFUL)) {
			if (d->fids[j].root < 0 && d->fids[j].votes == 0)
				drop(d, j);
			continue;
		}
		/* A whole tree stands against a completed one, whichever scale. */
		if (j >= 0 && d->fids[j].completed != f->completed) {
			if (d->fids[j].completed) {
				d->fids[j] = *f;
				d->fids[j].root = -1;
			}
			continue;
		}
		/* The list's own symbol (root >= 0) stands; another scale's
		 * merged one (root -1) gives way to neither. */
		if (j >= 0 && d->fids[j].root >= 0)
			continue;
		if (j >= 0) {
			drop(d, j);
			continue;
		}
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

void merge_vetoes(struct detections *d)
{
	int n_veto = 0;
	for (int v = 0; v < d->n_fids; v++) {
		if (d->fids[v].completed != FIDUCIAL_VETO)
			continue;
		n_veto++;
		for (int k = 0; k < d->n_fids; k++) {
			struct fiducial_det *f = &d->fids[k];
			if (f->completed != FIDUCIAL_VETO && f->id != d->fids[v].id && same_place(f, &d->fids[v]))
				f->id = -1;
		}
	}
	if (!n_veto)
		return;
	/* Marked first and moved after, so that no veto depends on the order. */
	for (int j = 0; j < d->n_fids;) {
		if (d->fids[j].id >= 0 && d->fids[j].completed != FIDUCIAL_VETO) {
			j++;
			continue;
		}
		d->fids[j].completed = FIDUCIAL_DOUBTFUL;
		drop(d, j);
	}
}

/* The ID read f stands for while merge_majority() marks reads: a marked
 * read holds its ID as -2 - id until the sweep. */
static int32_t read_id(const struct fiducial_det *f)
{
	return f->id >= 0 ? f->id : -2 - f->id;
}

/* Marks read f for drop_marked(), keeping its ID for read_id(). */
static void mark(struct fiducial_det *f)
{
	if (f->id >= 0)
		f->id = -2 - f->id;
}

/* Moves d's marked reads from `from` on to its fuzzy list. Marked first and
 * moved after, so that no verdict depends on the order of the reads. */
static void drop_marked(struct detections *d, int from)
{
	for (int j = from; j < d->n_fids;) {
		if (d->fids[j].id >= 0)
			j++;
		else
			drop(d, j);
	}
}

/* Reads of ID id at f's place in the n lists (vetoes aside); *firm, when
 * asked for, tells whether one of them is a whole or completed read
 * (neither doubtful nor a fallback). */
static int place_votes(struct detections *const *lists, int n, const struct fiducial_det *f, int32_t id, bool *firm)
{
	int votes = 0;
	bool whole = false;
	for (int l = 0; l < n; l++)
		for (int k = 0; k < lists[l]->n_fids; k++) {
			const struct fiducial_det *g = &lists[l]->fids[k];
			if (g->completed == FIDUCIAL_VETO || read_id(g) != id || !same_place(f, g))
				continue;
			votes++;
			whole = whole || g->completed == 0 || g->completed == 1;
		}
	if (firm)
		*firm = whole;
	return votes;
}

void merge_majority(struct detections *const *lists, int n)
{
	for (int l = 0; l < n; l++)
		for (int i = 0; i < lists[l]->n_fids; i++) {
			struct fiducial_det *f = &lists[l]->fids[i];
			/* f's own votes only where another ID could outvote it
			 * (seldom: the scales mostly agree); marks leave the
			 * votes as they were. */
			int own = -1;
			bool outvoted = false;
			for (int m = 0; m < n && !outvoted; m++)
				for (int k = 0; k < lists[m]->n_fids && !outvoted; k++) {
					const struct fiducial_det *g = &lists[m]->fids[k];
					if (g->completed == FIDUCIAL_VETO || read_id(g) == read_id(f) || !same_place(f, g))
						continue;
					bool firm;
					const int other = place_votes(lists, n, f, read_id(g), &firm);
					if (!firm || other < 2)
						continue;
					if (own < 0)
						own = place_votes(lists, n, f, read_id(f), NULL);
					outvoted = other > own;
				}
			if (outvoted)
				mark(f);
		}
	for (int l = 0; l < n; l++)
		drop_marked(lists[l], 0);
}

void merge_lone_pair(struct detections *d, struct detections *d3, const struct detections *d2)
{
	for (int j = 0; j < d->n_fids;) {
		const struct fiducial_det *f = &d->fids[j];
		int at = -1, n_at = 0;
		for (int k = 0; f->root >= 0 && f->completed == 0 && f->votes == 0 && k < d3->n_fids; k++)
			if (same_place(&d3->fids[k], f)) {
				at = k;
				n_at++;
			}
		if (n_at != 1 || d3->fids[at].id == f->id || d3->fids[at].completed == FIDUCIAL_VETO ||
		    d3->fids[at].completed == FIDUCIAL_UNCONFIRMED || d3->fids[at].votes != 0 ||
		    (d2 && near_any(d2->fids, d2->n_fids, f))) {
			j++;
			continue;
		}
		drop(d3, at);
		drop(d, j);
	}
}

void merge_second_read(struct detections *d, int first, int second)
{
	for (int k = second; k < d->n_fids; k++)
		for (int j = first; j < second; j++) {
			struct fiducial_det *f = &d->fids[j];
			if (read_id(f) == d->fids[k].id || !same_place(f, &d->fids[k]))
				continue;
			mark(f);
			d->fids[k].completed = FIDUCIAL_DOUBTFUL;
		}
	drop_marked(d, first);
}

/* The colour letter of ID id's root (its token's first), or 0. */
static char root_colour(const struct tree_set *set, int id)
{
	const char *tok = set && id >= 0 && id < tree_set_count(set) ? tree_set_token(set, id) : NULL;
	return tok ? tok[0] : 0;
}

bool merge_check(struct detections *d, int i, const struct detections *check, const struct tree_set *set)
{
	const struct fiducial_det *f = &d->fids[i];
	bool other = false;
	for (int j = 0; j < check->n_fids && !other; j++) {
		const struct fiducial_det *c = &check->fids[j];
		other = same_place(c, f) && c->id != f->id &&
			root_colour(set, c->id) == root_colour(set, f->id);
	}
	if (!other)
		return false;
	drop(d, i);
	return true;
}

bool merge_confirm(struct detections *d, int i, const char *canon, const struct tree_set *set)
{
	if (canon && match_holds(set, d->fids[i].id, canon, MERGE_CONFIRM_MISSING)) {
		d->fids[i].completed = 1;
		return false;
	}
	drop(d, i);
	return true;
}

void merge_contradicted(struct detections *d, const struct fiducial_det *failed, int n)
{
	int at[MERGE_MAX_CONTRADICTED], n_at = 0;
	for (int j = 0; j < d->n_fids && n_at < MERGE_MAX_CONTRADICTED; j++) {
		const struct fiducial_det *f = &d->fids[j];
		bool contra = false;
		for (int k = 0; k < n && !contra; k++)
			contra = failed[k].id != f->id && same_place(&failed[k], f);
		int same = 0;
		for (int i = 0; contra && i < d->n_fids; i++)
			same += d->fids[i].id == f->id && same_place(&d->fids[i], f);
		if (contra && same == 1)
			at[n_at++] = j;
	}
	/* From the last: drop() moves the list's last symbol into the gap. */
	while (n_at > 0)
		drop(d, at[--n_at]);
}

bool merge_sharp_stands(int32_t id, const char *canon, const struct tree_set *set)
{
	return !canon || !match_holds(set, id, canon, 0);
}

bool merge_tie_break(struct detections *d, int i, const struct fiducial_det *other, const struct detections *third)
{
	const int k = merge_near(third->fids, third->n_fids, &d->fids[i]);
	if (k < 0 || third->fids[k].id != other->id || other->id == d->fids[i].id)
		return false;
	d->fids[i] = *other;
	d->fids[i].root = -1;
	return true;
}
