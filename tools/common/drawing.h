/*
 * drawing.h - symbols drawn from their printed images for the scene tool.
 *
 * Purpose: the scene tool (tools/scenes.c) draws symbols from their tree
 * strings by the project's own layout (src/fiducial/render.h): a square
 * card, a rounded ring, round leaves packed on a lattice. People print
 * reacTIVision's own drawings, whose outline is an irregular amoeba with
 * a thick wall and whose leaves are packed otherwise, and the shared scenes
 * and the sets that judge the tracker are made from those images
 * (../shared/spec/testing.md §2). `tabletrack-scenes --drawings DIR` takes
 * each symbol's picture from DIR/fid_NNN.png (NNN the ID, as in
 * ../shared/fiducials/reactivision/symbols/<set>/) instead, so that every
 * preset's hard light, tilt, lens and size can be tried on the drawings
 * themselves.
 *
 * Usage:
 *     struct drawing d;
 *     drawing_load("symbols/default/fid_069.png", set, 69, &d);
 *     drawing_draw(&d, 40.0f, 0.3f, 320.0f, 240.0f, &img, &ro);
 *     drawing_truth(&d, 40.0f, 0.3f, 320.0f, 240.0f, &x, &y, &a);
 *     drawing_free(&d);
 *
 * The picture is the card: its pixel grid spans card units [-1/2, 1/2]
 * (y down), dark ink on light paper, mapped linearly onto the options'
 * black and white. Its centre and angle (amoeba.md §7) are read once, from
 * the full-size picture, by the tracker's own segmenter and matcher on the
 * picture thresholded at mid-grey (a clean print hundreds of pixels across:
 * the leaves' bounding-box midpoints are their centres to a fraction of a
 * percent of the card); a picture that does not read as exactly its own ID
 * is refused, so the truth never names a symbol the picture does not show.
 *
 * Sampling: a pyramid of 2 x 2 box-filtered halvings; a sample takes the
 * finest level whose pixel is at least the sample's footprint, bilinearly,
 * so a 464 px picture drawn 20 px across is filtered, not aliased.
 *
 * Memory: drawing_load() allocates the pyramid (about 1.33 bytes a pixel of
 * the picture); drawing_free() releases it. Nothing else allocates.
 */
#ifndef TT_TOOLS_DRAWING_H
#define TT_TOOLS_DRAWING_H

#include "../../src/core/image.h"
#include "../../src/fiducial/render.h"
#include "../../src/fiducial/trees.h"

#define DRAWING_LEVELS 10

struct drawing {
	struct image_u8 level[DRAWING_LEVELS]; /* level[0] the picture, each next half the last */
	int n_levels;
	float centre_x, centre_y; /* truth of the unrotated card centred at (0, 0), card units */
	float angle0;             /* rad, [0, 2 pi) */
};

/* Reads the picture at path and its truth (above). Returns 0; ERR_IO or
 * ERR_FORMAT (unreadable), ERR_RANGE (under 32 px a side), ERR_NOMEM, or
 * ERR_FORMAT when the picture does not read as ID id of set. */
int drawing_load(const char *path, const struct tree_set *set, int id, struct drawing *d);
void drawing_free(struct drawing *d); /* NULL-safe */

/* img's grey at (x, y) (pixel centres at integers), bilinear, clamped to
 * the image. */
float drawing_bilinear(const struct image_u8 *img, float x, float y);

/* Grey 0 (ink) .. 1 (paper) at card point (lx, ly), |lx|, |ly| <= 1/2,
 * filtered for a sample spacing of `footprint` card units. */
float drawing_sample(const struct drawing *d, float lx, float ly, float footprint);

/* Draws the card of side size_px centred at pixel (cx, cy), rotated
 * angle_rad clockwise on screen, into dst: each pixel the mean of
 * opt->supersample squared samples, those off the card keeping dst's grey.
 * Returns 0 or ERR_RANGE (size_px not in (0, 8192], non-finite values). */
int drawing_draw(const struct drawing *d, float size_px, float angle_rad, float cx, float cy,
                 struct image_u8 *dst, const struct render_options *opt);

/* True centre (pixels) and angle (rad, [0, 2 pi)) of that drawing. */
void drawing_truth(const struct drawing *d, float size_px, float angle_rad, float cx, float cy, float *x,
                   float *y, float *angle);

#endif
