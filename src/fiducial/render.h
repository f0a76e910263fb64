/*
 * render.h - amoeba symbols from tree strings: vector layout, anti-aliased
 * grey raster, and the true centre and angle (../shared/spec/amoeba.md §7).
 *
 * Purpose: the daemon's demo source, the scene synthesiser
 * (tools/scenes.c), the fiducial sheet tool (tools/fiducials.c) and the
 * tests all draw symbols from nothing but a canonical tree string, so the
 * project can make its own test data and its own printable sets.
 *
 * Usage:
 *     render_symbol("w0122212111", 90.0f, 0.3f, 320.0f, 240.0f, &img, NULL);
 *     render_symbol_truth("w0122212111", 90.0f, 0.3f, 320.0f, 240.0f, &x, &y, &a);
 *   draws a 90 px card centred at pixel (320, 240), rotated 0.3 rad
 *   clockwise on screen, into img, and returns where a correct tracker must
 *   report it. For many draws of one tree, call render_layout_tree() once
 *   and render_layout_draw()/render_layout_truth() with the layout.
 *
 * Coordinates: pixel (i, j) is centred at (i, j) (a pixel covers
 * [i - 1/2, i + 1/2)), which is the convention of bounding-box midpoints
 * computed from pixel indices, so the truth needs no half-pixel fix-up.
 * Angles are radians, clockwise on screen (x right, y down): rotating the
 * drawing by +t increases the reported angle by t.
 *
 * The drawing (card units: the card's side is 1, centre (0, 0), y down):
 *   - a square card of the root's colour (white for `w` trees), side 1;
 *   - a rounded-square ring of the other colour, outer half-side 0.46,
 *     inner half-side 0.40: its inside is the root region;
 *   - the root's children on a square grid of cells of side u: a child
 *     without children (a depth-1 leaf, "dot") is a disc of radius 0.30 u
 *     in one cell; a child with h holes is a rounded rectangle over a block
 *     of cells (1 row for h <= 3, 2 rows for h <= 8, else 3), inset 0.11 u
 *     from the block's edge, corner radius 0.39 u, with disc holes of radius
 *     0.19 u at cell centres (a partial last row centred). So neighbouring
 *     children are at least 0.22 u apart, walls at least 0.20 u thick.
 *   - Placement: dots first, then blobs from the most holes down, each at
 *     the first free grid position in reading order, on the smallest square
 *     grid that holds them all; the used block is centred in the root and
 *     scaled to fill it (u = 0.80 / (cells + 0.6)). Dots therefore sit at
 *     the top: for a `w` tree unrotated, the black leaves (the dots) lie
 *     above the centre and the angle is near 0; for a `b` tree the black
 *     leaves are the holes, below, and the angle is near pi.
 *   The layout depends on the tree only (children sorted canonically), so
 *   the same tree always gives the same drawing, and thresholding the
 *   drawing at mid-grey gives back the same tree string.
 *
 * Truth (§7): every leaf is a disc, so its bounding-box midpoint is its
 * centre at any rotation; centre = mean of leaf centres weighted by
 * pi (d + 1/2)^2, black centre the same over black leaves, angle =
 * atan2(dy, dx) - pi/2, (dx, dy) = centre - black centre, wrapped to
 * [0, 2 pi). A tree without black leaves has angle 0 and n_black == 0.
 *
 * Anti-aliasing: each pixel's distance to the nearest shape edge is known
 * exactly (signed distance of rounded rectangles); pixels farther than
 * 0.71 px from every edge take one sample, the others are supersampled
 * (supersample x supersample, default 4 x 4). Pixels outside the card are
 * left untouched; pixels across the card's edge are blended with dst.
 *
 * Memory: struct render_layout is plain data (no pointers), about 2.5 KiB;
 * nothing is allocated anywhere here.
 *
 * Limits: depth 1 or 2 trees (root, children, grandchildren), at most
 * RENDER_MAX_NODES nodes. Deeper trees are ERR_UNSUPPORTED, bad strings
 * ERR_FORMAT, too many nodes ERR_RANGE.
 *
 * Performance: about 1 ms for a 100 px card at 4 x 4 supersampling
 * (x86-64 laptop-class core, -O2); cost grows with the card's area.
 */
#ifndef TT_FIDUCIAL_RENDER_H
#define TT_FIDUCIAL_RENDER_H

#include <stdint.h>

#include "../core/image.h"

#define RENDER_MAX_NODES 64
#define RENDER_MAX_SHAPES (RENDER_MAX_NODES + 2)

enum render_depth {
	RENDER_CARD = -2, /* the card, root's colour */
	RENDER_RING = -1, /* the ring around the root, other colour */
	RENDER_ROOT = 0,  /* the root region (inside of the ring) */
	RENDER_CHILD = 1, /* a child: dot (leaf) or blob with holes */
	RENDER_HOLE = 2,  /* a grandchild: hole in a blob (always a leaf) */
};

/* One rounded rectangle; a disc has hw == hh == radius. Card units. */
struct render_shape {
	float x, y;     /* centre (card centre is (0, 0), y down, unrotated) */
	float hw, hh;   /* half width, half height */
	float radius;   /* corner radius, <= min(hw, hh) */
	uint8_t white;  /* 1 white, 0 black (already resolved for w/b) */
	int8_t depth;   /* enum render_depth */
	uint8_t leaf;   /* 1 for symbol leaves (dots and holes) */
	int16_t end;    /* index one past this shape's last descendant */
};

struct render_layout {
	char colour;        /* 'w' or 'b' (the root's colour) */
	int n_nodes;        /* tree nodes, root included */
	int depth;          /* tree depth (1 or 2) */
	int grid_w, grid_h; /* cells used by the children */
	float cell;         /* cell side u, card units */
	int n_shapes;       /* painting order: a shape's descendants follow it */
	struct render_shape shapes[RENDER_MAX_SHAPES];
	/* Truth of the unrotated card centred at (0, 0), card units. */
	float centre_x, centre_y;
	float black_x, black_y;
	int n_black, n_leaves;
	float angle0;       /* rad, [0, 2 pi) */
};

struct render_options {
	uint8_t black, white; /* grey levels of the ink and the paper */
	int supersample;      /* samples per pixel side near edges, 1..16 */
};

/* Defaults: black 0, white 255, supersample 4. */
void render_options_default(struct render_options *opt);

/* Lays out `tree` (canonical or not, with or without colour letter; bare
 * means `w`). Fills *out. Returns 0, ERR_FORMAT, ERR_RANGE or
 * ERR_UNSUPPORTED (depth > 2). */
int render_layout_tree(const char *tree, struct render_layout *out);

/* Draws the layout as a card of side size_px centred at pixel (cx, cy),
 * rotated angle_rad clockwise on screen, into dst (borrowed, modified in
 * place; parts outside dst are clipped). opt may be NULL (defaults).
 * Returns 0 or ERR_RANGE (size_px not in (0, 8192], non-finite values). */
int render_layout_draw(const struct render_layout *l, float size_px, float angle_rad, float cx,
		       float cy, struct image_u8 *dst, const struct render_options *opt);

/* True centre (pixels) and angle (rad, [0, 2 pi)) of that drawing. */
void render_layout_truth(const struct render_layout *l, float size_px, float angle_rad, float cx,
			 float cy, float *x, float *y, float *angle);

/* render_layout_tree + render_layout_draw. */
int render_symbol(const char *tree, float size_px, float angle_rad, float cx, float cy,
		  struct image_u8 *dst, const struct render_options *opt);

/* render_layout_tree + render_layout_truth. Returns 0 or the layout error. */
int render_symbol_truth(const char *tree, float size_px, float angle_rad, float cx, float cy,
			float *x, float *y, float *angle);

/* Wraps an angle into [0, 2 pi). */
float render_wrap_angle(float a);

#endif
