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
 */
#ifndef TT_TRACK_CALIB_H
#define TT_TRACK_CALIB_H

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
/* Maps an angle at (x, y) by mapping a short step along it. */
float calib_map_angle(const struct calib_map *m, float x, float y, float angle);

#endif
