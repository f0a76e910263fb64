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
 * DEBLUR_MAX_LENGTH, or whose parabola puts the length under 1 px (the
 * lags below DEBLUR_MIN_LENGTH still falling), is left alone (clutter, a straight edge alone, a
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
 * that mean is below gate) with hysteresis: a pixel black by that rule
 * stays black only where a chain of such pixels (8-connected) reaches one
 * black by the same rule at DEBLUR_SEED_BIAS percent (deblur_seed_bias; a
 * mean_bias of at least that: the plain rule). Single-precision float,
 * eight lanes at a time (an AVX2 copy of the loops where the CPU has it),
 * every pixel's sums in the same order and no fused multiply-add: the same
 * bits whichever copy runs, on every run.
 *
 * Defocus. A window with no streak whose gradient runs every way (its
 * anisotropy above DEBLUR_MAX_ANISOTROPY) may be out of focus: every
 * edge a ramp whose width follows the blur, dots and holes narrower than
 * it left with a fraction of their contrast. Its blur is read from its
 * long steps: at each maximum of the gradient (Sobel) across its edge, the
 * step between the grey DEBLUR_DEFOCUS_REACH pixels to either side along
 * the gradient; where that step is at least DEBLUR_DEFOCUS_MIN_STEP of the
 * window's range (its grey's 2nd to 98th percentile, at least
 * DEBLUR_DEFOCUS_MIN_RANGE), the edge is taken for a step blurred by a
 * Gaussian, whose sigma is the step over sqrt(2 pi) times the slope. The
 * median over the window's steps (at least DEBLUR_DEFOCUS_MIN_EDGES) is
 * its blur: about 1.0 for a sharp edge (the slope of a pixel's step
 * across two), 2.3 under a Gaussian blur of 2.2. Dots and thin walls
 * never pass the step test (their two sides are alike). A window whose
 * blur is at least DEBLUR_MIN_SIGMA, and whose steps' first quartile is
 * at least DEBLUR_MIN_SIGMA_Q1, is deconvolved as a streak is, under
 * a Gaussian of DEBLUR_SIGMA_FACTOR times its blur (less than all of it:
 * the full blur overshoots into specks; separable, radius 3 sigma, at
 * most DEBLUR_KERNEL_RADIUS), and thresholded by Bernsen at radius
 * DEBLUR_DEFOCUS_RADIUS: the restored dots and holes are a few pixels
 * across with soft rims, which a small Bernsen window keeps and the local
 * mean at the symbol's scale thins or closes (measured in
 * docs/recognition.md, "The deblurring pass's defocus branch").
 * The quartile: a defocus blurs every edge of the window, a hard shadow's
 * penumbra (1-3 px) only its own, and a window of sharp symbols that a
 * shadow's edges cross has a median near the threshold but a first
 * quartile near a sharp edge's.
 *
 * Sharp print. Where a window's symbols are small (under about 48 px) the
 * print's edges are too close together to be long flat steps, and a
 * hard shadow's soft edges (a penumbra of 1-4 px) may be nearly all the
 * steps the window holds: both the median and the quartile then read the
 * penumbra, 1.3-1.7, as a defocus. The print's own edges tell the lens
 * in focus: at the same maxima, the grey's range within
 * DEBLUR_SHARP_REACH pixels to either side along the gradient (flat or
 * not: a small symbol's dots and walls too), where it is at least
 * DEBLUR_DEFOCUS_MIN_STEP of the window's range, over sqrt(2 pi) times
 * the slope. The first decile of these (the window's sharpest steps; at
 * least DEBLUR_DEFOCUS_MIN_EDGES of them, else the blur stands for it)
 * is the print's blur, `sharp`: 0.75-0.91 in windows of sharp 24-48 px
 * symbols under hard shadows (a sharp edge's, whatever the shadows'
 * edges read), 0.94-1.21 under a Gaussian of 1.8-2.0 px, 1.16-1.43
 * under 2.4 px (the short reach cuts a wide ramp short, and a thin
 * feature's contrast falls with its slope, so these read under the
 * blur). The caller judges a frame by it (the engine's whole-frame read).
 *
 * Cost: the estimate computes the tensor over every pixel and 15 bilinear
 * samples at every DEBLUR_STEP-th pixel of every DEBLUR_STEP-th row (the
 * defocus's, a Sobel of every pixel and 4 bilinear samples at each steep
 * maximum of the gradient, and where it reads a defocus the same Sobel
 * again with 2 * DEBLUR_SHARP_REACH samples at each for sharp); the
 * deconvolution costs DEBLUR_ITERATIONS (a longer read: its rounds) * 2 *
 * taps multiply-adds a pixel of the work area, and runs only in windows
 * that pass both tests. CPU only.
 *
 * Memory: deblur_create() allocates a row, three rows of integers and seven float buffers for max_width x
 * max_height (one of them with a DEBLUR_KERNEL_RADIUS border) and a
 * local-mean workspace; deblur_process() allocates nothing.
 */
#ifndef TT_THRESHOLD_DEBLUR_H
#define TT_THRESHOLD_DEBLUR_H

#include <stdbool.h>

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
#define DEBLUR_LONG_FROM 6.0f
#define DEBLUR_LONG_ROUNDS_PER_PX 6
#define DEBLUR_MAX_ROUNDS 32
#define DEBLUR_MIN_SIGMA 1.3f
#define DEBLUR_MIN_SIGMA_Q1 1.15f
#define DEBLUR_SIGMA_FACTOR 0.8f
#define DEBLUR_DEFOCUS_REACH 7
#define DEBLUR_DEFOCUS_MIN_STEP 0.5f
#define DEBLUR_DEFOCUS_FLAT 0.15f
#define DEBLUR_DEFOCUS_MIN_RANGE 32
#define DEBLUR_DEFOCUS_MIN_EDGES 16
#define DEBLUR_DEFOCUS_MAX_SIGMA 4.0f
#define DEBLUR_DEFOCUS_RADIUS 3

/* The gamma a defocus's deconvolved grey is encoded with for its second
 * threshold (deblur_rethreshold_encoded): 255 (v / 255)^(1 / gamma), as a
 * camera encodes. Bernsen's midpoint in the encoded grey lies lower in
 * linear light (towards the geometric mean of the window's extremes),
 * which keeps white a hole or a wall between holes that the blur left
 * short of the linear midpoint, and the gate, counted in encoded levels,
 * reads more of a dim place's contrast. 2.2 read the most; 1.6 and 3 about
 * as much, each with a wrong ID (docs/recognition.md, "A defocus's grey
 * read encoded"). */
#define DEBLUR_ENCODE_GAMMA 2.2
/* The hysteresis of a streak's threshold (above): the bias, percent below
 * the local mean, of the pixels that keep black the chains of pixels black
 * at mean_bias. The deconvolution brings a thin wall between two leaves
 * back only part way to the ink's grey, and a threshold near the mean keeps
 * it black (the pass's mean_bias, deblur3_bias: 7); but it also amplifies
 * the noise, and on paper such a threshold turns that noise into specks by
 * the thousand. Specks reach no ink; a wall runs into the blob it belongs
 * to, whose core is far darker than its mean. The streaked scenes of
 * docs/recognition.md ("The deblurring pass's threshold") read most with
 * 36-42. */
#define DEBLUR_SEED_BIAS 40
/* The gamma a window's input is encoded with before its second
 * deconvolution (deblur_process_encoded): the encoded grey's steps are
 * others, so the blur read from them and the estimate the rounds reach
 * differ. 1.6 read the most without a wrong ID (2.2 and 3 less, 2.2 with
 * one; docs/recognition.md, "A defocus's grey read encoded"). */
#define DEBLUR_ENCODE_INPUT_GAMMA 1.6
#define DEBLUR_SHARP_REACH 3

/* What deblur_process() undid. */
enum { DEBLUR_STREAK = 1, DEBLUR_DEFOCUS = 2 };

/* A streak as estimated: direction in radians [0, pi) (0: along x, pi/2:
 * along y, down the rows), length in pixels, the anisotropy and the
 * autocorrelation dip (minimum over lag 0, negative) it was judged by;
 * sigma, the defocus's blur where it was read (0 where not), and sharp,
 * the blur of the window's sharpest steps (above: sharp print), where
 * the window reads a defocus (0 where not). */
struct deblur_streak {
	float angle, length;
	float anisotropy, dip;
	float sigma, sharp;
	int rounds; /* deblur_apply(): the rounds, 0 = DEBLUR_ITERATIONS; the estimates set 0 */
};

struct deblur;

/* Returns NULL with *err = ERR_RANGE (sizes < 1) or ERR_NOMEM. */
struct deblur *deblur_create(int max_width, int max_height, int *err);
void deblur_destroy(struct deblur *d); /* NULL-safe */
/* Which copy of the kernels d runs: "avx2" (the default where the CPU has
 * it) or "scalar" (plain C); every result is the same bits either way.
 * Returns 0, or ERR_UNSUPPORTED where the CPU or build lacks the set. For
 * tests. */
int deblur_set_isa(struct deblur *d, const char *isa);
/* The bias of the hysteresis's seeds in a streak's threshold (above),
 * DEBLUR_SEED_BIAS unless set; at most a call's mean_bias (0: any call's)
 * it thresholds by the plain rule. Clamped to 0..THRESHOLD_MAX_MEAN_BIAS. */
void deblur_seed_bias(struct deblur *d, int bias);
/* A streak's threshold (above: the local mean at mean_radius less
 * mean_bias percent, gate, with the hysteresis) of any grey, into out (its
 * size, at most the deblur's): what the pass reads the deconvolved grey
 * with. 0, or ERR_SIZE / ERR_RANGE as deblur_process(). */
int deblur_threshold(struct deblur *d, const struct image_u8 *grey, int mean_radius, int mean_bias, int gate,
		     struct bitmask *out);

/* Estimates the streak of in (into *streak where streak is not NULL).
 * Returns 1 when it is one, 0 when not (the window is sharp, or too small
 * to tell). */
int deblur_estimate(struct deblur *d, const struct image_u8 *in, struct deblur_streak *streak);

/* Reads the defocus blur of in into *sigma (0 where it cannot be read:
 * too small, too flat, too few steps). Returns 1 when it is at least
 * DEBLUR_MIN_SIGMA and its steps' first quartile at least
 * DEBLUR_MIN_SIGMA_Q1, and then reads the blur of its sharpest steps into
 * *sharp (above); else 0, *sharp 0. Does not look at the anisotropy. */
int deblur_defocus(struct deblur *d, const struct image_u8 *in, float *sigma, float *sharp);

/* A box of pixels x0 <= x < x1, y0 <= y < y1. */
struct deblur_box {
	int x0, y0, x1, y1;
};

/* Estimates the streak of the work area: core (NULL: all of in) and
 * DEBLUR_CONTEXT pixels around it, within in; where there is none and
 * defocus is set, the defocus's blur (above). Where there is either,
 * deconvolves the work area, thresholds in with its core deconvolved into
 * out (a streak's by the local mean at mean_radius, mean_bias; a defocus's
 * by Bernsen, above; both with gate) and returns DEBLUR_STREAK or
 * DEBLUR_DEFOCUS; returns 0 (out untouched) where there is none. out's
 * width and height must equal in's, at most the create sizes (else
 * ERR_SIZE); core must lie inside in and hold a pixel, mean_radius 1..63,
 * mean_bias 0..50, gate 0..255 (else ERR_RANGE). */
int deblur_process(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		   int mean_bias, int gate, bool defocus, struct bitmask *out, struct deblur_streak *streak);

/* deblur_process() with the estimate given instead of read from in:
 * kind DEBLUR_STREAK, the streak of s (angle, length 1..DEBLUR_MAX_LENGTH);
 * kind DEBLUR_DEFOCUS, a Gaussian of DEBLUR_SIGMA_FACTOR times s->sigma
 * (finite, over 0; radius 3 sigma, at most DEBLUR_KERNEL_RADIUS), which may come from elsewhere
 * than this work area (the blur of a frame's other windows); either with
 * s->rounds rounds (0..DEBLUR_MAX_ROUNDS, 0: DEBLUR_ITERATIONS). Deconvolves
 * and thresholds as deblur_process() does and returns kind; ERR_SIZE and
 * ERR_RANGE as deblur_process(), ERR_RANGE also for another kind or an
 * estimate out of those ranges. deblur_process() is its estimate, then,
 * where it found one, deblur_apply() with it: the same bits. */
int deblur_apply(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
		 int mean_bias, int gate, int kind, const struct deblur_streak *s, struct bitmask *out);

/* Rounds for a streak's longer read: a streak longer than
 * DEBLUR_LONG_FROM px erases more of the symbol's detail than
 * DEBLUR_ITERATIONS rounds give back, DEBLUR_LONG_ROUNDS_PER_PX rounds
 * more for every pixel of it past that, at most DEBLUR_MAX_ROUNDS (the
 * deblurring pass reads windows that the DEBLUR_ITERATIONS rounds read no
 * symbol in again so: pipeline/third.c). 0 where the streak is no longer
 * than that. Measured: docs/recognition.md, "Longer streaks, more
 * rounds". */
int deblur_long_rounds(float length);

/* Runs the last deblur_process() or deblur_apply() deconvolution on to
 * rounds rounds in all (from the rounds it ran, up to DEBLUR_MAX_ROUNDS:
 * else ERR_RANGE) and thresholds its grey again as such a call does (a
 * streak's by the local mean at mean_radius, mean_bias; a defocus's by
 * Bernsen at DEBLUR_DEFOCUS_RADIUS; with gate) into out: for a streak the
 * bits deblur_apply() with s->rounds = rounds gives, for the cost of the
 * rounds added; deblur_rethreshold() then reads this grey. ERR_AGAIN
 * where the last call deconvolved nothing; ERR_SIZE and ERR_RANGE as
 * deblur_process(). Allocates nothing. */
int deblur_continue(struct deblur *d, int rounds, int mean_radius, int mean_bias, int gate, struct bitmask *out);

/* Thresholds the grey that the last deblur_process() or deblur_apply()
 * deconvolved for a streak once more, by the local mean at another
 * mean_radius (mean_bias, gate), into out (the size of that call's in):
 * a second threshold without a second deconvolution. ERR_AGAIN where the
 * last call deconvolved no streak (nothing, a defocus, or it failed);
 * ERR_SIZE and ERR_RANGE as deblur_process(). */
int deblur_rethreshold(struct deblur *d, int mean_radius, int mean_bias, int gate, struct bitmask *out);

/* Thresholds the grey that the last deblur_process(), deblur_apply() or
 * deblur_continue() deconvolved for a defocus once more, encoded with
 * DEBLUR_ENCODE_GAMMA (the pixels outside its core too), by Bernsen at
 * DEBLUR_DEFOCUS_RADIUS with gate (in encoded levels) into out (the size
 * of that call's in): a second threshold without a second deconvolution,
 * whose midpoint lies lower in linear light. ERR_AGAIN where the last
 * call deconvolved no defocus (nothing, a streak, or it failed); ERR_SIZE
 * where out's size is not that call's in's; ERR_RANGE for a gate outside
 * 0..255. Allocates nothing. */
int deblur_rethreshold_encoded(struct deblur *d, int gate, struct bitmask *out);

/* deblur_process() with defocus set, on in encoded with
 * DEBLUR_ENCODE_INPUT_GAMMA (255 (v / 255)^(1 / gamma)) into a buffer of
 * d's: the same estimate, deconvolution and threshold over that grey,
 * held for deblur_continue() and the rethresholds as such a call's. The
 * same returns, ERR_SIZE for in larger than the create sizes. Allocates
 * nothing. */
int deblur_process_encoded(struct deblur *d, const struct image_u8 *in, const struct deblur_box *core, int mean_radius,
			   int mean_bias, int gate, struct bitmask *out, struct deblur_streak *streak);

#endif
