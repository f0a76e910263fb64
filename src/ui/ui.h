/*
 * ui.h - front ends: the SDL calibration window, or none (headless).
 *
 * The UI runs on the main thread. ui_poll() shows the newest snapshot (if it
 * changed), handles input, and returns the commands the user gave; it never
 * blocks longer than `timeout_ms` (plus the drawing of one frame). The
 * "none" backend only sleeps.
 *
 * The window edits the calibration grid in place (calib_map, owned by the
 * caller) and then emits UI_CMD_GRID_CHANGED.
 *
 * Backends (by name, src/ui/ui.c): "none"; "sdl", the only SDL user in the
 * project: ui_create() fails with ERR_UNSUPPORTED, logging nothing above
 * debug level, when neither DISPLAY nor WAYLAND_DISPLAY is set or SDL cannot
 * open a window, so the caller can fall back to "none" with one log line of
 * its own. An unknown name gives ERR_CONFIG. SDL's own signal handlers are
 * disabled (the daemon owns SIGINT/SIGTERM).
 *
 * The window (title "tabletrack - calibration window"): the camera or the
 * thresholded frame, scaled to the window with its aspect kept, overlaid
 * with what is tracked: symbols as boxes turned by their angle with an
 * arrow and the ID, green when decoded, yellow when fuzzy, orange when
 * tracked by the root region only, magenta when predicted; fingers as cyan
 * circles; blobs as blue oriented boxes; raw detections as red crosses in
 * verbose mode. Below it a status bar: fps, per-stage ms, dropped and bad
 * frames, CPU or CUDA path, the pipeline's status text, and feedback on the
 * last key. Text uses a built-in 5x7 font (ui_font.h). Keys are listed in
 * ui_keymap.h (H shows them); the calibration grid editing is ui_grid.h.
 * The window grows cfg->grid to the default size for the aspect (9x7 for
 * 4:3, 11x7 for 16:9) when it is the identity; W writes it to grid_path
 * with calib_map_save(), creating missing folders, and says where in the
 * status bar and the log; L reloads it from there. K's status line names
 * config_path (the pipeline writes the file). Closing the window or ESC
 * gives UI_CMD_QUIT.
 *
 * Memory: the frame texture (ARGB) and the preview table (4 bytes a pixel)
 * are allocated at create and again only when the frame size changes.
 * Performance: one frame drawn (640x480, grey to ARGB, overlay, text,
 * present) takes 4-10 ms under Xvfb with llvmpipe OpenGL or SDL's software
 * renderer on the 2-core development VM; 1920x1080 about 36 ms there. With
 * N (display off) the image is not converted or uploaded at all.
 */
#ifndef TT_UI_H
#define TT_UI_H

#include "../core/snapshot.h"

struct calib_map;

struct ui_config {
	const char *backend;          /* "sdl" or "none" */
	int width, height;            /* frame size */
	struct calib_map *grid;       /* edited by the calibration mode (borrowed) */
	const char *grid_path;        /* where W writes and L reads (the caller
	                                 resolves defaults); "" = nowhere */
	const char *config_path;      /* where K's command will write; "" = unknown */
	bool fullscreen;
};

struct ui;

/* NULL with *err = ERR_UNSUPPORTED when no display is available. cfg and
 * cfg->grid must outlive the ui (grid is borrowed; paths are copied). */
struct ui *ui_create(const struct ui_config *cfg, int *err);
void ui_destroy(struct ui *ui);  /* NULL-safe */
/* Returns the number of commands written to cmds (<= cap). snap may be NULL
 * (nothing to show yet); it is only read during the call. Give cap >= 3 so
 * one key's commands fit; with less, input waits for a later call. */
int ui_poll(struct ui *ui, const struct snapshot *snap, struct ui_command *cmds, int cap, int timeout_ms);

#endif
