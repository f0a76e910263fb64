/*
 * image_io.h - reading and writing image files (libpng, binary PGM).
 *
 * Reads PNG (any bit depth and colour type, converted to 8-bit grey with
 * ITU-R 601 luma; 16-bit takes the high byte) or binary PGM (P5, maxval <=
 * 65535, comments allowed). A truncated or lying file is ERR_FORMAT with one
 * log line naming the file; nothing is allocated beyond the header's size,
 * and sides are capped at IMAGE_MAX_SIDE. Allocates *img (free with
 * image_u8_free).
 */
#ifndef TT_CORE_IMAGE_IO_H
#define TT_CORE_IMAGE_IO_H

#include <stddef.h>

#include "image.h"

int image_read(const char *path, struct image_u8 *img);
/* The same from memory; `name` is used in messages. */
int image_read_mem(const void *data, size_t len, const char *name, struct image_u8 *img);
/* Writes PNG or PGM by the path's extension (.png, else PGM). */
int image_write(const char *path, const struct image_u8 *img);

#endif
