/* Live settings. Tuning of the threshold (what the window's SET commands and SIGHUP
 * do in src/pipeline/pipeline.c's apply_live_config): config_set() on the
 * running config, settings.h's engine_config_from(), engine_set_config().
 * A change of method, mean radius or mean bias must show in the very next
 * frame's mask, bit for bit the reference's. And the window's K
 * (settings_save_config): what it writes, and what the next start reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
	/* The references below threshold at the configured gate; the frame's
	 * own gate (gate_range: this noisy frame's would be raised) is tested
	 * in test_engine.c. */
	assert_int_equal(config_set(&l.cfg, "gate_range", "0"), 0);
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

static char *read_text(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The window's K: every key is written; those given on the command line
 * for that run (and not changed since) commented out with a note, followed
 * by the file's (or default) value; what the
 * window changed is saved, also over a command-line value; non-live keys
 * the pipeline filled in are saved as given. */
static void test_save_marks_command_line(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/cam.conf", test_tmpdir());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("[threshold]\nradius = 5\ngate = 40\n[tuio]\ntuio = udp:127.0.0.1:4444\n", f);
	fclose(f);
	static struct tt_config files, given, running;
	config_defaults(&files);
	assert_int_equal(config_load_file(&files, path), 0);
	/* tabletrack --config cam.conf --source demo --window --tuio udp:10.0.0.9:3333 --gate 20 --radius 6 */
	given = files;
	snprintf(given.config_path, sizeof given.config_path, "%s", path);
	assert_int_equal(config_set(&given, "source", "demo"), 0);
	assert_int_equal(config_set(&given, "window", "true"), 0);
	assert_int_equal(config_set(&given, "tuio", "udp:10.0.0.9:3333"), 0);
	assert_int_equal(config_set(&given, "gate", "20"), 0);
	assert_int_equal(config_set(&given, "radius", "6"), 0);
	running = given;
	assert_int_equal(config_set(&running, "radius", "9"), 0);      /* the window: G */
	assert_int_equal(config_set(&running, "threshold", "mean"), 0); /* the window: G */
	assert_int_equal(config_set(&running, "width", "640"), 0);     /* filled in by the pipeline */
	assert_int_equal(settings_save_config(&running, &given, &files), 0);

	const char *text = read_text(path);
	assert_non_null(strstr(text, "\n# source = demo\n"));
	assert_non_null(strstr(text, "\n# window = true\n"));
	assert_non_null(strstr(text, "\n# tuio = udp:10.0.0.9:3333\n"));
	assert_non_null(strstr(text, "\n# gate = 20\n"));
	assert_non_null(strstr(text, "\n# given on the command line for that run, not saved; the file's own value "
				     "follows\n# gate = 20\ngate = 40\n"));
	assert_non_null(strstr(text, "\n# tuio = udp:10.0.0.9:3333\ntuio = udp:127.0.0.1:4444\n"));
	assert_non_null(strstr(text, "\n# source = demo\nsource =\n"));
	assert_non_null(strstr(text, "\nradius = 9\n"));
	assert_non_null(strstr(text, "\nthreshold = mean\n"));
	assert_non_null(strstr(text, "\nwidth = auto\n"));
	assert_null(strstr(text, "\nwindow = true"));

	/* The next start with that file alone: the window's changes, the file's
	 * own values where the command line had its own, defaults elsewhere. */
	static struct tt_config next;
	config_defaults(&next);
	assert_int_equal(config_load_file(&next, path), 0);
	assert_int_equal(next.radius, 9);
	assert_string_equal(next.threshold_mode, "mean");
	assert_int_equal(next.gate, 40);
	assert_string_equal(next.source, "");
	assert_false(next.window);
	assert_int_equal(next.n_tuio, 1);
	assert_string_equal(next.tuio[0], "udp:127.0.0.1:4444");
	assert_int_equal(next.width, 0);
	assert_string_equal(running.config_path, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_method_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mean_settings_live, setup, teardown),
		cmocka_unit_test(test_save_marks_command_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
