#include "upsample.h"

#include "../core/err.h"

int upsample2_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 2 * (x1 - x0) || dst->height != 2 * (y1 - y0))
		return ERR_RANGE;
	const int w = src->width, h = src->height;
	for (int y = y0; y < y1; y++) {
		const uint8_t *r = image_u8_row(src, y);
		const uint8_t *ru = image_u8_row(src, y > 0 ? y - 1 : 0);
		const uint8_t *rd = image_u8_row(src, y + 1 < h ? y + 1 : h - 1);
		uint8_t *o0 = dst->data + (size_t)(2 * (y - y0)) * (size_t)dst->stride;
		uint8_t *o1 = o0 + dst->stride;
		for (int x = x0; x < x1; x++) {
			const int xl = x > 0 ? x - 1 : 0, xr = x + 1 < w ? x + 1 : w - 1;
			/* Columns blended vertically first (weights 3:1), then rows. */
			const int cu = 3 * r[x] + ru[x], cd = 3 * r[x] + rd[x];
			const int lu = 3 * r[xl] + ru[xl], ld = 3 * r[xl] + rd[xl];
			const int qu = 3 * r[xr] + ru[xr], qd = 3 * r[xr] + rd[xr];
			const int o = 2 * (x - x0);
			o0[o] = (uint8_t)((3 * cu + lu + 8) >> 4);
			o0[o + 1] = (uint8_t)((3 * cu + qu + 8) >> 4);
			o1[o] = (uint8_t)((3 * cd + ld + 8) >> 4);
			o1[o + 1] = (uint8_t)((3 * cd + qd + 8) >> 4);
		}
	}
	return 0;
}
