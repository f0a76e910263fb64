/* drawing.c - symbols drawn from their printed images (drawing.h). */
#include "drawing.h"

#include <math.h>
#include <string.h>

#include "../../src/core/detect.h"
#include "../../src/core/err.h"
#include "../../src/core/image_io.h"
#include "../../src/fiducial/match.h"
#include "../../src/segment/segment.h"

void drawing_free(struct drawing *d)
{
	if (!d)
		return;
	for (int k = 0; k < d->n_levels; k++)
		image_u8_free(&d->level[k]);
	memset(d, 0, sizeof *d);
}

/* Each next level the 2 x 2 mean of the last, down to 2 px a side. */
static int pyramid(struct drawing *d)
{
	while (d->n_levels < DRAWING_LEVELS) {
		const struct image_u8 *a = &d->level[d->n_levels - 1];
		if (a->width < 4 || a->height < 4)
			return 0;
		struct image_u8 *b = &d->level[d->n_levels];
		int err = image_u8_alloc(b, a->width / 2, a->height / 2);
		if (err)
			return err;
		d->n_levels++;
		for (int y = 0; y < b->height; y++) {
			const uint8_t *r0 = image_u8_row(a, 2 * y), *r1 = image_u8_row(a, 2 * y + 1);
			uint8_t *o = image_u8_row(b, y);
			for (int x = 0; x < b->width; x++)
				o[x] = (uint8_t)((r0[2 * x] + r0[2 * x + 1] + r1[2 * x] + r1[2 * x + 1] + 2) /
				                 4);
		}
	}
	return 0;
}

/* The picture's centre and angle as the tracker reads them, or ERR_FORMAT
 * when it reads as anything but exactly one symbol of ID id. */
static int read_truth(struct drawing *d, const struct tree_set *set, int id)
{
	const struct image_u8 *img = &d->level[0];
	struct segment_config sc = {img->width, img->height, tree_set_max_nodes(set), 0, 0};
	struct match_config mc = {
	    .trees = set, .max_width = img->width, .max_height = img->height, .root_min_px = 20};
	int err = 0;
	struct segment *seg = segment_create(&sc, &err);
	struct match *mat = seg ? match_create(&mc, &err) : NULL;
	struct bitmask mask = {0};
	struct detections det = {0};
	const struct region_tree *tree = NULL;
	if (mat && !(err = detections_alloc(&det, 64)) &&
	    !(err = bitmask_alloc(&mask, img->width, img->height))) {
		bitmask_from_image(&mask, img);
		if (!(err = segment_process(seg, &mask, &tree)))
			err = match_process(mat, tree, img, &det);
	}
	if (!err && (det.n_fids != 1 || det.fids[0].id != id))
		err = ERR_FORMAT;
	if (!err) {
		const struct fiducial_det *f = &det.fids[0];
		d->centre_x = (f->x + 0.5f) / (float)img->width - 0.5f;
		d->centre_y = (f->y + 0.5f) / (float)img->height - 0.5f;
		d->angle0 = f->angle;
	}
	bitmask_free(&mask);
	detections_free(&det);
	match_destroy(mat);
	segment_destroy(seg);
	return err;
}

int drawing_load(const char *path, const struct tree_set *set, int id, struct drawing *d)
{
	memset(d, 0, sizeof *d);
	int err = image_read(path, &d->level[0]);
	if (err)
		return err;
	d->n_levels = 1;
	if (d->level[0].width < 32 || d->level[0].height < 32)
		err = ERR_RANGE;
	if (!err)
		err = read_truth(d, set, id);
	if (!err)
		err = pyramid(d);
	if (err)
		drawing_free(d);
	return err;
}

float drawing_bilinear(const struct image_u8 *img, float x, float y)
{
	x = x < 0 ? 0 : x > (float)(img->width - 1) ? (float)(img->width - 1) : x;
	y = y < 0 ? 0 : y > (float)(img->height - 1) ? (float)(img->height - 1) : y;
	int x0 = (int)x, y0 = (int)y;
	int x1 = x0 + 1 < img->width ? x0 + 1 : x0, y1 = y0 + 1 < img->height ? y0 + 1 : y0;
	float fx = x - (float)x0, fy = y - (float)y0;
	const uint8_t *r0 = image_u8_row(img, y0), *r1 = image_u8_row(img, y1);
	float a = r0[x0] * (1 - fx) + r0[x1] * fx;
	float b = r1[x0] * (1 - fx) + r1[x1] * fx;
	return a * (1 - fy) + b * fy;
}

float drawing_sample(const struct drawing *d, float lx, float ly, float footprint)
{
	int k = 0;
	while (k + 1 < d->n_levels && 1.0f / (float)d->level[k + 1].width <= footprint)
		k++;
	const struct image_u8 *img = &d->level[k];
	return drawing_bilinear(img, (lx + 0.5f) * (float)img->width - 0.5f,
	                        (ly + 0.5f) * (float)img->height - 0.5f) /
	       255.0f;
}

int drawing_draw(const struct drawing *d, float size_px, float angle_rad, float cx, float cy,
                 struct image_u8 *dst, const struct render_options *opt)
{
	if (!(size_px > 0 && size_px <= 8192) || !isfinite(angle_rad) || !isfinite(cx) || !isfinite(cy))
		return ERR_RANGE;
	struct render_options def;
	if (!opt) {
		render_options_default(&def);
		opt = &def;
	}
	const int ss = opt->supersample < 1 ? 1 : opt->supersample > 16 ? 16 : opt->supersample;
	const float co = cosf(angle_rad), si = sinf(angle_rad), reach = size_px * 0.7072f + 1;
	int x0 = (int)floorf(cx - reach), y0 = (int)floorf(cy - reach);
	int x1 = (int)ceilf(cx + reach), y1 = (int)ceilf(cy + reach);
	image_u8_clip_box(dst, &x0, &y0, &x1, &y1);
	const float foot = 1.0f / (size_px * (float)ss), ink = opt->black,
	            span = (float)opt->white - (float)opt->black;
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = image_u8_row(dst, y);
		for (int x = x0; x <= x1; x++) {
			float sum = 0;
			for (int j = 0; j < ss; j++)
				for (int i = 0; i < ss; i++) {
					const float dx = (float)x + ((float)i + 0.5f) / (float)ss - 0.5f - cx;
					const float dy = (float)y + ((float)j + 0.5f) / (float)ss - 0.5f - cy;
					const float lx = (dx * co + dy * si) / size_px,
					            ly = (-dx * si + dy * co) / size_px;
					sum += fabsf(lx) > 0.5f || fabsf(ly) > 0.5f
					           ? (float)row[x]
					           : ink + span * drawing_sample(d, lx, ly, foot);
				}
			row[x] = (uint8_t)lrintf(sum / (float)(ss * ss));
		}
	}
	return 0;
}

void drawing_truth(const struct drawing *d, float size_px, float angle_rad, float cx, float cy, float *x,
                   float *y, float *angle)
{
	const double c = cos(angle_rad), s = sin(angle_rad);
	*x = (float)(cx + size_px * (d->centre_x * c - d->centre_y * s));
	*y = (float)(cy + size_px * (d->centre_x * s + d->centre_y * c));
	*angle = render_wrap_angle(d->angle0 + angle_rad);
}
