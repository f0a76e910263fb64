/*
 * deblur.h - grey window -> black/white bitmask with a linear motion
 * streak undone first.
 *
 * A symbol dragged across the camera during the exposure is the mean of
 * copies of it shifted along a segment (a linear box blur). Dots a few
 * pixels across are smeared to a fraction of their contrast and holes are
 * filled with grey, so every threshold of the streaked grey loses nodes of
 * the symbol's tree. The streak's direction and length can be read from
 * the window itself, and the blur largely undone.
 *
 * Estimate. Direction: the box blur flattens the grey along the streak,
 * so the gradient's energy is least in that direction. The structure
 * tensor J = sum over the window of (gx^2, gx*gy; gx*gy, gy^2) (central
 * differences, integers) gives it: the eigenvector of J's smaller
 * eigenvalue. The ratio of the smaller eigenvalue to the larger
 * (anisotropy, 0..1) is what tells a streak: in a sharp window of symbols
 * (a ring, dots and blobs: edges running every way) it is mostly 0.7 to 1,
 * under a streak of 6 px about 0.2 to 0.6; a window above
 * DEBLUR_MAX_ANISOTROPY is left alone. Straight-edged clutter can be as
 * anisotropic without a streak; the length's test below sorts it out. Length: along the streak every edge of the sharp scene
 * is a ramp the streak's length long, and the derivative's
 * autocorrelation (half-pixel differences, bilinear, summed over every
 * DEBLUR_STEP-th pixel of every DEBLUR_STEP-th row) is most negative where
 * a ramp meets the ramp of the opposite edge of the same dot or gap: at
 * about the streak's length where the streak is longer than the symbol's
 * small features, which is where it destroys them. The lag of that
 * minimum between DEBLUR_MIN_LENGTH and DEBLUR_MAX_LENGTH, refined by a
 * parabola through it and its neighbours, is the length. A window whose
 * minimum is no deeper than DEBLUR_MIN_DIP of the lag-0 value, or lies at
 * DEBLUR_MAX_LENGTH, is left alone (clutter, a straight edge alone, a
 * hand, paper texture). In a sharp window the minimum
 * follows the features' width, so the dip alone does not tell a streak;
 * the anisotropy does.
 *
 * Deconvolution. The point spread function is the segment of that length
 * and direction, sampled at 2 * length + 1 points, each spread bilinearly
 * over the four pixels around it (a kernel of at most
 * (2 * DEBLUR_KERNEL_RADIUS + 1)^2 taps; about 15-20 for a 6 px streak).
 * Richardson-Lucy (u <- u * (h' conv (g / (h conv u))), g the grey + 1 so
 * that no ratio divides by zero, the work area's border repeated),
 * accelerated as Biggs and Andrews do: each round starts from the estimate
 * pushed along the last round's change, y = u + alpha (u - u_prev) (kept
 * above 0.001), alpha the ratio of the last two changes' dot product to
 * the older one's square, clamped to [0, DEBLUR_MAX_ALPHA].
 * DEBLUR_ITERATIONS such rounds restore dots and holes about as far as
 * two and a half times as many plain ones; more overshoot into spurious
 * specks. Only a core box of the input (the caller's: where the structure
 * lies) is deconvolved, with DEBLUR_CONTEXT pixels around it as context
 * (clamped to the input); outside the core the grey is the input's. The
 * grey, the deconvolved core rounded and clamped to 0..255, is thresholded
 * by the local mean (threshold.h, THRESHOLD_MEAN: white above the mean of
 * the (2 * mean_radius + 1)^2 window less mean_bias percent, black where
 * that mean is below gate). Single-precision float, eight lanes at a time
 * (an AVX2 copy of the loops where the CPU has it), every pixel's sums in
 * the same order and no fused multiply-add: the same bits whichever copy
 * runs, on every run.
 *
 * Cost: the estimate computes the tensor over every pixel and 15 bilinear
 * samples at every DEBLUR_STEP-th pixel of every DEBLUR_STEP-th row; the
 * deconvolution costs DEBLUR_ITERATIONS * 2 * taps multiply-adds a pixel of
 * the work area, and runs only in windows that pass both tests. CPU only.
 *
 * Memory: deblur_create() allocates seven float buffers for max_width x
 * max_height (one of them with a DEBLUR_KERNEL_RADIUS border) and a
 * local-mean workspace; deblur_process() allocates nothing.
 */
#ifndef TT_THRESHOLD_DEBLUR_H
#define TT_THRESHOLD_DEBLUR_H

#include "../core/image.h"

#define DEBLUR_MAX_ANISOTROPY 0.65f
#define DEBLUR_MIN_LENGTH 3
#define DEBLUR_MAX_LENGTH 12
#define DEBLUR_MIN_DIP 0.2f
#define DEBLUR_KERNEL_RADIUS 8
#define DEBLUR_ITERATIONS 8
#define DEBLUR_STEP 3
#define DEBLUR_CONTEXT 16
#define DEBLUR_MAX_ALPHA 0.95f

/* A streak as estimated: direction in radians [0, pi) (0: along x, pi/2:
 * along y, down the rows), length in pixels, the anisotropy and the
 * autocorrelation dip (minimum over lag 0, negative) it was judged by. */
struct deblur_streak {
	float angle, length;
	float anisotropy, dip;
};

struct deblur;

/* Returns NULL with *err = ERR_RANGE (sizes < 1) or ERR_NOMEM. */
struct deblur *deblur_create(int max_width, int max_height, int *err);
void deblur_destroy(struct deblur *d); /* NULL-safe */

/* Estimates the streak of in (into *streak where streak is not NULL).
 * Returns 1 when it is one, 0 when not (the window is sharp, or too small
 * to tell). */
int deblur_estimate(struct deblur *d, const struct image_u8 *in, struct deblur_streak *streak);

/* A box of pixels x0 <= x < x1, y0 <= y < y1. */
struct deblur_box {
	int x0, y0, x1, y1;
};

/* Estimates the streak of the work area: core (NULL: all of in) and
 * DEBLUR_CONTEXT pixels around it, within in. Where there is one,
 * deconvolves the work area, thresholds in with its core deconvolved into
 * out and returns 1; returns 0 (out untouched) where there is none. out's
 * width and height must equal in's, at most the create sizes (else
 * ERR_SIZE); core must lie inside in and hold a pixel, mean_radius 1..63,
 * mean_bias 0..50, gate 0..255 (else ERR_RANGE). */
int deblur_process(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		   int mean_bias, int gate, struct bitmask *out, struct deblur_streak *streak);

#endif
