/*
 * uidemo.c - the calibration window fed with synthetic snapshots.
 *
 * A development and test harness for src/ui without the pipeline: it draws
 * a moving scene (uneven lighting, dark cards with white marks, bright
 * fingers), thresholds it, fills a struct snapshot with one tracked object
 * of every kind (decoded, fuzzy, root-tracked, predicted), fingers, blobs and
 * raw detections, and runs ui_poll() in a loop. Commands are printed to
 * stdout one a line ("SET radius 7", "GRID_CHANGED", ...) and SET values are
 * applied to the snapshot as the pipeline would. Exits 0 on QUIT.
 *
 *   tabletrack-uidemo [--backend sdl|none] [--size WxH] [--fps N]
 *                     [--frames N] [--grid FILE] [--still] [--verbose]
 *
 * --still freezes the scene (reproducible screenshots); --frames N quits by
 * itself after N frames (0 = run until the window is closed); --verbose logs
 * the window's mean drawing time at exit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/clock.h"
#include "../src/core/err.h"
#include "../src/core/image.h"
#include "../src/core/log.h"
#include "../src/core/snapshot.h"
#include "../src/core/calib.h"
#include "../src/ui/ui.h"

static const char *const kind_names[] = {"?", "QUIT", "SET", "RESET_TRACKING", "EQUALIZE", "EQUALIZE_RESET",
					 "PAUSE", "SAVE_CONFIG", "GRID_CHANGED"};

static void fill_rect(struct image_u8 *img, float cx, float cy, float half, float angle, uint8_t v)
{
	float ca = cosf(angle), sa = sinf(angle);
	int r = (int)(half * 1.5f) + 1;
	for (int y = (int)cy - r; y <= (int)cy + r; y++)
		for (int x = (int)cx - r; x <= (int)cx + r; x++) {
			if (x < 0 || y < 0 || x >= img->width || y >= img->height)
				continue;
			float dx = (float)x - cx, dy = (float)y - cy;
			float u = dx * ca + dy * sa, w = -dx * sa + dy * ca;
			if (fabsf(u) <= half && fabsf(w) <= half)
				image_u8_row(img, y)[x] = v;
		}
}

static void fill_disc(struct image_u8 *img, float cx, float cy, float rad, uint8_t v)
{
	for (int y = (int)(cy - rad); y <= (int)(cy + rad) + 1; y++)
		for (int x = (int)(cx - rad); x <= (int)(cx + rad) + 1; x++)
			if (x >= 0 && y >= 0 && x < img->width && y < img->height &&
			    ((float)x - cx) * ((float)x - cx) + ((float)y - cy) * ((float)y - cy) <= rad * rad)
				image_u8_row(img, y)[x] = v;
}

/* One synthetic frame at time t (seconds) into s. */
static void make_frame(struct snapshot *s, double t, uint32_t *seed)
{
	struct image_u8 *g = &s->grey;
	int w = g->width, h = g->height;
	for (int y = 0; y < h; y++) {
		uint8_t *row = image_u8_row(g, y);
		for (int x = 0; x < w; x++) {
			float fx = (float)x / (float)w - 0.45f, fy = (float)y / (float)h - 0.5f;
			*seed = *seed * 1664525u + 1013904223u;
			float v = 150.0f - 110.0f * (fx * fx + fy * fy) + (float)(*seed >> 28);
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	float k = (float)w / 640.0f;
	s->n_objects = 4;
	s->n_fids = 0;
	for (int i = 0; i < 4; i++) {
		float cx = (0.2f + 0.2f * (float)i) * (float)w, cy = (0.3f + 0.1f * (float)(i % 2)) * (float)h;
		float a = (float)fmod(0.6 * (double)i + 0.5 * t, 2.0 * M_PI), side = 70.0f * k;
		fill_rect(g, cx, cy, side * 0.5f, a, 235);
		fill_rect(g, cx, cy, side * 0.38f, a, 20);
		float dx = sinf(a), dy = -cosf(a);
		fill_disc(g, cx + dx * side * 0.18f, cy + dy * side * 0.18f, side * 0.08f, 235);
		fill_disc(g, cx - dx * side * 0.12f, cy - dy * side * 0.12f, side * 0.12f, 235);
		struct tracked_object *o = &s->objects[i];
		memset(o, 0, sizeof *o);
		o->session_id = (uint32_t)(10 + i);
		o->class_id = 3 + 7 * i;
		o->x = cx / (float)w;
		o->y = cy / (float)h;
		o->angle = a;
		o->size = side / (float)w;
		o->how = (uint8_t)i;
		if (i < 2) {
			struct fiducial_det *f = &s->fids[s->n_fids++];
			memset(f, 0, sizeof *f);
			f->id = o->class_id;
			f->x = cx;
			f->y = cy;
			f->angle = a;
			f->size_px = side;
		}
	}
	s->n_cursors = 3;
	for (int i = 0; i < 3; i++) {
		float cx = (0.25f + 0.25f * (float)i + 0.05f * (float)sin(t + i)) * (float)w;
		float cy = 0.72f * (float)h, r = 9.0f * k;
		fill_disc(g, cx, cy, r, 250);
		struct tracked_cursor *c = &s->cursors[i];
		memset(c, 0, sizeof *c);
		c->session_id = (uint32_t)(20 + i);
		c->x = cx / (float)w;
		c->y = cy / (float)h;
		c->diameter = 2.0f * r / (float)w;
	}
	s->n_blobs = 1;
	{
		float cx = 0.8f * (float)w, cy = 0.8f * (float)h, bw = 90.0f * k, bh = 40.0f * k;
		for (int y = (int)(cy - bh / 2); y < (int)(cy + bh / 2); y++)
			for (int x = (int)(cx - bw / 2); x < (int)(cx + bw / 2); x++)
				image_u8_row(g, y)[x] = 240;
		struct tracked_blob *b = &s->blobs[0];
		memset(b, 0, sizeof *b);
		b->session_id = 30;
		b->x = cx / (float)w;
		b->y = cy / (float)h;
		b->w = bw / (float)w;
		b->h = bh / (float)h;
		b->angle = 0;
	}
	/* A crude stand-in for the threshold stage: the view only has to be
	 * strictly black and white. */
	for (int y = 0; y < h; y++) {
		const uint8_t *src = image_u8_row(g, y);
		uint8_t *dst = image_u8_row(&s->binary, y);
		for (int x = 0; x < w; x++)
			dst[x] = src[x] > (uint8_t)(90 + s->gate) ? 255 : 0;
	}
}

static void apply_set(struct snapshot *s, const struct ui_command *c)
{
	const char *v = c->value;
	bool b = strcmp(v, "true") == 0;
	if (!strcmp(c->key, "radius"))
		s->radius = atoi(v);
	else if (!strcmp(c->key, "gate"))
		s->gate = atoi(v);
	else if (!strcmp(c->key, "threshold"))
		snprintf(s->threshold_mode, sizeof s->threshold_mode, "%s", v);
	else if (!strcmp(c->key, "threshold2"))
		snprintf(s->threshold2_mode, sizeof s->threshold2_mode, "%s", v);
	else if (!strcmp(c->key, "threshold3"))
		snprintf(s->threshold3_mode, sizeof s->threshold3_mode, "%s", v);
	else if (!strcmp(c->key, "mean_radius"))
		s->mean_radius = atoi(v);
	else if (!strcmp(c->key, "mean_bias"))
		s->mean_bias = atoi(v);
	else if (!strcmp(c->key, "median"))
		s->median = atoi(v);
	else if (!strcmp(c->key, "radius2"))
		s->radius2 = atoi(v);
	else if (!strcmp(c->key, "median2"))
		s->median2 = atoi(v);
	else if (!strcmp(c->key, "finger_size"))
		s->finger_size = strtof(v, NULL);
	else if (!strcmp(c->key, "finger_sensitivity"))
		s->finger_sensitivity = strtof(v, NULL);
	else if (!strcmp(c->key, "blob_min"))
		s->blob_min = strtof(v, NULL);
	else if (!strcmp(c->key, "blob_max"))
		s->blob_max = strtof(v, NULL);
	else if (!strcmp(c->key, "invert_x"))
		s->invert_x = b;
	else if (!strcmp(c->key, "invert_y"))
		s->invert_y = b;
	else if (!strcmp(c->key, "invert_angle"))
		s->invert_angle = b;
}

static int usage(void)
{
	fprintf(stderr, "usage: tabletrack-uidemo [--backend sdl|none] [--size WxH] [--fps N] [--frames N] "
			"[--grid FILE] [--still] [--verbose]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *backend = "sdl", *grid_path = "";
	int w = 640, h = 480, fps = 30;
	long frames = 0;
	bool still = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--backend") && next)
			backend = argv[++i];
		else if (!strcmp(a, "--size") && next && sscanf(argv[++i], "%dx%d", &w, &h) == 2)
			;
		else if (!strcmp(a, "--fps") && next)
			fps = atoi(argv[++i]);
		else if (!strcmp(a, "--frames") && next)
			frames = atol(argv[++i]);
		else if (!strcmp(a, "--grid") && next)
			grid_path = argv[++i];
		else if (!strcmp(a, "--still"))
			still = true;
		else if (!strcmp(a, "--verbose"))
			log_set_level(LOG_DEBUG);
		else
			return usage();
	}
	if (w < 16 || h < 16 || w > 4096 || h > 4096 || fps < 1 || fps > 1000)
		return usage();

	static struct snapshot snap;
	static struct calib_map grid;
	if (image_u8_alloc(&snap.grey, w, h) || image_u8_alloc(&snap.binary, w, h)) {
		fprintf(stderr, "uidemo: out of memory\n");
		return 1;
	}
	if (grid_path[0] && calib_map_load(&grid, grid_path) != 0)
		grid.cols = 0;
	snap.radius = 6;
	snap.radius2 = 2;
	snap.median2 = 3;
	snap.gate = 32;
	snprintf(snap.threshold_mode, sizeof snap.threshold_mode, "bernsen");
	snprintf(snap.threshold2_mode, sizeof snap.threshold2_mode, "bernsen");
	snprintf(snap.threshold3_mode, sizeof snap.threshold3_mode, "mean");
	snap.mean_radius = 16;
	snap.mean_bias = 16;
	snap.finger_sensitivity = 0.5f;
	snap.fps = (float)fps;
	snap.stage_ms[0] = 0.91f;
	snap.stage_ms[1] = 0.42f;
	snap.stage_ms[2] = 0.13f;
	snap.stage_ms[3] = 0.02f;
	snap.stage_ms[4] = 0.01f;
	snap.stage_ms[5] = 1.49f;
	snprintf(snap.backend, sizeof snap.backend, "cpu");
	snprintf(snap.status, sizeof snap.status, "uidemo: synthetic frames");

	struct ui_config uc = {.backend = backend, .width = w, .height = h, .grid = &grid, .grid_path = grid_path};
	int err = 0;
	struct ui *ui = ui_create(&uc, &err);
	if (!ui) {
		fprintf(stderr, "uidemo: no %s front end: %s\n", backend, err_str(err));
		image_u8_free(&snap.grey);
		image_u8_free(&snap.binary);
		return err == ERR_UNSUPPORTED ? 3 : 1;
	}
	uint32_t seed = 1;
	int64_t t0 = clock_now_ns();
	int rc = 0;
	bool quit = false;
	for (long f = 0; !quit && (frames == 0 || f < frames); f++) {
		double t = still ? 1.0 : (double)(clock_now_ns() - t0) * 1e-9;
		snap.frame = (uint64_t)f;
		if (!still || f == 0)
			make_frame(&snap, t, &seed);
		struct ui_command cmds[8];
		int n = ui_poll(ui, &snap, cmds, 8, 1000 / fps);
		for (int i = 0; i < n; i++) {
			const struct ui_command *c = &cmds[i];
			if (c->kind == UI_CMD_SET) {
				printf("SET %s %s\n", c->key, c->value);
				apply_set(&snap, c);
				if (still)
					make_frame(&snap, t, &seed);
			} else {
				printf("%s\n", c->kind >= 1 && c->kind <= UI_CMD_GRID_CHANGED ? kind_names[c->kind] : "?");
			}
			if (c->kind == UI_CMD_PAUSE)
				snap.paused = !snap.paused;
			if (c->kind == UI_CMD_QUIT)
				quit = true;
		}
		fflush(stdout);
	}
	ui_destroy(ui);
	image_u8_free(&snap.grey);
	image_u8_free(&snap.binary);
	return rc;
}
