/*
 * match.h - region tree -> fiducials, fuzzy symbols, root regions, fingers, blobs.
 *
 * Candidate roots are found bottom-up from leaves (amoeba.md §5), filtered
 * by leaf sizes (§6), their canonical strings (§3) looked up in the tree
 * set, and centre and angle computed from the leaves (§7). Fingers (§9) and
 * blobs (§10) are white regions classified by size, holes, roundness and
 * grey contrast.
 *
 * Memory: scratch arrays sized at create time for the segmenter's maximum
 * region count (regions_region_capacity()), and fixed arrays for the
 * hairline round; match_process() allocates nothing. Results go into the
 * caller's struct detections (cleared first); full lists set its overflow
 * flag.
 *
 * Algorithm. Leaves (one neighbour; not border, saturated or fragmented)
 * seed a queue; a region whose neighbours but one are finished sub-trees is
 * finished in turn, its height and descendant count summed, and the
 * remaining neighbour is its parent. A finished region is a candidate when
 * (height, nodes) is that of some tree in the set (decoded), or 1-2 nodes
 * short with at least 4 left (fuzzy, id -1); the climb stops there. Beyond
 * the spec, these kinds of noise are tolerated:
 *  - specks: a leaf of at most 2 px is taken for noise in the region around
 *    it and left out of the tree (real leaves of the default set on 36 px
 *    symbols measure 4 px and more);
 *  - over-full trees (height d or d+1, N < nodes <= 2N): leaves whose
 *    bounding-box w + h is under half the median of the leaves of their
 *    colour in the sub-tree are dropped, repeatedly, and what is left is
 *    decoded like any candidate (motion ghosts, JPEG blocks, dim frames).
 *    The §6 leaf filter would refuse such leaves anyway, so this never
 *    turns an acceptable symbol into a different ID. Over-full candidates
 *    do not stop the climb;
 *  - merged leaves (one node short): when among at least 4 leaves of one
 *    colour exactly one has 1.6-3x the median area and is elongated like
 *    two discs side by side (covariance eigenvalues >= 2.5:1), and no other
 *    leaf of that colour exceeds 1.3x, two leaves were bridged (motion
 *    streak, blur); the tree with that leaf counted twice is looked up and
 *    decoded if it is in the set (the leaf weighs twice in centre and
 *    angle, the other leaves pass §6). Two nodes short, the same with two
 *    such leaves (each counted twice) or with one leaf of 3-4.5x the
 *    median elongated like three discs in a row (eigenvalues >= 5:1,
 *    counted three times): streaks that merge more than one pair. A big
 *    round leaf (a filled hole)
 *    or two big leaves decode nothing here: which leaf was lost is unknown
 *    then, and reacTIVision's default set has other symbols one leaf away;
 *    nor does one leaf counted twice that may be a one-hole blob whose
 *    wall a cut opened ("A one-hole blob opened", below);
 *  - completion (complete.c, only with match_config.complete): a fuzzy
 *    tree of at least 16 nodes, its leaves
 *    passing §6, that exactly one tree of the set holds with 1-2 of its
 *    descendants taken away (the fuzzy tree's children matched one to one
 *    to that tree's children, each held in its own, down to the leaves) is
 *    decoded as that tree: streaks and blur take nodes away, and where only
 *    one tree can have lost them the ID is known. Where two or more can,
 *    it stays fuzzy; under 16 nodes (small sets, small trees) never, as a
 *    foreign or damaged small tree fits a single tree of a small set too
 *    easily;
 *  - hairlines (a second round): motion streaks leave 1 px diagonal lines
 *    that shatter into 1-2 px specks, which overflow a region's neighbour
 *    list (REGION_SATURATED, its list dropped) or cut islands off a region
 *    (a speck touching two regions never resolves). After the first round,
 *    groups are rebuilt around saturated regions off the border and
 *    specks with two or more neighbours: the specks leave every list, and
 *    islands (regions that touch more specks than other regions) are
 *    merged into the region they were cut from (statistics summed), whose
 *    list is read back from the runs; a region a speck merely bridges
 *    (a hole whose ring the speck breaks) is kept apart. Where that list
 *    fits adj_cap, the flags follow the new lists, and the tree is walked
 *    again over these rebuilt lists (kept by the matcher, the tree is not
 *    touched) for candidates that share no region with a decoded symbol;
 *    only whole and fuzzy ones are decoded (no over-full pruning: two
 *    guesses at noise do not stack), a decoded one replaces a fuzzy one of
 *    the first round at its place, and new fuzzy ones are not reported. So
 *    whatever the first round finds is reported exactly as before. Its
 *    symbols are marked weaker (fiducial_det.completed), as completed ones
 *    are: which specks were hairlines is a guess, and a region that noise
 *    specks saturated (a card's white margin and the table around a small
 *    symbol) rebuilt into a tree of the set read another ID (a 24 px
 *    symbol read as a 50 px one; a 84 px one in a streak as another), where
 *    another scale read the whole tree right (the merge lets a whole tree
 *    stand against a weaker one, src/pipeline/merge.h). Bounds:
 *    64 groups from 1024 seeds a frame, 16 regions a group, 64 neighbours
 *    a region, groups within half the frame's smaller side.
 *  - small symbols (a sub-tree of at most 32^2 px): the holes of the blobs
 *    shrink to the size of specks and the ring and card margin merge with
 *    the table, so the root touches the saturated background
 *    (REGION_FRAGMENTED; its own list is still complete). Such a region is
 *    a candidate when its sub-tree is a whole symbol counting the specks
 *    inside its regions (and not without them; a speck in the root's own
 *    area is never counted: paper texture or noise there, taken for a dot
 *    beside a blob whose hole closed, read as another symbol of the set),
 *    or, touching the background, a whole symbol
 *    that fills its moment ellipse (solidity >= 0.945: a filled square
 *    gives 0.955; a ring around a foreign region less). It ends the climb.
 *  - symbols the frame's edge cuts: a root on the edge with at most an
 *    eighth of its box's longer side there is whole (a cap that shallow
 *    hides no leaf). Where more of it is there, or where the edge cuts a
 *    leaf (a dot, or a blob whose hole it opens: such a leaf is on the
 *    edge and seeds nothing in the walk above), part of the symbol may lie
 *    beyond the edge and a cut branch may have lost or gained nodes. A
 *    second walk after the first climbs from leaves on the edge (each
 *    inside the box of its one neighbour) and from regions on the edge
 *    the first walk resolved but could not read, into regions the first
 *    left unresolved and whose box holds theirs (the table around a
 *    symbol is not inside its ring); what it completes is "cut", and so is
 *    a root with the longer stretch on the edge. A cut candidate whose
 *    (height, nodes) is a tree's is read only where exactly one tree of
 *    the set holds all its branches clear of the edge (as a multiset of
 *    canonical sub-strings of the root's children) and that is the tree
 *    read; else nothing (no fuzzy symbol either). What lies beyond the
 *    edge can only add branches, so the set's own trees decide whether
 *    the branches seen are enough: in a set whose trees all have the same
 *    node count a whole count is enough.
 * With match_config.even_leaves (the engine sets it for the third scale's
 * closing pass) a symbol is read only where no leaf has under a third of
 * the median area of the leaves of its colour: a thin blob wall that the
 * threshold broke in a blurred shadow leaves a sliver that passes the
 * size filter (§6, on box sides) as a dot while the blob lost a hole, and
 * the count of nodes is another symbol's. Such a symbol stays fuzzy. Nor
 * is an outsized leaf read as merged leaves there: a small blob whose
 * wall broke open (its hole lost) is outsized and elongated like two dots.
 * With match_config.dot_max_elongation or dot_max_area (the engine sets
 * them for the third scale's ratio pass) a symbol read whole whose dots
 * (leaves that are children of the root) include one whose moment ellipse
 * is more than dot_max_elongation times as long as wide in variance (a
 * round dot seen at 45 degrees: 2), or one of more than dot_max_area
 * times the median dot's area, or (dot_min_fill, the ratio pass; a root
 * the hairline round rebuilt, where the pixel tests of a cut see nothing)
 * one of 10 px or more that fills under dot_min_fill of its moment
 * ellipse (a bent piece of wall, no disc), is emitted with completed =
 * FIDUCIAL_VETO: a threshold that thins black features broke a blob's
 * wall around a hole, the hole joined the root and the piece of wall
 * became a dot, the same node count as another symbol of the set (on the
 * sheet-half preset, 8 read as 52, 11 as 40, 1 and 2 as 48). The caller
 * decides what such a read may still say (pipeline/merge.h,
 * merge_vetoes).
 * A blob cut in two: a whole read whose tree is another tree of the set
 * with one blob cut across a hole (one piece keeps the blob's other
 * holes, the other is a plain leaf of the root, the hole joined the
 * root's area: the same node count; 148 of the 216 trees of reacTIVision's
 * default set are such a cut of another, none of our set's) stays fuzzy
 * where the image shows the cut: a plain leaf that is not the size of the
 * root's dots (3/4 to 3/2 of the median plain leaf: a piece of a wall is
 * smaller or larger) and that sibling, boxes a pixel or less apart,
 * enclose at least 2 px of the root's area once the pixels touching both
 * are bridged (decode.c, cut_read). A 1 px cut in a thin wall on the dim
 * preset read a 149 as 155 and a 59 as 106 that way. Reads whose plain
 * leaves are all dot-sized cost their sort alone.
 * A blob's wall piece taken for a dot, apart: a whole read where a plain
 * leaf of the root that is no speck fills under 0.65 of its moment
 * ellipse, has 12 times its depth squared in pixels or more (a bent thin
 * band), lies within 2 px of a sibling blob (or plain leaf) and the tree
 * with that leaf given back to that sibling as a hole is in the set
 * (moved_in_set) stays fuzzy (decode.c, arc_read): a two-hole blob broken
 * in a hard shadow leaves such an arc with the hole wide open to the
 * root's area, no pocket for cut_read.
 * Two blobs run together: a whole read with a blob of 5 holes or more
 * that fills under 0.94 of its moment ellipse, whose outline a 5 x 5
 * closing gives a pocket of at least twice the median hole, stays fuzzy
 * whatever the set holds (decode.c, merged_blob_read): the root's area
 * between two joined blobs is a bay of the joined one. So does one with
 * a blob of two holes or more that fills under 0.8 of its ellipse, where
 * the tree with that blob split in two blobs with holes and a plain leaf
 * taken away is in the set (decode.c, joined_read): a shadow's edge that
 * joined two blobs left a piece of its band for a dot.
 * A speck taken for a dot: a whole read whose smallest dot (a plain leaf
 * of the root) has under half the median dot's area, where the tree with
 * a plain leaf taken away and a hole given to one of the root's blobs
 * (moved_in_set) is in the set too, stays fuzzy (decode.c, speck_read),
 * but where it is a veto (dot_max_*, above) it stays one: a hard
 * shadow's edge closes or opens a blob's hole and leaves a speck of its
 * band, or of a dot the light shrank, in the root's area, the same node
 * count, and the leaf-size filter (§6, on box sides) passes a 2 x 2 px
 * speck among 3 x 4 px dots. In the passes that keep noise (few_specks)
 * only where that blob shows the lost hole as a bay of its outline, a
 * pocket a 5 x 5 closing fills of at least the symbol's median hole
 * (decode.c, hole_opened); never for doubtful reads
 * (match_config.doubtful).
 * A blob's holes of uneven sizes: a read with a blob whose largest hole
 * (leaf child) has 8 times its smallest's area or more stays fuzzy
 * (decode.c, holes_uneven): a symbol's holes are drawn alike, while a
 * card's white margin taken for a root holds the whole symbol as a
 * "blob" whose holes are the symbol's holes and pieces of its root.
 * A dot bridged to a blob: with match_config.thin_walls (the engine sets
 * it for the upsampled pass and the deblurring pass's windows) a whole
 * read where the smallest of a blob's two or more holes has under half
 * the symbol's median hole and is walled off from the root's area by a
 * single pixel somewhere, and the tree with that hole a dot instead is in
 * the set, stays fuzzy (decode.c, bridged_read): enlarged, a dot a
 * pixel from a blob joins it by a 1 px bridge that encloses a piece of
 * the root's area as a small hole.
 * A hole closed while a speck was taken for another: a small-symbol read
 * (specks_unconfirmed) with a plain leaf of at least three times the
 * median plain leaf's area (a one-hole blob, filled) and a blob that keeps
 * a 1-2 px speck for a hole, where the tree with one of that blob's holes
 * given to a plain leaf is in the set too, is read as FIDUCIAL_UNCONFIRMED
 * though its specks are within the fifth: the engine keeps it only where
 * the enlarged frame confirms it (decode.c, closed_hole_read). So is one
 * with two blobs run together around a bay of a median hole or more
 * (decode.c, merged_blob_read, MERGED_BLOB_DOUBT), and one that
 * bridged_read would leave fuzzy with thin_walls (a dot bridged to a
 * blob).
 * A one-hole blob opened: a cut through a one-hole blob's wall joins its
 * hole to the root's area and leaves a plain leaf about twice a dot's
 * area, elongated enough to pass for two merged dots. Where the tree with
 * that leaf counted twice and the tree with it a one-hole blob are both
 * in the set (moved_in_set with no hole) and a closing by a 5 x 5 px square
 * gives the leaf back a pocket (4-connected) of at least a quarter of its
 * area, nothing is read there (decode.c, opened_ring): two merged dots
 * get a few pixels of their waist, the opened blob its hole and the gap.
 * The third scale read a 78 as 103 (room) and the scaled pass a 3 as 31
 * (sheet-half) that way, with reacTIVision's set: pockets of 12 px on a
 * 23 px leaf and 10 on 31; of the 47 other such merged reads in the
 * realistic presets at 24 frames the largest pocket was a fifth.
 * A read one hole moved from another: with match_config.moved_unconfirmed
 * (the engine sets it for the upsampled pass's read three times
 * enlarged) a whole read where the tree with a plain leaf of the root
 * taken away and a hole given to one of its children whose children are
 * all leaves (moved_in_set) is in the set too is read with completed =
 * FIDUCIAL_UNCONFIRMED: the caller keeps it only where another threshold
 * reads it too (decode.c, moved_read). Enlarged three times, a 20-24 px
 * symbol's hole closed, or cut open with the piece of wall left as a dot,
 * while a dot-sized piece or fleck is taken for a dot, reads as that
 * neighbour with every leaf of a dot's size.
 * A root one level out: a read whose root has a child that spans at least
 * three quarters of the root's box both ways and holds the boxes of all
 * its other children (two or more) stays fuzzy (decode.c, ring_read): the
 * root is a ring around the symbol's own root, not a root. A motion streak
 * that smears a white blob across the black root's edge of an inverted
 * symbol joins the blob to the white card margin, and that margin reads
 * as a white root holding the black root and the blob's holes, the node
 * count of another symbol of a set with both colours (the deblurring pass
 * read a 55 px 207 of reacTIVision's set as a 67 px 90 so on the motion
 * preset). A symbol's own blobs take a third to two thirds of its root's
 * box and hold no other leaf's box.
 * Decoding builds the canonical string (children sorted in descending byte
 * order, in place), applies the leaf-size filter (§6), looks the string up,
 * and computes centre and angle from the leaves' bbox midpoints with
 * weights pi (d + 1/2)^2 (§7). det->roots lists non-border regions of
 * root_min_px..root_max_px with sides within 2:3 and at least a quarter of
 * the bbox filled, counting what they enclose (the boxes of neighbours
 * inside their box) or else their row spans: a white root, a thin white
 * root ring around the black region holding the blobs (also broken open by
 * blur), or that black region itself (when the black card edge breaks and
 * the ring merges with the table). Regions of found and fuzzy symbols, and
 * regions inside their root's bbox, are claimed before fingers_find() and
 * blobs_find() run (only when finger_size_px > 0 / blob_max_px > 0).
 *
 * Files: match.c (create, config, match_process), candidates.c (the
 * bottom-up walk), decode.c (canonical strings and decoding), complete.c
 * (completion of fuzzy trees), repair.c
 * (the hairline round; it reads lists back from the runs with the
 * segmenter's walks, segment.h), roots.c (root regions, claimed boxes);
 * match_int.h holds what they share.
 */
#ifndef TT_FIDUCIAL_MATCH_H
#define TT_FIDUCIAL_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/regions.h"
#include "trees.h"

struct match_config {
	const struct tree_set *trees;  /* borrowed; must outlive the matcher */
	int max_width, max_height;
	int32_t max_regions;           /* the segmenter's region capacity; 0 = regions_region_capacity() */
	float finger_size_px;          /* expected finger diameter; 0 = no fingers */
	float finger_sensitivity;      /* 0..1: higher accepts less round fingers */
	int finger_min_contrast;       /* grey levels between finger and surround */
	float blob_min_px, blob_max_px;/* blob size range (max of w, h); max 0 = no blobs */
	float root_min_px, root_max_px;/* sizes of root regions worth reporting for tracking */
	bool no_repair;                /* skip the repair round (hairline groups of motion streaks) */
	bool no_merged_rings;          /* only small roots may touch a saturated region (candidates.c) */
	bool complete;                 /* fuzzy trees completed to the one tree that holds them (complete.c) */
	bool few_specks;               /* small roots take 1-2 px specks for at most a fifth of their nodes
					* (candidates.c) */
	bool specks_unconfirmed;       /* with few_specks: a tree that needs more specks (at most a third
					* of its nodes) is read with completed = FIDUCIAL_UNCONFIRMED */
	bool even_leaves;              /* a symbol's leaves of one colour each have at least a third of their
					* median area (decode.c), else it stays fuzzy; no merged leaves read */
	bool thin_walls;               /* a whole read whose blob's smallest hole is walled off from the
					* root's area by 1 px and has under half the symbol's median hole,
					* where the tree with that hole a dot instead is in the set, stays
					* fuzzy (decode.c, bridged_read; the upsampled pass and the
					* deblurring pass's windows) */
	float dot_max_elongation;      /* > 0: a dot longer than this (variance ratio) makes the read a
					* FIDUCIAL_VETO (see above); 0 = no such check */
	float dot_max_area;            /* > 0: so does a dot of more than this many times the median dot */
	float dot_min_fill;            /* > 0: so does a dot of 10 px or more of a root the hairline round
					* rebuilt that fills under this much of its moment ellipse */
	bool doubtful;                 /* its reads are believed only where no other read disagrees (the
					* third scale's ratio pass, pipeline/merge.h): the speck rule
					* (decode.c, speck_read) leaves them be, since such a read of a
					* damaged place still cancels another pass's read there */
	bool moved_unconfirmed;        /* a whole read one hole moved from another tree of the set (a
					* plain leaf of the root taken away and a hole given to one of its
					* children) is read with completed = FIDUCIAL_UNCONFIRMED (decode.c,
					* moved_read; the upsampled pass's read three times enlarged) */
	bool bays;                     /* a whole read where a blob whose hole opened into a bay of its
					* outline would take a hole from a leaf to make another tree of
					* the set stays fuzzy, whatever that leaf's size (decode.c,
					* bay_read; the third scale's passes but the small-symbol
					* one). A leaf counted as two merged ones beside a blob
					* opened so reads nothing (blob_bay) with it, and in every
					* matcher without few_specks (the first and second scales) */
	bool enclosed;                 /* a whole read with a blob of three holes or more that fills
					* little of its moment ellipse, holds a hole of at most half the
					* median hole and has a notch in its outline, where the tree
					* with that blob split in two, a hole fewer, is in the set,
					* stays fuzzy (decode.c, enclosed_read: two blobs a streak ran
					* together around a piece of the root; the deblurring pass).
					* Without it the rule holds such a read only where the blob
					* fills under JOINED_BAY_SOLIDITY and all its holes are that
					* small (a hard shadow joined two blobs) */
	bool closed_leaf;              /* whole trees only (no leaf counted as merged ones, no
					* completion), and a read whose tree with a plain leaf taken
					* away and a hole given to a plain leaf is in the set stays
					* fuzzy (decode.c, closed_leaf_read: a one-hole blob closed
					* and a leaf more taken for a dot); the deblurring pass's
					* upper rung, whose wide local mean closes small holes */
};

struct match;

struct match *match_create(const struct match_config *cfg, int *err);
void match_destroy(struct match *m);  /* NULL-safe */
int match_set_config(struct match *m, const struct match_config *cfg);

/* grey: the camera frame the tree was made from (for finger contrast). */
int match_process(struct match *m, const struct region_tree *tree, const struct image_u8 *grey,
		  struct detections *out);

/* Whether the tree of symbol id of set holds the tree of canonical string
 * canon (with colour letter) less at most max_missing of its nodes: the
 * same colour, and canon's root's children go one to one into the
 * symbol's root's children, each held by its own, recursively (complete.c;
 * 0 missing: the same tree). */
bool match_holds(const struct tree_set *set, int32_t id, const char *canon, int max_missing);

/* Canonical string of the sub-tree rooted at `root`, whose parent is
 * `parent` (-1: the neighbour not on a path down; see amoeba.md §3), with
 * colour letter. Returns its length, or ERR_RANGE when buf is too small or
 * the sub-tree has more than TREES_MAX_NODES nodes. For tools and tests. */
int match_canonical_string(const struct region_tree *tree, int32_t root, int32_t parent, char *buf,
			   size_t cap);

#endif
