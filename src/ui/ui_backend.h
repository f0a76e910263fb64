/*
 * ui_backend.h - the front-end backends behind ui.h, chosen by name.
 *
 * Internal to src/ui. ui.c keeps a table of these ops; ui_create() finds the
 * backend by cfg->backend and calls its create. Each backend's state starts
 * with a struct ui, so ui.c can hand the ops the right pointer.
 */
#ifndef TT_UI_BACKEND_H
#define TT_UI_BACKEND_H

#include "ui.h"

struct ui_backend {
	const char *name;
	struct ui *(*create)(const struct ui_config *cfg, int *err);
	void (*destroy)(struct ui *ui);
	int (*poll)(struct ui *ui, const struct snapshot *snap, struct ui_command *cmds, int cap, int timeout_ms);
};

struct ui {
	const struct ui_backend *ops;
};

extern const struct ui_backend ui_backend_none;
extern const struct ui_backend ui_backend_sdl;

#endif
