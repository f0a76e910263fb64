/*
 * ui.h - front ends: the SDL calibration window, or none (headless).
 *
 * The UI runs on the main thread. ui_poll() shows the newest snapshot (if it
 * changed), handles input, and returns the commands the user gave; it never
 * blocks longer than `timeout_ms`. The "none" backend only sleeps.
 *
 * The window edits the calibration grid in place (calib_map, owned by the
 * caller) and then emits UI_CMD_GRID_CHANGED.
 */
#ifndef TT_UI_H
#define TT_UI_H

#include "../core/snapshot.h"

struct calib_map;

struct ui_config {
	const char *backend;          /* "sdl" or "none" */
	int width, height;            /* frame size */
	struct calib_map *grid;       /* edited by the calibration mode (borrowed) */
	const char *grid_path;        /* where "save grid" writes; may be "" */
	const char *config_path;      /* where "save config" writes; may be "" */
	bool fullscreen;
};

struct ui;

/* NULL with *err = ERR_UNSUPPORTED when no display is available. */
struct ui *ui_create(const struct ui_config *cfg, int *err);
void ui_destroy(struct ui *ui);  /* NULL-safe */
/* Returns the number of commands written to cmds (<= cap). */
int ui_poll(struct ui *ui, const struct snapshot *snap, struct ui_command *cmds, int cap, int timeout_ms);

#endif
