/* test_objects.c - the object library (format round trip, every kind of
 * bad file refused), recognition (ratio test and RANSAC similarity) on
 * keypoints with a known pose, the object ID range's config rule, and the
 * SIFT backend (skipped without OpenCV) on a picture turned by a known angle. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/config/config.h"
#include "../src/core/err.h"
#include "../src/core/log.h"
#include "../src/objects/follow.h"
#include "../src/objects/learn.h"
#include "../src/objects/objects.h"
#include "../src/objects/recognise.h"
#include "../src/objects/sift.h"
#include "../src/objects/stage.h"
#include "../src/segment/segment.h"
#include "../src/threshold/threshold.h"
#include "common/sift_scene.h"
#include "common/testutil.h"

static void random_keypoints(struct objects_keypoint *kp, int n, int w, int h, uint32_t *rs)
{
	for (int i = 0; i < n; i++) {
		kp[i].x = (float)(test_rand(rs) % (uint32_t)((w - 1) * 100)) / 100.0f;
		kp[i].y = (float)(test_rand(rs) % (uint32_t)((h - 1) * 100)) / 100.0f;
		kp[i].size = 2.0f + (float)(test_rand(rs) % 3000) / 100.0f;
		kp[i].angle_deg = (float)(test_rand(rs) % 36000) / 100.0f;
		kp[i].response = (float)(test_rand(rs) % 1000) / 10000.0f;
		for (int d = 0; d < OBJECTS_DESC_LEN; d++)
			kp[i].desc[d] = (uint8_t)(test_rand(rs) % 160);
	}
}

/* A library whose objects hold no keypoint at all has no keypoint array
 * (NULL): an object read from it has none and no pointer into that array
 * (NULL + 0 is undefined: fuzz_objects found it under UBSan), and one
 * removed leaves the rest as they were. */
static void test_no_keypoints(void **state)
{
	(void)state;
	struct objects_library *lib = objects_library_new();
	assert_non_null(lib);
	assert_int_equal(objects_library_add(lib, 1000, "card", 20, 10, NULL, 0), 0);
	assert_int_equal(objects_library_add(lib, 1001, "tile", 20, 10, NULL, 0), 0);
	struct objects_object o;
	assert_int_equal(objects_library_get(lib, 1, &o), 0);
	assert_int_equal(o.id, 1001);
	assert_int_equal(o.n_keypoints, 0);
	assert_null(o.kp);
	assert_int_equal(objects_library_remove(lib, 0), 0);
	assert_int_equal(objects_library_count(lib), 1);
	assert_int_equal(objects_library_get(lib, 0, &o), 0);
	assert_int_equal(o.id, 1001);
	assert_string_equal(o.name, "tile");
	objects_library_free(lib);
}

static void test_round_trip(void **state)
{
	(void)state;
	uint32_t rs = 7;
	static struct objects_keypoint a[300], b[5];
	random_keypoints(a, 300, 320, 240, &rs);
	random_keypoints(b, 5, 40, 30, &rs);
	struct objects_library *lib = objects_library_new();
	assert_non_null(lib);
	assert_int_equal(objects_library_add(lib, 1000, "card", 320, 240, a, 300), 0);
	assert_int_equal(objects_library_add(lib, 1007, "tile-7.b", 40, 30, b, 5), 0);
	assert_int_equal(objects_library_add(lib, 1008, "empty", 10, 10, NULL, 0), 0);
	/* Used IDs and names, bad names and keypoints outside the picture are refused. */
	assert_int_equal(objects_library_add(lib, 1000, "other", 320, 240, a, 1), ERR_RANGE);
	assert_int_equal(objects_library_add(lib, 1001, "card", 320, 240, a, 1), ERR_RANGE);
	assert_int_equal(objects_library_add(lib, 1001, "a b", 320, 240, a, 1), ERR_FORMAT);
	assert_int_equal(objects_library_add(lib, 1001, "small", 10, 10, a, 300), ERR_FORMAT);
	assert_int_equal(objects_library_count(lib), 3);

	char path[512];
	snprintf(path, sizeof path, "%s/lib.objects", test_tmpdir());
	assert_int_equal(objects_library_save(lib, path), 0);
	struct objects_library *back = NULL;
	assert_int_equal(objects_library_load(path, &back), 0);
	assert_int_equal(objects_library_count(back), 3);
	for (int i = 0; i < 3; i++) {
		struct objects_object x, y;
		assert_int_equal(objects_library_get(lib, i, &x), 0);
		assert_int_equal(objects_library_get(back, i, &y), 0);
		assert_int_equal(x.id, y.id);
		assert_string_equal(x.name, y.name);
		assert_int_equal(x.width, y.width);
		assert_int_equal(x.height, y.height);
		assert_int_equal(x.n_keypoints, y.n_keypoints);
		if (x.n_keypoints)
			assert_memory_equal(x.kp, y.kp, sizeof *x.kp * (size_t)x.n_keypoints);
	}
	/* Removing keeps the others whole. */
	assert_int_equal(objects_library_remove(back, 0), 0);
	struct objects_object t;
	assert_int_equal(objects_library_get(back, 0, &t), 0);
	assert_string_equal(t.name, "tile-7.b");
	assert_memory_equal(t.kp, b, sizeof b);
	assert_int_equal(objects_library_find_id(back, 1008), 1);
	objects_library_free(back);
	objects_library_free(lib);
	remove(path);
}

static const char *const K_LINE =
    "k 1 2 3.5 90 0.01 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";

static int parse(const char *text)
{
	struct objects_library *lib = NULL;
	int rc = objects_library_parse(text, strlen(text), "test", &lib);
	if (rc == 0) {
		assert_non_null(lib);
		objects_library_free(lib);
	} else {
		assert_null(lib);
	}
	return rc;
}

static void test_bad_files(void **state)
{
	(void)state;
	char buf[4096];
	enum log_level was = log_get_level();
	log_set_level(LOG_ERROR - 1);
	assert_int_equal(parse("tabletrack-objects 1\n"), 0);
	assert_int_equal(parse("# a library\n\ntabletrack-objects 1\r\n# nothing yet\n"), 0);
	snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 1 a\n%s", K_LINE);
	assert_int_equal(parse(buf), 0);

	assert_int_equal(parse(""), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-object 1\n"), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-objects\n"), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-objects 2\n"), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-objects 1\nthing 1\n"), ERR_FORMAT);
	snprintf(buf, sizeof buf, "tabletrack-objects 1\n%s", K_LINE);
	assert_int_equal(parse(buf), ERR_FORMAT); /* k before any object */
	/* A declared count larger than the lines that follow, and one beyond the bound. */
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 16384 a\n"), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 16385 a\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 99999999999999999999 a\n"), ERR_RANGE);
	snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 1 a\n%s%s", K_LINE, K_LINE);
	assert_int_equal(parse(buf), ERR_FORMAT); /* more k lines than declared */
	snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 2 a\n%sobject 6 10 10 0 b\n", K_LINE);
	assert_int_equal(parse(buf), ERR_FORMAT); /* the next object before the k lines are done */
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 0 a\nobject 5 10 10 0 b\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 0 a\nobject 6 10 10 0 a\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 0 a/b\n"), ERR_FORMAT);
	assert_int_equal(parse("tabletrack-objects 1\nobject -1 10 10 0 a\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 0 10 0 a\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 8193 10 0 a\n"), ERR_RANGE);
	assert_int_equal(parse("tabletrack-objects 1\nobject 5 10 10 0\n"), ERR_FORMAT);
	/* Keypoints: outside the picture, not a number, short descriptor, bad hex. */
	const char *bad_k[] = {
	    "k 11 2 3.5 90 0.01 ", "k 1 2 nan 90 0.01 ", "k 1 2 3.5 360 0.01 ", "k 1 2 3.5 90 -1 ",
	    "k 1 2 0x10 90 0.01 ", "k 1 2 3.5 inf 0.01 ",
	};
	for (size_t i = 0; i < sizeof bad_k / sizeof bad_k[0]; i++) {
		snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 1 a\n%s%s", bad_k[i],
			 strrchr(K_LINE, ' ') + 1);
		assert_int_not_equal(parse(buf), 0);
	}
	snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 1 a\n%s", K_LINE);
	buf[strlen(buf) - 2] = '\n'; /* one hex digit short */
	assert_int_equal(parse(buf), ERR_FORMAT);
	snprintf(buf, sizeof buf, "tabletrack-objects 1\nobject 5 10 10 1 a\n%s", K_LINE);
	buf[strlen(buf) - 5] = 'g';
	assert_int_equal(parse(buf), ERR_FORMAT);
	/* A line longer than the bound. */
	memset(buf, 'x', sizeof buf);
	memcpy(buf, "tabletrack-objects 1\n# ", 23);
	buf[sizeof buf - 1] = 0;
	assert_int_equal(parse(buf), ERR_FORMAT);
	/* A NUL inside a line. */
	const char nul[] = "tabletrack-objects 1\nobject 5 10\0 10 0 a\n";
	struct objects_library *lib = NULL;
	assert_int_equal(objects_library_parse(nul, sizeof nul - 1, "test", &lib), ERR_FORMAT);
	assert_null(lib);
	/* Not a regular file. */
	assert_int_equal(objects_library_load("/dev/zero", &lib), ERR_IO);
	assert_int_equal(objects_library_load("/nonexistent/lib.objects", &lib), ERR_IO);
	log_set_level(was);
}

/* Scene keypoints: the object's keypoints moved by a known similarity
 * (some dropped as if covered, descriptors disturbed a little), among
 * random clutter keypoints. */
static int make_scene(const struct objects_keypoint *obj, int n_obj, double s, double theta, double tx, double ty,
		      int n_clutter, struct objects_keypoint *scene, uint32_t *rs)
{
	int n = 0;
	double c = cos(theta), sn = sin(theta);
	for (int i = 0; i < n_obj; i++) {
		if (test_rand(rs) % 10 < 3)
			continue;
		struct objects_keypoint k = obj[i];
		k.x = (float)(s * (c * obj[i].x - sn * obj[i].y) + tx + (double)(test_rand(rs) % 100) / 200.0 - 0.25);
		k.y = (float)(s * (sn * obj[i].x + c * obj[i].y) + ty + (double)(test_rand(rs) % 100) / 200.0 - 0.25);
		k.size = (float)(obj[i].size * s);
		k.angle_deg = (float)fmod(obj[i].angle_deg + theta * 180 / M_PI + 360, 360);
		for (int d = 0; d < OBJECTS_DESC_LEN; d++) {
			int v = k.desc[d] + (int)(test_rand(rs) % 9) - 4;
			k.desc[d] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
		scene[n++] = k;
	}
	random_keypoints(scene + n, n_clutter, 1280, 720, rs);
	return n + n_clutter;
}

static void test_recognise_known_pose(void **state)
{
	(void)state;
	uint32_t rs = 99;
	static struct objects_keypoint a[200], b[150], scene[800];
	random_keypoints(a, 200, 300, 200, &rs);
	random_keypoints(b, 150, 250, 250, &rs);
	struct objects_library *lib = objects_library_new();
	assert_int_equal(objects_library_add(lib, 1000, "a", 300, 200, a, 200), 0);
	assert_int_equal(objects_library_add(lib, 1001, "b", 250, 250, b, 150), 0);
	struct objects_match_config mc;
	objects_match_config_default(&mc);
	int err;
	struct objects_recogniser *r = objects_recogniser_create(lib, &mc, 800, &err);
	assert_non_null(r);

	const double cases[][4] = {{1.0, 0.0, 100, 50}, {0.5, 2.0, 600, 300}, {2.0, 4.0, 700, 100}, {1.3, 5.9, 300, 600}};
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		double s = cases[t][0], th = cases[t][1];
		int n = make_scene(a, 200, s, th, cases[t][2], cases[t][3], 400, scene, &rs);
		struct objects_detection d[4];
		int nd = -1;
		assert_int_equal(objects_recognise(r, scene, n, d, 4, &nd), 0);
		assert_int_equal(nd, 1);
		assert_int_equal(d[0].id, 1000);
		assert_int_equal(d[0].index, 0);
		double cx = 149.5, cy = 99.5;
		double ex = s * (cos(th) * cx - sin(th) * cy) + cases[t][2], ey = s * (sin(th) * cx + cos(th) * cy) + cases[t][3];
		assert_true(fabs(d[0].x - ex) < 0.3);
		assert_true(fabs(d[0].y - ey) < 0.3);
		assert_true(fabs(d[0].angle - th) < 0.005);
		assert_true(fabs(d[0].scale - s) < 0.005 * s);
		assert_true(d[0].n_inliers >= 100);
	}
	/* Clutter alone: nothing. */
	random_keypoints(scene, 800, 1280, 720, &rs);
	struct objects_detection d[4];
	int nd = -1;
	assert_int_equal(objects_recognise(r, scene, 800, d, 4, &nd), 0);
	assert_int_equal(nd, 0);
	/* Keypoints that look right but sit in no consistent pose: nothing. */
	int n = make_scene(b, 150, 1.0, 1.0, 500, 300, 0, scene, &rs);
	for (int i = 0; i < n; i++) {
		scene[i].x = (float)(test_rand(&rs) % 1280);
		scene[i].y = (float)(test_rand(&rs) % 720);
	}
	assert_int_equal(objects_recognise(r, scene, n, d, 4, &nd), 0);
	assert_int_equal(nd, 0);
	/* A mirrored object is not a similarity of the learned one. */
	n = make_scene(b, 150, 1.0, 0.0, 500, 300, 0, scene, &rs);
	for (int i = 0; i < n; i++)
		scene[i].x = 1000 - scene[i].x;
	assert_int_equal(objects_recognise(r, scene, n, d, 4, &nd), 0);
	assert_int_equal(nd, 0);
	/* Too many scene keypoints for the buffers. */
	assert_int_equal(objects_recognise(r, scene, 801, d, 4, &nd), ERR_RANGE);
	objects_recogniser_destroy(r);
	objects_library_free(lib);
}

/* The matching search against the plain definition: every distance in
 * full, ties to the lower index, the second smallest over the rest. Few
 * byte values and copied descriptors make ties common. */
static void test_nearest_reference(void **state)
{
	(void)state;
	uint32_t rs = 4242;
	static struct objects_keypoint lib[300], q[120];
	static struct objects_nearest nn[120];
	static const int sizes[] = {0, 1, 2, 3, 17, 300};
	for (int levels = 2; levels <= 256; levels *= 8) {
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			const int n_lib = sizes[k];
			for (int i = 0; i < n_lib; i++)
				for (int d = 0; d < OBJECTS_DESC_LEN; d++)
					lib[i].desc[d] = (uint8_t)(test_rand(&rs) % (uint32_t)levels * (255 / (levels - 1)));
			for (int i = 0; i + 1 < n_lib; i += 5)
				memcpy(lib[i + 1 + test_rand(&rs) % (uint32_t)(n_lib - i - 1)].desc, lib[i].desc,
				       OBJECTS_DESC_LEN);
			for (int i = 0; i < 120; i++) {
				if (n_lib > 0 && i % 3 == 0)
					memcpy(q[i].desc, lib[test_rand(&rs) % (uint32_t)n_lib].desc, OBJECTS_DESC_LEN);
				else
					for (int d = 0; d < OBJECTS_DESC_LEN; d++)
						q[i].desc[d] = (uint8_t)(test_rand(&rs) % (uint32_t)levels * (255 / (levels - 1)));
			}
			objects_nearest_cpu(lib, n_lib, q, 120, nn);
			for (int i = 0; i < 120; i++) {
				uint32_t d1 = UINT32_MAX, d2 = UINT32_MAX;
				int best = -1;
				for (int l = 0; l < n_lib; l++) {
					uint32_t d = 0;
					for (int b = 0; b < OBJECTS_DESC_LEN; b++)
						d += (uint32_t)((q[i].desc[b] - lib[l].desc[b]) * (q[i].desc[b] - lib[l].desc[b]));
					if (best < 0 || d < d1)
						best = l, d1 = d;
				}
				for (int l = 0; l < n_lib; l++) {
					uint32_t d = 0;
					for (int b = 0; b < OBJECTS_DESC_LEN; b++)
						d += (uint32_t)((q[i].desc[b] - lib[l].desc[b]) * (q[i].desc[b] - lib[l].desc[b]));
					if (l != best && d < d2)
						d2 = d;
				}
				assert_int_equal(nn[i].index, best);
				assert_int_equal(nn[i].d1, d1);
				assert_int_equal(nn[i].d2, d2);
			}
		}
	}
}

/* The scenes of the following tests: a textured card (180 x 120) moving
 * and turning across a plain table beside a still textured patch; frame k
 * puts the card's centre at (x0 + vx k, y0 + vy k), turned by 0.2 + 0.012 k
 * rad; `lifted` leaves it out. Thresholded and segmented as the daemon
 * does; the tree is the segmenter's (valid until its next frame). */
struct card_scenes {
	struct image_u8 pic, patch, scene;
	struct threshold *thr;
	struct bitmask mask;
	struct segment *seg;
	double x0, y0, vx, vy;
};

enum { CARD_W = 640, CARD_H = 480 };

static void card_scenes_init(struct card_scenes *c, double x0, double y0, double vx, double vy)
{
	*c = (struct card_scenes){.x0 = x0, .y0 = y0, .vx = vx, .vy = vy};
	assert_int_equal(image_u8_alloc(&c->pic, 180, 120), 0);
	assert_int_equal(image_u8_alloc(&c->patch, 110, 90), 0);
	assert_int_equal(image_u8_alloc(&c->scene, CARD_W, CARD_H), 0);
	sift_scene_texture(&c->pic, 5, 180 * 120 / 400);
	sift_scene_texture(&c->patch, 6, 110 * 90 / 400);
	struct threshold_config tc = {.max_width = CARD_W, .max_height = CARD_H, .mode = THRESHOLD_BERNSEN,
				      .radius = 6, .gate = 32, .tile = 10, .mean_radius = 16, .mean_bias = 16};
	int err = 0;
	c->thr = threshold_create(&tc, "cpu", &err);
	assert_non_null(c->thr);
	assert_int_equal(bitmask_alloc(&c->mask, CARD_W, CARD_H), 0);
	struct segment_config sc = {CARD_W, CARD_H, 19, 0, 0};
	c->seg = segment_create(&sc, &err);
	assert_non_null(c->seg);
}

static void card_scenes_free(struct card_scenes *c)
{
	segment_destroy(c->seg);
	bitmask_free(&c->mask);
	threshold_destroy(c->thr);
	image_u8_free(&c->pic);
	image_u8_free(&c->patch);
	image_u8_free(&c->scene);
}

static const struct region_tree *card_frame(struct card_scenes *c, int k, bool lifted, double truth[3])
{
	truth[0] = c->x0 + c->vx * k;
	truth[1] = c->y0 + c->vy * k;
	truth[2] = 0.2 + 0.012 * k;
	uint32_t rs = 77 + (uint32_t)k;
	for (int y = 0; y < CARD_H; y++)
		for (int x = 0; x < CARD_W; x++)
			image_u8_row(&c->scene, y)[x] = (uint8_t)(196 + test_rand(&rs) % 5);
	sift_scene_place(&c->scene, &c->patch, 560, 90, 0.3, 1.0);
	if (!lifted)
		sift_scene_place(&c->scene, &c->pic, truth[0], truth[1], truth[2], 1.0);
	const struct region_tree *tree = NULL;
	assert_int_equal(threshold_process(c->thr, &c->scene, &c->mask), 0);
	assert_int_equal(segment_process(c->seg, &c->mask, &tree), 0);
	return tree;
}

/* The follower alone, started at the true pose: it stays on it every
 * frame, and says the card has gone when it is lifted. */
static void test_follow_moving(void **state)
{
	(void)state;
	enum { FRAMES = 48 };
	struct card_scenes cs;
	card_scenes_init(&cs, 170, 200, 3.0, 1.5);
	struct objects_follow f;
	double worst_px = 0, worst_deg = 0;
	for (int k = 0; k <= FRAMES; k++) {
		const bool lifted = k == FRAMES;
		double t[3];
		const struct region_tree *tree = card_frame(&cs, k, lifted, t);
		if (k == 0) {
			const double c = cos(t[2]), sn = sin(t[2]), hw = 89.5, hh = 59.5;
			struct objects_pose p = {.a = c, .b = sn, .tx = t[0] - (c * hw - sn * hh),
						 .ty = t[1] - (sn * hw + c * hh)};
			objects_follow_start(&f, &p, 180, 120);
		}
		enum objects_follow_result r = objects_follow_step(&f, tree);
		if (lifted) {
			assert_int_equal(r, OBJECTS_FOLLOW_GONE);
			break;
		}
		assert_int_equal(r, OBJECTS_FOLLOW_MOVED);
		double centre[2];
		objects_pose_apply(&f.pose, 89.5, 59.5, centre);
		double dp = hypot(centre[0] - t[0], centre[1] - t[1]);
		double da = fabs(remainder(atan2(f.pose.b, f.pose.a) - t[2], 2 * M_PI)) * 180 / M_PI;
		double ds = fabs(hypot(f.pose.a, f.pose.b) - 1.0);
		worst_px = fmax(worst_px, dp);
		worst_deg = fmax(worst_deg, da);
		if (dp > 2.5 || da > 2.0 || ds > 1e-9)
			print_message("frame %d: position error %.2f px, angle error %.2f deg, scale %.4f, %d rounds\n", k,
				      dp, da, hypot(f.pose.a, f.pose.b), f.rounds);
		assert_true(dp <= 2.5);
		assert_true(da <= 2.0);
		assert_true(ds <= 1e-9);
	}
	print_message("follower: %d frames at 3.4 px and 0.7 deg a frame: worst %.2f px, %.2f deg\n", FRAMES,
		      worst_px, worst_deg);
	card_scenes_free(&cs);
}

/* The stage as the daemon drives it in a replay (wait, poll, follow,
 * submit), recognising with OpenCV at 10 Hz of a 60 fps clock: between
 * recognitions the card is followed, and a recognition (of a frame one
 * frame old when it arrives) is carried to the present by the motion
 * followed since. Every frame from the first result on, the card is
 * within 2.5 px and 2 degrees of the truth; lifted, it is gone at once.
 * Skipped without OpenCV. */
static void test_stage_follows(void **state)
{
	(void)state;
	char why[256];
	if (sift_backend_check("opencv", why, sizeof why) != 0) {
		print_message("skipped: %s\n", why);
		skip();
	}
	enum { FRAMES = 40 };
	struct card_scenes cs;
	card_scenes_init(&cs, 170, 200, 3.0, 1.5);
	struct sift_config sc;
	sift_config_default(&sc);
	int err = 0, n = 0;
	struct sift *sf = sift_create(&sc, "opencv", &err);
	assert_non_null(sf);
	static struct objects_keypoint kp[2000];
	assert_int_equal(sift_extract(sf, &cs.pic, kp, 2000, &n), 0);
	sift_destroy(sf);
	struct objects_library *lib = objects_library_new();
	assert_int_equal(objects_library_add(lib, 1000, "card", 180, 120, kp, n), 0);
	struct objects_stage_config oc = {.lib = lib, .width = CARD_W, .height = CARD_H, .backend = "opencv",
					  .rate_hz = 10, .hold_ns = 1000000000, .max_detections = 64, .follow = true};
	sift_config_default(&oc.sift);
	objects_match_config_default(&oc.match);
	struct objects_stage *st = objects_stage_create(&oc, &err);
	assert_non_null(st);
	double worst_px = 0, worst_deg = 0;
	int recognitions = 0;
	for (int k = 0; k <= FRAMES; k++) {
		const bool lifted = k == FRAMES;
		double t[3];
		const struct region_tree *tree = card_frame(&cs, k, lifted, t);
		const int64_t t_ns = (int64_t)(k + 1) * 16666667;
		objects_stage_wait(st);
		objects_stage_poll(st, (uint64_t)k + 1, t_ns);
		objects_stage_follow(st, tree);
		recognitions += objects_stage_submit(st, &cs.scene, tree, (uint64_t)k + 1, t_ns);
		const struct objects_seen *seen = objects_stage_seen(st, &n);
		if (lifted) {
			assert_int_equal(n, 0);
			break;
		}
		if (k == 0)
			continue;
		assert_int_equal(n, 1);
		double dp = hypot(seen[0].x - t[0], seen[0].y - t[1]);
		double da = fabs(remainder(seen[0].angle - t[2], 2 * M_PI)) * 180 / M_PI;
		worst_px = fmax(worst_px, dp);
		worst_deg = fmax(worst_deg, da);
		if (dp > 2.5 || da > 2.0)
			print_message("frame %d: position error %.2f px, angle error %.2f deg\n", k, dp, da);
		assert_true(dp <= 2.5);
		assert_true(da <= 2.0);
	}
	print_message("stage: %d frames at 3.4 px and 0.7 deg a frame, %d recognitions: worst %.2f px, %.2f deg\n",
		      FRAMES, recognitions, worst_px, worst_deg);
	assert_true(recognitions >= 5 && recognitions <= 8);
	objects_stage_destroy(st);
	objects_library_free(lib);
	card_scenes_free(&cs);
}

/* The window's O: a box of a frame learned into a library file (created),
 * the next free ID each time, and the object then recognised in that
 * frame at the box's centre. Bad boxes and plain boxes are refused.
 * Skipped without OpenCV. */
static void test_learn_box(void **state)
{
	(void)state;
	char why[256], path[] = "/tmp/tt-learn-XXXXXX";
	if (sift_backend_check("opencv", why, sizeof why) != 0) {
		print_message("skipped: %s\n", why);
		skip();
	}
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	struct card_scenes cs;
	card_scenes_init(&cs, 250, 230, 0, 0);
	double t[3];
	card_frame(&cs, 0, false, t);
	const int box[4] = {130, 130, 370, 330};
	struct objects_learn_config lc = {.path = path, .id_min = 1000, .id_max = 1001, .max_keypoints = 1000,
					  .backend = "opencv"};
	int id = 0, n = 0;
	char name[64];
	assert_int_equal(objects_learn_box(&lc, &cs.scene, box, &id, name, sizeof name, &n), 0);
	assert_int_equal(id, 1000);
	assert_string_equal(name, "object1000");
	assert_true(n >= 50);
	assert_int_equal(objects_learn_box(&lc, &cs.scene, box, &id, name, sizeof name, &n), 0);
	assert_int_equal(id, 1001);
	assert_int_equal(objects_learn_box(&lc, &cs.scene, box, &id, name, sizeof name, &n), ERR_RANGE); /* IDs used up */
	const int bad[4] = {130, 130, 640, 330}, plain[4] = {10, 400, 100, 470};
	lc.id_max = 1010;
	assert_int_equal(objects_learn_box(&lc, &cs.scene, bad, &id, name, sizeof name, &n), ERR_RANGE);
	assert_int_equal(objects_learn_box(&lc, &cs.scene, plain, &id, name, sizeof name, &n), ERR_RANGE);
	struct objects_library *lib = NULL;
	assert_int_equal(objects_library_load(path, &lib), 0);
	assert_int_equal(objects_library_count(lib), 2);
	struct objects_object ob;
	assert_int_equal(objects_library_get(lib, 0, &ob), 0);
	assert_int_equal(ob.id, 1000);
	assert_int_equal(ob.width, 241);
	assert_int_equal(ob.height, 201);
	/* Recognised where it was learned: the box's centre, turned by 0 (the
	 * copy learned twice goes first: the ratio test refuses twins). */
	assert_int_equal(objects_library_remove(lib, 1), 0);
	struct sift_config sc;
	sift_config_default(&sc);
	int err = 0;
	struct sift *sf = sift_create(&sc, "opencv", &err);
	static struct objects_keypoint kp[2000];
	assert_int_equal(sift_extract(sf, &cs.scene, kp, 2000, &n), 0);
	struct objects_match_config mc;
	objects_match_config_default(&mc);
	struct objects_recogniser *r = objects_recogniser_create(lib, &mc, 2000, &err);
	assert_non_null(r);
	struct objects_detection d[4];
	int nd = 0;
	assert_int_equal(objects_recognise(r, kp, n, d, 4, &nd), 0);
	assert_true(nd >= 1);
	assert_int_equal(d[0].id, 1000);
	assert_true(fabs(d[0].x - 250.0) < 1.0 && fabs(d[0].y - 230.0) < 1.0);
	assert_true(fabs(remainder(d[0].angle, 2 * M_PI)) < 0.02);
	objects_recogniser_destroy(r);
	sift_destroy(sf);
	objects_library_free(lib);
	unlink(path);
	card_scenes_free(&cs);
}

/* Pose algebra: composing with the inverse is the identity. */
static void test_pose_algebra(void **state)
{
	(void)state;
	struct objects_pose p = {.a = 0.8, .b = -1.1, .tx = 31, .ty = -7}, inv, id, q;
	objects_pose_invert(&p, &inv);
	objects_pose_compose(&p, &inv, &id);
	assert_true(fabs(id.a - 1) < 1e-12 && fabs(id.b) < 1e-12 && fabs(id.tx) < 1e-9 && fabs(id.ty) < 1e-9);
	objects_pose_compose(&inv, &p, &q);
	double a[2], b[2];
	objects_pose_apply(&q, 12.5, -3, a);
	assert_true(fabs(a[0] - 12.5) < 1e-9 && fabs(a[1] + 3) < 1e-9);
	objects_pose_apply(&p, 2, 5, a);
	objects_pose_apply(&inv, a[0], a[1], b);
	assert_true(fabs(b[0] - 2) < 1e-9 && fabs(b[1] - 5) < 1e-9);
}

static void test_config_id_range(void **state)
{
	(void)state;
	struct tt_config c;
	config_defaults(&c);
	assert_true(c.object_id_min <= c.object_id_max);
	enum log_level was = log_get_level();
	log_set_level(LOG_ERROR - 1);
	assert_int_equal(config_load_string(&c, "[objects]\nobject_id_min = 50\nobject_id_max = 40\n", "t"), ERR_CONFIG);
	assert_non_null(strstr(config_last_error(), "object_id_max"));
	assert_int_equal(config_load_string(&c, "[objects]\nobject_id_min = 500\nobject_id_max = 600\n", "t"), 0);
	assert_int_equal(c.object_id_min, 500);
	log_set_level(was);
}

/* A picture of shapes, turned a quarter (exactly, by moving pixels) inside
 * a larger frame: SIFT and the recogniser must find it there, turned 90
 * degrees clockwise on screen. */
static void test_sift_quarter_turn(void **state)
{
	(void)state;
	char why[256];
	if (sift_backend_check("auto", why, sizeof why)) {
		print_message("skipped: %s\n", why);
		skip();
	}
	struct image_u8 obj, frame;
	assert_int_equal(image_u8_alloc(&obj, 200, 150), 0);
	assert_int_equal(image_u8_alloc(&frame, 640, 480), 0);
	uint32_t rs = 5;
	for (int y = 0; y < 150; y++)
		for (int x = 0; x < 200; x++)
			image_u8_row(&obj, y)[x] = (uint8_t)(100 + 40 * sin(x * 0.05) * cos(y * 0.07));
	for (int k = 0; k < 40; k++) {
		int cx = (int)(test_rand(&rs) % 200), cy = (int)(test_rand(&rs) % 150), r = 3 + (int)(test_rand(&rs) % 15);
		uint8_t g = (uint8_t)(test_rand(&rs) % 256);
		for (int y = cy - r; y <= cy + r; y++)
			for (int x = cx - r; x <= cx + 2 * r; x++)
				if (x >= 0 && y >= 0 && x < 200 && y < 150 && (k % 2 || (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r))
					image_u8_row(&obj, y)[x] = g;
	}
	for (int y = 0; y < 480; y++)
		memset(image_u8_row(&frame, y), 128, 640);
	/* Frame (X, Y) = (X0 + (149 - y), Y0 + x): a quarter turn clockwise on screen. */
	const int X0 = 300, Y0 = 100;
	for (int y = 0; y < 150; y++)
		for (int x = 0; x < 200; x++)
			image_u8_row(&frame, Y0 + x)[X0 + 149 - y] = image_u8_row(&obj, y)[x];

	struct sift_config sc;
	sift_config_default(&sc);
	int err;
	struct sift *s = sift_create(&sc, "auto", &err);
	assert_non_null(s);
	static struct objects_keypoint kp[2000], kp2[2000], scene[2000];
	int n = 0, n2 = 0, ns = 0;
	assert_int_equal(sift_extract(s, &obj, kp, 2000, &n), 0);
	assert_true(n >= 30);
	assert_int_equal(sift_extract(s, &obj, kp2, 2000, &n2), 0);
	assert_int_equal(n, n2);
	assert_memory_equal(kp, kp2, sizeof *kp * (size_t)n); /* deterministic */
	assert_int_equal(sift_extract(s, &frame, scene, 2000, &ns), 0);

	struct objects_library *lib = objects_library_new();
	assert_int_equal(objects_library_add(lib, 1000, "shapes", 200, 150, kp, n), 0);
	struct objects_match_config mc;
	objects_match_config_default(&mc);
	struct objects_recogniser *r = objects_recogniser_create(lib, &mc, 2000, &err);
	assert_non_null(r);
	struct objects_detection d[2];
	int nd = 0;
	assert_int_equal(objects_recognise(r, scene, ns, d, 2, &nd), 0);
	assert_int_equal(nd, 1);
	/* The centre (99.5, 74.5) lands at (X0 + 149 - 74.5, Y0 + 99.5). */
	print_message("quarter turn: %d keypoints, %d inliers, at %.2f %.2f, %.3f deg, scale %.4f\n", n,
		      d[0].n_inliers, (double)d[0].x, (double)d[0].y, (double)d[0].angle * 180 / M_PI,
		      (double)d[0].scale);
	assert_true(fabs(d[0].x - (X0 + 74.5)) < 0.25); /* catches a quarter-pixel keypoint bias */
	assert_true(fabs(d[0].y - (Y0 + 99.5)) < 0.25);
	assert_true(fabs(d[0].angle * 180 / M_PI - 90) < 1.0);
	assert_true(fabs(d[0].scale - 1) < 0.01);
	objects_recogniser_destroy(r);
	objects_library_free(lib);
	sift_destroy(s);
	image_u8_free(&obj);
	image_u8_free(&frame);
}

static void test_sift_without_backend(void **state)
{
	(void)state;
	char why[256] = "";
	int err = 0;
	struct sift_config sc;
	sift_config_default(&sc);
	enum log_level was = log_get_level();
	log_set_level(LOG_ERROR - 1);
	assert_int_equal(sift_backend_check("nonesuch", why, sizeof why), ERR_UNSUPPORTED);
	assert_null(sift_create(&sc, "nonesuch", &err));
	assert_int_equal(err, ERR_UNSUPPORTED);
	sc.max_keypoints = 0;
	assert_null(sift_create(&sc, "auto", &err));
	assert_int_equal(err, ERR_RANGE);
#if !TT_HAVE_OPENCV
	assert_int_equal(sift_backend_check("opencv", why, sizeof why), ERR_UNSUPPORTED);
	assert_non_null(strstr(why, "OpenCV"));
#endif
	log_set_level(was);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_no_keypoints),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_recognise_known_pose),
		cmocka_unit_test(test_nearest_reference),
		cmocka_unit_test(test_pose_algebra),
		cmocka_unit_test(test_follow_moving),
		cmocka_unit_test(test_stage_follows),
		cmocka_unit_test(test_learn_box),
		cmocka_unit_test(test_config_id_range),
		cmocka_unit_test(test_sift_quarter_turn),
		cmocka_unit_test(test_sift_without_backend),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
