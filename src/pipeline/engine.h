/*
 * engine.h - the per-frame script, in one place: grey frame -> tracked state.
 *
 *   1. threshold   grey -> bitmask (CUDA or CPU Bernsen; and the optional
 *                  second scale: its own radius and median)
 *   2. segment     bitmask -> region tree (per scale; on the GPU, from the
 *                  device mask, when the threshold runs there)
 *   3. match       tree -> fiducials, fuzzy symbols, root regions, fingers,
 *                  blobs; then (only when asked for) outlines, touch and
 *                  hands on the first scale (src/outline); the second
 *                  scale's symbols merged in
 *   4. track       detections -> sessions
 *
 * The daemon's frame script (pipeline.c, frame_script) calls the steps one
 * by one and then tracks and sends over TUIO; the bench tool (tools/bench.c)
 * times the very same code. Split so the GPU can threshold frame N+1 while
 * the CPU segments frame N:
 *
 *     engine_submit(e, grey_n);            // starts threshold work (async on the GPU)
 *     engine_collect(e);                   // waits; masks borrowed from the thresholders
 *     engine_submit(e, grey_n_plus_1);     // optional: overlap the next frame
 *     engine_detect(e, grey_n);            // segment and match frame N
 *     track_process(tracker, engine_detections(e), ...);
 *
 * engine_finish() is detect + track; engine_process() is submit + collect +
 * finish.
 *
 * Memory: everything is sized by engine_create() for one frame size; no
 * call allocates. Frames of another size are ERR_SIZE (the pipeline then
 * makes a new engine). The grey image passed to submit is borrowed until
 * collect returns; finish reads grey again (finger contrast).
 */
#ifndef TT_PIPELINE_ENGINE_H
#define TT_PIPELINE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/tracked.h"
#include "../fiducial/match.h"
#include "../outline/outline.h"
#include "../threshold/threshold.h"
#include "../track/track.h"

/* Where the scales are segmented. AUTO: on the GPU (segment_gpu_*) for a
 * scale whose threshold runs on CUDA, the mask labelled in place on the
 * threshold's stream; else on the CPU. GPU: the same, but engine_create
 * fails (ERR_UNSUPPORTED) when the GPU segmenter cannot run. Either way
 * the trees equal the CPU segmenter's, which stays the fallback: a GPU
 * failure mid-run is logged once and that scale goes on on the CPU. */
enum engine_segment_backend { ENGINE_SEGMENT_AUTO = 0, ENGINE_SEGMENT_CPU, ENGINE_SEGMENT_GPU };

struct engine_config {
	int width, height;
	const char *backend;           /* threshold backend: "cpu", "cuda", "auto" */
	struct threshold_config thr;   /* first scale (max sizes are set from width/height) */
	int gate_range;                /* thr.gate holds for frames whose grey spans this much; a frame
					* spanning less is read at a gate scaled down with its range
					* (engine.c, frame_gate); 0 = the gate for every frame */
	int radius2, median2;          /* second scale; radius2 0 = off */
	int mode2;                     /* second scale's enum threshold_mode */
	bool scale3;                   /* a third scale: the first's settings but mode3 */
	int mode3;                     /* third scale's enum threshold_mode */
	float mean_scale3;             /* third scale, local-mean methods: a second pass in its windows with
					* mean_radius this fraction of the symbol's size (windows.h); 0 = off */
	int radius_small;              /* third scale: a pass for small symbols, Bernsen at this radius without
					* a median in windows around small structure (windows.h); 0 = off */
	int radius_small_check;        /* that pass and radius_up's: each symbol they read is read again at
					* this Bernsen radius (no median, no speck share) and becomes fuzzy
					* where that read gives another ID (merge.h); 0 = off */
	bool check3;                   /* the third scale's local-mean reads (its first and scaled passes) of
					* symbols of up to 40 px are checked so too (third.c, third_detect) */
	bool check1;                   /* the first scale's lone symbols read again at its radius + 1, on
					* the CPU; another ID there: fuzzy (third.c, third_lone_check) */
	int radius_up;                 /* third scale: a pass on windows enlarged twice, Bernsen at this radius
					* gate_up without a median (third.c, threshold/upsample.h); 0 = off;
					* its threshold also confirms radius_small's reads of more specks than
					* that pass's share (merge.h merge_confirm), which without it stand not */
	int gate_up;                   /* that pass's Bernsen gate, 0..255 */
	int close_up;                  /* that pass reads its parts again against a grey closing of this radius
					* (enlarged pixels, threshold/closing.h); 0 = off, at most 8 */
	int close_up_pct;              /* that read: white above this percent of the closing, 1..100 */
	bool sharp_up;                 /* that pass reads the places of the third scale's fuzzy symbols of up
					* to 96 px again, enlarged by Lanczos-3 (third.c up_sharp) */
	bool ink_up;                   /* that pass reads the closing pass's ink windows (close_scale3) enlarged
					* by Lanczos-3 against a small local mean (third.c third_up), and
					* its Lanczos read tries that threshold third and Sauvola's fourth
					* (up_sharp) */
	bool fine_up;                  /* that pass reads the places of its unexplained regions of 28-96 px
					* again, enlarged by Lanczos-3, at Bernsen radius 1 (third.c up_fine) */
	bool rectify_up;               /* that pass reads its places of squeezed symbols again, stretched
					* back along their short axis and deconvolved (third.c up_rectify) */
	bool mean_up;                  /* that pass reads its own windows again as the ink windows, enlarged
					* by Lanczos-3 against a small local mean (third.c up_part) */
	bool sauvola_up;               /* those local-mean reads (of ink windows and, with mean_up, its own)
					* are followed by Sauvola's rule where they read nothing
					* (third.c up_ink_part) */
	bool encode_up;                /* and then, where neither read, by the local mean on the
					* enlargement gamma-encoded (third.c up_ink_part) */
	bool sharpen_up;               /* and last, where none read, the enlargement sharpened
					* (upsample_sharpen) by the local mean; the read three times
					* enlarged too (third.c up_ink_part, up_triple) */
	float close_scale3;            /* third scale: a pass in its windows against a grey closing of radius
					* this fraction of the symbol's size (threshold/closing.h); 0 = off */
	int close_pct;                 /* that pass: white above this percent of the closing, 1..100 */
	int close_dark;                /* that pass read again at this percent of the frame's gate, whole
					* symbols only, as fallbacks (third.c, third_closed); 0 = off */
	int ratio3;                    /* third scale: a pass in its first pass's windows by Bernsen's window
					* against the light's ratio, the grey offset by this (closing_ratio()
					* in threshold/closing.h); 0 = off */
	bool ratio3_large;             /* that pass also at 2-4 times the first scale's radius, for symbols of
					* 6-10 times it, where no other read holds their place */
	bool deblur3;                  /* third scale: a pass in its windows that undoes a motion streak
					* (threshold/deblur.h); needs mean_scale3 > 0 for its radius */
	bool defocus3;                 /* that pass also undoes a defocus blur (deblur.h) */
	bool deblur3_high;             /* that pass also reads a streak's deconvolved grey at
					* THIRD_DEBLUR_HIGH_RADIUS (third.c), whole trees only */
	int deblur3_pct;               /* that pass: windows in their order while their area stays within
					* this percent of the frame's; 0 = all */
	int deblur3_bias;              /* that pass: the bias of its local means over the deconvolved grey,
					* percent below the mean that is still black (0..50) */
	int segment_threads;           /* bands a scale is segmented in; 0 = auto */
	int segment_backend;           /* enum engine_segment_backend */
	int32_t max_runs, max_regions; /* per scale and frame; 0 = from the frame size (core/regions.h) */
	struct match_config match;     /* trees, finger and blob settings */
	struct outline_config outline; /* outlines, touch, hands: first scale, after match;
					* max_points 0 = no outline stage at all */
	struct track *tracker;         /* borrowed: outlives engines, so session IDs
					* survive a frame-size change */
	int32_t max_detections;        /* capacity of every detection list */
};

/* The timed steps of a frame, in script order: one enum for the engine,
 * the pipeline's script, --stats and the window (snapshot.stage_ms). TOTAL
 * is the sum of the five steps; LATENCY from the capture timestamp to the
 * TUIO bundles sent. The last three split match (for --stats' tails): the
 * first scale's matching and outlines, the third scale (its windows or its
 * whole frame), and waiting for the second scale's worker with the merge. */
enum stage {
	STAGE_THRESHOLD, STAGE_SEGMENT, STAGE_MATCH, STAGE_TRACK, STAGE_TUIO, STAGE_TOTAL, STAGE_LATENCY,
	STAGE_MATCH_FIRST, STAGE_MATCH_THIRD, STAGE_MATCH_WAIT, STAGE_N
};
/* "threshold", ..., "frame total", "capture to TUIO", "match: first",
 * "match: third", "match: wait 2nd". */
const char *stage_name(enum stage s);

/* Nanoseconds each stage held the caller for the last frame (threshold:
 * time in submit plus time waiting in collect, except that waiting for a
 * scale the GPU labels counts as segment: one wait covers its threshold
 * and its labelling, queued on one stream; match includes waiting for
 * the second scale's worker and the merge). The engine writes threshold,
 * segment and match; track only in engine_finish/engine_process. */
struct engine_times {
	int64_t ns[STAGE_N];
};

struct engine;

struct engine *engine_create(const struct engine_config *cfg, int *err);
void engine_destroy(struct engine *e);  /* NULL-safe */

/* Applies live settings (radius, gate, prefilters, radius2, finger and blob
 * settings). Sizes, backend and tracker stay. */
int engine_set_config(struct engine *e, const struct engine_config *cfg);

/* Starts the frame's threshold work, then finds the third scale's ink
 * blocks in grey (windows_ink_blocks) meanwhile; engine_detect() of the
 * same frame (the same pixels) takes them, of another finds them again. */
int engine_submit(struct engine *e, const struct image_u8 *grey);
/* Waits for the first scale (and the third's whole-frame mask); the second
 * scale is collected by engine_detect() on its worker, under the first's
 * matching, or by an overlapped engine_submit() before it resubmits. */
int engine_collect(struct engine *e);
/* Steps 2 and 3 on the collected masks: segment and match, both scales
 * (the second on a worker meanwhile), the second's symbols merged in;
 * engine_detections() holds the result. */
int engine_detect(struct engine *e, const struct image_u8 *grey);
int engine_finish(struct engine *e, const struct image_u8 *grey, uint64_t frame, int64_t t_capture_ns,
		  struct tracked_state *out);
int engine_process(struct engine *e, const struct image_u8 *grey, uint64_t frame, int64_t t_capture_ns,
		   struct tracked_state *out);

/* What the last frame produced, borrowed until the next call. The mask is
 * the first scale's thresholder's own (no copy): valid until the next
 * engine_collect(), engine_set_config() or destroy; the overlapped
 * engine_submit() of the next frame leaves it alone. Where the GPU
 * segments, the mask stays on the GPU unless engine_want_mask() asked for
 * it; then this call downloads it (and waits). NULL when the GPU failed. */
const struct bitmask *engine_mask(struct engine *e);
/* Whether the first scale's mask is read on every frame (--dump, the
 * window): it then comes back with the threshold, overlapped with the
 * GPU's work, rather than on demand in engine_mask(). Default off. */
void engine_want_mask(struct engine *e, bool on);
const struct detections *engine_detections(const struct engine *e);

/* Where the third scale ran since it was switched on (--stats): frames,
 * frames it ran over the whole frame (its windows would have covered more
 * than half of it), the windows it ran in on the others, and the pixels of
 * frame or windows it covered in all; the same for its second pass
 * (mean_scale3), its closing pass (close_scale3) and its small-symbol pass
 * (radius_small; a frame it ran over whole counts as one window). NULL
 * while there is no third scale. */
struct engine_third_stats {
	int64_t frames, whole_frames, windows, area_px;
	int64_t scaled_windows, scaled_area_px; /* the second pass's (mean_scale3), a rung of its ladder a window */
	int64_t closed_windows, closed_area_px; /* the closing pass's (close_scale3) */
	int64_t ratio_windows, ratio_area_px;   /* the ratio pass's (ratio3) */
	int64_t small_windows, small_area_px;   /* the small-symbol pass's (radius_small) */
	int64_t up_windows, up_area_px;         /* the upsampled pass's (radius_up), in the frame's pixels */
	int64_t deblur_windows, deblur_area_px; /* the deblurring pass's (deblur3): windows it looked at */
	int64_t deblur_skipped;                 /* and windows past its bound (deblur3_pct) */
	int64_t deblur_streaks, deblur_defocused; /* of those it looked at: deconvolved for a streak, a defocus */
	int64_t deblur_frames;                  /* frames deconvolved whole for a defocus */
};
const struct engine_third_stats *engine_third_stats(const struct engine *e);

/* The frames' gates (gate_range, --stats): frames read, of them at a gate
 * under the configured one and over it, and the lowest and highest gate a
 * frame was read at (0 before the first frame). */
struct engine_gate_stats {
	int64_t frames, low_frames, high_frames;
	int lowest, highest;
};
const struct engine_gate_stats *engine_gate_stats(const struct engine *e);

/* How long each Bernsen scale's GPU labelling was waited for (threshold
 * kernels included: the labelling is queued behind them), over the frames
 * that scale was labelled on the GPU (--stats): the first scale's in
 * engine_collect, the second's after it, on the worker in engine_detect
 * while the first is matched (or before the next frame's overlapped
 * submit), so the second's wait is about what its work ran past the
 * first's. */
struct engine_wait_stats {
	int64_t frames[2], ns[2];
};
const struct engine_wait_stats *engine_wait_stats(const struct engine *e);

/* The first scale's region tree of the last engine_detect (borrowed, valid
 * until the next engine_collect, engine_set_config or destroy); NULL when
 * the last detect failed. */
const struct region_tree *engine_regions(const struct engine *e);
const struct engine_times *engine_times(const struct engine *e);
const char *engine_backend(const struct engine *e);  /* "cpu" or "cuda" */
/* Where the first scale is segmented now: "cpu" or "gpu". */
const char *engine_segment_backend(const struct engine *e);

/* The equaliser, against uneven light: engine_equalize(e, true) takes the
 * next submitted frame as the empty table's background; from then on each
 * frame is thresholded as grey - background + mean(background) (clamped),
 * which flattens vignetting and hot spots. false switches it off. The
 * matcher still reads the camera frame itself (finger contrast). */
void engine_equalize(struct engine *e, bool on);
bool engine_equalizing(const struct engine *e);

/* Lets the GPU read frames from a long-lived buffer by DMA (capture ring slots). */
int engine_register_buffer(struct engine *e, void *data, size_t bytes);

#endif
