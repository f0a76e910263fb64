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
 * Memory: closing_create() allocates three max_width x max_height byte
 * images and line buffers (closing_median_on() the median's workspace);
 * closing_process() allocates nothing.
 */
#ifndef TT_THRESHOLD_CLOSING_H
#define TT_THRESHOLD_CLOSING_H

#include "../core/image.h"

#define CLOSING_MAX_RADIUS 63
#define CLOSING_MAX_OFFSET 64

struct closing;

/* Returns NULL with *err = ERR_RANGE (sizes < 1) or ERR_NOMEM. */
struct closing *closing_create(int max_width, int max_height, int *err);
void closing_destroy(struct closing *c); /* NULL-safe */
/* Which copy of the row loops c runs: "avx2" (the default where the CPU
 * has it: 32 pixels a step, the rest as with "sse2") or "sse2" (16 a
 * step on x86-64, plain C elsewhere); the same bits either way. Returns
 * 0, or ERR_UNSUPPORTED where the CPU or build lacks the set. For tests. */
int closing_set_isa(struct closing *c, const char *isa);

/* Thresholds in into out (out's width and height must equal in's, at most
 * the create sizes: else ERR_SIZE; radius 1..CLOSING_MAX_RADIUS, pct
 * 0..100, gate 0..255: else ERR_RANGE). Bits past the width are zero. */
int closing_process(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out);

/* The last closing_process() on c thresholded again at another pct and
 * gate, without its running passes: the bits closing_process(c, in,
 * radius, pct, gate, out) gives, where in holds the same pixels as that
 * call's in (which the caller keeps so) and radius is that call's. A
 * read of a window at two percentages costs one closing. ERR_SIZE where
 * in's size differs from that call's, or no closing is held (none made
 * yet, or a closing_ratio() since, which overwrites it), or out's size
 * differs from in's; ERR_RANGE as closing_process(). Allocates
 * nothing. */
int closing_again(struct closing *c, const struct image_u8 *in, int pct, int gate, struct bitmask *out);

/* closing_process() on the 3 x 3 median of in (threshold.h's, the second
 * scale's prefilter): the bits closing_process(c, median3(in), radius,
 * pct, gate, out) gives. Where the paper keeps a few percent of the light
 * its print is 10-35 grey levels from the ink, within a few times the
 * sensor's noise, and a single noisy pixel is a speck the closing's
 * running maximum spreads over its square; the median takes those out
 * (and 1 px holes with them). No closing is held afterwards for
 * closing_again(). Errors as closing_process(), and ERR_UNSUPPORTED
 * before closing_median_on(). Allocates nothing. */
int closing_median(struct closing *c, const struct image_u8 *in, int radius, int pct, int gate, struct bitmask *out);

/* Allocates closing_median()'s workspace (the CPU threshold's, for
 * frames of c's size: about 0.75 bytes a pixel and some rows), once; a
 * closing that never takes a median goes without. 0 or ERR_NOMEM. */
int closing_median_on(struct closing *c);

/*
 * The same running maximum and minimum give Bernsen's window against the
 * light's ratio (the third scale's ratio pass). Bernsen's threshold, the
 * mean of the window's darkest and brightest grey, sits between lit ink
 * and lit paper; where a hard shadow's edge crosses the window the
 * shadowed paper (a third of the lit paper's grey or less) falls under it
 * and turns black for the window's radius beside the edge, joining the
 * rings, dots and blobs there. A shadow scales the light, so in the
 * logarithm of the grey it is a step that leaves every ratio of
 * reflectances as it was: the mean of the logarithms of the darkest and
 * brightest grey (their geometric mean) lies under the shadowed paper and
 * over the lit ink whenever the shadow keeps more light than the ink's
 * ratio to the paper. offset is added to every grey first (the sensor's
 * noise and black level: without it a window with one pixel at 0 makes
 * everything white). Rule, bit for bit, for pixel p of grey v, lo and hi
 * the minimum and maximum of in over the square of radius r around p
 * (cropped at in's border):
 *     if hi - lo < gate:  white = (lo + hi) / 2 >= 128 and v > 0   (Bernsen's flat-area rule)
 *     else:               white = (v + offset)^2 > (lo + offset) (hi + offset)
 * It depends on the pixels within r of p. Only a pass: in blurred and
 * small symbols the geometric mean lies low and thin black features (a
 * blob's walls, small dots) fall away, and the ink of a dark shadow is
 * read with the rest. radius 1..CLOSING_MAX_RADIUS, offset
 * 0..CLOSING_MAX_OFFSET, gate 0..255 (else ERR_RANGE); sizes as
 * closing_process(). Allocates nothing.
 */
int closing_ratio(struct closing *c, const struct image_u8 *in, int radius, int offset, int gate, struct bitmask *out);

#endif
