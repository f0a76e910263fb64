/* deblur.c - a motion streak estimated and undone, then thresholded (deblur.h). */
#include "deblur.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "threshold.h"
#include "threshold_cpu.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define KSIDE (2 * DEBLUR_KERNEL_RADIUS + 1)
#define MAX_TAPS (KSIDE * KSIDE)

struct deblur {
	int max_width, max_height;
	float *g, *u, *c;   /* max_width x max_height: the grey + 1, the estimate, a convolution */
	float *xp, *y, *gp; /* likewise: the previous estimate, the extrapolated one, the previous step */
	float *pad;         /* (max_width + 2K) x (max_height + 2K): a buffer with its border repeated */
	struct image_u8 out; /* the deconvolved grey */
	struct threshold_cpu *thr;
	int n_taps;
	int tap_dx[MAX_TAPS], tap_dy[MAX_TAPS];
	float tap_w[MAX_TAPS];
};

struct deblur *deblur_create(int max_width, int max_height, int *err)
{
	if (max_width < 1 || max_height < 1) {
		*err = ERR_RANGE;
		return NULL;
	}
	struct deblur *d = calloc(1, sizeof *d);
	const size_t n = (size_t)max_width * (size_t)max_height;
	const size_t np = (size_t)(max_width + 2 * DEBLUR_KERNEL_RADIUS) * (size_t)(max_height + 2 * DEBLUR_KERNEL_RADIUS);
	if (d) {
		d->max_width = max_width;
		d->max_height = max_height;
		d->g = malloc(n * sizeof *d->g);
		d->u = malloc(n * sizeof *d->u);
		d->c = malloc(n * sizeof *d->c);
		d->xp = malloc(n * sizeof *d->xp);
		d->y = malloc(n * sizeof *d->y);
		d->gp = malloc(n * sizeof *d->gp);
		d->pad = malloc(np * sizeof *d->pad);
		d->thr = threshold_cpu_create(max_width, max_height, err);
		if (image_u8_alloc(&d->out, max_width, max_height))
			d->out.data = NULL;
	}
	if (!d || !d->g || !d->u || !d->c || !d->xp || !d->y || !d->gp || !d->pad || !d->thr || !d->out.data) {
		deblur_destroy(d);
		*err = ERR_NOMEM;
		return NULL;
	}
	*err = 0;
	return d;
}

void deblur_destroy(struct deblur *d)
{
	if (!d)
		return;
	free(d->g);
	free(d->u);
	free(d->c);
	free(d->xp);
	free(d->y);
	free(d->gp);
	free(d->pad);
	image_u8_free(&d->out);
	threshold_cpu_destroy(d->thr);
	free(d);
}

int deblur_estimate(struct deblur *d, const struct image_u8 *in, struct deblur_streak *streak)
{
	(void)d;
	const int w = in->width, h = in->height, m = DEBLUR_MAX_LENGTH + 2;
	struct deblur_streak s = {0};
	if (streak)
		*streak = s;
	if (w < 4 * m || h < 4 * m)
		return 0;
	/* The structure tensor, exactly in integers. */
	int64_t jxx = 0, jxy = 0, jyy = 0;
	for (int y = 1; y < h - 1; y++) {
		const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
		int32_t sxx = 0, sxy = 0, syy = 0;
		for (int x = 1; x < w - 1; x++) {
			const int32_t gx = (int32_t)row[x + 1] - row[x - 1], gy = (int32_t)dn[x] - up[x];
			sxx += gx * gx;
			sxy += gx * gy;
			syy += gy * gy;
		}
		jxx += sxx;
		jxy += sxy;
		jyy += syy;
	}
	const double a = (double)jxx, b = (double)jxy, c = (double)jyy;
	const double half = 0.5 * (a + c), disc = sqrt(0.25 * (a - c) * (a - c) + b * b);
	const double lmax = half + disc, lmin = half - disc;
	if (lmax <= 0.0)
		return 0;
	s.anisotropy = (float)(lmin / lmax);
	/* The larger eigenvalue's eigenvector lies at 0.5 atan2(2b, a - c);
	 * the streak runs across it. */
	double ang = 0.5 * atan2(2.0 * b, a - c) + 0.5 * M_PI;
	if (ang >= M_PI)
		ang -= M_PI;
	if (ang < 0.0)
		ang += M_PI;
	s.angle = (float)ang;
	if (streak)
		*streak = s;
	if (s.anisotropy > DEBLUR_MAX_ANISOTROPY)
		return 0;
	/* The autocorrelation of the derivative along the streak, from
	 * half-pixel differences at the pixels a margin inside the border. */
	/* The grey at p + (k + 1/2) d for k = -1 .. DEBLUR_MAX_LENGTH + 1,
	 * bilinear: the offsets and weights are the same at every p. The
	 * derivative at lag k is the difference of two neighbours. */
	enum { NQ = DEBLUR_MAX_LENGTH + 3 };
	const float dx = (float)cos(ang), dy = (float)sin(ang);
	ptrdiff_t qo[NQ];
	float qw[NQ][4];
	for (int k = 0; k < NQ; k++) {
		const float qx = ((float)k - 0.5f) * dx, qy = ((float)k - 0.5f) * dy;
		const int ox = (int)floorf(qx), oy = (int)floorf(qy);
		const float fx = qx - (float)ox, fy = qy - (float)oy;
		qo[k] = (ptrdiff_t)oy * in->stride + ox;
		qw[k][0] = (1.0f - fx) * (1.0f - fy);
		qw[k][1] = fx * (1.0f - fy);
		qw[k][2] = (1.0f - fx) * fy;
		qw[k][3] = fx * fy;
	}
	double r[DEBLUR_MAX_LENGTH + 2] = {0};
	const ptrdiff_t st = in->stride;
	for (int y = m; y < h - m; y += DEBLUR_STEP) {
		const uint8_t *row = image_u8_row(in, y);
		for (int x = m; x < w - m; x += DEBLUR_STEP) {
			float q[NQ];
			for (int k = 0; k < NQ; k++) {
				const uint8_t *p = row + x + qo[k];
				q[k] = qw[k][0] * (float)p[0] + qw[k][1] * (float)p[1] + qw[k][2] * (float)p[st] +
				       qw[k][3] * (float)p[st + 1];
			}
			const float d0 = q[1] - q[0];
			if (d0 == 0.0f)
				continue;
			for (int k = 0; k <= DEBLUR_MAX_LENGTH + 1; k++)
				r[k] += (double)(d0 * (q[k + 1] - q[k]));
		}
	}
	if (r[0] <= 0.0)
		return 0;
	int best = DEBLUR_MIN_LENGTH;
	for (int k = DEBLUR_MIN_LENGTH + 1; k <= DEBLUR_MAX_LENGTH; k++)
		if (r[k] < r[best])
			best = k;
	s.dip = (float)(r[best] / r[0]);
	double len = best;
	const double den = r[best - 1] - 2.0 * r[best] + r[best + 1];
	if (den > 0.0)
		len += 0.5 * (r[best - 1] - r[best + 1]) / den;
	s.length = (float)len;
	if (streak)
		*streak = s;
	return s.dip < -DEBLUR_MIN_DIP && best < DEBLUR_MAX_LENGTH;
}

/* The segment of the streak, 2 * length + 1 points, each spread bilinearly
 * over the kernel's pixels. */
static void make_kernel(struct deblur *d, const struct deblur_streak *s)
{
	float k[KSIDE][KSIDE];
	memset(k, 0, sizeof k);
	const int n = (int)ceilf(2.0f * s->length) + 1;
	const float dx = cosf(s->angle), dy = sinf(s->angle);
	for (int i = 0; i < n; i++) {
		const float t = ((float)i / (float)(n - 1) - 0.5f) * s->length;
		const float x = t * dx + DEBLUR_KERNEL_RADIUS, y = t * dy + DEBLUR_KERNEL_RADIUS;
		const int x0 = (int)floorf(x), y0 = (int)floorf(y);
		const float fx = x - (float)x0, fy = y - (float)y0, wt = 1.0f / (float)n;
		k[y0][x0] += (1 - fx) * (1 - fy) * wt;
		k[y0][x0 + 1] += fx * (1 - fy) * wt;
		k[y0 + 1][x0] += (1 - fx) * fy * wt;
		k[y0 + 1][x0 + 1] += fx * fy * wt;
	}
	d->n_taps = 0;
	for (int y = 0; y < KSIDE; y++)
		for (int x = 0; x < KSIDE; x++)
			if (k[y][x] > 0.0f) {
				d->tap_dx[d->n_taps] = x - DEBLUR_KERNEL_RADIUS;
				d->tap_dy[d->n_taps] = y - DEBLUR_KERNEL_RADIUS;
				d->tap_w[d->n_taps++] = k[y][x];
			}
}

/* out = src convolved with the kernel (flip: mirrored), src's border
 * repeated; src and out are w x h, stride w. */
static void convolve(struct deblur *d, const float *src, int w, int h, bool flip, float *out)
{
	const int K = DEBLUR_KERNEL_RADIUS, pw = w + 2 * K, ph = h + 2 * K;
	for (int y = 0; y < ph; y++) {
		const int sy = y - K < 0 ? 0 : y - K > h - 1 ? h - 1 : y - K;
		const float *s = src + (size_t)sy * (size_t)w;
		float *p = d->pad + (size_t)y * (size_t)pw;
		for (int x = 0; x < K; x++) {
			p[x] = s[0];
			p[K + w + x] = s[w - 1];
		}
		memcpy(p + K, s, (size_t)w * sizeof *p);
	}
	const float *row[MAX_TAPS];
#ifdef __SSE2__
	__m128 vw[MAX_TAPS];
	for (int i = 0; i < d->n_taps; i++)
		vw[i] = _mm_set1_ps(d->tap_w[i]);
#endif
	for (int y = 0; y < h; y++) {
		float *o = out + (size_t)y * (size_t)w;
		for (int i = 0; i < d->n_taps; i++) {
			const int tx = flip ? -d->tap_dx[i] : d->tap_dx[i], ty = flip ? -d->tap_dy[i] : d->tap_dy[i];
			row[i] = d->pad + (size_t)(y + K + ty) * (size_t)pw + (size_t)(K + tx);
		}
		int x = 0;
#ifdef __SSE2__
		/* Four pixels at a time, each summed tap by tap in the scalar
		 * loop's order with its products (no fused multiply-add): the
		 * same bits. */
		for (; x + 4 <= w; x += 4) {
			__m128 acc = _mm_setzero_ps();
			for (int i = 0; i < d->n_taps; i++)
				acc = _mm_add_ps(acc, _mm_mul_ps(vw[i], _mm_loadu_ps(row[i] + x)));
			_mm_storeu_ps(o + x, acc);
		}
#endif
		for (; x < w; x++) {
			float acc = 0.0f;
			for (int i = 0; i < d->n_taps; i++)
				acc += d->tap_w[i] * row[i][x];
			o[x] = acc;
		}
	}
}

/* c[i] = g[i] / max(c[i], 1e-3), four at a time where SSE2 is there
 * (the same IEEE operations: the same bits). */
static void ratio(float *c, const float *g, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128 lo = _mm_set1_ps(1e-3f);
	for (; i + 4 <= n; i += 4)
		_mm_storeu_ps(c + i, _mm_div_ps(_mm_loadu_ps(g + i), _mm_max_ps(_mm_loadu_ps(c + i), lo)));
#endif
	for (; i < n; i++)
		c[i] = g[i] / (c[i] > 1e-3f ? c[i] : 1e-3f);
}

int deblur_process(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		   int mean_bias, int gate, struct bitmask *out, struct deblur_streak *streak)
{
	const int iw = in->width, ih = in->height;
	if (iw < 1 || ih < 1 || iw > d->max_width || ih > d->max_height || out->width != iw || out->height != ih)
		return ERR_SIZE;
	if (mean_radius < 1 || mean_radius > THRESHOLD_MAX_MEAN_RADIUS || mean_bias < 0 ||
	    mean_bias > THRESHOLD_MAX_MEAN_BIAS || gate < 0 || gate > 255)
		return ERR_RANGE;
	struct deblur_box cb = {0, 0, iw, ih};
	if (core) {
		if (core->x0 < 0 || core->y0 < 0 || core->x1 > iw || core->y1 > ih || core->x0 >= core->x1 ||
		    core->y0 >= core->y1)
			return ERR_RANGE;
		cb = *core;
	}
	/* The work area: the core and DEBLUR_CONTEXT around it. */
	const int wx0 = cb.x0 - DEBLUR_CONTEXT > 0 ? cb.x0 - DEBLUR_CONTEXT : 0;
	const int wy0 = cb.y0 - DEBLUR_CONTEXT > 0 ? cb.y0 - DEBLUR_CONTEXT : 0;
	const int wx1 = cb.x1 + DEBLUR_CONTEXT < iw ? cb.x1 + DEBLUR_CONTEXT : iw;
	const int wy1 = cb.y1 + DEBLUR_CONTEXT < ih ? cb.y1 + DEBLUR_CONTEXT : ih;
	const int w = wx1 - wx0, h = wy1 - wy0;
	const struct image_u8 work = {.width = w, .height = h, .stride = in->stride,
				      .data = in->data + (size_t)wy0 * (size_t)in->stride + (size_t)wx0};
	struct deblur_streak s;
	const int found = deblur_estimate(d, &work, &s);
	if (streak)
		*streak = s;
	if (!found)
		return 0;
	make_kernel(d, &s);
	const size_t n = (size_t)w * (size_t)h;
	for (int y = 0; y < h; y++) {
		const uint8_t *row = image_u8_row(&work, y);
		float *g = d->g + (size_t)y * (size_t)w;
		for (int x = 0; x < w; x++)
			g[x] = (float)row[x] + 1.0f;
	}
	float *u = d->u, *xp = d->xp, *yk = d->y, *gp = d->gp;
	memcpy(u, d->g, n * sizeof *u);
	memcpy(xp, d->g, n * sizeof *xp);
	double alpha = 0.0;
	for (int it = 0; it < DEBLUR_ITERATIONS; it++) {
		/* Extrapolated along the last step (Biggs and Andrews), kept
		 * positive. */
		for (size_t i = 0; i < n; i++) {
			const float v = u[i] + (float)alpha * (u[i] - xp[i]);
			yk[i] = v > 1e-3f ? v : 1e-3f;
		}
		float *t = xp;
		xp = u;
		u = t;
		convolve(d, yk, w, h, false, d->c);
		ratio(d->c, d->g, n);
		convolve(d, d->c, w, h, true, d->c);
		double num = 0.0, den = 0.0;
		for (size_t i = 0; i < n; i++) {
			u[i] = yk[i] * d->c[i];
			yk[i] = u[i] - yk[i];
		}
		if (it > 0)
			for (size_t i = 0; i < n; i++) {
				num += (double)(yk[i] * gp[i]);
				den += (double)(gp[i] * gp[i]);
			}
		alpha = den > 0.0 ? num / den : 0.0;
		alpha = alpha < 0.0 ? 0.0 : alpha > DEBLUR_MAX_ALPHA ? DEBLUR_MAX_ALPHA : alpha;
		t = gp;
		gp = yk;
		yk = t;
	}
	struct image_u8 grey = d->out;
	grey.width = iw;
	grey.height = ih;
	for (int y = 0; y < ih; y++)
		memcpy(image_u8_row(&grey, y), image_u8_row(in, y), (size_t)iw);
	for (int y = cb.y0; y < cb.y1; y++) {
		const float *uy = u + (size_t)(y - wy0) * (size_t)w - wx0;
		uint8_t *o = image_u8_row(&grey, y);
		for (int x = cb.x0; x < cb.x1; x++) {
			const float v = uy[x] - 1.0f + 0.5f;
			o[x] = (uint8_t)(v <= 0.0f ? 0 : v >= 255.0f ? 255 : (int)v);
		}
	}
	threshold_cpu_mean(d->thr, &grey, THRESHOLD_MEAN, 1, gate, mean_radius, mean_bias, NULL, out);
	return 1;
}
