/*
 * ui_keymap.h - what each key does in the window: a pure state machine.
 *
 * Purpose: the keyboard logic of the calibration window, kept free of SDL so
 * the unit tests can drive it key by key. The SDL backend translates its key
 * events into enum ui_key plus UI_MOD_* flags and calls ui_keymap_handle(),
 * which updates the window state (view, menus, calibration mode), edits the
 * calibration grid, and writes the commands for the pipeline.
 *
 * Keys (reacTIVision's, where it had one):
 *   ESC quit                     H help            F1 fullscreen
 *   S camera view                T threshold view  N display off/on
 *   V verbose overlay            P pause           SPACE reset tracking
 *   E capture equaliser          SHIFT+E reset it  K save config
 *   M median filter off/3/5      C calibration mode
 *   O learn the object in the box dragged with the mouse (outside
 *     calibration mode): UI_CMD_LEARN_OBJECT with the box in frame pixels;
 *     the pipeline adds it to the object library (objects = FILE) and
 *     reloads it. Without a box (or one under 16 px a side) nothing is
 *     sent and UI_ACT_NO_SELECTION asks the backend to say why.
 *   G threshold menu (radius, gate, method, median; the second scale's
 *     radius2, 0 = off, its method and median2; the local-mean methods'
 *     mean radius and bias, shared by both scales)
 *   F finger menu (size, sensitivity)   B blob menu (min, max)
 *   I invert menu (x, y, angle; X/Y/A toggle directly)
 *   In a menu: UP/DOWN pick a line, LEFT/RIGHT or -/+ change it (SHIFT: x10),
 *   ENTER or the menu's own key closes it.
 *   In calibration mode: arrows select a point, CTRL (or ALT)+arrows move it,
 *   SHIFT+arrows move the whole grid, +/- scale the grid, Q toggles quick
 *   (1% steps) / precise (1 pixel) moves, R resets the point, SHIFT+R every
 *   point, L reverts to the saved grid, W saves it, X previews the corrected
 *   image, C leaves.
 *
 * Every change of a tunable becomes UI_CMD_SET with the config key's name
 * and the new value as text (what config_set() takes; the threshold methods
 * are the keys "threshold" and "threshold2", whose values ui_threshold_mode_name()
 * lists; LEFT/RIGHT cycle through them, wrapping); every grid edit
 * becomes UI_CMD_GRID_CHANGED. Changes are applied at once to the caller's
 * struct ui_tunables, so repeated presses count up before the pipeline's
 * next snapshot confirms them. Things only the backend can do (fullscreen,
 * grid file I/O) come back as UI_ACT_* flags.
 *
 * Memory: no allocation; everything lives in the caller's structs.
 */
#ifndef TT_UI_KEYMAP_H
#define TT_UI_KEYMAP_H

#include <stdbool.h>

#include "../core/snapshot.h"
#include "../core/calib.h"

/* Printable keys are their lower-case ASCII code ('a'..'z', '0'..'9', '+',
 * '-'); SHIFT comes in the modifier flags. */
enum ui_key {
	UI_KEY_NONE = 0,
	UI_KEY_TAB = 9,
	UI_KEY_ENTER = 13,
	UI_KEY_ESC = 27,
	UI_KEY_SPACE = 32,
	UI_KEY_UP = 0x100,
	UI_KEY_DOWN,
	UI_KEY_LEFT,
	UI_KEY_RIGHT,
	UI_KEY_F1,
};

enum ui_mod { UI_MOD_SHIFT = 1, UI_MOD_CTRL = 2, UI_MOD_ALT = 4 };

enum ui_view { UI_VIEW_CAMERA = 0, UI_VIEW_BINARY, UI_VIEW_OFF };

enum ui_menu { UI_MENU_NONE = 0, UI_MENU_THRESHOLD, UI_MENU_FINGER, UI_MENU_BLOB, UI_MENU_INVERT };

enum ui_action {
	UI_ACT_FULLSCREEN = 1,  /* toggle fullscreen */
	UI_ACT_GRID_SAVE = 2,   /* write the grid to grid_path */
	UI_ACT_GRID_LOAD = 4,   /* revert the grid to the saved one */
	UI_ACT_GRID_EDITED = 8, /* the grid changed: rebuild the preview table */
	UI_ACT_REDRAW = 16,     /* window state changed: draw again */
	UI_ACT_NO_SELECTION = 32, /* O without a box to learn */
};

/* The live-tunable values the window shows and changes. */
struct ui_tunables {
	int radius, gate, median;
	int threshold_mode;                       /* index of ui_threshold_mode_name() */
	int mean_radius, mean_bias;               /* local-mean methods */
	int radius2, median2;                     /* the second scale; radius2 0 = off */
	int threshold2_mode;                      /* index of ui_threshold_mode_name() */
	int threshold3_mode;                      /* the third scale's: an index, or -1 = off */
	float finger_size, finger_sensitivity, blob_min, blob_max;
	float touch_sharpness;                    /* outline stage; 0 = no touch test */
	bool invert_x, invert_y, invert_angle;
};

struct ui_state {
	enum ui_view view, view_before_off;
	enum ui_menu menu;
	int menu_item;
	bool help, verbose, calib, preview, precise;
	int sel_col, sel_row;    /* selected grid point */
	int frame_w, frame_h;    /* for 1-pixel grid steps */
	/* The box dragged with the mouse for O, frame coordinates scaled to
	 * 0..1 (as the grid's), corners in any order; has_box when complete. */
	bool has_box, dragging_box;
	float box[4];            /* x0, y0, x1, y1 */
};

/* The smallest box O learns, frame pixels a side. */
#define UI_LEARN_MIN_PX 16

/* The mouse's box for O (x, y scaled to 0..1 like the grid): start at a
 * press, follow the motion, end at the release (a box too small is
 * dropped). */
void ui_box_start(struct ui_state *st, float x, float y);
void ui_box_move(struct ui_state *st, float x, float y);
void ui_box_end(struct ui_state *st, float x, float y);
/* The box in frame pixels (x0 <= x1, y0 <= y1, inclusive, clamped to the
 * frame); false when there is none or it is under UI_LEARN_MIN_PX a side. */
bool ui_box_pixels(const struct ui_state *st, int px[4]);

/* Most commands one key produces; give ui_keymap_handle at least this cap. */
#define UI_KEYMAP_MAX_CMDS 2

void ui_state_init(struct ui_state *st, int frame_w, int frame_h);
void ui_tunables_from_snapshot(struct ui_tunables *t, const struct snapshot *s);
bool ui_tunables_equal(const struct ui_tunables *a, const struct ui_tunables *b);

/* Handles one key press. Updates st, tun and grid (may be NULL: no
 * calibration edits), writes up to cap commands and returns their number;
 * *actions gets UI_ACT_* flags. */
int ui_keymap_handle(struct ui_state *st, struct ui_tunables *tun, struct calib_map *grid, int key,
		     unsigned mods, struct ui_command *cmds, int cap, unsigned *actions);

/* Number of lines of a menu (0 for UI_MENU_NONE). */
int ui_menu_lines(enum ui_menu menu);
/* Writes line i of a menu ("radius 6") into buf; returns buf. */
const char *ui_menu_line(enum ui_menu menu, int i, const struct ui_tunables *tun, char *buf, int cap);
/* The menu's title ("threshold"). */
const char *ui_menu_title(enum ui_menu menu);
/* The threshold methods the menu cycles through, in the config table's
 * order: name i (0 <= i < UI_THRESHOLD_MODES) or NULL. */
#define UI_THRESHOLD_MODES 7
const char *ui_threshold_mode_name(int i);
/* The index of a method's name; unknown names give 0 (bernsen, the default). */
int ui_threshold_mode_index(const char *name);
/* The help text: one line a key, '\n'-separated; static. */
const char *ui_keymap_help(void);

#endif
