#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../core/err.h"
#include "ui_backend.h"

static struct ui *none_create(const struct ui_config *cfg, int *err)
{
	(void)cfg;
	struct ui *ui = calloc(1, sizeof *ui);
	if (!ui)
		*err = ERR_NOMEM;
	return ui;
}

static void none_destroy(struct ui *ui)
{
	free(ui);
}

static int none_poll(struct ui *ui, const struct snapshot *snap, struct ui_command *cmds, int cap, int timeout_ms)
{
	(void)ui;
	(void)snap;
	(void)cmds;
	(void)cap;
	struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
	/* A signal cuts the wait short on purpose: the caller checks its stop
	 * flag sooner. */
	nanosleep(&ts, NULL);
	return 0;
}

const struct ui_backend ui_backend_none = {"none", none_create, none_destroy, none_poll};
