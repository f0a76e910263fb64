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

/* Lanczos-3 weights, L(d) = sinc(d) sinc(d / 3) at d = -2.75 .. 2.25 scaled
 * to sum 256, of the six source pixels i - 3 .. i + 2
 * for a sample at i - 0.25; a sample at i + 0.25 takes them mirrored
 * over i - 2 .. i + 3. */
static const int LZ[6] = {2, -17, 69, 228, -34, 8};

static inline int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Source row sy (clamped to the frame) of columns x0 .. x1 - 1 enlarged
 * along x, unscaled (weights' sum 256), into out (2 (x1 - x0) values). */
static void lanczos_row(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *r = image_u8_row(src, clampi(sy, 0, src->height - 1));
	const int w = src->width;
	for (int x = x0; x < x1; x++) {
		int32_t a = 0, b = 0;
		if (x >= 3 && x + 3 < w) {
			const uint8_t *p = r + x - 3;
			for (int k = 0; k < 6; k++) {
				a += LZ[k] * p[k];
				b += LZ[5 - k] * p[k + 1];
			}
		} else {
			for (int k = 0; k < 6; k++) {
				a += LZ[k] * r[clampi(x - 3 + k, 0, w - 1)];
				b += LZ[5 - k] * r[clampi(x - 2 + k, 0, w - 1)];
			}
		}
		out[2 * (x - x0)] = a;
		out[2 * (x - x0) + 1] = b;
	}
}

/* Output rows o0 and o1 (n pixels) from the seven rows h0 .. h6 enlarged
 * along x: o0 weighs h0 .. h5, o1 h1 .. h6 mirrored. Each row its own
 * restrict pointer, so that the compiler keeps the loop over j in vector
 * registers (the bytes stored alias nothing read). */
static void lanczos_cols(const int32_t *restrict h0, const int32_t *restrict h1, const int32_t *restrict h2,
			 const int32_t *restrict h3, const int32_t *restrict h4, const int32_t *restrict h5,
			 const int32_t *restrict h6, int n, uint8_t *restrict o0, uint8_t *restrict o1)
{
	for (int j = 0; j < n; j++) {
		const int32_t a = LZ[0] * h0[j] + LZ[1] * h1[j] + LZ[2] * h2[j] + LZ[3] * h3[j] + LZ[4] * h4[j] +
				  LZ[5] * h5[j];
		const int32_t b = LZ[5] * h1[j] + LZ[4] * h2[j] + LZ[3] * h3[j] + LZ[2] * h4[j] + LZ[1] * h5[j] +
				  LZ[0] * h6[j];
		o0[j] = (uint8_t)clampi((a + 32768) >> 16, 0, 255);
		o1[j] = (uint8_t)clampi((b + 32768) >> 16, 0, 255);
	}
}

int upsample2_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 2 * (x1 - x0) || dst->height != 2 * (y1 - y0))
		return ERR_RANGE;
	const int n = dst->width;
	/* Row k of the source enlarged along x lives in slot k mod 7 of rows:
	 * source rows y - 3 .. y + 3 make output rows 2 (y - y0) and the next. */
#define SLOT(k) (rows + (size_t)((((k) % UPSAMPLE2_LANCZOS_ROWS) + UPSAMPLE2_LANCZOS_ROWS) % UPSAMPLE2_LANCZOS_ROWS) * (size_t)n)
	for (int k = y0 - 3; k < y0 + 3; k++)
		lanczos_row(src, k, x0, x1, SLOT(k));
	for (int y = y0; y < y1; y++) {
		lanczos_row(src, y + 3, x0, x1, SLOT(y + 3));
		uint8_t *o0 = dst->data + (size_t)(2 * (y - y0)) * (size_t)dst->stride;
		lanczos_cols(SLOT(y - 3), SLOT(y - 2), SLOT(y - 1), SLOT(y), SLOT(y + 1), SLOT(y + 2), SLOT(y + 3), n,
			     o0, o0 + dst->stride);
	}
#undef SLOT
	return 0;
}

/* Lanczos-3 weights at d = -2.67 .. 2.33 (a sample a third of a pixel
 * before source pixel i, over pixels i - 3 .. i + 2), scaled to sum 256. */
static const int LZ3[6] = {3, -24, 98, 208, -37, 8};

/* Source row sy (clamped) of columns x0 .. x1 - 1 enlarged three times
 * along x, scaled by 256, into out (3 (x1 - x0) values). */
static void lanczos3_row(const struct image_u8 *src, int sy, int x0, int x1, int32_t *out)
{
	const uint8_t *r = image_u8_row(src, clampi(sy, 0, src->height - 1));
	const int w = src->width;
	for (int x = x0; x < x1; x++) {
		int32_t a = 0, b = 0;
		for (int k = 0; k < 6; k++) {
			a += LZ3[k] * r[clampi(x - 3 + k, 0, w - 1)];
			b += LZ3[5 - k] * r[clampi(x - 2 + k, 0, w - 1)];
		}
		out[3 * (x - x0)] = a;
		out[3 * (x - x0) + 1] = 256 * r[x];
		out[3 * (x - x0) + 2] = b;
	}
}

int upsample3_lanczos_part(const struct image_u8 *src, int x0, int y0, int x1, int y1, struct image_u8 *dst,
			   int32_t *rows)
{
	if (x0 < 0 || y0 < 0 || x1 > src->width || y1 > src->height || x0 >= x1 || y0 >= y1 ||
	    dst->width != 3 * (x1 - x0) || dst->height != 3 * (y1 - y0))
		return ERR_RANGE;
	const int n = dst->width;
	/* As upsample2_lanczos_part: source rows y - 3 .. y + 3, enlarged
	 * along x, in slots k mod 7 make output rows 3 (y - y0) .. + 2. */
#define SLOT(k) (rows + (size_t)((((k) % UPSAMPLE2_LANCZOS_ROWS) + UPSAMPLE2_LANCZOS_ROWS) % UPSAMPLE2_LANCZOS_ROWS) * (size_t)n)
	for (int k = y0 - 3; k < y0 + 3; k++)
		lanczos3_row(src, k, x0, x1, SLOT(k));
	for (int y = y0; y < y1; y++) {
		lanczos3_row(src, y + 3, x0, x1, SLOT(y + 3));
		const int32_t *h[7];
		for (int k = 0; k < 7; k++)
			h[k] = SLOT(y - 3 + k);
		uint8_t *o = dst->data + (size_t)(3 * (y - y0)) * (size_t)dst->stride;
		for (int j = 0; j < n; j++) {
			int32_t a = 0, b = 0;
			for (int k = 0; k < 6; k++) {
				a += LZ3[k] * h[k][j];
				b += LZ3[5 - k] * h[k + 1][j];
			}
			o[j] = (uint8_t)clampi((a + 32768) >> 16, 0, 255);
			o[dst->stride + j] = (uint8_t)clampi((h[3][j] + 128) >> 8, 0, 255);
			o[2 * (size_t)dst->stride + j] = (uint8_t)clampi((b + 32768) >> 16, 0, 255);
		}
	}
#undef SLOT
	return 0;
}
