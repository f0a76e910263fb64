/* closing.c - the threshold against a grey closing (closing.h). */
#include "closing.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"

struct closing {
	int max_width, max_height;
	uint8_t *a, *b;        /* max_width x max_height, row-major, stride max_width */
	uint8_t *pad, *g, *h;  /* one line with its padding */
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
	}
	if (!c || !c->a || !c->b || !c->pad || !c->g || !c->h) {
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
	free(c);
}

static inline uint8_t pick(bool max, uint8_t x, uint8_t y)
{
	return max ? (x > y ? x : y) : (x < y ? x : y);
}

/* dst[i * dstep] = max (or min) of src over i - r .. i + r, the line
 * cropped at its ends (the end pixel repeated: the same for max and min).
 * van Herk / Gil-Werman: the padded line in blocks of w = 2r + 1, the
 * running value from each block's start (g) and to its end (h); the window
 * at i spans the end of one block and the start of the next. */
static void line_run(struct closing *c, const uint8_t *src, size_t sstep, int n, int r, bool max, uint8_t *dst,
		     size_t dstep)
{
	const int w = 2 * r + 1, len = (n + 2 * r + w - 1) / w * w;
	uint8_t *p = c->pad, *g = c->g, *h = c->h;
	for (int j = 0; j < len; j++) {
		const int k = j - r < 0 ? 0 : j - r > n - 1 ? n - 1 : j - r;
		p[j] = src[(size_t)k * sstep];
	}
	for (int j = 0; j < len; j++)
		g[j] = j % w ? pick(max, g[j - 1], p[j]) : p[j];
	for (int j = len - 1; j >= 0; j--)
		h[j] = j % w == w - 1 ? p[j] : pick(max, h[j + 1], p[j]);
	for (int i = 0; i < n; i++)
		dst[(size_t)i * dstep] = pick(max, h[i], g[i + w - 1]);
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
		line_run(c, image_u8_row(in, y), 1, wd, radius, true, c->a + (size_t)y * s, 1);
	for (int x = 0; x < wd; x++)
		line_run(c, c->a + x, s, ht, radius, true, c->b + x, s);
	for (int y = 0; y < ht; y++)
		line_run(c, c->b + (size_t)y * s, 1, wd, radius, false, c->a + (size_t)y * s, 1);
	for (int x = 0; x < wd; x++)
		line_run(c, c->a + x, s, ht, radius, false, c->b + x, s);
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
