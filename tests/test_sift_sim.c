/* test_sift_sim.c - the GPU SIFT's arithmetic (cuda/sift_math.h) on the
 * CPU: its pieces against known answers (the angle polynomial, the 3 x 3
 * solve, the orientation peaks, the descriptor's normalisation, the
 * Gaussian taps, the borders, the octave count), and the whole GPU
 * algorithm simulated on the CPU (tests/common/sift_sim.h) against
 * OpenCV's SIFT on textured pictures: repeatability and descriptor
 * agreement as tests/common/sift_compare.h defines them (skipped without
 * OpenCV). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/log.h"
#include "../src/objects/sift.h"
#include "common/sift_compare.h"
#include "common/sift_scene.h"
#include "common/sift_sim.h"
#include "common/testutil.h"

static void test_atan(void **state)
{
	(void)state;
	for (int i = 0; i < 3600; i++) {
		double t = i * M_PI / 1800.0 + 0.0001;
		float a = sift_atan_deg((float)sin(t), (float)cos(t));
		double want = fmod(t * 180 / M_PI + 360, 360);
		double d = fabs(a - want);
		if (d > 180)
			d = 360 - d;
		assert_true(d < 0.02);
		assert_true(a >= 0.0f && a <= 360.0f);
	}
	assert_true(sift_atan_deg(0, 0) == 0.0f);
}

static void test_solve(void **state)
{
	(void)state;
	const float H[9] = {4, 1, 0.5f, 1, 3, 0.25f, 0.5f, 0.25f, 2}, want[3] = {0.3f, -0.2f, 0.1f};
	float b[3], x[3];
	for (int i = 0; i < 3; i++)
		b[i] = H[i * 3] * want[0] + H[i * 3 + 1] * want[1] + H[i * 3 + 2] * want[2];
	assert_int_equal(sift_solve3(H, b, x), 1);
	for (int i = 0; i < 3; i++)
		assert_true(fabsf(x[i] - want[i]) < 1e-5f);
	const float S[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1};
	assert_int_equal(sift_solve3(S, b, x), 0);
	assert_true(x[0] == 0 && x[1] == 0 && x[2] == 0);
}

static void test_orientation_peaks(void **state)
{
	(void)state;
	sift_acc raw[SIFT_ORI_BINS];
	float ang[SIFT_ORI_BINS];
	memset(raw, 0, sizeof raw);
	/* One peak between bins 10 and 11, nearer 10: the angle is 360 - 10 x bin. */
	raw[10] = (sift_acc)(100 * SIFT_ACC_SCALE);
	raw[11] = (sift_acc)(60 * SIFT_ACC_SCALE);
	int n = sift_ori_peaks(raw, ang);
	assert_int_equal(n, 1);
	assert_true(ang[0] > 360 - 10 * 11.0f && ang[0] < 360 - 10 * 10.0f);
	/* A second peak at 85% of the first gives a second keypoint; one at 70% does not. */
	raw[25] = (sift_acc)(85 * SIFT_ACC_SCALE);
	raw[26] = (sift_acc)(51 * SIFT_ACC_SCALE);
	assert_int_equal(sift_ori_peaks(raw, ang), 2);
	raw[25] = (sift_acc)(70 * SIFT_ACC_SCALE);
	raw[26] = (sift_acc)(42 * SIFT_ACC_SCALE);
	assert_int_equal(sift_ori_peaks(raw, ang), 1);
	/* A peak across the wrap, bin 35 leaning to bin 0: bin 35 + 5/12 after smoothing. */
	memset(raw, 0, sizeof raw);
	raw[35] = (sift_acc)(50 * SIFT_ACC_SCALE);
	raw[0] = (sift_acc)(40 * SIFT_ACC_SCALE);
	n = sift_ori_peaks(raw, ang);
	assert_int_equal(n, 1);
	assert_true(fabsf(ang[0] - (360.0f - 10 * (35 + 5.0f / 12))) < 0.01f);
	/* Two equal neighbours are no strict maximum: no keypoint (as OpenCV). */
	raw[0] = raw[35];
	assert_int_equal(sift_ori_peaks(raw, ang), 0);
}

static void test_descriptor_finish(void **state)
{
	(void)state;
	sift_acc hist[SIFT_HIST_LEN];
	uint8_t d[SIFT_DESC_LEN];
	memset(hist, 0, sizeof hist);
	/* One dominant bin is clamped at 0.2 of the norm, then all renormalised to 512. */
	int idx = ((1 + 1) * (SIFT_D + 2) + (2 + 1)) * (SIFT_N + 2);
	hist[idx + 3] = (sift_acc)(1000 * SIFT_ACC_SCALE);
	for (int k = 0; k < SIFT_N; k++)
		hist[((3 + 1) * (SIFT_D + 2) + 1) * (SIFT_N + 2) + k] = (sift_acc)(10 * SIFT_ACC_SCALE);
	/* the wrap bins fold into bins 0 and 1 */
	hist[idx + SIFT_N] = (sift_acc)(5 * SIFT_ACC_SCALE);
	sift_desc_finish(hist, d);
	double n2 = 0;
	int big = 0;
	for (int k = 0; k < SIFT_DESC_LEN; k++) {
		n2 += (double)d[k] * d[k];
		big = d[k] > big ? d[k] : big;
	}
	assert_int_equal(big, 255); /* 0.2 x norm, renormalised, saturates */
	assert_true(d[(1 * SIFT_D + 2) * SIFT_N + 0] > 0);
	assert_true(d[(3 * SIFT_D + 0) * SIFT_N + 5] > 0);
	assert_true(sqrt(n2) > 250 && sqrt(n2) < 520); /* 512 before saturation */
}

static void test_taps_borders_octaves(void **state)
{
	(void)state;
	float t[SIFT_MAX_TAPS_RADIUS + 1];
	for (int i = 0; i < SIFT_LEVELS; i++) {
		int r = sift_gauss_taps(sift_level_sigma(i), t, SIFT_MAX_TAPS_RADIUS);
		assert_true(r >= 1 && r <= SIFT_MAX_TAPS_RADIUS);
		double sum = t[0];
		for (int k = 1; k <= r; k++) {
			sum += 2 * t[k];
			assert_true(t[k] < t[k - 1]);
		}
		assert_true(fabs(sum - 1) < 1e-5);
	}
	/* OpenCV's sizes: sigma 1.249 -> 11 taps, level 5 (3.09) -> 27 taps */
	assert_int_equal(sift_gauss_taps(sift_level_sigma(0), t, SIFT_MAX_TAPS_RADIUS), 5);
	assert_int_equal(sift_gauss_taps(sift_level_sigma(5), t, SIFT_MAX_TAPS_RADIUS), 13);
	assert_int_equal(sift_reflect101(-1, 10), 1);
	assert_int_equal(sift_reflect101(10, 10), 8);
	assert_int_equal(sift_reflect101(-13, 5), 3);
	assert_int_equal(sift_reflect101(3, 1), 0);
	for (int p = -40; p < 40; p++) {
		int q = sift_reflect101(p, 7);
		assert_true(q >= 0 && q < 7);
	}
	assert_int_equal(sift_octaves(640, 480, 16), 9);
	assert_int_equal(sift_octaves(1920, 1080, 16), 10);
	assert_int_equal(sift_octaves(1, 1, 16), 0);
}

static void test_sim_against_opencv(void **state)
{
	(void)state;
	char why[256];
	if (sift_backend_check("opencv", why, sizeof why)) {
		print_message("skipped: %s\n", why);
		skip();
	}
	struct sift_config sc;
	sift_config_default(&sc);
	sc.max_keypoints = OBJECTS_MAX_KEYPOINTS;
	int err;
	struct sift *cv = sift_create(&sc, "opencv", &err);
	assert_non_null(cv);
	static struct objects_keypoint ref[OBJECTS_MAX_KEYPOINTS], sim[OBJECTS_MAX_KEYPOINTS];
	const int sizes[][2] = {{320, 240}, {640, 480}, {211, 157}};
	for (int k = 0; k < 3; k++) {
		struct image_u8 img;
		assert_int_equal(image_u8_alloc(&img, sizes[k][0], sizes[k][1]), 0);
		sift_scene_texture(&img, 100 + (uint64_t)k, sizes[k][0] * sizes[k][1] / 300);
		int nr = 0;
		assert_int_equal(sift_extract(cv, &img, ref, OBJECTS_MAX_KEYPOINTS, &nr), 0);
		int ns = sift_sim_extract(&img, sc.contrast_threshold, sim, OBJECTS_MAX_KEYPOINTS);
		assert_true(ns >= 0);
		struct sift_agreement a;
		sift_compare(ref, nr, sim, ns, &a);
		print_message("%dx%d: opencv %d, simulation %d keypoints: repeatability %.4f (back %.4f), "
			      "descriptors agree %.4f, within 2 per byte %.4f of %d pairs\n",
			      img.width, img.height, nr, ns, a.repeat, a.repeat_back, a.desc_agree, a.exact, a.pairs);
		assert_true(nr >= 50);
		assert_true(a.repeat >= 0.95);
		assert_true(a.repeat_back >= 0.95);
		assert_true(a.desc_agree >= 0.95);
		image_u8_free(&img);
	}
	sift_destroy(cv);
}

int main(void)
{
	log_set_level(LOG_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atan),
		cmocka_unit_test(test_solve),
		cmocka_unit_test(test_orientation_peaks),
		cmocka_unit_test(test_descriptor_finish),
		cmocka_unit_test(test_taps_borders_octaves),
		cmocka_unit_test(test_sim_against_opencv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
