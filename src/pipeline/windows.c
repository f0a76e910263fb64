#include "windows.h"

#define T WINDOWS_TILE
/* A decoded symbol's box: its centre +- BOX_HALF_X100 / 100 of its size
 * (the root's box side) + BOX_MARGIN pixels: the card's white margin
 * reaches past the root, and the centre is the leaves', not the box's. */
#define BOX_HALF_X100 85
#define BOX_MARGIN 4
/* Pixels of each colour that make a tile live (tiles_mixed). */
#define MIN_MINORITY 16

static int tiles_x(int width)
{
	return (width + T - 1) / T;
}

size_t windows_scratch_len(int width, int height)
{
	return 2 * (size_t)tiles_x(width) * (size_t)((height + T - 1) / T);
}

/* live[i] = 1 where tile i holds at least MIN_MINORITY pixels of each
 * colour: a speck of noise does not make a tile live, and a symbol leaves
 * far more than that in every tile it covers. */
static void tiles_mixed(const struct bitmask *mask, int32_t *live)
{
	const int ntx = tiles_x(mask->width);
	for (int ty = 0; ty * T < mask->height; ty++) {
		int32_t *row_live = live + (size_t)ty * ntx;
		for (int tx = 0; tx < ntx; tx++)
			row_live[tx] = 0;
		const int y1 = ty * T + T < mask->height ? ty * T + T : mask->height;
		const uint64_t first_full = mask->width % T ? (1ull << (mask->width % T)) - 1 : 0xffffffffull;
		for (int tx = 0; tx < ntx; tx++) {
			const uint64_t full = tx == ntx - 1 ? first_full : 0xffffffffull;
			const int n_px = (y1 - ty * T) * __builtin_popcountll(full);
			int white = 0;
			for (int y = ty * T; y < y1; y++)
				white += __builtin_popcountll((bitmask_row(mask, y)[tx / 2] >> (32 * (tx & 1))) & full);
			row_live[tx] = white >= MIN_MINORITY && n_px - white >= MIN_MINORITY;
		}
	}
}

static int max_i(int a, int b)
{
	return a > b ? a : b;
}

static int min_i(int a, int b)
{
	return a < b ? a : b;
}

/* Tiles that meet the square of radius r around (x, y) are explained. */
static void tiles_clear(int32_t *live, int ntx, int nty, float x, float y, float r)
{
	const int tx0 = max_i(0, (int)(x - r) / T), tx1 = min_i(ntx - 1, (int)(x + r) / T);
	const int ty0 = max_i(0, (int)(y - r) / T), ty1 = min_i(nty - 1, (int)(y + r) / T);
	for (int ty = ty0; ty <= ty1; ty++)
		for (int tx = tx0; tx <= tx1; tx++)
			live[(size_t)ty * ntx + tx] = 0;
}

static int overlap(const struct window *a, const struct window *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

int windows_find(const struct bitmask *mask, const struct detections *d, int pad, int32_t *scratch,
		 struct window *out, int cap)
{
	const int w = mask->width, h = mask->height, ntx = tiles_x(w), nty = (h + T - 1) / T;
	int32_t *live = scratch, *stack = scratch + (size_t)ntx * nty;
	tiles_mixed(mask, live);
	for (int i = 0; i < d->n_fids; i++)
		tiles_clear(live, ntx, nty, d->fids[i].x, d->fids[i].y,
			    (float)BOX_HALF_X100 / 100.0f * d->fids[i].size_px + BOX_MARGIN);
	for (int i = 0; i < d->n_fingers; i++)
		tiles_clear(live, ntx, nty, d->fingers[i].x, d->fingers[i].y, 0.5f * d->fingers[i].diameter_px + BOX_MARGIN);
	int n = 0;
	for (int i = 0; i < ntx * nty; i++) {
		if (!live[i])
			continue;
		/* Flood the group of tile i; its box in tiles. */
		int sp = 0, bx0 = ntx, by0 = nty, bx1 = -1, by1 = -1;
		live[i] = 0;
		stack[sp++] = i;
		while (sp) {
			const int k = stack[--sp], kx = k % ntx, ky = k / ntx;
			bx0 = min_i(bx0, kx);
			bx1 = max_i(bx1, kx);
			by0 = min_i(by0, ky);
			by1 = max_i(by1, ky);
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					const int x = kx + dx, y = ky + dy;
					if (x < 0 || y < 0 || x >= ntx || y >= nty || !live[y * ntx + x])
						continue;
					live[y * ntx + x] = 0;
					stack[sp++] = y * ntx + x;
				}
		}
		struct window g = {max_i(0, bx0 * T - pad), max_i(0, by0 * T - pad), min_i(w, (bx1 + 1) * T + pad),
				   min_i(h, (by1 + 1) * T + pad)};
		/* Join g with every window it overlaps, until it overlaps none. */
		for (int j = 0; j < n;) {
			if (!overlap(&g, &out[j])) {
				j++;
				continue;
			}
			g.x0 = min_i(g.x0, out[j].x0);
			g.y0 = min_i(g.y0, out[j].y0);
			g.x1 = max_i(g.x1, out[j].x1);
			g.y1 = max_i(g.y1, out[j].y1);
			out[j] = out[--n];
			j = 0;
		}
		if (n >= cap)
			return -1;
		out[n++] = g;
	}
	int64_t area = 0;
	for (int j = 0; j < n; j++)
		area += (int64_t)(out[j].x1 - out[j].x0) * (out[j].y1 - out[j].y0);
	return 2 * area > (int64_t)w * h ? -1 : n;
}
