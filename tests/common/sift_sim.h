/* sift_sim.h - the GPU SIFT (cuda/sift.cu) simulated on the CPU: the same
 * stages in the same order with the same per-pixel and per-sample
 * functions (cuda/sift_math.h), each kernel's threads one after another,
 * and the same host post-processing (duplicates dropped, sorted by
 * response, then y, x, size, angle). Used by tests/test_sift_sim.c against
 * OpenCV and by tests/gpu/gpu_test.c against the GPU. Header-only (static
 * inline) so that both test programs take it without a Makefile rule. */
#ifndef TT_TESTS_SIFT_SIM_H
#define TT_TESTS_SIFT_SIM_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../cuda/sift_math.h"
#include "../../src/core/image.h"
#include "../../src/objects/objects.h"

static inline void sift_sim_blur(const float *src, float *dst, float *tmp, int w, int h, const float *taps, int R)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const float *row = src + (size_t)y * w;
			float acc = taps[0] * row[x];
			for (int k = 1; k <= R; k++)
				acc += taps[k] * (row[sift_reflect101(x - k, w)] + row[sift_reflect101(x + k, w)]);
			tmp[(size_t)y * w + x] = acc;
		}
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			float acc = taps[0] * tmp[(size_t)y * w + x];
			for (int k = 1; k <= R; k++)
				acc += taps[k] * (tmp[(size_t)sift_reflect101(y - k, h) * w + x] +
						  tmp[(size_t)sift_reflect101(y + k, h) * w + x]);
			dst[(size_t)y * w + x] = acc;
		}
}

/* Keypoints of img as the GPU backend finds them (at most cap, the
 * strongest). Returns the number, or -1 when out of memory. */
static inline int sift_sim_extract(const struct image_u8 *img, float contrast, struct objects_keypoint *out, int cap)
{
	enum { MAXO = 16 };
	const int w = img->width, h = img->height;
	int ow[MAXO], oh[MAXO], n_oct = sift_octaves(w, h, MAXO), R[SIFT_LEVELS];
	size_t off[MAXO], total = 0;
	float taps[SIFT_LEVELS][SIFT_MAX_TAPS_RADIUS + 1];
	for (int i = 0; i < SIFT_LEVELS; i++)
		R[i] = sift_gauss_taps(sift_level_sigma(i), taps[i], SIFT_MAX_TAPS_RADIUS);
	for (int o = 0; o < n_oct; o++) {
		ow[o] = o ? ow[o - 1] / 2 : 2 * w;
		oh[o] = o ? oh[o - 1] / 2 : 2 * h;
		off[o] = total;
		total += (size_t)SIFT_LEVELS * ow[o] * oh[o];
	}
	int cand_cap = 1 << 18, n_cand = 0, n_key = 0, n = -1;
	float *pyr = (float *)malloc(sizeof(float) * (total + 1));
	float *tmp = (float *)malloc(sizeof(float) * 4 * (size_t)w * h);
	struct sift_cand *cand = (struct sift_cand *)malloc(sizeof *cand * (size_t)cand_cap);
	struct sift_key *key = (struct sift_key *)malloc(sizeof *key * (size_t)cand_cap);
	uint8_t *desc = (uint8_t *)malloc((size_t)SIFT_DESC_LEN * (size_t)cand_cap);
	struct sift_order_item *order = (struct sift_order_item *)malloc(sizeof *order * (size_t)cand_cap);
	sift_acc hist[SIFT_HIST_LEN], raw[SIFT_ORI_BINS];
	if (!pyr || !tmp || !cand || !key || !desc || !order)
		goto done;
	for (int o = 0; o < n_oct; o++) {
		float *g = pyr + off[o];
		const size_t plane = (size_t)ow[o] * oh[o];
		if (o == 0) {
			float *up = g + plane;
			for (int Y = 0; Y < oh[0]; Y++)
				for (int X = 0; X < ow[0]; X++) {
					float fx = X * 0.5f - 0.25f, fy = Y * 0.5f - 0.25f;
					int sx = (int)floorf(fx), sy = (int)floorf(fy);
					fx -= sx;
					fy -= sy;
					if (sx < 0)
						sx = 0, fx = 0;
					if (sx >= w - 1)
						sx = w - 1, fx = 0;
					if (sy < 0)
						sy = 0, fy = 0;
					if (sy >= h - 1)
						sy = h - 1, fy = 0;
					int sx1 = sx + 1 < w ? sx + 1 : sx, sy1 = sy + 1 < h ? sy + 1 : sy;
					const uint8_t *r0 = image_u8_row(img, sy), *r1 = image_u8_row(img, sy1);
					float a = r0[sx] * (1 - fx) + r0[sx1] * fx, b = r1[sx] * (1 - fx) + r1[sx1] * fx;
					up[(size_t)Y * ow[0] + X] = a * (1 - fy) + b * fy;
				}
			sift_sim_blur(up, g, tmp, ow[0], oh[0], taps[0], R[0]);
		} else {
			const float *src = pyr + off[o - 1] + (size_t)SIFT_LAYERS * ow[o - 1] * oh[o - 1];
			for (int y = 0; y < oh[o]; y++)
				for (int x = 0; x < ow[o]; x++)
					g[(size_t)y * ow[o] + x] = src[(size_t)(2 * y) * ow[o - 1] + 2 * x];
		}
		for (int i = 1; i < SIFT_LEVELS; i++)
			sift_sim_blur(g + (i - 1) * plane, g + i * plane, tmp, ow[o], oh[o], taps[i], R[i]);
	}
	const float thr = sift_prefilter(contrast);
	for (int o = 0; o < n_oct; o++)
		for (int l = 1; l <= SIFT_LAYERS; l++)
			for (int r = SIFT_BORDER; r < oh[o] - SIFT_BORDER; r++)
				for (int c = SIFT_BORDER; c < ow[o] - SIFT_BORDER; c++) {
					const float *g = pyr + off[o];
					if (!sift_is_extremum(g, (long)ow[o] * oh[o], ow[o], l, r, c, thr))
						continue;
					struct sift_cand k;
					if (sift_refine(g, ow[o], oh[o], o, l, r, c, contrast, &k) && n_cand < cand_cap)
						cand[n_cand++] = k;
				}
	for (int i = 0; i < n_cand; i++) {
		const struct sift_cand *k = &cand[i];
		const float *img_l = pyr + off[k->octave] + (size_t)k->layer * ow[k->octave] * oh[k->octave];
		float scl = sift_scale(k), ang[SIFT_ORI_BINS];
		int Rr = sift_ori_radius(scl);
		memset(raw, 0, sizeof raw);
		for (int ii = -Rr; ii <= Rr; ii++)
			for (int jj = -Rr; jj <= Rr; jj++)
				sift_ori_sample(img_l, ow[k->octave], oh[k->octave], k->c, k->r, ii, jj, scl, raw);
		int m = sift_ori_peaks(raw, ang);
		for (int q = 0; q < m && n_key < cand_cap; q++) {
			struct sift_key *kk = &key[n_key++];
			kk->octave = k->octave;
			kk->layer = k->layer;
			kk->ox = (float)k->c + k->xc;
			kk->oy = (float)k->r + k->xr;
			kk->scl = scl;
			kk->angle = ang[q];
			kk->response = k->response;
		}
	}
	for (int i = 0; i < n_key; i++) {
		const struct sift_key *k = &key[i];
		const int W = ow[k->octave], H = oh[k->octave];
		const float *img_l = pyr + off[k->octave] + (size_t)k->layer * W * H;
		struct sift_desc_geom gm;
		sift_desc_setup(k, W, H, &gm);
		memset(hist, 0, sizeof hist);
		for (int ii = -gm.radius; ii <= gm.radius; ii++)
			for (int jj = -gm.radius; jj <= gm.radius; jj++)
				sift_desc_sample(img_l, W, H, &gm, ii, jj, hist);
		sift_desc_finish(hist, desc + (size_t)i * SIFT_DESC_LEN);
	}
	for (int i = 0; i < n_key; i++)
		sift_order_fill(&key[i], i, &order[i]);
	qsort(order, (size_t)n_key, sizeof *order, sift_order_cmp);
	n = 0;
	for (int i = 0; i < n_key && n < cap; i++) {
		const struct sift_order_item *it = &order[i], *p = i ? &order[i - 1] : NULL;
		if (p && sift_order_same(p, it))
			continue;
		struct objects_keypoint *o = &out[n++];
		o->x = it->x;
		o->y = it->y;
		o->size = it->size;
		o->angle_deg = it->angle;
		o->response = it->response;
		memcpy(o->desc, desc + (size_t)it->idx * SIFT_DESC_LEN, SIFT_DESC_LEN);
	}
done:
	free(pyr);
	free(tmp);
	free(cand);
	free(key);
	free(desc);
	free(order);
	return n;
}

#endif
