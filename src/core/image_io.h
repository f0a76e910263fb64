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
#include <stdint.h>

#include "image.h"

int image_read(const char *path, struct image_u8 *img);
/* The same from memory; `name` is used in messages. */
int image_read_mem(const void *data, size_t len, const char *name, struct image_u8 *img);

/* For readers of many frames (the folder source), which decode into
 * buffers of their own instead of allocating each frame:
 * image_read_file reads the file at path into *buf (the caller's, grown
 * with realloc when the file is larger than *cap, freed by the caller;
 * *buf may start NULL), its length into *len; the same checks and log
 * lines as image_read. image_pgm_plain says whether data is a binary PGM
 * of maxval 255, whose samples are the grey bytes as they are: 0 with its
 * size and the offset of the first sample (rows of width bytes follow),
 * ERR_FORMAT for anything else (image_read_mem then decodes it). */
int image_read_file(const char *path, uint8_t **buf, size_t *cap, size_t *len);
int image_pgm_plain(const void *data, size_t len, int *width, int *height, size_t *offset);
/* The same pieces for a reader that puts a plain PGM's samples straight
 * where they go (the ring slot) instead of through a buffer:
 * image_file_open opens a regular file of at most IMAGE_FILE_MAX bytes
 * (logged and ERR_* otherwise) and gives its descriptor (the caller
 * closes it) and size; image_file_pread reads up to len bytes at offset
 * (restarting on EINTR; *got short only at the end of the file);
 * image_pgm_header is image_pgm_plain on the file's first len bytes, the
 * whole file being file_len bytes long. */
int image_file_open(const char *path, size_t *size);
int image_file_pread(int fd, const char *path, void *buf, size_t len, size_t offset, size_t *got);
int image_pgm_header(const void *data, size_t len, size_t file_len, int *width, int *height, size_t *offset);
/* Writes PNG or PGM by the path's extension (.png, else PGM). */
int image_write(const char *path, const struct image_u8 *img);

#endif
