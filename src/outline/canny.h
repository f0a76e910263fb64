/*
 * canny.h - the Canny edge detector: the CPU reference of the outline stage.
 *
 * Every per-pixel step is integer arithmetic on 8-bit pixels, so that the
 * GPU twin (cuda/canny_cuda.h) reproduces it bit for bit; the only floating
 * point is in canny_gauss_taps(), run once when the configuration is set.
 *
 * The algorithm, for a frame I (width x height, 8-bit grey):
 *
 * 1. Gaussian. Integer taps w[0] (centre) .. w[R] from sigma
 *    (canny_gauss_taps: R = ceil(3 sigma) capped at CANNY_MAX_RADIUS, taps
 *    rounded from the normalised Gaussian, w[0] + 2 (w[1] + .. + w[R]) = 256,
 *    trailing zero taps dropped). Row pass: T(x, y) = sum_i w[|i|] I(cx(x+i), y)
 *    (at most 65280: 16 bits). Column pass: S(x, y) = (sum_j w[|j|]
 *    T(x, cy(y+j)) + 32768) >> 16, an 8-bit image. cx / cy clamp a
 *    coordinate into the frame (the border is replicated). sigma 0 is no
 *    blur (S = I).
 * 2. Sobel on S, coordinates clamped again (S replicated):
 *    gx = S(x+1,y-1) + 2 S(x+1,y) + S(x+1,y+1) - S(x-1,y-1) - 2 S(x-1,y) - S(x-1,y+1)
 *    gy = S(x-1,y+1) + 2 S(x,y+1) + S(x+1,y+1) - S(x-1,y-1) - 2 S(x,y-1) - S(x+1,y-1)
 *    (y grows downwards), each in -1020..1020.
 * 3. Magnitude M = |gx| + |gy| (L1), 0..CANNY_MAG_MAX, a uint16 output.
 * 4. Direction sector D (a uint8 output), by integer comparisons against
 *    tan(22.5 deg) ~ 53/128, with ax = |gx|, ay = |gy|:
 *      128 ay <= 53 ax          -> CANNY_DIR_H    (gradient left-right)
 *      else 128 ax <= 53 ay     -> CANNY_DIR_V    (gradient up-down)
 *      else gx, gy same sign    -> CANNY_DIR_DIAG (gradient towards down-right)
 *      else                     -> CANNY_DIR_ANTI (gradient towards down-left)
 *    M = 0 gives CANNY_DIR_H.
 * 5. Non-maximum suppression: a = M at the sector's first neighbour, b = M
 *    at its second (see enum canny_dir), M outside the frame counted as 0.
 *    A pixel is a candidate when M >= low and M > a and M >= b (the uneven
 *    tie-break keeps one pixel of a two-pixel plateau).
 * 6. Double threshold: a candidate is strong when M >= high, else weak.
 * 7. Hysteresis: the edges are the candidates 8-connected, through
 *    candidates, to a strong pixel. The result is the connected components
 *    that hold a strong pixel: it does not depend on the order of the
 *    flood (the CPU floods from each strong pixel with a stack), which is
 *    what lets a parallel GPU scheme match it.
 *
 * Regions of interest (canny_process_roi): steps 1-6 read the frame around
 * the rectangle (the apron R + 2 pixels, clamped at the frame), so M, D and
 * the candidate/strong classes are identical to a full-frame run on every
 * pixel of the rectangle: the margin for them is zero. Hysteresis (step 7)
 * runs inside the rectangle only, because it is not local: a chain of weak
 * pixels may reach a strong pixel arbitrarily far away. So no margin makes
 * the edge maps equal in general; instead:
 *   - every ROI edge is a full-frame edge (the ROI edges are a subset), and
 *   - a pixel whose candidate component (8-connected, inside the rectangle)
 *     does not touch the rectangle's outermost ring of pixels, on the sides
 *     that are not the frame's border, has the same edge value as in the
 *     full-frame run.
 * A closed outline with a ring of non-candidates around it inside the
 * rectangle is therefore found exactly.
 *
 * Memory: canny_create allocates every buffer for max_width x max_height
 * (about 11 bytes a pixel); canny_process* allocate nothing. Not thread-safe:
 * one struct canny per thread.
 */
#ifndef TT_OUTLINE_CANNY_H
#define TT_OUTLINE_CANNY_H

#include <stdint.h>

#include "../core/image.h"

#define CANNY_MAX_RADIUS 12        /* Gaussian taps: w[0..CANNY_MAX_RADIUS] */
#define CANNY_MAX_SIGMA_TENTHS 40  /* sigma 4.0: R = 12 */
#define CANNY_MAG_MAX 2040         /* largest |gx| + |gy| */
#define CANNY_APRON (CANNY_MAX_RADIUS + 2) /* pixels read beyond a rectangle, at most */

/* Direction sectors and the two neighbours (first, second) that non-maximum
 * suppression compares with, y growing downwards. */
enum canny_dir {
	CANNY_DIR_H = 0,    /* (x-1, y),   (x+1, y)   */
	CANNY_DIR_DIAG = 1, /* (x-1, y-1), (x+1, y+1) */
	CANNY_DIR_V = 2,    /* (x, y-1),   (x, y+1)   */
	CANNY_DIR_ANTI = 3, /* (x+1, y-1), (x-1, y+1) */
};

struct canny_config {
	int max_width, max_height; /* 1..IMAGE_MAX_SIDE; frames may be smaller */
	int sigma_tenths;          /* Gaussian sigma in tenths of a pixel, 0 (none)..CANNY_MAX_SIGMA_TENTHS */
	int low, high;             /* magnitude thresholds (|gx| + |gy| units): 1 <= low <= high <= CANNY_MAG_MAX */
};

/* A rectangle of the frame: x, y its top-left pixel, width x height pixels. */
struct canny_rect {
	int x, y, width, height;
};

/* Caller-owned outputs, indexed in frame coordinates (pixel (x, y) at
 * [y * stride + x]; stride in elements, >= the frame width). edge is
 * required: 1 = edge, 0 = not. mag (M, step 3) and dir (enum canny_dir) may
 * be NULL. Only the processed rectangle is written. */
struct canny_out {
	uint8_t *edge;
	uint16_t *mag;
	uint8_t *dir;
	int stride;
};

struct canny;

/* The integer Gaussian of step 1 for sigma_tenths (0..CANNY_MAX_SIGMA_TENTHS):
 * fills w[0..CANNY_MAX_RADIUS] (zeros past R) and returns R, or ERR_RANGE. */
int canny_gauss_taps(int sigma_tenths, int w[CANNY_MAX_RADIUS + 1]);

/* 0 when cfg is within the ranges above, else ERR_RANGE. */
int canny_config_check(const struct canny_config *cfg);

/* Allocates for cfg's maximum frame. NULL on failure with *err = ERR_RANGE
 * (bad cfg) or ERR_NOMEM. Free with canny_destroy. */
struct canny *canny_create(const struct canny_config *cfg, int *err);
/* NULL-safe. */
void canny_destroy(struct canny *c);
/* Changes sigma and thresholds (max_width/max_height must not grow); between
 * frames. 0 or ERR_RANGE (c unchanged). */
int canny_set_config(struct canny *c, const struct canny_config *cfg);
/* The taps in use (w[0..CANNY_MAX_RADIUS]); returns R. For the GPU twin. */
int canny_taps(const struct canny *c, int w[CANNY_MAX_RADIUS + 1]);

/* The whole frame. in is borrowed; out's arrays must hold in's frame.
 * 0, or ERR_SIZE (frame larger than max, or out->stride < in->width), or
 * ERR_RANGE (out->edge NULL). */
int canny_process(struct canny *c, const struct image_u8 *in, const struct canny_out *out);
/* Only roi (clipped to the frame; an empty result writes nothing and
 * returns 0), with the guarantees in the header comment. Errors as
 * canny_process. */
int canny_process_roi(struct canny *c, const struct image_u8 *in, const struct canny_rect *roi,
		      const struct canny_out *out);

#endif
