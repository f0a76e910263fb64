/* test_capture.c - the capture room: folder/file/raw/demo/faulty sources,
 * pixel format conversions, and the V4L2 backend's state machine driven by an
 * IN-PROCESS FAKE CAMERA (no hardware: the fake answers the ioctls, hands out
 * buffers and injects scripted faults). A real camera is tested only when
 * TABLETRACK_TEST_DEVICE=/dev/videoN is set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <linux/videodev2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#if TT_HAVE_JPEG
#include <turbojpeg.h>
#endif
#include <unistd.h>

#include "../src/capture/capture.h"
#include "../src/capture/pixfmt.h"
#include "../src/capture/v4l2_sys.h"
#include "../src/config/config.h"
#include "../src/core/err.h"
#include "../src/core/image_io.h"
#include "common/testutil.h"

/* MJPEG needs libturbojpeg; tests of it skip in a build without. */
#if TT_HAVE_JPEG
#define NEED_JPEG()
#else
#define NEED_JPEG() skip()
static void tjFree(unsigned char *p) { free(p); }
#endif
/* The folder and file sources are tested with PNG frames. */
#if TT_HAVE_PNG
#define NEED_PNG()
#else
#define NEED_PNG() skip()
#endif

static struct capture *open_src(const char *source, bool loop, int *err)
{
	struct capture_config cfg = {.loop = loop, .fps = 30, .n_buffers = 4};
	snprintf(cfg.source, sizeof cfg.source, "%s", source);
	snprintf(cfg.format, sizeof cfg.format, "auto");
	return capture_open(&cfg, err);
}

static void write_img(const char *dir, const char *name, int w, int h, int value)
{
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		memset(image_u8_row(&img, y), value, (size_t)w);
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(image_write(path, &img), 0);
	image_u8_free(&img);
}

static void write_bytes(const char *dir, const char *name, const char *bytes)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(bytes, f);
	fclose(f);
}

/* ------------------------------------------------------------- folder -- */

static void test_folder_order_and_bad_frames(void **state)
{
	NEED_PNG();
	(void)state;
	const char *tmp = test_tmpdir();
	assert_non_null(tmp);
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tmp);
	write_img(dir, "003.pgm", 16, 8, 30);
	write_img(dir, "001.png", 16, 8, 10);
	write_img(dir, "002.PGM", 16, 8, 20);
	write_img(dir, "010.pgm", 16, 8, 100);
	write_img(dir, "007.pgm", 17, 8, 70);          /* another size: skipped */
	write_bytes(dir, "005.pgm", "P5 16 8 255\nxx"); /* truncated: skipped */
	write_bytes(dir, "notes.txt", "not an image");
	write_img(dir, "004.png", 16, 8, 40);

	int err = 1;
	struct capture *c = open_src("", false, &err);
	assert_null(c);
	char src[600];
	snprintf(src, sizeof src, "folder:%s", dir);
	c = open_src(src, false, &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	assert_true(capture_is_finite(c));
	assert_non_null(strstr(capture_describe(c), "7 images"));

	/* the 004 file disappears after the scan: a bad frame, not a stop */
	char gone[1024];
	snprintf(gone, sizeof gone, "%s/004.png", dir);
	assert_int_equal(unlink(gone), 0);

	const int want[] = {10, 20, 30, ERR_FORMAT, ERR_FORMAT, ERR_FORMAT, 100, ERR_EOF, ERR_EOF};
	const char *names[] = {"001.png", "002.PGM", "003.pgm", "", "", "", "010.pgm"};
	uint64_t seq = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct frame *f = NULL;
		int e = capture_read(c, &f);
		if (want[i] < 0) {
			assert_int_equal(e, want[i]);
			assert_null(f);
			continue;
		}
		assert_int_equal(e, 0);
		assert_int_equal(f->img.width, 16);
		assert_int_equal(f->img.height, 8);
		assert_int_equal(image_u8_row(&f->img, 7)[15], want[i]);
		assert_string_equal(f->name, names[i]);
		assert_int_equal(f->seq, seq++);
		assert_true(f->t_capture_ns > 0);
	}
	struct capture_stats st;
	capture_get_stats(c, &st);
	assert_int_equal(st.n_frames, 4);
	assert_int_equal(st.n_bad, 3);
	capture_close(c);

	/* loop: 010 is followed by 001 again, and the source is not finite */
	c = open_src(src, true, &err);
	assert_non_null(c);
	assert_false(capture_is_finite(c));
	int values[12], n = 0;
	for (int i = 0; i < 20 && n < 12; i++) {
		struct frame *f;
		if (capture_read(c, &f) == 0)
			values[n++] = image_u8_row(&f->img, 0)[0];
	}
	const int loop_want[12] = {10, 20, 30, 100, 10, 20, 30, 100, 10, 20, 30, 100};
	assert_memory_equal(values, loop_want, sizeof values);
	capture_close(c);
	capture_close(NULL);
}

/* A folder read into a ring slot (capture_read_into, rows of a wider
 * stride) and by plain reads gives the pixels image_read gives: plain PGM
 * frames (copied straight into the slot), a PGM of maxval 100 and a PNG
 * (decoded first), in turns. */
static void test_folder_read_into(void **state)
{
	NEED_PNG();
	(void)state;
	const char *tmp = test_tmpdir();
	assert_non_null(tmp);
	char dir[512], path[1024];
	snprintf(dir, sizeof dir, "%s", tmp);
	const int w = 37, h = 11;
	struct image_u8 img;
	assert_int_equal(image_u8_alloc(&img, w, h), 0);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			image_u8_row(&img, y)[x] = (uint8_t)(x * 7 + y * 13);
	snprintf(path, sizeof path, "%s/a.pgm", dir);
	assert_int_equal(image_write(path, &img), 0);
	snprintf(path, sizeof path, "%s/b.png", dir);
	assert_int_equal(image_write(path, &img), 0);
	FILE *f = fopen((snprintf(path, sizeof path, "%s/c.pgm", dir), path), "wb");
	assert_non_null(f);
	fprintf(f, "P5\n# maxval 100\n%d %d\n100\n", w, h);
	for (int i = 0; i < w * h; i++)
		fputc((i * 3) % 101, f);
	fclose(f);
	image_u8_free(&img);
	int err = 0;
	char src[600];
	snprintf(src, sizeof src, "folder:%s", dir);
	struct capture *a = open_src(src, true, &err), *b = open_src(src, true, &err);
	assert_non_null(a);
	assert_non_null(b);
	struct frame slot = {0};
	assert_int_equal(image_u8_alloc(&slot.img, 64, 16), 0);
	for (int i = 0; i < 7; i++) {
		slot.img.width = 64;
		slot.img.height = 16;
		slot.img.stride = 64;
		struct frame *fa = NULL;
		assert_int_equal(capture_read(a, &fa), 0);
		assert_int_equal(capture_read_into(b, &slot), 0);
		assert_string_equal(slot.name, fa->name);
		snprintf(path, sizeof path, "%s/%s", dir, fa->name);
		assert_int_equal(image_read(path, &img), 0);
		assert_int_equal(slot.img.width, w);
		assert_int_equal(slot.img.height, h);
		assert_int_equal(fa->img.width, w);
		for (int y = 0; y < h; y++) {
			assert_memory_equal(image_u8_row(&img, y), image_u8_row(&slot.img, y), (size_t)w);
			assert_memory_equal(image_u8_row(&img, y), image_u8_row(&fa->img, y), (size_t)w);
		}
		image_u8_free(&img);
	}
	image_u8_free(&slot.img);
	capture_close(a);
	capture_close(b);
}

/* The folder source reads a plain PGM's header first and its samples
 * straight into place: a header longer than that first read (comments)
 * still gives the right pixels, and a file shorter than its header says
 * is a bad frame, logged, with the next frame read as usual. */
static void test_folder_pgm_header_and_truncation(void **state)
{
	(void)state;
	const char *tmp = test_tmpdir();
	assert_non_null(tmp);
	char path[1024];
	const int w = 23, h = 9;
	FILE *f = fopen((snprintf(path, sizeof path, "%s/a.pgm", tmp), path), "wb");
	assert_non_null(f);
	fprintf(f, "P5\n");
	for (int i = 0; i < 100; i++)
		fprintf(f, "# a comment line of some length to push the samples past the first read %03d\n", i);
	fprintf(f, "%d %d\n255\n", w, h);
	for (int i = 0; i < w * h; i++)
		fputc((i * 5) & 255, f);
	fclose(f);
	f = fopen((snprintf(path, sizeof path, "%s/b.pgm", tmp), path), "wb");
	assert_non_null(f);
	fprintf(f, "P5\n%d %d\n255\n", w, h);
	for (int i = 0; i < w * h - 10; i++)
		fputc(i & 255, f);
	fclose(f);
	int err = 0;
	char src[600];
	snprintf(src, sizeof src, "folder:%s", tmp);
	struct capture *c = open_src(src, true, &err);
	assert_non_null(c);
	for (int pass = 0; pass < 2; pass++) {
		struct frame *fa = NULL;
		assert_int_equal(capture_read(c, &fa), 0);
		assert_string_equal(fa->name, "a.pgm");
		assert_int_equal(fa->img.width, w);
		assert_int_equal(fa->img.height, h);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				assert_int_equal(image_u8_row(&fa->img, y)[x], ((y * w + x) * 5) & 255);
		assert_int_equal(capture_read(c, &fa), ERR_FORMAT);
	}
	capture_close(c);
}

static void test_folder_errors(void **state)
{
	(void)state;
	int err = 0;
	assert_null(open_src("folder:/nonexistent/tabletrack/dir", false, &err));
	assert_int_equal(err, ERR_IO);
	const char *dir = test_tmpdir();
	char src[600];
	snprintf(src, sizeof src, "folder:%s", dir);
	assert_null(open_src(src, false, &err)); /* empty */
	assert_int_equal(err, ERR_IO);
	/* every file bad, looping: the source ends instead of spinning on errors */
	write_bytes(dir, "a.pgm", "P5 4 4 255\n");
	struct capture *c = open_src(src, true, &err);
	assert_non_null(c);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), ERR_FORMAT);
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	capture_close(c);
	assert_null(open_src("nosuch:thing", false, &err));
	assert_int_equal(err, ERR_CONFIG);
	assert_null(open_src("folder", false, &err));
	assert_int_equal(err, ERR_CONFIG);
}

static void test_file_source(void **state)
{
	NEED_PNG();
	(void)state;
	const char *dir = test_tmpdir();
	write_img(dir, "one.png", 5, 3, 77);
	char src[600];
	snprintf(src, sizeof src, "file:%s/one.png", dir);
	int err;
	struct capture *c = open_src(src, false, &err);
	assert_non_null(c);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(f->img.data[0], 77);
	assert_string_equal(f->name, "one.png");
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	capture_close(c);
	c = open_src(src, true, &err);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(capture_read(c, &f), 0);
		assert_int_equal(f->seq, (uint64_t)i);
	}
	capture_close(c);
	snprintf(src, sizeof src, "file:%s/missing.png", dir);
	assert_null(open_src(src, false, &err));
	assert_int_equal(err, ERR_IO);
}

/* ---------------------------------------------------------------- raw -- */

struct fifo_writer {
	char path[600];
	int n_bytes;
};

static void *write_fifo(void *arg)
{
	struct fifo_writer *w = arg;
	int fd = open(w->path, O_WRONLY);
	if (fd < 0)
		return NULL;
	uint8_t buf[256];
	for (int i = 0; i < (int)sizeof buf; i++)
		buf[i] = (uint8_t)i;
	ssize_t n = write(fd, buf, (size_t)w->n_bytes);
	(void)n;
	close(fd);
	return NULL;
}

static void test_raw_fifo(void **state)
{
	(void)state;
	const char *dir = test_tmpdir();
	struct fifo_writer w;
	snprintf(w.path, sizeof w.path, "%s/frames.fifo", dir);
	assert_int_equal(mkfifo(w.path, 0600), 0);
	w.n_bytes = 2 * 32 + 10; /* two 8x4 frames and a torn one */
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, write_fifo, &w), 0);
	char src[700];
	snprintf(src, sizeof src, "raw:8x4:25@%s", w.path);
	int err;
	struct capture *c = open_src(src, false, &err);
	assert_non_null(c);
	assert_int_equal(capture_fps(c), 25);
	assert_true(capture_is_finite(c));
	struct frame *f;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(capture_read(c, &f), 0);
		assert_int_equal(f->img.width, 8);
		assert_int_equal(f->img.height, 4);
		for (int y = 0; y < 4; y++)
			for (int x = 0; x < 8; x++)
				assert_int_equal(image_u8_row(&f->img, y)[x], k * 32 + y * 8 + x);
	}
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	capture_close(c);
	pthread_join(t, NULL);

	const char *bad[] = {"raw:8", "raw:8x", "raw:x4", "raw:8x4:0", "raw:8x4junk", "raw:8x4@"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_null(open_src(bad[i], false, &err));
		assert_int_equal(err, ERR_CONFIG);
	}
	assert_null(open_src("raw:0x4", false, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_null(open_src("raw:99999x4", false, &err));
	assert_int_equal(err, ERR_RANGE);
}

/* A real pipe on standard input, as in `producer | tabletrack --source raw:WxH`. */
static void test_raw_stdin_pipe(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	int saved = dup(STDIN_FILENO);
	assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
	close(p[0]);
	uint8_t buf[3 * 6];
	for (int i = 0; i < (int)sizeof buf; i++)
		buf[i] = (uint8_t)(200 + i);
	assert_int_equal(write(p[1], buf, sizeof buf), (ssize_t)sizeof buf);
	close(p[1]);
	int err;
	struct capture *c = open_src("raw:3x2", false, &err);
	assert_non_null(c);
	struct frame *f;
	for (int k = 0; k < 3; k++) {
		assert_int_equal(capture_read(c, &f), 0);
		assert_int_equal(image_u8_row(&f->img, 1)[2], 200 + 6 * k + 5);
	}
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	capture_close(c);
	dup2(saved, STDIN_FILENO);
	close(saved);
}

/* --------------------------------------------------------------- demo -- */

/* Sprite 0: left half black, right half white. Sprite 1: all black. */
static void make_sprites(struct image_u8 sp[2])
{
	assert_int_equal(image_u8_alloc(&sp[0], 40, 40), 0);
	assert_int_equal(image_u8_alloc(&sp[1], 40, 40), 0);
	for (int y = 0; y < 40; y++)
		for (int x = 0; x < 40; x++) {
			image_u8_row(&sp[0], y)[x] = x < 20 ? 0 : 255;
			image_u8_row(&sp[1], y)[x] = 0;
		}
}

static struct capture *open_demo(const struct image_u8 *sp, const int *ids, int n)
{
	struct capture_config cfg = {.fps = 30, .width = 320, .height = 240, .sprites = sp,
				     .n_sprites = n, .sprite_ids = ids};
	snprintf(cfg.source, sizeof cfg.source, "demo");
	int err;
	struct capture *c = capture_open(&cfg, &err);
	assert_non_null(c);
	return c;
}

/* read_into writes the same pixels as a plain read, into a buffer larger than
 * the frame (rows packed), and refuses a buffer that is too small. */
static void test_read_into_slot(void **state)
{
	(void)state;
	struct image_u8 sp[2];
	make_sprites(sp);
	const int ids[2] = {17, 42};
	struct capture *a = open_demo(sp, ids, 2), *b = open_demo(sp, ids, 2);
	struct frame slot = {0};
	assert_int_equal(image_u8_alloc(&slot.img, 400, 300), 0);
	uint8_t *buf = slot.img.data;
	for (int i = 0; i < 3; i++) {
		struct frame *fa;
		slot.img.width = 400;
		slot.img.height = 300;
		slot.img.stride = slot.img.stride > 400 ? slot.img.stride : 400;
		assert_int_equal(capture_read(a, &fa), 0);
		assert_int_equal(capture_read_into(b, &slot), 0);
		assert_ptr_equal(slot.img.data, buf);
		assert_int_equal(slot.img.width, 320);
		assert_int_equal(slot.img.height, 240);
		assert_int_equal(slot.seq, fa->seq);
		assert_true(slot.t_capture_ns > 0);
		for (int y = 0; y < 240; y++)
			assert_memory_equal(image_u8_row(&fa->img, y), image_u8_row(&slot.img, y), 320);
	}
	slot.img.width = 100;
	slot.img.height = 100;
	slot.img.stride = 100;
	assert_int_equal(capture_read_into(b, &slot), ERR_SIZE);
	image_u8_free(&slot.img);
	capture_close(a);
	capture_close(b);
	image_u8_free(&sp[0]);
	image_u8_free(&sp[1]);
}

static void test_demo_deterministic_and_moving(void **state)
{
	(void)state;
	struct image_u8 sp[2];
	make_sprites(sp);
	const int ids[2] = {17, 42};
	struct capture *a = open_demo(sp, ids, 2), *b = open_demo(sp, ids, 2);
	assert_false(capture_is_finite(a));
	assert_int_equal(capture_fps(a), 30);
	struct image_u8 first;
	assert_int_equal(image_u8_alloc(&first, 320, 240), 0);
	for (int i = 0; i < 40; i++) {
		struct frame *fa, *fb;
		assert_int_equal(capture_read(a, &fa), 0);
		assert_int_equal(capture_read(b, &fb), 0);
		assert_int_equal(fa->img.width, 320);
		assert_int_equal(fa->img.height, 240);
		for (int y = 0; y < 240; y++)
			assert_memory_equal(image_u8_row(&fa->img, y), image_u8_row(&fb->img, y), 320);
		if (i == 0)
			image_u8_copy(&first, &fa->img);

		struct capture_truth t[8];
		int n = capture_truth(a, t, 8);
		assert_int_equal(n, 4);
		assert_int_equal(t[0].kind, CAPTURE_TRUTH_SYMBOL);
		assert_int_equal(t[0].id, 17);
		assert_int_equal(t[1].id, 42);
		assert_int_equal(t[2].kind, CAPTURE_TRUTH_FINGER);
		/* the all-black sprite is dark at its centre, the fingers bright */
		assert_in_range(image_u8_row(&fa->img, (int)(t[1].y_px + 0.5))[(int)(t[1].x_px + 0.5)],
				0, 40);
		for (int k = 2; k < 4; k++)
			assert_in_range(image_u8_row(&fa->img, (int)(t[k].y_px + 0.5))[(int)(t[k].x_px + 0.5)],
					200, 255);
		/* sprite 0 rotated clockwise by angle: its white half lies along
		 * (cos a, sin a) from the centre, its black half opposite */
		double r = t[0].radius_px * 0.5, co = cos(t[0].angle_rad), si = sin(t[0].angle_rad);
		int wx = (int)(t[0].x_px + r * co + 0.5), wy = (int)(t[0].y_px + r * si + 0.5);
		int bx = (int)(t[0].x_px - r * co + 0.5), by = (int)(t[0].y_px - r * si + 0.5);
		assert_true(image_u8_row(&fa->img, wy)[wx] > image_u8_row(&fa->img, by)[bx] + 60);
		assert_in_range(t[0].angle_rad, 0, 6.2832);
	}
	/* after 40 frames the scene has moved */
	struct frame *f;
	assert_int_equal(capture_read(a, &f), 0);
	int diff = 0;
	for (int y = 0; y < 240; y++)
		diff += memcmp(image_u8_row(&f->img, y), image_u8_row(&first, y), 320) != 0;
	assert_true(diff > 20);
	capture_close(a);
	capture_close(b);

	/* no sprites: fingers only */
	struct capture *c = open_demo(NULL, NULL, 0);
	assert_int_equal(capture_read(c, &f), 0);
	struct capture_truth t[4];
	assert_int_equal(capture_truth(c, t, 4), 2);
	assert_int_equal(capture_truth(c, t, 1), 1);
	capture_close(c);
	image_u8_free(&first);
	image_u8_free(&sp[0]);
	image_u8_free(&sp[1]);
}

/* ------------------------------------------------------------- faulty -- */

static void test_faulty_schedules(void **state)
{
	(void)state;
	int err;
	struct capture *c = open_src("faulty:every=3:demo", false, &err);
	assert_non_null(c);
	assert_non_null(strstr(capture_describe(c), "demo"));
	struct frame *f;
	int got[9];
	for (int i = 0; i < 9; i++)
		got[i] = capture_read(c, &f);
	const int want[9] = {0, 0, ERR_FORMAT, 0, 0, ERR_FORMAT, 0, 0, ERR_FORMAT};
	assert_memory_equal(got, want, sizeof got);
	struct capture_stats st;
	capture_get_stats(c, &st);
	assert_int_equal(st.n_bad, 3);
	assert_int_equal(st.n_frames, 6);
	capture_close(c);

	c = open_src("faulty:lose=3:again=2:demo", false, &err);
	assert_non_null(c);
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(capture_read(c, &f), ERR_AGAIN);
	assert_int_equal(capture_read(c, &f), ERR_DEVICE);
	assert_int_equal(capture_read(c, &f), ERR_DEVICE);
	capture_close(c);

	c = open_src("faulty:eof=2:noise=2:demo", false, &err);
	assert_true(capture_is_finite(c));
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(capture_read(c, &f), ERR_EOF);
	capture_close(c);

	/* openfail: the first two opens of this spec fail, the third works */
	assert_null(open_src("faulty:openfail=2:demo", false, &err));
	assert_int_equal(err, ERR_DEVICE);
	assert_null(open_src("faulty:openfail=2:demo", false, &err));
	c = open_src("faulty:openfail=2:demo", false, &err);
	assert_non_null(c);
	capture_close(c);

	assert_null(open_src("faulty:every=x:demo", false, &err));
	assert_int_equal(err, ERR_CONFIG);
	assert_null(open_src("faulty:every=3", false, &err));
	assert_int_equal(err, ERR_CONFIG);
	assert_null(open_src("faulty:bogus=1:demo", false, &err));
	assert_int_equal(err, ERR_CONFIG);
}

/* ------------------------------------------------------------- pixfmt -- */

static void test_pixfmt_packed_and_planar(void **state)
{
	(void)state;
	enum { W = 6, H = 3 };
	struct image_u8 dst;
	assert_int_equal(image_u8_alloc(&dst, W, H), 0);
	uint8_t src[4096];
	int err;

	/* YUYV with padded rows (pitch 16 > 12) */
	memset(src, 0xee, sizeof src);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			src[y * 16 + 2 * x] = (uint8_t)(10 * y + x);
			src[y * 16 + 2 * x + 1] = 128;
		}
	struct pixfmt_conv *pc = pixfmt_create(PIXFMT_YUYV, W, H, 16, &err);
	assert_non_null(pc);
	assert_int_equal(pixfmt_convert(pc, src, 16 * 3, &dst), 0);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			assert_int_equal(image_u8_row(&dst, y)[x], 10 * y + x);
	assert_int_equal(pixfmt_convert(pc, src, 16 * 2 + 11, &dst), ERR_SIZE); /* torn */
	pixfmt_destroy(pc);

	/* UYVY: Y at odd bytes */
	for (int i = 0; i < W * H; i++) {
		src[2 * i] = 128;
		src[2 * i + 1] = (uint8_t)(3 * i);
	}
	pc = pixfmt_create(PIXFMT_UYVY, W, H, 0, &err);
	assert_int_equal(pixfmt_convert(pc, src, W * H * 2, &dst), 0);
	assert_int_equal(image_u8_row(&dst, 2)[5], 3 * 17);
	pixfmt_destroy(pc);

	/* Y16 little-endian: high byte; big-endian too; Y10 shifted */
	for (int i = 0; i < W * H; i++) {
		src[2 * i] = 0x34;
		src[2 * i + 1] = (uint8_t)(i + 1);
	}
	pc = pixfmt_create(PIXFMT_Y16, W, H, 0, &err);
	assert_int_equal(pixfmt_convert(pc, src, W * H * 2, &dst), 0);
	assert_int_equal(image_u8_row(&dst, 1)[0], 7);
	pixfmt_destroy(pc);
	pc = pixfmt_create(PIXFMT_Y16_BE, W, H, 0, &err);
	assert_int_equal(pixfmt_convert(pc, src, W * H * 2, &dst), 0);
	assert_int_equal(image_u8_row(&dst, 1)[0], 0x34);
	pixfmt_destroy(pc);
	src[0] = 0xff;
	src[1] = 0x03; /* 1023 in 10 bits */
	pc = pixfmt_create(PIXFMT_Y10, W, H, 0, &err);
	assert_int_equal(pixfmt_convert(pc, src, W * H * 2, &dst), 0);
	assert_int_equal(dst.data[0], 255);
	pixfmt_destroy(pc);

	/* NV12 and YUV420: the Y plane, then chroma we ignore; the buffer must
	 * hold the Y plane at least */
	for (int i = 0; i < W * H; i++)
		src[i] = (uint8_t)(i * 5);
	memset(src + W * H, 99, W * H / 2);
	const uint32_t planar[] = {PIXFMT_NV12, PIXFMT_YUV420, PIXFMT_NV21, PIXFMT_YVU420, PIXFMT_GREY};
	for (size_t k = 0; k < sizeof planar / sizeof planar[0]; k++) {
		pc = pixfmt_create(planar[k], W, H, 0, &err);
		assert_non_null(pc);
		assert_int_equal(pixfmt_convert(pc, src, W * H * 3 / 2, &dst), 0);
		assert_int_equal(image_u8_row(&dst, 2)[3], 15 * 5);
		assert_int_equal(pixfmt_convert(pc, src, W * H - 1, &dst), ERR_SIZE);
		pixfmt_destroy(pc);
	}

	assert_null(pixfmt_create(PIXFMT_FOURCC('R', 'G', 'B', '3'), W, H, 0, &err));
	assert_int_equal(err, ERR_UNSUPPORTED);
	assert_null(pixfmt_create(PIXFMT_YUYV, 0, H, 0, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_int_equal(pixfmt_parse("yuyv"), PIXFMT_YUYV);
	assert_int_equal(pixfmt_parse("MJPEG"), PIXFMT_MJPEG);
	assert_int_equal(pixfmt_parse("grey"), PIXFMT_GREY);
	assert_int_equal(pixfmt_parse("auto"), 0);
	assert_int_equal(pixfmt_parse("RGB3"), 0);
	char nm[5];
	assert_string_equal(pixfmt_name(PIXFMT_NV12, nm), "NV12");
	assert_true(pixfmt_rank(PIXFMT_GREY) < pixfmt_rank(PIXFMT_YUYV));
	if (TT_HAVE_JPEG)
		assert_true(pixfmt_rank(PIXFMT_YUYV) < pixfmt_rank(PIXFMT_MJPEG));
	image_u8_free(&dst);
}

/* Encodes a smooth grey pattern with libturbojpeg (4:2:0 colour JPEG, as
 * webcams send), *out freed with tjFree. */
static unsigned long make_jpeg(int w, int h, int phase, unsigned char **out)
{
#if TT_HAVE_JPEG
	uint8_t *rgb = malloc((size_t)w * h * 3);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t v = (uint8_t)((x * 2 + y + phase) & 255);
			rgb[(y * w + x) * 3 + 0] = v;
			rgb[(y * w + x) * 3 + 1] = v;
			rgb[(y * w + x) * 3 + 2] = v;
		}
	tjhandle tj = tjInitCompress();
	unsigned long len = 0;
	*out = NULL;
	assert_int_equal(tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, out, &len, TJSAMP_420, 95, 0), 0);
	tjDestroy(tj);
	free(rgb);
	return len;
#else
	(void)w;
	(void)h;
	(void)phase;
	*out = NULL;
	return 0;
#endif
}

static void test_pixfmt_mjpeg(void **state)
{
	NEED_JPEG();
	(void)state;
	int w = 64, h = 48;
	unsigned char *jpg;
	unsigned long len = make_jpeg(w, h, 0, &jpg);
	struct image_u8 dst;
	assert_int_equal(image_u8_alloc(&dst, w, h), 0);
	int err;
	struct pixfmt_conv *pc = pixfmt_create(PIXFMT_MJPEG, w, h, 0, &err);
	assert_non_null(pc);
	assert_int_equal(pixfmt_convert(pc, jpg, len, &dst), 0);
	int maxdiff = 0;
	for (int y = 0; y < h; y++)
		for (int x = 4; x < w - 4; x++) {
			int d = abs(image_u8_row(&dst, y)[x] - ((x * 2 + y) & 255));
			if (d > maxdiff)
				maxdiff = d;
		}
	assert_in_range(maxdiff, 0, 12);
	assert_int_equal(pixfmt_convert(pc, (const uint8_t *)"garbage!", 8, &dst), ERR_FORMAT);
	pixfmt_destroy(pc);
	/* a frame of another size than negotiated */
	pc = pixfmt_create(PIXFMT_MJPEG, 32, 48, 0, &err);
	struct image_u8 small;
	assert_int_equal(image_u8_alloc(&small, 32, 48), 0);
	assert_int_equal(pixfmt_convert(pc, jpg, len, &small), ERR_SIZE);
	pixfmt_destroy(pc);
	image_u8_free(&small);
	image_u8_free(&dst);
	tjFree(jpg);
}

/* ------------------------------------------------- the FAKE V4L2 camera -- */

enum fake_ev {
	EV_OK,
	EV_EAGAIN,
	EV_EINTR,
	EV_EIO,
	EV_ERRFLAG,
	EV_SHORT,
	EV_ENODEV,
	EV_POLL_TIMEOUT,
};

#define FAKE_FD 4242
#define FAKE_BUFS 8
#define FAKE_PAGE 65536

#define FAKE_FMTS 6
#define FAKE_SIZES 8
#define FAKE_IVALS 6

/* What one fake format offers: discrete sizes, each with discrete frame
 * intervals, or one stepwise size range with one continuous interval range. */
struct fake_fmt {
	uint32_t fourcc, flags;
	int n_sizes;
	int size[FAKE_SIZES][2];
	int n_ivals[FAKE_SIZES];
	struct v4l2_fract ival[FAKE_SIZES][FAKE_IVALS];
	bool stepwise;
	struct v4l2_frmsize_stepwise range;
	struct v4l2_fract ival_min, ival_max; /* of a stepwise format */
};

static struct fake_cam {
	struct fake_fmt fmt[FAKE_FMTS];
	int n_formats;
	bool no_enum_sizes, no_enum_ivals; /* a driver without the ENUM ioctls */
	uint32_t fourcc;
	int w, h, pitch;
	size_t sizeimage;
	struct v4l2_fract ival; /* the current frame interval */
	int n_s_fmt, n_s_parm;
	int s_fmt_w, s_fmt_h; /* what the last S_FMT asked for */
	bool open, streaming, unplugged;
	int fail_opens; /* opens refused after an unplug */
	int n_open, n_close, n_mmap, n_munmap, n_streamoff;
	int n_bufs;
	uint8_t *mem[FAKE_BUFS];
	bool queued[FAKE_BUFS];
	uint64_t frame_no;
	enum fake_ev script[64];
	int n_script, pos;
	int32_t brightness, exposure_auto, exposure_abs;
	bool set_brightness, set_exposure_abs;
	unsigned char *jpeg;
	unsigned long jpeg_len;
} fk;

/* Adds a discrete size with its rates (frames per second as n/d pairs:
 * {1, 30} is 30 fps, {2, 15} is 7.5 fps) to format f. */
static void fake_add_size(int f, int w, int h, int n_ivals, const struct v4l2_fract *ivals)
{
	struct fake_fmt *m = &fk.fmt[f];
	assert_true(m->n_sizes < FAKE_SIZES && n_ivals <= FAKE_IVALS);
	m->size[m->n_sizes][0] = w;
	m->size[m->n_sizes][1] = h;
	m->n_ivals[m->n_sizes] = n_ivals;
	memcpy(m->ival[m->n_sizes], ivals, sizeof *ivals * (size_t)n_ivals);
	m->n_sizes++;
}

static void fake_set_formats(int n, const uint32_t *fourcc, const uint32_t *flags)
{
	memset(fk.fmt, 0, sizeof fk.fmt);
	for (int i = 0; i < n; i++) {
		fk.fmt[i].fourcc = fourcc[i];
		fk.fmt[i].flags = flags ? flags[i] : 0;
	}
	fk.n_formats = n;
}

static void fake_reset(void)
{
	for (int i = 0; i < FAKE_BUFS; i++)
		free(fk.mem[i]);
	memset(&fk, 0, sizeof fk);
	const uint32_t fmts[3] = {V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUYV};
	const uint32_t flags[3] = {V4L2_FMT_FLAG_EMULATED, 0, 0}; /* auto must prefer the native YUYV */
	fake_set_formats(3, fmts, flags);
	const struct v4l2_fract rates[2] = {{1, 30}, {1, 60}};
	for (int i = 0; i < 3; i++) {
		fake_add_size(i, 640, 480, 2, rates);
		fake_add_size(i, 320, 240, 2, rates);
	}
	fk.fourcc = V4L2_PIX_FMT_YUYV;
	fk.w = 640;
	fk.h = 480;
	fk.ival = (struct v4l2_fract){1, 30};
	fk.exposure_auto = V4L2_EXPOSURE_APERTURE_PRIORITY;
	fk.brightness = 128;
}

static struct fake_fmt *fake_find(uint32_t fourcc)
{
	for (int i = 0; i < fk.n_formats; i++)
		if (fk.fmt[i].fourcc == fourcc)
			return &fk.fmt[i];
	return NULL;
}

/* The index of w x h among m's discrete sizes, -1 if absent. */
static int fake_size_index(const struct fake_fmt *m, int w, int h)
{
	for (int i = 0; i < m->n_sizes; i++)
		if (m->size[i][0] == w && m->size[i][1] == h)
			return i;
	return -1;
}

static int fake_snap(int v, uint32_t lo, uint32_t hi, uint32_t step)
{
	if (v < (int)lo)
		return (int)lo;
	if (v > (int)hi)
		return (int)hi;
	return (int)(lo + ((uint32_t)v - lo + step / 2) / step * step);
}

/* S_FMT as drivers do it: the nearest size the format offers. */
static void fake_set_size(const struct fake_fmt *m, int w, int h)
{
	if (fk.no_enum_sizes || !m) {
		fk.w = w > 1280 ? 1280 : w;
		fk.h = h > 720 ? 720 : h;
	} else if (m->stepwise) {
		fk.w = fake_snap(w, m->range.min_width, m->range.max_width, m->range.step_width);
		fk.h = fake_snap(h, m->range.min_height, m->range.max_height, m->range.step_height);
	} else {
		int best = 0;
		for (int i = 1; i < m->n_sizes; i++)
			if (abs(m->size[i][0] - w) + abs(m->size[i][1] - h) <
			    abs(m->size[best][0] - w) + abs(m->size[best][1] - h))
				best = i;
		fk.w = m->size[best][0];
		fk.h = m->size[best][1];
	}
}

/* S_PARM as drivers do it: the nearest rate offered at the current size. */
static void fake_set_rate(struct v4l2_fract want)
{
	const struct fake_fmt *m = fake_find(fk.fourcc);
	double fps = (double)want.denominator / want.numerator;
	if (fk.no_enum_ivals || !m) {
		fk.ival = want;
		return;
	}
	if (m->stepwise) {
		double lo = (double)m->ival_max.denominator / m->ival_max.numerator;
		double hi = (double)m->ival_min.denominator / m->ival_min.numerator;
		fk.ival = fps < lo ? m->ival_max : fps > hi ? m->ival_min : want;
		return;
	}
	int k = fake_size_index(m, fk.w, fk.h);
	assert_true(k >= 0);
	int best = 0;
	for (int i = 1; i < m->n_ivals[k]; i++) {
		const struct v4l2_fract *a = &m->ival[k][i], *b = &m->ival[k][best];
		if (fabs((double)a->denominator / a->numerator - fps) <
		    fabs((double)b->denominator / b->numerator - fps))
			best = i;
	}
	fk.ival = m->ival[k][best];
}

static void fake_script(const enum fake_ev *ev, int n)
{
	memcpy(fk.script, ev, sizeof *ev * (size_t)n);
	fk.n_script = n;
	fk.pos = 0;
}

static void fake_layout(void)
{
	if (fk.fourcc == V4L2_PIX_FMT_MJPEG) {
		fk.pitch = 0;
		fk.sizeimage = (size_t)fk.w * fk.h;
	} else {
		int bpp = fk.fourcc == V4L2_PIX_FMT_YUYV || fk.fourcc == V4L2_PIX_FMT_UYVY ? 2 : 1;
		fk.pitch = fk.w * bpp + 32; /* padded rows, as some drivers do */
		fk.sizeimage = (size_t)fk.pitch * fk.h;
	}
}

static int fake_open(const char *path, int flags)
{
	(void)flags;
	if (strcmp(path, "/fake/video0") != 0) {
		errno = ENOENT;
		return -1;
	}
	if (fk.unplugged) {
		if (fk.fail_opens > 0) {
			fk.fail_opens--;
			errno = ENOENT;
			return -1;
		}
		fk.unplugged = false; /* plugged back in */
	}
	if (fk.open) {
		errno = EBUSY;
		return -1;
	}
	fk.open = true;
	fk.n_open++;
	return FAKE_FD;
}

static int fake_close(int fd)
{
	assert_int_equal(fd, FAKE_FD);
	fk.open = false;
	fk.streaming = false;
	fk.n_close++;
	return 0;
}

static void fake_fill(int i, struct v4l2_buffer *b)
{
	uint8_t *m = fk.mem[i];
	if (fk.fourcc == V4L2_PIX_FMT_MJPEG) {
		memcpy(m, fk.jpeg, fk.jpeg_len);
		b->bytesused = (uint32_t)fk.jpeg_len;
	} else {
		for (int y = 0; y < fk.h; y++)
			for (int x = 0; x < fk.w; x++) {
				uint8_t yv = (uint8_t)(x + y + fk.frame_no);
				if (fk.fourcc == V4L2_PIX_FMT_YUYV) {
					m[y * fk.pitch + 2 * x] = yv;
					m[y * fk.pitch + 2 * x + 1] = 128;
				} else {
					m[y * fk.pitch + x] = yv;
				}
			}
		b->bytesused = (uint32_t)fk.sizeimage;
	}
	b->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_DONE;
	b->timestamp.tv_sec = 1000 + (long)(fk.frame_no / 30);
	b->timestamp.tv_usec = (long)(fk.frame_no % 30) * 33333;
	b->sequence = (uint32_t)fk.frame_no++;
}

static int fake_dqbuf(struct v4l2_buffer *b)
{
	enum fake_ev ev = fk.pos < fk.n_script ? fk.script[fk.pos++] : EV_OK;
	switch (ev) {
	case EV_EAGAIN: errno = EAGAIN; return -1;
	case EV_EINTR: errno = EINTR; return -1;
	case EV_EIO: errno = EIO; return -1;
	case EV_ENODEV: fk.unplugged = true; errno = ENODEV; return -1;
	default: break;
	}
	int i = 0;
	while (i < fk.n_bufs && !fk.queued[i])
		i++;
	if (i == fk.n_bufs) {
		/* every buffer is with the application: the state machine leaked one */
		errno = EAGAIN;
		return -1;
	}
	fk.queued[i] = false;
	b->index = (uint32_t)i;
	fake_fill(i, b);
	if (ev == EV_ERRFLAG)
		b->flags |= V4L2_BUF_FLAG_ERROR;
	if (ev == EV_SHORT)
		b->bytesused /= 3;
	return 0;
}

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	assert_int_equal(fd, FAKE_FD);
	if (fk.unplugged) {
		errno = ENODEV;
		return -1;
	}
	switch (req) {
	case VIDIOC_QUERYCAP: {
		struct v4l2_capability *c = arg;
		memset(c, 0, sizeof *c);
		snprintf((char *)c->driver, sizeof c->driver, "fake");
		snprintf((char *)c->card, sizeof c->card, "tabletrack fake camera");
		snprintf((char *)c->bus_info, sizeof c->bus_info, "test:0");
		c->capabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_DEVICE_CAPS;
		c->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
		return 0;
	}
	case VIDIOC_ENUM_FMT: {
		struct v4l2_fmtdesc *d = arg;
		if (d->index >= (uint32_t)fk.n_formats) {
			errno = EINVAL;
			return -1;
		}
		d->pixelformat = fk.fmt[d->index].fourcc;
		d->flags = fk.fmt[d->index].flags;
		snprintf((char *)d->description, sizeof d->description, "fake format %u", d->index);
		return 0;
	}
	case VIDIOC_G_FMT:
	case VIDIOC_S_FMT: {
		struct v4l2_format *f = arg;
		if (req == VIDIOC_S_FMT) {
			if (fk.streaming) {
				errno = EBUSY;
				return -1;
			}
			const struct fake_fmt *m = fake_find(f->fmt.pix.pixelformat);
			fk.fourcc = m ? m->fourcc : fk.fmt[0].fourcc;
			fk.n_s_fmt++;
			fk.s_fmt_w = (int)f->fmt.pix.width;
			fk.s_fmt_h = (int)f->fmt.pix.height;
			fake_set_size(fake_find(fk.fourcc), (int)f->fmt.pix.width, (int)f->fmt.pix.height);
		}
		fake_layout();
		f->fmt.pix.width = (uint32_t)fk.w;
		f->fmt.pix.height = (uint32_t)fk.h;
		f->fmt.pix.pixelformat = fk.fourcc;
		f->fmt.pix.bytesperline = (uint32_t)fk.pitch;
		f->fmt.pix.sizeimage = (uint32_t)fk.sizeimage;
		f->fmt.pix.field = V4L2_FIELD_NONE;
		return 0;
	}
	case VIDIOC_G_PARM:
	case VIDIOC_S_PARM: {
		struct v4l2_streamparm *p = arg;
		if (req == VIDIOC_S_PARM) {
			fk.n_s_parm++;
			fake_set_rate(p->parm.capture.timeperframe);
		}
		p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
		p->parm.capture.timeperframe = fk.ival;
		return 0;
	}
	case VIDIOC_ENUM_FRAMESIZES: {
		struct v4l2_frmsizeenum *s = arg;
		if (fk.no_enum_sizes) {
			errno = ENOTTY;
			return -1;
		}
		const struct fake_fmt *m = fake_find(s->pixel_format);
		if (!m || s->index >= (m->stepwise ? 1u : (uint32_t)m->n_sizes)) {
			errno = EINVAL;
			return -1;
		}
		if (m->stepwise) {
			s->type = m->range.step_width == 1 && m->range.step_height == 1
					  ? V4L2_FRMSIZE_TYPE_CONTINUOUS
					  : V4L2_FRMSIZE_TYPE_STEPWISE;
			s->stepwise = m->range;
			return 0;
		}
		s->type = V4L2_FRMSIZE_TYPE_DISCRETE;
		s->discrete.width = (uint32_t)m->size[s->index][0];
		s->discrete.height = (uint32_t)m->size[s->index][1];
		return 0;
	}
	case VIDIOC_ENUM_FRAMEINTERVALS: {
		struct v4l2_frmivalenum *iv = arg;
		if (fk.no_enum_ivals) {
			errno = ENOTTY;
			return -1;
		}
		const struct fake_fmt *m = fake_find(iv->pixel_format);
		int k = m && !m->stepwise ? fake_size_index(m, (int)iv->width, (int)iv->height) : -1;
		if (m && m->stepwise) {
			if (iv->index > 0) {
				errno = EINVAL;
				return -1;
			}
			iv->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
			iv->stepwise.min = m->ival_min;
			iv->stepwise.max = m->ival_max;
			iv->stepwise.step = (struct v4l2_fract){1, 1};
			return 0;
		}
		if (k < 0 || iv->index >= (uint32_t)m->n_ivals[k]) {
			errno = EINVAL;
			return -1;
		}
		iv->type = V4L2_FRMIVAL_TYPE_DISCRETE;
		iv->discrete = m->ival[k][iv->index];
		return 0;
	}
	case VIDIOC_QUERYCTRL: {
		struct v4l2_queryctrl *q = arg;
		static const uint32_t ids[3] = {V4L2_CID_BRIGHTNESS, V4L2_CID_EXPOSURE_AUTO,
						V4L2_CID_EXPOSURE_ABSOLUTE};
		uint32_t id = q->id & ~(uint32_t)V4L2_CTRL_FLAG_NEXT_CTRL;
		int k = -1;
		if (q->id & V4L2_CTRL_FLAG_NEXT_CTRL) {
			for (int i = 0; i < 3 && k < 0; i++)
				if (ids[i] > id)
					k = i;
		} else {
			for (int i = 0; i < 3; i++)
				if (ids[i] == id)
					k = i;
		}
		if (k < 0) {
			errno = EINVAL;
			return -1;
		}
		memset(q, 0, sizeof *q);
		q->id = ids[k];
		static const char *names[3] = {"Brightness", "Auto Exposure", "Exposure Time, Absolute"};
		snprintf((char *)q->name, sizeof q->name, "%s", names[k]);
		q->type = k == 1 ? V4L2_CTRL_TYPE_MENU : V4L2_CTRL_TYPE_INTEGER;
		q->minimum = k == 0 ? 0 : k == 1 ? 0 : 1;
		q->maximum = k == 0 ? 255 : k == 1 ? 3 : 5000;
		q->step = 1;
		return 0;
	}
	case VIDIOC_QUERYMENU: {
		struct v4l2_querymenu *m = arg;
		static const char *items[4] = {"Auto Mode", "Manual Mode", "Shutter Priority Mode",
					       "Aperture Priority Mode"};
		if (m->index > 3) {
			errno = EINVAL;
			return -1;
		}
		snprintf((char *)m->name, sizeof m->name, "%s", items[m->index]);
		return 0;
	}
	case VIDIOC_G_CTRL:
	case VIDIOC_S_CTRL: {
		struct v4l2_control *c = arg;
		int32_t *v = c->id == V4L2_CID_BRIGHTNESS      ? &fk.brightness
			     : c->id == V4L2_CID_EXPOSURE_AUTO ? &fk.exposure_auto
			     : c->id == V4L2_CID_EXPOSURE_ABSOLUTE ? &fk.exposure_abs
								   : NULL;
		if (!v) {
			errno = EINVAL;
			return -1;
		}
		if (req == VIDIOC_G_CTRL) {
			c->value = *v;
		} else {
			*v = c->value;
			fk.set_brightness |= c->id == V4L2_CID_BRIGHTNESS;
			fk.set_exposure_abs |= c->id == V4L2_CID_EXPOSURE_ABSOLUTE;
		}
		return 0;
	}
	case VIDIOC_REQBUFS: {
		struct v4l2_requestbuffers *rb = arg;
		if (fk.streaming) {
			errno = EBUSY;
			return -1;
		}
		for (int i = 0; i < FAKE_BUFS; i++) {
			free(fk.mem[i]);
			fk.mem[i] = NULL;
			fk.queued[i] = false;
		}
		fk.n_bufs = rb->count > FAKE_BUFS ? FAKE_BUFS : (int)rb->count;
		for (int i = 0; i < fk.n_bufs; i++)
			fk.mem[i] = calloc(1, fk.sizeimage);
		rb->count = (uint32_t)fk.n_bufs;
		return 0;
	}
	case VIDIOC_QUERYBUF: {
		struct v4l2_buffer *b = arg;
		if (b->index >= (uint32_t)fk.n_bufs) {
			errno = EINVAL;
			return -1;
		}
		b->length = (uint32_t)fk.sizeimage;
		b->m.offset = b->index * FAKE_PAGE;
		return 0;
	}
	case VIDIOC_QBUF: {
		struct v4l2_buffer *b = arg;
		if (b->index >= (uint32_t)fk.n_bufs || fk.queued[b->index]) {
			errno = EINVAL; /* a double queue is a state-machine bug */
			fail_msg("fake camera: bad QBUF of buffer %u", b->index);
		}
		fk.queued[b->index] = true;
		return 0;
	}
	case VIDIOC_DQBUF:
		if (!fk.streaming) {
			errno = EINVAL;
			return -1;
		}
		return fake_dqbuf(arg);
	case VIDIOC_STREAMON:
		fk.streaming = true;
		return 0;
	case VIDIOC_STREAMOFF:
		fk.streaming = false;
		fk.n_streamoff++;
		for (int i = 0; i < fk.n_bufs; i++)
			fk.queued[i] = false;
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off)
{
	(void)addr;
	(void)prot;
	(void)flags;
	assert_int_equal(fd, FAKE_FD);
	int i = (int)(off / FAKE_PAGE);
	if (i >= fk.n_bufs || len != fk.sizeimage)
		return MAP_FAILED;
	fk.n_mmap++;
	return fk.mem[i];
}

static int fake_munmap(void *addr, size_t len)
{
	(void)addr;
	(void)len;
	fk.n_munmap++;
	return 0;
}

static int fake_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	(void)n;
	(void)timeout_ms;
	if (fk.unplugged) {
		fds[0].revents = POLLERR;
		return 1;
	}
	if (fk.pos < fk.n_script && fk.script[fk.pos] == EV_POLL_TIMEOUT) {
		fk.pos++;
		fds[0].revents = 0;
		return 0;
	}
	fds[0].revents = POLLIN;
	return 1;
}

static const struct v4l2_sys fake_sys = {
	.open = fake_open, .close = fake_close, .ioctl = fake_ioctl,
	.mmap = fake_mmap, .munmap = fake_munmap, .poll = fake_poll,
};

static int fake_setup(void **state)
{
	(void)state;
	fprintf(stderr, "NOTE: these V4L2 tests use an in-process FAKE camera, not hardware\n");
	fake_reset();
	capture_v4l2_set_sys(&fake_sys);
	return 0;
}

static int fake_teardown(void **state)
{
	(void)state;
	capture_v4l2_set_sys(NULL);
	fake_reset();
	return 0;
}

static struct capture *open_fake(const char *format, const char *controls, int *err)
{
	struct capture_config cfg = {.width = 320, .height = 240, .fps = 60, .n_buffers = 4};
	snprintf(cfg.source, sizeof cfg.source, "v4l2:/fake/video0");
	snprintf(cfg.format, sizeof cfg.format, "%s", format);
	snprintf(cfg.controls, sizeof cfg.controls, "%s", controls);
	return capture_open(&cfg, err);
}

static int n_queued(void)
{
	int n = 0;
	for (int i = 0; i < fk.n_bufs; i++)
		n += fk.queued[i];
	return n;
}

static void test_fake_v4l2_state_machine(void **state)
{
	(void)state;
	const enum fake_ev script[] = {EV_OK,    EV_EAGAIN,  EV_OK,           EV_EINTR, EV_OK,
				       EV_EIO,   EV_OK,      EV_ERRFLAG,      EV_SHORT, EV_POLL_TIMEOUT,
				       EV_OK,    EV_ENODEV};
	fake_script(script, sizeof script / sizeof script[0]);
	int err = 1;
	struct capture *c = open_fake("auto", "", &err);
	assert_non_null(c);
	assert_int_equal(err, 0);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_YUYV); /* native beats emulated GREY */
	assert_int_equal(fk.w, 320);
	assert_int_equal(capture_fps(c), 60);
	assert_true(fk.streaming);
	assert_int_equal(fk.n_bufs, 4);
	assert_int_equal(fk.n_mmap, 4);
	assert_int_equal(n_queued(), 4);
	assert_false(capture_is_finite(c));
	assert_non_null(strstr(capture_describe(c), "fake camera"));

	const int want[] = {0, ERR_AGAIN, 0, 0, ERR_FORMAT, 0, ERR_FORMAT, ERR_FORMAT, ERR_AGAIN, 0,
			    ERR_DEVICE};
	uint64_t frame_no_seen[16];
	int n_ok = 0;
	int64_t last_ts = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct frame *f = NULL;
		int e = capture_read(c, &f);
		assert_int_equal(e, want[i]);
		if (e == 0) {
			assert_int_equal(f->img.width, 320);
			assert_int_equal(f->img.height, 240);
			assert_int_equal(f->seq, (uint64_t)n_ok);
			/* the fake's Y = x + y + frame number */
			uint8_t base = image_u8_row(&f->img, 0)[0];
			assert_int_equal(image_u8_row(&f->img, 10)[7], (uint8_t)(base + 17));
			assert_true(f->t_capture_ns > last_ts);
			assert_true(f->t_capture_ns >= 1000000000000LL); /* the driver's stamp */
			last_ts = f->t_capture_ns;
			frame_no_seen[n_ok++] = base;
			/* a delivered frame's buffer is already back with the driver */
			assert_int_equal(n_queued(), 4);
		}
	}
	assert_int_equal(n_ok, 5);
	assert_int_equal(frame_no_seen[0], 0);
	struct capture_stats st;
	capture_get_stats(c, &st);
	assert_int_equal(st.n_bad, 3);
	assert_int_equal(st.n_again, 2);
	capture_close(c);
	assert_false(fk.open);
	assert_int_equal(fk.n_munmap, fk.n_mmap);

	/* the camera comes back: the first reopen fails, the next works */
	fk.unplugged = true;
	fk.fail_opens = 1;
	assert_null(open_fake("auto", "", &err));
	assert_int_equal(err, ERR_DEVICE);
	c = open_fake("auto", "", &err);
	assert_non_null(c);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(f->seq, 0);
	capture_close(c);
	assert_int_equal(fk.n_open, 2);
	assert_int_equal(fk.n_close, 2);
	assert_int_equal(fk.n_munmap, fk.n_mmap);
}

static void test_fake_v4l2_repeated_eio_is_lost(void **state)
{
	(void)state;
	enum fake_ev script[CAPTURE_V4L2_MAX_BAD];
	for (int i = 0; i < CAPTURE_V4L2_MAX_BAD; i++)
		script[i] = EV_EIO;
	fake_script(script, CAPTURE_V4L2_MAX_BAD);
	int err;
	struct capture *c = open_fake("YUYV", "", &err);
	assert_non_null(c);
	struct frame *f;
	for (int i = 0; i < CAPTURE_V4L2_MAX_BAD - 1; i++)
		assert_int_equal(capture_read(c, &f), ERR_FORMAT);
	assert_int_equal(capture_read(c, &f), ERR_DEVICE);
	capture_close(c);
}

static void test_fake_v4l2_formats_and_controls(void **state)
{
	(void)state;
	int err;
	/* asked-for format the camera lacks: a configuration error, not a retry */
	assert_null(open_fake("MJPG", "", &err));
	assert_int_equal(err, ERR_CONFIG);
	assert_null(open_fake("BOGUS", "", &err));
	assert_int_equal(err, ERR_CONFIG);
	assert_false(fk.open);

	/* GREY asked for explicitly (even emulated) */
	struct capture *c = open_fake("GREY", "brightness=300,gain=5,exposure=100,bogus=1,junk", &err);
	assert_non_null(c);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_GREY);
	assert_int_equal(fk.brightness, 255); /* clamped to the control's range */
	assert_int_equal(fk.exposure_auto, V4L2_EXPOSURE_MANUAL);
	assert_int_equal(fk.exposure_abs, 100);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(image_u8_row(&f->img, 3)[4], 7);
	capture_close(c);

	c = open_fake("auto", "exposure=auto", &err);
	assert_non_null(c);
	assert_int_equal(fk.exposure_auto, V4L2_EXPOSURE_APERTURE_PRIORITY);
	capture_close(c);

	/* a busy camera */
	fk.open = true;
	assert_null(open_fake("auto", "", &err));
	assert_int_equal(err, ERR_DEVICE);
	fk.open = false;
	assert_null(open_src("v4l2:/fake/nothing", false, &err));
	assert_int_equal(err, ERR_DEVICE);
}

static void test_fake_v4l2_mjpeg(void **state)
{
	NEED_JPEG();
	(void)state;
	const uint32_t mjpg = V4L2_PIX_FMT_MJPEG;
	const struct v4l2_fract rates[2] = {{1, 30}, {1, 60}};
	fake_set_formats(1, &mjpg, NULL);
	fake_add_size(0, 640, 480, 2, rates);
	fake_add_size(0, 320, 240, 2, rates);
	fk.jpeg_len = make_jpeg(320, 240, 5, &fk.jpeg);
	const enum fake_ev script[] = {EV_OK, EV_SHORT, EV_OK};
	fake_script(script, 3);
	int err;
	struct capture *c = open_fake("auto", "", &err);
	assert_non_null(c);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_MJPEG);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_in_range(image_u8_row(&f->img, 100)[50], (100 + 100 + 5) - 12, (100 + 100 + 5) + 12);
	/* a truncated JPEG decodes with a warning or fails: never a crash */
	int e = capture_read(c, &f);
	assert_true(e == 0 || e == ERR_FORMAT);
	assert_int_equal(capture_read(c, &f), 0);
	capture_close(c);
	tjFree(fk.jpeg);
	fk.jpeg = NULL;
}

static void test_fake_v4l2_listing(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	const char *paths[] = {"/fake/video0", "/fake/video9"};
	assert_int_equal(capture_v4l2_list_paths(out, paths, 2), 1);
	fclose(out);
	assert_non_null(strstr(text, "tabletrack fake camera"));
	assert_non_null(strstr(text, "format YUYV"));
	assert_non_null(strstr(text, "[converted by libv4l2]"));
	assert_non_null(strstr(text, "[not read by tabletrack]"));
	assert_non_null(strstr(text, "640x480 fps: 30 60"));
	assert_non_null(strstr(text, "Brightness"));
	assert_non_null(strstr(text, "Aperture Priority Mode"));
	assert_non_null(strstr(text, "/fake/video9: cannot open"));
	free(text);
	assert_false(fk.open);
}

/* ------------------------------------ FAKE camera: max/min/auto negotiation -- */

static struct capture *open_fake_want(const char *format, int w, int h, int fps, int *err)
{
	struct capture_config cfg = {.width = w, .height = h, .fps = fps, .n_buffers = 4};
	snprintf(cfg.source, sizeof cfg.source, "v4l2:/fake/video0");
	snprintf(cfg.format, sizeof cfg.format, "%s", format);
	*err = 1;
	struct capture *c = capture_open(&cfg, err);
	if (!c)
		fail_msg("the fake camera did not open with %s %dx%d at %d: %d", format, w, h, fps, *err);
	assert_int_equal(*err, 0);
	return c;
}

/* A fake camera with formats of different reach:
 *   GREY  stepwise 160x120..800x600 step 16x8, 10..90 fps (continuous)
 *   YUYV  discrete 640x480 (15 30 60), 1280x720 (10 29.97), 320x240 (30 60 120),
 *         1920x1080 (5 15), 1280x960 (7.5)   -- deliberately out of order
 *   UYVY  discrete 2592x1944 (2), 640x480 (30)
 *   MJPG  discrete 1920x1080 (30), 2592x1944 (15 2)
 *   RGB3  discrete 4096x3072 (30): largest of all, but not readable
 * and the driver's current format YUYV 640x480 at 30 fps. */
static void fake_rich(void)
{
	const uint32_t fmts[5] = {V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV,
				  V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_UYVY};
	fake_set_formats(5, fmts, NULL);
	fake_add_size(0, 4096, 3072, 1, (const struct v4l2_fract[]){{1, 30}});
	fake_add_size(1, 1920, 1080, 1, (const struct v4l2_fract[]){{1, 30}});
	fake_add_size(1, 2592, 1944, 2, (const struct v4l2_fract[]){{1, 15}, {1, 2}});
	fake_add_size(2, 640, 480, 3, (const struct v4l2_fract[]){{1, 15}, {1, 30}, {1, 60}});
	fake_add_size(2, 1280, 720, 2, (const struct v4l2_fract[]){{1, 10}, {1001, 30000}});
	fake_add_size(2, 320, 240, 3, (const struct v4l2_fract[]){{1, 30}, {1, 60}, {1, 120}});
	fake_add_size(2, 1920, 1080, 2, (const struct v4l2_fract[]){{1, 5}, {1, 15}});
	fake_add_size(2, 1280, 960, 1, (const struct v4l2_fract[]){{2, 15}});
	fk.fmt[3].stepwise = true;
	fk.fmt[3].range = (struct v4l2_frmsize_stepwise){.min_width = 160, .max_width = 800,
							  .step_width = 16, .min_height = 120,
							  .max_height = 600, .step_height = 8};
	fk.fmt[3].ival_min = (struct v4l2_fract){1, 90};
	fk.fmt[3].ival_max = (struct v4l2_fract){1, 10};
	fake_add_size(4, 2592, 1944, 1, (const struct v4l2_fract[]){{1, 2}});
	fake_add_size(4, 640, 480, 1, (const struct v4l2_fract[]){{1, 30}});
	fk.fourcc = V4L2_PIX_FMT_YUYV;
	fk.w = 640;
	fk.h = 480;
	fk.ival = (struct v4l2_fract){1, 30};
	fk.n_s_fmt = fk.n_s_parm = 0;
	fk.no_enum_sizes = fk.no_enum_ivals = false;
}

struct size_case {
	const char *format;
	int w, h, fps;
	int want_w, want_h;
	uint32_t want_num, want_den; /* the interval set; 0/0: S_PARM not called */
	int want_fps;                /* capture_fps() */
};

static void check_size_cases(const struct size_case *cases, size_t n, uint32_t fourcc)
{
	for (size_t i = 0; i < n; i++) {
		const struct size_case *k = &cases[i];
		fake_rich();
		int err;
		struct capture *c = open_fake_want(k->format, k->w, k->h, k->fps, &err);
		if (fk.fourcc != fourcc || fk.w != k->want_w || fk.h != k->want_h)
			fail_msg("case %zu (%s %d x %d): got %dx%d", i, k->format, k->w, k->h, fk.w, fk.h);
		if (k->want_num == 0)
			assert_int_equal(fk.n_s_parm, 0);
		else if (fk.ival.numerator != k->want_num || fk.ival.denominator != k->want_den)
			fail_msg("case %zu (fps %d): interval %u/%u, want %u/%u", i, k->fps,
				 fk.ival.numerator, fk.ival.denominator, k->want_num, k->want_den);
		assert_int_equal(capture_fps(c), k->want_fps);
		struct frame *f;
		assert_int_equal(capture_read(c, &f), 0);
		assert_int_equal(f->img.width, k->want_w);
		assert_int_equal(f->img.height, k->want_h);
		capture_close(c);
	}
}

static void test_fake_v4l2_negotiate_discrete(void **state)
{
	(void)state;
	enum { MAX = CAPTURE_SIZE_MAX, MIN = CAPTURE_SIZE_MIN, AUTO = CAPTURE_SIZE_AUTO };
	enum { FMAX = CAPTURE_FPS_MAX, FMIN = CAPTURE_FPS_MIN, FAUTO = CAPTURE_FPS_AUTO };
	static const struct size_case cases[] = {
	    /* largest by area, then its fastest / slowest rate */
	    {"YUYV", MAX, MAX, FMAX, 1920, 1080, 1, 15, 15},
	    {"YUYV", MAX, MAX, FMIN, 1920, 1080, 1, 5, 5},
	    {"YUYV", MIN, MIN, FMAX, 320, 240, 1, 120, 120},
	    {"YUYV", MIN, MIN, FMIN, 320, 240, 1, 30, 30},
	    /* auto beside max/min follows it */
	    {"YUYV", MAX, AUTO, 30, 1920, 1080, 1, 15, 15}, /* 30 is not offered there: nearest */
	    {"YUYV", AUTO, MIN, FAUTO, 320, 240, 0, 0, 30},
	    /* one side given: the size that matches it, best the other way */
	    {"YUYV", 1280, MAX, FMAX, 1280, 960, 2, 15, 8}, /* 7.5 fps, set as 2/15 exactly */
	    {"YUYV", 1280, MIN, FMAX, 1280, 720, 1001, 30000, 30},
	    {"YUYV", MAX, 480, 60, 640, 480, 1, 60, 60},
	    {"YUYV", 1280, AUTO, 0, 1280, 960, 0, 0, 30},
	    /* a given side nobody offers: the nearest (1280 beats 640), with a warning */
	    {"YUYV", 1000, MAX, FAUTO, 1280, 960, 0, 0, 30},
	    /* opposite directions: widest first, then the lowest at that width */
	    {"YUYV", MIN, MAX, FMAX, 320, 240, 1, 120, 120},
	    /* auto: the driver's current size and rate, untouched */
	    {"YUYV", AUTO, AUTO, FAUTO, 640, 480, 0, 0, 30},
	    {"YUYV", AUTO, AUTO, 0, 640, 480, 0, 0, 30},
	    /* given values: asked for as before */
	    {"YUYV", 320, 240, 60, 320, 240, 1, 60, 60},
	    {"YUYV", 800, 600, 60, 640, 480, 1, 60, 60}, /* the driver snaps: warned */
	};
	check_size_cases(cases, sizeof cases / sizeof cases[0], V4L2_PIX_FMT_YUYV);

	/* The explicit values went to S_FMT as given; max went as the size it chose. */
	fake_rich();
	int err;
	struct capture *c = open_fake_want("YUYV", 800, 600, 30, &err);
	assert_int_equal(fk.s_fmt_w, 800);
	assert_int_equal(fk.s_fmt_h, 600);
	capture_close(c);
	fake_rich();
	c = open_fake_want("YUYV", CAPTURE_SIZE_MAX, CAPTURE_SIZE_MAX, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.s_fmt_w, 1920);
	assert_int_equal(fk.s_fmt_h, 1080);
	assert_int_equal(fk.n_s_fmt, 1);
	assert_int_equal(fk.n_s_parm, 1);
	/* the description line says what was chosen and by which words */
	const char *d = capture_describe(c);
	if (!strstr(d, "YUYV 1920x1080 at 15 fps") || !strstr(d, "size max x max, fps max"))
		fail_msg("description: %s", d);
	capture_close(c);
}

static void test_fake_v4l2_negotiate_stepwise(void **state)
{
	(void)state;
	enum { MAX = CAPTURE_SIZE_MAX, MIN = CAPTURE_SIZE_MIN, AUTO = CAPTURE_SIZE_AUTO };
	enum { FMAX = CAPTURE_FPS_MAX, FMIN = CAPTURE_FPS_MIN };
	static const struct size_case cases[] = {
	    {"GREY", MAX, MAX, FMAX, 800, 600, 1, 90, 90},
	    {"GREY", MIN, MIN, FMIN, 160, 120, 1, 10, 10},
	    {"grey", MAX, AUTO, 25, 800, 600, 1, 25, 25},
	    /* a given width off the 16-pixel steps: the nearest step, 496 */
	    {"GREY", 500, MAX, FMAX, 496, 600, 1, 90, 90},
	    {"GREY", MIN, 300, FMIN, 160, 304, 1, 10, 10},
	    {"GREY", 640, 480, 30, 640, 480, 1, 30, 30},
	};
	check_size_cases(cases, sizeof cases / sizeof cases[0], V4L2_PIX_FMT_GREY);
	/* a continuous range (step 1) */
	fake_rich();
	fk.fmt[3].range.step_width = fk.fmt[3].range.step_height = 1;
	int err;
	struct capture *c = open_fake_want("GREY", 333, CAPTURE_SIZE_MIN, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.w, 333);
	assert_int_equal(fk.h, 120);
	assert_int_equal(capture_fps(c), 90);
	capture_close(c);
}

static void test_fake_v4l2_negotiate_format(void **state)
{
	NEED_JPEG();
	(void)state;
	enum { MAX = CAPTURE_SIZE_MAX, MIN = CAPTURE_SIZE_MIN, AUTO = CAPTURE_SIZE_AUTO };
	int err;
	/* max: the readable format with the largest size (RGB3's 4096x3072 cannot be
	 * read); MJPG and UYVY both reach 2592x1944, MJPG faster there (15 vs 2 fps) */
	fake_rich();
	struct capture *c = open_fake_want("max", MAX, MAX, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_MJPEG);
	assert_int_equal(fk.w, 2592);
	assert_int_equal(fk.h, 1944);
	assert_int_equal(capture_fps(c), 15);
	if (!strstr(capture_describe(c), "format max, size max x max, fps max"))
		fail_msg("description: %s", capture_describe(c));
	capture_close(c);
	/* without MJPG, the tie at 2592x1944 goes to the faster rate: UYVY's 2 fps
	 * against YUYV's 1920x1080 that is smaller */
	fake_rich();
	fk.fmt[1].fourcc = V4L2_PIX_FMT_RGB32;
	c = open_fake_want("MAX", AUTO, AUTO, CAPTURE_FPS_AUTO, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_UYVY);
	capture_close(c);
	/* equal largest size and rate: the cheaper format wins (YUYV before UYVY) */
	fake_rich();
	fk.fmt[1].fourcc = V4L2_PIX_FMT_RGB32;
	fake_add_size(2, 2592, 1944, 1, (const struct v4l2_fract[]){{1, 2}});
	c = open_fake_want("max", MAX, MAX, CAPTURE_FPS_MIN, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_YUYV);
	assert_int_equal(fk.w, 2592);
	assert_int_equal(capture_fps(c), 2);
	capture_close(c);
	/* min: the format whose largest size is smallest: GREY (800x600) */
	fake_rich();
	c = open_fake_want("min", MIN, MIN, CAPTURE_FPS_MIN, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_GREY);
	assert_int_equal(fk.w, 160);
	assert_int_equal(fk.h, 120);
	assert_int_equal(capture_fps(c), 10);
	capture_close(c);
	/* auto: the cheapest native luma, GREY, at the driver's current size */
	fake_rich();
	c = open_fake_want("auto", AUTO, AUTO, 30, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_GREY);
	assert_int_equal(fk.w, 640);
	assert_int_equal(fk.h, 480);
	capture_close(c);
	/* a given format keeps its sizes: MJPG max = 2592x1944, min = 1920x1080 */
	fake_rich();
	c = open_fake_want("MJPG", MIN, MIN, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_MJPEG);
	assert_int_equal(fk.w, 1920);
	assert_int_equal(capture_fps(c), 30);
	capture_close(c);
}

/* A FAKE driver without VIDIOC_ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS: the
 * words fall back to what the driver has, and the camera still opens. */
static void test_fake_v4l2_negotiate_without_enum(void **state)
{
	(void)state;
	int err;
	fake_rich();
	fk.no_enum_sizes = fk.no_enum_ivals = true;
	struct capture *c = open_fake_want("max", CAPTURE_SIZE_MAX, CAPTURE_SIZE_MAX, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_YUYV); /* the driver's current one */
	assert_int_equal(fk.w, 640);
	assert_int_equal(fk.h, 480);
	assert_int_equal(fk.n_s_parm, 0);
	assert_int_equal(capture_fps(c), 30);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(f->img.width, 640);
	capture_close(c);

	fake_rich();
	fk.no_enum_sizes = fk.no_enum_ivals = true;
	c = open_fake_want("min", CAPTURE_SIZE_MIN, 240, CAPTURE_FPS_MIN, &err);
	assert_int_equal(fk.w, 640); /* the current size: nothing to choose from */
	capture_close(c);

	/* the current format unreadable: auto's choice */
	fake_rich();
	fk.no_enum_sizes = fk.no_enum_ivals = true;
	fk.fourcc = V4L2_PIX_FMT_RGB24;
	c = open_fake_want("min", CAPTURE_SIZE_MIN, CAPTURE_SIZE_MIN, CAPTURE_FPS_AUTO, &err);
	assert_int_equal(fk.fourcc, V4L2_PIX_FMT_GREY);
	capture_close(c);

	/* given values still work */
	fake_rich();
	fk.no_enum_sizes = fk.no_enum_ivals = true;
	c = open_fake_want("YUYV", 320, 240, 60, &err);
	assert_int_equal(fk.w, 320);
	assert_int_equal(capture_fps(c), 60);
	capture_close(c);

	/* sizes listed, rates not: max size, current rate */
	fake_rich();
	fk.no_enum_ivals = true;
	c = open_fake_want("YUYV", CAPTURE_SIZE_MAX, CAPTURE_SIZE_MAX, CAPTURE_FPS_MAX, &err);
	assert_int_equal(fk.w, 1920);
	assert_int_equal(fk.n_s_parm, 0);
	capture_close(c);
}

/* The pipeline paces file sources with capture_pace_fps(): the words never
 * mean "unthrottled". */
static void test_pace_fps_and_words(void **state)
{
	(void)state;
	assert_int_equal(capture_pace_fps(60), 60);
	assert_int_equal(capture_pace_fps(0), 0);
	assert_int_equal(capture_pace_fps(CAPTURE_FPS_MAX), 30);
	assert_int_equal(capture_pace_fps(CAPTURE_FPS_MIN), 30);
	assert_int_equal(capture_pace_fps(CAPTURE_FPS_AUTO), 30);
	_Static_assert(TT_SIZE_AUTO == CAPTURE_SIZE_AUTO && TT_SIZE_MAX == CAPTURE_SIZE_MAX &&
			       TT_SIZE_MIN == CAPTURE_SIZE_MIN && TT_FPS_MAX == CAPTURE_FPS_MAX &&
			       TT_FPS_MIN == CAPTURE_FPS_MIN && TT_FPS_AUTO == CAPTURE_FPS_AUTO &&
			       TT_FPS_DEFAULT == CAPTURE_FPS_DEFAULT,
		       "config.h and capture.h disagree on the words' values");
	/* the demo takes the words as its defaults: 640x480 at 30 fps */
	struct capture_config cfg = {.width = CAPTURE_SIZE_MAX, .height = CAPTURE_SIZE_MIN,
				     .fps = CAPTURE_FPS_MAX, .n_buffers = 4};
	snprintf(cfg.source, sizeof cfg.source, "demo");
	int err;
	struct capture *c = capture_open(&cfg, &err);
	assert_non_null(c);
	assert_int_equal(capture_fps(c), 30);
	struct frame *f;
	assert_int_equal(capture_read(c, &f), 0);
	assert_int_equal(f->img.width, 640);
	assert_int_equal(f->img.height, 480);
	capture_close(c);
}

/* ---------------------------------------------------- real hardware -- */

static void test_real_list_cameras(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int e = capture_list_cameras(out);
	fclose(out);
	assert_true(e == 0 || e == ERR_DEVICE);
	assert_true(len > 0);
	if (e)
		assert_non_null(strstr(text, "no V4L2"));
	free(text);
}

static void test_real_device(void **state)
{
	(void)state;
	const char *dev = getenv("TABLETRACK_TEST_DEVICE");
	if (!dev || !dev[0]) {
		fprintf(stderr, "set TABLETRACK_TEST_DEVICE=/dev/videoN to test a real camera\n");
		skip();
	}
	struct capture_config cfg = {.n_buffers = 4};
	snprintf(cfg.source, sizeof cfg.source, "v4l2:%s", dev);
	snprintf(cfg.format, sizeof cfg.format, "auto");
	int err;
	struct capture *c = capture_open(&cfg, &err);
	assert_non_null(c);
	fprintf(stderr, "real camera: %s\n", capture_describe(c));
	int n = 0;
	int64_t last = 0;
	for (int tries = 0; tries < 200 && n < 10; tries++) {
		struct frame *f;
		int e = capture_read(c, &f);
		assert_true(e == 0 || e == ERR_AGAIN || e == ERR_FORMAT);
		if (e)
			continue;
		assert_true(f->img.width > 0 && f->img.height > 0);
		assert_true(f->t_capture_ns > last);
		last = f->t_capture_ns;
		n++;
	}
	assert_int_equal(n, 10);
	capture_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folder_order_and_bad_frames),
		cmocka_unit_test(test_folder_errors),
		cmocka_unit_test(test_folder_read_into),
		cmocka_unit_test(test_folder_pgm_header_and_truncation),
		cmocka_unit_test(test_file_source),
		cmocka_unit_test(test_read_into_slot),
		cmocka_unit_test(test_raw_fifo),
		cmocka_unit_test(test_raw_stdin_pipe),
		cmocka_unit_test(test_demo_deterministic_and_moving),
		cmocka_unit_test(test_faulty_schedules),
		cmocka_unit_test(test_pixfmt_packed_and_planar),
		cmocka_unit_test(test_pixfmt_mjpeg),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_state_machine, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_repeated_eio_is_lost, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_formats_and_controls, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_mjpeg, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_listing, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_negotiate_discrete, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_negotiate_stepwise, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_negotiate_format, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_fake_v4l2_negotiate_without_enum, fake_setup,
						fake_teardown),
		cmocka_unit_test(test_pace_fps_and_words),
		cmocka_unit_test(test_real_list_cameras),
		cmocka_unit_test(test_real_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
