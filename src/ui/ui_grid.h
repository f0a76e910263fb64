/*
 * ui_grid.h - editing the calibration grid: pure functions, no SDL.
 *
 * Purpose: the window's calibration mode (C) moves the control points of a
 * struct calib_map (src/track/calib.h). These functions are the whole of
 * that editing logic, so the unit tests cover it without a display.
 *
 * Coordinates are normalised camera coordinates (0..1 of the image). Point
 * (c, r) of a cols x rows grid is pts[r * cols + c]; its regular (identity)
 * place is (c / (cols - 1), r / (rows - 1)), as calib_map_identity() puts it.
 * Every edit keeps each point inside [0, 1] (an edit that would push a point
 * out is clamped or, for whole-grid scaling, refused) and recomputes the
 * map's `identity` flag, so an edited-then-reset grid takes the fast path
 * again.
 *
 * The preview (X) shows the camera image as the tracker sees the table: an
 * output pixel at table position (u, v) samples the camera at the grid
 * interpolated bilinearly at (u, v). That is the inverse of the correction
 * calib_map_apply() performs (it finds a camera point's cell in the distorted
 * grid and interpolates back to the regular one), computed directly instead
 * of by inverting calib_map_apply numerically, which would need a search per
 * pixel and leave holes where the map stretches. ui_grid_build_remap() fills
 * a lookup table once per grid edit; applying it is one load a pixel.
 *
 * Memory: no allocation; the remap table is the caller's (width x height).
 * Performance: ui_grid_build_remap at 640x480 takes about 3 ms (one core of
 * the development VM, -O2); it runs only after an edit.
 */
#ifndef TT_UI_GRID_H
#define TT_UI_GRID_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/calib.h"

/* Grid size for a frame: 11x7 for wide frames (aspect >= 1.6, e.g. 16:9),
 * else 9x7 (4:3 and squarer). */
void ui_grid_default_size(int width, int height, int *cols, int *rows);
/* Makes m the regular grid of cols x rows (clamped to 2..CALIB_MAX_SIDE). */
void ui_grid_init(struct calib_map *m, int cols, int rows);
/* The regular (identity) place of point (c, r). */
void ui_grid_regular_point(const struct calib_map *m, int c, int r, float *x, float *y);
/* True when every point lies within eps of its regular place. */
bool ui_grid_is_regular(const struct calib_map *m, float eps);

/* Moves point (c, r) by (dx, dy), clamped to [0, 1]. False when (c, r) is
 * outside the grid. */
bool ui_grid_move_point(struct calib_map *m, int c, int r, float dx, float dy);
/* Moves every point by (dx, dy); the step is shortened so that no point
 * leaves [0, 1] (the grid keeps its shape). False when nothing moved. */
bool ui_grid_move_all(struct calib_map *m, float dx, float dy);
/* Scales the grid about the centre of its bounding box by factor (> 0).
 * Refused (returns false, m unchanged) when a point would leave [0, 1] or
 * the grid would shrink below 5% of the image. */
bool ui_grid_scale(struct calib_map *m, float factor);
/* Puts point (c, r) back on its regular place. */
bool ui_grid_reset_point(struct calib_map *m, int c, int r);
/* Puts every point back on its regular place (identity again). */
void ui_grid_reset_all(struct calib_map *m);

/* Index of the point nearest to (x, y) (normalised), or -1 for an empty grid. */
int ui_grid_nearest_point(const struct calib_map *m, float x, float y);

/* Table position (u, v) -> camera position (x, y), all normalised: the grid
 * interpolated bilinearly (the inverse of calib_map_apply, see above). */
void ui_grid_table_to_camera(const struct calib_map *m, float u, float v, float *x, float *y);
/* Fills lut[y * width + x] with the offset (cy * stride + cx) of the camera
 * pixel the preview shows at output pixel (x, y), for an image of that
 * width, height and row stride. lut has width * height entries. */
void ui_grid_build_remap(const struct calib_map *m, int width, int height, int stride, uint32_t *lut);

#endif
