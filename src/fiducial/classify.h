/*
 * classify.h - fingers and blobs among the regions symbols did not claim
 * (amoeba symbol specification §9, §10). Called by match_process() after the
 * symbols are found; internal to the fiducial room.
 *
 * `claimed[r]` is non-zero for regions that belong to a found symbol or lie
 * inside its root's bounding box: they are never fingers or blobs.
 *
 * Fingers: a white, unclaimed region not on the border, with 1..8
 * neighbours, size (max bbox side) in [0.5, 2] x finger_size_px, none of its
 * neighbours claimed. Holes (neighbours inside its bbox) are filled back
 * into its moments; at most one hole bigger than a speck, holes at most 20 %
 * of the area. Roundness = (minor/major axis of the moment ellipse) x a fill
 * score (area / ellipse area, 1 for a solid ellipse, 0 at +-30 %); it must
 * reach 0.9 - 0.5 x finger_sensitivity. Its surround (the dark region that
 * encloses it) must not look like an unread symbol: a dark region smaller
 * than 6 finger sizes holding two or more other bright spots. Contrast =
 * mean grey of its pixels - mean grey of a ring just outside its bbox, at
 * least finger_min_contrast. Measured on the shared scenes with the daemon's
 * defaults (Bernsen r 6, gate 32): std-640 at 18 px 120/120 fingers, no
 * false one; std-1080 at 28 px 80/80, no false one; none on blur, motion,
 * dim and small sets; round bright distractors (clutter, nofid) do pass.
 * About 0.25 M instructions a 1920x1080 frame (callgrind).
 *
 * Blobs: a white, unclaimed region not on the border, size in
 * [blob_min_px, blob_max_px], 1..4 neighbours (at most 3 holes), that is
 * not already reported: not a finger in out->fingers (found first), not the
 * white card or paper around a symbol in out->fids or out->fuzzy (a region
 * whose box holds the symbol's box and is at most twice its side). The box is
 * aligned with the moment ellipse's axes and spans the region exactly (run
 * ends projected); w >= h; angle of the long side clockwise on screen from
 * the x axis, [0, pi); area = pixel count.
 */
#ifndef TT_FIDUCIAL_CLASSIFY_H
#define TT_FIDUCIAL_CLASSIFY_H

#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/regions.h"
#include "match.h"

/* Appends fingers to out->fingers. Allocates nothing. */
void fingers_find(const struct match_config *cfg, const struct region_tree *tree,
		  const struct image_u8 *grey, const uint8_t *claimed, struct detections *out);
/* Appends blobs to out->blobs. Allocates nothing. */
void blobs_find(const struct match_config *cfg, const struct region_tree *tree,
		const uint8_t *claimed, struct detections *out);

#endif
