/*
 * match.h - region tree -> fiducials, fuzzy symbols, root regions, fingers, blobs.
 *
 * Candidate roots are found bottom-up from leaves (../shared/spec/amoeba.md
 * §5), filtered by leaf sizes (§6), their canonical strings (§3) looked up in
 * the tree set, and centre and angle computed from the leaves (§7). Fingers
 * (§9) and blobs (§10) are white regions classified by size, holes,
 * roundness and grey contrast.
 *
 * Memory: scratch arrays sized at create time for the segmenter's maximum
 * region count; match_process() allocates nothing. Results go into the
 * caller's struct detections; full lists set its overflow flag.
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
	float finger_size_px;          /* expected finger diameter; 0 = no fingers */
	float finger_sensitivity;      /* 0..1: higher accepts less round fingers */
	int finger_min_contrast;       /* grey levels between finger and surround */
	float blob_min_px, blob_max_px;/* blob size range (max of w, h); max 0 = no blobs */
	float root_min_px, root_max_px;/* sizes of root regions worth reporting for tracking */
};

struct match;

struct match *match_create(const struct match_config *cfg, int *err);
void match_destroy(struct match *m);  /* NULL-safe */
int match_set_config(struct match *m, const struct match_config *cfg);

/* grey: the camera frame the tree was made from (for finger contrast). */
int match_process(struct match *m, const struct region_tree *tree, const struct image_u8 *grey,
		  struct detections *out);

/* Canonical string of the sub-tree rooted at `root`, whose parent is
 * `parent` (-1: the neighbour not on a path down; see amoeba.md §3), with
 * colour letter. Returns its length, or ERR_RANGE when buf is too small or
 * the sub-tree has more than TREES_MAX_NODES nodes. For tools and tests. */
int match_canonical_string(const struct region_tree *tree, int32_t root, int32_t parent, char *buf,
			   size_t cap);

#endif
