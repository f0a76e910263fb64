/*
 * track.h - detections over time: session IDs, association, prediction,
 * smoothing, dead band, calibration, inversion (amoeba symbol specification §8,
 * TUIO specification §3).
 *
 * Objects are associated to detections of the same ID near their predicted
 * position; fuzzy symbols and root regions near a prediction keep a known
 * object alive (never create one); a different ID decoded at a known
 * object's place for several frames in a row replaces it. A lost object
 * lingers `linger_frames` frames at its prediction, then is removed.
 * Fingers are reported from their second consecutive frame and removed the
 * frame they are lost. Session IDs come from one counter, never reused.
 *
 * Algorithm, per frame (all in pixels until reporting):
 *  1. Predict each item from its last measurement and velocity over the time
 *     since that measurement (capture timestamps; 1/30 s when missing).
 *  2. Objects: decoded symbols go to known objects of the same ID within
 *     max(object size, symbol size) of the prediction, nearest pairs first.
 *     A different ID decoded within half a size of an unmatched object is a
 *     conflict: the object is kept (position updated, ID and angle kept)
 *     until the same other ID has been read 3 + age/10 frames in a row
 *     (at most 9), then it is replaced by a new object with a new session;
 *     an object lost in the previous frame is replaced at once. Fuzzy
 *     symbols within its size carry an object missed for at most one frame
 *     (their angle only when within 0.35 rad of the prediction); root
 *     regions 0.67..1.5 times its size within 0.75 size carry an object seen
 *     in the previous frame, angle kept (roots of symbols read this frame,
 *     or lying within half a size of one, are skipped), placed at the
 *     root's box centre plus the symbol-minus-root offset learnt from the
 *     last frame in which the symbol was read with its root reported.
 *     Unclaimed decoded symbols create objects; fuzzy symbols and roots
 *     never do.
 *  3. Fingers and blobs: nearest pairs first within twice the larger size;
 *     a new one becomes visible (gets a session) on its second consecutive
 *     frame and is dropped the first frame it is missing. A blob detection
 *     centred within half an object's size of an object this frame (read,
 *     carried or lingering) and at most twice that size long is the
 *     symbol's white card, not a blob: it is ignored (with blobs_for_objects
 *     the object's own blob, carrying its session, stands for it).
 *  4. Optional One-Euro filter per kind on position (and angle).
 *  5. Reporting: the reported pose moves only when the estimate leaves the
 *     dead band (dead_band_px, dead_band_rad, in pixels and radians) around
 *     it; the frame after the last move reports zero velocity once
 *     (`changed`), then nothing. Positions are x/width, y/height; invert_x
 *     gives (width-1-x)/width (invert_y likewise); then the calibration map;
 *     invert_angle gives 2pi - a (blobs: pi - a). Velocities X, Y, A are the
 *     step of the reported (inverted, calibrated) pose over the time since
 *     the last report, so they follow inversion and calibration exactly
 *     (invert_x negates X; a map that halves distances halves X); m and r
 *     are their changes. Blob angles are the long side's, clockwise from the
 *     x axis, [0, pi).
 *  6. Blob geometry: a blob at rest is `changed` again when a side moves by
 *     more than max(dead_band_px, 1 px) or its area by more than 5 % since
 *     its last set; the blobs of objects and fingers (blobs_for_*) likewise
 *     when the owner's size (an integer box side) moves by more than that,
 *     without a 2Dobj / 2Dcur set.
 *
 *  7. Touch, hands and outlines (outline stage, detect.h): a finger that
 *     turns from hovering to touching or back gets a new session (a touch
 *     is a new cursor for TUIO 1.1 clients); a fingertip of a hand carries
 *     the session of the blob tracked from that hand's detection this frame
 *     (0 while the blob has none); each detection's contours go out with
 *     the session of the item it was matched to this frame (none for an
 *     item without a session, or a hovering finger not reported), points
 *     mapped like positions.
 *
 * Measured: about 60 k instructions a frame with 30 objects and 10 fingers
 * (callgrind, std-1080 scenes, AMD EPYC build machine).
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
#include "../core/calib.h"

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
	/* Also report each object / finger as a blob carrying its session ID
	 * (TUIO 1.1 allows a blob to share its owner's session). The blob is
	 * the owner's box: a symbol's root size square at its angle, a finger's
	 * diameter circle. */
	bool blobs_for_objects, blobs_for_fingers;
	/* Hovering fingers (finger_det.hover) are tracked but reported only
	 * with hover_out, after the touching ones (tracked.h). */
	bool hover_out;
	/* Outlines carried to the output: capacities (0 = none). */
	int32_t max_contours, max_contour_points;
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
