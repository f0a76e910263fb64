/*
 * stage.h - recognition of untagged objects in the running daemon: SIFT
 * and matching on a thread of their own, at a limited rate, never holding
 * up the fiducial path; the objects it last recognised merged into each
 * frame's detections, so the tracker gives them sessions and smoothing
 * like symbols and TUIO sends them on /tuio/2Dobj with their library IDs.
 *
 * Usage, on the pipeline thread, once a frame (after the fiducial matcher,
 * before the tracker):
 *     struct objects_stage *s = objects_stage_create(&cfg, &err);
 *     objects_stage_poll(s, frame, t_ns);          // takes a finished recognition, drops stale objects
 *     objects_stage_follow(s, tree);               // moves them with their regions (follow.h)
 *     objects_stage_submit(s, &grey, tree, frame, t_ns); // starts one when idle and due
 *     objects_stage_merge(s, engine_detections(e), &det);  // det: symbols + recognised objects
 *     track_process(tracker, det, ...);
 *     objects_stage_destroy(s);
 *
 * Algorithm:
 *   - submit: when the worker is idle and at least 1/rate_hz seconds of
 *     capture time have passed since the last submission, the grey frame is
 *     copied into the stage's own buffer (with follow on, the frame's
 *     regions too) and the worker woken; otherwise
 *     nothing happens (a busy worker never queues frames: the newest frame
 *     at the next due time is the one recognised).
 *   - worker (thread "tt-objects"): SIFT keypoints of the copy (sift.h),
 *     then recognition against the library (recognise.h; its nearest-
 *     neighbour search on the GPU when the SIFT backend has one, sift.h's
 *     sift_nearest, else on the CPU: the same matches), then it marks
 *     the result done and sleeps until the next submission.
 *   - poll: a done result updates the list of recognised objects: each
 *     object found takes the new pose (position, angle, scale, the corners
 *     of its learned picture in the frame) and the capture time of the
 *     frame it was found in; objects not found keep their pose. With
 *     follow on, its follower restarts from the recognised pose in the
 *     recognised frame's regions, so the next follow brings it to the
 *     present frame (the recognition is a few frames old when it
 *     arrives); when those regions could not be kept, an object already
 *     held at the submission takes the recognised pose moved on by what
 *     its follower measured since. Any object whose last recognition is older than
 *     hold_ns of capture time is dropped (the tracker then lingers and
 *     removes it as it does a lost symbol). Poll never waits; a replay
 *     (the daemon's --once) calls objects_stage_wait first, so its output
 *     does not depend on the machine's speed: a frame submitted at frame N
 *     is merged at frame N + 1. Live, nothing waits for the worker.
 *   - follow (follow on): each object is carried along by the regions
 *     under it in the frame's region tree (follow.h), every frame between
 *     recognitions; an object whose regions vanished is dropped at once.
 *   - merge: the frame's detections are copied (every list, up to the
 *     stage's capacity) and each recognised object appended as a decoded
 *     symbol: its library ID, its centre, its angle, size_px the larger
 *     side of its learned picture times its scale, no region (root -1).
 *     Object IDs lie in their own range above every symbol ID (the daemon
 *     checks at start), so the tracker never confuses the two.
 *
 * Time base: capture timestamps of the frames (t_ns), so rate and hold
 * follow the source's clock (a replay's frame times), not the machine's;
 * t_ns 0 falls back to the monotonic clock. A time earlier than the last
 * submission's (a looped replay starting again) makes a recognition due at
 * once and drops the objects held.
 *
 * Memory: the frame copy (width x height bytes), with follow on room for
 * the frame's regions (regions_region_capacity of the frame size, 72 bytes
 * each: 2.6 MB at 1080p), max_keypoints keypoints,
 * one detection per library object, the merged detections (max_detections
 * in each list) and the statistics are allocated at create time; submit,
 * poll and merge allocate nothing. The SIFT backend may allocate on the
 * worker thread (OpenCV does, every call). The library is borrowed and must
 * outlive the stage, unchanged. A frame of another size than the stage's
 * is not submitted (the pipeline makes a new stage when the size changes).
 *
 * Threads: create, submit, poll, merge, stats and destroy belong to one
 * thread (the pipeline's); the worker touches only the frame copy and its
 * own result, handed over under a mutex.
 */
#ifndef TT_OBJECTS_STAGE_H
#define TT_OBJECTS_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/image.h"
#include "../core/regions.h"
#include "follow.h"
#include "objects.h"
#include "recognise.h"
#include "sift.h"

struct objects_stage_config {
	const struct objects_library *lib; /* borrowed: outlives the stage, unchanged */
	int width, height;                 /* frames submitted, px */
	const char *backend;               /* SIFT backend name (sift.h): "auto", "opencv" */
	struct sift_config sift;           /* max_keypoints bounds the worker's buffers */
	struct objects_match_config match;
	float rate_hz;                     /* recognitions a second at most, > 0 */
	int64_t hold_ns;                   /* an object not recognised again for this long is dropped, > 0 */
	int32_t max_detections;            /* capacity of each merged detection list, > 0 */
	bool follow;                       /* follow objects through their regions between recognitions */
};

/* One recognised object, as the last recognition that found it saw it. */
struct objects_seen {
	int id;                /* library ID */
	int index;             /* index in the library (its name: objects_library_get) */
	float x, y;            /* centre of the learned picture in the frame, px */
	float angle;           /* rad, 0..2 pi, clockwise on screen */
	float scale;           /* frame size / learned size */
	float size_px;         /* larger side of the learned picture in the frame */
	float corners[4][2];   /* the learned picture's corners in the frame, px, in picture order
				* (0,0), (w-1,0), (w-1,h-1), (0,h-1) */
	uint64_t frame;        /* the frame it was recognised in */
	int64_t t_ns;          /* that frame's capture time */
};

/* Counters for --stats: recognitions finished, failed (the SIFT backend
 * failed), frames submitted, and the latency of finished recognitions in
 * frames (frame merged - frame submitted) and the worker's time (SIFT +
 * matching), median and maximum. */
struct objects_stage_stats {
	uint64_t n_done, n_failed;
	int latency_frames_median, latency_frames_max;
	double work_ms_median, work_ms_max;
	double sift_ms_median;
	int keypoints_median;
};

struct objects_stage;

/* Starts the worker thread. NULL with *err: ERR_RANGE (bad config),
 * ERR_UNSUPPORTED (no SIFT backend: logged with the reason), ERR_NOMEM,
 * ERR_DEVICE (no thread). */
struct objects_stage *objects_stage_create(const struct objects_stage_config *cfg, int *err);
/* Stops the worker (after its recognition in flight) and frees. NULL-safe. */
void objects_stage_destroy(struct objects_stage *s);

/* Starts a recognition of grey (copied) when the worker is idle and one is
 * due; returns whether it did. grey and tree (the frame's regions, or
 * NULL) are borrowed for the call: with follow on, the regions off the
 * frame's border are copied too, so that the objects the recognition finds
 * are followed from this frame on (follow.h). */
bool objects_stage_submit(struct objects_stage *s, const struct image_u8 *grey, const struct region_tree *tree,
			  uint64_t frame, int64_t t_ns);
/* Takes a finished recognition, if one is done (never waits), and drops
 * objects older than hold_ns at t_ns. Returns whether the list changed. */
bool objects_stage_poll(struct objects_stage *s, uint64_t frame, int64_t t_ns);
/* With follow on: moves every recognised object with the regions under it
 * in this frame's region tree (follow.h; tree may be NULL: poses held)
 * and drops those whose regions vanished. Call after poll, before submit
 * and merge. Returns whether the list lost an object. */
bool objects_stage_follow(struct objects_stage *s, const struct region_tree *tree);
/* in + the recognised objects into the stage's own detections, returned
 * (borrowed until the next merge or destroy). */
const struct detections *objects_stage_merge(struct objects_stage *s, const struct detections *in);
/* Waits until no recognition is in flight (replays: before poll, outside
 * the timed frame). */
void objects_stage_wait(struct objects_stage *s);

/* The recognised objects (borrowed until the next poll). */
const struct objects_seen *objects_stage_seen(const struct objects_stage *s, int *n);
void objects_stage_stats(struct objects_stage *s, struct objects_stage_stats *out);

#endif
