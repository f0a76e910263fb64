/*
 * classify.h - fingers and blobs among the regions symbols did not claim
 * (../shared/spec/amoeba.md §9, §10). Called by match_process() after the
 * symbols are found; internal to the fiducial room.
 *
 * `claimed[r]` is non-zero for regions that belong to a found symbol or lie
 * inside its root's bounding box: they are never fingers or blobs.
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
