/*
 * image.h - plain image types shared by every stage.
 *
 * struct image_u8: 8-bit grey, row-major, `stride` bytes between rows
 * (stride >= width). Owned buffers come from image_u8_alloc() and are freed
 * by image_u8_free(); borrowed views just point at someone else's memory.
 *
 * struct bitmask: the thresholded frame, one bit a pixel, 1 = white (255),
 * 0 = black. Bit x of row y lives in word bits[y * stride_words + x / 64] at
 * bit position x % 64 (least significant bit first). Bits past `width` in the
 * last word of a row are zero. This is what the threshold stage (CPU or GPU)
 * hands to the segmenter: 8x less memory traffic than a byte a pixel, and
 * runs are found a word at a time with count-trailing-zeros.
 */
#ifndef TT_CORE_IMAGE_H
#define TT_CORE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Largest frame side any stage accepts; bounds every allocation. */
#define IMAGE_MAX_SIDE 8192

struct image_u8 {
	int width, height, stride;
	uint8_t *data;
};

struct bitmask {
	int width, height, stride_words;
	uint64_t *bits;
};

/* Allocates a width x height image (stride = width rounded up to 64 bytes).
 * Returns 0 or ERR_RANGE (bad size) / ERR_NOMEM. Free with image_u8_free. */
int image_u8_alloc(struct image_u8 *img, int width, int height);
/* Frees an owned image and zeroes the struct; NULL-safe. */
void image_u8_free(struct image_u8 *img);
/* Copies pixels of src into dst of the same size. */
void image_u8_copy(struct image_u8 *dst, const struct image_u8 *src);
/* Every pixel v of img becomes lut[v], in place. */
void image_u8_map(struct image_u8 *img, const uint8_t lut[256]);
/* A power curve for image_u8_map(): lut[v] = 255 (v / 255)^exponent,
 * rounded. An exponent over 1 undoes a camera's gamma encoding (2.2),
 * under 1 applies one (1 / 2.2). */
void image_u8_gamma_lut(uint8_t lut[256], double exponent);
/* The grey at (x, y) in pixels, bilinear between the four nearest pixels;
 * positions outside the image are clamped onto its border. */
double image_u8_sample(const struct image_u8 *img, double x, double y);

static inline uint8_t *image_u8_row(const struct image_u8 *img, int y)
{
	return img->data + (size_t)y * (size_t)img->stride;
}

/* Clips the inclusive box x0..x1, y0..y1 to the image: corners outside are
 * moved onto the border. A box wholly outside comes back empty (x0 > x1 or
 * y0 > y1), so loops over it do nothing. */
static inline void image_u8_clip_box(const struct image_u8 *img, int *x0, int *y0, int *x1, int *y1)
{
	if (*x0 < 0)
		*x0 = 0;
	if (*y0 < 0)
		*y0 = 0;
	if (*x1 > img->width - 1)
		*x1 = img->width - 1;
	if (*y1 > img->height - 1)
		*y1 = img->height - 1;
}

int bitmask_alloc(struct bitmask *m, int width, int height);
void bitmask_free(struct bitmask *m);
/* Packs a 0/255 image (any value > 127 is white) into m (same size). */
void bitmask_from_image(struct bitmask *m, const struct image_u8 *binary);
/* Expands m into a 0/255 image of the same size. */
void bitmask_to_image(const struct bitmask *m, struct image_u8 *binary);

static inline const uint64_t *bitmask_row(const struct bitmask *m, int y)
{
	return m->bits + (size_t)y * (size_t)m->stride_words;
}

static inline int bitmask_get(const struct bitmask *m, int x, int y)
{
	return (int)((bitmask_row(m, y)[x >> 6] >> (x & 63)) & 1u);
}

#endif
