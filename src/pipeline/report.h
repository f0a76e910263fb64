/*
 * report.h - what the pipeline shows of its work: per-stage timings
 * (--stats), the once-a-second summary line and systemd STATUS=, --dump
 * files, and the window's snapshots.
 *
 * Threads: report_frame, report_summary_publish and report_print_stats run
 * on the pipeline thread (or the only thread, --once); report_print_summary
 * and report_snapshot_front on the main thread. The summary and the
 * snapshots cross between them under the report's own locks; nothing else
 * is shared.
 *
 * Snapshots are triple-buffered: the pipeline fills the back one and swaps
 * it into "ready"; the main thread swaps "ready" into "front" and reads
 * only that, so neither waits for the other.
 *
 * Memory: report_create allocates the timing rings; report_size allocates
 * the dump image and the snapshot images for one frame size (called when
 * the stages are sized, never per frame). Nothing per frame.
 */
#ifndef TT_PIPELINE_REPORT_H
#define TT_PIPELINE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/config.h"
#include "../core/detect.h"
#include "../core/frame.h"
#include "../core/image.h"
#include "../core/snapshot.h"
#include "../core/tracked.h"
#include "engine.h"

/* Everything one processed frame leaves for the report (all borrowed for
 * the call). */
struct report_frame {
	uint64_t fseq;                   /* the frame's TUIO frame number */
	const struct frame *frame;
	const struct bitmask *mask;      /* the first scale's binary image; NULL when report_wants_mask
					  * said no, or the GPU could not give it (dumped and shown as black) */
	const struct detections *det;
	const struct tracked_state *st;
	const int64_t *ns;               /* [STAGE_N]: this frame's stage times; STAGE_LATENCY <= 0 = none */
	const char *backend;             /* "cpu" or "cuda" */
	/* For the window: the running settings and the source's state. */
	const struct tt_config *cfg;
	const char *status;
	uint64_t dropped_frames, bad_frames;
	bool paused;
	const struct snapshot_recognised *recognised; /* recognised objects' outlines (may be NULL) */
	int n_recognised;
};

struct report;

/* dump_dir: --dump's folder ("" = off), created with its parents when
 * missing (ERR_CONFIG, logged, when it cannot be); window: keep snapshots for it. */
struct report *report_create(const char *dump_dir, bool window, int *err);
void report_destroy(struct report *r);  /* NULL-safe */
/* No window will show the frames (headless, or the window could not
 * open): the snapshots are dropped, so no frame pays for copying its grey
 * image and expanding its mask, nor the GPU path for downloading the mask.
 * Before the first frame (report_wants_mask is read when the stages are
 * sized). */
void report_no_window(struct report *r);

/* Sizes the dump image and snapshots for w x h frames. */
int report_size(struct report *r, int w, int h);

/* Whether report_frame reads the mask (a dump that still writes, or a
 * window): where the GPU segments, a mask nobody reads stays there. */
bool report_wants_mask(const struct report *r);

/* Times, dump and snapshot of one processed frame; `now_ns` is when it was
 * sent (the frame rate is counted from it). */
void report_frame(struct report *r, const struct report_frame *fr, int64_t now_ns);

/* Main thread: the newest snapshot (NULL without a window), valid until the
 * next call. */
const struct snapshot *report_snapshot_front(struct report *r);

/* Pipeline thread: refreshes the summary from the last tracked state. */
void report_summary_publish(struct report *r, uint64_t fseq, const struct tracked_state *st, const char *backend,
			    bool quiet);
/* Pipeline thread: when the summary was last published (CLOCK_MONOTONIC ns). */
int64_t report_summary_age_ns(const struct report *r, int64_t now_ns);
/* Main thread: prints the summary line (unless quiet) and sends STATUS=. */
void report_print_summary(struct report *r, const char *status);
/* Main thread, --stats, now and then (once a second): samples every
 * thread's CPU time, for report_print_stats' line of CPU a frame by thread
 * (the first frame's baseline is taken in report_frame). */
#define REPORT_MAX_THREADS 64
void report_sample_threads(struct report *r);
/* At the end: --stats, the median and p99 of every stage, the CPU time a
 * frame, and that time by thread (threads named alike added up). */
void report_print_stats(struct report *r, uint64_t frames, uint64_t bad_frames, uint64_t dropped,
			const char *backend, int w, int h);

#endif
