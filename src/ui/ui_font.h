/*
 * ui_font.h - a tiny built-in 5x7 bitmap font for the window's text.
 *
 * Purpose: the window shows a status line, menus and help without SDL_ttf or
 * any font file. Each printable ASCII character (32..126) is 5 columns of 7
 * bits (bit 0 = top row), drawn in a 6x8 cell (one column and one row of
 * spacing). Other bytes draw as '?'.
 *
 * Usage: ui_font_glyph(c) for the columns of one character; the SDL backend
 * renders every glyph once into an atlas texture at create time and copies
 * cells from it, scaled by an integer factor. ui_font_text_width/height
 * measure a string (several lines separated by '\n') for layout.
 *
 * Memory: a static const table of 95 x 5 bytes; no allocation.
 */
#ifndef TT_UI_FONT_H
#define TT_UI_FONT_H

#include <stdint.h>

#define UI_FONT_GLYPH_W 5
#define UI_FONT_GLYPH_H 7
#define UI_FONT_CELL_W 6
#define UI_FONT_CELL_H 8
#define UI_FONT_FIRST 32
#define UI_FONT_LAST 126

/* The 5 column bytes of character c (bit 0 = top row); static, never NULL. */
const uint8_t *ui_font_glyph(char c);
/* True when pixel (x, y) of character c's 5x7 glyph is set. */
int ui_font_pixel(char c, int x, int y);
/* Width in pixels of the longest line of s at an integer scale (>= 1):
 * characters x UI_FONT_CELL_W x scale. 0 for "" or NULL. */
int ui_font_text_width(const char *s, int scale);
/* Height in pixels: lines x UI_FONT_CELL_H x scale. 0 for "" or NULL. */
int ui_font_text_height(const char *s, int scale);

#endif
