#include "capture.h"

#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"
#include "capture_backend.h"

static const struct capture_backend *const backends[] = {
	&capture_backend_folder, &capture_backend_file, &capture_backend_raw,
	&capture_backend_demo,   &capture_backend_v4l2, &capture_backend_faulty,
};

static const struct capture_backend *backend_for(const char *source, const char **arg)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
		size_t n = strlen(backends[i]->name);
		if (strncmp(source, backends[i]->name, n) != 0)
			continue;
		if (source[n] == ':' || source[n] == '\0') {
			*arg = source[n] ? source + n + 1 : "";
			return backends[i];
		}
	}
	return NULL;
}

struct capture *capture_open(const struct capture_config *cfg, int *err)
{
	int e = 0;
	struct capture *c = NULL;
	const char *arg = "";
	const struct capture_backend *be = backend_for(cfg->source, &arg);
	if (!be) {
		log_error("capture: unknown source '%s' (want folder:DIR, file:IMG, raw:WxH, demo, "
			  "v4l2:DEV or faulty:SPEC)",
			  cfg->source);
		e = ERR_CONFIG;
		goto fail;
	}
	c = calloc(1, sizeof *c);
	if (!c) {
		e = ERR_NOMEM;
		goto fail;
	}
	c->be = be;
	c->cfg = *cfg;
	snprintf(c->desc, sizeof c->desc, "%s", cfg->source);
	e = be->open(c, arg);
	if (e)
		goto fail;
	if (err)
		*err = 0;
	return c;
fail:
	free(c);
	if (err)
		*err = e;
	return NULL;
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	c->be->close(c);
	free(c);
}

/* What every delivered frame gets, whoever wrote its pixels. Files carry no
 * time of their own: they play at the configured rate (CAPTURE_FPS_DEFAULT
 * for 0 and the words), so the tracker's prediction, and with it the TUIO
 * output, is the same on every run. */
static void frame_stamp(struct capture *c, struct frame *f)
{
	f->seq = c->stats.n_frames++;
	f->t_arrival_ns = clock_now_ns();
	if (c->replay && !f->t_capture_ns) {
		int fps = c->cfg.fps > 0 ? c->cfg.fps : CAPTURE_FPS_DEFAULT;
		f->t_capture_ns = (int64_t)(f->seq + 1) * 1000000000LL / fps;
		f->replay = true;
	} else if (!f->t_capture_ns) {
		f->t_capture_ns = clock_now_ns();
	}
}

static int read_counted(struct capture *c, struct frame **f)
{
	*f = NULL;
	int e = c->be->read(c, f);
	if (e == ERR_FORMAT || e == ERR_SIZE)
		c->stats.n_bad++;
	else if (e == ERR_AGAIN)
		c->stats.n_again++;
	return e;
}

int capture_read(struct capture *c, struct frame **out)
{
	*out = NULL;
	struct frame *f = NULL;
	int e = read_counted(c, &f);
	if (e)
		return e;
	frame_stamp(c, f);
	*out = f;
	return 0;
}

/* dst->img set to w x h inside its buffer: the stride stays when the size is
 * the buffer's own, else rows are packed. */
static bool target_fits(struct image_u8 *img, size_t bytes, int w, int h)
{
	if ((size_t)w * (size_t)h > bytes)
		return false;
	if (img->width != w || img->height != h) {
		img->width = w;
		img->height = h;
		img->stride = w;
	}
	return true;
}

struct image_u8 *capture_target(struct capture *c, struct image_u8 *own, int w, int h)
{
	if (!c->target || !target_fits(c->target, c->target_bytes, w, h))
		return own;
	c->target_written = true;
	return c->target;
}

int capture_read_into(struct capture *c, struct frame *dst)
{
	struct frame *f = NULL;
	c->target = &dst->img;
	c->target_bytes = (size_t)dst->img.stride * (size_t)dst->img.height;
	c->target_written = false;
	int e = read_counted(c, &f);
	c->target = NULL;
	if (e)
		return e;
	if (!c->target_written) {
		if (!target_fits(&dst->img, c->target_bytes, f->img.width, f->img.height)) {
			c->stats.n_bad++;
			return ERR_SIZE;
		}
		image_u8_copy(&dst->img, &f->img);
	}
	frame_stamp(c, f);
	frame_meta_copy(dst, f);
	return 0;
}

bool capture_interrupted(const struct capture *c)
{
	return c->cfg.interrupted && c->cfg.interrupted(c->cfg.interrupted_ctx);
}

bool capture_is_finite(const struct capture *c)
{
	return c->finite;
}

const char *capture_describe(const struct capture *c)
{
	return c->desc;
}

int capture_fps(const struct capture *c)
{
	return c->fps;
}

void capture_get_stats(const struct capture *c, struct capture_stats *out)
{
	*out = c->stats;
}

int capture_truth(const struct capture *c, struct capture_truth *out, int cap)
{
	return c->be->truth ? c->be->truth(c, out, cap) : 0;
}
