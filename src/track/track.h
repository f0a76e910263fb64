/*
 * track.h - detections over time: session IDs, association, prediction,
 * smoothing, dead band, calibration, inversion (../shared/spec/amoeba.md §8,
 * ../shared/spec/tuio.md §3).
 *
 * Objects are associated to detections of the same ID near their predicted
 * position; fuzzy symbols and root regions near a prediction keep a known
 * object alive (never create one); a different ID decoded at a known
 * object's place for several frames in a row replaces it. A lost object
 * lingers `linger_frames` frames at its prediction, then is removed.
 * Fingers are reported from their second consecutive frame and removed the
 * frame they are lost. Session IDs come from one counter, never reused.
 *
 * Memory: capacities fixed at create time; track_process() allocates nothing.
 * The arrays in the output tracked_state are the tracker's, valid until the
 * next call.
 */
#ifndef TT_TRACK_H
#define TT_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/detect.h"
#include "../core/tracked.h"
#include "calib.h"

struct one_euro_config {
	bool enabled;
	float min_cutoff_hz, beta, d_cutoff_hz;
};

struct track_config {
	int32_t max_items;          /* capacity of each list */
	int linger_frames;          /* frames a lost object is kept at its prediction (0..10) */
	float dead_band_px;         /* resting objects: moves below this are not reported */
	float dead_band_rad;
	bool invert_x, invert_y, invert_angle;
	struct one_euro_config euro_objects, euro_fingers, euro_blobs;
	/* A new finger needs finger_det.roundness >= this; a tracked one keeps
	 * any roundness the classifier let through (0 = no extra demand). */
	float finger_new_roundness;
	const struct calib_map *calib;  /* borrowed; NULL = identity */
};

struct track;

struct track *track_create(const struct track_config *cfg, int *err);
void track_destroy(struct track *t);  /* NULL-safe */
int track_set_config(struct track *t, const struct track_config *cfg);
/* Forgets everything (new session IDs from here on, counter not reset). */
void track_reset(struct track *t);

/* t_ns: capture time of the frame (monotonic ns), for velocities.
 * frame: the pipeline's frame number (fseq). */
int track_process(struct track *t, const struct detections *det, uint64_t frame, int64_t t_ns,
		  struct tracked_state *out);

#endif
