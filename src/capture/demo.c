/* demo - a built-in moving synthetic scene.
 *
 * The symbols (sprites from the pipeline) sit in a grid of cells over the
 * left three quarters of the frame, each drifting inside its own cell and
 * turning, so they never overlap; two bright round "fingers" move in the
 * strip on the right. Everything is a function of the frame number alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "capture_backend.h"

#define DEMO_MAX 64
#define DEMO_FINGERS 2
#define TWO_PI 6.283185307179586

struct demo_sprite {
	double cell_x, cell_y, amp, scale;
};

struct demo {
	struct frame frame;
	struct image_u8 *out;  /* this read's pixels: frame.img or the caller's buffer */
	struct image_u8 light; /* the uneven illumination, 0..255 */
	int n;
	struct demo_sprite sp[DEMO_MAX];
	double strip_x0, strip_w; /* where the fingers move */
	double finger_r;
	uint64_t t; /* frames made so far */
	struct capture_truth truth[DEMO_MAX + DEMO_FINGERS];
	int n_truth;
};

static void demo_close(struct capture *c)
{
	struct demo *d = c->priv;
	if (!d)
		return;
	image_u8_free(&d->frame.img);
	image_u8_free(&d->light);
	free(d);
	c->priv = NULL;
}

static void demo_layout(struct demo *d, const struct capture_config *cfg, int w, int h)
{
	d->n = cfg->n_sprites < DEMO_MAX ? cfg->n_sprites : DEMO_MAX;
	if (d->n < 0 || !cfg->sprites)
		d->n = 0;
	double region_w = d->n ? w * 0.75 : 0;
	d->strip_x0 = region_w;
	d->strip_w = w - region_w;
	d->finger_r = h / 40.0 > 6 ? h / 40.0 : 6;
	if (!d->n)
		return;
	int best_cols = 1;
	double best_cell = 0;
	for (int cols = 1; cols <= d->n; cols++) {
		int rows = (d->n + cols - 1) / cols;
		double cell = fmin(region_w / cols, (double)h / rows);
		if (cell > best_cell) {
			best_cell = cell;
			best_cols = cols;
		}
	}
	int rows = (d->n + best_cols - 1) / best_cols;
	double cw = region_w / best_cols, ch = (double)h / rows;
	for (int i = 0; i < d->n; i++) {
		const struct image_u8 *s = &cfg->sprites[i];
		double diag = sqrt((double)s->width * s->width + (double)s->height * s->height);
		double amp = best_cell * 0.05;
		double scale = (best_cell * 0.92 - 2 * amp) / (diag > 1 ? diag : 1);
		d->sp[i] = (struct demo_sprite){
			.cell_x = (i % best_cols + 0.5) * cw,
			.cell_y = (i / best_cols + 0.5) * ch,
			.amp = amp,
			.scale = scale < 1 ? scale : 1,
		};
	}
}

static int demo_open(struct capture *c, const char *arg)
{
	(void)arg;
	const struct capture_config *cfg = &c->cfg;
	int w = cfg->width > 0 ? cfg->width : 640;
	int h = cfg->height > 0 ? cfg->height : 480;
	struct demo *d = calloc(1, sizeof *d);
	if (!d)
		return ERR_NOMEM;
	c->priv = d;
	int e = image_u8_alloc(&d->frame.img, w, h);
	if (!e)
		e = image_u8_alloc(&d->light, w, h);
	if (e) {
		log_error("capture: demo: cannot make a %dx%d frame", w, h);
		demo_close(c);
		return e;
	}
	for (int i = 0; i < cfg->n_sprites && i < DEMO_MAX && cfg->sprites; i++)
		if (!cfg->sprites[i].data || cfg->sprites[i].width < 1 || cfg->sprites[i].height < 1) {
			log_error("capture: demo: sprite %d is empty", i);
			demo_close(c);
			return ERR_CONFIG;
		}
	/* A lamp off to the upper left and a darker rim, as under a real table. */
	for (int y = 0; y < h; y++) {
		uint8_t *row = image_u8_row(&d->light, y);
		for (int x = 0; x < w; x++) {
			double dx = (x - 0.35 * w) / w, dy = (y - 0.3 * h) / h;
			double v = 235 - 150 * (dx * dx + dy * dy) - 25.0 * x / w;
			row[x] = (uint8_t)(v < 60 ? 60 : v);
		}
	}
	demo_layout(d, cfg, w, h);
	snprintf(d->frame.name, sizeof d->frame.name, "demo");
	c->fps = cfg->fps > 0 ? cfg->fps : 30;
	c->finite = false;
	snprintf(c->desc, sizeof c->desc, "demo %dx%d, %d symbols, %d fingers", w, h, d->n,
		 DEMO_FINGERS);
	return 0;
}

static uint32_t hash3(uint32_t x, uint32_t y, uint32_t z)
{
	uint32_t v = x * 0x9e3779b1u ^ y * 0x85ebca77u ^ z * 0xc2b2ae3du;
	v ^= v >> 15;
	v *= 0x2c1b3c6du;
	v ^= v >> 12;
	return v;
}

/* The sprite is printed paper: its white reflects the local light, its black
 * a little of it. */
static void draw_sprite(struct demo *d, const struct image_u8 *s, double cx, double cy,
			double angle, double scale)
{
	struct image_u8 *img = d->out;
	double co = cos(angle), si = sin(angle);
	double half = 0.5 * sqrt((double)s->width * s->width + (double)s->height * s->height) * scale;
	int x0 = (int)floor(cx - half), x1 = (int)ceil(cx + half);
	int y0 = (int)floor(cy - half), y1 = (int)ceil(cy + half);
	image_u8_clip_box(img, &x0, &y0, &x1, &y1);
	double uc = (s->width - 1) * 0.5, vc = (s->height - 1) * 0.5;
	for (int y = y0; y <= y1; y++) {
		uint8_t *row = image_u8_row(img, y);
		const uint8_t *lrow = image_u8_row(&d->light, y);
		for (int x = x0; x <= x1; x++) {
			double dx = x - cx, dy = y - cy;
			/* Inverse of a clockwise-on-screen turn by `angle`. */
			double u = (dx * co + dy * si) / scale + uc;
			double v = (-dx * si + dy * co) / scale + vc;
			if (u < -0.5 || v < -0.5 || u > s->width - 0.5 || v > s->height - 0.5)
				continue;
			double val = image_u8_sample(s, u, v);
			row[x] = (uint8_t)(lrow[x] * (0.08 + 0.92 * val / 255.0) + 0.5);
		}
	}
}

static void draw_finger(struct demo *d, double cx, double cy, double r)
{
	struct image_u8 *img = d->out;
	int x0 = (int)floor(cx - r - 2), x1 = (int)ceil(cx + r + 2);
	int y0 = (int)floor(cy - r - 2), y1 = (int)ceil(cy + r + 2);
	for (int y = y0 < 0 ? 0 : y0; y <= y1 && y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = x0 < 0 ? 0 : x0; x <= x1 && x < img->width; x++) {
			double dist = sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy));
			double a = r - dist + 0.5;
			if (a <= 0)
				continue;
			if (a > 1)
				a = 1;
			row[x] = (uint8_t)(row[x] + (245 - row[x]) * a + 0.5);
		}
	}
}

static int demo_read(struct capture *c, struct frame **out)
{
	struct demo *d = c->priv;
	struct image_u8 *img = d->out = capture_target(c, &d->frame.img, d->frame.img.width, d->frame.img.height);
	double t = (double)d->t / c->fps;
	uint32_t ft = (uint32_t)d->t;
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		const uint8_t *lrow = image_u8_row(&d->light, y);
		for (int x = 0; x < img->width; x++)
			row[x] = (uint8_t)(lrow[x] * 45 / 100);
	}
	d->n_truth = 0;
	for (int i = 0; i < d->n; i++) {
		const struct demo_sprite *sp = &d->sp[i];
		double cx = sp->cell_x + sp->amp * sin(0.7 * t + 1.3 * i);
		double cy = sp->cell_y + sp->amp * sin(0.53 * t + 2.1 * i);
		double a = 0.4 * i + (0.35 + 0.1 * i) * t * (i % 2 ? -1 : 1);
		a = fmod(a, TWO_PI);
		if (a < 0)
			a += TWO_PI;
		const struct image_u8 *s = &c->cfg.sprites[i];
		draw_sprite(d, s, cx, cy, a, sp->scale);
		d->truth[d->n_truth++] = (struct capture_truth){
			.kind = CAPTURE_TRUTH_SYMBOL,
			.id = c->cfg.sprite_ids ? c->cfg.sprite_ids[i] : i,
			.x_px = cx,
			.y_px = cy,
			.angle_rad = a,
			.radius_px = 0.5 * (s->width > s->height ? s->width : s->height) * sp->scale,
		};
	}
	double r = d->finger_r;
	for (int k = 0; k < DEMO_FINGERS; k++) {
		double cx = d->strip_x0 + d->strip_w * (0.5 + (0.5 - (r + 2) / d->strip_w) * sin(0.9 * t + 2.0 * k));
		double cy = img->height * 0.5 + (img->height * 0.5 - r - 2) * sin(0.6 * t + 2.4 * k + 0.5);
		draw_finger(d, cx, cy, r);
		d->truth[d->n_truth++] = (struct capture_truth){
			.kind = CAPTURE_TRUTH_FINGER, .id = k, .x_px = cx, .y_px = cy, .radius_px = r,
		};
	}
	/* A little sensor noise, so nothing downstream relies on flat areas. */
	for (int y = 0; y < img->height; y++) {
		uint8_t *row = image_u8_row(img, y);
		for (int x = 0; x < img->width; x++) {
			int v = row[x] + (int)(hash3((uint32_t)x, (uint32_t)y, ft) % 7) - 3;
			row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	d->t++;
	d->frame.t_capture_ns = 0;
	*out = &d->frame;
	return 0;
}

static int demo_truth(const struct capture *c, struct capture_truth *out, int cap)
{
	const struct demo *d = c->priv;
	int n = d->n_truth < cap ? d->n_truth : cap;
	memcpy(out, d->truth, (size_t)(n > 0 ? n : 0) * sizeof *out);
	return n > 0 ? n : 0;
}

const struct capture_backend capture_backend_demo = {
	.name = "demo", .open = demo_open, .read = demo_read, .close = demo_close,
	.truth = demo_truth,
};
