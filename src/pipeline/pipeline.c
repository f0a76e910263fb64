#include "pipeline.h"

#include <math.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../capture/feed.h"
#include "../core/clock.h"
#include "../core/detect.h"
#include "../core/err.h"
#include "../core/log.h"
#include "../core/ring.h"
#include "../core/snapshot.h"
#include "../fiducial/trees.h"
#include "../objects/learn.h"
#include "../objects/objects.h"
#include "../objects/sift.h"
#include "../objects/stage.h"
#include "../threshold/threshold.h"
#include "../core/calib.h"
#include "../track/track.h"
#include "../tuio/tuio.h"
#include "../ui/ui.h"
#include "demo.h"
#include "engine.h"
#include "report.h"
#include "service.h"
#include "settings.h"

#define MAX_COMMANDS 32

/* --stats: the steps of the pipeline thread whose CPU time is counted. */
enum cpu_step { CPU_BETWEEN, CPU_SUBMIT, CPU_COLLECT, CPU_DETECT, CPU_TRACK, CPU_TUIO, CPU_REPORT, CPU_STEP_N };

struct pipeline {
	struct tt_config cfg;       /* live copy: window and SIGHUP change it */
	struct tt_config cfg_given; /* as given at start: SIGHUP names the non-live keys changed since */
	struct tt_config cfg_files; /* the defaults and config file alone: K tells command-line keys by it */
	int argc;                   /* the command line, kept for SIGHUP reloads (borrowed) */
	char **argv;
	struct tree_set *trees;
	struct objects_library *objects; /* objects = FILE: checked and loaded at start */
	struct calib_map calib;     /* what the tracker applies (pipeline thread) */
	struct calib_map ui_calib;  /* what the window edits (main thread) */
	struct calib_map pending_calib; /* ui_calib handed over under cmd_lock */
	bool calib_pending;
	char grid_path[CONFIG_PATH_LEN]; /* config_grid_path(): read at start, W writes it */
	struct demo_scene demo;
	struct feed *feed;
	struct tuio *tuio;
	struct track *trk;
	struct report *report;

	/* Size-dependent stages, rebuilt only when the frame size changes. */
	int width, height;
	struct engine *eng;
	struct objects_stage *objs; /* objects = FILE: recognition on its own thread */
	struct snapshot_recognised recognised[SNAPSHOT_MAX_RECOGNISED]; /* for the window */
	int n_recognised;
	bool learn_pending;         /* the window's O: learn the box of the next frame */
	int learn_box[4];
	struct frame once_buf[2];   /* --once: frame N and N+1 when thresholds overlap */
	bool linearize;             /* camera_gamma: frames go through lut first */
	uint8_t lut[256];

	uint64_t fseq;              /* last processed frame number (TUIO fseq) */
	uint64_t bad_frames;        /* frames the stages could not process (pipeline thread) */
	bool ready_sent;
	bool paused;
	struct tracked_state last_state;

	/* --stats: the pipeline thread's CPU time by step, summed over frames.
	 * The wall-clock stage timers cannot show a thread that is busy outside
	 * them, or one that spins inside a wait; this can. cpu_last: the
	 * thread's CPU time at the last step's end (0 before the first frame). */
	int64_t cpu_step[CPU_STEP_N];
	int64_t cpu_last;
	uint64_t cpu_frames;

	/* Live mode. */
	atomic_bool stop;
	/* SIGHUP: the main thread reads the config file into reload_next and
	 * sets reload_pending (under cmd_lock); the pipeline thread applies it,
	 * so a slow or hostile file never holds up frames. */
	struct tt_config reload_next;
	bool reload_pending;

	/* Window: commands from the main thread to the pipeline thread. */
	struct ui *ui;
	struct ui_command cmds[MAX_COMMANDS];
	int n_cmds;
	pthread_mutex_t cmd_lock;
};

/* ---- size-dependent stages ------------------------------------------------------------- */

static void stages_free(struct pipeline *p)
{
	objects_stage_destroy(p->objs);
	p->objs = NULL;
	engine_destroy(p->eng);
	p->eng = NULL;
	p->width = p->height = 0;
}

/* objects = FILE: the recognition stage for w x h frames. In --once its
 * results are waited for a frame later, so a replay does not depend on the
 * machine's speed; live it never waits (objects/stage.h). */
static int objects_start(struct pipeline *p, int w, int h)
{
	if (!p->objects)
		return 0;
	struct objects_stage_config oc = {
		.lib = p->objects, .width = w, .height = h, .backend = "auto",
		.rate_hz = p->cfg.object_rate, .hold_ns = (int64_t)p->cfg.object_hold_ms * 1000000LL,
		.max_detections = engine_detections(p->eng)->cap_fids, .follow = p->cfg.object_follow,
	};
	sift_config_default(&oc.sift);
	oc.sift.max_keypoints = p->cfg.object_keypoints;
	objects_match_config_default(&oc.match);
	int err = 0;
	p->objs = objects_stage_create(&oc, &err);
	if (!p->objs)
		log_error("object recognition cannot start: %s", err_str(err));
	return err;
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
	engine_config_from(&p->cfg, p->trees, p->trk, w, h, &ec);
	p->eng = engine_create(&ec, &err);
	if (!p->eng) {
		if (err == ERR_UNSUPPORTED)
			log_error("--gpu on or --segment-backend gpu: no usable GPU path (see the line above); "
				  "use auto or off / cpu");
		goto fail;
	}
	if ((err = objects_start(p, w, h)))
		goto fail;
	p->width = w;
	p->height = h;
	engine_want_mask(p->eng, report_wants_mask(p->report));
	err = report_size(p->report, w, h);
	if (err)
		goto fail;
	/* Frames come from the ring's slots (live) or the double buffer
	 * (--once): page-locked once, the GPU reads them without a staging copy. */
	void *data;
	size_t bytes;
	struct ring *ring = p->feed ? feed_ring(p->feed) : NULL;
	for (int i = 0; ring && ring_slot_buffer(ring, i, &data, &bytes) == 0; i++)
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

/* ---- the per-frame script ---------------------------------------------------------------- */

/* --stats: the thread's CPU time since the last step's end goes to step. */
static void cpu_step(struct pipeline *p, enum cpu_step step)
{
	if (!p->cfg.stats)
		return;
	int64_t now = clock_thread_cpu_ns();
	if (p->cpu_last)
		p->cpu_step[step] += now - p->cpu_last;
	p->cpu_last = now;
}

/* camera_gamma: the camera's gamma curve undone, in place, before any
 * stage reads the frame (the window shows it so too). The rules were
 * measured on scenes drawn in linear light; a gamma-encoded frame lifts
 * the ink and a shadow's paper towards the lit paper, and symbols at a
 * shadow's edge lose a hole and gain a leaf (sheet-half, seed 501,
 * --gamma 2.2: 0.826 and 1 wrong ID as they are, 0.951 and none undone).
 * The frame is the pipeline's own here (a ring slot it holds, or a --once
 * buffer). */
static void frame_linearize(const struct pipeline *p, struct frame *f)
{
	if (p->linearize)
		image_u8_map(&f->img, p->lut);
}

/* Starts step 1 of frame f: its threshold (asynchronous on the GPU). */
static int frame_start(struct pipeline *p, const struct frame *f)
{
	int err = stages_ensure_size(p, f->img.width, f->img.height);
	if (!err)
		err = engine_submit(p->eng, &f->img);
	return err;
}

/* The recognised objects' outlines and names, for the window's snapshot. */
static void recognised_for_window(struct pipeline *p)
{
	int n;
	const struct objects_seen *seen = objects_stage_seen(p->objs, &n);
	p->n_recognised = n < SNAPSHOT_MAX_RECOGNISED ? n : SNAPSHOT_MAX_RECOGNISED;
	for (int i = 0; i < p->n_recognised; i++) {
		struct snapshot_recognised *r = &p->recognised[i];
		struct objects_object ob;
		r->id = seen[i].id;
		r->name[0] = '\0';
		if (objects_library_get(p->objects, seen[i].index, &ob) == 0)
			snprintf(r->name, sizeof r->name, "%s", ob.name);
		memcpy(r->corners, seen[i].corners, sizeof r->corners);
	}
}

static int load_objects(struct pipeline *p);

/* The window's O: the box of this frame learned into the library (objects
 * = FILE, objects/learn.h), then the library reloaded and recognition
 * restarted with it. The frame waits for it (a user's action, tens of ms). */
static void learn_object(struct pipeline *p, const struct image_u8 *img)
{
	p->learn_pending = false;
	if (!p->cfg.objects[0]) {
		log_error("O (learn an object): no object library configured (objects = FILE)");
		return;
	}
	/* keypoints as tabletrack-objects learn takes them */
	struct objects_learn_config lc = {.path = p->cfg.objects, .id_min = p->cfg.object_id_min,
					  .id_max = p->cfg.object_id_max, .max_keypoints = 1000, .backend = "auto"};
	char name[OBJECTS_NAME_MAX + 1];
	int id, n, *b = p->learn_box;
	if (objects_learn_box(&lc, img, b, &id, name, sizeof name, &n))
		return;
	log_info("learned %s (ID %d, %d keypoints) from the box %d,%d - %d,%d into %s", name, id, n, b[0], b[1], b[2],
		 b[3], p->cfg.objects);
	objects_stage_destroy(p->objs);
	p->objs = NULL;
	struct objects_library *old = p->objects;
	p->objects = NULL;
	if (load_objects(p) == 0 && objects_start(p, img->width, img->height) == 0) {
		objects_library_free(old);
		return;
	}
	log_error("%s could not be reloaded: recognising with the library as it was", p->cfg.objects);
	objects_library_free(p->objects);
	p->objects = old;
	objects_start(p, img->width, img->height);
}

/* The script: one frame, threshold -> segment -> match -> track -> TUIO,
 * then what is shown of it. frame_start began f's threshold; when `next` is
 * given (a frame already waiting), its threshold is started as soon as f's
 * masks are in, so the GPU works on it while the CPU does the rest of f.
 * An error means f could not be processed (the caller counts and skips it). */
static int frame_script(struct pipeline *p, const struct frame *f, const struct frame *next)
{
	int64_t ns[STAGE_N] = {0};
	cpu_step(p, CPU_BETWEEN);

	/* 1. threshold: grey -> bitmask, both scales */
	int err = engine_collect(p->eng);
	if (next && next->img.width == p->width && next->img.height == p->height)
		engine_submit(p->eng, &next->img);
	cpu_step(p, CPU_COLLECT);
	if (err)
		return err;

	/* 2, 3. segment: bitmask -> region tree; match: tree -> fiducials,
	 * fingers, blobs (the second scale on a worker meanwhile, merged in) */
	err = engine_detect(p->eng, &f->img);
	cpu_step(p, CPU_DETECT);
	if (err)
		return err;

	/* 4. track: detections -> sessions; recognised objects (objects =
	 * FILE) join the symbols here: the last recognition's result, if one
	 * is done, and this frame handed to the worker if it is idle and one
	 * is due (timed as part of the track step). */
	if (p->learn_pending)
		learn_object(p, &f->img);
	if (p->objs && p->cfg.once)
		objects_stage_wait(p->objs);
	int64_t t3 = clock_now_ns();
	const struct detections *det = engine_detections(p->eng);
	if (p->objs) {
		objects_stage_poll(p->objs, p->fseq + 1, f->t_capture_ns);
		objects_stage_follow(p->objs, engine_regions(p->eng));
		objects_stage_submit(p->objs, &f->img, engine_regions(p->eng), p->fseq + 1, f->t_capture_ns);
		det = objects_stage_merge(p->objs, det);
		recognised_for_window(p);
	}
	struct tracked_state st;
	err = track_process(p->trk, det, p->fseq + 1, f->t_capture_ns, &st);
	if (err)
		return err;
	p->fseq++;
	int64_t t4 = clock_now_ns();
	cpu_step(p, CPU_TRACK);

	/* 5. tuio: a send failure is the network's problem, logged once by the sender. */
	tuio_send_frame(p->tuio, &st);
	int64_t t5 = clock_now_ns();
	cpu_step(p, CPU_TUIO);

	/* 6. report: --stats timings, --dump, the window's snapshot */
	const struct engine_times *et = engine_times(p->eng);
	ns[STAGE_THRESHOLD] = et->ns[STAGE_THRESHOLD];
	ns[STAGE_SEGMENT] = et->ns[STAGE_SEGMENT];
	ns[STAGE_MATCH] = et->ns[STAGE_MATCH];
	for (int i = STAGE_MATCH_FIRST; i <= STAGE_MATCH_WAIT; i++)
		ns[i] = et->ns[i];
	ns[STAGE_TRACK] = t4 - t3;
	ns[STAGE_TUIO] = t5 - t4;
	for (int i = 0; i < STAGE_TOTAL; i++)
		ns[STAGE_TOTAL] += ns[i];
	/* A replay's latency runs from the frame's arrival from the source
	 * (live only: --once reads frames ahead of their turn on purpose). */
	const int64_t t_cap = !f->replay ? f->t_capture_ns : p->cfg.once ? 0 : f->t_arrival_ns;
	if (t_cap > 0 && t5 > t_cap)
		ns[STAGE_LATENCY] = t5 - t_cap;
	p->last_state = st;
	char status[128];
	feed_status(p->feed, status, sizeof status);
	struct ring *ring = feed_ring(p->feed);
	struct report_frame fr = {
		.fseq = p->fseq, .frame = f, .mask = report_wants_mask(p->report) ? engine_mask(p->eng) : NULL, .det = engine_detections(p->eng),
		.st = &st, .ns = ns, .backend = engine_backend(p->eng), .cfg = &p->cfg, .status = status,
		.dropped_frames = ring ? ring_dropped(ring) : 0,
		.bad_frames = p->bad_frames + feed_bad_frames(p->feed), .paused = p->paused,
		.recognised = p->recognised, .n_recognised = p->objs ? p->n_recognised : 0,
	};
	report_frame(p->report, &fr, t5);
	if (!p->ready_sent) {
		service_notify_ready();
		p->ready_sent = true;
	}
	service_notify_watchdog(t5);
	cpu_step(p, CPU_REPORT);
	p->cpu_frames++;
	return 0;
}

static int pipeline_process_frame(struct pipeline *p, const struct frame *f)
{
	cpu_step(p, CPU_BETWEEN);
	int err = frame_start(p, f);
	cpu_step(p, CPU_SUBMIT);
	return err ? err : frame_script(p, f, NULL);
}

static void count_bad_frame(struct pipeline *p, const struct frame *f, int err)
{
	p->bad_frames++;
	log_warn("frame %s skipped: %s", f && f->name[0] ? f->name : "?", err_str(err));
}

/* ---- live tuning ----------------------------------------------------------------------- */

static void apply_live_config(struct pipeline *p)
{
	settings_apply_log_level(&p->cfg);
	if (p->eng) {
		struct engine_config ec;
		engine_config_from(&p->cfg, p->trees, p->trk, p->width, p->height, &ec);
		if (engine_set_config(p->eng, &ec))
			log_warn("threshold or matcher settings not fully applied");
	}
	struct track_config tk;
	track_config_from(&p->cfg, &p->calib, &tk);
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
		settings_save_config(&p->cfg, &p->cfg_given, &p->cfg_files);
		break;
	case UI_CMD_EQUALIZE:
		/* Takes the next frame as the empty table: clear it first. */
		if (p->eng)
			engine_equalize(p->eng, true);
		break;
	case UI_CMD_LEARN_OBJECT:
		p->learn_pending = sscanf(c->value, "%d %d %d %d", &p->learn_box[0], &p->learn_box[1], &p->learn_box[2],
					  &p->learn_box[3]) == 4;
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

/* The pipeline thread's half of a SIGHUP: the configuration the main
 * thread read, applied without any I/O. */
static bool take_reload(struct pipeline *p)
{
	pthread_mutex_lock(&p->cmd_lock);
	bool pending = p->reload_pending;
	if (pending) {
		settings_reload_apply(&p->cfg, &p->cfg_given, &p->reload_next);
		p->reload_pending = false;
	}
	pthread_mutex_unlock(&p->cmd_lock);
	return pending;
}

/* The main thread's half: reads the file (a regular file, opened without
 * blocking) while the pipeline thread goes on with frames. */
static void read_reload(struct pipeline *p)
{
	struct tt_config *next = malloc(sizeof *next);
	if (!next) {
		log_error("SIGHUP: out of memory; keeping the running configuration");
		return;
	}
	if (settings_reload_read(&p->cfg_given, p->argc, p->argv, next)) {
		pthread_mutex_lock(&p->cmd_lock);
		p->reload_next = *next;
		p->reload_pending = true;
		pthread_mutex_unlock(&p->cmd_lock);
	}
	free(next);
}

static void summary_publish(struct pipeline *p)
{
	report_summary_publish(p->report, p->fseq, &p->last_state, p->eng ? engine_backend(p->eng) : "-",
			       p->cfg.quiet);
}

/* ---- pipeline thread ------------------------------------------------------------------- */

static void *pipeline_main(void *arg)
{
	struct pipeline *p = arg;
	pthread_setname_np(pthread_self(), "tt-pipeline");
	struct ring *ring = feed_ring(p->feed);
	int64_t last_frame_ns = clock_now_ns(), last_keepalive_ns = 0;
	while (!atomic_load(&p->stop)) {
		drain_commands(p);
		if (take_reload(p)) {
			apply_live_config(p);
			summary_publish(p);
		}
		struct frame *f = ring_take(ring, 100);
		if (!f) {
			if (ring_is_closed(ring))
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
			frame_linearize(p, f);
			int err = pipeline_process_frame(p, f);
			if (err)
				count_bad_frame(p, f, err);
		}
		ring_release(ring);
		last_frame_ns = clock_now_ns();
		if (report_summary_age_ns(p->report, last_frame_ns) >= 500000000LL)
			summary_publish(p);
	}
	atomic_store(&p->stop, true);
	return NULL;
}

/* ---- run ------------------------------------------------------------------------------- */

/* The next frame of a --once source into once_buf[k] (allocated, and
 * registered with the GPU stage, at the first frame); NULL at the end or on
 * a fatal source error (*rc set). */
static const struct frame *once_next(struct pipeline *p, int k, int *rc)
{
	struct frame *b = &p->once_buf[k];
	struct frame view = {0};
	int err = feed_read(p->feed, b->img.data ? b : &view, service_should_stop);
	if (err == ERR_DEVICE)
		*rc = 1;
	if (err)
		return NULL;
	if (!b->img.data) {
		if (image_u8_alloc(&b->img, view.img.width, view.img.height))
			return NULL;
		if (p->eng && view.img.width == p->width && view.img.height == p->height)
			engine_register_buffer(p->eng, b->img.data, (size_t)b->img.stride * (size_t)b->img.height);
		image_u8_copy(&b->img, &view.img);
		frame_meta_copy(b, &view);
	}
	frame_linearize(p, b);
	return b;
}

/* --once: every frame exactly once, in order. Frame N+1 is read and its
 * threshold started before frame N is segmented, so a GPU thresholds while
 * the CPU works; with the CPU backend this is just sequential. */
static int run_once(struct pipeline *p)
{
	int rc = 0, k = 0;
	const struct frame *cur = once_next(p, k, &rc);
	bool started = cur && frame_start(p, cur) == 0;
	if (cur && !started)
		count_bad_frame(p, cur, ERR_FORMAT);
	while (cur) {
		const struct frame *next = once_next(p, k ^ 1, &rc);
		bool same_size = next && next->img.width == p->width && next->img.height == p->height;
		bool next_submitted = false;
		if (started) {
			int err = frame_script(p, cur, same_size ? next : NULL);
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
	if (strcmp(uc.backend, "none") == 0) {
		report_no_window(p->report);
		if (p->eng) /* sized at set-up, when snapshots still wanted the mask */
			engine_want_mask(p->eng, report_wants_mask(p->report));
	}

	pthread_t pipe_thread;
	if (feed_start(p->feed) != 0)
		return 1;
	if (pthread_create(&pipe_thread, NULL, pipeline_main, p) != 0) {
		atomic_store(&p->stop, true);
		return 1;
	}

	int64_t last_summary = clock_now_ns();
	while (!atomic_load(&p->stop)) {
		if (service_should_stop())
			atomic_store(&p->stop, true);
		if (service_take_reload())
			read_reload(p);
		struct ui_command cmds[16];
		const struct snapshot *snap = p->ui ? report_snapshot_front(p->report) : NULL;
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
			char status[128];
			feed_status(p->feed, status, sizeof status);
			report_print_summary(p->report, status);
			if (p->cfg.stats)
				report_sample_threads(p->report);
			last_summary = now;
		}
	}
	atomic_store(&p->stop, true);
	feed_stop(p->feed);
	pthread_join(pipe_thread, NULL);
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

/* Errors found while setting up are configuration errors (exit 78) when
 * the setting named cannot be met here, whatever the code underneath. */
static int as_config_error(int err)
{
	return err == ERR_NOMEM ? err : ERR_CONFIG;
}

/* objects = FILE: the library must load, every ID must lie in the
 * configured range, the range above every fiducial ID (so /tuio/2Dobj
 * never carries one ID for two things), and a SIFT backend must be built in. */
static int load_objects(struct pipeline *p)
{
	if (!p->cfg.objects[0])
		return 0;
	int n_fid = tree_set_count(p->trees);
	if (p->cfg.object_id_min < n_fid) {
		log_error("object_id_min %d: the symbol set's IDs run 0..%d; object IDs must start above them",
			  p->cfg.object_id_min, n_fid - 1);
		return ERR_CONFIG;
	}
	int err = objects_library_load(p->cfg.objects, &p->objects);
	if (err)
		return as_config_error(err);
	for (int i = 0; i < objects_library_count(p->objects); i++) {
		struct objects_object ob;
		objects_library_get(p->objects, i, &ob);
		if (ob.id < p->cfg.object_id_min || ob.id > p->cfg.object_id_max) {
			log_error("objects %s: %s has ID %d, outside object_id_min..object_id_max (%d..%d)",
				  p->cfg.objects, ob.name, ob.id, p->cfg.object_id_min, p->cfg.object_id_max);
			return ERR_CONFIG;
		}
	}
	char why[256];
	if (sift_backend_check("auto", why, sizeof why)) {
		log_error("objects %s: %s", p->cfg.objects, why);
		return ERR_CONFIG;
	}
	log_info("%d objects from %s", objects_library_count(p->objects), p->cfg.objects);
	return 0;
}

/* What is checked before anything is opened: settings that no source or
 * device can meet. */
static int check_settings(struct pipeline *p)
{
	char why[160] = "";
	if (threshold_backend_check(settings_gpu_backend(&p->cfg), why, sizeof why)) {
		log_error("--gpu %s: %s; use --gpu auto or off", p->cfg.gpu, why);
		return ERR_CONFIG;
	}
	/* The GPU segmenter reads the CUDA threshold's mask in place. */
	if (strcmp(p->cfg.segment_backend, "gpu") == 0 &&
	    (strcmp(p->cfg.gpu, "off") == 0 || threshold_backend_check("cuda", why, sizeof why))) {
		log_error("--segment-backend gpu: %s; use --segment-backend auto or cpu",
			  strcmp(p->cfg.gpu, "off") == 0 ? "it needs the GPU threshold, and --gpu is off" : why);
		return ERR_CONFIG;
	}
	return 0;
}

/* Everything that reads a setting, the source included, before the TUIO
 * sockets open: a configuration error leaves no trace on the network. */
static int setup_inputs(struct pipeline *p)
{
	int err = load_trees(p);
	if (err)
		return as_config_error(err);
	log_info("%d symbols from %s", tree_set_count(p->trees), p->cfg.trees[0] ? p->cfg.trees : "the built-in set");
	if ((err = load_objects(p)))
		return err;

	calib_map_identity(&p->calib, 9, 7);
	/* A missing grid is where the window's W saves one. */
	if (config_grid_path(&p->cfg, p->grid_path, sizeof p->grid_path))
		p->grid_path[0] = '\0';
	if (p->grid_path[0] && access(p->grid_path, R_OK) == 0) {
		if ((err = calib_map_load(&p->calib, p->grid_path)))
			return as_config_error(err);
		log_info("calibration grid from %s%s", p->grid_path,
			 p->cfg.grid[0] ? "" : " (the default; grid = FILE names another)");
	}

	if ((err = check_settings(p)))
		return err;

	struct track_config tk;
	track_config_from(&p->cfg, &p->calib, &tk);
	p->trk = track_create(&tk, &err);
	if (!p->trk)
		return err;

	p->report = report_create(p->cfg.dump, !p->cfg.once, &err);
	if (!p->report)
		return err;

	settings_choose_source(&p->cfg);
	struct feed_config fc = {.live = !p->cfg.once,
				 .default_width = p->cfg.width > 0 ? p->cfg.width : 640,
				 .default_height = p->cfg.height > 0 ? p->cfg.height : 480,
				 .should_stop = service_should_stop};
	capture_config_from(&p->cfg, &fc.cap);
	if (settings_source_is_demo(p->cfg.source)) {
		err = demo_scene_make(p->trees, &p->demo);
		if (err)
			return err;
		fc.cap.sprites = p->demo.sprites;
		fc.cap.sprite_ids = p->demo.ids;
		fc.cap.n_sprites = p->demo.n;
		if (p->cfg.finger_size == 0) {
			/* The demo's fingertips are 24 px; showing them is the point of a demo. */
			p->cfg.finger_size = 24;
			log_info("demo: finger size 24 px (--finger-size to change)");
		}
	}
	p->feed = feed_create(&fc, &err);
	if (!p->feed)
		return as_config_error(err);
	if (p->cfg.once && feed_is_endless(p->feed)) {
		log_error("--once: source %s never ends (a camera or the demo); --once plays a folder, file or "
			  "raw: stream through once",
			  p->cfg.source);
		return ERR_CONFIG;
	}
	if (!p->cfg.once) {
		int w, h;
		feed_size(p->feed, &w, &h);
		if ((err = stages_ensure_size(p, w, h)))
			return err == ERR_UNSUPPORTED ? ERR_CONFIG : err;
	}
	return 0;
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
	config_defaults(&p->cfg_files);
	/* Read a moment ago by config_parse_args: an error now only means every
	 * key counts as the file's when K saves. */
	if (cfg->config_path[0] && config_load_file(&p->cfg_files, cfg->config_path) != 0)
		p->cfg_files = *cfg;
	p->argc = argc;
	p->argv = argv;
	p->linearize = cfg->camera_gamma != 1.0f;
	image_u8_gamma_lut(p->lut, (double)cfg->camera_gamma);
	pthread_mutex_init(&p->cmd_lock, NULL);
	atomic_init(&p->stop, false);

	struct tuio_config tc;
	*err = tuio_config_from(&p->cfg, &tc);
	if (*err)
		goto fail;
	*err = setup_inputs(p);
	if (*err)
		goto fail;
	p->tuio = tuio_create(&tc, err);
	if (!p->tuio)
		goto fail;
	/* Clients clear any state left from an earlier run. */
	tuio_send_empty(p->tuio, UINT64_MAX);
	summary_publish(p);
	return p;
fail:
	pipeline_destroy(p);
	return NULL;
}

/* --stats: how recognition kept up (after the stage timings). */
static void objects_print_stats(struct pipeline *p)
{
	if (!p->objs)
		return;
	struct objects_stage_stats os;
	objects_stage_stats(p->objs, &os);
	printf("  objects: %llu recognitions (%llu failed), latency median %d frames (max %d), worker median %.1f ms "
	       "(SIFT %.1f ms, %d keypoints), max %.1f ms\n",
	       (unsigned long long)os.n_done, (unsigned long long)os.n_failed, os.latency_frames_median,
	       os.latency_frames_max, os.work_ms_median, os.sift_ms_median, os.keypoints_median, os.work_ms_max);
	fflush(stdout);
}

/* --stats: where the pipeline thread's CPU time went, a frame on average
 * (the means add up to the thread's share in "CPU a frame by thread"). */
static void cpu_print_stats(struct pipeline *p)
{
	static const char *const names[CPU_STEP_N] = {"between frames", "submit",	"threshold wait",
						      "segment+match",  "track",	"tuio",
						      "report"};
	if (p->cpu_frames < 2)
		return;
	int64_t sum = 0;
	printf("  pipeline thread CPU a frame:");
	for (int i = 0; i < CPU_STEP_N; i++) {
		sum += p->cpu_step[i];
		printf("%s %s %.3f ms", i ? "," : "", names[i], (double)p->cpu_step[i] / 1e6 / (double)p->cpu_frames);
	}
	printf(" (sum %.3f ms)\n", (double)sum / 1e6 / (double)p->cpu_frames);
	fflush(stdout);
}

/* --stats: one of the third scale's later passes (windows a frame, cover). */
static void third_pass_line(const struct pipeline *p, const struct engine_third_stats *ts, const char *name,
			    int64_t windows, int64_t area_px)
{
	printf("  third scale, %s: %.1f windows a frame, %.1f%% of the frame covered on average\n", name,
	       (double)windows / (double)ts->frames, 100.0 * (double)area_px / ((double)ts->frames * p->width * p->height));
}

/* --stats: the frames read at a gate other than the configured one
 * (gate_range). */
static void gate_print_stats(const struct pipeline *p)
{
	const struct engine_gate_stats *gs = p->eng ? engine_gate_stats(p->eng) : NULL;
	if (!gs || !gs->frames)
		return;
	if (!gs->low_frames && !gs->high_frames) {
		printf("  gate: %d on every frame\n", p->cfg.gate);
		return;
	}
	printf("  gate: %d as configured; of %lld frames", p->cfg.gate, (long long)gs->frames);
	if (gs->low_frames)
		printf(", %lld read lower for their grey range (lowest %d)", (long long)gs->low_frames, gs->lowest);
	if (gs->high_frames)
		printf(", %lld read higher for their noise (highest %d)", (long long)gs->high_frames, gs->highest);
	printf("\n");
}

/* --stats: the pipeline thread's waits for the GPU's labelling, a scale. */
static void wait_print_stats(const struct pipeline *p)
{
	const struct engine_wait_stats *ws = p->eng ? engine_wait_stats(p->eng) : NULL;
	if (!ws || !ws->frames[0])
		return;
	printf("  GPU labelling waits a frame: scale 1 %.3f ms", (double)ws->ns[0] / 1e6 / (double)ws->frames[0]);
	if (ws->frames[1])
		printf(", scale 2 %.3f ms", (double)ws->ns[1] / 1e6 / (double)ws->frames[1]);
	printf("\n");
}

/* --stats: where the third scale ran (its windows, or whole frames). */
static void third_print_stats(struct pipeline *p)
{
	const struct engine_third_stats *ts = p->eng ? engine_third_stats(p->eng) : NULL;
	if (!ts || !ts->frames)
		return;
	printf("  third scale: whole frame on %lld of %lld frames, %.1f windows a frame, %.1f%% of the frame "
	       "covered on average\n",
	       (long long)ts->whole_frames, (long long)ts->frames, (double)ts->windows / (double)ts->frames,
	       100.0 * (double)ts->area_px / ((double)ts->frames * p->width * p->height));
	third_pass_line(p, ts, "radius by symbol size", ts->scaled_windows, ts->scaled_area_px);
	third_pass_line(p, ts, "closing pass", ts->closed_windows, ts->closed_area_px);
	third_pass_line(p, ts, "ratio pass", ts->ratio_windows, ts->ratio_area_px);
	third_pass_line(p, ts, "small-symbol pass", ts->small_windows, ts->small_area_px);
	third_pass_line(p, ts, "upsampled pass", ts->up_windows, ts->up_area_px);
	third_pass_line(p, ts, "deblurring pass", ts->deblur_windows, ts->deblur_area_px);
	if (ts->deblur_windows)
		printf("  third scale, deblurring pass: %.2f windows a frame deconvolved for a streak, %.2f for a "
		       "defocus; %lld whole frames for a defocus\n",
		       (double)ts->deblur_streaks / (double)ts->frames,
		       (double)ts->deblur_defocused / (double)ts->frames, (long long)ts->deblur_frames);
	if (ts->deblur_skipped)
		printf("  third scale, deblurring pass: %lld windows past its bound (deblur3_pct) left out\n",
		       (long long)ts->deblur_skipped);
	fflush(stdout);
}

void pipeline_destroy(struct pipeline *p)
{
	if (!p)
		return;
	if (p->cfg.stats && p->fseq)
		report_sample_threads(p->report); /* before the capture thread ends */
	if (p->feed)
		feed_stop(p->feed);
	service_notify_stopping();
	if (p->cfg.stats && p->fseq) {
		struct ring *ring = feed_ring(p->feed);
		report_print_stats(p->report, p->fseq, p->bad_frames + feed_bad_frames(p->feed),
				   ring ? ring_dropped(ring) : 0, p->eng ? engine_backend(p->eng) : "-", p->width,
				   p->height);
		cpu_print_stats(p);
		gate_print_stats(p);
		wait_print_stats(p);
		third_print_stats(p);
		objects_print_stats(p);
	}
	/* tuio_destroy sends the empty bundles that clear clients' state. */
	tuio_destroy(p->tuio);
	ui_destroy(p->ui);
	feed_destroy(p->feed);
	stages_free(p);
	track_destroy(p->trk);
	image_u8_free(&p->once_buf[0].img);
	image_u8_free(&p->once_buf[1].img);
	tree_set_free(p->trees);
	objects_library_free(p->objects);
	demo_scene_free(&p->demo);
	report_destroy(p->report);
	pthread_mutex_destroy(&p->cmd_lock);
	free(p);
}
