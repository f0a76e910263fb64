#include "settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/err.h"
#include "../core/log.h"

static const char *const mode_names[THRESHOLD_MODES] = {"bernsen", "tiled", "mean",   "gated",
							  "either",  "both",  "sauvola"};

int threshold_mode_of(const char *name)
{
	for (int i = 0; i < THRESHOLD_MODES; i++)
		if (strcmp(name, mode_names[i]) == 0)
			return i;
	return THRESHOLD_BERNSEN;
}

void threshold_config_from(const struct tt_config *c, int w, int h, struct threshold_config *t)
{
	memset(t, 0, sizeof *t);
	t->max_width = w;
	t->max_height = h;
	t->mode = threshold_mode_of(c->threshold_mode);
	t->mean_radius = c->mean_radius;
	t->mean_bias = c->mean_bias;
	t->sauvola_k = c->sauvola_k;
	t->sauvola_range = c->sauvola_range;
	t->radius = c->radius;
	t->gate = c->gate;
	t->tile = c->tile;
	t->median = c->median;
	t->gauss_sigma = c->gauss_sigma;
}

void match_config_from(const struct tt_config *c, const struct tree_set *trees, int w, int h,
		       struct match_config *m)
{
	memset(m, 0, sizeof *m);
	m->trees = trees;
	m->max_width = w;
	m->max_height = h;
	m->finger_size_px = c->finger_size;
	m->finger_sensitivity = c->finger_sensitivity;
	m->finger_min_contrast = c->finger_contrast;
	m->blob_min_px = c->blob_min;
	m->blob_max_px = c->blob_max;
	m->complete = c->complete;
	/* Root regions worth following through blur: from a small symbol to a
	 * third of the frame. */
	m->root_min_px = 12.0f;
	m->root_max_px = (float)(w < h ? w : h) / 2.0f;
}

void track_config_from(const struct tt_config *c, const struct calib_map *calib, struct track_config *t)
{
	memset(t, 0, sizeof *t);
	t->max_items = SETTINGS_MAX_DETECTIONS;
	t->linger_frames = c->linger_frames;
	t->dead_band_px = c->dead_band_px;
	t->dead_band_rad = c->dead_band_deg * 3.14159265f / 180.0f;
	t->invert_x = c->invert_x;
	t->invert_y = c->invert_y;
	t->invert_angle = c->invert_angle;
	t->blobs_for_objects = c->object_blobs;
	t->blobs_for_fingers = c->finger_blobs;
	t->hover_out = c->hover_pointers;
	t->max_contours = c->max_contours;
	t->max_contour_points = c->max_contours * c->contour_points;
	t->euro_objects.enabled = t->euro_fingers.enabled = t->euro_blobs.enabled = c->euro_enabled;
	t->euro_objects.min_cutoff_hz = t->euro_fingers.min_cutoff_hz = t->euro_blobs.min_cutoff_hz =
		c->euro_min_cutoff;
	t->euro_objects.beta = t->euro_fingers.beta = t->euro_blobs.beta = c->euro_beta;
	t->euro_objects.d_cutoff_hz = t->euro_fingers.d_cutoff_hz = t->euro_blobs.d_cutoff_hz =
		c->euro_d_cutoff;
	t->calib = calib;
}

/* Outlines are only of use to a TUIO 2.0 target. */
static bool any_tuio2_target(const struct tt_config *c)
{
	for (int i = 0; i < c->n_tuio && i < TUIO_MAX_TARGETS; i++) {
		struct tuio_target tg;
		if (tuio_target_parse(c->tuio[i], &tg) == 0 && tg.tuio2)
			return true;
	}
	return false;
}

void outline_config_from(const struct tt_config *c, struct outline_config *o)
{
	memset(o, 0, sizeof *o);
	o->contours = c->contours && any_tuio2_target(c);
	o->tolerance_px = c->contour_tolerance;
	o->max_points = c->contour_points;
	o->max_contours = c->max_contours;
	o->touch_sharpness = c->touch_sharpness;
	o->hands = c->hands;
	o->finger_size_px = c->finger_size;
}

const char *settings_gpu_backend(const struct tt_config *c)
{
	const char *gpu = c->gpu;
	if (strcmp(gpu, "on") == 0)
		return "cuda";
	if (strcmp(gpu, "off") == 0)
		return "cpu";
	return "auto";
}

void engine_config_from(const struct tt_config *c, const struct tree_set *trees, struct track *tracker, int w,
			int h, struct engine_config *e)
{
	memset(e, 0, sizeof *e);
	e->width = w;
	e->height = h;
	e->backend = settings_gpu_backend(c);
	threshold_config_from(c, w, h, &e->thr);
	e->radius2 = c->radius2;
	e->median2 = c->median2;
	e->mode2 = threshold_mode_of(c->threshold2_mode);
	e->scale3 = strcmp(c->threshold3_mode, "off") != 0;
	e->mode3 = threshold_mode_of(c->threshold3_mode);
	e->mean_scale3 = c->mean_scale3;
	e->radius_small = c->radius_small;
	e->radius_small_check = c->radius_small_check;
	e->check3 = c->check3;
	e->check1 = c->check1;
	e->radius_up = c->radius_up;
	e->gate_up = c->gate_up;
	e->gate_range = c->gate_range;
	e->close_scale3 = c->close_scale3;
	e->close_pct = c->close_pct;
	e->close_dark = c->close_dark;
	e->ratio3 = c->ratio3;
	e->ratio3_large = c->ratio3_large;
	e->close_up = c->close_up;
	e->close_up_pct = c->close_up_pct;
	e->sharp_up = c->sharp_up;
	e->ink_up = c->ink_up;
	e->fine_up = c->fine_up;
	e->rectify_up = c->rectify_up;
	e->mean_up = c->mean_up;
	e->sauvola_up = c->sauvola_up;
	e->encode_up = c->encode_up;
	e->sharpen_up = c->sharpen_up;
	e->deblur3 = c->deblur3;
	e->defocus3 = c->defocus3;
	e->deblur3_high = c->deblur3_high;
	e->deblur3_pct = c->deblur3_pct;
	e->deblur3_bias = c->deblur3_bias;
	e->segment_threads = c->segment_threads;
	e->segment_backend = strcmp(c->segment_backend, "gpu") == 0   ? ENGINE_SEGMENT_GPU
			     : strcmp(c->segment_backend, "cpu") == 0 ? ENGINE_SEGMENT_CPU
								      : ENGINE_SEGMENT_AUTO;
	e->max_runs = c->max_runs;
	e->max_regions = c->max_regions;
	match_config_from(c, trees, w, h, &e->match);
	outline_config_from(c, &e->outline);
	e->tracker = tracker;
	e->max_detections = SETTINGS_MAX_DETECTIONS;
}

int tuio_config_from(const struct tt_config *c, struct tuio_config *t)
{
	memset(t, 0, sizeof *t);
	for (int i = 0; i < c->n_tuio && i < TUIO_MAX_TARGETS; i++) {
		/* tuio_target_parse names the target and what is wrong with it. */
		if (tuio_target_parse(c->tuio[i], &t->targets[i]) != 0)
			return ERR_CONFIG;
		t->n_targets++;
	}
	if (t->n_targets == 0)
		tuio_target_parse("udp:127.0.0.1:3333", &t->targets[t->n_targets++]);
	snprintf(t->source_name, sizeof t->source_name, "%s", c->source_name);
	t->max_datagram = c->max_datagram;
	t->refresh_ms = c->refresh_ms;
	t->max_clients = c->max_clients;
	t->clients_per_address = c->clients_per_address;
	t->send_cursors = true;
	t->send_blobs = true;
	t->send_contours = c->contours;
	if (c->objects[0]) {
		t->object_id_min = c->object_id_min;
		t->object_id_max = c->object_id_max;
		t->object_type_id = c->object_type_id;
	} else {
		t->object_id_min = 1;
		t->object_id_max = 0;
	}
	return 0;
}

void capture_config_from(const struct tt_config *c, struct capture_config *cc)
{
	memset(cc, 0, sizeof *cc);
	snprintf(cc->source, sizeof cc->source, "%s", c->source);
	cc->loop = !c->once && c->loop;
	cc->width = c->width;
	cc->height = c->height;
	cc->fps = c->fps;
	cc->n_buffers = c->n_buffers;
	snprintf(cc->format, sizeof cc->format, "%s", c->format);
	snprintf(cc->controls, sizeof cc->controls, "%s", c->controls);
}

bool settings_source_is_demo(const char *source)
{
	size_t n = strlen(source);
	if (strncmp(source, "demo", 4) == 0)
		return true;
	return strncmp(source, "faulty:", 7) == 0 && n >= 5 && strcmp(source + n - 5, ":demo") == 0;
}

void settings_choose_source(struct tt_config *c)
{
	if (c->source[0])
		return;
	if (access("/dev/video0", R_OK | W_OK) == 0) {
		snprintf(c->source, sizeof c->source, "v4l2:/dev/video0");
		log_info("source: camera /dev/video0 (use --source demo for the built-in scene)");
	} else {
		snprintf(c->source, sizeof c->source, "demo");
		log_info("source: built-in demo scene (no camera at /dev/video0)");
	}
}

/* verbose and quiet are live keys: a reload or the window changes the level
 * at once. The change itself is logged at the more talkative of the two
 * levels, so it is seen both ways. */
void settings_apply_log_level(const struct tt_config *c)
{
	enum log_level want = c->verbose ? LOG_DEBUG : c->quiet ? LOG_WARN : LOG_INFO;
	enum log_level was = log_get_level();
	if (want == was)
		return;
	if (want > was)
		log_set_level(want);
	log_info("log level %s (was %s)", log_level_name(want), log_level_name(was));
	log_set_level(want);
}

struct reload {
	struct tt_config *running;
	int n_live, n_restart;
};

static void reload_live(const struct config_option *o, const char *was, const char *now, void *ctx)
{
	struct reload *r = ctx;
	if (config_set(r->running, o->name, now) == 0) {
		log_info("SIGHUP: %s = %s (was %s)", o->name, now, was);
		r->n_live++;
	}
}

static void reload_restart(const struct config_option *o, const char *was, const char *now, void *ctx)
{
	struct reload *r = ctx;
	char running[CONFIG_PATH_LEN];
	if (config_get(r->running, o->name, running, sizeof running))
		running[0] = 0;
	log_warn("SIGHUP: %s changed ('%s' -> '%s'): needs a restart, keeping '%s'", o->name, was, now, running);
	r->n_restart++;
}

bool settings_reload_read(const struct tt_config *running, int argc, char **argv, struct tt_config *next)
{
	if (!running->config_path[0]) {
		log_info("SIGHUP: no config file to reload (start with --config FILE)");
		return false;
	}
	log_debug("SIGHUP: reading %s", running->config_path);
	config_defaults(next);
	if (config_parse_args(next, argc, argv) != 0) {
		log_error("SIGHUP: %s has errors (above); keeping the running configuration", running->config_path);
		return false;
	}
	return true;
}

void settings_reload_apply(struct tt_config *running, const struct tt_config *given, struct tt_config *next)
{
	if (settings_source_is_demo(running->source) && next->finger_size == 0)
		next->finger_size = running->finger_size; /* the demo's default, as at start */
	/* Live keys against the running value; the others against what the file
	 * and command line said at start, not the running value, which the
	 * pipeline may have filled in (an empty source). */
	struct reload r = {.running = running};
	config_diff(running, next, CONFIG_DIFF_LIVE, reload_live, &r);
	config_diff(given, next, CONFIG_DIFF_RESTART, reload_restart, &r);
	/* quiet and verbose take effect before the closing line, so quiet = true
	 * already silences it. */
	settings_apply_log_level(running);
	log_info("SIGHUP: configuration reloaded from %s (%d live key%s changed, %d need%s a restart)",
		 running->config_path, r.n_live, r.n_live == 1 ? "" : "s", r.n_restart, r.n_restart == 1 ? "s" : "");
}

struct save {
	struct tt_config *saved;
	const struct tt_config *given, *files;
};

static void save_live(const struct config_option *o, const char *was, const char *now, void *ctx)
{
	(void)was;
	struct save *s = ctx;
	config_set(s->saved, o->name, now);
}

static bool same_value(const struct tt_config *a, const struct tt_config *b, const char *key)
{
	char va[CONFIG_PATH_LEN * 2], vb[CONFIG_PATH_LEN * 2];
	if (config_get(a, key, va, sizeof va) || config_get(b, key, vb, sizeof vb))
		return false;
	return strcmp(va, vb) == 0;
}

static bool save_from_command_line(const struct config_option *o, void *ctx)
{
	const struct save *s = ctx;
	return !same_value(s->given, s->files, o->name) && same_value(s->saved, s->given, o->name);
}

int settings_save_config(struct tt_config *running, const struct tt_config *given, const struct tt_config *files)
{
	struct tt_config *saved = malloc(sizeof *saved);
	if (!saved) {
		log_error("cannot save the configuration: out of memory");
		return ERR_NOMEM;
	}
	*saved = *given;
	snprintf(saved->config_path, sizeof saved->config_path, "%s", running->config_path);
	struct save s = {.saved = saved, .given = given, .files = files};
	config_diff(saved, running, CONFIG_DIFF_LIVE, save_live, &s);
	int err = config_save_marked(saved, save_from_command_line, &s,
				     "given on the command line for that run, not saved; the file's own value follows", files);
	if (!err && !running->config_path[0])
		snprintf(running->config_path, sizeof running->config_path, "%s", saved->config_path);
	free(saved);
	return err;
}
