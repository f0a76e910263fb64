#include "demo.h"

#include <string.h>

#include "../core/err.h"
#include "../fiducial/render.h"

int demo_scene_make(const struct tree_set *trees, struct demo_scene *out)
{
	memset(out, 0, sizeof *out);
	int n_sym = tree_set_count(trees);
	/* Normal prints (white root) are what people stick on objects; pick
	 * them spread over the set so the demo shows varied trees. */
	int n_white = 0;
	for (int id = 0; id < n_sym; id++) {
		const char *tok = tree_set_token(trees, id);
		if (tok && tok[0] == 'w')
			n_white++;
	}
	int step = n_white / DEMO_MAX_SPRITES > 0 ? n_white / DEMO_MAX_SPRITES : 1;
	int k = 0;
	for (int id = 0; id < n_sym && out->n < DEMO_MAX_SPRITES; id++) {
		const char *tok = tree_set_token(trees, id);
		if (!tok || tok[0] != 'w' || (k++ % step) != 0)
			continue;
		struct image_u8 *img = &out->sprites[out->n];
		int err = image_u8_alloc(img, DEMO_SPRITE_PX, DEMO_SPRITE_PX);
		if (err)
			goto fail;
		memset(img->data, 255, (size_t)img->stride * (size_t)img->height);
		float c = (DEMO_SPRITE_PX - 1) / 2.0f;
		err = render_symbol(tok, DEMO_SPRITE_PX - 2, 0.0f, c, c, img, NULL);
		if (err) {
			image_u8_free(img);
			continue;
		}
		out->ids[out->n++] = id;
	}
	return out->n ? 0 : ERR_FORMAT;
fail:
	demo_scene_free(out);
	return ERR_NOMEM;
}

void demo_scene_free(struct demo_scene *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++)
		image_u8_free(&d->sprites[i]);
	memset(d, 0, sizeof *d);
}
