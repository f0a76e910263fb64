/*
 * demo.h - the symbols the built-in demo source shows.
 *
 * The capture room knows nothing of symbols (it comes before the matcher),
 * so the pipeline renders a few symbols of the loaded set as square sprites
 * (src/fiducial/render.h) and hands them to the demo source, which moves
 * and rotates them. Owned by the pipeline; freed by demo_scene_free().
 */
#ifndef TT_PIPELINE_DEMO_H
#define TT_PIPELINE_DEMO_H

#include "../core/image.h"
#include "../fiducial/trees.h"

#define DEMO_MAX_SPRITES 6
#define DEMO_SPRITE_PX 112

struct demo_scene {
	int n;
	struct image_u8 sprites[DEMO_MAX_SPRITES];
	int ids[DEMO_MAX_SPRITES];
};

/* Renders up to DEMO_MAX_SPRITES symbols of `trees` (white-root ones first,
 * spread over the ID range). Returns 0 or an ERR_* code. */
int demo_scene_make(const struct tree_set *trees, struct demo_scene *out);
void demo_scene_free(struct demo_scene *d);  /* NULL-safe */

#endif
