#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "simd.h"
#include "threshold.h"
#include "threshold_cpu.h"

#define MAX_K (2 * THRESHOLD_MAX_RADIUS + 1)
/* bytes past every workspace row that whole vectors may run into */
#define SLACK 128

enum cpu_isa { ISA_SCALAR, ISA_SSE2, ISA_AVX2 };
static const char *const isa_names[] = {"scalar", "sse2", "avx2"};

struct threshold_cpu {
	int max_w, max_h;
	enum cpu_isa isa;
	uint8_t *arena;
	size_t row_stride; /* vh/vg rows */
	size_t med_stride; /* med_rows rows */
	size_t g_stride;   /* g_ring rows, in uint16_t */
	/* per-pixel Bernsen, vertical pass: suffix (h) and prefix (g) of k-row blocks */
	uint8_t *vh_min, *vh_max, *vg_min, *vg_max; /* MAX_K rows */
	/* horizontal pass: one padded row of vertical min and max, doubled in place */
	uint8_t *p_min, *p_max;
	uint8_t *tail; /* 6 x 64 bytes: partial vectors of image rows */
	/* tiled */
	uint8_t *tile_lo, *tile_hi, *tile_t; /* tiles for the smallest tile side */
	uint8_t *t_row;                      /* max_w */
	/* median: 5 sorted, edge-padded column rows */
	uint8_t *med_rows;
	/* gauss */
	uint8_t *g_pad;   /* max_w + 2 * THRESHOLD_GAUSS_MAX_RADIUS */
	uint16_t *g_ring; /* (2 * THRESHOLD_GAUSS_MAX_RADIUS + 1) rows */
	/* local mean: column sums, one row of prefix sums, the row's verdicts */
	uint16_t *m_col; /* max_w */
	int32_t *m_pre;  /* max_w + 1 */
	uint8_t *m_white;
	/* Sauvola: column sums and one row of prefix sums of the squares (the
	 * values' own are m_col and m_pre) */
	uint32_t *q_col; /* max_w */
	uint32_t *q_pre; /* max_w + 1 */
};

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static inline int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static enum cpu_isa best_isa(void)
{
#if TT_SIMD_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") ? ISA_AVX2 : ISA_SSE2;
#else
	return ISA_SCALAR;
#endif
}

struct threshold_cpu *threshold_cpu_create(int max_width, int max_height, int *err)
{
	if (max_width < 1 || max_height < 1 || max_width > IMAGE_MAX_SIDE || max_height > IMAGE_MAX_SIDE) {
		*err = ERR_RANGE;
		return NULL;
	}
	struct threshold_cpu *c = calloc(1, sizeof *c);
	if (!c)
		goto fail;
	c->max_w = max_width;
	c->max_h = max_height;
	c->isa = best_isa();
	size_t w = (size_t)max_width, pw = round64(w + 2 * THRESHOLD_MAX_RADIUS + SLACK);
	size_t ntx = w / THRESHOLD_MIN_TILE + 1, nty = (size_t)max_height / THRESHOLD_MIN_TILE + 1;
	size_t gpw = round64(w + 2 * THRESHOLD_GAUSS_MAX_RADIUS + SLACK);
	c->row_stride = round64(w + SLACK);
	c->med_stride = round64(w + 4 + SLACK);
	c->g_stride = round64(w + SLACK);
	size_t rs = c->row_stride;
	size_t sizes[] = {
	    MAX_K * rs,
	    MAX_K * rs,
	    MAX_K * rs,
	    MAX_K * rs, /* vh/vg */
	    pw,
	    pw,
	    6 * 64, /* p, tail */
	    round64(ntx * nty),
	    round64(ntx * nty),
	    round64(ntx * nty),
	    rs,                /* tiled */
	    5 * c->med_stride, /* median */
	    gpw,               /* gauss pad */
	    round64((2 * THRESHOLD_GAUSS_MAX_RADIUS + 1) * c->g_stride * sizeof(uint16_t)),
	    rs * sizeof(uint16_t),
	    round64((w + 1) * sizeof(int32_t)),
	    rs, /* local mean */
	    round64(w * sizeof(uint32_t)),
	    round64((w + 1) * sizeof(uint32_t)), /* Sauvola */
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		total += sizes[i];
	c->arena = aligned_alloc(64, total);
	if (!c->arena)
		goto fail;
	memset(c->arena, 0, total);
	uint8_t *p = c->arena;
	uint8_t **slots[] = {&c->vh_min, &c->vh_max,   &c->vg_min,  &c->vg_max,  &c->p_min,
	                     &c->p_max,  &c->tail,     &c->tile_lo, &c->tile_hi, &c->tile_t,
	                     &c->t_row,  &c->med_rows, &c->g_pad};
	size_t i = 0;
	for (; i < sizeof slots / sizeof slots[0]; i++) {
		*slots[i] = p;
		p += sizes[i];
	}
	c->g_ring = (uint16_t *)(void *)p;
	p += sizes[i++];
	c->m_col = (uint16_t *)(void *)p;
	p += sizes[i++];
	c->m_pre = (int32_t *)(void *)p;
	p += sizes[i++];
	c->m_white = p;
	p += sizes[i++];
	c->q_col = (uint32_t *)(void *)p;
	p += sizes[i++];
	c->q_pre = (uint32_t *)(void *)p;
	return c;
fail:
	threshold_cpu_destroy(c);
	*err = ERR_NOMEM;
	return NULL;
}

void threshold_cpu_destroy(struct threshold_cpu *c)
{
	if (!c)
		return;
	free(c->arena);
	free(c);
}

const char *threshold_cpu_isa(const struct threshold_cpu *c)
{
	return isa_names[c->isa];
}

int threshold_cpu_set_isa(struct threshold_cpu *c, const char *isa)
{
	for (int i = 0; i < (int)(sizeof isa_names / sizeof isa_names[0]); i++) {
		if (strcmp(isa, isa_names[i]) != 0)
			continue;
		if (i > (int)best_isa())
			return ERR_UNSUPPORTED;
		c->isa = (enum cpu_isa)i;
		return 0;
	}
	return ERR_UNSUPPORTED;
}

int threshold_cpu_pick_avx2(const char *isa, const char *plain, bool *avx2)
{
	if (!strcmp(isa, plain)) {
		*avx2 = false;
		return 0;
	}
	if (!strcmp(isa, "avx2") && best_isa() == ISA_AVX2) {
		*avx2 = true;
		return 0;
	}
	return ERR_UNSUPPORTED;
}

/* The kernels, once per instruction set (cpu_kernels.h). */
#define KP sc
#define KFN
#include "cpu_kernels.h"
#undef KP
#undef KFN
#if TT_SIMD_X86
#define KP sse2
#define KFN
#include "cpu_kernels.h"
#undef KP
#undef KFN
#define KP avx2
#define KFN TT_AVX2
#include "cpu_kernels.h"
#undef KP
#undef KFN
#define ISA_CALL(c, fn, ...)                                                                                 \
	do {                                                                                                 \
		if ((c)->isa == ISA_AVX2)                                                                    \
			fn##_avx2(__VA_ARGS__);                                                              \
		else if ((c)->isa == ISA_SSE2)                                                               \
			fn##_sse2(__VA_ARGS__);                                                              \
		else                                                                                         \
			fn##_sc(__VA_ARGS__);                                                                \
	} while (0)
#else
#define ISA_CALL(c, fn, ...) fn##_sc(__VA_ARGS__)
#endif

void threshold_cpu_bernsen(struct threshold_cpu *c, const struct image_u8 *in, int radius, int gate,
                           struct image_u8 *img, struct bitmask *mask)
{
	int r = clampi(radius, 1, THRESHOLD_MAX_RADIUS);
	ISA_CALL(c, bernsen, c, in, r, clampi(gate, 0, 255), THRESHOLD_BERNSEN, 1, 0, img, mask);
}

void threshold_cpu_mean(struct threshold_cpu *c, const struct image_u8 *in, int mode, int radius, int gate,
                        int mean_radius, int mean_bias, struct image_u8 *img, struct bitmask *mask)
{
	int r = clampi(radius, 1, THRESHOLD_MAX_RADIUS), m = clampi(mean_radius, 1, THRESHOLD_MAX_MEAN_RADIUS);
	int b = clampi(mean_bias, 0, THRESHOLD_MAX_MEAN_BIAS), g = clampi(gate, 0, 255);
	if (mode == THRESHOLD_MEAN)
		ISA_CALL(c, mean, c, in, m, b, g, img, mask);
	else if (mode == THRESHOLD_GATED || mode == THRESHOLD_EITHER || mode == THRESHOLD_BOTH)
		ISA_CALL(c, bernsen, c, in, r, g, mode, m, b, img, mask);
	else
		ISA_CALL(c, bernsen, c, in, r, g, THRESHOLD_BERNSEN, 1, 0, img, mask);
}

void threshold_cpu_sauvola(struct threshold_cpu *c, const struct image_u8 *in, int mean_radius, int k, int range,
			   int gate, struct image_u8 *img, struct bitmask *mask)
{
	int m = clampi(mean_radius, 1, THRESHOLD_MAX_MEAN_RADIUS);
	ISA_CALL(c, sauvola, c, in, m, clampi(k, 0, THRESHOLD_MAX_SAUVOLA_K),
		 clampi(range, 1, THRESHOLD_MAX_SAUVOLA_RANGE), clampi(gate, 0, 255), img, mask);
}

void threshold_cpu_median(struct threshold_cpu *c, const struct image_u8 *in, int size, struct image_u8 *out)
{
	if (size >= 5)
		ISA_CALL(c, median5, c, in, out);
	else
		ISA_CALL(c, median3, c, in, out);
}

int threshold_gauss_taps(float sigma, int w[THRESHOLD_GAUSS_MAX_RADIUS + 1])
{
	double f[THRESHOLD_GAUSS_MAX_RADIUS + 1], total = 0.0;
	int r, i, side = 0;
	for (i = 0; i <= THRESHOLD_GAUSS_MAX_RADIUS; i++)
		w[i] = 0;
	w[0] = 256;
	if (!(sigma > 0.0f))
		return 0;
	r = (int)ceil(3.0 * (double)sigma);
	if (r > THRESHOLD_GAUSS_MAX_RADIUS)
		r = THRESHOLD_GAUSS_MAX_RADIUS;
	for (i = 0; i <= r; i++) {
		f[i] = exp(-(double)(i * i) / (2.0 * (double)sigma * (double)sigma));
		total += i ? 2.0 * f[i] : f[i];
	}
	for (i = 1; i <= r; i++) {
		w[i] = (int)floor(f[i] / total * 256.0 + 0.5);
		side += w[i];
	}
	w[0] = 256 - 2 * side;
	while (r > 0 && w[r] == 0)
		r--;
	return r;
}

void threshold_cpu_gauss(struct threshold_cpu *c, const struct image_u8 *in, float sigma,
                         struct image_u8 *out)
{
	int wk[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	int R = threshold_gauss_taps(sigma, wk);
	ISA_CALL(c, gauss, c, in, R, wk, out);
}

#if TT_SIMD_X86
static inline __m128i gt_black16(__m128i t, __m128i v)
{
	return _mm_cmpeq_epi8(_mm_subs_epu8(v, t), _mm_setzero_si128());
}
#endif

/* One output row of "v > t" against a per-pixel threshold row. */
static void emit_gt(const uint8_t *t, const uint8_t *v, int n, uint8_t *img_row, uint64_t *mask_row)
{
	int x = 0;
#if TT_SIMD_X86
	if (mask_row) {
		for (; x + 64 <= n; x += 64) {
			uint64_t word = 0;
			for (int j = 0; j < 64; j += 16) {
				__m128i b = gt_black16(sse2_ld(t + x + j), sse2_ld(v + x + j));
				word |= (uint64_t)(~_mm_movemask_epi8(b) & 0xffff) << j;
			}
			mask_row[x >> 6] = word;
		}
	} else {
		for (; x + 16 <= n; x += 16) {
			__m128i b = gt_black16(sse2_ld(t + x), sse2_ld(v + x));
			sse2_st(img_row + x, _mm_xor_si128(b, _mm_set1_epi8(-1)));
		}
	}
#endif
	if (mask_row) {
		if (x < n) {
			uint64_t word = 0;
			for (int b = 0; x + b < n; b++)
				word |= (uint64_t)(v[x + b] > t[x + b]) << b;
			mask_row[x >> 6] = word;
		}
	} else {
		for (; x < n; x++)
			img_row[x] = v[x] > t[x] ? 255 : 0;
	}
}

void threshold_cpu_tiled(struct threshold_cpu *c, const struct image_u8 *in, int tile, int gate,
                         struct image_u8 *img, struct bitmask *mask)
{
	int w = in->width, h = in->height;
	int s = clampi(tile, THRESHOLD_MIN_TILE, THRESHOLD_MAX_TILE);
	int ntx = (w + s - 1) / s, nty = (h + s - 1) / s;
	gate = clampi(gate, 0, 255);
	for (int ty = 0; ty < nty; ty++) {
		uint8_t *tlo = c->tile_lo + (size_t)ty * (size_t)ntx,
		        *thi = c->tile_hi + (size_t)ty * (size_t)ntx;
		memset(tlo, 255, (size_t)ntx);
		memset(thi, 0, (size_t)ntx);
		int y1 = (ty + 1) * s < h ? (ty + 1) * s : h;
		for (int y = ty * s; y < y1; y++) {
			const uint8_t *row = image_u8_row(in, y);
			for (int tx = 0; tx < ntx; tx++) {
				int x1 = (tx + 1) * s < w ? (tx + 1) * s : w;
				uint8_t a = tlo[tx], b = thi[tx];
				for (int x = tx * s; x < x1; x++) {
					a = u8_min(a, row[x]);
					b = u8_max(b, row[x]);
				}
				tlo[tx] = a;
				thi[tx] = b;
			}
		}
	}
	for (int ty = 0; ty < nty; ty++) {
		for (int tx = 0; tx < ntx; tx++) {
			int lo = 255, hi = 0;
			for (int j = ty > 0 ? ty - 1 : 0; j <= ty + 1 && j < nty; j++) {
				for (int i = tx > 0 ? tx - 1 : 0; i <= tx + 1 && i < ntx; i++) {
					int a = c->tile_lo[(size_t)j * (size_t)ntx + (size_t)i];
					int b = c->tile_hi[(size_t)j * (size_t)ntx + (size_t)i];
					lo = a < lo ? a : lo;
					hi = b > hi ? b : hi;
				}
			}
			int t = (lo + hi) >> 1;
			if (hi - lo < gate)
				t = t < 128 ? 255 : 0;
			c->tile_t[(size_t)ty * (size_t)ntx + (size_t)tx] = (uint8_t)t;
		}
	}
	for (int y = 0; y < h; y++) {
		if (y % s == 0) {
			const uint8_t *tt = c->tile_t + (size_t)(y / s) * (size_t)ntx;
			for (int tx = 0; tx < ntx; tx++) {
				int x1 = (tx + 1) * s < w ? (tx + 1) * s : w;
				memset(c->t_row + tx * s, tt[tx], (size_t)(x1 - tx * s));
			}
		}
		emit_gt(c->t_row, image_u8_row(in, y), w, img ? image_u8_row(img, y) : NULL,
		        mask ? mask->bits + (size_t)y * (size_t)mask->stride_words : NULL);
	}
}

/* The one-shot reference functions: a workspace sized to the image. */
void bernsen_cpu(const struct image_u8 *in, int radius, int gate, struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_bernsen(c, in, radius, gate, out, NULL);
	threshold_cpu_destroy(c);
}

void bernsen_tiled_cpu(const struct image_u8 *in, int tile, int gate, struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_tiled(c, in, tile, gate, out, NULL);
	threshold_cpu_destroy(c);
}

void threshold_mean_cpu(const struct image_u8 *in, int mode, int radius, int gate, int mean_radius, int mean_bias,
                        struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_mean(c, in, mode, radius, gate, mean_radius, mean_bias, out, NULL);
	threshold_cpu_destroy(c);
}

void threshold_sauvola_cpu(const struct image_u8 *in, int mean_radius, int k, int range, int gate,
			   struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_sauvola(c, in, mean_radius, k, range, gate, out, NULL);
	threshold_cpu_destroy(c);
}

void median_cpu(const struct image_u8 *in, int size, struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_median(c, in, size, out);
	threshold_cpu_destroy(c);
}

void gauss_cpu(const struct image_u8 *in, float sigma, struct image_u8 *out)
{
	int err;
	struct threshold_cpu *c = threshold_cpu_create(in->width, in->height, &err);
	if (!c)
		return;
	threshold_cpu_gauss(c, in, sigma, out);
	threshold_cpu_destroy(c);
}

void threshold_block_extremes_cpu(const struct image_u8 *g, uint8_t *lohi)
{
	const int w = g->width, h = g->height;
	const size_t stride = (size_t)g->stride;
	for (int y0 = 0; y0 < h; y0 += THRESHOLD_BLOCK) {
		const int y1 = y0 + THRESHOLD_BLOCK < h ? y0 + THRESHOLD_BLOCK : h;
		for (int x = 0; x < w; x += THRESHOLD_BLOCK, lohi += 2) {
			const uint8_t *p = g->data + (size_t)y0 * stride + (size_t)x;
			int lo = 255, hi = 0;
#ifdef __SSE2__
			if (x + THRESHOLD_BLOCK <= w) {
				__m128i vlo = _mm_set1_epi8((char)0xff), vhi = _mm_setzero_si128();
				if (y1 - y0 == THRESHOLD_BLOCK) {
					/* A whole block (most of them): its eight rows
					 * unrolled. */
#pragma GCC unroll 8
					for (int r = 0; r < THRESHOLD_BLOCK / 2; r++) {
						const __m128i v = _mm_loadu_si128((const __m128i *)(p + 2 * (size_t)r * stride));
						vlo = _mm_min_epu8(vlo, v);
						vhi = _mm_max_epu8(vhi, v);
					}
				} else {
					for (int y = y0; y < y1; y += 2, p += 2 * stride) {
						const __m128i v = _mm_loadu_si128((const __m128i *)p);
						vlo = _mm_min_epu8(vlo, v);
						vhi = _mm_max_epu8(vhi, v);
					}
				}
				/* Both reduced at once: the brightest in bytes 0-7
				 * and the inverted darkest in bytes 8-15, folded
				 * within each half. */
				const __m128i nlo = _mm_xor_si128(vlo, _mm_set1_epi8((char)0xff));
				__m128i m = _mm_max_epu8(_mm_unpacklo_epi64(vhi, nlo), _mm_unpackhi_epi64(vhi, nlo));
				m = _mm_max_epu8(m, _mm_srli_epi64(m, 32));
				m = _mm_max_epu8(m, _mm_srli_epi64(m, 16));
				m = _mm_max_epu8(m, _mm_srli_epi64(m, 8));
				hi = _mm_cvtsi128_si32(m) & 0xff;
				lo = 255 - (_mm_extract_epi16(m, 4) & 0xff);
			} else
#endif
				for (int y = y0; y < y1; y += 2, p += 2 * stride)
					for (int i = 0; i < THRESHOLD_BLOCK && x + i < w; i++) {
						lo = p[i] < lo ? p[i] : lo;
						hi = p[i] > hi ? p[i] : hi;
					}
			lohi[0] = (uint8_t)lo;
			lohi[1] = (uint8_t)hi;
		}
	}
}
