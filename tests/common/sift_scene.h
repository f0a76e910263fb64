/* sift_scene.h - textured pictures for the SIFT tests: a smooth random
 * base with discs, boxes, rings and triangles of many sizes and greys
 * (blobs and corners at every scale), and a picture drawn into a scene at a
 * known pose (turned, scaled, bilinear). Header-only (static inline), for
 * tests/test_sift_sim.c and tests/gpu/gpu_test.c. */
#ifndef TT_TESTS_SIFT_SCENE_H
#define TT_TESTS_SIFT_SCENE_H

#include <math.h>
#include <stdint.h>

#include "../../src/core/image.h"

static inline uint32_t sift_scene_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static inline double sift_scene_unit(uint64_t *s)
{
	return sift_scene_rand(s) / 2147483648.0;
}

/* Fills img (already allocated) with a texture from seed; shapes a
 * thousand pixels of area on average, n_shapes of them. */
static inline void sift_scene_texture(struct image_u8 *img, uint64_t seed, int n_shapes)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	const int w = img->width, h = img->height;
	double ph1 = sift_scene_unit(&s) * 6, ph2 = sift_scene_unit(&s) * 6, base = 80 + 80 * sift_scene_unit(&s);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(img, y)[x] =
				(uint8_t)(base + 30 * sin(x * 0.013 + ph1) * cos(y * 0.017 + ph2) + 10 * sin((x + y) * 0.05));
	for (int k = 0; k < n_shapes; k++) {
		int kind = (int)(sift_scene_unit(&s) * 4);
		double cx = sift_scene_unit(&s) * w, cy = sift_scene_unit(&s) * h;
		double r = exp(log(2.5) + sift_scene_unit(&s) * (log((w < h ? w : h) / 8.0) - log(2.5)));
		double g = sift_scene_unit(&s) * 255, g2 = sift_scene_unit(&s) * 255;
		double ang = sift_scene_unit(&s) * 3.14159, ca = cos(ang), sa = sin(ang);
		double ax = (sift_scene_unit(&s) * 2 - 1) * r, ay = (sift_scene_unit(&s) * 2 - 1) * r;
		double bx = (sift_scene_unit(&s) * 2 - 1) * r, by = (sift_scene_unit(&s) * 2 - 1) * r;
		int x0 = (int)(cx - 2 * r - 1), x1 = (int)(cx + 2 * r + 1), y0 = (int)(cy - 2 * r - 1),
		    y1 = (int)(cy + 2 * r + 1);
		for (int y = y0 < 0 ? 0 : y0; y <= y1 && y < h; y++)
			for (int x = x0 < 0 ? 0 : x0; x <= x1 && x < w; x++) {
				double dx = x - cx, dy = y - cy, v = -1;
				if (kind == 0) {
					if (dx * dx + dy * dy <= r * r)
						v = g;
				} else if (kind == 1) {
					double d = sqrt(dx * dx + dy * dy);
					if (d <= r)
						v = d > 0.6 * r ? g : g2;
				} else if (kind == 2) {
					double u = dx * ca + dy * sa, t = -dx * sa + dy * ca;
					if (fabs(u) <= r && fabs(t) <= 0.6 * r)
						v = g;
				} else {
					double d1 = ax * dy - ay * dx, d2 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax),
					       d3 = -bx * (dy - by) + by * (dx - bx);
					if ((d1 >= 0 && d2 >= 0 && d3 >= 0) || (d1 <= 0 && d2 <= 0 && d3 <= 0))
						v = g;
				}
				if (v >= 0)
					image_u8_row(img, y)[x] = (uint8_t)v;
			}
	}
}

/* Draws pic into scene turned by angle (radians, clockwise on screen) and
 * scaled by scale about its centre ((w-1)/2, (h-1)/2), which lands at
 * (cx, cy); bilinear, pixels outside the picture left alone. */
static inline void sift_scene_place(struct image_u8 *scene, const struct image_u8 *pic, double cx, double cy,
				    double angle, double scale)
{
	const double c = cos(angle), sn = sin(angle), hw = (pic->width - 1) * 0.5, hh = (pic->height - 1) * 0.5;
	const double rad = scale * sqrt((hw + 1) * (hw + 1) + (hh + 1) * (hh + 1)) + 2;
	for (int y = (int)(cy - rad); y <= (int)(cy + rad); y++) {
		if (y < 0 || y >= scene->height)
			continue;
		for (int x = (int)(cx - rad); x <= (int)(cx + rad); x++) {
			if (x < 0 || x >= scene->width)
				continue;
			double qx = x - cx, qy = y - cy;
			double u = (c * qx + sn * qy) / scale + hw, v = (-sn * qx + c * qy) / scale + hh;
			if (u < 0 || v < 0 || u > pic->width - 1 || v > pic->height - 1)
				continue;
			int iu = (int)u, iv = (int)v;
			int ju = iu + 1 < pic->width ? iu + 1 : iu, jv = iv + 1 < pic->height ? iv + 1 : iv;
			double fu = u - iu, fv = v - iv;
			const uint8_t *r0 = image_u8_row(pic, iv), *r1 = image_u8_row(pic, jv);
			double val = (r0[iu] * (1 - fu) + r0[ju] * fu) * (1 - fv) + (r1[iu] * (1 - fu) + r1[ju] * fu) * fv;
			image_u8_row(scene, y)[x] = (uint8_t)(val + 0.5);
		}
	}
}

#endif
