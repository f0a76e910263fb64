/*
 * outline.h - outlines of fingers, blobs and hands; touch versus hover;
 * hands and their fingertips. Runs after the matcher on the first scale's
 * region tree and the grey frame, and adds to that frame's detections.
 *
 * Usage:
 *     struct outline_config oc = { .contours = true, .tolerance_px = 1,
 *                                  .max_points = 32, .max_contours = 256, ... };
 *     struct outline *o = outline_create(&oc, max_w, max_h, threads, &err);
 *     detections_alloc_outlines(&det, oc.max_contours, oc.max_points);
 *     ...per frame, after match_process():
 *     outline_process(o, tree, grey, &det);
 *     outline_destroy(o);
 *
 * What it adds (all optional; nothing runs when outline_needed() is false,
 * so the default path costs nothing and changes nothing):
 *  - contours (cfg.contours): for every finger, blob and hand, its outer
 *    outline and the inner outline of every hole of more than
 *    OUTLINE_MIN_HOLE_AREA pixels, as sub-pixel polygons in detections'
 *    contour lists (detect.h), each at most max_points points, at most
 *    max_contours a frame (beyond: dropped, det->overflow raised).
 *  - touch versus hover (cfg.touch_sharpness > 0): finger_det.sharpness and
 *    finger_det.touch for every finger.
 *  - hands (cfg.hands): a bright region larger than two finger sizes with
 *    fingertips at its ends is a hand: appended to det->blobs with
 *    blob_det.hand set (replacing a plain blob of the same region), its
 *    fingertips appended to det->fingers with finger_det.hand naming it.
 *    A fingertip found on its own by the matcher (a separate bright region,
 *    as a touching tip often is) within one finger size of a hand's
 *    bounding box is given that hand too. The palm and the arm are never fingers.
 *
 * Algorithm.
 *  1. Trace: the region's pixels (its runs) are painted into a mask of its
 *     bounding box; the boundary between region and non-region pixels is
 *     followed crack by crack (pixel edges, region on the right, turning
 *     right first so the region stays 4-connected) from the top-left
 *     pixel's top edge. Each crack's midpoint is a boundary point with an
 *     outward normal. A hole is traced as its own region (the dark region
 *     inside the bounding box); its boundary is the hole's outline.
 *  2. Refine: at each point the normal is taken across the smoothed
 *     tangent (the points two cracks either side); the grey profile along
 *     it is sampled bilinearly every half pixel over +-OUTLINE_PROFILE_PX
 *     (eight samples at a time with AVX2 where the CPU has it and the
 *     profile lies inside the frame, its derivatives and range then too;
 *     a hand's thinned outline eight profiles at a time, one a lane: the
 *     same bits as one at a time);
 *     the edge is where the derivative across the profile (bright side to
 *     dark side, one-pixel central difference) peaks within +-3.5 px of the
 *     crack, placed to a fraction of a sample by a parabola through the
 *     peak and its neighbours. That is the sub-pixel edge for sharp and
 *     blurred edges alike (a symmetric blur keeps the steepest point on the
 *     true edge); a crack on the frame's edge stays (sharpness 0). Each
 *     point then moves along its normal by the median of its own and its
 *     six neighbours' offsets: on a blurred edge the peak is flat and noise
 *     moves it. outline_refine() does this for every point; the stage
 *     refines only the points it uses (a point needs its own and its six
 *     neighbours' profiles, and gets exactly outline_refine()'s result):
 *     the kept points of a contour, the samples of a finger's sharpness,
 *     and a hand's thinned outline (step 5).
 *  3. Sharpness of a point: the peak derivative divided by the profile's
 *     range (max - min grey over the profile), in 1/px: about 0.5 for an
 *     edge blurred by a sensor (sigma 0.7 px), about 0.15 for one blurred
 *     with sigma 3 px. A finger's sharpness is the median over at most 48
 *     points spread evenly along its outline (a fingertip of a hand: over
 *     the thinned points within a quarter circle of its tip); it touches when
 *     sharpness >= touch_sharpness.
 *  4. Simplify: Douglas-Peucker on the closed polygon of the cracks (at
 *     most about 256 of them, evenly spaced, on a long outline; split at
 *     point 0 and the point farthest from it) with tolerance_px, and only
 *     the kept cracks refined (step 2; a hand's contour is simplified
 *     from its thinned, refined outline instead); when more than max_points
 *     remain, the smallest larger tolerance that leaves at most
 *     max_points. One pass serves every tolerance: each point gets the
 *     deviation at which the recursion would pick it, capped by its
 *     parent's, and a tolerance keeps the points above it (the recursion
 *     stops below tolerance_px, as no smaller value is ever wanted). The
 *     kept points are refined boundary points, so simplification never
 *     moves a point off the edge.
 *  5. Fingertips on a hand's outline, thinned to every k-th crack (k such
 *     that a quarter circle of a finger keeps 4 points) and refined at
 *     that step (each thinned point moves by the median of its own and
 *     its two neighbours' either side offsets: a blurred hovering finger's
 *     threshold outline is narrower than the finger): at every point i,
 *     a and b are the points a quarter circle of a finger (arc length pi/4 x
 *     finger_size) before and after it; i is a tip candidate when |a - b|
 *     (the width there) is 0.5..1.6 finger sizes, i lies at least 0.3 of
 *     that width beyond the midpoint of a and b, outward, and the width
 *     twice as far back is still at most 1.6 finger sizes (a finger, not a
 *     palm's corner); at most 16 a hand. Candidates within two quarter
 *     circles keep the one standing out most. The fingertip is the centre
 *     of the circle fitted (least squares) to the thinned points from a to
 *     b, or, when that circle is implausible, the point half the finger's
 *     straight width behind the tip; two tips closer than 0.6 finger sizes
 *     are one (a bright touching tip wider than the blurred finger behind
 *     it makes a second bump).
 *
 * Threads: fingers, hands and blobs are independent units of work (a
 * unit traces its region into scratch of its own). With threads > 1 the
 * stage runs a frame's units on that many tasks (the calling thread and
 * a pool's workers, each taking the next unit, hands first as they are the
 * largest, the larger of them first), each writing into a list of its own; then, on the calling
 * thread, it copies every unit's output into the frame's detections in the
 * order one thread makes it, and runs there any unit the tasks could not
 * (more than OUTLINE_MAX_UNITS a frame, a task's list full, a hand whose
 * tips could overflow the frame's finger list). The result is identical
 * to one thread's, capacities and overflow included. outline_begin()
 * publishes the hands, which need the tree alone, before the caller's
 * matcher runs: the workers wake and trace them meanwhile, and
 * outline_process() adds the other units to the same queue.
 *
 * Memory: outline_create() allocates, for each task, the mask (max_w + 2)
 * x (max_h + 2) + OUTLINE_MASK_SLACK bytes, point scratch of
 * OUTLINE_MAX_TRACE points (about 6.5 MB at 1080p) and its output list; the other tasks' only once
 * outline_needed() holds. outline_process() allocates nothing. A boundary longer than OUTLINE_MAX_TRACE cracks is
 * not outlined (overflow flag). The contour lists are the detections'
 * (detections_alloc_outlines).
 */
#ifndef TT_OUTLINE_H
#define TT_OUTLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/regions.h"

#define OUTLINE_MAX_TRACE 32768
/* Bytes a trace's mask needs past (w + 2) x (h + 2) when it is painted
 * with AVX2 (whole vectors, the last one reaching past the box). */
#define OUTLINE_MASK_SLACK 64
#define OUTLINE_PROFILE_PX 8
#define OUTLINE_MIN_HOLE_AREA 8
#define OUTLINE_MAX_HANDS 16
/* Tasks a frame's outlines run on at most: DI frames have one or two
 * hands, which take most of the stage's time. */
#define OUTLINE_MAX_TASKS 4

struct outline_config {
	bool contours;          /* outline fingers, blobs and hands */
	float tolerance_px;     /* Douglas-Peucker tolerance, > 0 */
	int max_points;         /* per contour, >= 4 */
	int max_contours;       /* per frame */
	float touch_sharpness;  /* 1/px; 0 = touch not measured (every finger touches) */
	bool hands;             /* find hands and their fingertips */
	float finger_size_px;   /* expected fingertip diameter (hands need it > 0) */
};

/* A boundary point: position (pixel-centre coordinates, like centroids)
 * and outward unit normal. */
struct outline_point {
	float x, y, nx, ny;
};

struct outline;

/* True when cfg asks for any work at all. */
bool outline_needed(const struct outline_config *cfg);

/* Sized for frames up to max_w x max_h; threads (>= 1; at most
 * OUTLINE_MAX_TASKS are used) run a frame's units (see Threads above).
 * Where the other tasks cannot be made, it runs on the calling thread
 * alone and logs so once. NULL with *err = ERR_CONFIG or ERR_NOMEM. Owned
 * by the caller; outline_destroy() is NULL-safe. */
struct outline *outline_create(const struct outline_config *cfg, int max_w, int max_h, int threads, int *err);
void outline_destroy(struct outline *o);
/* Live change (tolerance, caps up to the detections' capacity, sharpness,
 * hands). ERR_CONFIG leaves the old one. */
int outline_set_config(struct outline *o, const struct outline_config *cfg);

/* Adds contours, touch state and hands to det (see the top). tree and grey
 * are the frame's (borrowed for the call). Returns 0, or ERR_SIZE for a
 * frame larger than the one it was created for. */
int outline_process(struct outline *o, const struct region_tree *tree, const struct image_u8 *grey,
		    struct detections *det);

/* Optional, before outline_process() of the same tree and grey: starts
 * the hands (bright regions of a hand's size, the matcher's fingers not yet
 * known) on the other tasks, so they run while the caller matches; their
 * output waits for outline_process(), which passes over those the matcher
 * made fingers. The result is outline_process()'s alone. Nothing without
 * two tasks or cfg.hands. tree and grey must stay as they are until
 * outline_process() or outline_cancel() returns. */
void outline_begin(struct outline *o, const struct region_tree *tree, const struct image_u8 *grey);
/* Waits for what outline_begin() started and drops it (the caller will
 * not call outline_process() this frame). NULL-safe; nothing when nothing
 * was begun. */
void outline_cancel(struct outline *o);

/* The steps, for tests and tools. */

/* Crack midpoints of region r's outer boundary into pts[0..cap); mask is
 * scratch of (bbox w + 2) x (bbox h + 2) bytes. Returns the count, or -1
 * when the boundary has more than cap cracks. */
int outline_trace(const struct region_tree *t, int32_t r, uint8_t *mask, struct outline_point *pts, int cap);
/* Moves every point to the sub-pixel edge along its normal and writes
 * each point's sharpness (1/px, 0 where there is no edge). bright_inside:
 * the traced region is the bright side. offset: scratch of n floats.
 * Samples one at a time: the reference the stage's vector path equals. */
void outline_refine(const struct image_u8 *grey, bool bright_inside, struct outline_point *pts, int n,
		    float *sharpness, float *offset);
/* One grey profile through (px, py) along the unit normal (nx, ny), as
 * the stage reads it: the offset of its steepest step along the normal
 * and its sharpness (step 2 and 3 above), and the offset the stage reads
 * from the samples near the crack alone (a hand's thinned outline), with
 * AVX2 where avx2 is asked and outline_have_avx2() (eight samples and
 * derivatives at a time, the same bits), else one at a time. */
void outline_profile(const struct image_u8 *grey, bool bright_inside, bool avx2, float px, float py, float nx,
		     float ny, float *offset, float *sharpness, float *near_offset);
/* outline_profile() of each point's profile along its own unit normal
 * (pts[i].nx, .ny), as the stage reads a hand's: with sharpness NULL its
 * near_offset into offset[0..n) (a thinned outline), else its offset and
 * sharpness into offset[0..n) and sharpness[0..n) (a fingertip's points).
 * With AVX2 where avx2 is asked and outline_have_avx2(), eight profiles at
 * a time (one a lane) where all eight lie well inside the frame, the same
 * bits. */
void outline_profiles(const struct image_u8 *grey, bool bright_inside, bool avx2, const struct outline_point *pts,
		      int n, float *offset, float *sharpness);
/* Whether this CPU has AVX2, which the stage then samples profiles with. */
bool outline_have_avx2(void);
/* Douglas-Peucker on the closed polygon pts[0..n); the indices of the kept
 * points, in order, go to keep[0..max_out); scratch holds n ints, fscratch
 * 2n floats. With AVX2 where avx2 is asked and outline_have_avx2(), eight
 * distances from a segment at a time (the same kept points). Returns the
 * number kept (at least 2 for n > 3). */
int outline_simplify(const struct outline_point *pts, int n, float tolerance_px, bool avx2, int max_out, int *keep,
		     int *scratch, float *fscratch);

#endif
