/* deblur.c - a motion streak estimated and undone, then thresholded (deblur.h). */
#include "deblur.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "threshold.h"
#include "threshold_cpu.h"


#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DEBLUR_AVX2 1
#else
#define DEBLUR_AVX2 0
#endif

#define KSIDE (2 * DEBLUR_KERNEL_RADIUS + 1)
#define MAX_TAPS (KSIDE * KSIDE)

struct deblur {
	int max_width, max_height;
	float *g, *u, *c;   /* max_width x max_height: the grey + 1, the estimate, a convolution */
	float *xp, *y, *gp; /* likewise: the previous estimate, the extrapolated one, the previous step */
	float *pad;         /* (max_width + 2K) x (max_height + 2K): a buffer with its border repeated */
	float *row;         /* max_width + 2K: one row with its border repeated (the separable kernel) */
	int32_t *g2;        /* 3 x max_width: three rows' squared gradients (the defocus's estimate) */
	struct bitmask seed; /* max_width x max_height: the threshold's seeds, then what stays black */
	int32_t *stack;     /* max_width x max_height: pixels whose neighbours the hysteresis has to visit */
	int seed_bias;      /* the hysteresis's seeds (deblur_seed_bias) */
	struct image_u8 out; /* the deconvolved grey */
	struct image_u8 enc; /* the same encoded (deblur_rethreshold_encoded), or an input
			      * encoded (deblur_process_encoded: read only before out is made) */
	uint8_t encode[256]; /* DEBLUR_ENCODE_GAMMA's curve */
	uint8_t encode_input[256]; /* DEBLUR_ENCODE_INPUT_GAMMA's */
	int held_w, held_h; /* of the last call's deconvolution held in out, of either kind (sep_r tells
			     * which); 0: none (deblur_continue, deblur_rethreshold) */
	struct threshold_cpu *thr;
	bool avx2;          /* the CPU has AVX2: the kernels' avx2 copies run */
	int n_taps;
	int tap_dx[MAX_TAPS], tap_dy[MAX_TAPS];
	float tap_w[MAX_TAPS];
	/* A defocus's kernel instead (sep_r > 0): a Gaussian, separable,
	 * sep_w[0 .. 2 sep_r] along x and then along y. */
	int sep_r;
	float sep_w[KSIDE];
	/* The last deconvolution, of either kind, where deblur_continue()
	 * takes it on: its estimate, the one before, the step to it and the previous
	 * step (four of the buffers above, swapped round by round), the
	 * momentum, the rounds run; the work area and its core in the
	 * frame's window (in's coordinates). */
	float *ru, *rxp, *ryk, *rgp;
	float ralpha;
	int rounds_done;
	struct deblur_box rcb, rwa;
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
		d->seed_bias = DEBLUR_SEED_BIAS;
#if DEBLUR_AVX2
		d->avx2 = __builtin_cpu_supports("avx2");
#endif
		d->g = malloc(n * sizeof *d->g);
		d->u = malloc(n * sizeof *d->u);
		d->c = malloc(n * sizeof *d->c);
		d->xp = malloc(n * sizeof *d->xp);
		d->y = malloc(n * sizeof *d->y);
		d->gp = malloc(n * sizeof *d->gp);
		d->pad = malloc(np * sizeof *d->pad);
		d->row = malloc((size_t)(max_width + 2 * DEBLUR_KERNEL_RADIUS) * sizeof *d->row);
		d->g2 = malloc(3 * (size_t)max_width * sizeof *d->g2);
		d->stack = malloc(n * sizeof *d->stack);
		if (bitmask_alloc(&d->seed, max_width, max_height))
			d->seed.bits = NULL;
		d->thr = threshold_cpu_create(max_width, max_height, err);
		if (image_u8_alloc(&d->out, max_width, max_height))
			d->out.data = NULL;
		if (image_u8_alloc(&d->enc, max_width, max_height))
			d->enc.data = NULL;
		image_u8_gamma_lut(d->encode, 1.0 / DEBLUR_ENCODE_GAMMA);
		image_u8_gamma_lut(d->encode_input, 1.0 / DEBLUR_ENCODE_INPUT_GAMMA);
	}
	if (!d || !d->g || !d->u || !d->c || !d->xp || !d->y || !d->gp || !d->pad || !d->row || !d->g2 || !d->thr ||
	    !d->stack || !d->seed.bits || !d->out.data || !d->enc.data) {
		deblur_destroy(d);
		*err = ERR_NOMEM;
		return NULL;
	}
	*err = 0;
	return d;
}

int deblur_set_isa(struct deblur *d, const char *isa)
{
	return threshold_cpu_pick_avx2(isa, "scalar", &d->avx2);
}

void deblur_seed_bias(struct deblur *d, int bias)
{
	d->seed_bias = bias < 0 ? 0 : bias > THRESHOLD_MAX_MEAN_BIAS ? THRESHOLD_MAX_MEAN_BIAS : bias;
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
	free(d->row);
	free(d->g2);
	free(d->stack);
	bitmask_free(&d->seed);
	image_u8_free(&d->out);
	image_u8_free(&d->enc);
	threshold_cpu_destroy(d->thr);
	free(d);
}

/* Row y's sums of gx * gx, gx * gy and gy * gy over x from x0 to w - 2
 * (central differences), added into j[0 .. 2]: plain, or sixteen pixels
 * at a time and then on (avx2; the same integers: |gx|, |gy| <= 255, so
 * every product and a row's sum of them (w * 2 * 255^2 < 2^31) is exact in
 * int32 whatever the order of the adds). */
static void tensor_row_plain(const struct image_u8 *in, int y, int x0, int64_t j[3])
{
	const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
	int32_t sxx = 0, sxy = 0, syy = 0;
	for (int x = x0; x < in->width - 1; x++) {
		const int32_t gx = (int32_t)row[x + 1] - row[x - 1], gy = (int32_t)dn[x] - up[x];
		sxx += gx * gx;
		sxy += gx * gy;
		syy += gy * gy;
	}
	j[0] += sxx;
	j[1] += sxy;
	j[2] += syy;
}

#if DEBLUR_AVX2
__attribute__((target("avx2"))) static inline __m256i load16_avx2(const uint8_t *p)
{
	return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}

__attribute__((target("avx2"))) static inline int32_t hsum8_avx2(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
	return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx2"))) static void tensor_row_avx2(const struct image_u8 *in, int y, int64_t j[3])
{
	const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
	__m256i axx = _mm256_setzero_si256(), axy = axx, ayy = axx;
	int x = 1;
	for (; x + 16 <= in->width - 1; x += 16) {
		const __m256i gx = _mm256_sub_epi16(load16_avx2(row + x + 1), load16_avx2(row + x - 1));
		const __m256i gy = _mm256_sub_epi16(load16_avx2(dn + x), load16_avx2(up + x));
		axx = _mm256_add_epi32(axx, _mm256_madd_epi16(gx, gx));
		axy = _mm256_add_epi32(axy, _mm256_madd_epi16(gx, gy));
		ayy = _mm256_add_epi32(ayy, _mm256_madd_epi16(gy, gy));
	}
	int64_t t[3] = {hsum8_avx2(axx), hsum8_avx2(axy), hsum8_avx2(ayy)};
	tensor_row_plain(in, y, x, t);
	for (int k = 0; k < 3; k++)
		j[k] += (int32_t)t[k];
}
#endif

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
	int64_t j[3] = {0, 0, 0};
	for (int y = 1; y < h - 1; y++) {
#if DEBLUR_AVX2
		if (d->avx2) {
			tensor_row_avx2(in, y, j);
			continue;
		}
#endif
		tensor_row_plain(in, y, 1, j);
	}
	const int64_t jxx = j[0], jxy = j[1], jyy = j[2];
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
	/* At DEBLUR_MIN_LENGTH the parabola can fall past lag 0 where the
	 * lags below it still fall (a 24 px symbol in a hard shadow's noise):
	 * a streak of under 1 px is none, and one of 0 px made a kernel of one
	 * point placed at 0 / 0 (make_kernel), written outside the kernel. */
	return s.dip < -DEBLUR_MIN_DIP && best < DEBLUR_MAX_LENGTH && s.length >= 1.0f;
}

/* A Gaussian of sigma for the defocus: radius ceil(3 sigma), at most the
 * kernel's. */
static void make_gaussian(struct deblur *d, float sigma)
{
	int r = (int)ceilf(3.0f * sigma);
	r = r > DEBLUR_KERNEL_RADIUS ? DEBLUR_KERNEL_RADIUS : r < 1 ? 1 : r;
	float sum = 0.0f;
	for (int i = -r; i <= r; i++) {
		d->sep_w[i + r] = expf(-0.5f * (float)(i * i) / (sigma * sigma));
		sum += d->sep_w[i + r];
	}
	for (int i = 0; i <= 2 * r; i++)
		d->sep_w[i] /= sum;
	d->sep_r = r;
	d->n_taps = 0;
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
	d->sep_r = 0;
	d->n_taps = 0;
	for (int y = 0; y < KSIDE; y++)
		for (int x = 0; x < KSIDE; x++)
			if (k[y][x] > 0.0f) {
				d->tap_dx[d->n_taps] = x - DEBLUR_KERNEL_RADIUS;
				d->tap_dy[d->n_taps] = y - DEBLUR_KERNEL_RADIUS;
				d->tap_w[d->n_taps++] = k[y][x];
			}
}

/* Eight float lanes (GCC's vector extension: two SSE registers, or one
 * AVX register in the avx2 copies below). Every operation is lane by lane
 * IEEE single precision, multiplies and adds apart (no fused multiply-add),
 * so each copy gives the same bits as the scalar loops. */
typedef float vf8 __attribute__((vector_size(32)));
/* The helpers below pass vectors by value between static functions that
 * are inlined into one another: no call crosses an ABI. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef int32_t vi8 __attribute__((vector_size(32)));
#define VL 8

static inline __attribute__((always_inline)) vf8 vld(const float *p)
{
	vf8 v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline __attribute__((always_inline)) void vst(float *p, vf8 v)
{
	memcpy(p, &v, sizeof v);
}

static inline __attribute__((always_inline)) vf8 vmax(vf8 a, vf8 b)
{
	const vi8 m = a > b;
	vi8 ai, bi;
	memcpy(&ai, &a, sizeof a);
	memcpy(&bi, &b, sizeof b);
	const vi8 r = (ai & m) | (bi & ~m);
	vf8 v;
	memcpy(&v, &r, sizeof v);
	return v;
}

/* out = src convolved with the kernel (flip: mirrored), src's border
 * repeated; src and out are w x h, stride w. Each pixel sums its taps in
 * the kernel's order. */
static inline __attribute__((always_inline)) void convolve_body(struct deblur *d, const float *src, int w, int h, bool flip, float *out)
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
	const int nt = d->n_taps;
	ptrdiff_t off[MAX_TAPS];
	for (int i = 0; i < nt; i++) {
		const int tx = flip ? -d->tap_dx[i] : d->tap_dx[i], ty = flip ? -d->tap_dy[i] : d->tap_dy[i];
		off[i] = (ptrdiff_t)(K + ty) * pw + (K + tx);
	}
	for (int y = 0; y < h; y++) {
		float *o = out + (size_t)y * (size_t)w;
		const float *base = d->pad + (size_t)y * (size_t)pw;
		int x = 0;
		for (; x + 2 * VL <= w; x += 2 * VL) {
			vf8 a0 = {0}, a1 = {0};
			for (int i = 0; i < nt; i++) {
				const float *r = base + off[i] + x;
				const float wt = d->tap_w[i];
				a0 += wt * vld(r);
				a1 += wt * vld(r + VL);
			}
			vst(o + x, a0);
			vst(o + x + VL, a1);
		}
		for (; x < w; x++) {
			float acc = 0.0f;
			for (int i = 0; i < nt; i++)
				acc += d->tap_w[i] * base[off[i] + x];
			o[x] = acc;
		}
	}
}

/* The k-th smallest of v[0 .. n) (from 0), v reordered: Hoare's
 * selection, the middle element the pivot. */
static float select_kth(float *v, int n, int k)
{
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		const float p = v[lo + (hi - lo) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < p)
				i++;
			while (v[j] > p)
				j--;
			if (i <= j) {
				const float t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/* Sobel at (x, y) of in: gx, gy. */
static inline void sobel(const struct image_u8 *in, int x, int y, int32_t *gx, int32_t *gy)
{
	const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
	*gx = (up[x + 1] + 2 * row[x + 1] + dn[x + 1]) - (up[x - 1] + 2 * row[x - 1] + dn[x - 1]);
	*gy = (dn[x - 1] + 2 * dn[x] + dn[x + 1]) - (up[x - 1] + 2 * up[x] + up[x + 1]);
}

/* Row y's squared Sobel gradients (exact integers) into g2[1 .. w - 2]:
 * from x0 on (plain), or sixteen pixels at a time and then on (avx2). */
static void sobel_row_plain(const struct image_u8 *in, int y, int x0, int32_t *g2)
{
	const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
	for (int x = x0; x < in->width - 1; x++) {
		const int32_t gx = (up[x + 1] + 2 * row[x + 1] + dn[x + 1]) - (up[x - 1] + 2 * row[x - 1] + dn[x - 1]);
		const int32_t gy = (dn[x - 1] + 2 * dn[x] + dn[x + 1]) - (up[x - 1] + 2 * up[x] + up[x + 1]);
		g2[x] = gx * gx + gy * gy;
	}
}

#if DEBLUR_AVX2
__attribute__((target("avx2"))) static void sobel_row_avx2(const struct image_u8 *in, int y, int32_t *g2)
{
	const uint8_t *up = image_u8_row(in, y - 1), *row = image_u8_row(in, y), *dn = image_u8_row(in, y + 1);
	int x = 1;
	/* Sixteen pixels a step in 16-bit lanes (|gx|, |gy| <= 1020); gx * gx
	 * + gy * gy of each pixel by one multiply-add of its interleaved pair,
	 * exact in 32 bits. The unpacks work within 128-bit halves: lo holds
	 * pixels 0-3 and 8-11, hi 4-7 and 12-15. */
	for (; x + 16 <= in->width - 1; x += 16) {
		const __m256i ul = load16_avx2(up + x - 1), uc = load16_avx2(up + x), ur = load16_avx2(up + x + 1);
		const __m256i rl = load16_avx2(row + x - 1), rr = load16_avx2(row + x + 1);
		const __m256i dl = load16_avx2(dn + x - 1), dc = load16_avx2(dn + x), dr = load16_avx2(dn + x + 1);
		const __m256i xr = _mm256_add_epi16(_mm256_add_epi16(ur, dr), _mm256_add_epi16(rr, rr));
		const __m256i xl = _mm256_add_epi16(_mm256_add_epi16(ul, dl), _mm256_add_epi16(rl, rl));
		const __m256i yd = _mm256_add_epi16(_mm256_add_epi16(dl, dr), _mm256_add_epi16(dc, dc));
		const __m256i yu = _mm256_add_epi16(_mm256_add_epi16(ul, ur), _mm256_add_epi16(uc, uc));
		const __m256i gx = _mm256_sub_epi16(xr, xl), gy = _mm256_sub_epi16(yd, yu);
		const __m256i lo = _mm256_unpacklo_epi16(gx, gy), hi = _mm256_unpackhi_epi16(gx, gy);
		const __m256i mlo = _mm256_madd_epi16(lo, lo), mhi = _mm256_madd_epi16(hi, hi);
		_mm256_storeu_si256((__m256i *)(void *)(g2 + x), _mm256_permute2x128_si256(mlo, mhi, 0x20));
		_mm256_storeu_si256((__m256i *)(void *)(g2 + x + 8), _mm256_permute2x128_si256(mlo, mhi, 0x31));
	}
	sobel_row_plain(in, y, x, g2);
}
#endif

/* The first x from x0 on, before x1, where g2[x] >= min_g2 (min_g2 >= 0);
 * x1 where none: plain, or eight at a time (avx2). */
static int first_at_least_plain(const int32_t *g2, int x0, int x1, int32_t min_g2)
{
	while (x0 < x1 && g2[x0] < min_g2)
		x0++;
	return x0;
}

#if DEBLUR_AVX2
__attribute__((target("avx2"))) static int first_at_least_avx2(const int32_t *g2, int x0, int x1, int32_t min_g2)
{
	const __m256i below = _mm256_set1_epi32(min_g2 - 1);
	for (; x0 + 8 <= x1; x0 += 8) {
		const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(g2 + x0));
		const int hit = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, below)));
		if (hit)
			return x0 + __builtin_ctz((unsigned)hit);
	}
	return first_at_least_plain(g2, x0, x1, min_g2);
}
#endif

static int first_at_least(const struct deblur *d, const int32_t *g2, int x0, int x1, int32_t min_g2)
{
#if DEBLUR_AVX2
	if (d->avx2)
		return first_at_least_avx2(g2, x0, x1, min_g2);
#endif
	(void)d;
	return first_at_least_plain(g2, x0, x1, min_g2);
}

static void sobel_row(const struct deblur *d, const struct image_u8 *in, int y, int32_t *g2)
{
#if DEBLUR_AVX2
	if (d->avx2) {
		sobel_row_avx2(in, y, g2);
		return;
	}
#endif
	(void)d;
	sobel_row_plain(in, y, 1, g2);
}

/* The grey of in at (qx, qy), both over 0: bilinear. */
static inline float bilinear(const struct image_u8 *in, float qx, float qy)
{
	/* qx, qy > 0: truncation is the floor. */
	const int ix = (int)qx, iy = (int)qy;
	const float fx = qx - (float)ix, fy = qy - (float)iy;
	const ptrdiff_t st = in->stride;
	const uint8_t *p = in->data + (ptrdiff_t)iy * st + ix;
	return (1.0f - fx) * (1.0f - fy) * (float)p[0] + fx * (1.0f - fy) * (float)p[1] + (1.0f - fx) * fy * (float)p[st] +
	       fx * fy * (float)p[st + 1];
}

/* The steps of in: at each pixel that is a maximum of the gradient
 * (Sobel; / 8, the central difference's half along a straight edge)
 * across its edge, with a squared gradient of at least min_g2, a step
 * along the gradient of at least min_step, and the sigma of a
 * Gaussian-blurred step of that height and that steepest slope, into s;
 * returns how many. The step: long, between the grey DEBLUR_DEFOCUS_REACH
 * pixels to either side, flat on both sides; or short (sharp), the grey's
 * range within DEBLUR_SHARP_REACH pixels, flat or not (the print's small
 * features too). The squared gradients of three rows at a time, exact. */
static int defocus_steps(struct deblur *d, const struct image_u8 *in, bool sharp, int32_t min_g2, float min_step,
			 float *s)
{
	const int w = in->width, h = in->height, L = DEBLUR_DEFOCUS_REACH, xe = w - L - 1;
	const float root2pi = 2.5066283f;
	const ptrdiff_t st = in->stride;
	int ns = 0;
	int32_t *rows[3] = {d->g2, d->g2 + w, d->g2 + 2 * w};
	sobel_row(d, in, L, rows[L % 3]);
	sobel_row(d, in, L + 1, rows[(L + 1) % 3]);
	for (int y = L + 1; y < h - L - 1; y++) {
		sobel_row(d, in, y + 1, rows[(y + 1) % 3]);
		const int32_t *g2 = rows[y % 3];
		/* Most pixels are below min_g2: skipped eight at a time. */
		for (int x = L + 1; (x = first_at_least(d, g2, x, xe, min_g2)) < xe; x++) {
			const int32_t gv = g2[x];
			int32_t gx, gy;
			sobel(in, x, y, &gx, &gy);
			/* The neighbour across the edge: the gradient's direction
			 * rounded to the pixel grid (a component counts where it is
			 * over half the length), in integers. */
			const int ox = 4 * gx * gx > gv ? (gx > 0) - (gx < 0) : 0;
			const int oy = 4 * gy * gy > gv ? (gy > 0) - (gy < 0) : 0;
			if (rows[(y + oy + 3) % 3][x + ox] > gv || rows[(y - oy + 3) % 3][x - ox] >= gv)
				continue;
			const float mag = sqrtf((float)gv), nx = (float)gx / mag, ny = (float)gy / mag;
			if (sharp) {
				const float c0 = (float)image_u8_row(in, y)[x];
				float lo = c0, hi = c0;
				for (int k = 1; k <= DEBLUR_SHARP_REACH; k++)
					for (int sgn = -1; sgn <= 1; sgn += 2) {
						const float t = (float)(sgn * k);
						const float g = bilinear(in, (float)x + t * nx, (float)y + t * ny);
						lo = g < lo ? g : lo;
						hi = g > hi ? g : hi;
					}
				if (hi - lo >= min_step)
					s[ns++] = 8.0f * (hi - lo) / (root2pi * mag);
				continue;
			}
			/* v: the grey at -L, -L/2, +L/2, +L along the gradient. */
			float v[4];
			for (int k = 0; k < 4; k++) {
				const float t = (k == 0 ? -1.0f : k == 1 ? -0.5f : k == 2 ? 0.5f : 1.0f) * (float)L;
				const float qx = (float)x + t * nx, qy = (float)y + t * ny;
				/* qx, qy > 0: truncation is the floor. */
				const int ix = (int)qx, iy = (int)qy;
				const float fx = qx - (float)ix, fy = qy - (float)iy;
				const uint8_t *p = in->data + (ptrdiff_t)iy * st + ix;
				v[k] = (1.0f - fx) * (1.0f - fy) * (float)p[0] + fx * (1.0f - fy) * (float)p[1] +
				       (1.0f - fx) * fy * (float)p[st] + fx * fy * (float)p[st + 1];
			}
			const float step = v[3] - v[0];
			/* A step, flat on both sides: not the side of a stripe or dot. */
			if (step < min_step || fabsf(v[1] - v[0]) > DEBLUR_DEFOCUS_FLAT * step ||
			    fabsf(v[3] - v[2]) > DEBLUR_DEFOCUS_FLAT * step)
				continue;
			s[ns++] = 8.0f * step / (root2pi * mag);
		}
	}
	return ns;
}

int deblur_defocus(struct deblur *d, const struct image_u8 *in, float *sigma, float *sharp)
{
	const int w = in->width, h = in->height, L = DEBLUR_DEFOCUS_REACH;
	*sigma = *sharp = 0.0f;
	if (w < 4 * L || h < 4 * L)
		return 0;
	/* The window's range: its grey's 2nd to 98th percentile, over every
	 * other pixel of every other row. */
	uint32_t hist[256] = {0};
	uint64_t n = 0;
	for (int y = 0; y < h; y += 2) {
		const uint8_t *row = image_u8_row(in, y);
		for (int x = 0; x < w; x += 2, n++)
			hist[row[x]]++;
	}
	const uint64_t cut = n / 50;
	int lo = 0, hi = 255;
	for (uint64_t acc = hist[0]; acc <= cut && lo < 255; acc += hist[++lo])
		;
	for (uint64_t acc = hist[255]; acc <= cut && hi > 0; acc += hist[--hi])
		;
	const int range = hi - lo;
	if (range < DEBLUR_DEFOCUS_MIN_RANGE)
		return 0;
	/* The long steps of at least DEBLUR_DEFOCUS_MIN_STEP of the range,
	 * none gentler than a step under DEBLUR_DEFOCUS_MAX_SIGMA. */
	const float root2pi = 2.5066283f, min_step = DEBLUR_DEFOCUS_MIN_STEP * (float)range;
	const float min_g8 = 8.0f * min_step / (root2pi * DEBLUR_DEFOCUS_MAX_SIGMA);
	const int32_t min_g2 = (int32_t)(min_g8 * min_g8);
	float *s = d->u;
	const int ns = defocus_steps(d, in, false, min_g2, min_step, s);
	if (ns < DEBLUR_DEFOCUS_MIN_EDGES)
		return 0;
	/* The median and the first quartile, selected (a sort of these
	 * thousands would allocate: core/sort.h). */
	*sigma = select_kth(s, ns, (ns - 1) / 2);
	if (*sigma < DEBLUR_MIN_SIGMA || select_kth(s, ns, (ns - 1) / 4) < DEBLUR_MIN_SIGMA_Q1)
		return 0;
	/* The short steps, read again at the same maxima only where the
	 * window reads a defocus (they are many: every steep maximum); their
	 * first decile selected, not sorted. */
	const int nsh = defocus_steps(d, in, true, min_g2, min_step, d->c);
	*sharp = nsh >= DEBLUR_DEFOCUS_MIN_EDGES ? select_kth(d->c, nsh, (nsh - 1) / 10) : *sigma;
	return 1;
}

/* out = src convolved with the separable Gaussian (symmetric, so its own
 * mirror), along x into pad and then along y, src's border repeated; src
 * and out are w x h, stride w, and may be the same buffer. Each pixel
 * starts from its centre tap and adds the pairs of taps at equal distance,
 * outermost first, each pair summed before its weight multiplies it. */
static inline __attribute__((always_inline)) void convolve_sep_fixed(struct deblur *d, const float *src, int w, int h,
								   float *out, const int r)
{
	const int nt = 2 * r + 1;
	const float *k = d->sep_w;
	float *t = d->pad, *p = d->row;
	for (int y = 0; y < h; y++) {
		const float *s = src + (size_t)y * (size_t)w;
		for (int x = 0; x < r; x++) {
			p[x] = s[0];
			p[r + w + x] = s[w - 1];
		}
		memcpy(p + r, s, (size_t)w * sizeof *p);
		float *o = t + (size_t)y * (size_t)w;
		int x = 0;
		for (; x + VL <= w; x += VL) {
			vf8 a = k[r] * vld(p + x + r);
#pragma GCC unroll 8
			for (int i = 0; i < r; i++)
				a += k[i] * (vld(p + x + i) + vld(p + x + nt - 1 - i));
			vst(o + x, a);
		}
		for (; x < w; x++) {
			float a = k[r] * p[x + r];
			for (int i = 0; i < r; i++)
				a += k[i] * (p[x + i] + p[x + nt - 1 - i]);
			o[x] = a;
		}
	}
	for (int y = 0; y < h; y++) {
		const float *rows[KSIDE];
		for (int i = 0; i < nt; i++) {
			const int sy = y + i - r < 0 ? 0 : y + i - r > h - 1 ? h - 1 : y + i - r;
			rows[i] = t + (size_t)sy * (size_t)w;
		}
		float *o = out + (size_t)y * (size_t)w;
		int x = 0;
		for (; x + VL <= w; x += VL) {
			vf8 a = k[r] * vld(rows[r] + x);
#pragma GCC unroll 8
			for (int i = 0; i < r; i++)
				a += k[i] * (vld(rows[i] + x) + vld(rows[nt - 1 - i] + x));
			vst(o + x, a);
		}
		for (; x < w; x++) {
			float a = k[r] * rows[r][x];
			for (int i = 0; i < r; i++)
				a += k[i] * (rows[i][x] + rows[nt - 1 - i][x]);
			o[x] = a;
		}
	}
}

/* The same with the radius a constant, so that the tap loops unroll. */
static inline __attribute__((always_inline)) void convolve_sep_body(struct deblur *d, const float *src, int w, int h,
								  float *out)
{
	switch (d->sep_r) {
	case 1: convolve_sep_fixed(d, src, w, h, out, 1); break;
	case 2: convolve_sep_fixed(d, src, w, h, out, 2); break;
	case 3: convolve_sep_fixed(d, src, w, h, out, 3); break;
	case 4: convolve_sep_fixed(d, src, w, h, out, 4); break;
	case 5: convolve_sep_fixed(d, src, w, h, out, 5); break;
	case 6: convolve_sep_fixed(d, src, w, h, out, 6); break;
	case 7: convolve_sep_fixed(d, src, w, h, out, 7); break;
	default: convolve_sep_fixed(d, src, w, h, out, DEBLUR_KERNEL_RADIUS); break;
	}
}

/* One accelerated Richardson-Lucy round's pixel work around the two
 * convolutions: before them, yk = max(u + alpha (u - xp), 1e-3) (the
 * extrapolated estimate); after them (c holding the correction),
 * u = yk c, yk = u - yk (the step) and, with sums, the step's dot products
 * with the previous step gp and gp's with itself, each in VL lanes by the
 * pixel's index mod VL, added up in lane order. */
static inline __attribute__((always_inline)) void extrapolate_body(float *yk, const float *u, const float *xp, float alpha, size_t n)
{
	const vf8 lo = {1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f};
	size_t i = 0;
	for (; i + VL <= n; i += VL) {
		const vf8 v = vld(u + i);
		vst(yk + i, vmax(v + alpha * (v - vld(xp + i)), lo));
	}
	for (; i < n; i++) {
		const float v = u[i] + alpha * (u[i] - xp[i]);
		yk[i] = v > 1e-3f ? v : 1e-3f;
	}
}

static inline __attribute__((always_inline)) void ratio_body(float *c, const float *g, size_t n)
{
	const vf8 lo = {1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f, 1e-3f};
	size_t i = 0;
	for (; i + VL <= n; i += VL)
		vst(c + i, vld(g + i) / vmax(vld(c + i), lo));
	for (; i < n; i++)
		c[i] = g[i] / (c[i] > 1e-3f ? c[i] : 1e-3f);
}

static inline __attribute__((always_inline)) void update_body(float *u, float *yk, const float *c, const float *gp, bool sums, float *num,
			       float *den, size_t n)
{
	vf8 vn = {0}, vd = {0};
	size_t i = 0;
	for (; i + VL <= n; i += VL) {
		const vf8 y = vld(yk + i), nu = y * vld(c + i), g = nu - y;
		vst(u + i, nu);
		vst(yk + i, g);
		if (sums) {
			const vf8 p = vld(gp + i);
			vn += g * p;
			vd += p * p;
		}
	}
	float ln[VL], ld[VL];
	memcpy(ln, &vn, sizeof ln);
	memcpy(ld, &vd, sizeof ld);
	for (; i < n; i++) {
		u[i] = yk[i] * c[i];
		yk[i] = u[i] - yk[i];
		if (sums) {
			ln[i % VL] += yk[i] * gp[i];
			ld[i % VL] += gp[i] * gp[i];
		}
	}
	float sn = 0.0f, sd = 0.0f;
	for (int l = 0; l < VL; l++) {
		sn += ln[l];
		sd += ld[l];
	}
	*num = sn;
	*den = sd;
}

/* Each kernel twice: plain (SSE2 on x86-64) and, where the CPU has it,
 * AVX2; the same bits either way. */
#if DEBLUR_AVX2
__attribute__((target("avx2"))) static void convolve_avx2(struct deblur *d, const float *src, int w, int h,
							   bool flip, float *out)
{
	convolve_body(d, src, w, h, flip, out);
}
__attribute__((target("avx2"))) static void convolve_sep_avx2(struct deblur *d, const float *src, int w, int h,
							       float *out)
{
	convolve_sep_body(d, src, w, h, out);
}
__attribute__((target("avx2"))) static void extrapolate_avx2(float *yk, const float *u, const float *xp,
							      float alpha, size_t n)
{
	extrapolate_body(yk, u, xp, alpha, n);
}
__attribute__((target("avx2"))) static void ratio_avx2(float *c, const float *g, size_t n)
{
	ratio_body(c, g, n);
}
__attribute__((target("avx2"))) static void update_avx2(float *u, float *yk, const float *c, const float *gp,
							 bool sums, float *num, float *den, size_t n)
{
	update_body(u, yk, c, gp, sums, num, den, n);
}
#endif

/* One round from the estimate xk and the one before it, xprev: xprev
 * receives the next estimate, yk the step to it (above). */
static void rl_round(struct deblur *d, const float *xk, float *xprev, float *yk, const float *gp, float alpha,
		     bool sums, float *num, float *den, int w, int h)
{
	const size_t n = (size_t)w * (size_t)h;
#if DEBLUR_AVX2
	if (d->avx2) {
		extrapolate_avx2(yk, xk, xprev, alpha, n);
		if (d->sep_r)
			convolve_sep_avx2(d, yk, w, h, d->c);
		else
			convolve_avx2(d, yk, w, h, false, d->c);
		ratio_avx2(d->c, d->g, n);
		if (d->sep_r)
			convolve_sep_avx2(d, d->c, w, h, d->c);
		else
			convolve_avx2(d, d->c, w, h, true, d->c);
		update_avx2(xprev, yk, d->c, gp, sums, num, den, n);
		return;
	}
#endif
	extrapolate_body(yk, xk, xprev, alpha, n);
	if (d->sep_r)
		convolve_sep_body(d, yk, w, h, d->c);
	else
		convolve_body(d, yk, w, h, false, d->c);
	ratio_body(d->c, d->g, n);
	if (d->sep_r)
		convolve_sep_body(d, d->c, w, h, d->c);
	else
		convolve_body(d, d->c, w, h, true, d->c);
	update_body(xprev, yk, d->c, gp, sums, num, den, n);
}

/* The work area of in's core (NULL: all of in): the core and
 * DEBLUR_CONTEXT around it, within in; ERR_RANGE where the core does not
 * lie inside in or holds no pixel. */
static int work_area(const struct image_u8 *in, const struct deblur_box *core, struct deblur_box *cb,
		     struct deblur_box *wa, struct image_u8 *work)
{
	const int iw = in->width, ih = in->height;
	*cb = (struct deblur_box){0, 0, iw, ih};
	if (core) {
		if (core->x0 < 0 || core->y0 < 0 || core->x1 > iw || core->y1 > ih || core->x0 >= core->x1 ||
		    core->y0 >= core->y1)
			return ERR_RANGE;
		*cb = *core;
	}
	wa->x0 = cb->x0 - DEBLUR_CONTEXT > 0 ? cb->x0 - DEBLUR_CONTEXT : 0;
	wa->y0 = cb->y0 - DEBLUR_CONTEXT > 0 ? cb->y0 - DEBLUR_CONTEXT : 0;
	wa->x1 = cb->x1 + DEBLUR_CONTEXT < iw ? cb->x1 + DEBLUR_CONTEXT : iw;
	wa->y1 = cb->y1 + DEBLUR_CONTEXT < ih ? cb->y1 + DEBLUR_CONTEXT : ih;
	*work = (struct image_u8){.width = wa->x1 - wa->x0, .height = wa->y1 - wa->y0, .stride = in->stride,
				  .data = in->data + (size_t)wa->y0 * (size_t)in->stride + (size_t)wa->x0};
	return 0;
}

/* The sizes and ranges deblur_process() and deblur_apply() ask for. */
static int check_args(const struct deblur *d, const struct image_u8 *in, int mean_radius, int mean_bias, int gate,
		      const struct bitmask *out)
{
	const int iw = in->width, ih = in->height;
	if (iw < 1 || ih < 1 || iw > d->max_width || ih > d->max_height || out->width != iw || out->height != ih)
		return ERR_SIZE;
	if (mean_radius < 1 || mean_radius > THRESHOLD_MAX_MEAN_RADIUS || mean_bias < 0 ||
	    mean_bias > THRESHOLD_MAX_MEAN_BIAS || gate < 0 || gate > 255)
		return ERR_RANGE;
	return 0;
}

/* What deblur_process() finds in work: DEBLUR_STREAK, DEBLUR_DEFOCUS
 * (only where defocus is set) or 0, the estimate in *s. */
static int classify(struct deblur *d, const struct image_u8 *work, bool defocus, struct deblur_streak *s)
{
	if (deblur_estimate(d, work, s))
		return DEBLUR_STREAK;
	if (defocus && s->anisotropy > DEBLUR_MAX_ANISOTROPY && deblur_defocus(d, work, &s->sigma, &s->sharp))
		return DEBLUR_DEFOCUS;
	return 0;
}

static int deconvolve(struct deblur *d, const struct image_u8 *in, const struct deblur_box *cb,
		      const struct deblur_box *wa, const struct image_u8 *work, int mean_radius, int mean_bias, int gate,
		      int kind, const struct deblur_streak *s, struct bitmask *out);

/* What deblur_process() and deblur_apply() do first: forget the last
 * streak's grey (deblur_rethreshold() has none until this call
 * deconvolves one), check the arguments and find the work area. */
static int begin(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		 int mean_bias, int gate, const struct bitmask *out, struct deblur_box *cb, struct deblur_box *wa,
		 struct image_u8 *work)
{
	d->held_w = d->held_h = 0;
	const int e = check_args(d, in, mean_radius, mean_bias, gate, out);
	return e ? e : work_area(in, core, cb, wa, work);
}

int deblur_process(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		   int mean_bias, int gate, bool defocus, struct bitmask *out, struct deblur_streak *streak)
{
	struct deblur_box cb, wa;
	struct image_u8 work;
	const int e = begin(d, in, core, mean_radius, mean_bias, gate, out, &cb, &wa, &work);
	if (e)
		return e;
	struct deblur_streak s = {0};
	const int kind = classify(d, &work, defocus, &s);
	if (streak)
		*streak = s;
	return kind ? deconvolve(d, in, &cb, &wa, &work, mean_radius, mean_bias, gate, kind, &s, out) : 0;
}

int deblur_apply(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		 int mean_bias, int gate, int kind, const struct deblur_streak *s, struct bitmask *out)
{
	struct deblur_box cb, wa;
	struct image_u8 work;
	const int e = begin(d, in, core, mean_radius, mean_bias, gate, out, &cb, &wa, &work);
	if (e)
		return e;
	if ((kind != DEBLUR_STREAK && kind != DEBLUR_DEFOCUS) || s->rounds < 0 || s->rounds > DEBLUR_MAX_ROUNDS ||
	    (kind == DEBLUR_STREAK && !(s->length >= 1.0f && s->length <= DEBLUR_MAX_LENGTH)) ||
	    (kind == DEBLUR_DEFOCUS && !(s->sigma > 0.0f && s->sigma <= FLT_MAX)))
		return ERR_RANGE;
	return deconvolve(d, in, &cb, &wa, &work, mean_radius, mean_bias, gate, kind, s, out);
}

/* The pixels of word i of keep's row y (bit j: pixel 64 i + j) with a
 * black pixel of keep among their 8 neighbours or at their place; last:
 * the mask of the row's last word's pixels, words: the words a row. */
static uint64_t black_near(const struct bitmask *keep, int y, int i, int words, uint64_t last)
{
	uint64_t near = 0;
	for (int yy = y > 0 ? y - 1 : 0; yy <= y + 1 && yy < keep->height; yy++) {
		const uint64_t *k = bitmask_row(keep, yy);
		const uint64_t b = ~k[i] & (i == words - 1 ? last : ~0ull);
		const uint64_t before = i > 0 ? ~k[i - 1] >> 63 : 0;
		const uint64_t after = i < words - 1 ? (~k[i + 1] & (i + 1 == words - 1 ? last : ~0ull)) << 63 : 0;
		near |= b | b << 1 | before | b >> 1 | after;
	}
	return near;
}

/* A streak's threshold (deblur.h): grey by the local mean at mean_radius,
 * less mean_bias percent, with gate, into out, with hysteresis against the
 * same rule at d->seed_bias. Every pixel black at the seed's bias is black
 * at mean_bias too, so keep (the seeds' threshold) starts as what stays
 * black; each pixel black in out only (a candidate) that touches a black
 * one of keep joins it, and from it every candidate its chain reaches (a
 * candidate skipped earlier in the scan joins from a later one). A word's
 * candidates are found, and those that touch black, 64 at a time; only
 * candidates are pushed, each once, so the stack holds at most the
 * window. */
static void mean_hysteresis(struct deblur *d, const struct image_u8 *grey, int mean_radius, int mean_bias, int gate,
			    struct bitmask *out)
{
	threshold_cpu_mean(d->thr, grey, THRESHOLD_MEAN, 1, gate, mean_radius, mean_bias, NULL, out);
	if (mean_bias >= d->seed_bias)
		return;
	const int w = grey->width, h = grey->height, words = (w + 63) / 64;
	const uint64_t last = w % 64 ? (1ull << (w % 64)) - 1 : ~0ull;
	struct bitmask keep = {.width = w, .height = h, .stride_words = d->seed.stride_words, .bits = d->seed.bits};
	threshold_cpu_mean(d->thr, grey, THRESHOLD_MEAN, 1, gate, mean_radius, d->seed_bias, NULL, &keep);
	int32_t *stack = d->stack;
	for (int y = 0; y < h; y++) {
		const uint64_t *o = bitmask_row(out, y);
		uint64_t *k = keep.bits + (size_t)y * (size_t)keep.stride_words;
		for (int i = 0; i < words; i++) {
			/* Bits past the width are zero in both: no candidate. */
			const uint64_t cand = ~o[i] & k[i];
			for (uint64_t c = cand ? cand & black_near(&keep, y, i, words, last) : 0; c; c &= c - 1) {
				const int x = i * 64 + __builtin_ctzll(c);
				if (!(k[i] >> (x & 63) & 1))
					continue;
				k[i] &= ~(1ull << (x & 63));
				size_t n = 0;
				stack[n++] = y * w + x;
				while (n > 0) {
					const int32_t p = stack[--n];
					const int px = p % w, py = p / w;
					for (int yy = py > 0 ? py - 1 : 0; yy <= py + 1 && yy < h; yy++) {
						const uint64_t *oo = bitmask_row(out, yy);
						uint64_t *kk = keep.bits + (size_t)yy * (size_t)keep.stride_words;
						for (int xx = px > 0 ? px - 1 : 0; xx <= px + 1 && xx < w; xx++) {
							const uint64_t bit = 1ull << (xx & 63);
							if ((kk[xx >> 6] & bit) && !(oo[xx >> 6] & bit)) {
								kk[xx >> 6] &= ~bit;
								stack[n++] = yy * w + xx;
							}
						}
					}
				}
			}
		}
	}
	for (int y = 0; y < h; y++)
		memcpy(out->bits + (size_t)y * (size_t)out->stride_words, bitmask_row(&keep, y),
		       (size_t)words * sizeof *out->bits);
}

int deblur_threshold(struct deblur *d, const struct image_u8 *grey, int mean_radius, int mean_bias, int gate,
		     struct bitmask *out)
{
	const int e = check_args(d, grey, mean_radius, mean_bias, gate, out);
	if (e)
		return e;
	mean_hysteresis(d, grey, mean_radius, mean_bias, gate, out);
	return 0;
}

/* Thresholds grey, which holds the held deconvolution's core, as its
 * kind asks: a defocus's by Bernsen at DEBLUR_DEFOCUS_RADIUS, a streak's
 * by the local mean at mean_radius, both with gate. */
static void held_threshold(struct deblur *d, const struct image_u8 *grey, int mean_radius, int mean_bias, int gate,
			   struct bitmask *out)
{
	if (d->sep_r)
		threshold_cpu_bernsen(d->thr, grey, DEBLUR_DEFOCUS_RADIUS, gate, NULL, out);
	else
		mean_hysteresis(d, grey, mean_radius, mean_bias, gate, out);
}

/* Runs the deconvolution held in d (d->ru ...) on to rounds rounds in
 * all; accelerated (Biggs-Andrews): each round from the estimate pushed
 * along its last step by the momentum the last two steps give. */
static void rl_rounds(struct deblur *d, int rounds)
{
	const int w = d->rwa.x1 - d->rwa.x0, h = d->rwa.y1 - d->rwa.y0;
	float *u = d->ru, *xp = d->rxp, *yk = d->ryk, *gp = d->rgp;
	float alpha = d->ralpha;
	for (int it = d->rounds_done; it < rounds; it++) {
		float num = 0.0f, den = 0.0f;
		rl_round(d, u, xp, yk, gp, alpha, it > 0, &num, &den, w, h);
		float *t = xp;
		xp = u;
		u = t;
		t = gp;
		gp = yk;
		yk = t;
		alpha = it > 0 && den > 0.0f ? num / den : 0.0f;
		alpha = alpha < 0.0f ? 0.0f : alpha > DEBLUR_MAX_ALPHA ? DEBLUR_MAX_ALPHA : alpha;
	}
	d->ru = u;
	d->rxp = xp;
	d->ryk = yk;
	d->rgp = gp;
	d->ralpha = alpha;
	d->rounds_done = rounds > d->rounds_done ? rounds : d->rounds_done;
}

/* Writes the held estimate's core into grey (in's coordinates), rounded
 * and clamped to 0..255. */
static void core_out(const struct deblur *d, struct image_u8 *grey)
{
	const int w = d->rwa.x1 - d->rwa.x0, wx0 = d->rwa.x0, wy0 = d->rwa.y0;
	for (int y = d->rcb.y0; y < d->rcb.y1; y++) {
		const float *uy = d->ru + (size_t)(y - wy0) * (size_t)w - wx0;
		uint8_t *o = image_u8_row(grey, y);
		for (int x = d->rcb.x0; x < d->rcb.x1; x++) {
			const float v = uy[x] - 1.0f + 0.5f;
			o[x] = (uint8_t)(v <= 0.0f ? 0 : v >= 255.0f ? 255 : (int)v);
		}
	}
}

/* Deconvolves work (the work area wa of in, around its core cb) under
 * kind's kernel from s, and thresholds in with the core deconvolved into
 * out; returns kind. The arguments are checked. */
static int deconvolve(struct deblur *d, const struct image_u8 *in, const struct deblur_box *cb,
		      const struct deblur_box *wa, const struct image_u8 *work, int mean_radius, int mean_bias, int gate,
		      int kind, const struct deblur_streak *s, struct bitmask *out)
{
	const int iw = in->width, ih = in->height;
	if (kind == DEBLUR_STREAK)
		make_kernel(d, s);
	else
		make_gaussian(d, DEBLUR_SIGMA_FACTOR * s->sigma);
	const int w = work->width, h = work->height;
	const size_t n = (size_t)w * (size_t)h;
	for (int y = 0; y < h; y++) {
		const uint8_t *row = image_u8_row(work, y);
		float *g = d->g + (size_t)y * (size_t)w;
		for (int x = 0; x < w; x++)
			g[x] = (float)row[x] + 1.0f;
	}
	memcpy(d->u, d->g, n * sizeof *d->u);
	memcpy(d->xp, d->g, n * sizeof *d->xp);
	d->ru = d->u;
	d->rxp = d->xp;
	d->ryk = d->y;
	d->rgp = d->gp;
	d->ralpha = 0.0f;
	d->rounds_done = 0;
	d->rcb = *cb;
	d->rwa = *wa;
	rl_rounds(d, s->rounds > 0 ? s->rounds : DEBLUR_ITERATIONS);
	struct image_u8 grey = d->out;
	grey.width = iw;
	grey.height = ih;
	for (int y = 0; y < ih; y++)
		memcpy(image_u8_row(&grey, y), image_u8_row(in, y), (size_t)iw);
	core_out(d, &grey);
	d->held_w = iw;
	d->held_h = ih;
	held_threshold(d, &grey, mean_radius, mean_bias, gate, out);
	return kind;
}

int deblur_rethreshold(struct deblur *d, int mean_radius, int mean_bias, int gate, struct bitmask *out)
{
	if (!d->held_w || d->sep_r)
		return ERR_AGAIN;
	struct image_u8 grey = d->out;
	grey.width = d->held_w;
	grey.height = d->held_h;
	int e = check_args(d, &grey, mean_radius, mean_bias, gate, out);
	if (e)
		return e;
	mean_hysteresis(d, &grey, mean_radius, mean_bias, gate, out);
	return 0;
}

int deblur_long_rounds(float length)
{
	const long n = lrintf((float)DEBLUR_ITERATIONS + (float)DEBLUR_LONG_ROUNDS_PER_PX * (length - DEBLUR_LONG_FROM));
	return n <= DEBLUR_ITERATIONS ? 0 : n > DEBLUR_MAX_ROUNDS ? DEBLUR_MAX_ROUNDS : (int)n;
}

int deblur_continue(struct deblur *d, int rounds, int mean_radius, int mean_bias, int gate, struct bitmask *out)
{
	if (!d->held_w)
		return ERR_AGAIN;
	struct image_u8 grey = d->out;
	grey.width = d->held_w;
	grey.height = d->held_h;
	const int e = check_args(d, &grey, mean_radius, mean_bias, gate, out);
	if (e)
		return e;
	if (rounds < d->rounds_done || rounds > DEBLUR_MAX_ROUNDS)
		return ERR_RANGE;
	rl_rounds(d, rounds);
	core_out(d, &grey);
	held_threshold(d, &grey, mean_radius, mean_bias, gate, out);
	return 0;
}

int deblur_rethreshold_encoded(struct deblur *d, int gate, struct bitmask *out)
{
	if (!d->held_w || !d->sep_r)
		return ERR_AGAIN;
	if (out->width != d->held_w || out->height != d->held_h)
		return ERR_SIZE;
	if (gate < 0 || gate > 255)
		return ERR_RANGE;
	struct image_u8 grey = d->out, enc = d->enc;
	grey.width = enc.width = d->held_w;
	grey.height = enc.height = d->held_h;
	image_u8_copy(&enc, &grey);
	image_u8_map(&enc, d->encode);
	threshold_cpu_bernsen(d->thr, &enc, DEBLUR_DEFOCUS_RADIUS, gate, NULL, out);
	return 0;
}

int deblur_process_encoded(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
			   int mean_bias, int gate, struct bitmask *out, struct deblur_streak *streak)
{
	if (in->width < 1 || in->height < 1 || in->width > d->max_width || in->height > d->max_height)
		return ERR_SIZE;
	struct image_u8 enc = d->enc;
	enc.width = in->width;
	enc.height = in->height;
	image_u8_copy(&enc, in);
	image_u8_map(&enc, d->encode_input);
	return deblur_process(d, &enc, core, mean_radius, mean_bias, gate, true, out, streak);
}
