#include "ui.h"

#include <stddef.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "ui_backend.h"

#if TT_HAVE_SDL
static const struct ui_backend *const backends[] = {&ui_backend_none, &ui_backend_sdl};
#else
static const struct ui_backend *const backends[] = {&ui_backend_none};
#endif

struct ui *ui_create(const struct ui_config *cfg, int *err)
{
	int dummy;
	if (!err)
		err = &dummy;
	*err = 0;
	const char *name = cfg && cfg->backend && *cfg->backend ? cfg->backend : "none";
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		if (strcmp(backends[i]->name, name) != 0)
			continue;
		struct ui *ui = backends[i]->create(cfg, err);
		if (ui)
			ui->ops = backends[i];
		return ui;
	}
	if (!TT_HAVE_SDL && strcmp(name, "sdl") == 0) {
		log_error("ui: built without the window (SDL2 missing): run headless, or rebuild with "
			  "libsdl2-dev installed");
		*err = ERR_UNSUPPORTED;
		return NULL;
	}
	log_error("ui: unknown front end \"%s\" (use sdl or none)", name);
	*err = ERR_CONFIG;
	return NULL;
}

void ui_destroy(struct ui *ui)
{
	if (ui)
		ui->ops->destroy(ui);
}

int ui_poll(struct ui *ui, const struct snapshot *snap, struct ui_command *cmds, int cap, int timeout_ms)
{
	if (!ui)
		return 0;
	if (timeout_ms < 0)
		timeout_ms = 0;
	if (cap < 0 || !cmds)
		cap = 0;
	return ui->ops->poll(ui, snap, cmds, cap, timeout_ms);
}
