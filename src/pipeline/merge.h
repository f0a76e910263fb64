/*
 * merge.h - the symbols of the threshold scales merged into one list.
 *
 * The engine decodes a frame in up to three threshold scales (engine.h)
 * and merges the second's and then the third's symbols into the first's
 * detections. A symbol that the list holds already at its place (within
 * 0.3 of the larger size) is not added twice; a decoded symbol replaces a
 * fuzzy one at its place; a fuzzy one is added where the list has
 * nothing.
 *
 * Disagreement: where a later scale decoded another ID at the place of a
 * symbol in the list, neither is believed. A blob's hole closed in one
 * threshold, or a dot merged with its neighbour or split off a blob's
 * outline, reads as another symbol of the set one or two nodes away, and
 * such damage differs between scales (window radius, method, median). So
 * the symbol in the list becomes a fuzzy one (which keeps a known object
 * but creates none), the later one is dropped, and the place is noted in
 * the caller's merge_conflicts: a still later scale's symbol there is
 * added only when its ID is one of the two (two scales of three agree).
 * A wrong ID is worse for a user than a miss.
 *
 * Ownership: the caller owns both lists and the conflicts (a plain struct,
 * cleared with n = 0 each frame); nothing allocates. Region indices
 * (root) of merged items refer to the other scale's tree, so they are set
 * to -1; the list's own items keep theirs.
 */
#ifndef TT_PIPELINE_MERGE_H
#define TT_PIPELINE_MERGE_H

#include <stdint.h>

#include "../core/detect.h"

/* At most this many disagreements a frame are remembered (more are still
 * resolved as above, but a later scale may then add a symbol there). */
#define MERGE_CONFLICTS_MAX 32

struct merge_conflicts {
	struct fiducial_det at[MERGE_CONFLICTS_MAX]; /* the list's symbol, id as it was */
	int32_t other[MERGE_CONFLICTS_MAX];          /* the ID the later scale decoded there */
	int n;
};

/* Merges d2's symbols and fuzzy symbols into d as described above; sets
 * d->overflow when d's symbol list is full. */
void merge_scale(struct detections *d, const struct detections *d2, struct merge_conflicts *c);

#endif
