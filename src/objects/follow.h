/*
 * follow.h - a recognised object followed from frame to frame through the
 * segmented regions under it, between two recognitions.
 *
 * Recognition (recognise.h) runs a few times a second; in between, an
 * object's pose is carried along by the regions the segmenter finds on it
 * in every frame (a textured card falls apart into many small regions of
 * its print; together they move and turn with it).
 *
 * Usage, once a frame per object (the pipeline thread, objects/stage.h):
 *     objects_follow_start(&f, &pose, learned_w, learned_h);  // at a recognition
 *     objects_follow_step(&f, tree);                           // each frame after
 *     objects_follow_pose(&f, &pose);
 *
 * Algorithm, each frame:
 *   - the window: the object's learned picture at its current pose, its
 *     axis-aligned bounding box, widened by a margin (a tenth of its larger
 *     side plus 6 px: the motion a frame may bring);
 *   - the measurement: every region of the frame whose bounding box lies
 *     wholly inside the window and that does not touch the frame's border
 *     (the table around, hands reaching in, are larger than the window);
 *     their pixel counts, centroids and second moments are summed (the
 *     regions' own sums, so a measurement is exact and cheap): centroid c,
 *     orientation phi of the principal axis, anisotropy
 *     (l1 - l2) / (l1 + l2) of the second moments' eigenvalues, area A;
 *   - the first frame after start only measures (the reference);
 *   - later frames: the window is moved by the motion found so far and the
 *     measurement repeated (mean shift, at most 4 rounds, until the motion
 *     changes by less than half a pixel), so that a motion larger than the
 *     margin is still caught whole. The turn dphi is the change of phi
 *     (modulo 180 degrees) when both this frame's and the last frame's
 *     anisotropy reach 0.2 (an elongated region set: its axis is
 *     meaningful), else 0. The pose moves as the region set did: the
 *     offset from the set's centroid to any point of the object turns by
 *     dphi and follows the centroid, p' = c' + R(dphi) (p - c);
 *   - the object has gone when A falls below 0.3 of the reference area (it
 *     was lifted, covered by a hand, or moved out of reach): the step says
 *     so and the caller drops it. A window with no region at the reference
 *     (a plain object) cannot be followed: the pose is held.
 * A new recognition restarts the follower with the recognised pose and a
 * reference measured in the recognised frame's regions (the stage keeps a
 * copy of them), so the next step brings the pose to the present frame
 * however old the recognition is. Frames without a region tree (none
 * given, or the segmenter overflowed) hold the pose.
 *
 * Limits: anything else lying wholly inside the window (a symbol or a
 * second card beside the object, within the margin) counts as part of
 * it: when that moves alone, the object is moved by its share of the
 * summed area until the next recognition puts it back. Overlapping
 * objects share regions likewise.
 *
 * Cost: one pass over the frame's regions a round (a 1080p table frame has
 * a few thousand). Memory: none beyond struct objects_follow.
 */
#ifndef TT_OBJECTS_FOLLOW_H
#define TT_OBJECTS_FOLLOW_H

#include <stdbool.h>

#include "../core/regions.h"

/* A similarity from the learned picture to the frame:
 * frame = [a -b; b a] * learned + (tx, ty). */
struct objects_pose {
	double a, b, tx, ty;
};

struct objects_follow {
	struct objects_pose pose;
	int width, height;     /* the learned picture, px */
	bool measured;         /* a reference measurement exists */
	double cx, cy;         /* the region set's centroid at the last measurement, px */
	double phi;            /* its principal axis, rad */
	double aniso;          /* its anisotropy, 0..1 */
	double area_ref;       /* its area at the reference, px */
	double area;           /* at the last measurement */
	int rounds;            /* mean-shift rounds of the last step */
};

enum objects_follow_result {
	OBJECTS_FOLLOW_GONE = -1, /* the regions under the object vanished: drop it */
	OBJECTS_FOLLOW_HELD = 0,  /* nothing to follow this frame: the pose held */
	OBJECTS_FOLLOW_MOVED = 1, /* measured (and moved, after the reference) */
};

void objects_follow_start(struct objects_follow *f, const struct objects_pose *pose, int width, int height);
/* Replaces the pose and keeps the measurement state (a new recognition of
 * an object already followed, when the recognised frame's regions are not
 * at hand). */
void objects_follow_reset_pose(struct objects_follow *f, const struct objects_pose *pose);
/* A new recognition with the regions of the frame it was recognised in:
 * the pose is set and the reference measured there, so that the next step
 * (on the present frame) moves it by the motion since that frame. When
 * that frame's window holds no region, as objects_follow_start. */
void objects_follow_restart(struct objects_follow *f, const struct objects_pose *pose, int width, int height,
			    const struct region_tree *then);
/* One frame: tree may be NULL (held). */
enum objects_follow_result objects_follow_step(struct objects_follow *f, const struct region_tree *tree);

/* Pose helpers: the point (u, v) of the learned picture in the frame; the
 * composition outer(inner(p)); the inverse. */
void objects_pose_apply(const struct objects_pose *p, double u, double v, double out[2]);
void objects_pose_compose(const struct objects_pose *outer, const struct objects_pose *inner,
			  struct objects_pose *out);
void objects_pose_invert(const struct objects_pose *p, struct objects_pose *out);

#endif
