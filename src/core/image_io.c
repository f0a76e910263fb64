#include "image_io.h"

#include <errno.h>
#include <fcntl.h>
#if TT_HAVE_PNG
#include <png.h>
#endif
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

/* A PNG of the largest side, 16-bit RGBA, stored uncompressed, is a little
 * over 512 MiB; nothing legitimate is larger. */
#define IMAGE_FILE_MAX ((size_t)IMAGE_MAX_SIDE * IMAGE_MAX_SIDE * 8 + (64u << 20))

/* zlib cannot expand data by more than about 1032:1, so a header that claims
 * more raw bytes than that from the bytes it has is lying; refusing it before
 * allocating keeps memory bounded by the input length. */
#define ZLIB_MAX_RATIO 1040u

/* ---------------------------------------------------------------- PNG ---- */

#if TT_HAVE_PNG

struct png_mem {
	const uint8_t *data;
	size_t len, pos;
	char msg[160];
	jmp_buf jmp;
};

static void png_mem_read(png_structp png, png_bytep out, size_t n)
{
	struct png_mem *m = png_get_io_ptr(png);
	if (n > m->len - m->pos) {
		snprintf(m->msg, sizeof m->msg, "truncated (needs %zu bytes at offset %zu of %zu)", n,
			 m->pos, m->len);
		longjmp(m->jmp, 1);
	}
	memcpy(out, m->data + m->pos, n);
	m->pos += n;
}

static void png_on_error(png_structp png, png_const_charp msg)
{
	struct png_mem *m = png_get_error_ptr(png);
	if (!m->msg[0])
		snprintf(m->msg, sizeof m->msg, "%s", msg);
	longjmp(m->jmp, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* Everything written between setjmp and longjmp lives in this struct (not in
 * locals), so it keeps its value after a longjmp without volatile. */
struct png_job {
	png_structp png;
	png_infop info;
	png_bytep *rows;
	struct image_u8 img;
};

static int png_read_job(struct png_mem *m, struct png_job *j, const char *name)
{
	j->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, m, png_on_error, png_on_warning);
	if (!j->png)
		return ERR_NOMEM;
	j->info = png_create_info_struct(j->png);
	if (!j->info)
		return ERR_NOMEM;
	if (setjmp(m->jmp)) {
		log_error("image: %s: bad PNG: %s", name, m->msg[0] ? m->msg : "unknown error");
		return ERR_FORMAT;
	}
	png_set_read_fn(j->png, m, png_mem_read);
	png_set_user_limits(j->png, IMAGE_MAX_SIDE, IMAGE_MAX_SIDE);
	png_set_chunk_malloc_max(j->png, 8u << 20);
	png_read_info(j->png, j->info);

	png_uint_32 w = png_get_image_width(j->png, j->info);
	png_uint_32 h = png_get_image_height(j->png, j->info);
	int depth = png_get_bit_depth(j->png, j->info);
	int ctype = png_get_color_type(j->png, j->info);
	int channels = png_get_channels(j->png, j->info);
	if (w < 1 || h < 1 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
		snprintf(m->msg, sizeof m->msg, "size %ux%u outside 1..%d", (unsigned)w, (unsigned)h,
			 IMAGE_MAX_SIDE);
		longjmp(m->jmp, 1);
	}
	uint64_t raw = (uint64_t)h * ((uint64_t)w * (uint64_t)channels * (uint64_t)depth / 8 + 2);
	if (raw > (uint64_t)m->len * ZLIB_MAX_RATIO + 4096) {
		snprintf(m->msg, sizeof m->msg,
			 "header claims %ux%u but the file has only %zu bytes", (unsigned)w,
			 (unsigned)h, m->len);
		longjmp(m->jmp, 1);
	}

	if (ctype == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(j->png);
	if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(j->png);
	if (depth == 16)
		png_set_strip_16(j->png);
	/* Transparency is dropped, not composited: the camera frame has none and
	 * a symbol sheet's alpha would only darken its edges. */
	if (png_get_valid(j->png, j->info, PNG_INFO_tRNS) || (ctype & PNG_COLOR_MASK_ALPHA))
		png_set_strip_alpha(j->png);
	if (ctype == PNG_COLOR_TYPE_PALETTE || (ctype & PNG_COLOR_MASK_COLOR))
		png_set_rgb_to_gray_fixed(j->png, 1, 29900, 58700);
	png_set_interlace_handling(j->png);
	png_read_update_info(j->png, j->info);
	if (png_get_rowbytes(j->png, j->info) != w || png_get_channels(j->png, j->info) != 1) {
		snprintf(m->msg, sizeof m->msg, "unexpected layout after conversion");
		longjmp(m->jmp, 1);
	}

	int e = image_u8_alloc(&j->img, (int)w, (int)h);
	if (e)
		return e;
	j->rows = malloc(sizeof(png_bytep) * h);
	if (!j->rows)
		return ERR_NOMEM;
	for (png_uint_32 y = 0; y < h; y++)
		j->rows[y] = image_u8_row(&j->img, (int)y);
	png_read_image(j->png, j->rows);
	return 0;
}

static int png_read_mem(const void *data, size_t len, const char *name, struct image_u8 *img)
{
	struct png_mem *m = calloc(1, sizeof *m);
	struct png_job job = {0};
	if (!m)
		return ERR_NOMEM;
	m->data = data;
	m->len = len;
	int e = png_read_job(m, &job, name);
	png_destroy_read_struct(&job.png, &job.info, NULL);
	free(job.rows);
	free(m);
	if (e) {
		image_u8_free(&job.img);
		return e;
	}
	*img = job.img;
	return 0;
}
#endif

/* ---------------------------------------------------------------- PGM ---- */

/* Reads one header integer, skipping whitespace and '#' comments. */
static int pgm_token(const uint8_t *d, size_t len, size_t *pos, long *out)
{
	size_t p = *pos;
	for (;;) {
		while (p < len && (d[p] == ' ' || d[p] == '\t' || d[p] == '\n' || d[p] == '\r' ||
				   d[p] == '\v' || d[p] == '\f'))
			p++;
		if (p < len && d[p] == '#') {
			while (p < len && d[p] != '\n')
				p++;
			continue;
		}
		break;
	}
	if (p >= len || d[p] < '0' || d[p] > '9')
		return ERR_FORMAT;
	long v = 0;
	while (p < len && d[p] >= '0' && d[p] <= '9') {
		v = v * 10 + (d[p] - '0');
		if (v > 1000000)
			return ERR_FORMAT;
		p++;
	}
	*out = v;
	*pos = p;
	return 0;
}

static int pgm_read_mem(const uint8_t *d, size_t len, const char *name, struct image_u8 *img)
{
	size_t p = 2;
	long w, h, maxval;
	if (pgm_token(d, len, &p, &w) || pgm_token(d, len, &p, &h) ||
	    pgm_token(d, len, &p, &maxval)) {
		log_error("image: %s: bad PGM header", name);
		return ERR_FORMAT;
	}
	if (w < 1 || h < 1 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE) {
		log_error("image: %s: PGM size %ldx%ld outside 1..%d", name, w, h, IMAGE_MAX_SIDE);
		return ERR_FORMAT;
	}
	if (maxval < 1 || maxval > 65535) {
		log_error("image: %s: PGM maxval %ld outside 1..65535", name, maxval);
		return ERR_FORMAT;
	}
	/* Exactly one whitespace byte separates the header from the samples. */
	if (p >= len || !(d[p] == ' ' || d[p] == '\t' || d[p] == '\n' || d[p] == '\r')) {
		log_error("image: %s: bad PGM header", name);
		return ERR_FORMAT;
	}
	p++;
	size_t bps = maxval > 255 ? 2 : 1;
	size_t need = (size_t)w * (size_t)h * bps;
	if (len - p < need) {
		log_error("image: %s: PGM truncated: header says %ldx%ld (%zu bytes), file has %zu",
			  name, w, h, need, len - p);
		return ERR_FORMAT;
	}
	int e = image_u8_alloc(img, (int)w, (int)h);
	if (e)
		return e;
	const uint8_t *s = d + p;
	for (long y = 0; y < h; y++) {
		uint8_t *row = image_u8_row(img, (int)y);
		const uint8_t *src = s + (size_t)y * (size_t)w * bps;
		if (maxval == 255) {
			memcpy(row, src, (size_t)w);
		} else if (maxval == 65535) {
			for (long x = 0; x < w; x++)
				row[x] = src[2 * x];
		} else {
			for (long x = 0; x < w; x++) {
				long v = bps == 2 ? (src[2 * x] << 8 | src[2 * x + 1]) : src[x];
				if (v > maxval)
					v = maxval;
				row[x] = (uint8_t)((v * 255 + maxval / 2) / maxval);
			}
		}
	}
	return 0;
}

/* --------------------------------------------------------------- public -- */

int image_read_mem(const void *data, size_t len, const char *name, struct image_u8 *img)
{
	const uint8_t *d = data;
	memset(img, 0, sizeof *img);
	if (!name)
		name = "(memory)";
	if (len >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) {
#if TT_HAVE_PNG
		return png_read_mem(data, len, name, img);
#else
		log_error("image: %s: PNG needs libpng, which this build lacks (use PGM frames)", name);
		return ERR_UNSUPPORTED;
#endif
	}
	if (len >= 2 && d[0] == 'P' && d[1] == '5')
		return pgm_read_mem(d, len, name, img);
	log_error("image: %s: neither PNG nor binary PGM (P5)", name);
	return ERR_FORMAT;
}

int image_file_open(const char *path, size_t *size)
{
	/* O_NONBLOCK: a FIFO named like an image must not block the reader in
	 * open(); the check below then refuses it. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		log_error("image: %s: %s", path, strerror(errno));
		return ERR_IO;
	}
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		log_error("image: %s: not a regular file", path);
		e = ERR_IO;
	} else if ((uint64_t)st.st_size > IMAGE_FILE_MAX) {
		log_error("image: %s: file of %lld bytes is too large", path, (long long)st.st_size);
		e = ERR_FORMAT;
	}
	if (e) {
		close(fd);
		return e;
	}
	*size = (size_t)st.st_size;
	return fd;
}

int image_file_pread(int fd, const char *path, void *buf, size_t len, size_t offset, size_t *got)
{
	*got = 0;
	while (*got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + *got, len - *got, (off_t)(offset + *got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error("image: %s: %s", path, strerror(errno));
			return ERR_IO;
		}
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

int image_read_file(const char *path, uint8_t **buf, size_t *cap, size_t *len)
{
	size_t want = 0;
	int fd = image_file_open(path, &want), e = 0;
	if (fd < 0)
		return fd;
	if (!*buf || *cap < (want ? want : 1)) {
		uint8_t *nb = realloc(*buf, want ? want : 1);
		if (!nb) {
			e = ERR_NOMEM;
			goto done;
		}
		*buf = nb;
		*cap = want ? want : 1;
	}
	e = image_file_pread(fd, path, *buf, want, 0, len);
done:
	close(fd);
	return e;
}

int image_read(const char *path, struct image_u8 *img)
{
	memset(img, 0, sizeof *img);
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;
	int e = image_read_file(path, &buf, &cap, &len);
	if (!e)
		e = image_read_mem(buf, len, path, img);
	free(buf);
	return e;
}

int image_pgm_plain(const void *data, size_t len, int *width, int *height, size_t *offset)
{
	return image_pgm_header(data, len, len, width, height, offset);
}

int image_pgm_header(const void *data, size_t len, size_t file_len, int *width, int *height, size_t *offset)
{
	const uint8_t *d = data;
	size_t p = 2;
	long w, h, maxval;
	if (len < 2 || d[0] != 'P' || d[1] != '5' || pgm_token(d, len, &p, &w) || pgm_token(d, len, &p, &h) ||
	    pgm_token(d, len, &p, &maxval) || maxval != 255 || w < 1 || h < 1 || w > IMAGE_MAX_SIDE ||
	    h > IMAGE_MAX_SIDE || p >= len || !(d[p] == ' ' || d[p] == '\t' || d[p] == '\n' || d[p] == '\r') ||
	    file_len < len || file_len - p - 1 < (size_t)w * (size_t)h)
		return ERR_FORMAT;
	*width = (int)w;
	*height = (int)h;
	*offset = p + 1;
	return 0;
}

/* ---------------------------------------------------------------- write -- */

#if TT_HAVE_PNG
struct png_wjob {
	png_structp png;
	png_infop info;
	jmp_buf jmp;
	char msg[160];
};

static void png_on_werror(png_structp png, png_const_charp msg)
{
	struct png_wjob *j = png_get_error_ptr(png);
	snprintf(j->msg, sizeof j->msg, "%s", msg);
	longjmp(j->jmp, 1);
}

static int png_write_job(struct png_wjob *j, FILE *f, const struct image_u8 *img)
{
	j->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, j, png_on_werror, png_on_warning);
	if (!j->png)
		return ERR_NOMEM;
	j->info = png_create_info_struct(j->png);
	if (!j->info)
		return ERR_NOMEM;
	if (setjmp(j->jmp))
		return ERR_IO;
	png_init_io(j->png, f);
	/* Dumps are written every frame when asked; fast compression keeps
	 * --dump from stalling the pipeline. */
	png_set_compression_level(j->png, 1);
	png_set_filter(j->png, 0, PNG_FILTER_SUB);
	png_set_IHDR(j->png, j->info, (png_uint_32)img->width, (png_uint_32)img->height, 8,
		     PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	png_write_info(j->png, j->info);
	for (int y = 0; y < img->height; y++)
		png_write_row(j->png, image_u8_row(img, y));
	png_write_end(j->png, NULL);
	return 0;
}
#endif

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

int image_write(const char *path, const struct image_u8 *img)
{
	if (!img || !img->data || img->width < 1 || img->height < 1 ||
	    img->width > IMAGE_MAX_SIDE || img->height > IMAGE_MAX_SIDE) {
		log_error("image: %s: nothing to write", path);
		return ERR_RANGE;
	}
	if (!TT_HAVE_PNG && has_suffix(path, ".png")) {
		log_error("image: %s: PNG needs libpng, which this build lacks (write .pgm)", path);
		return ERR_UNSUPPORTED;
	}
	FILE *f = fopen(path, "wb");
	if (!f) {
		log_error("image: %s: %s", path, strerror(errno));
		return ERR_IO;
	}
	int e = 0;
	if (has_suffix(path, ".png")) {
#if TT_HAVE_PNG
		struct png_wjob *j = calloc(1, sizeof *j);
		if (j) {
			e = png_write_job(j, f, img);
			if (e == ERR_IO)
				log_error("image: %s: PNG write failed: %s", path, j->msg);
			png_destroy_write_struct(&j->png, &j->info);
			free(j);
		} else {
			e = ERR_NOMEM;
		}
#endif
	} else {
		fprintf(f, "P5\n%d %d\n255\n", img->width, img->height);
		for (int y = 0; y < img->height; y++)
			if (fwrite(image_u8_row(img, y), 1, (size_t)img->width, f) != (size_t)img->width)
				break;
	}
	if (ferror(f) && !e) {
		log_error("image: %s: write failed", path);
		e = ERR_IO;
	}
	if (fclose(f) != 0 && !e) {
		log_error("image: %s: %s", path, strerror(errno));
		e = ERR_IO;
	}
	return e;
}
