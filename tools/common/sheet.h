/*
 * sheet.h - printable symbol sheets as vector graphics (SVG or PDF).
 *
 * Each symbol is drawn from its render_layout (src/fiducial/render.h): the
 * same rounded rectangles the raster renderer fills, so the printed symbol
 * and the synthetic test scenes are the same drawing. A sheet is A4
 * portrait, 10 mm margins, cards of card_mm on a grid in reading order
 * (ID k is the k-th card), an ID label under each card, cut marks at the
 * card corners, and a footer naming the card size ("print at 100 %").
 *
 * SVG has no pages: a set that needs more than one page is written as
 * NAME-01.svg, NAME-02.svg ... next to the requested NAME.svg. PDF (written
 * here directly, PDF 1.4, uncompressed, Helvetica for labels) holds all
 * pages in one file: no cairo dependency. A .png or .pgm path gives raster
 * pages at `dpi` drawn by the renderer (no labels), like a scanned sheet:
 * what `learn` tests read back.
 *
 * Memory: a content buffer a page; freed before return.
 */
#ifndef TT_TOOLS_SHEET_H
#define TT_TOOLS_SHEET_H

struct sheet_params {
	float card_mm;  /* card side, mm (default 50) */
	int cols;       /* cards a row; 0 = as many as fit */
	float dpi;      /* raster sheets (.png/.pgm) only (default 100) */
};

void sheet_params_default(struct sheet_params *p);

/* Writes the sheet(s) for tokens[0..n) to path (.svg, .pdf, .png or .pgm
 * by extension). Returns 0, ERR_IO (logged), ERR_FORMAT (undrawable token),
 * ERR_NOMEM. */
int sheet_write(const char *path, const char *const *tokens, int n, const struct sheet_params *p);

/* One symbol as an SVG of its own: the card, cut marks and its ID. */
int sheet_write_symbol(const char *path, const char *token, int id, float card_mm);

#endif
