/* closing.c - the threshold against a grey closing (closing.h). */
#include "closing.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct closing {
	int max_width, max_height;
	uint8_t *a, *b;        /* max_width x max_height, row-major, stride max_width */
	uint8_t *pad, *g, *h;  /* one line with its padding */
	uint8_t *gv, *hv;      /* the column passes' g and h, a padded column of whole rows */
};

struct closing *closing_create(int max_width, int max_height, int *err)
{
	if (max_width < 1 || max_height < 1) {
		*err = ERR_RANGE;
		return NULL;
	}
	struct closing *c = calloc(1, sizeof *c);
	const size_t line = (size_t)(max_width > max_height ? max_width : max_height) + 4 * CLOSING_MAX_RADIUS + 4;
	if (c) {
		c->max_width = max_width;
		c->max_height = max_height;
		c->a = malloc((size_t)max_width * (size_t)max_height);
		c->b = malloc((size_t)max_width * (size_t)max_height);
		c->pad = malloc(line);
		c->g = malloc(line);
		c->h = malloc(line);
		const size_t rows = (size_t)max_height + 4 * CLOSING_MAX_RADIUS + 4;
		c->gv = malloc(rows * (size_t)max_width);
		c->hv = malloc(rows * (size_t)max_width);
	}
	if (!c || !c->a || !c->b || !c->pad || !c->g || !c->h || !c->gv || !c->hv) {
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
	free(c->pad);
	free(c->g);
	free(c->h);
	free(c->gv);
	free(c->hv);
	free(c);
}

static inline __attribute__((always_inline)) uint8_t pick(bool max, uint8_t x, uint8_t y)
{
	return max ? (x > y ? x : y) : (x < y ? x : y);
}

/* o[x] = max (or min) of a[x] and b[x], 16 bytes at a time where SSE2 is
 * there (every x86-64). */
static inline __attribute__((always_inline)) void rows_pick(bool max, uint8_t *o, const uint8_t *a,
							    const uint8_t *b, int n)
{
	int x = 0;
#ifdef __SSE2__
	for (; x + 16 <= n; x += 16) {
		const __m128i va = _mm_loadu_si128((const __m128i *)(a + x)), vb = _mm_loadu_si128((const __m128i *)(b + x));
		_mm_storeu_si128((__m128i *)(o + x), max ? _mm_max_epu8(va, vb) : _mm_min_epu8(va, vb));
	}
#endif
	for (; x < n; x++)
		o[x] = pick(max, a[x], b[x]);
}

/* dst[i] = max (or min) of src over i - r .. i + r, the line cropped at
 * its ends (the end pixel repeated: the same for max and min).
 * van Herk / Gil-Werman: the padded line in blocks of w = 2r + 1, the
 * running value from each block's start (g) and to its end (h); the window
 * at i spans the end of one block and the start of the next. */
static inline __attribute__((always_inline)) void row_run(struct closing *c, const uint8_t *src, int n, int r,
							  bool max, uint8_t *dst)
{
	const int w = 2 * r + 1, len = (n + 2 * r + w - 1) / w * w;
	uint8_t *p = c->pad, *g = c->g, *h = c->h;
	for (int j = 0; j < len; j++) {
		const int k = j - r < 0 ? 0 : j - r > n - 1 ? n - 1 : j - r;
		p[j] = src[k];
	}
	for (int b = 0; b < len; b += w) {
		g[b] = p[b];
		for (int j = b + 1; j < b + w; j++)
			g[j] = pick(max, g[j - 1], p[j]);
		h[b + w - 1] = p[b + w - 1];
		for (int j = b + w - 2; j >= b; j--)
			h[j] = pick(max, h[j + 1], p[j]);
	}
	for (int i = 0; i < n; i++)
		dst[i] = pick(max, h[i], g[i + w - 1]);
}

/* The same down every column at once: each step combines two whole rows,
 * sixteen bytes at a time (rows_pick), where a column at a time would
 * stride through memory. src and dst are wd x ht, stride wd. */
static inline __attribute__((always_inline)) void col_run(struct closing *c, const uint8_t *src, int wd, int ht,
							  int r, bool max, uint8_t *dst)
{
	const int w = 2 * r + 1, len = (ht + 2 * r + w - 1) / w * w;
	const size_t s = (size_t)wd;
	uint8_t *g = c->gv, *h = c->hv;
#define ROW(j) (src + (size_t)((j) - r < 0 ? 0 : (j) - r > ht - 1 ? ht - 1 : (j) - r) * s)
	for (int b = 0; b < len; b += w) {
		memcpy(g + (size_t)b * s, ROW(b), s);
		for (int j = b + 1; j < b + w; j++)
			rows_pick(max, g + (size_t)j * s, g + (size_t)(j - 1) * s, ROW(j), wd);
		memcpy(h + (size_t)(b + w - 1) * s, ROW(b + w - 1), s);
		for (int j = b + w - 2; j >= b; j--)
			rows_pick(max, h + (size_t)j * s, h + (size_t)(j + 1) * s, ROW(j), wd);
	}
#undef ROW
	for (int i = 0; i < ht; i++)
		rows_pick(max, dst + (size_t)i * s, h + (size_t)i * s, g + (size_t)(i + w - 1) * s, wd);
}

int closing_process(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out)
{
	const int wd = in->width, ht = in->height;
	if (wd < 1 || ht < 1 || wd > c->max_width || ht > c->max_height || out->width != wd || out->height != ht)
		return ERR_SIZE;
	if (radius < 1 || radius > CLOSING_MAX_RADIUS || pct < 0 || pct > 100 || gate < 0 || gate > 255)
		return ERR_RANGE;
	const size_t s = (size_t)wd;
	/* Dilation (max) then erosion (min), each rows then columns. */
	for (int y = 0; y < ht; y++)
		row_run(c, image_u8_row(in, y), wd, radius, true, c->a + (size_t)y * s);
	col_run(c, c->a, wd, ht, radius, true, c->b);
	for (int y = 0; y < ht; y++)
		row_run(c, c->b + (size_t)y * s, wd, radius, false, c->a + (size_t)y * s);
	col_run(c, c->a, wd, ht, radius, false, c->b);
	for (int y = 0; y < ht; y++) {
		const uint8_t *v = image_u8_row(in, y), *bg = c->b + (size_t)y * s;
		uint64_t *o = out->bits + (size_t)y * (size_t)out->stride_words;
		memset(o, 0, (size_t)out->stride_words * sizeof *o);
		for (int x = 0; x < wd; x++)
			if (100 * v[x] > pct * bg[x] && bg[x] >= gate)
				o[x >> 6] |= 1ull << (x & 63);
	}
	return 0;
}
