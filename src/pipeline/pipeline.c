#include "pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../capture/capture.h"
#include "../core/clock.h"
#include "../core/detect.h"
#include "../core/err.h"
#include "../core/image_io.h"
#include "../core/log.h"
#include "../core/ring.h"
#include "../core/snapshot.h"
#include "../fiducial/match.h"
#include "../fiducial/trees.h"
#include "../threshold/threshold.h"
#include "../track/calib.h"
#include "../track/track.h"
#include "../tuio/tuio.h"
#include "../ui/ui.h"
#include "demo.h"
#include "engine.h"
#include "service.h"

/* What the main thread's once-a-second summary line and STATUS= show. The
 * pipeline thread fills it under status_lock; the main thread reads only this
 * copy, never the pipeline's own fields, which change every frame. */
struct summary {
	uint64_t fseq;
	float fps;
	int n_objects, n_cursors, n_blobs;
	char ids[160];
	double median_ms;
	char backend[32];
	bool quiet;
};

enum stage { ST_THRESHOLD, ST_SEGMENT, ST_MATCH, ST_TRACK, ST_TUIO, ST_TOTAL, ST_LATENCY, N_STAGES };
static const char *const stage_names[N_STAGES] = {"threshold", "segment", "match", "track",
						  "tuio", "frame total", "capture to TUIO"};

#define MAX_COMMANDS 32
#define DETECTIONS_CAP 1024

struct pipeline {
	struct tt_config cfg;       /* live copy: window and SIGHUP change it */
	struct tt_config cfg_given; /* as given at start: SIGHUP names the non-live keys changed since */
	int argc;                   /* the command line, kept for SIGHUP reloads (borrowed) */
	char **argv;
	struct tree_set *trees;
	struct calib_map calib;     /* what the tracker applies (pipeline thread) */
	struct calib_map ui_calib;  /* what the window edits (main thread) */
	struct calib_map pending_calib; /* ui_calib handed over under cmd_lock */
	bool calib_pending;
	char grid_path[CONFIG_PATH_LEN]; /* config_grid_path(): read at start, W writes it */
	struct demo_scene demo;
	struct capture_config cap_cfg;
	struct capture *cap;
	struct tuio *tuio;
	struct track *trk;

	/* Size-dependent stages, rebuilt only when the frame size changes. */
	int width, height;
	struct engine *eng;         /* the per-frame script (engine.h) */
	struct image_u8 dump_img;   /* --dump: the binary image, sized with the stages */
	struct frame once_buf[2];   /* --once: frame N and N+1 when thresholds overlap */

	uint64_t fseq;              /* last processed frame number (TUIO fseq) */
	_Atomic uint64_t bad_frames; /* capture and pipeline threads both count */
	struct timing timing[N_STAGES];
	bool dump_failed;
	bool ready_sent;
	bool paused;
	struct tracked_state last_state;

	/* Live mode. */
	struct ring *ring;
	pthread_t capture_thread;
	bool capture_thread_started;
	atomic_bool stop;
	atomic_bool source_done;
	atomic_bool reload_requested; /* set by the main thread on SIGHUP, served by the pipeline thread */
	char source_status[128];
	struct summary summary;     /* under status_lock */
	int64_t summary_t_ns;       /* pipeline thread: last summary_publish */
	pthread_mutex_t status_lock;

	/* Window: triple-buffered snapshots (pipeline writes back, swaps into
	 * ready; the UI swaps ready into front), commands the other way. */
	struct ui *ui;
	struct snapshot *snaps[3];
	int snap_back, snap_ready, snap_front;
	bool snap_new;
	pthread_mutex_t snap_lock;
	struct ui_command cmds[MAX_COMMANDS];
	int n_cmds;
	pthread_mutex_t cmd_lock;
	float fps;
	int64_t fps_t0;
	uint64_t fps_n0;
};

/* ---- configuration -> stage configs ---------------------------------------------------- */

static void threshold_config_from(const struct tt_config *c, int w, int h, struct threshold_config *t)
{
	memset(t, 0, sizeof *t);
	t->max_width = w;
	t->max_height = h;
	t->mode = strcmp(c->threshold_mode, "tiled") == 0 ? THRESHOLD_TILED : THRESHOLD_BERNSEN;
	t->radius = c->radius;
	t->gate = c->gate;
	t->tile = c->tile;
	t->median = c->median;
	t->gauss_sigma = c->gauss_sigma;
}

static void match_config_from(const struct pipeline *p, int w, int h, struct match_config *m)
{
	const struct tt_config *c = &p->cfg;
	memset(m, 0, sizeof *m);
	m->trees = p->trees;
	m->max_width = w;
	m->max_height = h;
	m->finger_size_px = c->finger_size;
	m->finger_sensitivity = c->finger_sensitivity;
	m->finger_min_contrast = c->finger_contrast;
	m->blob_min_px = c->blob_min;
	m->blob_max_px = c->blob_max;
	/* Root regions worth following through blur: from a small symbol to a
	 * third of the frame. */
	m->root_min_px = 12.0f;
	m->root_max_px = (float)(w < h ? w : h) / 2.0f;
}

static void track_config_from(const struct pipeline *p, struct track_config *t)
{
	const struct tt_config *c = &p->cfg;
	memset(t, 0, sizeof *t);
	t->max_items = DETECTIONS_CAP;
	t->linger_frames = c->linger_frames;
	t->dead_band_px = c->dead_band_px;
	t->dead_band_rad = c->dead_band_deg * 3.14159265f / 180.0f;
	t->invert_x = c->invert_x;
	t->invert_y = c->invert_y;
	t->invert_angle = c->invert_angle;
	t->blobs_for_objects = c->object_blobs;
	t->blobs_for_fingers = c->finger_blobs;
	t->euro_objects.enabled = t->euro_fingers.enabled = t->euro_blobs.enabled = c->euro_enabled;
	t->euro_objects.min_cutoff_hz = t->euro_fingers.min_cutoff_hz = t->euro_blobs.min_cutoff_hz =
		c->euro_min_cutoff;
	t->euro_objects.beta = t->euro_fingers.beta = t->euro_blobs.beta = c->euro_beta;
	t->euro_objects.d_cutoff_hz = t->euro_fingers.d_cutoff_hz = t->euro_blobs.d_cutoff_hz =
		c->euro_d_cutoff;
	t->calib = &p->calib;
}

static const char *threshold_backend_for(const char *gpu)
{
	if (strcmp(gpu, "on") == 0)
		return "cuda";
	if (strcmp(gpu, "off") == 0)
		return "cpu";
	return "auto";
}

/* ---- size-dependent stages ------------------------------------------------------------- */

static void stages_free(struct pipeline *p)
{
	engine_destroy(p->eng);
	p->eng = NULL;
	image_u8_free(&p->dump_img);
	p->width = p->height = 0;
}

/* Sizes the window's snapshot images (only when a window is up). */
static int snapshots_size(struct pipeline *p, int w, int h)
{
	for (int i = 0; i < 3; i++) {
		if (!p->snaps[i])
			continue;
		image_u8_free(&p->snaps[i]->grey);
		image_u8_free(&p->snaps[i]->binary);
		if (image_u8_alloc(&p->snaps[i]->grey, w, h) || image_u8_alloc(&p->snaps[i]->binary, w, h))
			return ERR_NOMEM;
	}
	return 0;
}

static void engine_config_from(const struct pipeline *p, int w, int h, struct engine_config *e)
{
	memset(e, 0, sizeof *e);
	e->width = w;
	e->height = h;
	e->backend = threshold_backend_for(p->cfg.gpu);
	threshold_config_from(&p->cfg, w, h, &e->thr);
	e->radius2 = p->cfg.radius2;
	e->median2 = p->cfg.median2;
	e->segment_threads = p->cfg.segment_threads;
	match_config_from(p, w, h, &e->match);
	e->tracker = p->trk;
	e->max_detections = DETECTIONS_CAP;
}

static int stages_ensure_size(struct pipeline *p, int w, int h)
{
	if (w == p->width && h == p->height)
		return 0;
	if (p->width)
		log_info("frame size changed from %dx%d to %dx%d: resizing the stages", p->width,
			 p->height, w, h);
	stages_free(p);
	int err = 0;
	struct engine_config ec;
	engine_config_from(p, w, h, &ec);
	p->eng = engine_create(&ec, &err);
	if (!p->eng) {
		if (err == ERR_UNSUPPORTED)
			log_error("--gpu on: no usable GPU path (see the line above); use --gpu auto or off");
		goto fail;
	}
	p->width = w;
	p->height = h;
	err = snapshots_size(p, w, h);
	if (!err && p->cfg.dump[0])
		err = image_u8_alloc(&p->dump_img, w, h);
	if (err)
		goto fail;
	/* Frames come from the ring's slots (live) or the double buffer
	 * (--once): page-locked once, the GPU reads them without a staging copy. */
	void *data;
	size_t bytes;
	for (int i = 0; p->ring && ring_slot_buffer(p->ring, i, &data, &bytes) == 0; i++)
		engine_register_buffer(p->eng, data, bytes);
	for (int i = 0; i < 2; i++)
		if (p->once_buf[i].img.data)
			engine_register_buffer(p->eng, p->once_buf[i].img.data,
					       (size_t)p->once_buf[i].img.stride * (size_t)p->once_buf[i].img.height);
	return 0;
fail:
	log_error("cannot set up the stages for %dx%d frames: %s", w, h, err_str(err));
	stages_free(p);
	return err ? err : ERR_NOMEM;
}

/* ---- per-frame script ------------------------------------------------------------------ */

static void dump_frame(struct pipeline *p, const struct frame *f, const struct tracked_state *st)
{
	char path[CONFIG_PATH_LEN + 64];
	if (!p->dump_img.data)
		return;
	bitmask_to_image(engine_mask(p->eng), &p->dump_img);
	snprintf(path, sizeof path, "%s/%06llu-binary.png", p->cfg.dump, (unsigned long long)p->fseq);
	int err = image_write(path, &p->dump_img);
	FILE *out = NULL;
	if (!err) {
		snprintf(path, sizeof path, "%s/%06llu-detections.txt", p->cfg.dump,
			 (unsigned long long)p->fseq);
		out = fopen(path, "w");
		err = out ? 0 : ERR_IO;
	}
	if (out) {
		const struct detections *d = engine_detections(p->eng);
		fprintf(out, "# frame %llu source %s size %dx%d\n", (unsigned long long)p->fseq, f->name,
			p->width, p->height);
		for (int i = 0; i < d->n_fids; i++)
			fprintf(out, "fiducial id=%d x=%.3f y=%.3f angle=%.5f size=%.1f\n", d->fids[i].id,
				d->fids[i].x, d->fids[i].y, d->fids[i].angle, d->fids[i].size_px);
		for (int i = 0; i < d->n_fuzzy; i++)
			fprintf(out, "fuzzy x=%.3f y=%.3f size=%.1f\n", d->fuzzy[i].x, d->fuzzy[i].y,
				d->fuzzy[i].size_px);
		for (int i = 0; i < d->n_fingers; i++)
			fprintf(out, "finger x=%.3f y=%.3f d=%.1f round=%.2f contrast=%.0f\n",
				d->fingers[i].x, d->fingers[i].y, d->fingers[i].diameter_px,
				d->fingers[i].roundness, d->fingers[i].contrast);
		for (int i = 0; i < d->n_blobs; i++)
			fprintf(out, "blob x=%.3f y=%.3f w=%.1f h=%.1f angle=%.4f area=%.0f\n", d->blobs[i].x,
				d->blobs[i].y, d->blobs[i].w, d->blobs[i].h, d->blobs[i].angle,
				d->blobs[i].area_px);
		for (int i = 0; i < st->n_objects; i++)
			fprintf(out, "object session=%u id=%d x=%.5f y=%.5f angle=%.5f how=%d\n",
				st->objects[i].session_id, st->objects[i].class_id, st->objects[i].x,
				st->objects[i].y, st->objects[i].angle, st->objects[i].how);
		if (fclose(out) != 0)
			err = ERR_IO;
	}
	if (err) {
		/* Disk full or a vanished folder must not stop tracking. */
		log_once(&p->dump_failed, LOG_WARN, "--dump %s: cannot write (%s): dumping stops, tracking goes on",
			 p->cfg.dump, strerror(errno));
	}
}

static void snapshot_publish(struct pipeline *p, const struct frame *f, const struct tracked_state *st)
{
	struct snapshot *s = p->snaps[p->snap_back];
	s->frame = p->fseq;
	image_u8_copy(&s->grey, &f->img);
	bitmask_to_image(engine_mask(p->eng), &s->binary);
	s->n_objects = st->n_objects < SNAPSHOT_MAX_ITEMS ? st->n_objects : SNAPSHOT_MAX_ITEMS;
	s->n_cursors = st->n_cursors < SNAPSHOT_MAX_ITEMS ? st->n_cursors : SNAPSHOT_MAX_ITEMS;
	s->n_blobs = st->n_blobs < SNAPSHOT_MAX_ITEMS ? st->n_blobs : SNAPSHOT_MAX_ITEMS;
	memcpy(s->objects, st->objects, (size_t)s->n_objects * sizeof *s->objects);
	memcpy(s->cursors, st->cursors, (size_t)s->n_cursors * sizeof *s->cursors);
	memcpy(s->blobs, st->blobs, (size_t)s->n_blobs * sizeof *s->blobs);
	const struct detections *det = engine_detections(p->eng);
	s->n_fids = det->n_fids < SNAPSHOT_MAX_ITEMS ? det->n_fids : SNAPSHOT_MAX_ITEMS;
	memcpy(s->fids, det->fids, (size_t)s->n_fids * sizeof *s->fids);
	s->fps = p->fps;
	for (int i = 0; i < 6; i++)
		s->stage_ms[i] = (float)p->timing[i].samples[(p->timing[i].n_total + TIMING_SAMPLES - 1) %
							       TIMING_SAMPLES] / 1e6f;
	s->dropped_frames = p->ring ? ring_dropped(p->ring) : 0;
	s->bad_frames = p->bad_frames;
	snprintf(s->backend, sizeof s->backend, "%s", engine_backend(p->eng));
	pthread_mutex_lock(&p->status_lock);
	snprintf(s->status, sizeof s->status, "%s", p->source_status);
	pthread_mutex_unlock(&p->status_lock);
	s->radius = p->cfg.radius;
	s->gate = p->cfg.gate;
	s->threshold_mode = strcmp(p->cfg.threshold_mode, "tiled") == 0;
	s->median = p->cfg.median;
	s->radius2 = p->cfg.radius2;
	s->median2 = p->cfg.median2;
	s->finger_size = p->cfg.finger_size;
	s->finger_sensitivity = p->cfg.finger_sensitivity;
	s->blob_min = p->cfg.blob_min;
	s->blob_max = p->cfg.blob_max;
	s->invert_x = p->cfg.invert_x;
	s->invert_y = p->cfg.invert_y;
	s->invert_angle = p->cfg.invert_angle;
	s->paused = p->paused;

	pthread_mutex_lock(&p->snap_lock);
	int t = p->snap_ready;
	p->snap_ready = p->snap_back;
	p->snap_back = t;
	p->snap_new = true;
	pthread_mutex_unlock(&p->snap_lock);
}

static void update_fps(struct pipeline *p, int64_t now)
{
	if (!p->fps_t0) {
		p->fps_t0 = now;
		p->fps_n0 = p->fseq;
		return;
	}
	int64_t dt = now - p->fps_t0;
	if (dt >= 1000000000LL) {
		p->fps = (float)((double)(p->fseq - p->fps_n0) * 1e9 / (double)dt);
		p->fps_t0 = now;
		p->fps_n0 = p->fseq;
	}
}

/* One frame is the engine's numbered script (1 threshold, 2 segment, 3 match,
 * 4 track), then 5 TUIO and 6 what is shown. Errors are for a frame that
 * could not be processed (it is counted and skipped). */
/* 1. Starts the threshold of frame f (asynchronous on the GPU). */
static int frame_start(struct pipeline *p, const struct frame *f)
{
	int err = stages_ensure_size(p, f->img.width, f->img.height);
	if (!err)
		err = engine_submit(p->eng, &f->img);
	return err;
}

/* The rest of frame f, started by frame_start. When `next` is given (a
 * frame already waiting), its threshold is started as soon as f's masks are
 * in, so the GPU works on it while the CPU segments f. */
static int frame_finish(struct pipeline *p, const struct frame *f, const struct frame *next)
{
	int err = engine_collect(p->eng);
	if (next && next->img.width == p->width && next->img.height == p->height)
		engine_submit(p->eng, &next->img);
	if (err)
		return err;

	/* 2-4. segment, match, track */
	struct tracked_state st;
	err = engine_finish(p->eng, &f->img, p->fseq + 1, f->t_capture_ns, &st);
	if (err)
		return err;
	p->fseq++;
	int64_t t4 = clock_now_ns();

	/* 5. tuio: a send failure is the network's problem, logged once by the sender. */
	tuio_send_frame(p->tuio, &st);
	int64_t t5 = clock_now_ns();

	/* 6. show */
	const struct engine_times *et = engine_times(p->eng);
	timing_add(&p->timing[ST_THRESHOLD], et->ns[ENGINE_THRESHOLD]);
	timing_add(&p->timing[ST_SEGMENT], et->ns[ENGINE_SEGMENT]);
	timing_add(&p->timing[ST_MATCH], et->ns[ENGINE_MATCH]);
	timing_add(&p->timing[ST_TRACK], et->ns[ENGINE_TRACK]);
	timing_add(&p->timing[ST_TUIO], t5 - t4);
	int64_t total = t5 - t4;
	for (int i = 0; i < ENGINE_N_STAGES; i++)
		total += et->ns[i];
	timing_add(&p->timing[ST_TOTAL], total);
	if (f->t_capture_ns > 0 && t5 > f->t_capture_ns)
		timing_add(&p->timing[ST_LATENCY], t5 - f->t_capture_ns);
	p->last_state = st;
	if (p->cfg.dump[0] && !p->dump_failed)
		dump_frame(p, f, &st);
	if (p->ui)
		snapshot_publish(p, f, &st);
	update_fps(p, t5);
	if (!p->ready_sent) {
		service_notify_ready();
		p->ready_sent = true;
	}
	service_notify_watchdog(t5);
	return 0;
}

static int pipeline_process_frame(struct pipeline *p, const struct frame *f)
{
	int err = frame_start(p, f);
	return err ? err : frame_finish(p, f, NULL);
}

static void count_bad_frame(struct pipeline *p, const struct frame *f, int err)
{
	p->bad_frames++;
	log_warn("frame %s skipped: %s", f && f->name[0] ? f->name : "?", err_str(err));
}

/* ---- live tuning ----------------------------------------------------------------------- */

/* verbose and quiet are live keys: a reload or the window changes the level
 * at once. The change itself is logged at the more talkative of the two
 * levels, so it is seen both ways. */
static void apply_log_level(const struct tt_config *c)
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

static void apply_live_config(struct pipeline *p)
{
	apply_log_level(&p->cfg);
	if (p->eng) {
		struct engine_config ec;
		engine_config_from(p, p->width, p->height, &ec);
		if (engine_set_config(p->eng, &ec))
			log_warn("threshold or matcher settings not fully applied");
	}
	struct track_config tk;
	track_config_from(p, &tk);
	track_set_config(p->trk, &tk);
}

static void apply_command(struct pipeline *p, const struct ui_command *c)
{
	switch (c->kind) {
	case UI_CMD_QUIT:
		atomic_store(&p->stop, true);
		break;
	case UI_CMD_SET: {
		struct tt_config next = p->cfg;
		if (config_set(&next, c->key, c->value) == 0) {
			p->cfg = next;
			apply_live_config(p);
			log_info("%s = %s", c->key, c->value);
		}
		break;
	}
	case UI_CMD_RESET_TRACKING:
		track_reset(p->trk);
		break;
	case UI_CMD_PAUSE:
		p->paused = !p->paused;
		break;
	case UI_CMD_GRID_CHANGED:
		pthread_mutex_lock(&p->cmd_lock);
		if (p->calib_pending)
			p->calib = p->pending_calib;
		p->calib_pending = false;
		pthread_mutex_unlock(&p->cmd_lock);
		apply_live_config(p);
		break;
	case UI_CMD_SAVE_CONFIG:
		config_save(&p->cfg);
		break;
	case UI_CMD_EQUALIZE:
		/* Takes the next frame as the empty table: clear it first. */
		if (p->eng)
			engine_equalize(p->eng, true);
		break;
	case UI_CMD_EQUALIZE_RESET:
		if (p->eng)
			engine_equalize(p->eng, false);
		log_info("equaliser off");
		break;
	}
}

static void queue_command(struct pipeline *p, const struct ui_command *c)
{
	pthread_mutex_lock(&p->cmd_lock);
	if (p->n_cmds < MAX_COMMANDS)
		p->cmds[p->n_cmds++] = *c;
	pthread_mutex_unlock(&p->cmd_lock);
}

static void drain_commands(struct pipeline *p)
{
	struct ui_command local[MAX_COMMANDS];
	pthread_mutex_lock(&p->cmd_lock);
	int n = p->n_cmds;
	memcpy(local, p->cmds, (size_t)n * sizeof *local);
	p->n_cmds = 0;
	pthread_mutex_unlock(&p->cmd_lock);
	for (int i = 0; i < n; i++)
		apply_command(p, &local[i]);
}

/* The demo, also under fault injection (faulty:KEYS:demo), gets the symbol
 * sprites and its finger size. */
static bool source_is_demo(const char *source)
{
	size_t n = strlen(source);
	if (strncmp(source, "demo", 4) == 0)
		return true;
	return strncmp(source, "faulty:", 7) == 0 && n >= 5 && strcmp(source + n - 5, ":demo") == 0;
}

/* SIGHUP: re-read the config file; apply what can change live, name the rest. */
static void reload_config(struct pipeline *p)
{
	struct tt_config next;
	if (!p->cfg.config_path[0]) {
		log_info("SIGHUP: no config file to reload (start with --config FILE)");
		return;
	}
	log_debug("SIGHUP: reading %s", p->cfg.config_path);
	/* Defaults, then the file, then the original command line again, so
	 * options given on the command line keep winning over the file. */
	config_defaults(&next);
	if (config_parse_args(&next, p->argc, p->argv) != 0) {
		log_error("SIGHUP: %s has errors (above); keeping the running configuration",
			  p->cfg.config_path);
		return;
	}
	/* Live keys are set one by one, so the bytes of the others (read by the
	 * capture thread) are never rewritten. A non-live key is compared with
	 * what the file and command line said at start, not with the running
	 * value, which the pipeline may have filled in (an empty source). */
	int n_live = 0, n_restart = 0;
	if (source_is_demo(p->cfg.source) && next.finger_size == 0)
		next.finger_size = p->cfg.finger_size; /* the demo's default, as at start */
	for (int i = 0; config_option_at(i); i++) {
		const struct config_option *o = config_option_at(i);
		char was[CONFIG_PATH_LEN], now[CONFIG_PATH_LEN];
		if (o->live) {
			if (config_get(&p->cfg, o->name, was, sizeof was) ||
			    config_get(&next, o->name, now, sizeof now) || strcmp(was, now) == 0)
				continue;
			if (config_set(&p->cfg, o->name, now) == 0) {
				log_info("SIGHUP: %s = %s (was %s)", o->name, now, was);
				n_live++;
			}
		} else if (config_get(&p->cfg_given, o->name, was, sizeof was) == 0 &&
			   config_get(&next, o->name, now, sizeof now) == 0 && strcmp(was, now) != 0) {
			char running[CONFIG_PATH_LEN];
			if (config_get(&p->cfg, o->name, running, sizeof running))
				running[0] = 0;
			log_warn("SIGHUP: %s changed ('%s' -> '%s'): needs a restart, keeping '%s'",
				 o->name, was, now, running);
			n_restart++;
		}
	}
	apply_live_config(p);
	log_info("SIGHUP: configuration reloaded from %s (%d live key%s changed, %d need%s a restart)",
		 p->cfg.config_path, n_live, n_live == 1 ? "" : "s", n_restart, n_restart == 1 ? "s" : "");
}

/* ---- capture thread -------------------------------------------------------------------- */

static void set_status(struct pipeline *p, const char *text)
{
	pthread_mutex_lock(&p->status_lock);
	snprintf(p->source_status, sizeof p->source_status, "%s", text);
	pthread_mutex_unlock(&p->status_lock);
}

static void *capture_main(void *arg)
{
	struct pipeline *p = arg;
	bool lost_logged = false;
	int64_t backoff_ns = 250000000LL;
	int pace = capture_pace_fps(p->cfg.fps);
	int64_t period_ns = pace > 0 ? 1000000000LL / pace : 0;
	int64_t next_ns = clock_now_ns();
	bool paced = !p->cap || strncmp(p->cfg.source, "v4l2:", 5) != 0;

	while (!atomic_load(&p->stop)) {
		if (!p->cap) {
			int err = 0;
			p->cap = capture_open(&p->cap_cfg, &err);
			if (!p->cap) {
				clock_sleep_ns(backoff_ns);
				if (backoff_ns < 4000000000LL)
					backoff_ns *= 2;
				continue;
			}
			log_once_reset(&lost_logged, "source %s is back", p->cfg.source);
			set_status(p, "");
			backoff_ns = 250000000LL;
		}
		struct frame *f = NULL;
		int err = capture_read(p->cap, &f);
		if (err == ERR_EOF) {
			atomic_store(&p->source_done, true);
			break;
		}
		if (err == ERR_AGAIN)
			continue;
		if (err == ERR_DEVICE) {
			log_once(&lost_logged, LOG_WARN, "source %s lost: retrying with back-off",
				 p->cfg.source);
			set_status(p, "camera lost, retrying");
			capture_close(p->cap);
			p->cap = NULL;
			continue;
		}
		if (err) {
			p->bad_frames++;
			continue;
		}
		struct frame *slot = ring_acquire_write(p->ring);
		if (!slot)
			break;
		if (slot->img.width != f->img.width || slot->img.height != f->img.height) {
			/* Slots are sized for the first frame; a camera that comes back
			 * larger gets new slots only through a restart. */
			if (f->img.width * f->img.height > slot->img.stride * slot->img.height) {
				p->bad_frames++;
				continue;
			}
			slot->img.width = f->img.width;
			slot->img.height = f->img.height;
			slot->img.stride = f->img.width;
		}
		image_u8_copy(&slot->img, &f->img);
		slot->seq = f->seq;
		slot->t_capture_ns = f->t_capture_ns ? f->t_capture_ns : clock_now_ns();
		memcpy(slot->name, f->name, sizeof slot->name);
		ring_publish(p->ring);
		if (paced && period_ns) {
			next_ns += period_ns;
			int64_t now = clock_now_ns();
			if (next_ns < now)
				next_ns = now;
			clock_sleep_ns(next_ns - now);
		}
	}
	ring_close(p->ring);
	return NULL;
}

/* Pipeline thread (or before the threads start). */
static void summary_publish(struct pipeline *p)
{
	const struct tracked_state *st = &p->last_state;
	struct summary s;
	memset(&s, 0, sizeof s);
	int n = 0;
	for (int i = 0; i < st->n_objects && n < (int)sizeof s.ids - 12; i++)
		n += snprintf(s.ids + n, sizeof s.ids - (size_t)n, "%s%d", i ? "," : "", st->objects[i].class_id);
	/* The last 64 frames: no allocation or full sort on the frame thread. */
	int64_t med = timing_recent_median(&p->timing[ST_TOTAL], TIMING_RECENT_MAX);
	s.fseq = p->fseq;
	s.fps = p->fps;
	s.n_objects = st->n_objects;
	s.n_cursors = st->n_cursors;
	s.n_blobs = st->n_blobs;
	s.median_ms = (double)med / 1e6;
	snprintf(s.backend, sizeof s.backend, "%s", p->eng ? engine_backend(p->eng) : "-");
	s.quiet = p->cfg.quiet;
	pthread_mutex_lock(&p->status_lock);
	p->summary = s;
	pthread_mutex_unlock(&p->status_lock);
	p->summary_t_ns = clock_now_ns();
}

/* ---- pipeline thread ------------------------------------------------------------------- */

static void *pipeline_main(void *arg)
{
	struct pipeline *p = arg;
	int64_t last_frame_ns = clock_now_ns(), last_keepalive_ns = 0;
	while (!atomic_load(&p->stop)) {
		drain_commands(p);
		if (atomic_exchange(&p->reload_requested, false)) {
			reload_config(p);
			summary_publish(p);
		}
		struct frame *f = ring_take(p->ring, 100);
		if (!f) {
			if (ring_is_closed(p->ring))
				break;
			/* Accept TCP/WebSocket clients even while no frames come. */
			tuio_service(p->tuio);
			int64_t now = clock_now_ns();
			/* No frames: keep clients' state fresh with redundant bundles. */
			if (now - last_frame_ns > 1000000000LL && now - last_keepalive_ns > 1000000000LL) {
				struct tracked_state st = p->last_state;
				st.frame = UINT64_MAX; /* fseq -1: a redundant bundle */
				if (p->width)
					tuio_send_frame(p->tuio, &st);
				last_keepalive_ns = now;
			}
			continue;
		}
		if (!p->paused) {
			int err = pipeline_process_frame(p, f);
			if (err)
				count_bad_frame(p, f, err);
		}
		ring_release(p->ring);
		last_frame_ns = clock_now_ns();
		if (last_frame_ns - p->summary_t_ns >= 500000000LL)
			summary_publish(p);
	}
	atomic_store(&p->stop, true);
	return NULL;
}

/* ---- run ------------------------------------------------------------------------------- */

/* Reads the next frame of a --once source; NULL at the end or on a fatal
 * source error (*rc set). Bad frames are counted and skipped. */
static const struct frame *once_read(struct pipeline *p, int *rc)
{
	for (;;) {
		if (service_should_stop())
			return NULL;
		struct frame *f = NULL;
		int err = capture_read(p->cap, &f);
		if (err == ERR_EOF)
			return NULL;
		if (err == ERR_AGAIN)
			continue;
		if (err == ERR_DEVICE) {
			log_error("source %s failed: %s", p->cfg.source, err_str(err));
			*rc = 1;
			return NULL;
		}
		if (err) {
			p->bad_frames++;
			continue;
		}
		return f;
	}
}

/* Copies f into once_buf[k] (reallocated, and registered with the GPU
 * stage, only when the frame size changes). */
static const struct frame *once_keep(struct pipeline *p, int k, const struct frame *f)
{
	struct frame *b = &p->once_buf[k];
	if (b->img.width != f->img.width || b->img.height != f->img.height) {
		image_u8_free(&b->img);
		if (image_u8_alloc(&b->img, f->img.width, f->img.height))
			return NULL;
		if (p->eng && f->img.width == p->width && f->img.height == p->height)
			engine_register_buffer(p->eng, b->img.data, (size_t)b->img.stride * (size_t)b->img.height);
	}
	image_u8_copy(&b->img, &f->img);
	b->seq = f->seq;
	b->t_capture_ns = f->t_capture_ns ? f->t_capture_ns : clock_now_ns();
	memcpy(b->name, f->name, sizeof b->name);
	return b;
}

/* --once: every frame exactly once, in order. Frame N+1 is read and its
 * threshold started before frame N is segmented, so a GPU thresholds while
 * the CPU works; with the CPU backend this is just sequential. */
static int run_once(struct pipeline *p)
{
	int rc = 0, k = 0;
	const struct frame *src = once_read(p, &rc);
	const struct frame *cur = src ? once_keep(p, k, src) : NULL;
	bool started = cur && frame_start(p, cur) == 0;
	if (cur && !started)
		count_bad_frame(p, cur, ERR_FORMAT);
	while (cur) {
		src = once_read(p, &rc);
		const struct frame *next = src ? once_keep(p, k ^ 1, src) : NULL;
		bool same_size = next && next->img.width == p->width && next->img.height == p->height;
		bool next_submitted = false;
		if (started) {
			int err = frame_finish(p, cur, same_size ? next : NULL);
			if (err)
				count_bad_frame(p, cur, err);
			next_submitted = same_size && p->eng;
		}
		started = next && (next_submitted || frame_start(p, next) == 0);
		if (next && !started)
			count_bad_frame(p, next, ERR_FORMAT);
		cur = next;
		k ^= 1;
	}
	return rc;
}

static void print_summary(struct pipeline *p)
{
	struct summary s;
	char status[sizeof p->source_status];
	pthread_mutex_lock(&p->status_lock);
	s = p->summary;
	memcpy(status, p->source_status, sizeof status);
	pthread_mutex_unlock(&p->status_lock);
	if (!s.quiet) {
		printf("tabletrack: frame %llu  %.1f fps  %d objects [%s]  %d fingers  %d blobs  %.2f ms/frame (%s)%s%s\n",
		       (unsigned long long)s.fseq, s.fps, s.n_objects, s.ids, s.n_cursors, s.n_blobs,
		       s.median_ms, s.backend, status[0] ? "  " : "", status);
		fflush(stdout);
	}
	service_notify_status("%.1f fps, %d objects, %d fingers, %s path%s%s", s.fps, s.n_objects,
			      s.n_cursors, s.backend, status[0] ? ", " : "", status);
}

static int run_live(struct pipeline *p)
{
	int err = 0;
	char config_path[CONFIG_PATH_LEN];
	if (config_save_path(&p->cfg, config_path, sizeof config_path))
		config_path[0] = '\0';
	struct ui_config uc = {.backend = p->cfg.window && !p->cfg.headless ? "sdl" : "none",
			       .width = p->width, .height = p->height, .grid = &p->ui_calib,
			       .grid_path = p->grid_path, .config_path = config_path,
			       .fullscreen = p->cfg.fullscreen};
	p->ui_calib = p->calib;
	p->ui = ui_create(&uc, &err);
	if (!p->ui && strcmp(uc.backend, "sdl") == 0) {
		log_warn("no window (no display?): running headless");
		uc.backend = "none";
		p->ui = ui_create(&uc, &err);
	}
	if (p->ui) {
		for (int i = 0; i < 3; i++) {
			p->snaps[i] = calloc(1, sizeof *p->snaps[i]);
			if (!p->snaps[i])
				return 1;
		}
		p->snap_back = 0;
		p->snap_ready = 1;
		p->snap_front = 2;
		if (snapshots_size(p, p->width, p->height))
			return 1;
	}

	pthread_t pipe_thread;
	if (pthread_create(&p->capture_thread, NULL, capture_main, p) != 0)
		return 1;
	p->capture_thread_started = true;
	if (pthread_create(&pipe_thread, NULL, pipeline_main, p) != 0) {
		atomic_store(&p->stop, true);
		return 1;
	}

	int64_t last_summary = clock_now_ns();
	while (!atomic_load(&p->stop)) {
		if (service_should_stop())
			atomic_store(&p->stop, true);
		if (service_take_reload())
			atomic_store(&p->reload_requested, true);
		struct ui_command cmds[16];
		const struct snapshot *snap = NULL;
		if (p->ui) {
			pthread_mutex_lock(&p->snap_lock);
			if (p->snap_new) {
				int t = p->snap_front;
				p->snap_front = p->snap_ready;
				p->snap_ready = t;
				p->snap_new = false;
			}
			pthread_mutex_unlock(&p->snap_lock);
			snap = p->snaps[p->snap_front];
		}
		int n = p->ui ? ui_poll(p->ui, snap, cmds, 16, 50) : 0;
		if (!p->ui)
			clock_sleep_ns(50000000LL);
		for (int i = 0; i < n; i++) {
			if (cmds[i].kind == UI_CMD_GRID_CHANGED) {
				/* The window edits its own copy; the tracker gets a
				 * snapshot of it, so neither thread reads a half-edited grid. */
				pthread_mutex_lock(&p->cmd_lock);
				p->pending_calib = p->ui_calib;
				p->calib_pending = true;
				pthread_mutex_unlock(&p->cmd_lock);
			}
			queue_command(p, &cmds[i]);
		}
		int64_t now = clock_now_ns();
		if (now - last_summary >= 1000000000LL) {
			print_summary(p);
			last_summary = now;
		}
	}
	atomic_store(&p->stop, true);
	ring_close(p->ring);
	pthread_join(pipe_thread, NULL);
	pthread_join(p->capture_thread, NULL);
	p->capture_thread_started = false;
	return 0;
}

int pipeline_run(struct pipeline *p)
{
	if (p->cfg.once)
		return run_once(p);
	return run_live(p);
}

/* ---- create / destroy ------------------------------------------------------------------ */

static int load_trees(struct pipeline *p)
{
	if (p->cfg.trees[0])
		return tree_set_load(p->cfg.trees, &p->trees);
	return tree_set_parse(tree_set_builtin_text, strlen(tree_set_builtin_text),
			      "built-in set (fiducials/tabletrack.trees)", &p->trees);
}

static int tuio_config_from(const struct tt_config *c, struct tuio_config *t)
{
	memset(t, 0, sizeof *t);
	for (int i = 0; i < c->n_tuio && i < TUIO_MAX_TARGETS; i++) {
		if (tuio_target_parse(c->tuio[i], &t->targets[i]) != 0) {
			log_error("tuio: bad target '%s' (udp:HOST:PORT, tcp:HOST:PORT, tcp:listen:ADDR:PORT, ws:listen:ADDR:PORT)",
				  c->tuio[i]);
			return ERR_CONFIG;
		}
		t->n_targets++;
	}
	if (t->n_targets == 0)
		tuio_target_parse("udp:127.0.0.1:3333", &t->targets[t->n_targets++]);
	snprintf(t->source_name, sizeof t->source_name, "%s", c->source_name);
	t->max_datagram = c->max_datagram;
	t->refresh_ms = c->refresh_ms;
	t->send_cursors = true;
	t->send_blobs = true;
	return 0;
}

static void choose_source(struct pipeline *p)
{
	if (p->cfg.source[0])
		return;
	if (access("/dev/video0", R_OK | W_OK) == 0) {
		snprintf(p->cfg.source, sizeof p->cfg.source, "v4l2:/dev/video0");
		log_info("source: camera /dev/video0 (use --source demo for the built-in scene)");
	} else {
		snprintf(p->cfg.source, sizeof p->cfg.source, "demo");
		log_info("source: built-in demo scene (no camera at /dev/video0)");
	}
}

struct pipeline *pipeline_create(const struct tt_config *cfg, int argc, char **argv, int *err)
{
	struct pipeline *p = calloc(1, sizeof *p);
	if (!p) {
		*err = ERR_NOMEM;
		return NULL;
	}
	p->cfg = *cfg;
	p->cfg_given = *cfg;
	p->argc = argc;
	p->argv = argv;
	pthread_mutex_init(&p->snap_lock, NULL);
	pthread_mutex_init(&p->cmd_lock, NULL);
	pthread_mutex_init(&p->status_lock, NULL);
	atomic_init(&p->stop, false);
	atomic_init(&p->source_done, false);
	atomic_init(&p->reload_requested, false);

	*err = load_trees(p);
	if (*err)
		goto fail;
	log_info("%d symbols from %s", tree_set_count(p->trees), p->cfg.trees[0] ? p->cfg.trees : "the built-in set");

	calib_map_identity(&p->calib, 9, 7);
	if (config_grid_path(&p->cfg, p->grid_path, sizeof p->grid_path))
		p->grid_path[0] = '\0';
	if (p->grid_path[0] && access(p->grid_path, R_OK) == 0) {
		*err = calib_map_load(&p->calib, p->grid_path);
		if (*err)
			goto fail;
		log_info("calibration grid from %s%s", p->grid_path,
			 p->cfg.grid[0] ? "" : " (the default; grid = FILE names another)");
	}

	struct tuio_config tc;
	*err = tuio_config_from(&p->cfg, &tc);
	if (*err)
		goto fail;
	p->tuio = tuio_create(&tc, err);
	if (!p->tuio)
		goto fail;

	struct track_config tk;
	track_config_from(p, &tk);
	p->trk = track_create(&tk, err);
	if (!p->trk)
		goto fail;

	choose_source(p);
	memset(&p->cap_cfg, 0, sizeof p->cap_cfg);
	snprintf(p->cap_cfg.source, sizeof p->cap_cfg.source, "%s", p->cfg.source);
	p->cap_cfg.loop = !p->cfg.once && p->cfg.loop;
	p->cap_cfg.width = p->cfg.width;
	p->cap_cfg.height = p->cfg.height;
	p->cap_cfg.fps = p->cfg.fps;
	p->cap_cfg.n_buffers = p->cfg.n_buffers;
	snprintf(p->cap_cfg.format, sizeof p->cap_cfg.format, "%s", p->cfg.format);
	snprintf(p->cap_cfg.controls, sizeof p->cap_cfg.controls, "%s", p->cfg.controls);
	if (source_is_demo(p->cfg.source)) {
		*err = demo_scene_make(p->trees, &p->demo);
		if (*err)
			goto fail;
		p->cap_cfg.sprites = p->demo.sprites;
		p->cap_cfg.sprite_ids = p->demo.ids;
		p->cap_cfg.n_sprites = p->demo.n;
		if (p->cfg.finger_size == 0) {
			/* The demo's fingertips are 24 px; showing them is the point of a demo. */
			p->cfg.finger_size = 24;
			log_info("demo: finger size 24 px (--finger-size to change)");
		}
	}
	p->cap = capture_open(&p->cap_cfg, err);
	if (!p->cap) {
		if (*err == ERR_CONFIG || strncmp(p->cfg.source, "v4l2:", 5) != 0 || p->cfg.once)
			goto fail;
		/* A camera that is busy or absent at start is retried by the capture thread. */
		log_warn("source %s not available yet: retrying in the background", p->cfg.source);
		*err = 0;
	}

	if (!p->cfg.once) {
		int w = p->cfg.width > 0 ? p->cfg.width : 640, h = p->cfg.height > 0 ? p->cfg.height : 480;
		struct frame *first = NULL;
		if (p->cap) {
			/* Size everything by the first real frame. */
			for (int tries = 0; tries < 50; tries++) {
				int e = capture_read(p->cap, &first);
				if (e == 0)
					break;
				first = NULL;
				if (e == ERR_EOF || e == ERR_DEVICE)
					break;
			}
		}
		if (first) {
			w = first->img.width;
			h = first->img.height;
		}
		p->ring = ring_create(w, h, false, err);
		if (!p->ring)
			goto fail;
		*err = stages_ensure_size(p, w, h);
		if (*err)
			goto fail;
		if (first) {
			struct frame *slot = ring_acquire_write(p->ring);
			if (slot) {
				image_u8_copy(&slot->img, &first->img);
				slot->seq = first->seq;
				slot->t_capture_ns = first->t_capture_ns ? first->t_capture_ns : clock_now_ns();
				memcpy(slot->name, first->name, sizeof slot->name);
				ring_publish(p->ring);
			}
		}
	}
	/* Clients clear any state left from an earlier run. */
	tuio_send_empty(p->tuio, UINT64_MAX);
	summary_publish(p);
	return p;
fail:
	pipeline_destroy(p);
	return NULL;
}

static void print_stats(struct pipeline *p)
{
	printf("tabletrack --stats: %llu frames, %llu skipped, %llu dropped, %s path, %dx%d\n",
	       (unsigned long long)p->fseq, (unsigned long long)p->bad_frames,
	       (unsigned long long)(p->ring ? ring_dropped(p->ring) : 0),
	       p->eng ? engine_backend(p->eng) : "-", p->width, p->height);
	printf("  %-16s %10s %10s\n", "stage", "median ms", "p99 ms");
	for (int i = 0; i < N_STAGES; i++) {
		int64_t med, p99;
		timing_summary(&p->timing[i], &med, &p99);
		if (p->timing[i].n_total)
			printf("  %-16s %10.3f %10.3f\n", stage_names[i], (double)med / 1e6, (double)p99 / 1e6);
	}
	fflush(stdout);
}

void pipeline_destroy(struct pipeline *p)
{
	if (!p)
		return;
	if (p->capture_thread_started) {
		atomic_store(&p->stop, true);
		ring_close(p->ring);
		pthread_join(p->capture_thread, NULL);
	}
	service_notify_stopping();
	if (p->cfg.stats && p->fseq)
		print_stats(p);
	/* tuio_destroy sends the empty bundles that clear clients' state. */
	tuio_destroy(p->tuio);
	ui_destroy(p->ui);
	capture_close(p->cap);
	ring_destroy(p->ring);
	stages_free(p);
	track_destroy(p->trk);
	image_u8_free(&p->once_buf[0].img);
	image_u8_free(&p->once_buf[1].img);
	tree_set_free(p->trees);
	demo_scene_free(&p->demo);
	for (int i = 0; i < 3; i++) {
		if (p->snaps[i]) {
			image_u8_free(&p->snaps[i]->grey);
			image_u8_free(&p->snaps[i]->binary);
			free(p->snaps[i]);
		}
	}
	pthread_mutex_destroy(&p->snap_lock);
	pthread_mutex_destroy(&p->cmd_lock);
	pthread_mutex_destroy(&p->status_lock);
	free(p);
}
