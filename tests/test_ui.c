/* Tests of src/ui that need no display: the none backend, the key map, the
 * bitmap font and the calibration-grid editing. tests/e2e_window.sh drives
 * the real window under Xvfb. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/core/calib.h"
#include "../src/config/config.h"
#include "../src/ui/ui.h"
#include "../src/ui/ui_font.h"
#include "../src/ui/ui_grid.h"
#include "../src/ui/ui_keymap.h"

/* ---- front ends ---------------------------------------------------------- */

static void test_none_backend(void **state)
{
	(void)state;
	struct ui_config cfg = {.backend = "none", .width = 640, .height = 480};
	int err = 1;
	struct ui *ui = ui_create(&cfg, &err);
	assert_non_null(ui);
	assert_int_equal(err, 0);
	struct ui_command cmds[4];
	assert_int_equal(ui_poll(ui, NULL, cmds, 4, 5), 0);
	assert_int_equal(ui_poll(ui, NULL, cmds, 4, 0), 0);
	assert_int_equal(ui_poll(ui, NULL, NULL, 0, -3), 0);
	ui_destroy(ui);
	ui_destroy(NULL);
	assert_int_equal(ui_poll(NULL, NULL, cmds, 4, 0), 0);
}

static void test_unknown_backend(void **state)
{
	(void)state;
	struct ui_config cfg = {.backend = "gtk", .width = 640, .height = 480};
	int err = 0;
	assert_null(ui_create(&cfg, &err));
	assert_int_equal(err, ERR_CONFIG);
}

static void test_sdl_without_display(void **state)
{
	(void)state;
	char *x11 = getenv("DISPLAY") ? strdup(getenv("DISPLAY")) : NULL;
	char *wl = getenv("WAYLAND_DISPLAY") ? strdup(getenv("WAYLAND_DISPLAY")) : NULL;
	unsetenv("DISPLAY");
	unsetenv("WAYLAND_DISPLAY");
	struct ui_config cfg = {.backend = "sdl", .width = 640, .height = 480};
	int err = 0;
	struct ui *ui = ui_create(&cfg, &err);
	if (x11)
		setenv("DISPLAY", x11, 1);
	if (wl)
		setenv("WAYLAND_DISPLAY", wl, 1);
	free(x11);
	free(wl);
	assert_null(ui);
	assert_int_equal(err, ERR_UNSUPPORTED);
}

/* ---- key map ------------------------------------------------------------- */

struct km {
	struct ui_state st;
	struct ui_tunables tun;
	struct calib_map grid;
	struct ui_command cmds[UI_KEYMAP_MAX_CMDS];
	unsigned actions;
};

static void km_init(struct km *k)
{
	memset(k, 0, sizeof *k);
	ui_state_init(&k->st, 640, 480);
	k->tun.radius = 6;
	k->tun.gate = 32;
	k->tun.radius2 = 2;
	k->tun.median2 = 3;
	k->tun.mean_radius = 16;
	k->tun.mean_bias = 16;
	k->tun.threshold3_mode = 2; /* mean, the default */
	k->tun.finger_sensitivity = 0.5f;
	k->tun.blob_min = 50;
	ui_grid_init(&k->grid, 9, 7);
	k->st.sel_col = 4;
	k->st.sel_row = 3;
}

static int press(struct km *k, int key, unsigned mods)
{
	return ui_keymap_handle(&k->st, &k->tun, &k->grid, key, mods, k->cmds, UI_KEYMAP_MAX_CMDS, &k->actions);
}

static void assert_set(const struct km *k, int n, const char *key, const char *value)
{
	assert_int_equal(n, 1);
	assert_int_equal(k->cmds[0].kind, UI_CMD_SET);
	assert_string_equal(k->cmds[0].key, key);
	assert_string_equal(k->cmds[0].value, value);
}

static void test_keymap_commands(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	static const struct {
		int key;
		unsigned mods;
		enum ui_command_kind kind;
	} simple[] = {
		{UI_KEY_ESC, 0, UI_CMD_QUIT},
		{'p', 0, UI_CMD_PAUSE},
		{UI_KEY_SPACE, 0, UI_CMD_RESET_TRACKING},
		{'e', 0, UI_CMD_EQUALIZE},
		{'e', UI_MOD_SHIFT, UI_CMD_EQUALIZE_RESET},
		{'k', 0, UI_CMD_SAVE_CONFIG},
	};
	for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
		assert_int_equal(press(&k, simple[i].key, simple[i].mods), 1);
		assert_int_equal(k.cmds[0].kind, simple[i].kind);
	}
	assert_set(&k, press(&k, 'm', 0), "median", "3");
	assert_set(&k, press(&k, 'm', 0), "median", "5");
	assert_set(&k, press(&k, 'm', 0), "median", "0");
	assert_int_equal(press(&k, UI_KEY_F1, 0), 0);
	assert_true(k.actions & UI_ACT_FULLSCREEN);
	/* A key that means nothing does nothing. */
	assert_int_equal(press(&k, 'z', 0), 0);
	assert_int_equal(k.actions, 0u);
	/* cap 0: nothing written, no crash. */
	assert_int_equal(ui_keymap_handle(&k.st, &k.tun, &k.grid, 'p', 0, k.cmds, 0, &k.actions), 0);
}

/* O learns the box dragged with the mouse: its frame pixels, corners in
 * any order, clamped; no box, or one too small, sends nothing. */
static void test_keymap_learn_box(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	assert_int_equal(press(&k, 'o', 0), 0);
	assert_true(k.actions & UI_ACT_NO_SELECTION);
	ui_box_start(&k.st, 0.75f, 0.5f);
	ui_box_move(&k.st, 0.6f, 0.4f);
	assert_int_equal(press(&k, 'o', 0), 0); /* still dragging */
	ui_box_end(&k.st, 0.25f, 0.25f);
	int px[4];
	assert_true(ui_box_pixels(&k.st, px));
	assert_int_equal(press(&k, 'o', 0), 1);
	assert_int_equal(k.cmds[0].kind, UI_CMD_LEARN_OBJECT);
	assert_string_equal(k.cmds[0].value, "160 120 480 240");
	/* Sent once: the box is used up. */
	assert_int_equal(press(&k, 'o', 0), 0);
	assert_true(k.actions & UI_ACT_NO_SELECTION);
	/* Off the frame: clamped to it. */
	ui_box_start(&k.st, -0.5f, 0.9f);
	ui_box_end(&k.st, 0.1f, 1.7f);
	assert_int_equal(press(&k, 'o', 0), 1);
	assert_string_equal(k.cmds[0].value, "0 432 64 479");
	/* Under 16 px a side (pixels 320..334): dropped at the release. */
	ui_box_start(&k.st, 320.5f / 640, 240.5f / 480);
	ui_box_end(&k.st, 334.5f / 640, 300.5f / 480);
	assert_false(k.st.has_box);
	assert_int_equal(press(&k, 'o', 0), 0);
	assert_true(k.actions & UI_ACT_NO_SELECTION);
	ui_box_start(&k.st, 320.5f / 640, 240.5f / 480);
	ui_box_end(&k.st, 335.5f / 640, 255.5f / 480);
	assert_int_equal(press(&k, 'o', 0), 1);
	assert_string_equal(k.cmds[0].value, "320 240 335 255");
}

static void test_keymap_views(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	assert_int_equal(k.st.view, UI_VIEW_CAMERA);
	/* S selects the camera view and T the threshold view, however often
	 * pressed (reacTIVision's keys; they once toggled). */
	press(&k, 's', 0);
	assert_int_equal(k.st.view, UI_VIEW_CAMERA);
	assert_true(k.actions & UI_ACT_REDRAW);
	press(&k, 't', 0);
	assert_int_equal(k.st.view, UI_VIEW_BINARY);
	press(&k, 't', 0);
	assert_int_equal(k.st.view, UI_VIEW_BINARY);
	press(&k, 's', 0);
	assert_int_equal(k.st.view, UI_VIEW_CAMERA);
	press(&k, 's', 0);
	assert_int_equal(k.st.view, UI_VIEW_CAMERA);
	/* Either brings a switched-off display back, in its own view. */
	press(&k, 'n', 0);
	assert_int_equal(k.st.view, UI_VIEW_OFF);
	press(&k, 't', 0);
	assert_int_equal(k.st.view, UI_VIEW_BINARY);
	press(&k, 'n', 0);
	press(&k, 's', 0);
	assert_int_equal(k.st.view, UI_VIEW_CAMERA);
	press(&k, 't', 0);
	press(&k, 'n', 0);
	assert_int_equal(k.st.view, UI_VIEW_OFF);
	press(&k, 'n', 0);
	assert_int_equal(k.st.view, UI_VIEW_BINARY);
	press(&k, 'h', 0);
	assert_true(k.st.help);
	press(&k, 'v', 0);
	assert_true(k.st.verbose);
	/* Calibration mode brings a switched-off display back. */
	press(&k, 'n', 0);
	press(&k, 'c', 0);
	assert_true(k.st.calib);
	assert_int_equal(k.st.view, UI_VIEW_BINARY);
}

static void test_keymap_threshold_menu(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	assert_int_equal(press(&k, 'g', 0), 0);
	assert_int_equal(k.st.menu, UI_MENU_THRESHOLD);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "radius", "7");
	assert_set(&k, press(&k, '+', 0), "radius", "8");
	assert_set(&k, press(&k, '-', 0), "radius", "7");
	assert_set(&k, press(&k, UI_KEY_RIGHT, UI_MOD_SHIFT), "radius", "17");
	for (int i = 0; i < 5; i++)
		press(&k, UI_KEY_RIGHT, UI_MOD_SHIFT);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "radius", "32"); /* config's maximum */
	assert_int_equal(k.tun.radius, 32);
	press(&k, UI_KEY_DOWN, 0);
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "gate", "31");
	press(&k, UI_KEY_DOWN, 0);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold", "tiled");
	assert_int_equal(k.tun.threshold_mode, 1);
	press(&k, UI_KEY_DOWN, 0);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "median", "3");
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "median", "0");
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "median", "5");
	/* The second scale: radius2 (0 = off), its method and its own median. */
	char line[64];
	press(&k, UI_KEY_DOWN, 0);
	assert_int_equal(k.st.menu_item, 4);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 4, &k.tun, line, sizeof line),
			    "radius2 (2nd)   2");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "radius2", "3");
	assert_set(&k, press(&k, UI_KEY_LEFT, UI_MOD_SHIFT), "radius2", "0"); /* config's minimum */
	assert_int_equal(k.tun.radius2, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 4, &k.tun, line, sizeof line),
			    "radius2 (2nd)   off");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "radius2", "1");
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 5, &k.tun, line, sizeof line),
			    "method2 (2nd)   bernsen");
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "threshold2", "sauvola"); /* wraps backwards */
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold2", "bernsen");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold2", "tiled");
	assert_int_equal(k.tun.threshold2_mode, 1);
	assert_int_equal(k.tun.threshold_mode, 1); /* the first scale's is its own */
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 6, &k.tun, line, sizeof line),
			    "median2 (2nd)   3x3");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "median2", "5");
	assert_set(&k, press(&k, '+', 0), "median2", "0");
	assert_int_equal(k.tun.median2, 0);
	assert_int_equal(k.tun.median, 5); /* the first scale's is its own */
	/* The third scale's method: off or any method, wrapping through off. */
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 7, &k.tun, line, sizeof line),
			    "method3 (3rd)   mean");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "gated");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "either");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "both");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "sauvola");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "off");
	assert_int_equal(k.tun.threshold3_mode, -1);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold3", "bernsen");
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "threshold3", "off");
	/* The local-mean methods' window and bias, within config's ranges. */
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 8, &k.tun, line, sizeof line),
			    "mean radius     16");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "mean_radius", "17");
	for (int i = 0; i < 5; i++)
		press(&k, UI_KEY_RIGHT, UI_MOD_SHIFT);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "mean_radius", "63");
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 9, &k.tun, line, sizeof line),
			    "mean bias %     16");
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "mean_bias", "15");
	assert_set(&k, press(&k, UI_KEY_LEFT, UI_MOD_SHIFT), "mean_bias", "5");
	assert_set(&k, press(&k, UI_KEY_LEFT, UI_MOD_SHIFT), "mean_bias", "0");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "mean_bias", "1");
	/* The outline stage's touch test. */
	press(&k, UI_KEY_DOWN, 0);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 10, &k.tun, line, sizeof line),
			    "touch sharpness 0");
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "touch_sharpness", "0.01");
	assert_set(&k, press(&k, UI_KEY_RIGHT, UI_MOD_SHIFT), "touch_sharpness", "0.11");
	assert_int_equal(ui_menu_lines(UI_MENU_THRESHOLD), 11);
	/* Wraps to the first line. */
	press(&k, UI_KEY_DOWN, 0);
	assert_int_equal(k.st.menu_item, 0);
	press(&k, UI_KEY_UP, 0);
	assert_int_equal(k.st.menu_item, 10);
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 3, &k.tun, line, sizeof line),
			    "median          5x5");
	/* The menu's own key closes it; the arrows then mean nothing. */
	press(&k, 'g', 0);
	assert_int_equal(k.st.menu, UI_MENU_NONE);
	assert_int_equal(press(&k, UI_KEY_RIGHT, 0), 0);
}

/* The method line cycles through every method config takes, in the config
 * table's order, and wraps both ways. */
static void test_keymap_threshold_methods(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	const struct config_option *o = config_find("threshold");
	assert_non_null(o);
	assert_string_equal(o->values, "bernsen|tiled|mean|gated|either|both|sauvola");
	assert_string_equal(config_find("threshold2")->values, o->values);
	char want[128] = "";
	for (int i = 0; i < UI_THRESHOLD_MODES; i++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "|" : "",
			 ui_threshold_mode_name(i));
	assert_string_equal(want, o->values);
	assert_null(ui_threshold_mode_name(UI_THRESHOLD_MODES));
	assert_null(ui_threshold_mode_name(-1));

	press(&k, 'g', 0);
	press(&k, UI_KEY_DOWN, 0);
	press(&k, UI_KEY_DOWN, 0);
	char line[64];
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 2, &k.tun, line, sizeof line), "method          bernsen");
	for (int i = 1; i <= UI_THRESHOLD_MODES; i++) {
		const char *name = ui_threshold_mode_name(i % UI_THRESHOLD_MODES);
		assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "threshold", name);
		assert_int_equal(ui_threshold_mode_index(name), i % UI_THRESHOLD_MODES);
		struct tt_config c;
		config_defaults(&c);
		assert_int_equal(config_set(&c, k.cmds[0].key, k.cmds[0].value), 0);
		assert_string_equal(c.threshold_mode, name);
	}
	assert_set(&k, press(&k, '-', 0), "threshold", "sauvola");
	assert_set(&k, press(&k, '-', 0), "threshold", "both");
	assert_set(&k, press(&k, '-', 0), "threshold", "either");
	assert_string_equal(ui_menu_line(UI_MENU_THRESHOLD, 2, &k.tun, line, sizeof line), "method          either");
	/* SHIFT steps one method, as without it. */
	assert_set(&k, press(&k, '+', UI_MOD_SHIFT), "threshold", "both");
	assert_int_equal(k.tun.threshold2_mode, 0);
}

static void test_keymap_other_menus(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	press(&k, 'f', 0);
	assert_int_equal(k.st.menu, UI_MENU_FINGER);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "finger_size", "1");
	press(&k, UI_KEY_DOWN, 0);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "finger_sensitivity", "0.55");
	for (int i = 0; i < 20; i++)
		press(&k, UI_KEY_RIGHT, 0);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "finger_sensitivity", "1");
	press(&k, 'b', 0); /* switches menus */
	assert_int_equal(k.st.menu, UI_MENU_BLOB);
	assert_set(&k, press(&k, UI_KEY_RIGHT, 0), "blob_min", "55"); /* 10% steps */
	assert_set(&k, press(&k, UI_KEY_LEFT, 0), "blob_min", "49"); /* 10% of 55, rounded */
	press(&k, 'i', 0);
	assert_int_equal(k.st.menu, UI_MENU_INVERT);
	assert_set(&k, press(&k, 'x', 0), "invert_x", "true");
	assert_set(&k, press(&k, 'a', 0), "invert_angle", "true");
	assert_set(&k, press(&k, 'x', 0), "invert_x", "false");
	press(&k, UI_KEY_DOWN, 0); /* X selected its line; the next is y */
	assert_set(&k, press(&k, UI_KEY_ENTER, 0), "invert_y", "true");
	assert_true(k.tun.invert_y);
	assert_false(k.tun.invert_x);
	assert_int_equal(ui_menu_lines(UI_MENU_INVERT), 3);
	assert_int_equal(ui_menu_lines(UI_MENU_NONE), 0);
}

static void test_keymap_calibration(void **state)
{
	(void)state;
	struct km k;
	km_init(&k);
	/* Outside calibration mode, R and W do nothing. */
	assert_int_equal(press(&k, 'w', 0), 0);
	assert_false(k.actions & UI_ACT_GRID_SAVE);
	press(&k, 'c', 0);
	assert_true(k.st.calib);
	press(&k, UI_KEY_RIGHT, 0);
	press(&k, UI_KEY_UP, 0);
	assert_int_equal(k.st.sel_col, 5);
	assert_int_equal(k.st.sel_row, 2);
	for (int i = 0; i < 20; i++)
		press(&k, UI_KEY_RIGHT, 0);
	assert_int_equal(k.st.sel_col, 8);
	press(&k, UI_KEY_LEFT, 0);
	press(&k, UI_KEY_LEFT, 0);
	press(&k, UI_KEY_LEFT, 0);
	const float *p = k.grid.pts[2 * 9 + 5];
	/* Quick mode: 1% of the image a press. */
	assert_int_equal(press(&k, UI_KEY_RIGHT, UI_MOD_CTRL), 1);
	assert_int_equal(k.cmds[0].kind, UI_CMD_GRID_CHANGED);
	assert_true(k.actions & UI_ACT_GRID_EDITED);
	assert_float_equal(p[0], 5.0f / 8.0f + 0.01f, 1e-6f);
	assert_false(k.grid.identity);
	/* Precise mode: one pixel. */
	press(&k, 'q', 0);
	assert_true(k.st.precise);
	press(&k, UI_KEY_DOWN, UI_MOD_ALT);
	assert_float_equal(p[1], 2.0f / 6.0f + 1.0f / 480.0f, 1e-6f);
	/* R puts it back. */
	assert_int_equal(press(&k, 'r', 0), 1);
	assert_true(k.grid.identity);
	/* The full-frame grid cannot grow or move; it can shrink, then move. */
	assert_int_equal(press(&k, '+', 0), 0);
	assert_int_equal(press(&k, UI_KEY_LEFT, UI_MOD_SHIFT), 0);
	press(&k, 'q', 0);
	assert_int_equal(press(&k, '-', 0), 1);
	assert_true(k.grid.pts[0][0] > 0.0f);
	float before = k.grid.pts[0][0];
	assert_int_equal(press(&k, UI_KEY_LEFT, UI_MOD_SHIFT), 1);
	assert_true(k.grid.pts[0][0] < before);
	assert_int_equal(press(&k, 'r', UI_MOD_SHIFT), 1);
	assert_true(k.grid.identity);
	press(&k, 'w', 0);
	assert_true(k.actions & UI_ACT_GRID_SAVE);
	press(&k, 'l', 0);
	assert_true(k.actions & UI_ACT_GRID_LOAD);
	press(&k, 'x', 0);
	assert_true(k.st.preview);
	/* Leaving calibration mode ends the preview. */
	press(&k, 'c', 0);
	assert_false(k.st.calib);
	assert_false(k.st.preview);
}

static void test_tunables_from_snapshot(void **state)
{
	(void)state;
	static struct snapshot s;
	s.radius = 9;
	s.gate = 20;
	s.median = 3;
	s.radius2 = 4;
	s.median2 = 5;
	s.finger_size = 12;
	s.invert_y = true;
	snprintf(s.threshold_mode, sizeof s.threshold_mode, "gated");
	snprintf(s.threshold2_mode, sizeof s.threshold2_mode, "mean");
	s.mean_radius = 21;
	s.mean_bias = 7;
	struct ui_tunables a, b;
	ui_tunables_from_snapshot(&a, &s);
	assert_int_equal(a.radius, 9);
	assert_string_equal(ui_threshold_mode_name(a.threshold_mode), "gated");
	assert_string_equal(ui_threshold_mode_name(a.threshold2_mode), "mean");
	snprintf(s.threshold3_mode, sizeof s.threshold3_mode, "off");
	ui_tunables_from_snapshot(&a, &s);
	assert_int_equal(a.threshold3_mode, -1);
	snprintf(s.threshold3_mode, sizeof s.threshold3_mode, "either");
	ui_tunables_from_snapshot(&a, &s);
	assert_string_equal(ui_threshold_mode_name(a.threshold3_mode), "either");
	assert_int_equal(a.mean_radius, 21);
	assert_int_equal(a.mean_bias, 7);
	/* A change of method or of the mean's settings is a change to show. */
	b = a;
	b.threshold2_mode = 0;
	assert_false(ui_tunables_equal(&a, &b));
	b = a;
	b.mean_bias++;
	assert_false(ui_tunables_equal(&a, &b));
	b = a;
	b.mean_radius++;
	assert_false(ui_tunables_equal(&a, &b));
	assert_int_equal(a.median, 3);
	assert_int_equal(a.radius2, 4);
	assert_int_equal(a.median2, 5);
	assert_true(a.invert_y);
	b = a;
	assert_true(ui_tunables_equal(&a, &b));
	b.gate++;
	assert_false(ui_tunables_equal(&a, &b));
	b = a;
	b.radius2 = 0;
	assert_false(ui_tunables_equal(&a, &b));
	b = a;
	b.median2 = 0;
	assert_false(ui_tunables_equal(&a, &b));
}

/* ---- font ---------------------------------------------------------------- */

static void test_font(void **state)
{
	(void)state;
	assert_int_equal(ui_font_text_width("abc", 1), 18);
	assert_int_equal(ui_font_text_width("abc", 2), 36);
	assert_int_equal(ui_font_text_width("ab\nlonger\nx", 1), 36);
	assert_int_equal(ui_font_text_width("", 1), 0);
	assert_int_equal(ui_font_text_width(NULL, 1), 0);
	assert_int_equal(ui_font_text_width("a", 0), 6);
	assert_int_equal(ui_font_text_height("one", 1), 8);
	assert_int_equal(ui_font_text_height("one\ntwo", 2), 32);
	assert_int_equal(ui_font_text_height("one\n", 1), 8);
	assert_int_equal(ui_font_text_height(NULL, 1), 0);
	int lit_a = 0, lit_space = 0;
	for (int y = 0; y < UI_FONT_GLYPH_H; y++)
		for (int x = 0; x < UI_FONT_GLYPH_W; x++) {
			lit_a += ui_font_pixel('A', x, y);
			lit_space += ui_font_pixel(' ', x, y);
		}
	assert_true(lit_a > 10);
	assert_int_equal(lit_space, 0);
	/* 'I' is symmetric; '|' is one full column. */
	for (int y = 0; y < UI_FONT_GLYPH_H; y++) {
		assert_int_equal(ui_font_pixel('I', 0, y), ui_font_pixel('I', 4, y));
		assert_int_equal(ui_font_pixel('|', 2, y), 1);
	}
	assert_ptr_equal(ui_font_glyph('\x01'), ui_font_glyph('?'));
	assert_ptr_equal(ui_font_glyph((char)200), ui_font_glyph('?'));
	assert_int_equal(ui_font_pixel('A', 5, 0), 0);
	assert_int_equal(ui_font_pixel('A', -1, 0), 0);
}

/* ---- grid ---------------------------------------------------------------- */

static void test_grid_default_size(void **state)
{
	(void)state;
	int c, r;
	ui_grid_default_size(640, 480, &c, &r);
	assert_int_equal(c, 9);
	assert_int_equal(r, 7);
	ui_grid_default_size(1920, 1080, &c, &r);
	assert_int_equal(c, 11);
	assert_int_equal(r, 7);
	ui_grid_default_size(0, 0, &c, &r);
	assert_int_equal(c, 9);
}

static void test_grid_edit(void **state)
{
	(void)state;
	static struct calib_map m;
	ui_grid_init(&m, 9, 7);
	assert_true(m.identity);
	assert_true(ui_grid_is_regular(&m, 1e-6f));
	assert_float_equal(m.pts[8][0], 1.0f, 1e-6f);
	assert_float_equal(m.pts[9][1], 1.0f / 6.0f, 1e-6f);

	assert_true(ui_grid_move_point(&m, 2, 3, 0.05f, -0.02f));
	assert_false(m.identity);
	assert_float_equal(m.pts[3 * 9 + 2][0], 0.25f + 0.05f, 1e-6f);
	assert_float_equal(m.pts[3 * 9 + 2][1], 0.5f - 0.02f, 1e-6f);
	assert_false(ui_grid_move_point(&m, 9, 0, 0.1f, 0));
	assert_false(ui_grid_move_point(&m, 0, -1, 0.1f, 0));
	/* Clamped to the image. */
	ui_grid_move_point(&m, 0, 0, -0.5f, -0.5f);
	assert_float_equal(m.pts[0][0], 0.0f, 0);
	assert_true(ui_grid_reset_point(&m, 2, 3));
	assert_true(m.identity);

	/* Scaling: refused when it would leave the image or collapse. */
	assert_false(ui_grid_scale(&m, 1.1f));
	assert_false(ui_grid_scale(&m, 0.0f));
	assert_true(ui_grid_scale(&m, 0.5f));
	assert_float_equal(m.pts[0][0], 0.25f, 1e-6f);
	assert_float_equal(m.pts[9 * 7 - 1][1], 0.75f, 1e-6f);
	assert_float_equal(m.pts[3 * 9 + 4][0], 0.5f, 1e-6f); /* the centre stays */
	assert_false(ui_grid_scale(&m, 0.05f));
	/* Moving the smaller grid: clamped so its shape survives. */
	assert_true(ui_grid_move_all(&m, -0.5f, 0.1f));
	assert_float_equal(m.pts[0][0], 0.0f, 1e-6f);
	assert_float_equal(m.pts[8][0], 0.5f, 1e-6f);
	assert_float_equal(m.pts[0][1], 0.35f, 1e-6f);
	assert_false(ui_grid_move_all(&m, -0.1f, 0.0f));
	assert_true(ui_grid_scale(&m, 2.0f) == false); /* would leave the image */
	ui_grid_reset_all(&m);
	assert_true(m.identity);
	assert_true(ui_grid_scale(&m, 1.0f / 1.01f));
	assert_true(ui_grid_scale(&m, 1.01f)); /* back to full size */

	assert_int_equal(ui_grid_nearest_point(&m, 0.26f, 0.49f), 3 * 9 + 2);
	assert_int_equal(ui_grid_nearest_point(&m, 2.0f, 2.0f), 9 * 7 - 1);
	static struct calib_map bad;
	assert_int_equal(ui_grid_nearest_point(&bad, 0.5f, 0.5f), -1);
	assert_false(ui_grid_move_point(&bad, 0, 0, 0.1f, 0.1f));
	assert_false(ui_grid_scale(&bad, 0.5f));
}

static void test_grid_remap(void **state)
{
	(void)state;
	enum { W = 64, H = 48, STRIDE = 80 };
	static struct calib_map m;
	static uint32_t lut[W * H];
	ui_grid_init(&m, 9, 7);
	ui_grid_build_remap(&m, W, H, STRIDE, lut);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			assert_int_equal(lut[y * W + x], (uint32_t)(y * STRIDE + x));
	/* The grid shrunk to its middle half: the preview magnifies that part. */
	ui_grid_scale(&m, 0.5f);
	ui_grid_build_remap(&m, W, H, STRIDE, lut);
	uint32_t first = lut[0], last = lut[W * H - 1];
	assert_int_equal(first % STRIDE, (uint32_t)lrintf(0.25f * (W - 1)));
	assert_int_equal(first / STRIDE, (uint32_t)lrintf(0.25f * (H - 1)));
	assert_int_equal(last % STRIDE, (uint32_t)lrintf(0.75f * (W - 1)));
	assert_int_equal(last / STRIDE, (uint32_t)lrintf(0.75f * (H - 1)));
	for (int i = 0; i < W * H; i++)
		assert_true(lut[i] % STRIDE < W && lut[i] / STRIDE < H);
}

/* The preview's table -> camera map must undo calib_map_apply (the
 * tracker's camera -> table map), at least for grids where both
 * interpolations are exact: an affine (shrunk and shifted) grid. */
static void test_grid_inverse_of_calib_apply(void **state)
{
	(void)state;
	static struct calib_map m;
	ui_grid_init(&m, 9, 7);
	ui_grid_scale(&m, 0.8f);
	ui_grid_move_all(&m, 0.05f, -0.03f);
	for (float v = 0.05f; v < 1.0f; v += 0.1f)
		for (float u = 0.05f; u < 1.0f; u += 0.1f) {
			float x, y;
			ui_grid_table_to_camera(&m, u, v, &x, &y);
			calib_map_apply(&m, &x, &y);
			assert_float_equal(x, u, 2e-3f);
			assert_float_equal(y, v, 2e-3f);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_backend),
		cmocka_unit_test(test_unknown_backend),
		cmocka_unit_test(test_sdl_without_display),
		cmocka_unit_test(test_keymap_commands),
		cmocka_unit_test(test_keymap_views),
		cmocka_unit_test(test_keymap_learn_box),
		cmocka_unit_test(test_keymap_threshold_menu),
		cmocka_unit_test(test_keymap_threshold_methods),
		cmocka_unit_test(test_keymap_other_menus),
		cmocka_unit_test(test_keymap_calibration),
		cmocka_unit_test(test_tunables_from_snapshot),
		cmocka_unit_test(test_font),
		cmocka_unit_test(test_grid_default_size),
		cmocka_unit_test(test_grid_edit),
		cmocka_unit_test(test_grid_remap),
		cmocka_unit_test(test_grid_inverse_of_calib_apply),
	};
	return cmocka_run_group_tests_name("ui", tests, NULL, NULL);
}
