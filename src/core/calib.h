/*
 * calib.h - the point-correction map applied to every reported position.
 *
 * A grid of cols x rows control points over the image, each the place in the
 * camera image (normalised 0..1) where the regular grid's point lies on the
 * table. calib_map_apply() maps a camera point to table coordinates by
 * locating it in the distorted grid and interpolating (Catmull-Rom between
 * cells). The identity grid maps every point to itself.
 *
 * The grid file is text: "tabletrack-grid 1", "cols rows", then rows*cols
 * lines "x y". Parse errors name the file and line.
 *
 * Details: the forward map (regular grid -> camera) is the bicubic
 * Catmull-Rom surface through the control points, extended past the border
 * by linear extrapolation, so linear grids (shifted, scaled) map exactly;
 * calib_map_apply() inverts it by Newton's method started at the nearest
 * control point (2.8 us a point on a warped 33x33 grid, AMD EPYC build
 * machine, one core; the identity flag skips all of it). Files: '#' starts a comment, blank lines are
 * skipped, lines longer than 254 characters, sizes outside 2..33, points
 * outside -1..2 or not finite, and extra text are errors (ERR_FORMAT /
 * ERR_RANGE, logged with file:line); a failed load leaves *m unchanged.
 */
#ifndef TT_CORE_CALIB_H
#define TT_CORE_CALIB_H

#include <stdbool.h>

#define CALIB_MAX_SIDE 33

struct calib_map {
	int cols, rows;
	float pts[CALIB_MAX_SIDE * CALIB_MAX_SIDE][2]; /* camera-space (x, y), row-major */
	bool identity;                                 /* fast path */
};

void calib_map_identity(struct calib_map *m, int cols, int rows);
int calib_map_load(struct calib_map *m, const char *path);
int calib_map_save(const struct calib_map *m, const char *path);
/* Maps camera point (x, y) (normalised) to table coordinates in place. */
void calib_map_apply(const struct calib_map *m, float *x, float *y);
/* Maps an angle at (x, y) by mapping a short step along it. aspect is the
 * frame's width / height: the step is measured in pixel-proportional units,
 * so an angle means the same on the table whatever the frame's shape
 * (a value <= 0 is taken as 1). */
float calib_map_angle(const struct calib_map *m, float x, float y, float angle, float aspect);
/* Row-major index of the control point nearest camera point (x, y) (squared
 * distance in double, the first of equals wins); -1 for NULL or a grid
 * smaller than 2 x 2. */
int calib_map_nearest_point(const struct calib_map *m, float x, float y);

#endif
