#include "sheet.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/core/err.h"
#include "../../src/core/image.h"
#include "../../src/core/image_io.h"
#include "../../src/core/log.h"
#include "../../src/fiducial/render.h"

#define PAGE_W_MM 210.0f
#define PAGE_H_MM 297.0f
#define MARGIN_MM 10.0f
#define LABEL_MM 5.0f
#define GAP_MM 1.0f
#define MARK_GAP_MM 1.0f
#define MARK_LEN_MM 2.5f
#define MM_TO_PT (72.0f / 25.4f)

void sheet_params_default(struct sheet_params *p)
{
	p->card_mm = 50.0f;
	p->cols = 0;
	p->dpi = 100.0f;
}

/* A growable text buffer: PDF needs each stream's length before it. */
struct buf {
	char *s;
	size_t len, cap;
	int failed;
};

/* Room for n more bytes and a NUL; 0 or -1 (b->failed set). */
static int buf_reserve(struct buf *b, size_t n)
{
	if (b->failed)
		return -1;
	if (b->s && b->len + n < b->cap)
		return 0;
	size_t nc = b->cap ? b->cap * 2 : 65536;
	while (nc < b->len + n + 1)
		nc *= 2;
	char *t = realloc(b->s, nc);
	if (!t) {
		b->failed = 1;
		return -1;
	}
	b->s = t;
	b->cap = nc;
	return 0;
}

__attribute__((format(printf, 2, 3))) static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if (buf_reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Binary bytes (a deflated stream may hold NULs). */
static void buf_append(struct buf *b, const char *data, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return;
	memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = 0;
}

enum backend { SVG, PDF };

struct canvas {
	enum backend kind;
	float page_h_mm;
	struct buf b;
};

/* PDF user space: points, y up. */
static double PX(float mm_x)
{
	return (double)(mm_x * MM_TO_PT);
}

#define PY(v) pdf_y(c, (v))
static double pdf_y(const struct canvas *c, float mm_y)
{
	return (double)((c->page_h_mm - mm_y) * MM_TO_PT);
}

/* Rounded rectangle, mm, y down. */
static void canvas_rrect(struct canvas *c, float x, float y, float hw, float hh, float r, int white)
{
	if (c->kind == SVG) {
		buf_printf(&c->b,
			   "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" rx=\"%.2f\" "
			   "fill=\"%s\"/>\n",
			   (double)(x - hw), (double)(y - hh), (double)(2 * hw), (double)(2 * hh),
			   (double)r, white ? "#fff" : "#000");
		return;
	}
	/* PDF: y up, points; four lines and four Bezier quarter circles. */
	const float k = 0.5523f * r;
	float l = x - hw, rt = x + hw, top = y - hh, bot = y + hh;
	buf_printf(&c->b, "%d g\n", white ? 1 : 0);
	buf_printf(&c->b, "%.1f %.1f m\n", PX(l + r), PY(top));
	buf_printf(&c->b, "%.1f %.1f l\n", PX(rt - r), PY(top));
	buf_printf(&c->b, "%.1f %.1f %.1f %.1f %.1f %.1f c\n", PX(rt - r + k), PY(top), PX(rt),
		   PY(top + r - k), PX(rt), PY(top + r));
	buf_printf(&c->b, "%.1f %.1f l\n", PX(rt), PY(bot - r));
	buf_printf(&c->b, "%.1f %.1f %.1f %.1f %.1f %.1f c\n", PX(rt), PY(bot - r + k),
		   PX(rt - r + k), PY(bot), PX(rt - r), PY(bot));
	buf_printf(&c->b, "%.1f %.1f l\n", PX(l + r), PY(bot));
	buf_printf(&c->b, "%.1f %.1f %.1f %.1f %.1f %.1f c\n", PX(l + r - k), PY(bot), PX(l),
		   PY(bot - r + k), PX(l), PY(bot - r));
	buf_printf(&c->b, "%.1f %.1f l\n", PX(l), PY(top + r));
	buf_printf(&c->b, "%.1f %.1f %.1f %.1f %.1f %.1f c\nh f\n", PX(l), PY(top + r - k),
		   PX(l + r - k), PY(top), PX(l + r), PY(top));
}

static void canvas_line(struct canvas *c, float x0, float y0, float x1, float y1)
{
	if (c->kind == SVG)
		buf_printf(&c->b,
			   "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\" "
			   "stroke-width=\"0.15\"/>\n",
			   (double)x0, (double)y0, (double)x1, (double)y1);
	else
		buf_printf(&c->b, "0 G 0 J 0.4 w %.2f %.2f m %.2f %.2f l S\n", PX(x0), PY(y0), PX(x1),
			   PY(y1));
}

/* Text of ASCII letters, digits and spaces only: no escaping needed. */
static void canvas_text(struct canvas *c, float x, float y, float size_mm, const char *s)
{
	if (c->kind == SVG)
		buf_printf(&c->b,
			   "<text x=\"%.2f\" y=\"%.2f\" font-family=\"Helvetica, Arial, sans-serif\" "
			   "font-size=\"%.2f\" fill=\"#000\">%s</text>\n",
			   (double)x, (double)y, (double)size_mm, s);
	else
		buf_printf(&c->b, "0 g BT /F1 %.2f Tf %.2f %.2f Td (%s) Tj ET\n",
			   (double)(size_mm * MM_TO_PT), PX(x), PY(y), s);
}

/* A blob: the union of round-capped strokes of width 2 r along its
 * skeleton segments, drawn as one path (same ink, so overlaps are
 * invisible); a zero-length segment gives a disc. mm, y down. */
static void canvas_capsules(struct canvas *c, const struct render_segment *sg, int n, float cx,
			    float cy, float side, float r, int white)
{
	if (c->kind == SVG) {
		buf_printf(&c->b,
			   "<path fill=\"none\" stroke=\"%s\" stroke-width=\"%.3f\" "
			   "stroke-linecap=\"round\" d=\"",
			   white ? "#fff" : "#000", (double)(2 * r * side));
		for (int i = 0; i < n; i++)
			buf_printf(&c->b, "%sM%.3f %.3fL%.3f %.3f", i ? " " : "",
				   (double)(cx + sg[i].x0 * side), (double)(cy + sg[i].y0 * side),
				   (double)(cx + sg[i].x1 * side), (double)(cy + sg[i].y1 * side));
		buf_printf(&c->b, "\"/>\n");
		return;
	}
	buf_printf(&c->b, "%d G 1 J 1 j %.3f w\n", white ? 1 : 0, (double)(2 * r * side * MM_TO_PT));
	for (int i = 0; i < n; i++)
		buf_printf(&c->b, "%.2f %.2f m %.2f %.2f l\n", PX(cx + sg[i].x0 * side),
			   PY(cy + sg[i].y0 * side), PX(cx + sg[i].x1 * side), PY(cy + sg[i].y1 * side));
	buf_printf(&c->b, "S\n");
}

static void draw_symbol(struct canvas *c, const struct render_layout *l, float cx, float cy,
			float side)
{
	for (int i = 0; i < l->n_shapes; i++) {
		const struct render_shape *s = &l->shapes[i];
		if (s->n_seg > 0)
			canvas_capsules(c, &l->segs[s->seg0], s->n_seg, cx, cy, side, s->radius,
					s->white);
		else
			canvas_rrect(c, cx + s->x * side, cy + s->y * side, s->hw * side,
				     s->hh * side, s->radius * side, s->white);
	}
}

static void draw_cut_marks(struct canvas *c, float cx, float cy, float side)
{
	float h = 0.5f * side;
	for (int sy = -1; sy <= 1; sy += 2)
		for (int sx = -1; sx <= 1; sx += 2) {
			float x = cx + (float)sx * h, y = cy + (float)sy * h;
			float g = MARK_GAP_MM, m = MARK_GAP_MM + MARK_LEN_MM;
			canvas_line(c, x + (float)sx * g, y, x + (float)sx * m, y);
			canvas_line(c, x, y + (float)sy * g, x, y + (float)sy * m);
		}
}

static int sanitize_label(const char *in, char *out, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; in[i] && j + 1 < cap; i++) {
		char ch = in[i];
		if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    ch == ' ' || ch == '.' || ch == '-' || ch == '_')
			out[j++] = ch;
	}
	out[j] = 0;
	return 0;
}

static void svg_begin(struct canvas *c, float w_mm, float h_mm)
{
	c->page_h_mm = h_mm;
	buf_printf(&c->b,
		   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.2fmm\" height=\"%.2fmm\" "
		   "viewBox=\"0 0 %.2f %.2f\">\n",
		   (double)w_mm, (double)h_mm, (double)w_mm, (double)h_mm);
	buf_printf(&c->b, "<rect x=\"0\" y=\"0\" width=\"%.2f\" height=\"%.2f\" fill=\"#fff\"/>\n",
		   (double)w_mm, (double)h_mm);
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		log_error("%s: %s", path, strerror(errno));
		return ERR_IO;
	}
	size_t w = fwrite(data, 1, len, f);
	if (fclose(f) || w != len) {
		log_error("%s: write failed", path);
		return ERR_IO;
	}
	return 0;
}

int sheet_write_symbol(const char *path, const char *token, int id, float card_mm)
{
	struct render_layout l;
	int rc = render_layout_tree(token, &l);
	if (rc)
		return ERR_FORMAT;
	float pad = MARK_GAP_MM + MARK_LEN_MM + 1.0f;
	float w = card_mm + 2 * pad, h = card_mm + 2 * pad + LABEL_MM;
	struct canvas c = {.kind = SVG};
	svg_begin(&c, w, h);
	draw_symbol(&c, &l, w * 0.5f, pad + card_mm * 0.5f, card_mm);
	draw_cut_marks(&c, w * 0.5f, pad + card_mm * 0.5f, card_mm);
	char label[64];
	snprintf(label, sizeof label, "ID %d  %.0f mm", id, (double)card_mm);
	canvas_text(&c, pad, pad + card_mm + 5.0f, 3.0f, label);
	buf_printf(&c.b, "</svg>\n");
	rc = c.b.failed ? ERR_NOMEM : write_file(path, c.b.s, c.b.len);
	free(c.b.s);
	return rc;
}

struct grid {
	int cols, rows, per_page, pages;
	float cell_w, cell_h, x0, y0;
};

static void sheet_grid(const struct sheet_params *p, int n, struct grid *g)
{
	float avail_w = PAGE_W_MM - 2 * MARGIN_MM, avail_h = PAGE_H_MM - 2 * MARGIN_MM - 8.0f;
	g->cell_w = p->card_mm + GAP_MM + 2 * (MARK_GAP_MM + MARK_LEN_MM);
	g->cell_h = g->cell_w + LABEL_MM;
	int fit_c = (int)(avail_w / g->cell_w), fit_r = (int)(avail_h / g->cell_h);
	g->cols = p->cols > 0 && p->cols < fit_c ? p->cols : fit_c;
	if (g->cols < 1)
		g->cols = 1;
	g->rows = fit_r < 1 ? 1 : fit_r;
	g->per_page = g->cols * g->rows;
	g->pages = (n + g->per_page - 1) / g->per_page;
	g->x0 = MARGIN_MM + 0.5f * (avail_w - (float)g->cols * g->cell_w);
	g->y0 = MARGIN_MM;
}

static void draw_page(struct canvas *c, const struct render_layout *ls, const char *const *tokens,
		      int n, int page, const struct grid *g, const struct sheet_params *p,
		      const char *title)
{
	for (int k = page * g->per_page; k < n && k < (page + 1) * g->per_page; k++) {
		int slot = k - page * g->per_page;
		float cx = g->x0 + ((float)(slot % g->cols) + 0.5f) * g->cell_w;
		float top = g->y0 + (float)(slot / g->cols) * g->cell_h + MARK_GAP_MM + MARK_LEN_MM;
		float cy = top + 0.5f * p->card_mm;
		draw_symbol(c, &ls[k], cx, cy, p->card_mm);
		draw_cut_marks(c, cx, cy, p->card_mm);
		char label[96], tree[80];
		sanitize_label(tokens[k], tree, sizeof tree);
		snprintf(label, sizeof label, "ID %d", k);
		canvas_text(c, cx - 0.5f * p->card_mm, top + p->card_mm + MARK_GAP_MM + MARK_LEN_MM + 3.5f, 3.2f,
			    label);
		canvas_text(c, cx - 0.5f * p->card_mm + 14.0f, top + p->card_mm + MARK_GAP_MM + MARK_LEN_MM + 3.5f,
			    1.8f, tree);
	}
	char footer[256];
	snprintf(footer, sizeof footer,
		 "%s - tabletrack amoeba symbols - card side %.0f mm: print at 100 percent, no "
		 "scaling - page %d of %d",
		 title, (double)p->card_mm, page + 1, g->pages);
	canvas_text(c, MARGIN_MM, PAGE_H_MM - MARGIN_MM, 3.0f, footer);
}

static int write_svg_pages(const char *path, const struct render_layout *ls,
			   const char *const *tokens, int n, const struct grid *g,
			   const struct sheet_params *p, const char *title)
{
	int rc = 0;
	for (int page = 0; page < g->pages && !rc; page++) {
		char name[4096];
		if (g->pages == 1) {
			snprintf(name, sizeof name, "%s", path);
		} else {
			size_t len = strlen(path);
			int base = len > 4 ? (int)len - 4 : (int)len;
			snprintf(name, sizeof name, "%.*s-%02d.svg", base, path, page + 1);
		}
		struct canvas c = {.kind = SVG};
		svg_begin(&c, PAGE_W_MM, PAGE_H_MM);
		draw_page(&c, ls, tokens, n, page, g, p, title);
		buf_printf(&c.b, "</svg>\n");
		rc = c.b.failed ? ERR_NOMEM : write_file(name, c.b.s, c.b.len);
		free(c.b.s);
		if (!rc && g->pages > 1)
			fprintf(stderr, "tabletrack-fiducials: wrote %s\n", name);
	}
	return rc;
}

static int write_pdf(const char *path, const struct render_layout *ls, const char *const *tokens,
		     int n, const struct grid *g, const struct sheet_params *p, const char *title)
{
	/* Objects: 1 catalog, 2 page tree, 3 font, then page i: 4 + 2i (page),
	 * 5 + 2i (contents). */
	int n_obj = 3 + 2 * g->pages;
	long *offset = calloc((size_t)n_obj + 1, sizeof *offset);
	struct buf out = {0};
	int rc = 0;
	if (!offset)
		return ERR_NOMEM;
	buf_printf(&out, "%%PDF-1.4\n%%\xe2\xe3\xcf\xd3\n");
	offset[1] = (long)out.len;
	buf_printf(&out, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n");
	offset[2] = (long)out.len;
	buf_printf(&out, "2 0 obj\n<< /Type /Pages /Count %d /Kids [", g->pages);
	for (int i = 0; i < g->pages; i++)
		buf_printf(&out, " %d 0 R", 4 + 2 * i);
	buf_printf(&out, " ] >>\nendobj\n");
	offset[3] = (long)out.len;
	buf_printf(&out, "3 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n");
	for (int page = 0; page < g->pages; page++) {
		struct canvas c = {.kind = PDF, .page_h_mm = PAGE_H_MM};
		draw_page(&c, ls, tokens, n, page, g, p, title);
		if (c.b.failed) {
			free(c.b.s);
			rc = ERR_NOMEM;
			goto done;
		}
		offset[4 + 2 * page] = (long)out.len;
		buf_printf(&out,
			   "%d 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] "
			   "/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>\nendobj\n",
			   4 + 2 * page, (double)(PAGE_W_MM * MM_TO_PT),
			   (double)(PAGE_H_MM * MM_TO_PT), 5 + 2 * page);
		offset[5 + 2 * page] = (long)out.len;
		/* Deflated: the path text of 200 symbols is 1.3 MB as is. */
		uLongf zlen = compressBound((uLong)c.b.len);
		Bytef *z = malloc(zlen);
		if (!z || compress2(z, &zlen, (const Bytef *)(c.b.s ? c.b.s : ""), (uLong)c.b.len, 9) != Z_OK) {
			free(z);
			free(c.b.s);
			rc = ERR_NOMEM;
			goto done;
		}
		buf_printf(&out, "%d 0 obj\n<< /Length %lu /Filter /FlateDecode >>\nstream\n", 5 + 2 * page,
			   (unsigned long)zlen);
		buf_append(&out, (const char *)z, (size_t)zlen);
		buf_printf(&out, "\nendstream\nendobj\n");
		free(z);
		free(c.b.s);
	}
	long xref = (long)out.len;
	buf_printf(&out, "xref\n0 %d\n0000000000 65535 f \n", n_obj + 1);
	for (int i = 1; i <= n_obj; i++)
		buf_printf(&out, "%010ld 00000 n \n", offset[i]);
	buf_printf(&out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%ld\n%%%%EOF\n", n_obj + 1,
		   xref);
	rc = out.failed ? ERR_NOMEM : write_file(path, out.s, out.len);
done:
	free(out.s);
	free(offset);
	return rc;
}

/* Raster pages at p->dpi through the renderer itself: what a scanner would
 * see, for `learn` tests. No labels (there is no font here); cut marks are
 * one-pixel lines, which the learner ignores like text. */
static int write_raster_pages(const char *path, const struct render_layout *ls, int n,
			      const struct grid *g, const struct sheet_params *p)
{
	float px_mm = p->dpi / 25.4f;
	struct image_u8 img;
	int rc = image_u8_alloc(&img, (int)lrintf(PAGE_W_MM * px_mm), (int)lrintf(PAGE_H_MM * px_mm));
	if (rc)
		return rc;
	size_t len = strlen(path);
	for (int page = 0; page < g->pages && !rc; page++) {
		for (int y = 0; y < img.height; y++)
			memset(image_u8_row(&img, y), 255, (size_t)img.width);
		for (int k = page * g->per_page; k < n && k < (page + 1) * g->per_page; k++) {
			int slot = k - page * g->per_page;
			float cx = g->x0 + ((float)(slot % g->cols) + 0.5f) * g->cell_w;
			float top = g->y0 + (float)(slot / g->cols) * g->cell_h + MARK_GAP_MM + MARK_LEN_MM;
			float cy = top + 0.5f * p->card_mm;
			/* Pixel centres sit at integer coordinates (render.h). */
			render_layout_draw(&ls[k], p->card_mm * px_mm, 0.0f, cx * px_mm - 0.5f,
					   cy * px_mm - 0.5f, &img, NULL);
			float h = 0.5f * p->card_mm;
			for (int sy = -1; sy <= 1; sy += 2)
				for (int sx = -1; sx <= 1; sx += 2) {
					float x = cx + (float)sx * h, y = cy + (float)sy * h;
					for (float t = MARK_GAP_MM; t <= MARK_GAP_MM + MARK_LEN_MM; t += 0.5f / px_mm) {
						int ax = (int)lrintf((x + (float)sx * t) * px_mm), ay = (int)lrintf(y * px_mm);
						int bx = (int)lrintf(x * px_mm), by = (int)lrintf((y + (float)sy * t) * px_mm);
						if (ax >= 0 && ay >= 0 && ax < img.width && ay < img.height)
							image_u8_row(&img, ay)[ax] = 0;
						if (bx >= 0 && by >= 0 && bx < img.width && by < img.height)
							image_u8_row(&img, by)[bx] = 0;
					}
				}
		}
		char name[4096];
		if (g->pages == 1)
			snprintf(name, sizeof name, "%s", path);
		else
			snprintf(name, sizeof name, "%.*s-%02d%s", (int)len - 4, path, page + 1,
				 path + len - 4);
		rc = image_write(name, &img);
		if (!rc && g->pages > 1)
			fprintf(stderr, "tabletrack-fiducials: wrote %s\n", name);
	}
	image_u8_free(&img);
	return rc;
}

int sheet_write(const char *path, const char *const *tokens, int n, const struct sheet_params *p)
{
	if (n < 1)
		return ERR_FORMAT;
	struct render_layout *ls = calloc((size_t)n, sizeof *ls);
	if (!ls)
		return ERR_NOMEM;
	int rc = 0;
	for (int i = 0; i < n && !rc; i++)
		if (render_layout_tree(tokens[i], &ls[i]))
			rc = ERR_FORMAT;
	if (rc)
		goto done;
	struct grid g;
	sheet_grid(p, n, &g);
	const char *base = strrchr(path, '/');
	char title[128];
	sanitize_label(base ? base + 1 : path, title, sizeof title);
	size_t len = strlen(path);
	if (len > 4 && !strcmp(path + len - 4, ".pdf"))
		rc = write_pdf(path, ls, tokens, n, &g, p, title);
	else if (len > 4 && (!strcmp(path + len - 4, ".png") || !strcmp(path + len - 4, ".pgm")))
		rc = write_raster_pages(path, ls, n, &g, p);
	else
		rc = write_svg_pages(path, ls, tokens, n, &g, p, title);
done:
	free(ls);
	return rc;
}
