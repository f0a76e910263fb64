/* closing.c - the threshold against a grey closing (closing.h). */
#include "closing.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "threshold_cpu.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CLOSING_AVX2 1
#else
#define CLOSING_AVX2 0
#endif

struct closing {
	int max_width, max_height;
	uint8_t *a, *b;        /* max_width * max_height bytes each: an image or its transpose */
	uint8_t *hi;           /* the same: a third buffer for closing_ratio()'s two extremes */
	uint8_t *gv, *hv;      /* the running passes' g and h: a padded column of whole rows */
	int closed_w, closed_h; /* the size of the closing b holds (closing_again); 0: none */
	struct threshold_cpu *cpu; /* closing_median()'s median (closing_median_on()); NULL: none */
	bool avx2;             /* the CPU has AVX2: the row loops' avx2 copies run first */
};

struct closing *closing_create(int max_width, int max_height, int *err)
{
	if (max_width < 1 || max_height < 1) {
		*err = ERR_RANGE;
		return NULL;
	}
	struct closing *c = calloc(1, sizeof *c);
	/* The running passes go down the columns of the image and of its
	 * transpose: rows of either width, padded by up to 4 radii + 4. */
	const size_t pad = 4 * CLOSING_MAX_RADIUS + 4, w = (size_t)max_width, h = (size_t)max_height;
	const size_t run = (h + pad) * w > (w + pad) * h ? (h + pad) * w : (w + pad) * h;
	if (c) {
		c->max_width = max_width;
		c->max_height = max_height;
#if CLOSING_AVX2
		c->avx2 = __builtin_cpu_supports("avx2");
#endif
		c->a = malloc(w * h);
		c->b = malloc(w * h);
		c->hi = malloc(w * h);
		c->gv = malloc(run);
		c->hv = malloc(run);
	}
	if (!c || !c->a || !c->b || !c->hi || !c->gv || !c->hv) {
		closing_destroy(c);
		*err = ERR_NOMEM;
		return NULL;
	}
	*err = 0;
	return c;
}

void closing_destroy(struct closing *c)
{
	if (!c)
		return;
	free(c->a);
	free(c->b);
	free(c->hi);
	free(c->gv);
	free(c->hv);
	threshold_cpu_destroy(c->cpu);
	free(c);
}

static inline __attribute__((always_inline)) uint8_t pick(bool max, uint8_t x, uint8_t y)
{
	return max ? (x > y ? x : y) : (x < y ? x : y);
}

int closing_set_isa(struct closing *c, const char *isa)
{
	return threshold_cpu_pick_avx2(isa, "sse2", &c->avx2);
}

/* The row loops' vector copies (closing_rows.h): SSE2, and AVX2 where the
 * compiler can target it; the loops below run the widest the CPU has, then
 * the narrower, then a pixel at a time. */
#ifdef __SSE2__
#define CR_W 16
#include "closing_rows.h"
#endif
#if CLOSING_AVX2
#define CR_W 32
#include "closing_rows.h"
#endif

/* Where row loop f's vector copies stopped, from pixel 0: the AVX2 copy
 * where the CPU has it (avx2), then the SSE2 copy. */
#if CLOSING_AVX2
#define VECTOR_STEPS(avx2, f, ...) f##_sse2((avx2) ? f##_avx2(0, __VA_ARGS__) : 0, __VA_ARGS__)
#elif defined(__SSE2__)
#define VECTOR_STEPS(avx2, f, ...) ((void)(avx2), f##_sse2(0, __VA_ARGS__))
#else
#define VECTOR_STEPS(avx2, f, ...) ((void)(avx2), 0)
#endif

/* o[x] = max (or min) of a[x] and b[x], 32 bytes at a time with AVX2, 16
 * with SSE2 (every x86-64). */
static inline __attribute__((always_inline)) void rows_pick(bool avx2, bool max, uint8_t *o, const uint8_t *a,
							    const uint8_t *b, int n)
{
	int x = VECTOR_STEPS(avx2, rows_pick, max, o, a, b, n);
	for (; x < n; x++)
		o[x] = pick(max, a[x], b[x]);
}

/* dst[i] = max (or min) of src over rows i - r .. i + r, down every column
 * at once, the column cropped at its ends (the end pixel repeated: the
 * same for max and min). van Herk / Gil-Werman: the padded column in
 * blocks of w = 2r + 1, the running value from each block's start (g) and
 * to its end (h); the window at i spans the end of one block and the start
 * of the next. Each step combines two whole rows a vector at a time
 * (rows_pick). src: wd x ht at stride ss; dst: stride wd. */
static inline __attribute__((always_inline)) void col_run(struct closing *c, const uint8_t *src, size_t ss, int wd,
							  int ht, int r, bool max, uint8_t *dst)
{
	const int w = 2 * r + 1, len = (ht + 2 * r + w - 1) / w * w;
	const size_t s = (size_t)wd;
	uint8_t *g = c->gv, *h = c->hv;
#define ROW(j) (src + (size_t)((j) - r < 0 ? 0 : (j) - r > ht - 1 ? ht - 1 : (j) - r) * ss)
	for (int b = 0; b < len; b += w) {
		memcpy(g + (size_t)b * s, ROW(b), s);
		for (int j = b + 1; j < b + w; j++)
			rows_pick(c->avx2, max, g + (size_t)j * s, g + (size_t)(j - 1) * s, ROW(j), wd);
		memcpy(h + (size_t)(b + w - 1) * s, ROW(b + w - 1), s);
		for (int j = b + w - 2; j >= b; j--)
			rows_pick(c->avx2, max, h + (size_t)j * s, h + (size_t)(j + 1) * s, ROW(j), wd);
	}
#undef ROW
	for (int i = 0; i < ht; i++)
		rows_pick(c->avx2, max, dst + (size_t)i * s, h + (size_t)i * s, g + (size_t)(i + w - 1) * s, wd);
}

/* dst[x * ht + y] = src[y * ss + x] for rows y0 <= y < y1 and columns
 * x0 <= x < wd, a byte at a time: what the blocks below leave. */
static void transpose_plain(const uint8_t *src, size_t ss, int wd, int ht, uint8_t *dst, int y0, int y1, int x0)
{
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < wd; x++)
			dst[(size_t)x * (size_t)ht + (size_t)y] = src[(size_t)y * ss + (size_t)x];
}

/* The transpose's network on v[16], rows in, columns out, through t[16]:
 * four rounds of interleaving register i with register i + 8 rotate each
 * byte's 8-bit (row, column) address by one bit, four of them swap row and
 * column; two rounds a step, from v into t and back (no copies). lo, hi:
 * the vector type's byte unpacks. */
#define TRANSPOSE_ROUNDS(v, t, lo, hi)                                      \
	for (int round_ = 0; round_ < 4; round_ += 2) {                     \
		for (int i_ = 0; i_ < 8; i_++) {                            \
			t[2 * i_] = lo(v[i_], v[i_ + 8]);                   \
			t[2 * i_ + 1] = hi(v[i_], v[i_ + 8]);               \
		}                                                           \
		for (int i_ = 0; i_ < 8; i_++) {                            \
			v[2 * i_] = lo(t[i_], t[i_ + 8]);                   \
			v[2 * i_ + 1] = hi(t[i_], t[i_ + 8]);               \
		}                                                           \
	}

#if CLOSING_AVX2
/* 32 rows by 16 columns a step: the network on two 16 x 16 blocks at once
 * (rows y0 .. y0 + 15 in the low halves, the 16 below in the high halves:
 * the unpacks work within halves), so each column's 32 bytes go out in
 * one store. Returns the rows done. */
__attribute__((target("avx2"))) static int transpose_avx2(const uint8_t *src, size_t ss, int wd, int ht,
							  uint8_t *dst)
{
	int y0 = 0;
	for (; y0 + 32 <= ht; y0 += 32) {
		int x0 = 0;
		for (; x0 + 16 <= wd; x0 += 16) {
			__m256i v[16], t[16];
			for (int i = 0; i < 16; i++) {
				const uint8_t *p = src + (size_t)(y0 + i) * ss + (size_t)x0;
				const __m128i top = _mm_loadu_si128((const __m128i *)(const void *)p);
				const __m128i low = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * ss));
				v[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(top), low, 1);
			}
			TRANSPOSE_ROUNDS(v, t, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8)
			for (int i = 0; i < 16; i++)
				_mm256_storeu_si256((__m256i *)(void *)(dst + (size_t)(x0 + i) * (size_t)ht + (size_t)y0), v[i]);
		}
		transpose_plain(src, ss, wd, ht, dst, y0, y0 + 32, x0);
	}
	return y0;
}
#endif

/* dst (ht x wd, stride ht) = the transpose of src (wd x ht, stride ss):
 * so that the row passes run down columns too. 32 x 16 blocks with avx2,
 * then 16 x 16 blocks with SSE2, then a byte at a time. */
static void transpose(bool avx2, const uint8_t *src, size_t ss, int wd, int ht, uint8_t *dst)
{
	int y0 = 0;
#if CLOSING_AVX2
	if (avx2)
		y0 = transpose_avx2(src, ss, wd, ht, dst);
#endif
	(void)avx2;
#ifdef __SSE2__
	for (; y0 + 16 <= ht; y0 += 16) {
		int x0 = 0;
		for (; x0 + 16 <= wd; x0 += 16) {
			__m128i v[16], t[16];
			for (int i = 0; i < 16; i++)
				v[i] = _mm_loadu_si128((const __m128i *)(src + (size_t)(y0 + i) * ss + (size_t)x0));
			TRANSPOSE_ROUNDS(v, t, _mm_unpacklo_epi8, _mm_unpackhi_epi8)
			for (int i = 0; i < 16; i++)
				_mm_storeu_si128((__m128i *)(dst + (size_t)(x0 + i) * (size_t)ht + (size_t)y0), v[i]);
		}
		transpose_plain(src, ss, wd, ht, dst, y0, y0 + 16, x0);
	}
#endif
	transpose_plain(src, ss, wd, ht, dst, y0, ht, 0);
}

/* o's bits 0..n-1 = 100 v > pct bg and bg >= gate; o zeroed first (n
 * rounded up to whole words). */
static void threshold_row(bool avx2, const uint8_t *v, const uint8_t *bg, int n, int pct, int gate, uint64_t *o)
{
	memset(o, 0, (size_t)(n + 63) / 64 * sizeof *o);
	int x = VECTOR_STEPS(avx2, threshold_row, v, bg, n, pct, gate, o);
	for (; x < n; x++)
		if (100 * v[x] > pct * bg[x] && bg[x] >= gate)
			o[x >> 6] |= 1ull << (x & 63);
}

/* closing_process()'s and closing_median()'s errors: 0, ERR_SIZE or
 * ERR_RANGE. */
static int closing_args(const struct closing *c, const struct image_u8 *in, int radius, int pct, int gate,
			const struct bitmask *out)
{
	const int wd = in->width, ht = in->height;
	if (wd < 1 || ht < 1 || wd > c->max_width || ht > c->max_height || out->width != wd || out->height != ht)
		return ERR_SIZE;
	if (radius < 1 || radius > CLOSING_MAX_RADIUS || pct < 0 || pct > 100 || gate < 0 || gate > 255)
		return ERR_RANGE;
	return 0;
}

int closing_process(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out)
{
	const int err = closing_args(c, in, radius, pct, gate, out);
	if (err)
		return err;
	const int wd = in->width, ht = in->height;
	const size_t s = (size_t)wd;
	/* Dilation (max) then erosion (min), each separable: columns, then
	 * the rows as the transpose's columns (both row passes there), then
	 * the erosion's columns. */
	col_run(c, in->data, (size_t)in->stride, wd, ht, radius, true, c->a);
	transpose(c->avx2, c->a, (size_t)wd, wd, ht, c->b);
	col_run(c, c->b, (size_t)ht, ht, wd, radius, true, c->a);
	col_run(c, c->a, (size_t)ht, ht, wd, radius, false, c->b);
	transpose(c->avx2, c->b, (size_t)ht, ht, wd, c->a);
	col_run(c, c->a, s, wd, ht, radius, false, c->b);
	c->closed_w = wd;
	c->closed_h = ht;
	return closing_again(c, in, pct, gate, out);
}

int closing_median_on(struct closing *c)
{
	int err = 0;
	if (!c->cpu)
		c->cpu = threshold_cpu_create(c->max_width, c->max_height, &err);
	return err;
}

int closing_median(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out)
{
	const int err = closing_args(c, in, radius, pct, gate, out);
	if (err)
		return err;
	if (!c->cpu)
		return ERR_UNSUPPORTED;
	struct image_u8 m = {.width = in->width, .height = in->height, .stride = in->width, .data = c->hi};
	threshold_cpu_median(c->cpu, in, 3, &m);
	const int e = closing_process(c, &m, radius, pct, gate, out);
	c->closed_w = c->closed_h = 0;
	return e;
}

int closing_again(struct closing *c, const struct image_u8 *in, int pct, int gate, struct bitmask *out)
{
	const int wd = in->width, ht = in->height;
	if (wd != c->closed_w || ht != c->closed_h || out->width != wd || out->height != ht)
		return ERR_SIZE;
	if (pct < 0 || pct > 100 || gate < 0 || gate > 255)
		return ERR_RANGE;
	for (int y = 0; y < ht; y++)
		threshold_row(c->avx2, image_u8_row(in, y), c->b + (size_t)y * (size_t)wd, wd, pct, gate,
			      out->bits + (size_t)y * (size_t)out->stride_words);
	return 0;
}

/* o's bits 0..n-1 by closing_ratio()'s rule; o zeroed first. */
static void ratio_row(bool avx2, const uint8_t *v, const uint8_t *lo, const uint8_t *hi, int n, int offset,
		      int gate, uint64_t *o)
{
	memset(o, 0, (size_t)(n + 63) / 64 * sizeof *o);
	int x = VECTOR_STEPS(avx2, ratio_row, v, lo, hi, n, offset, gate, o);
	for (; x < n; x++) {
		const int32_t l = lo[x], h = hi[x], p = v[x];
		const bool white = h - l < gate ? l + h >= 256 && p > 0
						: (p + offset) * (p + offset) > (l + offset) * (h + offset);
		if (white)
			o[x >> 6] |= 1ull << (x & 63);
	}
}

/* The minimum and maximum of in over the square of radius r around each
 * pixel (wd x ht, stride wd) into *lo and *hi (two of the closing's
 * buffers): the rows first, as the columns of in's transpose (made once
 * for both), then the columns. */
static void window_extremes(struct closing *c, const struct image_u8 *in, int r, uint8_t **lo, uint8_t **hi)
{
	const int wd = in->width, ht = in->height;
	transpose(c->avx2, in->data, (size_t)in->stride, wd, ht, c->a);
	col_run(c, c->a, (size_t)ht, ht, wd, r, true, c->b);
	transpose(c->avx2, c->b, (size_t)ht, ht, wd, c->hi);
	col_run(c, c->a, (size_t)ht, ht, wd, r, false, c->b);
	transpose(c->avx2, c->b, (size_t)ht, ht, wd, c->a);
	/* a: the rows' minima, hi: their maxima */
	col_run(c, c->hi, (size_t)wd, wd, ht, r, true, c->b);
	col_run(c, c->a, (size_t)wd, wd, ht, r, false, c->hi);
	*hi = c->b;
	*lo = c->hi;
}

int closing_ratio(struct closing *c, const struct image_u8 *in, int radius, int offset, int gate, struct bitmask *out)
{
	const int wd = in->width, ht = in->height;
	if (wd < 1 || ht < 1 || wd > c->max_width || ht > c->max_height || out->width != wd || out->height != ht)
		return ERR_SIZE;
	if (radius < 1 || radius > CLOSING_MAX_RADIUS || offset < 0 || offset > CLOSING_MAX_OFFSET || gate < 0 ||
	    gate > 255)
		return ERR_RANGE;
	uint8_t *lo, *hi;
	c->closed_w = c->closed_h = 0; /* its extremes overwrite the closing */
	window_extremes(c, in, radius, &lo, &hi);
	const size_t s = (size_t)wd;
	for (int y = 0; y < ht; y++)
		ratio_row(c->avx2, image_u8_row(in, y), lo + (size_t)y * s, hi + (size_t)y * s, wd, offset, gate,
			  out->bits + (size_t)y * (size_t)out->stride_words);
	return 0;
}
