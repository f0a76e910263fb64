#include "image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int image_u8_alloc(struct image_u8 *img, int width, int height)
{
	memset(img, 0, sizeof *img);
	if (width < 1 || height < 1 || width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	int stride = (width + 63) & ~63;
	/* aligned_alloc needs the size to be a multiple of the alignment. */
	img->data = aligned_alloc(64, (size_t)stride * (size_t)height);
	if (!img->data)
		return ERR_NOMEM;
	memset(img->data, 0, (size_t)stride * (size_t)height);
	img->width = width;
	img->height = height;
	img->stride = stride;
	return 0;
}

void image_u8_free(struct image_u8 *img)
{
	if (!img)
		return;
	free(img->data);
	memset(img, 0, sizeof *img);
}

void image_u8_copy(struct image_u8 *dst, const struct image_u8 *src)
{
	for (int y = 0; y < src->height; y++)
		memcpy(image_u8_row(dst, y), image_u8_row(src, y), (size_t)src->width);
}

void image_u8_map(struct image_u8 *img, const uint8_t lut[256])
{
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++)
			row[x] = lut[row[x]];
	}
}

void image_u8_gamma_lut(uint8_t lut[256], double exponent)
{
	for (int v = 0; v < 256; v++)
		lut[v] = (uint8_t)lrint(255.0 * pow(v / 255.0, exponent));
}

double image_u8_sample(const struct image_u8 *img, double x, double y)
{
	if (x < 0)
		x = 0;
	if (y < 0)
		y = 0;
	if (x > img->width - 1)
		x = img->width - 1;
	if (y > img->height - 1)
		y = img->height - 1;
	int x0 = (int)x, y0 = (int)y;
	int x1 = x0 + 1 < img->width ? x0 + 1 : x0, y1 = y0 + 1 < img->height ? y0 + 1 : y0;
	double fx = x - x0, fy = y - y0;
	const uint8_t *r0 = image_u8_row(img, y0), *r1 = image_u8_row(img, y1);
	double top = r0[x0] + (r0[x1] - r0[x0]) * fx;
	double bot = r1[x0] + (r1[x1] - r1[x0]) * fx;
	return top + (bot - top) * fy;
}

int bitmask_alloc(struct bitmask *m, int width, int height)
{
	memset(m, 0, sizeof *m);
	if (width < 1 || height < 1 || width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE)
		return ERR_RANGE;
	int sw = (width + 63) / 64;
	m->bits = calloc((size_t)sw * (size_t)height, sizeof(uint64_t));
	if (!m->bits)
		return ERR_NOMEM;
	m->width = width;
	m->height = height;
	m->stride_words = sw;
	return 0;
}

void bitmask_free(struct bitmask *m)
{
	if (!m)
		return;
	free(m->bits);
	memset(m, 0, sizeof *m);
}

void bitmask_from_image(struct bitmask *m, const struct image_u8 *binary)
{
	for (int y = 0; y < m->height; y++) {
		const uint8_t *src = image_u8_row(binary, y);
		uint64_t *dst = m->bits + (size_t)y * (size_t)m->stride_words;
		for (int w = 0; w < m->stride_words; w++) {
			uint64_t word = 0;
			int x0 = w * 64;
			int n = m->width - x0 < 64 ? m->width - x0 : 64;
			for (int b = 0; b < n; b++)
				word |= (uint64_t)(src[x0 + b] > 127) << b;
			dst[w] = word;
		}
	}
}

void bitmask_to_image(const struct bitmask *m, struct image_u8 *binary)
{
	for (int y = 0; y < m->height; y++) {
		uint8_t *dst = image_u8_row(binary, y);
		const uint64_t *src = bitmask_row(m, y);
		for (int x = 0; x < m->width; x++)
			dst[x] = ((src[x >> 6] >> (x & 63)) & 1u) ? 255 : 0;
	}
}
