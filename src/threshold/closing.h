/*
 * closing.h - grey frame -> black/white bitmask against the paper's own
 * light: the background estimated by a grey-level closing.
 *
 * A hard shadow is a step in the light: the paper on its dark side is a
 * third of the lit paper's grey or less. Every window threshold (Bernsen's
 * min/max, the local mean) that reaches across the step compares the
 * shadowed paper with lit paper and turns a band of it black, and that band
 * joins rings, blobs and dots of a symbol the edge crosses. A grey-level
 * closing (a running maximum, then a running minimum, over a square of
 * radius r) fills every dark shape narrower than about 2r + 1 (a symbol's
 * ring, blobs' walls, dots) with the grey around it and keeps a step of the
 * light where it is: on each side of a shadow edge it gives that side's
 * paper. A pixel is white when it is brighter than pct percent of that
 * background, and the background is at least gate; so ink is black in
 * sunlight and in shadow alike, and the shadowed paper white up to the
 * edge.
 *
 * Rule, bit for bit, for pixel p of in (the window cropped at in's border,
 * which for a maximum or minimum is the same as repeating the edge pixel):
 *     D(q) = max of in over the square of radius r around q
 *     C(p) = min of D over the square of radius r around p
 *     white = 100 * v(p) > pct * C(p) and C(p) >= gate
 * C(p) depends on the pixels within 2r of p: a window of a larger frame
 * thresholded with a halo of 2r gives that frame's bits.
 *
 * r must exceed half the widest solid dark shape a symbol has (the ring,
 * the dots) and stay under half the narrowest shadow (a finger's): about
 * a twentieth of the symbol's side.
 *
 * Algorithm: separable van Herk / Gil-Werman running maximum and minimum,
 * rows then columns, in blocks of 2r + 1 (3 comparisons a pixel a pass
 * whatever r is), into byte buffers sized at create time. CPU only; the
 * engine runs it on the CPU whatever the other scales' backend.
 *
 * Memory: closing_create() allocates two max_width x max_height byte
 * images and line buffers; closing_process() allocates nothing.
 */
#ifndef TT_THRESHOLD_CLOSING_H
#define TT_THRESHOLD_CLOSING_H

#include "../core/image.h"

#define CLOSING_MAX_RADIUS 63

struct closing;

/* Returns NULL with *err = ERR_RANGE (sizes < 1) or ERR_NOMEM. */
struct closing *closing_create(int max_width, int max_height, int *err);
void closing_destroy(struct closing *c); /* NULL-safe */

/* Thresholds in into out (out's width and height must equal in's, at most
 * the create sizes: else ERR_SIZE; radius 1..CLOSING_MAX_RADIUS, pct
 * 0..100, gate 0..255: else ERR_RANGE). Bits past the width are zero. */
int closing_process(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out);

#endif
