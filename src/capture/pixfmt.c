#include "pixfmt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if TT_HAVE_JPEG
#include <turbojpeg.h>
#endif

#include "../core/err.h"
#include "../core/log.h"

enum layout { L_GREY, L_Y16LE, L_Y16BE, L_Y10, L_Y12, L_PACKED_EVEN, L_PACKED_ODD, L_PLANAR, L_JPEG };

static const struct {
	uint32_t fourcc;
	enum layout layout;
	int row_bytes; /* bytes a pixel in the first plane's rows */
} formats[] = {
	/* In negotiation order: luma-only first, then packed YUV, planar, JPEG. */
	{PIXFMT_GREY, L_GREY, 1},         {PIXFMT_Y16, L_Y16LE, 2},
	{PIXFMT_Y16_BE, L_Y16BE, 2},      {PIXFMT_Y12, L_Y12, 2},
	{PIXFMT_Y10, L_Y10, 2},           {PIXFMT_YUYV, L_PACKED_EVEN, 2},
	{PIXFMT_YVYU, L_PACKED_EVEN, 2},  {PIXFMT_UYVY, L_PACKED_ODD, 2},
	{PIXFMT_VYUY, L_PACKED_ODD, 2},   {PIXFMT_NV12, L_PLANAR, 1},
	{PIXFMT_NV21, L_PLANAR, 1},       {PIXFMT_YUV420, L_PLANAR, 1},
	{PIXFMT_YVU420, L_PLANAR, 1},     {PIXFMT_NV16, L_PLANAR, 1},
	{PIXFMT_NV61, L_PLANAR, 1},
#if TT_HAVE_JPEG
	{PIXFMT_MJPEG, L_JPEG, 0},        {PIXFMT_JPEG, L_JPEG, 0},
#endif
};

struct pixfmt_conv {
	uint32_t fourcc;
	enum layout layout;
	int width, height, pitch;
#if TT_HAVE_JPEG
	tjhandle tj;
#endif
	bool size_logged;
};

static int find(uint32_t fourcc)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (formats[i].fourcc == fourcc)
			return (int)i;
	return -1;
}

bool pixfmt_supported(uint32_t fourcc)
{
	return find(fourcc) >= 0;
}

int pixfmt_rank(uint32_t fourcc)
{
	return find(fourcc);
}

const char *pixfmt_name(uint32_t fourcc, char buf[5])
{
	for (int i = 0; i < 4; i++) {
		char ch = (char)((fourcc >> (8 * i)) & 0x7f);
		buf[i] = isprint((unsigned char)ch) ? ch : '?';
	}
	buf[4] = 0;
	return buf;
}

uint32_t pixfmt_parse(const char *name)
{
	if (!name || !name[0] || strcasecmp(name, "auto") == 0)
		return 0;
	if (strcasecmp(name, "Y16BE") == 0 || strcasecmp(name, "Y16_BE") == 0)
		return PIXFMT_Y16_BE;
	if (strcasecmp(name, "MJPEG") == 0)
		return PIXFMT_MJPEG;
	char c[4] = {' ', ' ', ' ', ' '};
	size_t n = strlen(name);
	if (n > 4)
		return 0;
	for (size_t i = 0; i < n; i++)
		c[i] = (char)toupper((unsigned char)name[i]);
	uint32_t f = PIXFMT_FOURCC(c[0], c[1], c[2], c[3]);
	return pixfmt_supported(f) ? f : 0;
}

struct pixfmt_conv *pixfmt_create(uint32_t fourcc, int width, int height, int bytesperline,
				  int *err)
{
	int e = 0;
	struct pixfmt_conv *pc = NULL;
	int i = find(fourcc);
	if (i < 0) {
		if (fourcc == PIXFMT_MJPEG || fourcc == PIXFMT_JPEG)
			log_error("capture: MJPEG frames need libturbojpeg, which this build lacks");
		e = ERR_UNSUPPORTED;
		goto fail;
	}
	if (width < 1 || height < 1 || width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE ||
	    bytesperline < 0) {
		e = ERR_RANGE;
		goto fail;
	}
	pc = calloc(1, sizeof *pc);
	if (!pc) {
		e = ERR_NOMEM;
		goto fail;
	}
	pc->fourcc = fourcc;
	pc->layout = formats[i].layout;
	pc->width = width;
	pc->height = height;
	int packed = width * formats[i].row_bytes;
	pc->pitch = bytesperline >= packed ? bytesperline : packed;
#if TT_HAVE_JPEG
	if (pc->layout == L_JPEG) {
		pc->tj = tjInitDecompress();
		if (!pc->tj) {
			e = ERR_NOMEM;
			goto fail;
		}
	}
#endif
	if (err)
		*err = 0;
	return pc;
fail:
	pixfmt_destroy(pc);
	if (err)
		*err = e;
	return NULL;
}

void pixfmt_destroy(struct pixfmt_conv *pc)
{
	if (!pc)
		return;
#if TT_HAVE_JPEG
	if (pc->tj)
		tjDestroy(pc->tj);
#endif
	free(pc);
}

#if TT_HAVE_JPEG
static int convert_jpeg(struct pixfmt_conv *pc, const uint8_t *src, size_t len,
			struct image_u8 *dst)
{
	int w = 0, h = 0, sub = 0, cs = 0;
	if (len < 4 || len > (size_t)0x7fffffff ||
	    tjDecompressHeader3(pc->tj, src, (unsigned long)len, &w, &h, &sub, &cs) != 0)
		return ERR_FORMAT;
	if (w != pc->width || h != pc->height) {
		if (!pc->size_logged)
			log_warn("capture: MJPEG frame is %dx%d, not the negotiated %dx%d: skipped",
				 w, h, pc->width, pc->height);
		pc->size_logged = true;
		return ERR_SIZE;
	}
	/* A damaged frame decodes with a warning (tjGetErrorCode() == TJERR_WARNING);
	 * only a hard error is a bad frame. */
	if (tjDecompress2(pc->tj, src, (unsigned long)len, dst->data, w, dst->stride, h, TJPF_GRAY,
			  0) != 0 &&
	    tjGetErrorCode(pc->tj) == TJERR_FATAL)
		return ERR_FORMAT;
	return 0;
}
#endif

int pixfmt_convert(struct pixfmt_conv *pc, const uint8_t *src, size_t len, struct image_u8 *dst)
{
	if (dst->width != pc->width || dst->height != pc->height)
		return ERR_SIZE;
#if TT_HAVE_JPEG
	if (pc->layout == L_JPEG)
		return convert_jpeg(pc, src, len, dst);
#endif
	int i = find(pc->fourcc);
	int w = pc->width, h = pc->height;
	size_t row_min = (size_t)w * (size_t)formats[i].row_bytes;
	/* The luma rows must be all there; a shorter buffer is a torn frame. */
	if (len < (size_t)pc->pitch * (size_t)(h - 1) + row_min)
		return ERR_SIZE;
	for (int y = 0; y < h; y++) {
		const uint8_t *s = src + (size_t)y * (size_t)pc->pitch;
		uint8_t *d = image_u8_row(dst, y);
		switch (pc->layout) {
		case L_GREY:
		case L_PLANAR:
			memcpy(d, s, (size_t)w);
			break;
		case L_Y16LE:
		case L_PACKED_ODD:
			for (int x = 0; x < w; x++)
				d[x] = s[2 * x + 1];
			break;
		case L_Y16BE:
		case L_PACKED_EVEN:
			for (int x = 0; x < w; x++)
				d[x] = s[2 * x];
			break;
		case L_Y10:
		case L_Y12: {
			int shift = pc->layout == L_Y10 ? 2 : 4;
			for (int x = 0; x < w; x++) {
				unsigned v = (unsigned)(s[2 * x] | s[2 * x + 1] << 8) >> shift;
				d[x] = (uint8_t)(v > 255 ? 255 : v);
			}
			break;
		}
		case L_JPEG:
			break;
		}
	}
	return 0;
}
