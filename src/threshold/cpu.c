#include <stdlib.h>
#include <string.h>

#include "../../cuda/bernsen_cuda.h"
#include "../core/err.h"
#include "simd.h"
#include "threshold.h"
#include "threshold_cpu.h"

#define MAX_K (2 * THRESHOLD_MAX_RADIUS + 1)

struct threshold_cpu {
	int max_w, max_h;
	uint8_t *arena;
	/* per-pixel Bernsen, vertical pass: suffix (h) and prefix (g) of k-row blocks */
	uint8_t *vh_min, *vh_max, *vg_min, *vg_max; /* MAX_K rows of max_w */
	/* horizontal pass: one padded row and its block prefix/suffix */
	uint8_t *p_min, *p_max, *hg_min, *hg_max, *hh_min, *hh_max; /* max_w + 2R each */
	uint8_t *lo, *hi;                                           /* max_w */
	/* tiled */
	uint8_t *tile_lo, *tile_hi, *tile_t; /* tiles for the smallest tile side */
	uint8_t *t_row;                      /* max_w */
	/* median: 5 clamped, edge-padded rows */
	uint8_t *med_rows; /* 5 x (max_w + 4) */
	/* gauss */
	uint8_t *g_pad;    /* max_w + 2 * CUDA_GAUSS_MAX_RADIUS */
	uint16_t *g_ring;  /* (2 * CUDA_GAUSS_MAX_RADIUS + 1) x max_w */
};

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }
static size_t median_stride(int max_w) { return round64((size_t)max_w + 4 + VEC_BYTES); }

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
	size_t w = (size_t)max_width, pw = round64(w + 2 * THRESHOLD_MAX_RADIUS + VEC_BYTES);
	size_t ntx = w / THRESHOLD_MIN_TILE + 1, nty = (size_t)max_height / THRESHOLD_MIN_TILE + 1;
	size_t gpw = round64(w + 2 * CUDA_GAUSS_MAX_RADIUS);
	size_t rw = round64(w);
	size_t sizes[] = {
		MAX_K * rw, MAX_K * rw, MAX_K * rw, MAX_K * rw,   /* vh/vg */
		pw, pw, pw, pw, pw, pw,                           /* p, hg, hh */
		rw, rw,                                           /* lo, hi */
		round64(ntx * nty), round64(ntx * nty), round64(ntx * nty), rw, /* tiled */
		5 * median_stride(max_width),                              /* median */
		gpw,                                              /* gauss pad */
		round64((2 * CUDA_GAUSS_MAX_RADIUS + 1) * w * sizeof(uint16_t)),
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		total += sizes[i];
	c->arena = aligned_alloc(64, total);
	if (!c->arena)
		goto fail;
	memset(c->arena, 0, total);
	uint8_t *p = c->arena;
	uint8_t **slots[] = {&c->vh_min, &c->vh_max, &c->vg_min, &c->vg_max, &c->p_min, &c->p_max,
			     &c->hg_min, &c->hg_max, &c->hh_min, &c->hh_max, &c->lo, &c->hi,
			     &c->tile_lo, &c->tile_hi, &c->tile_t, &c->t_row, &c->med_rows, &c->g_pad};
	size_t i = 0;
	for (; i < sizeof slots / sizeof slots[0]; i++) {
		*slots[i] = p;
		p += sizes[i];
	}
	c->g_ring = (uint16_t *)(void *)p;
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

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline int bernsen_white(int lo, int hi, int v, int gate)
{
	int t = (lo + hi) >> 1;
	if (hi - lo < gate)
		t = t < 128 ? 255 : 0;
	return v > t;
}

#if defined(__SSE2__)
/* 16 pixels: 0xff where black (v <= t), with the §1 rule in byte arithmetic. */
static inline __m128i bernsen_black16(__m128i lo, __m128i hi, __m128i v, __m128i gate)
{
	const __m128i zero = _mm_setzero_si128();
	/* (lo + hi) / 2 without 9-bit sums: avg rounds up when lo + hi is odd. */
	__m128i t = _mm_sub_epi8(_mm_avg_epu8(lo, hi), _mm_and_si128(_mm_xor_si128(lo, hi), _mm_set1_epi8(1)));
	__m128i steep = _mm_cmpeq_epi8(_mm_subs_epu8(gate, _mm_sub_epi8(hi, lo)), zero);
	__m128i flat_t = _mm_cmpgt_epi8(t, _mm_set1_epi8(-1)); /* t < 128 -> 255, else 0 */
	t = _mm_or_si128(_mm_and_si128(steep, t), _mm_andnot_si128(steep, flat_t));
	return _mm_cmpeq_epi8(_mm_subs_epu8(v, t), zero);
}

static inline __m128i gt_black16(__m128i t, __m128i v)
{
	return _mm_cmpeq_epi8(_mm_subs_epu8(v, t), _mm_setzero_si128());
}
#endif

/* One output row of per-pixel Bernsen from its window lo/hi. */
static void emit_bernsen(const uint8_t *lo, const uint8_t *hi, const uint8_t *v, int n, int gate,
			 uint8_t *img_row, uint64_t *mask_row)
{
	int x = 0;
#if defined(__SSE2__)
	const __m128i g = _mm_set1_epi8((char)gate);
	if (mask_row) {
		for (; x + 64 <= n; x += 64) {
			uint64_t word = 0;
			for (int j = 0; j < 64; j += 16) {
				__m128i b = bernsen_black16(vec_load(lo + x + j), vec_load(hi + x + j),
							    vec_load(v + x + j), g);
				word |= (uint64_t)(~_mm_movemask_epi8(b) & 0xffff) << j;
			}
			mask_row[x >> 6] = word;
		}
	} else {
		for (; x + 16 <= n; x += 16) {
			__m128i b = bernsen_black16(vec_load(lo + x), vec_load(hi + x), vec_load(v + x), g);
			vec_store(img_row + x, _mm_xor_si128(b, _mm_set1_epi8(-1)));
		}
	}
#endif
	if (mask_row) {
		/* x is a multiple of 64 here; the rest make the last, zero-padded word. */
		if (x < n) {
			uint64_t word = 0;
			for (int b = 0; x + b < n; b++)
				word |= (uint64_t)bernsen_white(lo[x + b], hi[x + b], v[x + b], gate) << b;
			mask_row[x >> 6] = word;
		}
	} else {
		for (; x < n; x++)
			img_row[x] = bernsen_white(lo[x], hi[x], v[x], gate) ? 255 : 0;
	}
}

/* One output row of "v > t" against a per-pixel threshold row. */
static void emit_gt(const uint8_t *t, const uint8_t *v, int n, uint8_t *img_row, uint64_t *mask_row)
{
	int x = 0;
#if defined(__SSE2__)
	if (mask_row) {
		for (; x + 64 <= n; x += 64) {
			uint64_t word = 0;
			for (int j = 0; j < 64; j += 16) {
				__m128i b = gt_black16(vec_load(t + x + j), vec_load(v + x + j));
				word |= (uint64_t)(~_mm_movemask_epi8(b) & 0xffff) << j;
			}
			mask_row[x >> 6] = word;
		}
	} else {
		for (; x + 16 <= n; x += 16) {
			__m128i b = gt_black16(vec_load(t + x), vec_load(v + x));
			vec_store(img_row + x, _mm_xor_si128(b, _mm_set1_epi8(-1)));
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

/*
 * Horizontal running min/max (van Herk / Gil-Werman) of the vertical result
 * already placed at p_min/p_max + r. Cropping the window at the border equals
 * replicating the edge pixel, because min and max are idempotent and the edge
 * pixel is inside every cropped window that reaches past it.
 */
static void horizontal_pass(struct threshold_cpu *c, int w, int r)
{
	int k = 2 * r + 1, len = w + 2 * r;
	uint8_t *pmin = c->p_min, *pmax = c->p_max;
	memset(pmin, pmin[r], (size_t)r);
	memset(pmax, pmax[r], (size_t)r);
	memset(pmin + r + w, pmin[r + w - 1], (size_t)r);
	memset(pmax + r + w, pmax[r + w - 1], (size_t)r);
	uint8_t *gmin = c->hg_min, *gmax = c->hg_max, *hmin = c->hh_min, *hmax = c->hh_max;
	for (int b = 0; b < len; b += k) {
		int e = b + k < len ? b + k : len;
		uint8_t a0 = pmin[b], a1 = pmax[b];
		gmin[b] = a0;
		gmax[b] = a1;
		for (int i = b + 1; i < e; i++) {
			a0 = u8_min(a0, pmin[i]);
			a1 = u8_max(a1, pmax[i]);
			gmin[i] = a0;
			gmax[i] = a1;
		}
		a0 = pmin[e - 1];
		a1 = pmax[e - 1];
		hmin[e - 1] = a0;
		hmax[e - 1] = a1;
		for (int i = e - 2; i >= b; i--) {
			a0 = u8_min(a0, pmin[i]);
			a1 = u8_max(a1, pmax[i]);
			hmin[i] = a0;
			hmax[i] = a1;
		}
	}
	row_minmax2(c->lo, c->hi, hmin, gmin + k - 1, hmax, gmax + k - 1, w);
}

/*
 * Vertical van Herk / Gil-Werman over blocks of k = 2r+1 rows of the padded
 * (edge-replicated) frame: output row y needs padded rows y..y+k-1, which is
 * the suffix of y's block joined with a prefix of the next block. Whole rows
 * are vector operations; each pixel costs 3 min and 3 max whatever r is.
 */
void threshold_cpu_bernsen(struct threshold_cpu *c, const struct image_u8 *in, int radius, int gate,
			   struct image_u8 *img, struct bitmask *mask)
{
	int w = in->width, h = in->height;
	int r = clampi(radius, 1, THRESHOLD_MAX_RADIUS), k = 2 * r + 1;
	size_t rs = round64((size_t)c->max_w);
	gate = clampi(gate, 0, 255);
	for (int base = 0; base < h; base += k) {
		/* suffix of this block: padded row base+i is image row base+i-r, clamped */
		uint8_t *smin = c->vh_min + (size_t)(k - 1) * rs, *smax = c->vh_max + (size_t)(k - 1) * rs;
		const uint8_t *src = image_u8_row(in, clampi(base + k - 1 - r, 0, h - 1));
		memcpy(smin, src, (size_t)w);
		memcpy(smax, src, (size_t)w);
		for (int i = k - 2; i >= 0; i--) {
			src = image_u8_row(in, clampi(base + i - r, 0, h - 1));
			row_minmax_acc(c->vh_min + (size_t)i * rs, c->vh_max + (size_t)i * rs,
				       c->vh_min + (size_t)(i + 1) * rs, c->vh_max + (size_t)(i + 1) * rs, src, w);
		}
		int n_out = h - base < k ? h - base : k;
		/* prefix of the next block, as far as this block's outputs reach */
		for (int i = 0; i + 1 < n_out; i++) {
			src = image_u8_row(in, clampi(base + k + i - r, 0, h - 1));
			if (i == 0) {
				memcpy(c->vg_min, src, (size_t)w);
				memcpy(c->vg_max, src, (size_t)w);
			} else {
				row_minmax_acc(c->vg_min + (size_t)i * rs, c->vg_max + (size_t)i * rs,
					       c->vg_min + (size_t)(i - 1) * rs, c->vg_max + (size_t)(i - 1) * rs, src,
					       w);
			}
		}
		for (int i = 0; i < n_out; i++) {
			int y = base + i;
			if (i == 0) {
				memcpy(c->p_min + r, c->vh_min, (size_t)w);
				memcpy(c->p_max + r, c->vh_max, (size_t)w);
			} else {
				row_minmax2(c->p_min + r, c->p_max + r, c->vh_min + (size_t)i * rs,
					    c->vg_min + (size_t)(i - 1) * rs, c->vh_max + (size_t)i * rs,
					    c->vg_max + (size_t)(i - 1) * rs, w);
			}
			horizontal_pass(c, w, r);
			emit_bernsen(c->lo, c->hi, image_u8_row(in, y), w, gate, img ? image_u8_row(img, y) : NULL,
				     mask ? mask->bits + (size_t)y * (size_t)mask->stride_words : NULL);
		}
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
		uint8_t *tlo = c->tile_lo + (size_t)ty * (size_t)ntx, *thi = c->tile_hi + (size_t)ty * (size_t)ntx;
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

/*
 * Median by forgetful selection on byte vectors (16 pixels a step with SSE2):
 * keep n/2 + 2 candidates, drop their min and max (neither can be the
 * median), add the next neighbour, repeat; the survivor is the median. The
 * same selection, one pixel a thread, runs on the GPU.
 */
static inline void cswap(vec_u8 *a, vec_u8 *b)
{
	vec_u8 lo = vec_min(*a, *b);
	*b = vec_max(*a, *b);
	*a = lo;
}

static inline vec_u8 forgetful_median(vec_u8 *v, int n)
{
	int m = n / 2 + 2, next = m;
	vec_u8 *s = v; /* the candidates are s[0..m-1] */
	for (;;) {
		for (int i = 1; i < m; i++)
			cswap(&s[0], &s[i]);
		for (int i = 1; i < m - 1; i++)
			cswap(&s[i], &s[m - 1]);
		if (next == n)
			return s[1];
		/* drop s[0] (min) and s[m-1] (max); the newcomer takes the max's slot */
		s[m - 1] = v[next++];
		s++;
		m--;
	}
}

void threshold_cpu_median(struct threshold_cpu *c, const struct image_u8 *in, int size, struct image_u8 *out)
{
	int w = in->width, h = in->height, r = size >= 5 ? 2 : 1, n = 2 * r + 1;
	size_t ms = median_stride(c->max_w);
	vec_u8 v[25];
	for (int y = 0; y < h; y++) {
		for (int j = 0; j < n; j++) {
			const uint8_t *src = image_u8_row(in, clampi(y + j - r, 0, h - 1));
			uint8_t *dst = c->med_rows + (size_t)j * ms;
			memset(dst, src[0], (size_t)r);
			memcpy(dst + r, src, (size_t)w);
			memset(dst + r + w, src[w - 1], (size_t)r);
		}
		/* whole vectors past w read the rows' zeroed slack; only w bytes are kept */
		for (int x = 0; x < w; x += VEC_BYTES) {
			for (int j = 0; j < n; j++)
				for (int i = 0; i < n; i++)
					v[j * n + i] = vec_load(c->med_rows + (size_t)j * ms + (size_t)(x + i));
			vec_store(c->lo + x, forgetful_median(v, n * n));
		}
		memcpy(image_u8_row(out, y), c->lo, (size_t)w);
	}
}

void threshold_cpu_gauss(struct threshold_cpu *c, const struct image_u8 *in, float sigma, struct image_u8 *out)
{
	int wk[CUDA_GAUSS_MAX_RADIUS + 1];
	int R = cuda_gauss_kernel(sigma, wk), w = in->width, h = in->height, n = 2 * R + 1;
	uint8_t *pad = c->g_pad;
	int produced = -1; /* highest image row whose horizontal sum is in the ring */
	for (int y = 0; y < h; y++) {
		int need = y + R < h ? y + R : h - 1;
		for (; produced < need; produced++) {
			int j = produced + 1;
			const uint8_t *row = image_u8_row(in, j);
			memset(pad, row[0], (size_t)R);
			memcpy(pad + R, row, (size_t)w);
			memset(pad + R + w, row[w - 1], (size_t)R);
			uint16_t *dst = c->g_ring + (size_t)(j % n) * (size_t)c->max_w;
			for (int x = 0; x < w; x++) {
				const uint8_t *p = pad + x + R;
				uint32_t acc = (uint32_t)wk[0] * p[0];
				for (int i = 1; i <= R; i++)
					acc += (uint32_t)wk[i] * (uint32_t)(p[i] + p[-i]);
				dst[x] = (uint16_t)acc;
			}
		}
		const uint16_t *rows[2 * CUDA_GAUSS_MAX_RADIUS + 1];
		for (int j = -R; j <= R; j++)
			rows[j + R] = c->g_ring + (size_t)(clampi(y + j, 0, h - 1) % n) * (size_t)c->max_w;
		uint8_t *o = image_u8_row(out, y);
		for (int x = 0; x < w; x++) {
			uint32_t acc = (uint32_t)wk[0] * rows[R][x];
			for (int i = 1; i <= R; i++)
				acc += (uint32_t)wk[i] * ((uint32_t)rows[R + i][x] + rows[R - i][x]);
			o[x] = (uint8_t)((acc + 32768u) >> 16);
		}
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
