/*
 * engine_int.h - the engine's private state and what its two files share.
 * Not part of the API: only src/pipeline/engine.c and third.c include it;
 * engine.h is the API.
 *
 * engine.c holds the frame's script around the scales: each scale's
 * threshold, segmenters and matcher (struct scale), the second scale's
 * worker, the frame's gate, submit / collect, detect and the merge of the
 * scales' symbols. third.c holds the third scale: its windows
 * (windows.h), its passes over them (the local mean, the scaled ladder,
 * the closing, the ratio and deblurring passes on workers of their own,
 * the small-symbol pass, the upsampled pass and its Lanczos reads), their
 * buffers, and the tie-break between the scales.
 */
#ifndef TT_PIPELINE_ENGINE_INT_H
#define TT_PIPELINE_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/pool.h"
#include "../fiducial/trees.h"
#include "../segment/segment.h"
#include "../threshold/closing.h"
#include "../threshold/deblur.h"
#include "engine.h"
#include "windows.h"

/* One threshold scale: its thresholder, mask, segmenters and matcher. */
struct scale {
	struct threshold *thr;
	struct segment *seg;          /* the CPU segmenter: the reference, and the GPU's fallback */
	struct segment_gpu *gseg;     /* the GPU segmenter; NULL: this scale segments on the CPU */
	const struct region_tree *tree; /* the GPU's tree of the collected frame; NULL: segment the mask */
	bool labelled;                /* the submitted frame is being segmented on the GPU */
	struct match *mat;
	struct bitmask mask;  /* borrowed from thr (threshold_collect_view); the third scale owns its own */
	struct detections det;
	bool submitted;
	int err;              /* of the last collect */
};

/* The second scale is collected (its GPU work waited for, or its CPU
 * threshold run), segmented and matched on a worker thread while the
 * calling thread does the first: the two are independent until the merge,
 * and segmentation is most of a frame's CPU time. Its GPU work ends after
 * the first's, so the first scale's matching runs under that wait. */
struct worker {
	struct pool *pool;            /* one worker; NULL: the second scale runs inline */
	const struct image_u8 *grey;  /* the frame of the current job (borrowed) */
	bool ok;                      /* scale 2 produced detections */
};

/* The third scale runs in windows (windows.h) of the frame: each is
 * thresholded with a halo into crop, cut out of it into the scale's mask,
 * segmented and matched into det, and its symbols moved into the scale's
 * detections in frame coordinates. Where the first scale thresholds on
 * CUDA, the third can threshold the whole frame there too (submitted with
 * the others, tens of microseconds, but a mask to download and wait for)
 * and the windows are cut from that mask: the same bits, since a window's
 * halo covers what its threshold reads. It does so for a frame after one
 * whose windows covered more than an eighth of the frame (frames change
 * little from one to the next); otherwise its few windows, if any, are
 * thresholded on the CPU (cpu), and a frame without windows costs the GPU
 * and the waits nothing. */
#define THIRD_MAX_WINDOWS 32
/* The upsampled pass's lists a frame (third.c: the fuzzy reads up_sharp()
 * judges by, the places up_fine() and up_triple() read). */
#define UP_SHARP_MAX_TREES 256
#define UP_FINE_MAX_PLACES 256
/* The upsampled pass's unconfirmed reads a frame that merge_confirm()
 * moved away, kept for merge_contradicted() (third.c, third_up). */
#define UP_FAILED_MAX 64
/* The ratio pass's (third.c, ratio3) reads with a dot more elongated
 * than this (variance ratio; a round
 * dot at 45 degrees is 2) or of more than THIRD_RATIO_DOT_AREA times the
 * median dot are vetoes (match.h dot_max_elongation, merge_vetoes): the
 * low threshold broke a blob's wall into a dot. Measured on 12 seeds of
 * sheet-half (24 frames, reacTIVision's set, 3456 symbols) and the 16888
 * symbols of 9 presets, both sets, 5 seed offsets: 6 and 3 read 3188 and
 * 14146 symbols with 10 and 20 wrong IDs where the pass without them read
 * 3179 and 14150 with 16 and 21; 8 and 3 read 3186 and 14149 (10, 21); 4.5
 * and 3 3188 and 14140 (10, 20); 6 alone 3188, 14147 (13, 20); the area
 * alone 3180, 14149 (13, 21). Such reads simply dropped (no veto) let a
 * read of another ID at the place from the pass's other radius stand,
 * which the vetoed one had cancelled (dim, seed 46: a wrong ID). The
 * third scale's first and scaled passes use the same vetoes
 * (third_match_vetoes): the scaled pass's lower rungs, whose small radii
 * break walls too, and the first pass and the scaled pass's own radius,
 * where a hard shadow's edge across a symbol leaves a streak of its band
 * of shadowed paper as a dot and joins two blobs through another (sheet
 * tilted 40-50 degrees, seed 40: a 133 px 1 read as 11 at radius 16 and
 * 13, each streak 19-24 times as long as wide, where the closing pass
 * read 1). */
#define THIRD_RATIO_DOT_ELONGATION 6.0f
#define THIRD_RATIO_DOT_AREA 3.0f

/* A pass of the third scale that reads its windows on a worker of its own
 * while the calling thread runs the passes before it, with buffers of its
 * own (pass_job_start(), pass_job_finish()); its symbols join the scale's
 * where the pass stands in the order, so the result is the one of reading
 * them in turn. */
struct pass_job {
	struct pool *pool;          /* one worker; NULL: read on the calling thread */
	struct segment *seg;
	struct match *mat;          /* the third scale's settings (the ratio pass: even_leaves) */
	struct bitmask crop, mask;  /* a window with its halo; the window */
	struct detections det, out; /* one window's; the pass's */
	const struct image_u8 *grey; /* the frame, borrowed while the job runs */
	const struct engine_config *cfg;
	int gate;                   /* the frame's Bernsen gate (frame_gate) */
	bool running, ok;
};

/* The ratio pass (ratio3), such a job: its symbols join after the closing
 * pass's. */
struct ratio_job {
	struct pass_job job;
	struct closing *close;
	struct window win[THIRD_MAX_WINDOWS];
	int n;                      /* windows in win, -1: the whole frame */
	int side[THIRD_MAX_WINDOWS]; /* the longest side of live structure in each (windows_live_side) */
	int large_from;             /* out's symbols from here on are the large rungs' (-1: none) */
};

/* The deblurring pass (deblur3) likewise reads its windows on a worker of
 * its own, with buffers of its own, from the start of the third scale; its
 * symbols join the scale's last, where the pass stands in the order. */
struct deblur_job {
	struct pass_job job;
	struct match_config mc;     /* its matcher's configuration (the upper rung's differs) */
	struct deblur *deblur;
	struct window win[THIRD_MAX_WINDOWS];
	int n;                      /* windows in win: the radius rule's, the saturated roots', then the small ones */
	int n_rule;                 /* of them, the radius rule's */
	int n_streaked;             /* then up to here windows_find_saturated's, read for a streak at the rule's radius only */
	int64_t budget;             /* the small windows' area at most (deblur3_pct of the frame; -1: any) */
	int64_t streaks, defocused; /* windows deconvolved for a streak, a defocus */
	int64_t small_read, small_area; /* small windows read */
	struct detections fewer, longer; /* a longer streak's two reads (long_reads) */
	/* The whole out-of-focus frame (deblur_frame()) reads on a worker of
	 * its own beside the windows, under the blur the last frame whose
	 * windows were read decided (a camera's focus is the same from frame
	 * to frame): so its time is not added to theirs. */
	struct pass_job frame;
	struct deblur *frame_deblur;
	float sigma;                /* this frame's blur for it: 0, not read whole */
	float next;                 /* the blur the windows read decided for the next frame */
};

/* A fuzzy read of the upsampled pass's Bernsen read: its place and size
 * (frame pixels) and its tree, for up_sharp(). */
struct up_fuzzy {
	float x, y, size;
	char canon[TREES_MAX_NODES + 2];
};

/* A submitted frame's ink blocks (windows_ink_blocks). */
struct ink_blocks {
	struct windows_block *b; /* windows_ink_blocks_cap() for the frame size */
	uint8_t *lohi;           /* the grey's block extremes, found on the CPU */
	int n;
	const uint8_t *grey;     /* the pixels they were found in (NULL: none) */
	int gate;                /* and at that gate */
	/* Submitted to the first scale's thresholder, whose collect brings
	 * the extremes of these pixels (NULL: none asked for). */
	const uint8_t *gpu_grey;
};

struct third {
	int32_t *scratch;      /* windows_scratch_len() for the frame size and region capacity */
	size_t scratch_len;
	/* The ink blocks of the last two frames submitted: engine_submit()
	 * finds a frame's beside the GPU's threshold of it, and the next
	 * frame's submit may come before this one's detect. */
	struct ink_blocks ink[2];
	int ink_sub;           /* the entry the last submit filled */
	int ink_cur;           /* the collected frame's */
	struct windows_scan scan; /* the frame's verdicts on the first scale's regions (third_detect) */
	struct bitmask crop;   /* a window and its halo, thresholded; frame-sized buffer */
	struct detections det; /* one window's */
	struct window win[THIRD_MAX_WINDOWS];
	bool gpu;              /* s3.thr runs on CUDA: whole frames, into full */
	bool want_full;        /* gpu: submit the next frame's whole-frame threshold */
	bool full_pending;     /* the collected frame's whole-frame threshold not yet waited for */
	bool have_full;        /* full holds the collected frame's mask */
	struct bitmask full;   /* the frame's mask, borrowed from s3.thr after a collect */
	struct threshold *cpu; /* gpu: the same threshold on the CPU, for windows without full */
	struct threshold *small; /* the small-symbol pass's, on the CPU; NULL while radius_small is 0 */
	struct match *small_mat; /* and its matcher (third_small_configs) */
	struct threshold *check; /* its symbols' second read (radius_small_check), on the CPU; NULL: off */
	struct match *check_mat; /* and its matcher (third_check_configs) */
	bool dot_vetoes;          /* s3's matcher holds the dot vetoes (third_match_vetoes) */
	struct closing *close; /* the closing pass's (close_scale3), CPU only */
	/* The upsampled pass's (radius_up > 0; else all NULL/empty): its
	 * threshold, segmenter and matcher for parts of THIRD_UP_SIDE pixels
	 * enlarged twice, the enlarged part, its mask and a tile's cut. */
	struct threshold *up;
	struct threshold *up_fine; /* its fine read's (up_fine_config), on Lanczos enlargements */
	struct deblur *up_deblur; /* its rectified read's (rectify_up; else NULL): up_rectify() */
	struct segment *up_seg;
	struct match *up_mat;
	struct image_u8 up_img;
	struct bitmask up_crop, up_win;
	struct image_u8 up_src; /* a part of the frame sharpened (sharpen_up): up_enlarge_sharpened() */
	int32_t *up_rows; /* the enlargements' scratch for an enlarged part's width, the sharpening's too */
	struct closing *up_close; /* its closing read (close_up > 0; else NULL) */
	struct threshold *up_mean; /* the local-mean read (ink_up; else NULL): up_ink_part(), up_sharp() */
	struct threshold *up_sauvola; /* the Lanczos read's fourth (ink_up; else NULL): up_sharp() */
	uint8_t up_encode[256]; /* INK_UP_ENCODE_GAMMA's curve: up_ink_part()'s encoded read */
	struct match *up3_mat; /* its read three times enlarged (sharp_up; else NULL): up_triple() */
	struct threshold *up3_check; /* that read's second threshold (UP_TRIPLE_CHECK_RADIUS) */
	struct up_fuzzy up_fuzzy[UP_SHARP_MAX_TREES]; /* this frame's fuzzy reads of its Bernsen read */
	int n_up_fuzzy;
	struct fiducial_det fine[UP_FINE_MAX_PLACES]; /* this frame's places for its fine read (fine_places) */
	int n_fine;
	struct fiducial_det triple[UP_FINE_MAX_PLACES]; /* ... for its read three times enlarged (up_triple) */
	int n_triple;
	struct fiducial_det failed[UP_FAILED_MAX]; /* ... its unconfirmed reads not confirmed (small_confirm) */
	int n_failed;
	struct ratio_job ratio;   /* the ratio pass (ratio3 > 0) */
	struct deblur_job deblur; /* the deblurring pass (deblur3, mean_scale3 > 0) */
	struct engine_third_stats stats;
};

struct engine {
	struct engine_config cfg;
	struct scale s1, s2;  /* s2 exists while radius2 > 0 */
	struct scale s3;      /* exists while scale3 */
	struct third t3;      /* its buffers, while s3 exists */
	struct outline *outline; /* first scale; works only when outline_needed() */
	struct worker w;
	/* Equaliser (engine_equalize): background and the equalised frame. */
	struct image_u8 eq_bg, eq_frame;
	int eq_mean;
	bool eq_on, eq_capture;
	struct engine_times times;
	int64_t submit_ns;
	int64_t label_ns;     /* waiting for the first scale's GPU segmenter in the last collect */
	bool s2_deferred;     /* the collected frame's second scale is still to be collected */
	struct engine_wait_stats wait_stats;
	bool seg_fault_logged;
	bool want_mask;       /* engine_want_mask: the first scale's mask comes back every frame */
	/* The Bernsen gate (frame_gate): of the frame last submitted, of the
	 * frame collected (the one engine_detect reads), and the gates the
	 * thresholds read at submit (s1, s2, s3 on CUDA) and at detect (the
	 * third scale's CPU ones) are set to now. */
	int gate_submitted, gate, gate_submit_set, gate_detect_set;
	struct engine_gate_stats gate_stats;
	const struct region_tree *regions; /* the first scale's tree of the last detect */
};

/* engine.c's, for third.c: a scale's life and its read of a frame, the
 * matcher settings every extra scale starts from, the segmenter settings
 * for a frame, the gate a threshold method reads at. */
void engine_scale_free(struct scale *s);
bool engine_scale_on(const struct scale *s);
void engine_symbols_only(const struct engine_config *c, struct match_config *mc);
struct segment_config engine_segment_config(const struct engine_config *c, const struct match_config *mc);
int engine_scale_create(struct scale *s, const struct engine_config *c, const struct threshold_config *tc,
			const struct match_config *mc, const char *backend);
bool engine_scale_detect(struct scale *s, const struct image_u8 *grey);
int engine_gate_of_mode(int mode, int configured, int frame);

/* third.c's, for engine.c. The third scale's settings and those of its
 * small-symbol pass and of that pass's check (false: off). */
void third_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc);
bool third_small_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc);
bool third_check_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc);
/* Creates, updates or frees the third scale to follow scale3; frees it. */
int third_scale_sync(struct engine *e);
/* The upsampled pass's thresholds that read at gate_up (its Bernsen read,
 * the fine read's, the triple read's check, and the gated local mean of
 * its ink and mean reads) at gate_up raised in proportion to the frame's
 * gate where the frame's noise raised that over the configured gate
 * (engine.c, frame_gate): in frames of 5-10 grey levels of sensor noise,
 * cards of 24-60 px read more and read as other IDs less
 * (docs/recognition.md, "The upsampled pass in noisy frames"). 0 or an
 * error code. */
int third_up_gate(struct engine *e, int gate);
void third_free(struct engine *e);
/* The collected frame's whole-frame GPU mask, waited for (false: none). */
bool third_full(struct engine *e);
/* Whether the frame's ink blocks are wanted; finding them. */
bool third_ink_on(const struct engine *e);
void third_ink_find(struct ink_blocks *k, const struct image_u8 *grey, int gate);
void third_ink_collect(struct engine *e, struct ink_blocks *k);
/* The third scale over the collected frame, in the windows the first
 * scale's tree leaves; the tie-break where the scales disagree. */
bool third_detect(struct engine *e, const struct image_u8 *grey, const struct region_tree *tree1);
bool third_tie_break(struct engine *e, const struct image_u8 *grey);
/* The first scale's lone symbols read again (check1; third.c). */
bool third_lone_check(struct engine *e, const struct image_u8 *grey, const struct detections *d2);

#endif
