/* test_image_io.c - PNG and PGM reading/writing: round trips, every PNG colour
 * type and depth (written here with libpng), truncated and lying files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#if TT_HAVE_PNG
#include <png.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/core/err.h"
#include "../src/core/image_io.h"
#include "common/testutil.h"

#if TT_HAVE_PNG
/* ---- a PNG writer into memory, for every colour type and depth ---- */

struct membuf {
	uint8_t *data;
	size_t len, cap;
};

static void mem_write(png_structp png, png_bytep d, size_t n)
{
	struct membuf *b = png_get_io_ptr(png);
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->data = realloc(b->data, b->cap);
		assert_non_null(b->data);
	}
	memcpy(b->data + b->len, d, n);
	b->len += n;
}

static void mem_flush(png_structp png) { (void)png; }

/* rows: h rows of w * channels * (depth/8 or packed) bytes each. */
static struct membuf png_encode(int w, int h, int depth, int ctype, uint8_t **rows,
				const png_color *palette, int n_palette, const uint8_t *trns,
				int n_trns, int interlace)
{
	struct membuf b = {0};
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	assert_non_null(png);
	assert_non_null(info);
	if (setjmp(png_jmpbuf(png)))
		fail_msg("libpng write failed in the test");
	png_set_write_fn(png, &b, mem_write, mem_flush);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, ctype,
		     interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	if (palette)
		png_set_PLTE(png, info, palette, n_palette);
	if (trns)
		png_set_tRNS(png, info, trns, n_trns, NULL);
	png_write_info(png, info);
	png_write_image(png, rows);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	return b;
}

/* CRC-32 as PNG chunks use it (bitwise; zlib is not linked into the tests). */
static uint32_t png_crc(const uint8_t *d, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= d[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return c ^ 0xffffffffu;
}

static uint8_t **rows_alloc(int h, size_t rowbytes)
{
	uint8_t **rows = calloc((size_t)h, sizeof *rows);
	for (int y = 0; y < h; y++)
		rows[y] = calloc(1, rowbytes);
	return rows;
}

static void rows_free(uint8_t **rows, int h)
{
	for (int y = 0; y < h; y++)
		free(rows[y]);
	free(rows);
}

/* image_u8_sample: exact on pixels, linear between them, clamped outside. */
static void test_sample_bilinear_clamped(void **state)
{
	(void)state;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 3, 2), 0);
	const uint8_t px[2][3] = {{0, 100, 200}, {50, 150, 250}};
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < 3; x++)
			image_u8_row(&img, y)[x] = px[y][x];
	assert_true(image_u8_sample(&img, 1, 1) == 150.0);
	assert_true(image_u8_sample(&img, 0.5, 0) == 50.0);
	assert_true(image_u8_sample(&img, 0.5, 0.5) == 75.0);
	assert_true(image_u8_sample(&img, 2, 0.25) == 212.5);
	assert_true(image_u8_sample(&img, -3, -3) == 0.0);
	assert_true(image_u8_sample(&img, 9, 9) == 250.0);
	image_u8_free(&img);
}

/* image_u8_map: every pixel of the image through the table, and nothing
 * past a row's width (a view with a wider stride). */
static void test_map_through_table(void **state)
{
	(void)state;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, 7, 3), 0);
	uint8_t lut[256];
	for (int v = 0; v < 256; v++)
		lut[v] = (uint8_t)(255 - v);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 7; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(40 * y + x);
	struct image_u8 view = img;
	view.width = 5;
	image_u8_map(&view, lut);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 7; x++)
			assert_int_equal(image_u8_row(&img, y)[x], x < 5 ? 255 - (40 * y + x) : 40 * y + x);
	image_u8_free(&img);
}

/* image_u8_gamma_lut: black and white stay; exponent 1 is the identity;
 * 1 / 2.2 encodes (mid-grey 128 becomes 186, every level at least as
 * bright, the table non-decreasing) and 2.2 undoes it within a level
 * above the darkest levels, where encoding spreads each level over
 * several. */
static void test_gamma_lut(void **state)
{
	(void)state;
	uint8_t id[256], enc[256], dec[256];
	image_u8_gamma_lut(id, 1.0);
	image_u8_gamma_lut(enc, 1.0 / 2.2);
	image_u8_gamma_lut(dec, 2.2);
	assert_int_equal(enc[0], 0);
	assert_int_equal(enc[255], 255);
	assert_int_equal(dec[0], 0);
	assert_int_equal(dec[255], 255);
	assert_int_equal(enc[128], 186);
	for (int v = 0; v < 256; v++) {
		assert_int_equal(id[v], v);
		assert_true(enc[v] >= v);
		assert_true(dec[v] <= v);
		if (v > 0)
			assert_true(enc[v] >= enc[v - 1]);
		if (v >= 16)
			assert_true(abs(dec[enc[v]] - v) <= 1);
	}
}

static void test_png_grey8_roundtrip(void **state)
{
	(void)state;
	const char *dir = test_tmpdir();
	assert_non_null(dir);
	struct image_u8 a, b;
	uint32_t seed = 7;
	assert_int_equal(image_u8_alloc(&a, 37, 23), 0);
	test_fill_random(&a, &seed, 0, 255);
	char path[600];
	snprintf(path, sizeof path, "%s/a.png", dir);
	assert_int_equal(image_write(path, &a), 0);
	assert_int_equal(image_read(path, &b), 0);
	assert_int_equal(b.width, 37);
	assert_int_equal(b.height, 23);
	for (int y = 0; y < 23; y++)
		assert_memory_equal(image_u8_row(&a, y), image_u8_row(&b, y), 37);
	image_u8_free(&b);
	snprintf(path, sizeof path, "%s/a.pgm", dir);
	assert_int_equal(image_write(path, &a), 0);
	assert_int_equal(image_read(path, &b), 0);
	assert_int_equal(b.width, 37);
	for (int y = 0; y < 23; y++)
		assert_memory_equal(image_u8_row(&a, y), image_u8_row(&b, y), 37);
	FILE *f = fopen(path, "rb");
	char magic[3] = {0};
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_string_equal(magic, "P5");
	image_u8_free(&a);
	image_u8_free(&b);
}

static void test_png_rgb_and_rgba(void **state)
{
	(void)state;
	int w = 4, h = 2;
	uint8_t **rows = rows_alloc(h, (size_t)w * 4);
	/* pure red, green, blue, white; then a grey ramp */
	const uint8_t px[8][4] = {{255, 0, 0, 255},   {0, 255, 0, 0},     {0, 0, 255, 128},
				  {255, 255, 255, 255}, {10, 10, 10, 255}, {100, 100, 100, 255},
				  {200, 200, 200, 255}, {0, 0, 0, 255}};
	for (int i = 0; i < 8; i++)
		memcpy(rows[i / 4] + (i % 4) * 4, px[i], 4);
	struct membuf m = png_encode(w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, rows, NULL, 0, NULL, 0, 0);
	struct image_u8 img;
	assert_int_equal(image_read_mem(m.data, m.len, "rgba", &img), 0);
	assert_int_equal(img.width, 4);
	/* ITU-R 601: red 0.299, green 0.587, blue 0.114 (alpha ignored) */
	assert_in_range(image_u8_row(&img, 0)[0], 74, 78);
	assert_in_range(image_u8_row(&img, 0)[1], 148, 152);
	assert_in_range(image_u8_row(&img, 0)[2], 27, 31);
	assert_int_equal(image_u8_row(&img, 0)[3], 255);
	assert_int_equal(image_u8_row(&img, 1)[0], 10);
	assert_int_equal(image_u8_row(&img, 1)[1], 100);
	assert_int_equal(image_u8_row(&img, 1)[2], 200);
	assert_int_equal(image_u8_row(&img, 1)[3], 0);
	image_u8_free(&img);
	free(m.data);

	/* the same as RGB 8-bit without alpha, interlaced */
	for (int i = 0; i < 8; i++)
		memcpy(rows[i / 4] + (i % 4) * 3, px[i], 3);
	m = png_encode(w, h, 8, PNG_COLOR_TYPE_RGB, rows, NULL, 0, NULL, 0, 1);
	assert_int_equal(image_read_mem(m.data, m.len, "rgb", &img), 0);
	assert_in_range(image_u8_row(&img, 0)[0], 74, 78);
	assert_int_equal(image_u8_row(&img, 1)[2], 200);
	image_u8_free(&img);
	free(m.data);
	rows_free(rows, h);
}

static void test_png_grey16_takes_high_byte(void **state)
{
	(void)state;
	int w = 3, h = 1;
	uint8_t **rows = rows_alloc(h, (size_t)w * 2);
	const uint16_t v[3] = {0x12ff, 0xab00, 0xffff};
	for (int x = 0; x < 3; x++) {
		rows[0][2 * x] = (uint8_t)(v[x] >> 8);
		rows[0][2 * x + 1] = (uint8_t)v[x];
	}
	struct membuf m = png_encode(w, h, 16, PNG_COLOR_TYPE_GRAY, rows, NULL, 0, NULL, 0, 0);
	struct image_u8 img;
	assert_int_equal(image_read_mem(m.data, m.len, "g16", &img), 0);
	assert_int_equal(img.data[0], 0x12);
	assert_int_equal(img.data[1], 0xab);
	assert_int_equal(img.data[2], 0xff);
	image_u8_free(&img);
	free(m.data);
	rows_free(rows, h);

	/* 16-bit grey + alpha */
	rows = rows_alloc(1, 4 * 1);
	rows[0][0] = 0x80;
	rows[0][1] = 0x7f;
	rows[0][2] = 0x00;
	rows[0][3] = 0x10;
	m = png_encode(1, 1, 16, PNG_COLOR_TYPE_GRAY_ALPHA, rows, NULL, 0, NULL, 0, 0);
	assert_int_equal(image_read_mem(m.data, m.len, "ga16", &img), 0);
	assert_int_equal(img.data[0], 0x80);
	image_u8_free(&img);
	free(m.data);
	rows_free(rows, 1);
}

static void test_png_palette_and_low_depth(void **state)
{
	(void)state;
	png_color pal[4] = {{0, 0, 0}, {255, 255, 255}, {255, 0, 0}, {128, 128, 128}};
	uint8_t trns[4] = {255, 0, 255, 255};
	uint8_t **rows = rows_alloc(1, 1);
	rows[0][0] = 0x1b; /* 2-bit indices 0,1,2,3 */
	struct membuf m = png_encode(4, 1, 2, PNG_COLOR_TYPE_PALETTE, rows, pal, 4, trns, 4, 0);
	struct image_u8 img;
	assert_int_equal(image_read_mem(m.data, m.len, "pal", &img), 0);
	assert_int_equal(img.width, 4);
	assert_int_equal(img.data[0], 0);
	assert_int_equal(img.data[1], 255);
	assert_in_range(img.data[2], 74, 78);
	assert_int_equal(img.data[3], 128);
	image_u8_free(&img);
	free(m.data);

	/* 1-bit grey: 1 0 1 1 0 0 0 1 -> 255 0 255 255 0 0 0 255 */
	rows[0][0] = 0xb1;
	m = png_encode(8, 1, 1, PNG_COLOR_TYPE_GRAY, rows, NULL, 0, NULL, 0, 0);
	assert_int_equal(image_read_mem(m.data, m.len, "g1", &img), 0);
	const uint8_t want[8] = {255, 0, 255, 255, 0, 0, 0, 255};
	assert_memory_equal(img.data, want, 8);
	image_u8_free(&img);
	free(m.data);
	rows_free(rows, 1);
}

static void test_png_truncated_is_format_error(void **state)
{
	(void)state;
	int w = 64, h = 64;
	uint8_t **rows = rows_alloc(h, (size_t)w);
	uint32_t seed = 3;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			rows[y][x] = (uint8_t)test_rand(&seed);
	struct membuf m = png_encode(w, h, 8, PNG_COLOR_TYPE_GRAY, rows, NULL, 0, NULL, 0, 0);
	struct image_u8 img;
	for (size_t cut = 0; cut < m.len; cut += (cut < 64 ? 1 : 97)) {
		int e = image_read_mem(m.data, cut, "truncated.png", &img);
		assert_int_equal(e, ERR_FORMAT);
		assert_null(img.data);
	}
	/* a flipped byte in the data breaks a CRC or the zlib stream */
	m.data[m.len / 2] ^= 0x55;
	assert_int_equal(image_read_mem(m.data, m.len, "corrupt.png", &img), ERR_FORMAT);
	free(m.data);
	rows_free(rows, h);
}

/* A PNG whose header claims a huge image but whose body is a few bytes. */
static void test_png_lying_header(void **state)
{
	(void)state;
	uint8_t **rows = rows_alloc(1, 8);
	struct membuf m = png_encode(8, 1, 8, PNG_COLOR_TYPE_GRAY, rows, NULL, 0, NULL, 0, 0);
	/* IHDR is at offset 8 (length) 12 (type) 16 (width) 20 (height); patch the
	 * height and fix the CRC so only the size check can catch it. */
	uint32_t hgt = 8000;
	m.data[20] = (uint8_t)(hgt >> 24);
	m.data[21] = (uint8_t)(hgt >> 16);
	m.data[22] = (uint8_t)(hgt >> 8);
	m.data[23] = (uint8_t)hgt;
	m.data[18] = 0x20; /* width 8192 */
	m.data[19] = 0x00;
	uint32_t crc = png_crc(m.data + 12, 17);
	m.data[29] = (uint8_t)(crc >> 24);
	m.data[30] = (uint8_t)(crc >> 16);
	m.data[31] = (uint8_t)(crc >> 8);
	m.data[32] = (uint8_t)crc;
	struct image_u8 img;
	assert_int_equal(image_read_mem(m.data, m.len, "lying.png", &img), ERR_FORMAT);
	assert_null(img.data);
	/* and sides past IMAGE_MAX_SIDE are refused */
	uint32_t big = 100000;
	m.data[16] = (uint8_t)(big >> 24);
	m.data[17] = (uint8_t)(big >> 16);
	m.data[18] = (uint8_t)(big >> 8);
	m.data[19] = (uint8_t)big;
	crc = png_crc(m.data + 12, 17);
	m.data[29] = (uint8_t)(crc >> 24);
	m.data[30] = (uint8_t)(crc >> 16);
	m.data[31] = (uint8_t)(crc >> 8);
	m.data[32] = (uint8_t)crc;
	assert_int_equal(image_read_mem(m.data, m.len, "huge.png", &img), ERR_FORMAT);
	free(m.data);
	rows_free(rows, 1);
}

#else
/* Without libpng a PNG is refused by name, not misread as something else. */
static void test_png_unsupported(void **state)
{
	(void)state;
	static const uint8_t sig[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	struct image_u8 img;
	assert_int_equal(image_read_mem(sig, sizeof sig, "a.png", &img), ERR_UNSUPPORTED);
	uint8_t px[4] = {0};
	struct image_u8 a = {.width = 2, .height = 2, .stride = 2, .data = px};
	char path[512];
	snprintf(path, sizeof path, "%s/a.png", test_tmpdir());
	assert_int_equal(image_write(path, &a), ERR_UNSUPPORTED);
	assert_int_equal(access(path, F_OK), -1);
}
#endif

static void test_pgm_comments_and_maxval(void **state)
{
	(void)state;
	const char p8[] = "P5\n# made by hand\n3 # width\n 2\n# max\n255\n\x01\x02\x03\x04\x05\x06";
	struct image_u8 img;
	assert_int_equal(image_read_mem(p8, sizeof p8 - 1, "c.pgm", &img), 0);
	assert_int_equal(img.width, 3);
	assert_int_equal(img.height, 2);
	assert_int_equal(image_u8_row(&img, 1)[2], 6);
	image_u8_free(&img);

	const char p16[] = "P5 2 1 65535 \x12\x34\xfe\xdc";
	assert_int_equal(image_read_mem(p16, sizeof p16 - 1, "16.pgm", &img), 0);
	assert_int_equal(img.data[0], 0x12);
	assert_int_equal(img.data[1], 0xfe);
	image_u8_free(&img);

	const char p10[] = "P5 3 1 1023\n\x03\xff\x00\x00\x01\xff";
	assert_int_equal(image_read_mem(p10, sizeof p10 - 1, "10.pgm", &img), 0);
	assert_int_equal(img.data[0], 255);
	assert_int_equal(img.data[1], 0);
	assert_in_range(img.data[2], 127, 128);
	image_u8_free(&img);

	const char p1[] = "P5 2 1 1\n\x00\x01";
	assert_int_equal(image_read_mem(p1, sizeof p1 - 1, "1.pgm", &img), 0);
	assert_int_equal(img.data[1], 255);
	image_u8_free(&img);
}

static void test_pgm_lying_and_bad(void **state)
{
	(void)state;
	struct image_u8 img;
	const char *bad[] = {
		"P5 4 4 255\n\x01\x02",           /* too few samples */
		"P5 2 2 65535\n\x01\x02\x03\x04", /* 16-bit needs 8 bytes */
		"P5 0 4 255\n",                   /* zero width */
		"P5 4 4 0\n",                     /* zero maxval */
		"P5 4 4 65536\n",                 /* maxval too big */
		"P5 4 4",                         /* header cut short */
		"P5 4 4 255",                     /* no separator */
		"P5 99999999999 1 255\n",         /* absurd width */
		"P5 -4 4 255\n",                  /* negative */
		"P2 2 1 255\n1 2\n",              /* ASCII PGM: not supported */
		"",
		"GIF89a",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(image_read_mem(bad[i], strlen(bad[i]), "bad.pgm", &img), ERR_FORMAT);
		assert_null(img.data);
	}
	assert_int_equal(image_read("/nonexistent/tabletrack/x.png", &img), ERR_IO);
}

/* A header claiming IMAGE_MAX_SIDE squared, with no data behind it, must be
 * refused before anything is allocated: the child runs under a data limit
 * that a 64 MiB image would exceed, so an allocation would show as
 * ERR_NOMEM (or a crash) instead of ERR_FORMAT. */
static void test_huge_header_no_allocation(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	skip();
#endif
	char pgm[64];
	int n = snprintf(pgm, sizeof pgm, "P5 %d %d 65535\n\x01\x02", IMAGE_MAX_SIDE,
			 IMAGE_MAX_SIDE);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {32u << 20, 32u << 20};
		setrlimit(RLIMIT_DATA, &rl);
		struct image_u8 img;
		int e = image_read_mem(pgm, (size_t)n, "huge.pgm", &img);
		_exit(e == ERR_FORMAT ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_write_rejects_empty(void **state)
{
	(void)state;
	struct image_u8 none = {0};
	assert_int_equal(image_write("/tmp/never-written.png", &none), ERR_RANGE);
	struct image_u8 a;
	assert_int_equal(image_u8_alloc(&a, 2, 2), 0);
	assert_int_equal(image_write("/nonexistent/dir/x.png", &a), TT_HAVE_PNG ? ERR_IO : ERR_UNSUPPORTED);
	image_u8_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if TT_HAVE_PNG
		cmocka_unit_test(test_sample_bilinear_clamped),
		cmocka_unit_test(test_map_through_table),
		cmocka_unit_test(test_gamma_lut),
		cmocka_unit_test(test_png_grey8_roundtrip),
		cmocka_unit_test(test_png_rgb_and_rgba),
		cmocka_unit_test(test_png_grey16_takes_high_byte),
		cmocka_unit_test(test_png_palette_and_low_depth),
		cmocka_unit_test(test_png_truncated_is_format_error),
		cmocka_unit_test(test_png_lying_header),
#else
		cmocka_unit_test(test_png_unsupported),
#endif
		cmocka_unit_test(test_pgm_comments_and_maxval),
		cmocka_unit_test(test_pgm_lying_and_bad),
		cmocka_unit_test(test_huge_header_no_allocation),
		cmocka_unit_test(test_write_rejects_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
