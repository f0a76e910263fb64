/*
 * recognise.h - which learned objects a frame's keypoints show, and where:
 * descriptor matching with the ratio test, then geometric verification by
 * RANSAC on a similarity (position, angle, scale), in plain C.
 *
 * Usage:
 *     struct objects_recogniser *r = objects_recogniser_create(lib, &cfg, max_scene_kp, &err);
 *     objects_recognise(r, scene_kp, n, dets, cap, &n_dets);   // any thread, one at a time
 *     objects_recogniser_destroy(r);
 *
 * Algorithm:
 *   1. Matching: for every scene keypoint, the nearest and second-nearest
 *      library keypoint (squared Euclidean distance of the 128 descriptor
 *      bytes, exhaustive, integer arithmetic: objects_nearest_cpu, or
 *      given by the caller); kept when the nearest is
 *      closer than `ratio` times the second (Lowe's ratio test, distances,
 *      not squares). Ties go to the lower library index, so the result
 *      does not depend on anything but the inputs.
 *   2. The kept matches are grouped by the object their library keypoint
 *      belongs to; an object with fewer than min_inliers matches is done.
 *   3. RANSAC: hypotheses are similarities through two matches (scene =
 *      s R(theta) lib + t, exact through both), drawn by a fixed-seed
 *      generator (every pair when there are few), at most
 *      ransac_iterations of them. A match is an inlier of a hypothesis when
 *      its scene point lies within inlier_px (times sqrt(s) when s > 1) of
 *      the predicted point, its keypoints' sizes agree with s within a
 *      factor of 1.6 and their orientations with theta within 25 degrees.
 *      Hypotheses with s outside min_scale..max_scale are dropped.
 *   4. The best hypothesis is refined by least squares on its inliers
 *      (closed-form Procrustes in complex numbers), inliers recounted,
 *      three times; the object is reported when min_inliers remain. The pose
 *      is then fitted again, three times, to the inliers within 0.4 x the
 *      tolerance alone (when min_inliers of them remain), for accuracy. Its
 *      position is where the centre of the learned picture, ((w-1)/2,
 *      (h-1)/2), lands; its angle is theta (radians, 0..2 pi, clockwise on
 *      screen as the fiducial angles); its scale s.
 *   At most one detection an object a call; detections come in library order.
 *
 * Memory: everything is allocated at create time for max_scene_keypoints
 * and the library's size; objects_recognise() allocates nothing. The
 * library is borrowed: it must outlive the recogniser and not change.
 *
 * Cost: matching is n_scene x n_library x 128 byte operations, in SSE2,
 * most candidates abandoned after half the bytes (about 0.1-0.15 s for
 * 2000 x 6000 keypoints on one core of the build machine): the exhaustive
 * search is fine for a few objects on an asynchronous worker, not for
 * hundreds; the GPU's (cuda/sift_cuda.h, objects_recognise_nearest) is
 * the same search, exact, on the GPU.
 */
#ifndef TT_OBJECTS_RECOGNISE_H
#define TT_OBJECTS_RECOGNISE_H

#include <stdint.h>

#include "objects.h"

struct objects_match_config {
	float ratio;            /* Lowe's ratio, 0.5..0.95; 0.8 is usual */
	int min_inliers;        /* matches the verified pose must explain, >= 3 */
	float inlier_px;        /* position tolerance of an inlier, px */
	float min_scale, max_scale; /* accepted object scale, relative to the learned picture */
	int ransac_iterations;  /* hypotheses tried an object, at most */
};

/* Sensible defaults: ratio 0.8, 8 inliers, 4 px, scale 0.25..4, 400 hypotheses. */
void objects_match_config_default(struct objects_match_config *cfg);

struct objects_detection {
	int id;              /* the object's ID */
	int index;           /* its index in the library */
	float x, y;          /* centre of the learned picture in the frame, px */
	float angle;         /* radians, 0..2 pi, clockwise on screen */
	float scale;         /* frame size / learned size */
	int n_inliers;       /* matches the pose explains */
	int n_matches;       /* ratio-test matches to this object */
	/* The pose: frame = [a -b; b a] * learned + (tx, ty). */
	float a, b, tx, ty;
};

struct objects_recogniser;

/* Returns NULL with *err: ERR_RANGE (bad config), ERR_NOMEM. */
struct objects_recogniser *objects_recogniser_create(const struct objects_library *lib,
						     const struct objects_match_config *cfg,
						     int max_scene_keypoints, int *err);
void objects_recogniser_destroy(struct objects_recogniser *r); /* NULL-safe */

/* Recognises objects among n_scene keypoints (at most the create-time
 * maximum: more are ERR_RANGE). Writes up to `cap` detections into out and
 * their number into *n_out. Returns 0 or ERR_RANGE. */
int objects_recognise(struct objects_recogniser *r, const struct objects_keypoint *scene, int n_scene,
		      struct objects_detection *out, int cap, int *n_out);

/* As objects_recognise, with the matching step's nearest pairs given
 * (nn[n_scene], e.g. from the GPU: cuda/sift_cuda.h): the same result as
 * objects_recognise when nn is objects_nearest_cpu's output. */
int objects_recognise_nearest(struct objects_recogniser *r, const struct objects_keypoint *scene, int n_scene,
			      const struct objects_nearest *nn, struct objects_detection *out, int cap, int *n_out);

/* The matching step's search on the CPU, the reference for any other:
 * the nearest two of the n_lib library keypoints for each scene keypoint
 * (struct objects_nearest, objects.h), exhaustive, integer arithmetic
 * (SSE2 where the compiler targets it), a candidate abandoned once its
 * partial sum passes the second-nearest so far. */
void objects_nearest_cpu(const struct objects_keypoint *lib, int n_lib, const struct objects_keypoint *scene,
			 int n_scene, struct objects_nearest *out);

/* Matches kept by the last call's ratio test (for tools and tests). */
int objects_recogniser_last_matches(const struct objects_recogniser *r);

#endif
