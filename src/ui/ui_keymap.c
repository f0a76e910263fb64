#include "ui_keymap.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ui_grid.h"

/* ITEM_INT_OFF: an integer whose 0 means off (shown as "off"). */
/* ITEM_MODE_OFF: a method, or -1 for off (the third scale). */
enum item_kind { ITEM_INT, ITEM_INT_OFF, ITEM_FLOAT, ITEM_BOOL, ITEM_MODE, ITEM_MODE_OFF, ITEM_MEDIAN };

struct menu_item {
	enum ui_menu menu;
	const char *key;    /* config key sent with UI_CMD_SET */
	const char *label;
	enum item_kind kind;
	size_t offset;      /* into struct ui_tunables */
	float step;         /* 0 = a tenth of the value, at least 1 */
	float min, max;
};

#define TUN(field) offsetof(struct ui_tunables, field)

/* Keys and ranges are those of the config table (src/config/config.c); the
 * pipeline validates again through config_set(). */
static const struct menu_item menu_items[] = {
	{UI_MENU_THRESHOLD, "radius", "radius", ITEM_INT, TUN(radius), 1, 1, 32},
	{UI_MENU_THRESHOLD, "gate", "gate", ITEM_INT, TUN(gate), 1, 0, 255},
	{UI_MENU_THRESHOLD, "threshold", "method", ITEM_MODE, TUN(threshold_mode), 1, 0, UI_THRESHOLD_MODES - 1},
	{UI_MENU_THRESHOLD, "median", "median", ITEM_MEDIAN, TUN(median), 1, 0, 5},
	{UI_MENU_THRESHOLD, "radius2", "radius2 (2nd)", ITEM_INT_OFF, TUN(radius2), 1, 0, 32},
	{UI_MENU_THRESHOLD, "threshold2", "method2 (2nd)", ITEM_MODE, TUN(threshold2_mode), 1, 0,
	 UI_THRESHOLD_MODES - 1},
	{UI_MENU_THRESHOLD, "median2", "median2 (2nd)", ITEM_MEDIAN, TUN(median2), 1, 0, 5},
	{UI_MENU_THRESHOLD, "threshold3", "method3 (3rd)", ITEM_MODE_OFF, TUN(threshold3_mode), 1, -1,
	 UI_THRESHOLD_MODES - 1},
	{UI_MENU_THRESHOLD, "mean_radius", "mean radius", ITEM_INT, TUN(mean_radius), 1, 1, 63},
	{UI_MENU_THRESHOLD, "mean_bias", "mean bias %", ITEM_INT, TUN(mean_bias), 1, 0, 50},
	{UI_MENU_THRESHOLD, "touch_sharpness", "touch sharpness", ITEM_FLOAT, TUN(touch_sharpness), 0.01f, 0, 2},
	{UI_MENU_FINGER, "finger_size", "finger size px", ITEM_FLOAT, TUN(finger_size), 1, 0, 500},
	{UI_MENU_FINGER, "finger_sensitivity", "sensitivity", ITEM_FLOAT, TUN(finger_sensitivity), 0.05f, 0, 1},
	{UI_MENU_BLOB, "blob_min", "blob min px", ITEM_FLOAT, TUN(blob_min), 0, 0, 16384},
	{UI_MENU_BLOB, "blob_max", "blob max px", ITEM_FLOAT, TUN(blob_max), 0, 0, 16384},
	{UI_MENU_INVERT, "invert_x", "invert x", ITEM_BOOL, TUN(invert_x), 1, 0, 1},
	{UI_MENU_INVERT, "invert_y", "invert y", ITEM_BOOL, TUN(invert_y), 1, 0, 1},
	{UI_MENU_INVERT, "invert_angle", "invert angle", ITEM_BOOL, TUN(invert_angle), 1, 0, 1},
};
#define N_ITEMS ((int)(sizeof menu_items / sizeof menu_items[0]))

/* The config table's values of "threshold" and "threshold2", in order
 * (tests/test_ui.c checks they agree). */
static const char *const mode_names[UI_THRESHOLD_MODES] = {"bernsen", "tiled",  "mean",   "gated",
							     "either",  "both",   "sauvola"};

const char *ui_threshold_mode_name(int i)
{
	return i >= 0 && i < UI_THRESHOLD_MODES ? mode_names[i] : NULL;
}

int ui_threshold_mode_index(const char *name)
{
	for (int i = 0; i < UI_THRESHOLD_MODES; i++)
		if (strcmp(name, mode_names[i]) == 0)
			return i;
	return 0;
}

static const char help_text[] =
	"ESC quit         H help          F1 fullscreen\n"
	"S camera view    T threshold view N display off\n"
	"V verbose        P pause         SPACE reset tracking\n"
	"E equaliser      SHIFT+E reset   K save config\n"
	"M median         C calibration\n"
	"O learn the object in the box dragged with the mouse\n"
	"G threshold menu (both scales)\n"
	"F finger menu    B blob menu\n"
	"I invert menu: X/Y/A toggle\n"
	"menu: UP/DOWN line, LEFT/RIGHT or -/+ change (SHIFT x10)\n"
	"calibration: arrows select, CTRL+arrows move point,\n"
	"  SHIFT+arrows move grid, +/- scale, Q quick/precise,\n"
	"  R reset point, SHIFT+R reset all, L revert, W save,\n"
	"  X preview corrected image, C leave";

const char *ui_keymap_help(void)
{
	return help_text;
}

void ui_state_init(struct ui_state *st, int frame_w, int frame_h)
{
	memset(st, 0, sizeof *st);
	st->view = UI_VIEW_CAMERA;
	st->view_before_off = UI_VIEW_CAMERA;
	st->frame_w = frame_w > 0 ? frame_w : 640;
	st->frame_h = frame_h > 0 ? frame_h : 480;
}

void ui_tunables_from_snapshot(struct ui_tunables *t, const struct snapshot *s)
{
	memset(t, 0, sizeof *t);
	t->radius = s->radius;
	t->gate = s->gate;
	t->threshold_mode = ui_threshold_mode_index(s->threshold_mode);
	t->mean_radius = s->mean_radius;
	t->mean_bias = s->mean_bias;
	t->median = s->median;
	t->radius2 = s->radius2;
	t->threshold2_mode = ui_threshold_mode_index(s->threshold2_mode);
	t->threshold3_mode = strcmp(s->threshold3_mode, "off") == 0 ? -1 : ui_threshold_mode_index(s->threshold3_mode);
	t->median2 = s->median2;
	t->finger_size = s->finger_size;
	t->finger_sensitivity = s->finger_sensitivity;
	t->blob_min = s->blob_min;
	t->blob_max = s->blob_max;
	t->touch_sharpness = s->touch_sharpness;
	t->invert_x = s->invert_x;
	t->invert_y = s->invert_y;
	t->invert_angle = s->invert_angle;
}

bool ui_tunables_equal(const struct ui_tunables *a, const struct ui_tunables *b)
{
	return a->radius == b->radius && a->gate == b->gate && a->threshold_mode == b->threshold_mode &&
	       a->median == b->median && a->radius2 == b->radius2 && a->median2 == b->median2 &&
	       a->threshold2_mode == b->threshold2_mode && a->threshold3_mode == b->threshold3_mode &&
	       a->mean_radius == b->mean_radius &&
	       a->mean_bias == b->mean_bias &&
	       a->finger_size == b->finger_size &&
	       a->finger_sensitivity == b->finger_sensitivity && a->blob_min == b->blob_min &&
	       a->blob_max == b->blob_max && a->touch_sharpness == b->touch_sharpness && a->invert_x == b->invert_x && a->invert_y == b->invert_y &&
	       a->invert_angle == b->invert_angle;
}

static const struct menu_item *menu_item_at(enum ui_menu menu, int i)
{
	for (int k = 0; k < N_ITEMS; k++)
		if (menu_items[k].menu == menu && i-- == 0)
			return &menu_items[k];
	return NULL;
}

int ui_menu_lines(enum ui_menu menu)
{
	int n = 0;
	for (int k = 0; k < N_ITEMS; k++)
		n += menu_items[k].menu == menu;
	return n;
}

const char *ui_menu_title(enum ui_menu menu)
{
	switch (menu) {
	case UI_MENU_THRESHOLD: return "threshold (G)";
	case UI_MENU_FINGER: return "fingers (F)";
	case UI_MENU_BLOB: return "blobs (B)";
	case UI_MENU_INVERT: return "invert (I)";
	default: return "";
	}
}

static int *item_int(const struct menu_item *it, struct ui_tunables *t)
{
	return (int *)(void *)((char *)t + it->offset);
}

static float *item_float(const struct menu_item *it, struct ui_tunables *t)
{
	return (float *)(void *)((char *)t + it->offset);
}

static bool *item_bool(const struct menu_item *it, struct ui_tunables *t)
{
	return (bool *)(void *)((char *)t + it->offset);
}

/* The value as config_set() takes it. */
static void item_format_value(const struct menu_item *it, const struct ui_tunables *tc, char *buf, size_t cap)
{
	struct ui_tunables *t = (struct ui_tunables *)tc;
	switch (it->kind) {
	case ITEM_INT:
	case ITEM_INT_OFF:
	case ITEM_MEDIAN: snprintf(buf, cap, "%d", *item_int(it, t)); break;
	case ITEM_MODE:
	case ITEM_MODE_OFF: {
		const char *name = ui_threshold_mode_name(*item_int(it, t));
		snprintf(buf, cap, "%s", name ? name : it->kind == ITEM_MODE_OFF ? "off" : mode_names[0]);
		break;
	}
	case ITEM_BOOL: snprintf(buf, cap, "%s", *item_bool(it, t) ? "true" : "false"); break;
	case ITEM_FLOAT: {
		snprintf(buf, cap, "%.2f", (double)*item_float(it, t));
		/* "12.50" -> "12.5", "3.00" -> "3": what a person would type. */
		char *dot = strchr(buf, '.');
		if (dot) {
			char *end = buf + strlen(buf) - 1;
			while (end > dot && *end == '0')
				*end-- = '\0';
			if (end == dot)
				*end = '\0';
		}
		break;
	}
	}
}

const char *ui_menu_line(enum ui_menu menu, int i, const struct ui_tunables *tun, char *buf, int cap)
{
	const struct menu_item *it = menu_item_at(menu, i);
	if (!it || cap < 1) {
		if (cap > 0)
			buf[0] = '\0';
		return buf;
	}
	char val[32];
	struct ui_tunables *t = (struct ui_tunables *)tun;
	if (it->kind == ITEM_MEDIAN)
		snprintf(val, sizeof val, "%s", *item_int(it, t) == 0 ? "off" : *item_int(it, t) == 3 ? "3x3" : "5x5");
	else if (it->kind == ITEM_BOOL)
		snprintf(val, sizeof val, "%s", *item_bool(it, t) ? "on" : "off");
	else if (it->kind == ITEM_INT_OFF && *item_int(it, t) == 0)
		snprintf(val, sizeof val, "off");
	else
		item_format_value(it, tun, val, sizeof val);
	snprintf(buf, (size_t)cap, "%-15s %s", it->label, val);
	return buf;
}

static int emit(struct ui_command *cmds, int cap, int n, enum ui_command_kind kind, const char *key,
		const char *value)
{
	if (n >= cap)
		return n;
	memset(&cmds[n], 0, sizeof cmds[n]);
	cmds[n].kind = kind;
	if (key)
		snprintf(cmds[n].key, sizeof cmds[n].key, "%s", key);
	if (value)
		snprintf(cmds[n].value, sizeof cmds[n].value, "%s", value);
	return n + 1;
}

static int emit_item(const struct menu_item *it, const struct ui_tunables *t, struct ui_command *cmds, int cap,
		     int n)
{
	char val[32];
	item_format_value(it, t, val, sizeof val);
	return emit(cmds, cap, n, UI_CMD_SET, it->key, val);
}

/* Changes an item by dir steps (dir = -1 or +1, times 10 with big). */
static void item_adjust(const struct menu_item *it, struct ui_tunables *t, int dir, bool big)
{
	int mult = big ? 10 : 1;
	switch (it->kind) {
	case ITEM_INT:
	case ITEM_INT_OFF: {
		int v = *item_int(it, t) + dir * mult * (int)it->step;
		*item_int(it, t) = v < (int)it->min ? (int)it->min : v > (int)it->max ? (int)it->max : v;
		break;
	}
	case ITEM_FLOAT: {
		float v = *item_float(it, t);
		float step = it->step > 0 ? it->step : fmaxf(1.0f, roundf(fabsf(v) * 0.1f));
		v += (float)(dir * mult) * step;
		/* Keep decimal steps on their grid (0.05, not 0.0500001). */
		if (it->step > 0)
			v = roundf(v / it->step) * it->step;
		*item_float(it, t) = fminf(fmaxf(v, it->min), it->max);
		break;
	}
	case ITEM_BOOL: *item_bool(it, t) = !*item_bool(it, t); break;
	case ITEM_MODE:
	case ITEM_MODE_OFF: {
		/* Cycles, wrapping: the methods have no order worth stopping at
		 * (min is -1, off, for the third scale). */
		int lo = (int)it->min, n = (int)it->max - lo + 1, v = *item_int(it, t) + dir - lo;
		*item_int(it, t) = ((v % n) + n) % n + lo;
		break;
	}
	case ITEM_MEDIAN: {
		static const int cycle[] = {0, 3, 5};
		int v = *item_int(it, t), k = v >= 5 ? 2 : v >= 3 ? 1 : 0;
		*item_int(it, t) = cycle[(k + (dir < 0 ? 2 : 1)) % 3];
		break;
	}
	}
}

static const struct menu_item *item_by_key(const char *key)
{
	for (int k = 0; k < N_ITEMS; k++)
		if (strcmp(menu_items[k].key, key) == 0)
			return &menu_items[k];
	return NULL;
}

static void toggle_menu(struct ui_state *st, enum ui_menu menu)
{
	st->menu = st->menu == menu ? UI_MENU_NONE : menu;
	st->menu_item = 0;
}

static bool handle_menu(struct ui_state *st, struct ui_tunables *tun, int key, unsigned mods,
			struct ui_command *cmds, int cap, int *n)
{
	int lines = ui_menu_lines(st->menu);
	const struct menu_item *it = menu_item_at(st->menu, st->menu_item);
	if (!it)
		return false;
	int dir = 0;
	switch (key) {
	case UI_KEY_UP: st->menu_item = (st->menu_item + lines - 1) % lines; return true;
	case UI_KEY_DOWN: st->menu_item = (st->menu_item + 1) % lines; return true;
	case UI_KEY_ENTER:
		if (it->kind == ITEM_BOOL)
			break;
		st->menu = UI_MENU_NONE;
		return true;
	case UI_KEY_LEFT:
	case '-': dir = -1; break;
	case UI_KEY_RIGHT:
	case '+': dir = 1; break;
	case 'x':
	case 'y':
	case 'a':
		if (st->menu != UI_MENU_INVERT)
			return false;
		it = item_by_key(key == 'x' ? "invert_x" : key == 'y' ? "invert_y" : "invert_angle");
		st->menu_item = key == 'x' ? 0 : key == 'y' ? 1 : 2;
		dir = 1;
		break;
	default: return false;
	}
	if (key == UI_KEY_ENTER)
		dir = 1;
	item_adjust(it, tun, dir, (mods & UI_MOD_SHIFT) != 0);
	*n = emit_item(it, tun, cmds, cap, *n);
	return true;
}

static bool handle_calib(struct ui_state *st, struct calib_map *grid, int key, unsigned mods,
			 struct ui_command *cmds, int cap, int *n, unsigned *actions)
{
	float sx = st->precise ? 1.0f / (float)st->frame_w : 0.01f;
	float sy = st->precise ? 1.0f / (float)st->frame_h : 0.01f;
	int dx = 0, dy = 0;
	bool edited = false;
	switch (key) {
	case UI_KEY_LEFT: dx = -1; break;
	case UI_KEY_RIGHT: dx = 1; break;
	case UI_KEY_UP: dy = -1; break;
	case UI_KEY_DOWN: dy = 1; break;
	case '+': edited = ui_grid_scale(grid, st->precise ? 1.002f : 1.01f); break;
	case '-': edited = ui_grid_scale(grid, st->precise ? 1.0f / 1.002f : 1.0f / 1.01f); break;
	case 'q': st->precise = !st->precise; return true;
	case 'x':
		st->preview = !st->preview;
		*actions |= UI_ACT_GRID_EDITED;
		return true;
	case 'r':
		if (mods & UI_MOD_SHIFT) {
			ui_grid_reset_all(grid);
			edited = true;
		} else {
			edited = ui_grid_reset_point(grid, st->sel_col, st->sel_row);
		}
		break;
	case 'l': *actions |= UI_ACT_GRID_LOAD; return true;
	case 'w': *actions |= UI_ACT_GRID_SAVE; return true;
	default: return false;
	}
	if (dx || dy) {
		if (mods & UI_MOD_SHIFT) {
			edited = ui_grid_move_all(grid, (float)dx * sx, (float)dy * sy);
		} else if (mods & (UI_MOD_CTRL | UI_MOD_ALT)) {
			edited = ui_grid_move_point(grid, st->sel_col, st->sel_row, (float)dx * sx, (float)dy * sy);
		} else {
			st->sel_col += dx;
			st->sel_row += dy;
		}
	}
	if (st->sel_col < 0)
		st->sel_col = 0;
	if (st->sel_col > grid->cols - 1)
		st->sel_col = grid->cols - 1;
	if (st->sel_row < 0)
		st->sel_row = 0;
	if (st->sel_row > grid->rows - 1)
		st->sel_row = grid->rows - 1;
	if (edited) {
		*actions |= UI_ACT_GRID_EDITED;
		*n = emit(cmds, cap, *n, UI_CMD_GRID_CHANGED, NULL, NULL);
	}
	return true;
}

int ui_keymap_handle(struct ui_state *st, struct ui_tunables *tun, struct calib_map *grid, int key,
		     unsigned mods, struct ui_command *cmds, int cap, unsigned *actions)
{
	int n = 0;
	*actions = UI_ACT_REDRAW;
	if (key == UI_KEY_ESC)
		return emit(cmds, cap, n, UI_CMD_QUIT, NULL, NULL);
	if (key == UI_KEY_F1) {
		*actions |= UI_ACT_FULLSCREEN;
		return n;
	}
	if (st->menu != UI_MENU_NONE && handle_menu(st, tun, key, mods, cmds, cap, &n))
		return n;
	if (st->calib && grid && grid->cols >= 2 && handle_calib(st, grid, key, mods, cmds, cap, &n, actions))
		return n;
	switch (key) {
	case 'h': st->help = !st->help; break;
	/* S and T select their view, as in reacTIVision: pressing one twice
	 * keeps it, and either brings a switched-off display back. */
	case 's': st->view = UI_VIEW_CAMERA; break;
	case 't': st->view = UI_VIEW_BINARY; break;
	case 'n':
		if (st->view == UI_VIEW_OFF) {
			st->view = st->view_before_off;
		} else {
			st->view_before_off = st->view;
			st->view = UI_VIEW_OFF;
		}
		break;
	case 'v': st->verbose = !st->verbose; break;
	case 'c':
		st->calib = !st->calib;
		if (st->calib && st->view == UI_VIEW_OFF)
			st->view = st->view_before_off;
		if (!st->calib && st->preview) {
			st->preview = false;
			*actions |= UI_ACT_GRID_EDITED;
		}
		break;
	case 'p': n = emit(cmds, cap, n, UI_CMD_PAUSE, NULL, NULL); break;
	case 'k': n = emit(cmds, cap, n, UI_CMD_SAVE_CONFIG, NULL, NULL); break;
	case 'o': {
		int px[4];
		if (!ui_box_pixels(st, px)) {
			*actions |= UI_ACT_NO_SELECTION;
			break;
		}
		char v[64];
		snprintf(v, sizeof v, "%d %d %d %d", px[0], px[1], px[2], px[3]);
		n = emit(cmds, cap, n, UI_CMD_LEARN_OBJECT, NULL, v);
		st->has_box = false;
		break;
	}
	case ' ': n = emit(cmds, cap, n, UI_CMD_RESET_TRACKING, NULL, NULL); break;
	case 'e':
		n = emit(cmds, cap, n, (mods & UI_MOD_SHIFT) ? UI_CMD_EQUALIZE_RESET : UI_CMD_EQUALIZE, NULL, NULL);
		break;
	case 'm': {
		const struct menu_item *it = item_by_key("median");
		item_adjust(it, tun, 1, false);
		n = emit_item(it, tun, cmds, cap, n);
		break;
	}
	case 'g': toggle_menu(st, UI_MENU_THRESHOLD); break;
	case 'f': toggle_menu(st, UI_MENU_FINGER); break;
	case 'b': toggle_menu(st, UI_MENU_BLOB); break;
	case 'i': toggle_menu(st, UI_MENU_INVERT); break;
	default: *actions = 0; break;
	}
	return n;
}

void ui_box_start(struct ui_state *st, float x, float y)
{
	st->box[0] = st->box[2] = x;
	st->box[1] = st->box[3] = y;
	st->dragging_box = true;
	st->has_box = false;
}

void ui_box_move(struct ui_state *st, float x, float y)
{
	if (!st->dragging_box)
		return;
	st->box[2] = x;
	st->box[3] = y;
}

void ui_box_end(struct ui_state *st, float x, float y)
{
	if (!st->dragging_box)
		return;
	ui_box_move(st, x, y);
	st->dragging_box = false;
	int px[4];
	st->has_box = true; /* complete: ui_box_pixels judges its size */
	st->has_box = ui_box_pixels(st, px);
}

static int clamp_px(float v, int n)
{
	int p = (int)floorf(v * (float)n);
	return p < 0 ? 0 : p > n - 1 ? n - 1 : p;
}

bool ui_box_pixels(const struct ui_state *st, int px[4])
{
	if (!st->has_box)
		return false;
	float x0 = fminf(st->box[0], st->box[2]), x1 = fmaxf(st->box[0], st->box[2]);
	float y0 = fminf(st->box[1], st->box[3]), y1 = fmaxf(st->box[1], st->box[3]);
	px[0] = clamp_px(x0, st->frame_w);
	px[1] = clamp_px(y0, st->frame_h);
	px[2] = clamp_px(x1, st->frame_w);
	px[3] = clamp_px(y1, st->frame_h);
	return px[2] - px[0] + 1 >= UI_LEARN_MIN_PX && px[3] - px[1] + 1 >= UI_LEARN_MIN_PX;
}
