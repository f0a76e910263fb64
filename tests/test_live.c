/* Live tuning of the threshold (what the window's SET commands and SIGHUP
 * do in src/pipeline/pipeline.c's apply_live_config): config_set() on the
 * running config, settings.h's engine_config_from(), engine_set_config().
 * A change of method, mean radius or mean bias must show in the very next
 * frame's mask, bit for bit the reference's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../src/config/config.h"
#include "../src/core/log.h"
#include "../src/fiducial/trees.h"
#include "../src/pipeline/engine.h"
#include "../src/pipeline/settings.h"
#include "../src/threshold/threshold.h"
#include "common/testutil.h"

#define W 160
#define H 120

struct live {
	struct tt_config cfg;
	struct tree_set *trees;
	struct track *trk;
	struct engine *eng;
	struct image_u8 grey, want, got;
};

static int setup(void **state)
{
	static struct live l;
	memset(&l, 0, sizeof l);
	log_set_level(LOG_ERROR);
	config_defaults(&l.cfg);
	assert_int_equal(config_set(&l.cfg, "gpu", "off"), 0);
	assert_int_equal(tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text), "built-in", &l.trees), 0);
	struct track_config tk;
	track_config_from(&l.cfg, NULL, &tk);
	int err = 0;
	l.trk = track_create(&tk, &err);
	assert_non_null(l.trk);
	struct engine_config ec;
	engine_config_from(&l.cfg, l.trees, l.trk, W, H, &ec);
	l.eng = engine_create(&ec, &err);
	assert_non_null(l.eng);
	assert_int_equal(image_u8_alloc(&l.grey, W, H), 0);
	assert_int_equal(image_u8_alloc(&l.want, W, H), 0);
	assert_int_equal(image_u8_alloc(&l.got, W, H), 0);
	/* Three panels where the methods disagree: texture on a slope, a flat
	 * grey (the flat rule against the local mean), and a bright card on a
	 * dark noisy table (pixels beyond Bernsen's window but within the
	 * mean's see different neighbourhoods). */
	uint32_t seed = 7;
	for (int y = 0; y < H; y++) {
		uint8_t *row = image_u8_row(&l.grey, y);
		for (int x = 0; x < W; x++) {
			int r = (int)(test_rand(&seed) % 91u);
			if (x < W / 3)
				row[x] = (uint8_t)(r + x);
			else if (x < 2 * W / 3)
				row[x] = (uint8_t)(120 + r % 6);
			else if (x >= 125 && x < 141 && y >= 50 && y < 70)
				row[x] = 220;
			else
				row[x] = (uint8_t)(40 + r % 41);
		}
	}
	*state = &l;
	return 0;
}

static int teardown(void **state)
{
	struct live *l = *state;
	engine_destroy(l->eng);
	track_destroy(l->trk);
	tree_set_free(l->trees);
	image_u8_free(&l->grey);
	image_u8_free(&l->want);
	image_u8_free(&l->got);
	return 0;
}

/* What pipeline.c does for one UI_CMD_SET, then one frame. */
static void set_live(struct live *l, const char *key, const char *value)
{
	const struct config_option *o = config_find(key);
	assert_non_null(o);
	assert_true(o->live);
	assert_int_equal(config_set(&l->cfg, key, value), 0);
	struct engine_config ec;
	engine_config_from(&l->cfg, l->trees, l->trk, W, H, &ec);
	assert_int_equal(engine_set_config(l->eng, &ec), 0);
	struct tracked_state st;
	assert_int_equal(engine_process(l->eng, &l->grey, 1, 0, &st), 0);
	bitmask_to_image(engine_mask(l->eng), &l->got);
}

static long differing(const struct image_u8 *a, const struct image_u8 *b)
{
	long n = 0;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			n += image_u8_row(a, y)[x] != image_u8_row(b, y)[x];
	return n;
}

static void reference(const struct live *l, struct image_u8 *out)
{
	const struct tt_config *c = &l->cfg;
	int mode = threshold_mode_of(c->threshold_mode);
	if (mode == THRESHOLD_BERNSEN)
		bernsen_cpu(&l->grey, c->radius, c->gate, out);
	else if (mode == THRESHOLD_TILED)
		bernsen_tiled_cpu(&l->grey, c->tile, c->gate, out);
	else
		threshold_mean_cpu(&l->grey, mode, c->radius, c->gate, c->mean_radius, c->mean_bias, out);
}

static void test_every_method_live(void **state)
{
	struct live *l = *state;
	struct image_u8 bernsen;
	assert_int_equal(image_u8_alloc(&bernsen, W, H), 0);
	set_live(l, "threshold", "bernsen");
	reference(l, &bernsen);
	assert_int_equal(differing(&l->got, &bernsen), 0);
	/* Every step changes the mask, so a change not applied cannot pass. */
	static const char *const methods[] = {"tiled", "mean", "gated", "either", "both", "bernsen"};
	struct image_u8 prev;
	assert_int_equal(image_u8_alloc(&prev, W, H), 0);
	image_u8_copy(&prev, &bernsen);
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		set_live(l, "threshold", methods[i]);
		reference(l, &l->want);
		assert_int_equal(differing(&l->got, &l->want), 0);
		assert_true(differing(&l->got, &prev) > 0);
		if (strcmp(methods[i], "bernsen") != 0)
			assert_true(differing(&l->got, &bernsen) > 0);
		image_u8_copy(&prev, &l->got);
	}
	image_u8_free(&prev);
	image_u8_free(&bernsen);
}

static void test_mean_settings_live(void **state)
{
	struct live *l = *state;
	struct image_u8 before;
	assert_int_equal(image_u8_alloc(&before, W, H), 0);
	set_live(l, "threshold", "mean");
	image_u8_copy(&before, &l->got);
	set_live(l, "mean_radius", "5");
	reference(l, &l->want);
	assert_int_equal(differing(&l->got, &l->want), 0);
	assert_true(differing(&l->got, &before) > 0);
	image_u8_copy(&before, &l->got);
	set_live(l, "mean_bias", "40");
	reference(l, &l->want);
	assert_int_equal(differing(&l->got, &l->want), 0);
	assert_true(differing(&l->got, &before) > 0);
	image_u8_free(&before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_method_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mean_settings_live, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
