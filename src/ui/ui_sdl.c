#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "../core/err.h"
#include "../core/log.h"
#include "../core/path.h"
#include "../core/calib.h"
#include "ui_backend.h"
#include "ui_font.h"
#include "ui_grid.h"
#include "ui_keymap.h"

#define SDL_TITLE "tabletrack - calibration window (H for help)"
#define MESSAGE_MS 2500
#define MAX_WINDOW_W 1280
#define MAX_WINDOW_H 900
#define GRAB_RADIUS_PX 24
#define PATH_CAP 512

struct rgb {
	uint8_t r, g, b;
};

/* Saturated colours, never grey, so a screenshot of the binary view can tell
 * overlay from image by colour alone. */
static const struct rgb col_decoded = {0, 230, 0};
static const struct rgb col_fuzzy = {255, 220, 0};
static const struct rgb col_root = {255, 128, 0};
static const struct rgb col_predicted = {255, 0, 255};
static const struct rgb col_cursor = {0, 220, 255};
static const struct rgb col_blob = {80, 120, 255};
static const struct rgb col_outline = {255, 150, 40};
static const struct rgb col_touch = {0, 255, 160};
static const struct rgb col_hover = {200, 90, 255};
static const struct rgb col_raw = {255, 40, 40};
static const struct rgb col_recognised = {255, 255, 0};
static const struct rgb col_grid = {255, 80, 160};
static const struct rgb col_grid_sel = {255, 0, 0};
static const struct rgb col_text = {255, 255, 255};
static const struct rgb col_dim = {170, 170, 170};
static const struct rgb col_menu_sel = {255, 220, 0};

struct ui_sdl {
	struct ui base;
	SDL_Window *win;
	SDL_Renderer *ren;
	SDL_Texture *frame_tex;  /* ARGB8888 streaming, frame-sized */
	SDL_Texture *font_tex;   /* every glyph once, white on transparent */
	int tex_w, tex_h;
	uint32_t *remap;         /* preview table, tex_w * tex_h */
	int remap_stride;        /* stride the table was built for; 0 = stale */
	uint32_t grey_argb[256];
	struct ui_state st;
	struct ui_tunables tun, tun_seen;
	bool have_tun;
	struct calib_map *grid;
	struct calib_map own_grid; /* used when the caller gives none */
	struct calib_map saved;    /* the grid as last loaded or saved */
	char grid_path[PATH_CAP];
	char config_path[PATH_CAP];
	uint64_t frame_drawn;
	bool drawn_any, dirty, fullscreen;
	char message[128];
	uint32_t message_until;
	int drag_index;          /* grid point under the mouse, -1 none */
	bool drag_moved;
	SDL_Rect img;            /* where the frame lands in the window */
	int text_scale;
	uint64_t n_draws;
	double draw_ms_sum;
};

static void set_message(struct ui_sdl *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_message(struct ui_sdl *u, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->message, sizeof u->message, fmt, ap);
	va_end(ap);
	u->message_until = SDL_GetTicks() + MESSAGE_MS;
	u->dirty = true;
}

/* Texture and preview table follow the frame size; this is the only place
 * they are (re)allocated, never per frame. */
static int ensure_frame_size(struct ui_sdl *u, int w, int h)
{
	if (w == u->tex_w && h == u->tex_h && u->frame_tex)
		return 0;
	if (w < 1 || h < 1 || w > IMAGE_MAX_SIDE || h > IMAGE_MAX_SIDE)
		return ERR_SIZE;
	if (u->frame_tex)
		SDL_DestroyTexture(u->frame_tex);
	u->frame_tex = SDL_CreateTexture(u->ren, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, w, h);
	free(u->remap);
	u->remap = malloc((size_t)w * (size_t)h * sizeof *u->remap);
	u->remap_stride = 0;
	if (!u->frame_tex || !u->remap) {
		log_error("ui: cannot allocate a %dx%d frame texture: %s", w, h, SDL_GetError());
		if (u->frame_tex)
			SDL_DestroyTexture(u->frame_tex);
		free(u->remap);
		u->frame_tex = NULL;
		u->remap = NULL;
		u->tex_w = u->tex_h = 0;
		return ERR_NOMEM;
	}
	u->tex_w = w;
	u->tex_h = h;
	u->st.frame_w = w;
	u->st.frame_h = h;
	return 0;
}

static int create_font_texture(struct ui_sdl *u)
{
	enum { N = UI_FONT_LAST - UI_FONT_FIRST + 1, W = N * UI_FONT_CELL_W, H = UI_FONT_CELL_H };
	uint32_t *px = calloc((size_t)W * H, sizeof *px);
	if (!px)
		return ERR_NOMEM;
	for (int i = 0; i < N; i++)
		for (int y = 0; y < UI_FONT_GLYPH_H; y++)
			for (int x = 0; x < UI_FONT_GLYPH_W; x++)
				if (ui_font_pixel((char)(UI_FONT_FIRST + i), x, y))
					px[y * W + i * UI_FONT_CELL_W + x] = 0xffffffffu;
	u->font_tex = SDL_CreateTexture(u->ren, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, W, H);
	int rc = 0;
	if (!u->font_tex || SDL_UpdateTexture(u->font_tex, NULL, px, W * 4) != 0) {
		log_error("ui: cannot create the font texture: %s", SDL_GetError());
		rc = ERR_NOMEM;
	} else {
		SDL_SetTextureBlendMode(u->font_tex, SDL_BLENDMODE_BLEND);
	}
	free(px);
	return rc;
}

static void sdl_destroy(struct ui *ui)
{
	struct ui_sdl *u = (struct ui_sdl *)ui;
	if (!u)
		return;
	if (u->n_draws)
		log_debug("ui: %llu frames drawn, %.2f ms a frame", (unsigned long long)u->n_draws,
			  u->draw_ms_sum / (double)u->n_draws);
	if (u->frame_tex)
		SDL_DestroyTexture(u->frame_tex);
	if (u->font_tex)
		SDL_DestroyTexture(u->font_tex);
	if (u->ren)
		SDL_DestroyRenderer(u->ren);
	if (u->win)
		SDL_DestroyWindow(u->win);
	free(u->remap);
	free(u);
	SDL_QuitSubSystem(SDL_INIT_VIDEO);
}

static struct ui *sdl_create(const struct ui_config *cfg, int *err)
{
	const char *x11 = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
	if ((!x11 || !*x11) && (!wl || !*wl)) {
		*err = ERR_UNSUPPORTED;
		return NULL;
	}
	/* The daemon owns SIGINT/SIGTERM (service.h); SDL must not take them. */
	SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
	if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
		log_debug("ui: SDL_Init: %s", SDL_GetError());
		*err = ERR_UNSUPPORTED;
		return NULL;
	}
	struct ui_sdl *u = calloc(1, sizeof *u);
	if (!u) {
		SDL_QuitSubSystem(SDL_INIT_VIDEO);
		*err = ERR_NOMEM;
		return NULL;
	}
	int fw = cfg->width > 0 ? cfg->width : 640, fh = cfg->height > 0 ? cfg->height : 480;
	ui_state_init(&u->st, fw, fh);
	u->drag_index = -1;
	u->dirty = true;
	u->fullscreen = cfg->fullscreen;
	for (int i = 0; i < 256; i++)
		u->grey_argb[i] = 0xff000000u | (uint32_t)i << 16 | (uint32_t)i << 8 | (uint32_t)i;

	u->grid = cfg->grid ? cfg->grid : &u->own_grid;
	if (u->grid->cols < 2 || u->grid->rows < 2 || u->grid->cols > CALIB_MAX_SIDE || u->grid->rows > CALIB_MAX_SIDE ||
	    u->grid->identity) {
		/* An identity map of any size means "no correction": give the user
		 * the grid size that fits this camera's aspect to start from. */
		int cols, rows;
		ui_grid_default_size(fw, fh, &cols, &rows);
		ui_grid_init(u->grid, cols, rows);
	}
	u->saved = *u->grid;
	u->st.sel_col = u->grid->cols / 2;
	u->st.sel_row = u->grid->rows / 2;
	snprintf(u->grid_path, sizeof u->grid_path, "%s", cfg->grid_path ? cfg->grid_path : "");
	snprintf(u->config_path, sizeof u->config_path, "%s", cfg->config_path ? cfg->config_path : "");

	/* Start at frame size plus the status bar, halved until it fits. */
	int ww = fw, wh = fh;
	while (ww > MAX_WINDOW_W || wh > MAX_WINDOW_H) {
		ww /= 2;
		wh /= 2;
	}
	int bar_h = 2 * UI_FONT_CELL_H + 8;
	/* Hidden until the renderer exists: an accelerated renderer that needs
	 * another visual makes SDL destroy the window and create another, and
	 * a shown first window would flash up and vanish. */
	Uint32 flags = SDL_WINDOW_RESIZABLE | SDL_WINDOW_HIDDEN | (cfg->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
	u->win = SDL_CreateWindow(SDL_TITLE, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, ww, wh + bar_h, flags);
	if (!u->win) {
		log_debug("ui: SDL_CreateWindow: %s", SDL_GetError());
		*err = ERR_UNSUPPORTED;
		goto fail;
	}
	u->ren = SDL_CreateRenderer(u->win, -1, SDL_RENDERER_ACCELERATED);
	if (!u->ren)
		u->ren = SDL_CreateRenderer(u->win, -1, SDL_RENDERER_SOFTWARE);
	if (!u->ren) {
		log_debug("ui: SDL_CreateRenderer: %s", SDL_GetError());
		*err = ERR_UNSUPPORTED;
		goto fail;
	}
	SDL_ShowWindow(u->win);
	SDL_SetRenderDrawBlendMode(u->ren, SDL_BLENDMODE_BLEND);
	SDL_RendererInfo info;
	if (SDL_GetRendererInfo(u->ren, &info) == 0)
		log_debug("ui: SDL renderer %s, window %dx%d", info.name, ww, wh + bar_h);
	if ((*err = create_font_texture(u)) != 0)
		goto fail;
	if ((*err = ensure_frame_size(u, fw, fh)) != 0)
		goto fail;
	return &u->base;
fail:
	sdl_destroy(&u->base);
	return NULL;
}

/* --- drawing ---------------------------------------------------------- */

static void set_colour(struct ui_sdl *u, struct rgb c, uint8_t a)
{
	SDL_SetRenderDrawColor(u->ren, c.r, c.g, c.b, a);
}

static void draw_text(struct ui_sdl *u, int x, int y, const char *s, struct rgb c)
{
	int sc = u->text_scale;
	SDL_SetTextureColorMod(u->font_tex, c.r, c.g, c.b);
	int x0 = x;
	for (; *s; s++) {
		if (*s == '\n') {
			x = x0;
			y += UI_FONT_CELL_H * sc;
			continue;
		}
		unsigned char ch = (unsigned char)*s;
		if (ch < UI_FONT_FIRST || ch > UI_FONT_LAST)
			ch = '?';
		SDL_Rect src = {(ch - UI_FONT_FIRST) * UI_FONT_CELL_W, 0, UI_FONT_CELL_W, UI_FONT_CELL_H};
		SDL_Rect dst = {x, y, UI_FONT_CELL_W * sc, UI_FONT_CELL_H * sc};
		if (ch != ' ')
			SDL_RenderCopy(u->ren, u->font_tex, &src, &dst);
		x += UI_FONT_CELL_W * sc;
	}
}

/* Text with a black outline, readable over any image. */
static void draw_label(struct ui_sdl *u, int x, int y, const char *s, struct rgb c)
{
	static const struct rgb black = {0, 0, 0};
	draw_text(u, x + 1, y + 1, s, black);
	draw_text(u, x, y, s, c);
}

static void draw_panel(struct ui_sdl *u, int x, int y, int w, int h)
{
	SDL_SetRenderDrawColor(u->ren, 0, 0, 0, 190);
	SDL_Rect r = {x, y, w, h};
	SDL_RenderFillRect(u->ren, &r);
}

/* Frame-normalised (x, y) -> window pixel. */
static SDL_FPoint to_window(const struct ui_sdl *u, float x, float y)
{
	SDL_FPoint p = {(float)u->img.x + x * (float)u->img.w, (float)u->img.y + y * (float)u->img.h};
	return p;
}

/* Lines two pixels wide, so they stay visible on a busy camera image. */
static void draw_poly(struct ui_sdl *u, const SDL_FPoint *p, int n, bool closed)
{
	SDL_FPoint q[34];
	if (n > 32)
		n = 32;
	for (int off = 0; off < 2; off++) {
		for (int i = 0; i < n; i++) {
			q[i].x = p[i].x + (float)off;
			q[i].y = p[i].y + (float)off;
		}
		int m = n;
		if (closed)
			q[m++] = q[0];
		SDL_RenderDrawLinesF(u->ren, q, m);
	}
}

static void draw_circle(struct ui_sdl *u, SDL_FPoint c, float r)
{
	SDL_FPoint p[24];
	for (int i = 0; i < 24; i++) {
		float a = (float)i * (float)(2.0 * M_PI / 24.0);
		p[i].x = c.x + r * cosf(a);
		p[i].y = c.y + r * sinf(a);
	}
	draw_poly(u, p, 24, true);
}

/* A w x h box centred on c, turned by angle (clockwise on screen). */
static void draw_box(struct ui_sdl *u, SDL_FPoint c, float w, float h, float angle)
{
	float ca = cosf(angle), sa = sinf(angle);
	static const float corner[4][2] = {{-0.5f, -0.5f}, {0.5f, -0.5f}, {0.5f, 0.5f}, {-0.5f, 0.5f}};
	SDL_FPoint p[4];
	for (int i = 0; i < 4; i++) {
		float dx = corner[i][0] * w, dy = corner[i][1] * h;
		p[i].x = c.x + dx * ca - dy * sa;
		p[i].y = c.y + dx * sa + dy * ca;
	}
	draw_poly(u, p, 4, true);
}

/* Angle 0 points up, growing clockwise on screen (tracked.h). */
static void draw_arrow(struct ui_sdl *u, SDL_FPoint c, float len, float angle)
{
	float dx = sinf(angle), dy = -cosf(angle);
	SDL_FPoint tip = {c.x + dx * len, c.y + dy * len};
	SDL_FPoint shaft[2] = {c, tip};
	draw_poly(u, shaft, 2, false);
	float h = fmaxf(4.0f, len * 0.3f);
	SDL_FPoint head[3] = {
		{tip.x - h * (dx * 0.87f - dy * 0.5f), tip.y - h * (dy * 0.87f + dx * 0.5f)},
		tip,
		{tip.x - h * (dx * 0.87f + dy * 0.5f), tip.y - h * (dy * 0.87f - dx * 0.5f)},
	};
	draw_poly(u, head, 3, false);
}

/* Tracked positions are table coordinates after inversion and calibration;
 * undo both to find the place on the camera image. The angle only needs
 * the inversions undone; the grid's small rotation is not worth showing. */
static SDL_FPoint tracked_to_window(const struct ui_sdl *u, float x, float y)
{
	if (u->tun.invert_x)
		x = 1.0f - x;
	if (u->tun.invert_y)
		y = 1.0f - y;
	if (!u->st.preview)
		ui_grid_table_to_camera(u->grid, x, y, &x, &y);
	return to_window(u, x, y);
}

static float tracked_angle(const struct ui_sdl *u, float a)
{
	if (u->tun.invert_angle)
		a = -a;
	if (u->tun.invert_x)
		a = -a;
	if (u->tun.invert_y)
		a = (float)M_PI - a;
	return a;
}

static struct rgb how_colour(uint8_t how)
{
	switch (how) {
	case TRACKED_FUZZY: return col_fuzzy;
	case TRACKED_ROOT: return col_root;
	case TRACKED_PREDICTED: return col_predicted;
	default: return col_decoded;
	}
}

static void draw_outlines(struct ui_sdl *u, const struct snapshot *s);
/* Objects recognised by their look: the outline of the learned picture
 * where the last recognition found it (frame pixels, like the raw
 * detections) and its name; the tracked object itself is drawn with the
 * symbols. */
static void draw_recognised(struct ui_sdl *u, const struct snapshot *s)
{
	if (s->grey.width <= 0)
		return;
	float kx = 1.0f / (float)s->grey.width, ky = 1.0f / (float)s->grey.height;
	char buf[48];
	set_colour(u, col_recognised, 255);
	for (int i = 0; i < s->n_recognised && i < SNAPSHOT_MAX_RECOGNISED; i++) {
		const struct snapshot_recognised *r = &s->recognised[i];
		SDL_FPoint q[4];
		for (int k = 0; k < 4; k++) {
			float x = r->corners[k][0] * kx, y = r->corners[k][1] * ky;
			if (u->st.preview)
				calib_map_apply(u->grid, &x, &y);
			q[k] = to_window(u, x, y);
		}
		draw_poly(u, q, 4, true);
		snprintf(buf, sizeof buf, "%s %d", r->name, (int)r->id);
		draw_label(u, (int)q[0].x + 3, (int)q[0].y + 3, buf, col_recognised);
	}
}

/* The box O would learn (being dragged, or complete). */
static void draw_learn_box(struct ui_sdl *u)
{
	const float *b = u->st.box;
	SDL_FPoint q[4] = {to_window(u, b[0], b[1]), to_window(u, b[2], b[1]), to_window(u, b[2], b[3]),
			   to_window(u, b[0], b[3])};
	set_colour(u, col_recognised, 255);
	draw_poly(u, q, 4, true);
	if (u->st.has_box)
		draw_label(u, (int)fminf(q[0].x, q[2].x) + 3, (int)fminf(q[0].y, q[2].y) + 3, "O: learn", col_recognised);
}

static void draw_overlay(struct ui_sdl *u, const struct snapshot *s)
{
	char buf[48];
	float sx = (float)u->img.w;
	for (int i = 0; i < s->n_blobs && i < SNAPSHOT_MAX_ITEMS; i++) {
		const struct tracked_blob *b = &s->blobs[i];
		SDL_FPoint c = tracked_to_window(u, b->x, b->y);
		set_colour(u, col_blob, 255);
		draw_box(u, c, fmaxf(b->w * sx, 4.0f), fmaxf(b->h * (float)u->img.h, 4.0f), tracked_angle(u, b->angle));
		if (u->st.verbose) {
			snprintf(buf, sizeof buf, "b%u", (unsigned)b->session_id);
			draw_label(u, (int)c.x + 4, (int)c.y + 4, buf, col_blob);
		}
	}
	for (int i = 0; i < s->n_cursors && i < SNAPSHOT_MAX_ITEMS; i++) {
		const struct tracked_cursor *k = &s->cursors[i];
		SDL_FPoint c = tracked_to_window(u, k->x, k->y);
		set_colour(u, col_cursor, 255);
		draw_circle(u, c, fmaxf(0.5f * k->diameter * sx, 4.0f));
		if (u->st.verbose) {
			snprintf(buf, sizeof buf, "c%u", (unsigned)k->session_id);
			draw_label(u, (int)c.x + 6, (int)c.y + 6, buf, col_cursor);
		}
	}
	for (int i = 0; i < s->n_objects && i < SNAPSHOT_MAX_ITEMS; i++) {
		const struct tracked_object *o = &s->objects[i];
		struct rgb c = how_colour(o->how);
		SDL_FPoint p = tracked_to_window(u, o->x, o->y);
		float side = o->size > 0 ? o->size * sx : 24.0f;
		float a = tracked_angle(u, o->angle);
		set_colour(u, c, 255);
		/* A circle, not a box: the angle points at the black leaves, not
		 * along the card's edges, so a turned box would look skewed. */
		draw_circle(u, p, side * 0.5f);
		draw_arrow(u, p, side * 0.6f, a);
		if (u->st.verbose)
			snprintf(buf, sizeof buf, "%d s%u %.0f", (int)o->class_id, (unsigned)o->session_id,
				 (double)(a * (float)(180.0 / M_PI)));
		else
			snprintf(buf, sizeof buf, "%d", (int)o->class_id);
		draw_label(u, (int)(p.x + side * 0.5f) + 3, (int)(p.y - side * 0.5f), buf, c);
	}
	draw_outlines(u, s);
	draw_recognised(u, s);
	if (u->st.verbose && s->grey.width > 0) {
		float kx = 1.0f / (float)s->grey.width, ky = 1.0f / (float)s->grey.height;
		set_colour(u, col_raw, 255);
		for (int i = 0; i < s->n_fids && i < SNAPSHOT_MAX_ITEMS; i++) {
			float x = s->fids[i].x * kx, y = s->fids[i].y * ky;
			if (u->st.preview)
				calib_map_apply(u->grid, &x, &y);
			SDL_FPoint c = to_window(u, x, y);
			SDL_FPoint h[2] = {{c.x - 6, c.y}, {c.x + 6, c.y}}, v[2] = {{c.x, c.y - 6}, {c.x, c.y + 6}};
			draw_poly(u, h, 2, false);
			draw_poly(u, v, 2, false);
		}
	}
}

/* Camera pixel (px) to the window, through the preview's correction. */
static SDL_FPoint pixel_to_window(const struct ui_sdl *u, const struct snapshot *s, float px, float py)
{
	float x = px / (float)s->grey.width, y = py / (float)s->grey.height;
	if (u->st.preview)
		calib_map_apply(u->grid, &x, &y);
	return to_window(u, x, y);
}

/* The outline stage's outlines (holes dimmer) and fingers: a touching one
 * a double ring, a hovering one a single ring in another colour, a tip of
 * a hand with a line to the hand's centre. */
static void draw_outlines(struct ui_sdl *u, const struct snapshot *s)
{
	if (s->grey.width <= 0)
		return;
	for (int i = 0; i < s->n_contours && i < SNAPSHOT_MAX_ITEMS; i++) {
		const struct contour_det *c = &s->contours[i];
		set_colour(u, col_outline, c->hole ? 150 : 255);
		SDL_FPoint q[32];
		/* In pieces of up to 32 points that share their ends, closed. */
		for (int k = 0; k < c->n; k += 31) {
			int m = 0;
			for (int j = k; j <= k + 31 && j <= c->n; j++) {
				const struct contour_point *p = &s->points[c->first + j % c->n];
				q[m++] = pixel_to_window(u, s, p->x, p->y);
			}
			draw_poly(u, q, m, false);
		}
	}
	float sx = (float)u->img.w / (float)s->grey.width;
	for (int i = 0; i < s->n_fingers && i < SNAPSHOT_MAX_ITEMS; i++) {
		const struct finger_det *f = &s->fingers[i];
		SDL_FPoint c = pixel_to_window(u, s, f->x, f->y);
		float r = fmaxf(0.5f * f->diameter_px * sx, 4.0f);
		set_colour(u, f->hover ? col_hover : col_touch, 255);
		draw_circle(u, c, r);
		if (!f->hover)
			draw_circle(u, c, r * 0.5f);
		if (u->st.verbose) {
			char buf[24];
			snprintf(buf, sizeof buf, "%s %.2f", f->hover ? "hover" : "touch", (double)f->sharpness);
			draw_label(u, (int)(c.x + r) + 3, (int)c.y - 4, buf, f->hover ? col_hover : col_touch);
		}
	}
}

static void draw_grid(struct ui_sdl *u)
{
	const struct calib_map *m = u->grid;
	SDL_FPoint row[CALIB_MAX_SIDE];
	set_colour(u, col_grid, 255);
	/* In the preview the image is already corrected: the grid lies regular. */
	for (int r = 0; r < m->rows; r++) {
		for (int c = 0; c < m->cols; c++) {
			float x = m->pts[r * m->cols + c][0], y = m->pts[r * m->cols + c][1];
			if (u->st.preview)
				ui_grid_regular_point(m, c, r, &x, &y);
			row[c] = to_window(u, x, y);
		}
		SDL_RenderDrawLinesF(u->ren, row, m->cols);
	}
	for (int c = 0; c < m->cols; c++) {
		for (int r = 0; r < m->rows; r++) {
			float x = m->pts[r * m->cols + c][0], y = m->pts[r * m->cols + c][1];
			if (u->st.preview)
				ui_grid_regular_point(m, c, r, &x, &y);
			row[r] = to_window(u, x, y);
		}
		SDL_RenderDrawLinesF(u->ren, row, m->rows);
	}
	for (int r = 0; r < m->rows; r++)
		for (int c = 0; c < m->cols; c++) {
			float x = m->pts[r * m->cols + c][0], y = m->pts[r * m->cols + c][1];
			if (u->st.preview)
				ui_grid_regular_point(m, c, r, &x, &y);
			SDL_FPoint p = to_window(u, x, y);
			bool sel = c == u->st.sel_col && r == u->st.sel_row;
			float h = sel ? 6.0f : 3.0f;
			set_colour(u, sel ? col_grid_sel : col_grid, 255);
			SDL_FRect box = {p.x - h, p.y - h, 2 * h + 1, 2 * h + 1};
			if (!sel) {
				SDL_RenderFillRectF(u->ren, &box);
				continue;
			}
			SDL_RenderDrawRectF(u->ren, &box);
			SDL_FRect inner = {box.x + 1, box.y + 1, box.w - 2, box.h - 2};
			SDL_RenderDrawRectF(u->ren, &inner);
		}
}

static void upload_frame(struct ui_sdl *u, const struct image_u8 *img)
{
	void *pixels;
	int pitch;
	if (SDL_LockTexture(u->frame_tex, NULL, &pixels, &pitch) != 0)
		return;
	if (u->st.preview && u->remap_stride != img->stride) {
		ui_grid_build_remap(u->grid, u->tex_w, u->tex_h, img->stride, u->remap);
		u->remap_stride = img->stride;
	}
	for (int y = 0; y < u->tex_h; y++) {
		uint32_t *dst = (uint32_t *)(void *)((uint8_t *)pixels + (size_t)y * (size_t)pitch);
		if (u->st.preview) {
			const uint32_t *lut = u->remap + (size_t)y * (size_t)u->tex_w;
			for (int x = 0; x < u->tex_w; x++)
				dst[x] = u->grey_argb[img->data[lut[x]]];
		} else {
			const uint8_t *src = image_u8_row(img, y);
			for (int x = 0; x < u->tex_w; x++)
				dst[x] = u->grey_argb[src[x]];
		}
	}
	SDL_UnlockTexture(u->frame_tex);
}

static void layout(struct ui_sdl *u, int ow, int oh, int *bar_h)
{
	u->text_scale = ow >= 1400 ? 2 : 1;
	*bar_h = 2 * UI_FONT_CELL_H * u->text_scale + 8;
	int aw = ow, ah = oh - *bar_h;
	if (ah < 1)
		ah = 1;
	int fw = u->tex_w > 0 ? u->tex_w : 640, fh = u->tex_h > 0 ? u->tex_h : 480;
	/* Fit the frame, aspect kept; exact multiples stay pixel-sharp. */
	if ((long)aw * fh <= (long)ah * fw) {
		u->img.w = aw;
		u->img.h = (int)((long)aw * fh / fw);
	} else {
		u->img.h = ah;
		u->img.w = (int)((long)ah * fw / fh);
	}
	u->img.x = (aw - u->img.w) / 2;
	u->img.y = (ah - u->img.h) / 2;
}

static void draw_menu(struct ui_sdl *u)
{
	char line[64];
	int n = ui_menu_lines(u->st.menu), sc = u->text_scale, lh = UI_FONT_CELL_H * sc;
	int w = 34 * UI_FONT_CELL_W * sc, h = (n + 2) * lh + 8;
	int x = u->img.x + 8, y = u->img.y + 8;
	draw_panel(u, x, y, w, h);
	draw_text(u, x + 4, y + 4, ui_menu_title(u->st.menu), col_text);
	for (int i = 0; i < n; i++) {
		ui_menu_line(u->st.menu, i, &u->tun, line, (int)sizeof line);
		bool sel = i == u->st.menu_item;
		draw_text(u, x + 4, y + 4 + (i + 1) * lh, sel ? ">" : " ", col_menu_sel);
		draw_text(u, x + 4 + 2 * UI_FONT_CELL_W * sc, y + 4 + (i + 1) * lh, line, sel ? col_menu_sel : col_text);
	}
	draw_text(u, x + 4, y + 4 + (n + 1) * lh, "up/down, left/right, enter", col_dim);
}

static void draw_help(struct ui_sdl *u)
{
	const char *help = ui_keymap_help();
	int sc = u->text_scale;
	int w = ui_font_text_width(help, sc) + 12, h = ui_font_text_height(help, sc) + 12;
	int x = u->img.x + (u->img.w - w) / 2, y = u->img.y + (u->img.h - h) / 2;
	draw_panel(u, x < 0 ? 0 : x, y < 0 ? 0 : y, w, h);
	draw_text(u, (x < 0 ? 0 : x) + 6, (y < 0 ? 0 : y) + 6, help, col_text);
}

static void status_lines(struct ui_sdl *u, const struct snapshot *s, char *l1, size_t c1, char *l2, size_t c2)
{
	if (s)
		snprintf(l1, c1,
			 "%.1f fps | thr %.2f seg %.2f match %.2f track %.2f tuio %.2f = %.2f ms"
			 " | drop %llu bad %llu | %s%s",
			 (double)s->fps, (double)s->stage_ms[0], (double)s->stage_ms[1], (double)s->stage_ms[2],
			 (double)s->stage_ms[3], (double)s->stage_ms[4], (double)s->stage_ms[5],
			 (unsigned long long)s->dropped_frames, (unsigned long long)s->bad_frames,
			 s->backend[0] ? s->backend : "cpu", s->paused ? " | PAUSED" : "");
	else
		snprintf(l1, c1, "tabletrack | waiting for frames");
	if (u->message[0] && SDL_TICKS_PASSED(SDL_GetTicks(), u->message_until))
		u->message[0] = '\0';
	static const char *const view_names[] = {"camera", "binary", "off"};
	if (u->message[0])
		snprintf(l2, c2, "%s", u->message);
	else if (u->st.calib)
		snprintf(l2, c2,
			 "CALIBRATION point %d,%d (%.3f %.3f) %s%s | H: keys",
			 u->st.sel_col, u->st.sel_row, (double)u->grid->pts[u->st.sel_row * u->grid->cols + u->st.sel_col][0],
			 (double)u->grid->pts[u->st.sel_row * u->grid->cols + u->st.sel_col][1],
			 u->st.precise ? "precise 1px" : "quick 1%", u->st.preview ? " PREVIEW" : "");
	else
		snprintf(l2, c2, "%s%sview %s | objects %d fingers %d blobs %d | H help", s && s->status[0] ? s->status : "",
			 s && s->status[0] ? " | " : "", view_names[u->st.view], s ? (int)s->n_objects : 0,
			 s ? (int)s->n_cursors : 0, s ? (int)s->n_blobs : 0);
}

static void draw(struct ui_sdl *u, const struct snapshot *s)
{
	Uint64 t0 = SDL_GetPerformanceCounter();
	int ow, oh, bar_h;
	if (SDL_GetRendererOutputSize(u->ren, &ow, &oh) != 0)
		return;
	if (s && s->grey.data && s->grey.width > 0 && ensure_frame_size(u, s->grey.width, s->grey.height) != 0)
		return;
	layout(u, ow, oh, &bar_h);
	SDL_SetRenderDrawColor(u->ren, 24, 24, 32, 255);
	SDL_RenderClear(u->ren);

	bool shown = false;
	if (s && u->st.view != UI_VIEW_OFF) {
		const struct image_u8 *img = u->st.view == UI_VIEW_BINARY ? &s->binary : &s->grey;
		if (img->data && img->width == u->tex_w && img->height == u->tex_h) {
			upload_frame(u, img);
			/* Nearest for the binary view keeps it strictly black and white. */
			SDL_SetTextureScaleMode(u->frame_tex, u->st.view == UI_VIEW_BINARY ? SDL_ScaleModeNearest
										   : SDL_ScaleModeLinear);
			SDL_RenderCopy(u->ren, u->frame_tex, NULL, &u->img);
			shown = true;
		}
	}
	if (shown)
		draw_overlay(u, s);
	else
		draw_label(u, u->img.x + 16, u->img.y + u->img.h / 2,
			   u->st.view == UI_VIEW_OFF ? "display off (N to show)" : "no image yet", col_dim);
	if (u->st.calib)
		draw_grid(u);
	else if (u->st.has_box || u->st.dragging_box)
		draw_learn_box(u);
	if (u->st.menu != UI_MENU_NONE)
		draw_menu(u);
	if (u->st.help)
		draw_help(u);

	char l1[256], l2[256];
	status_lines(u, s, l1, sizeof l1, l2, sizeof l2);
	SDL_SetRenderDrawColor(u->ren, 0, 0, 0, 255);
	SDL_Rect bar = {0, oh - bar_h, ow, bar_h};
	SDL_RenderFillRect(u->ren, &bar);
	draw_text(u, 4, oh - bar_h + 3, l1, col_text);
	draw_text(u, 4, oh - bar_h + 4 + UI_FONT_CELL_H * u->text_scale, l2,
		  u->message[0] ? col_menu_sel : col_dim);
	SDL_RenderPresent(u->ren);

	u->n_draws++;
	u->draw_ms_sum += (double)(SDL_GetPerformanceCounter() - t0) * 1000.0 / (double)SDL_GetPerformanceFrequency();
	u->dirty = false;
	if (s) {
		u->frame_drawn = s->frame;
		u->drawn_any = true;
	}
}

/* --- input ------------------------------------------------------------ */

static int translate_key(SDL_Keycode k)
{
	if (k >= SDLK_a && k <= SDLK_z)
		return 'a' + (int)(k - SDLK_a);
	if (k >= SDLK_0 && k <= SDLK_9)
		return '0' + (int)(k - SDLK_0);
	switch (k) {
	case SDLK_ESCAPE: return UI_KEY_ESC;
	case SDLK_RETURN:
	case SDLK_KP_ENTER: return UI_KEY_ENTER;
	case SDLK_TAB: return UI_KEY_TAB;
	case SDLK_SPACE: return UI_KEY_SPACE;
	case SDLK_UP: return UI_KEY_UP;
	case SDLK_DOWN: return UI_KEY_DOWN;
	case SDLK_LEFT: return UI_KEY_LEFT;
	case SDLK_RIGHT: return UI_KEY_RIGHT;
	case SDLK_F1: return UI_KEY_F1;
	case SDLK_PLUS:
	case SDLK_EQUALS:
	case SDLK_KP_PLUS: return '+';
	case SDLK_MINUS:
	case SDLK_UNDERSCORE:
	case SDLK_KP_MINUS: return '-';
	default: return UI_KEY_NONE;
	}
}

static void apply_actions(struct ui_sdl *u, unsigned actions, struct ui_command *cmds, int cap, int *n)
{
	if (actions & UI_ACT_FULLSCREEN) {
		u->fullscreen = !u->fullscreen;
		SDL_SetWindowFullscreen(u->win, u->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
	}
	if (actions & UI_ACT_GRID_SAVE) {
		if (!u->grid_path[0]) {
			log_warn("calibration grid not saved: no file to write (set grid = FILE, or HOME)");
			set_message(u, "grid NOT saved: no file to write (set grid = FILE)");
		} else {
			int rc = path_make_parent_dirs(u->grid_path);
			if (rc)
				log_error("%s: cannot create its folder: %s", u->grid_path,
					  rc == ERR_IO ? strerror(errno) : err_str(rc));
			else
				rc = calib_map_save(u->grid, u->grid_path);
			if (rc == 0) {
				u->saved = *u->grid;
				log_info("calibration grid saved to %s", u->grid_path);
				set_message(u, "grid saved to %s", u->grid_path);
			} else {
				set_message(u, "grid NOT saved to %s: %s (see the log)", u->grid_path, err_str(rc));
			}
		}
	}
	if (actions & UI_ACT_GRID_LOAD) {
		struct calib_map loaded;
		if (u->grid_path[0] && calib_map_load(&loaded, u->grid_path) == 0) {
			*u->grid = loaded;
			u->saved = loaded;
			set_message(u, "grid reloaded from %s", u->grid_path);
		} else {
			*u->grid = u->saved;
			set_message(u, "grid reverted to the last saved state");
		}
		if (u->st.sel_col >= u->grid->cols)
			u->st.sel_col = u->grid->cols - 1;
		if (u->st.sel_row >= u->grid->rows)
			u->st.sel_row = u->grid->rows - 1;
		actions |= UI_ACT_GRID_EDITED;
		if (*n < cap)
			cmds[(*n)++] = (struct ui_command){.kind = UI_CMD_GRID_CHANGED};
	}
	if (actions & UI_ACT_NO_SELECTION)
		set_message(u, "O: first drag a box around the object with the mouse (at least %d px a side)",
			    UI_LEARN_MIN_PX);
	if (actions & UI_ACT_GRID_EDITED)
		u->remap_stride = 0;
	if (actions)
		u->dirty = true;
}

static void note_commands(struct ui_sdl *u, const struct ui_command *cmds, int n)
{
	for (int i = 0; i < n; i++) {
		switch (cmds[i].kind) {
		case UI_CMD_SET: set_message(u, "%s = %s", cmds[i].key, cmds[i].value); break;
		case UI_CMD_RESET_TRACKING: set_message(u, "tracking reset"); break;
		case UI_CMD_EQUALIZE: set_message(u, "equaliser: capturing the background"); break;
		case UI_CMD_EQUALIZE_RESET: set_message(u, "equaliser reset"); break;
		case UI_CMD_PAUSE: set_message(u, "pause toggled"); break;
		case UI_CMD_LEARN_OBJECT:
			set_message(u, "learning the object in %s (into the objects library; see the log)", cmds[i].value);
			break;
		case UI_CMD_SAVE_CONFIG:
			if (u->config_path[0])
				set_message(u, "saving the configuration to %s", u->config_path);
			else
				set_message(u, "configuration NOT saved: no file to write (--config FILE)");
			break;
		default: break;
		}
	}
}

static bool mouse_to_frame(const struct ui_sdl *u, int mx, int my, float *x, float *y)
{
	if (u->img.w < 1 || u->img.h < 1)
		return false;
	*x = (float)(mx - u->img.x) / (float)u->img.w;
	*y = (float)(my - u->img.y) / (float)u->img.h;
	return true;
}

/* Outside calibration mode the left button drags the box that O learns. */
static void handle_box(struct ui_sdl *u, const SDL_Event *ev)
{
	float x, y;
	if (ev->type == SDL_MOUSEBUTTONDOWN && ev->button.button == SDL_BUTTON_LEFT &&
	    mouse_to_frame(u, ev->button.x, ev->button.y, &x, &y)) {
		ui_box_start(&u->st, x, y);
		u->dirty = true;
	} else if (ev->type == SDL_MOUSEMOTION && u->st.dragging_box &&
		   mouse_to_frame(u, ev->motion.x, ev->motion.y, &x, &y)) {
		ui_box_move(&u->st, x, y);
		u->dirty = true;
	} else if (ev->type == SDL_MOUSEBUTTONUP && ev->button.button == SDL_BUTTON_LEFT && u->st.dragging_box &&
		   mouse_to_frame(u, ev->button.x, ev->button.y, &x, &y)) {
		ui_box_end(&u->st, x, y);
		int px[4];
		if (ui_box_pixels(&u->st, px))
			set_message(u, "box %d,%d - %d,%d: O learns the object in it", px[0], px[1], px[2], px[3]);
		u->dirty = true;
	}
}

static void handle_mouse(struct ui_sdl *u, const SDL_Event *ev, struct ui_command *cmds, int cap, int *n)
{
	if (!u->st.calib) {
		handle_box(u, ev);
		return;
	}
	if (u->st.preview)
		return;
	float x, y;
	struct calib_map *m = u->grid;
	if (ev->type == SDL_MOUSEBUTTONDOWN && ev->button.button == SDL_BUTTON_LEFT &&
	    mouse_to_frame(u, ev->button.x, ev->button.y, &x, &y)) {
		int i = ui_grid_nearest_point(m, x, y);
		if (i < 0)
			return;
		SDL_FPoint p = to_window(u, m->pts[i][0], m->pts[i][1]);
		float dx = p.x - (float)ev->button.x, dy = p.y - (float)ev->button.y;
		if (dx * dx + dy * dy > GRAB_RADIUS_PX * GRAB_RADIUS_PX)
			return;
		u->drag_index = i;
		u->drag_moved = false;
		u->st.sel_col = i % m->cols;
		u->st.sel_row = i / m->cols;
		u->dirty = true;
	} else if (ev->type == SDL_MOUSEMOTION && u->drag_index >= 0 &&
		   mouse_to_frame(u, ev->motion.x, ev->motion.y, &x, &y)) {
		int i = u->drag_index;
		ui_grid_move_point(m, i % m->cols, i / m->cols, x - m->pts[i][0], y - m->pts[i][1]);
		u->drag_moved = true;
		u->remap_stride = 0;
		u->dirty = true;
	} else if (ev->type == SDL_MOUSEBUTTONUP && ev->button.button == SDL_BUTTON_LEFT && u->drag_index >= 0) {
		if (u->drag_moved && *n < cap)
			cmds[(*n)++] = (struct ui_command){.kind = UI_CMD_GRID_CHANGED};
		u->drag_index = -1;
	}
}

/* The caller leaves room for the most commands one event can produce. */
static void handle_event(struct ui_sdl *u, const SDL_Event *ev, struct ui_command *cmds, int cap, int *n)
{
	switch (ev->type) {
	case SDL_QUIT:
		if (*n < cap)
			cmds[(*n)++] = (struct ui_command){.kind = UI_CMD_QUIT};
		break;
	case SDL_WINDOWEVENT:
		if (ev->window.event == SDL_WINDOWEVENT_CLOSE && *n < cap)
			cmds[(*n)++] = (struct ui_command){.kind = UI_CMD_QUIT};
		u->dirty = true;
		break;
	case SDL_KEYDOWN: {
		int key = translate_key(ev->key.keysym.sym);
		if (key == UI_KEY_NONE)
			break;
		bool repeatable = key == UI_KEY_UP || key == UI_KEY_DOWN || key == UI_KEY_LEFT || key == UI_KEY_RIGHT ||
				  key == '+' || key == '-';
		if (ev->key.repeat && !repeatable)
			break;
		SDL_Keymod km = (SDL_Keymod)ev->key.keysym.mod;
		unsigned mods = ((km & KMOD_SHIFT) ? UI_MOD_SHIFT : 0u) | ((km & KMOD_CTRL) ? UI_MOD_CTRL : 0u) |
				((km & KMOD_ALT) ? UI_MOD_ALT : 0u);
		unsigned actions = 0;
		int first = *n;
		*n += ui_keymap_handle(&u->st, &u->tun, u->grid, key, mods, cmds + *n, cap - *n, &actions);
		note_commands(u, cmds + first, *n - first);
		apply_actions(u, actions, cmds, cap, n);
		break;
	}
	case SDL_MOUSEBUTTONDOWN:
	case SDL_MOUSEBUTTONUP:
	case SDL_MOUSEMOTION: handle_mouse(u, ev, cmds, cap, n); break;
	default: break;
	}
}

static int sdl_poll(struct ui *ui, const struct snapshot *s, struct ui_command *cmds, int cap, int timeout_ms)
{
	struct ui_sdl *u = (struct ui_sdl *)ui;
	Uint32 start = SDL_GetTicks();
	int n = 0;
	if (s) {
		/* Take the pipeline's values only when they changed there, so
		 * quick key presses are not undone by a snapshot that predates
		 * them. */
		struct ui_tunables t;
		ui_tunables_from_snapshot(&t, s);
		if (!u->have_tun || !ui_tunables_equal(&t, &u->tun_seen)) {
			u->tun = t;
			u->tun_seen = t;
			u->have_tun = true;
			u->dirty = true;
		}
	}
	bool frame_new = s && (!u->drawn_any || s->frame != u->frame_drawn);
	if (frame_new || u->dirty)
		draw(u, s);
	/* Room for the most one event can produce: a key's commands plus a
	 * grid reload. */
	const int per_event = UI_KEYMAP_MAX_CMDS + 1;
	for (;;) {
		SDL_Event ev;
		while (cap - n >= per_event && SDL_PollEvent(&ev))
			handle_event(u, &ev, cmds, cap, &n);
		if (u->dirty)
			draw(u, s);
		int left = timeout_ms - (int)(SDL_GetTicks() - start);
		if (n > 0 || left <= 0)
			break;
		if (cap - n < per_event) {
			SDL_Delay((Uint32)left);
			break;
		}
		SDL_WaitEventTimeout(NULL, left);
	}
	return n;
}

const struct ui_backend ui_backend_sdl = {"sdl", sdl_create, sdl_destroy, sdl_poll};
