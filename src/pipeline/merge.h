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
 * Disagreement. Where a later scale decoded another ID at the place of a
 * symbol of the list's own scale (the first, region index root >= 0),
 * the first stands as before: it reads the symbol at the finest detail.
 * Where the symbol at that place was merged from another later scale
 * (root -1), the two later scales disagree and the first decoded nothing
 * there: neither is believed. A blob's hole closed in one threshold, or a
 * dot merged with its neighbour or split off a blob's outline, reads as
 * another symbol of the set one or two nodes away, and such damage
 * differs between scales (radius, method, median). The merged symbol
 * becomes a fuzzy one (which keeps a known object but creates none) and
 * the later one is dropped: a wrong ID is worse for a user than a miss.
 * Before these rules, a whole tree stands against a completed one (read
 * from a fuzzy tree, or from the hairline round's rebuilt lists:
 * fiducial_det.completed), whichever scale each comes from: damage that added a node as well as took some away (a hard
 * shadow's edge splits a blob's outline into a dot) fits another tree of
 * the set, which a scale that saw the whole tree corrects. Where scales
 * agree on a completed symbol's ID, it counts as whole from then on.
 * A doubtful symbol (FIDUCIAL_DOUBTFUL: the third scale's ratio pass, and
 * its deblurring pass where it undid a defocus) is
 * believed only where nothing else reads the place: against another ID
 * merged from a later scale or pass both become fuzzy, and the first
 * scale's own symbol stands, as does a merged one that two reads agreed
 * on (fiducial_det.votes: a whole or completed read of its ID merged
 * into it; a doubtful one is no vote); where another read agrees that
 * read stands in its place (its centre and angle, its standing).
 * A fallback symbol (FIDUCIAL_FALLBACK: the third scale's scaled pass at
 * a radius below its window's) holds a place only while no other read
 * does: a read that agrees, one that two reads agreed on (votes) and the
 * list's own symbol stand instead, and it is no vote; against a doubtful
 * read, another fallback or a lone merged read of another ID, neither is
 * believed.
 *
 * Ownership: the caller owns both lists; nothing allocates. Region
 * indices (root) of merged items refer to the other scale's tree, so they
 * are set to -1 (which also marks them as merged); the list's own items
 * keep theirs, which must be >= 0.
 */
#ifndef TT_PIPELINE_MERGE_H
#define TT_PIPELINE_MERGE_H

#include <stdbool.h>

#include "../core/detect.h"

struct tree_set;

/* Index of the first symbol of list (n) at f's place (within 0.3 of the
 * larger size of the two), or -1. */
int merge_near(const struct fiducial_det *list, int n, const struct fiducial_det *f);

/* Merges d2's symbols and fuzzy symbols into d as described above; sets
 * d->overflow when d's symbol list is full. */
void merge_scale(struct detections *d, const struct detections *d2);

/* The reads of all scales and passes at one place, counted before they
 * are merged. n lists (the first scale's, the second's, the third's) are
 * read together: a read is outvoted where another ID has at least two reads
 * at its place (within 0.3 of the larger size of the two), more than its
 * own ID has, one of them whole or completed (neither doubtful nor a
 * fallback); each outvoted read moves to its own list's fuzzy symbols (id
 * -1: it keeps a known object and creates none). The later rules let the
 * first scale's own symbol stand against any one other read, and a whole
 * tree against completed ones; a single damaged read in that place (a
 * hard shadow's edge that turned a leaf into a dot in the first scale's
 * threshold) was then another symbol's ID where two other passes agreed
 * on the right one (the shadow and sheet-half presets). Vetoes
 * (FIDUCIAL_VETO) count for nothing. Ties change nothing. */
void merge_majority(struct detections *const *lists, int n);

/* The first scale's symbol against one read of the third, alone: where
 * a whole symbol of d's own (root >= 0, no votes) has at its place in d3
 * exactly one symbol, with no votes and another ID, whole, completed,
 * doubtful or a fallback (not a veto, not unconfirmed), and d2 (the
 * second scale's; NULL: none) holds no symbol there, both move to their
 * lists' fuzzy symbols (id -1). Elsewhere the first scale's symbol stands
 * against a later scale's (merge_scale): against the second, whose median
 * loses detail the first keeps, it was right every time on the guard
 * collections (12 of 12); the third reads with thresholds made for hard
 * shadows' edges, where the first's Bernsen window is weakest, and a tie
 * of two whole trees there says no more than that the symbol was damaged
 * (drawn from reacTIVision's pictures, phone-half seed 41 frame 0: a
 * 41 px 4 that a shadow's edge crosses, read as 39 by the first scale and
 * as 4 by the closing pass; phone-half seed 829 frame 1: a 52 px 9 read
 * as 78 by the first scale and as 9, completed, by the third). Call
 * before merge_scale(). */
void merge_lone_pair(struct detections *d, struct detections *d3, const struct detections *d2);

/* A pass's two reads of one part of the frame: d's symbols first..second-1
 * from its first threshold, second.. from its second. Where a second read
 * disagrees with a first one at its place (within 0.3 of the larger
 * size), the first moves to d's fuzzy list (id -1) and the second becomes
 * doubtful (FIDUCIAL_DOUBTFUL: it stands where no other read of the place
 * disagrees). The upsampled pass reads each tile by Bernsen and by the
 * closing against the paper's light: where a hard shadow's edge crosses a
 * small symbol, Bernsen's window joins a band of the shadowed paper to it
 * and the tree read whole is another symbol's (the sun preset with
 * reacTIVision's set, seed 42: a 32 px 15 read as 95 beside the closing's
 * 15; the four such places on the realistic sets read right by the
 * closing). Where they agree, or only one reads the place, nothing
 * changes. */
void merge_second_read(struct detections *d, int first, int second);

/* A pass's own vetoes (FIDUCIAL_VETO, match.h dot_max_elongation): each
 * read so marked in d moves every read of another ID at its place (within
 * 0.3 of the larger size) to d's fuzzy list, and then goes there itself
 * (id -1: it keeps a known object and creates none). A read with a dot
 * that looks like a broken blob wall is no symbol, but it still says the
 * pass's threshold damaged the place, so a read of another ID there from
 * the same threshold (its other radius) is no more believed than it was
 * when the two cancelled each other at the merge; reads of other passes
 * and scales never meet it. */
void merge_vetoes(struct detections *d);

/* A second read of one place. The third scale's small-symbol pass reads
 * symbols under about 40 px from a threshold that keeps 1-2 px noise
 * (engine.h radius_small), where a hole lost and a noise speck taken for
 * one, or a noise dot beside a blob that lost a hole, make another symbol
 * of the set one or two nodes away; no other scale saw enough there to
 * disagree. The engine reads each such symbol again at another radius
 * (check, in frame coordinates: radius_small_check), whose noise and
 * losses are others. Where check holds a symbol of another ID with a
 * root of the same colour at the place of d's symbol i (within 0.3 of the
 * larger size), neither read is believed: symbol i moves to d's fuzzy list (id -1; it keeps a known
 * object and creates none) and the function returns true. Where check
 * reads the same ID, or nothing (the other radius often resolves less),
 * or a root of the other colour (in a set with both, a b symbol's white
 * card margin read as a w symbol's root: one level out, not the same
 * region), symbol i stands and it returns false. set: the tree set the
 * IDs index (NULL: every other ID counts). The last symbol takes the place
 * of a moved one, so callers walking the list stay at i. */
bool merge_check(struct detections *d, int i, const struct detections *check, const struct tree_set *set);

/* A read confirmed by another threshold's tree. The small-symbol pass
 * reads a small root whose holes came from more 1-2 px specks than its
 * speck share allows as FIDUCIAL_UNCONFIRMED (match.h specks_unconfirmed):
 * most such reads are right (the holes of symbols under 28 px shrink to
 * specks), but a noise speck taken for a hole where one closed reads
 * another symbol of the set, and where no other pass reads the place
 * nothing would contradict it. The engine reads the place again in the
 * frame enlarged twice (the upsampled pass's threshold), whose holes are
 * 2-3 px and whose noise is other; canon is the canonical string (colour
 * letter first) of the tree it read there, or NULL where it read none.
 * Where the tree of d's symbol i's ID holds canon less at most
 * MERGE_CONFIRM_MISSING nodes (match_holds: the enlarged read lost a hole
 * or two, never gained one), symbol i counts as completed (1: a read
 * that two damaged trees agree on) and the function returns false; else
 * it moves to d's fuzzy list (id -1) and it returns true. The last symbol
 * takes the place of a moved one, so callers walking the list stay at i. */
#define MERGE_CONFIRM_MISSING 2
bool merge_confirm(struct detections *d, int i, const char *canon, const struct tree_set *set);

/* Reads that an unconfirmed read of another ID contradicts. The upsampled
 * pass's local-mean reads over its size cap (third.c, INK_UP_WHOLE_PX)
 * that merge_confirm() moved away were no symbol of theirs, but most
 * still saw the symbol's damaged tree: on the sheet presets (a tilted
 * sheet of 40-55 px symbols crossed by a hand's hard shadow) four such
 * reads of the right ID lay where one pass alone of the third scale read
 * another ID, and that read was the symbol reported. Every symbol of d
 * at the place of one of failed's n (merge_near) with another ID, and no
 * other symbol of d of its own ID at its place, moves to d's fuzzy list
 * as merge_confirm() moves one; a read of the place by the first or
 * second scale still stands in the merge of the scales. At most
 * MERGE_MAX_CONTRADICTED symbols move a call. */
#define MERGE_MAX_CONTRADICTED 64
void merge_contradicted(struct detections *d, const struct fiducial_det *failed, int n);

/* Whether the upsampled pass's Lanczos read of ID id (third.c up_sharp)
 * stands against the pass's bilinear read at its place, whose fuzzy tree
 * has canonical string canon (colour letter first; NULL: no fuzzy read
 * there): not where canon is the ID's whole tree (match_holds, none
 * missing). Such a tree was left fuzzy by a rule of the matcher (a speck
 * taken for a dot while a hole was lost, dots of uneven sizes), which the
 * sharper image does not answer: on small symbols of reacTIVision's set a
 * 25 px 53 whose bilinear tree was 17's (a hole lost, a speck for a dot)
 * was read 17 whole by the Lanczos read. A tree the ID's lacks nodes of
 * or differs from (the bilinear image merged holes or walls), or none,
 * lets it stand. */
bool merge_sharp_stands(int32_t id, const char *canon, const struct tree_set *set);

/* A third read where the first two scales disagree. Where the second
 * scale reads another whole ID at the place of a whole symbol of the
 * first scale's own (i, root >= 0), merge_scale() lets the first stand:
 * it was right in most such places, and its radius keeps what the second
 * scale's median loses. The engine reads such a place a third time (third,
 * in frame coordinates: the third scale's threshold, the local mean, in a
 * window around it). Where that read gives the second scale's ID (other),
 * two thresholds of different kinds agree against the first: other takes
 * symbol i's place (root -1, as a merged symbol) and the function returns
 * true. Where it gives the first's ID, another, or nothing, symbol i
 * stands as before (false): the third read only ever sides with one of
 * the two, and where it sees nothing the first scale's read is kept, as
 * without it (dropping both there lost right symbols on motion streaks). */
bool merge_tie_break(struct detections *d, int i, const struct fiducial_det *other, const struct detections *third);

#endif
