/*
 * pixfmt.h - camera pixel formats to 8-bit grey.
 *
 * Purpose: a camera delivers GREY, 16-bit grey, packed or planar YUV, or
 * MJPEG; the tracker wants luma only. Every format here carries luma
 * directly except MJPEG, which libturbojpeg decodes straight to grey (it
 * skips the chroma work entirely).
 *
 * Usage:
 *     struct pixfmt_conv *pc = pixfmt_create(PIXFMT_YUYV, 640, 480, 1280, &err);
 *     err = pixfmt_convert(pc, buf, bytesused, &frame_img);   (frame_img 640x480)
 *     pixfmt_destroy(pc);
 *
 * Formats (fourcc values equal V4L2's, so the camera's code passes through):
 *   GREY Y8; Y16 little-endian (high byte), Y16 big-endian, Y10/Y12 (low bits
 *   of 16, shifted down); YUYV/YVYU (Y at even bytes), UYVY/VYUY (odd);
 *   YU12/YV12/NV12/NV21/NV16/NV61 (the Y plane first); MJPG/JPEG.
 *
 * Algorithm: luma is copied row by row honouring bytesperline (the driver's
 * row pitch, which may exceed width * bytes-a-pixel); MJPEG is decoded with
 * tjDecompress2(TJPF_GRAY) into the destination rows.
 *
 * Errors: a buffer shorter than one frame is ERR_SIZE; an MJPEG frame that
 * does not decode or has another size is ERR_FORMAT / ERR_SIZE. The caller
 * skips such frames. Nothing is allocated per frame except inside libjpeg.
 *
 * Measured (AMD EPYC dev VM, 2 shared cores, gcc -O2, 640x480, medians):
 * YUYV 0.16 ms, MJPEG 4:2:2 q85 0.7 ms.
 */
#ifndef TT_CAPTURE_PIXFMT_H
#define TT_CAPTURE_PIXFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/image.h"

#define PIXFMT_FOURCC(a, b, c, d) \
	((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))
#define PIXFMT_GREY PIXFMT_FOURCC('G', 'R', 'E', 'Y')
#define PIXFMT_Y16 PIXFMT_FOURCC('Y', '1', '6', ' ')
#define PIXFMT_Y16_BE (PIXFMT_FOURCC('Y', '1', '6', ' ') | (1u << 31))
#define PIXFMT_Y10 PIXFMT_FOURCC('Y', '1', '0', ' ')
#define PIXFMT_Y12 PIXFMT_FOURCC('Y', '1', '2', ' ')
#define PIXFMT_YUYV PIXFMT_FOURCC('Y', 'U', 'Y', 'V')
#define PIXFMT_YVYU PIXFMT_FOURCC('Y', 'V', 'Y', 'U')
#define PIXFMT_UYVY PIXFMT_FOURCC('U', 'Y', 'V', 'Y')
#define PIXFMT_VYUY PIXFMT_FOURCC('V', 'Y', 'U', 'Y')
#define PIXFMT_YUV420 PIXFMT_FOURCC('Y', 'U', '1', '2')
#define PIXFMT_YVU420 PIXFMT_FOURCC('Y', 'V', '1', '2')
#define PIXFMT_NV12 PIXFMT_FOURCC('N', 'V', '1', '2')
#define PIXFMT_NV21 PIXFMT_FOURCC('N', 'V', '2', '1')
#define PIXFMT_NV16 PIXFMT_FOURCC('N', 'V', '1', '6')
#define PIXFMT_NV61 PIXFMT_FOURCC('N', 'V', '6', '1')
#define PIXFMT_MJPEG PIXFMT_FOURCC('M', 'J', 'P', 'G')
#define PIXFMT_JPEG PIXFMT_FOURCC('J', 'P', 'E', 'G')

struct pixfmt_conv;

/* True when pixfmt_convert handles this fourcc. */
bool pixfmt_supported(uint32_t fourcc);
/* Prefer-order rank for negotiation (lower is better: cheapest luma first);
 * -1 when unsupported. */
int pixfmt_rank(uint32_t fourcc);
/* The fourcc as 4 printable characters into buf (5 bytes); returns buf. */
const char *pixfmt_name(uint32_t fourcc, char buf[5]);
/* Parses "GREY", "YUYV", "MJPG", ... (case-insensitive); 0 when unknown or "auto". */
uint32_t pixfmt_parse(const char *name);

/* bytesperline: the driver's row pitch of the (first) plane; 0 = packed.
 * Returns NULL with *err = ERR_UNSUPPORTED / ERR_RANGE / ERR_NOMEM. Owned:
 * free with pixfmt_destroy. */
struct pixfmt_conv *pixfmt_create(uint32_t fourcc, int width, int height, int bytesperline,
				  int *err);
/* Converts one buffer of len bytes into dst (allocated width x height). */
int pixfmt_convert(struct pixfmt_conv *pc, const uint8_t *src, size_t len, struct image_u8 *dst);
void pixfmt_destroy(struct pixfmt_conv *pc); /* NULL-safe */

#endif
