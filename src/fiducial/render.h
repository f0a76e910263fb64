/*
 * render.h - amoeba symbols from tree strings: vector layout, anti-aliased
 * grey raster, and the true centre and angle (amoeba symbol specification §7).
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
 *     inner half-side 0.405 (as thick as reacTIVision's): its inside is
 *     the root region;
 *   - the root's children, drawn in feature units f (the hole diameter):
 *     a child without children (a "dot") is a disc of diameter f; a child
 *     with h holes (a "blob") is a compact cluster of h sites of a
 *     hexagonal lattice of pitch 1.5 f (2: a pair, 3: a triangle, 7: a
 *     hexagon, grown by least moment of inertia), each site a white disc
 *     hole of diameter f, the blob the union of round-capped strokes of
 *     half-width f (hole radius + wall) along the lattice edges between its
 *     sites: every wall, between holes and around them, is 0.5 f thick;
 *   - packing: blobs largest first, then dots, each at the position (grid
 *     of 0.25 f) and turn (multiples of 30 degrees) that keeps the square
 *     around everything smallest, at least 0.6 f of paper from every other
 *     child; among equal squares blobs stay central and low, dots high.
 *     Seven such packings, from pure compactness to dots firmly at the
 *     top, are tried; the kept one has the largest f * min(1, q / 0.4),
 *     q = D / sqrt(1/dots + 1/holes) (card units), D the distance between
 *     the dot and hole centres: the angle (§7) is along D for w and b
 *     trees alike and leaf positions jitter independently, so its error
 *     goes as 1/q. The choice does not depend on the colour, so the w and
 *     b trees print the same drawing;
 *   - the packing's square, plus 0.6 f of paper, is scaled to the root
 *     region (f at most 0.11): `cell` is f, grid_w x grid_h the packing's
 *     extent in f, rounded up. Our sets get f >= 0.0775 (large) and
 *     >= 0.093 (small), q >= 0.33; reacTIVision's default trees f 0.076
 *     to 0.09.
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
 * (signed distance of rounded rectangles and capsules); pixels farther than
 * 0.71 px from every edge take one sample, the others are supersampled
 * (supersample x supersample, default 4 x 4). Pixels outside the card are
 * left untouched; pixels across the card's edge are blended with dst.
 *
 * Memory: struct render_layout is plain data (no pointers), about 5.5 KiB;
 * nothing is allocated anywhere here; render_layout_tree() uses about
 * 140 KiB of stack.
 *
 * Limits: depth 1 or 2 trees (root, children, grandchildren), at most
 * RENDER_MAX_NODES nodes. Deeper trees are ERR_UNSUPPORTED, bad strings
 * ERR_FORMAT, too many nodes ERR_RANGE.
 *
 * Performance (one core of a shared, busy AMD EPYC, -O2, our large set):
 * render_layout_tree() about 8-10 ms a tree (the packing search; done once
 * a tree), render_layout_draw() 3.5-6 ms for a 100 px card at 4 x 4
 * supersampling; the draw's cost grows with the card's area.
 */
#ifndef TT_FIDUCIAL_RENDER_H
#define TT_FIDUCIAL_RENDER_H

#include <stdint.h>

#include "../core/image.h"

#define RENDER_MAX_NODES 64
#define RENDER_MAX_SHAPES (RENDER_MAX_NODES + 2)
#define RENDER_MAX_SEGMENTS (3 * RENDER_MAX_NODES)

enum render_depth {
	RENDER_CARD = -2, /* the card, root's colour */
	RENDER_RING = -1, /* the ring around the root, other colour */
	RENDER_ROOT = 0,  /* the root region (inside of the ring) */
	RENDER_CHILD = 1, /* a child: dot (leaf) or blob with holes */
	RENDER_HOLE = 2,  /* a grandchild: hole in a blob (always a leaf) */
};

/* A line segment of a blob's skeleton, card units. */
struct render_segment {
	float x0, y0, x1, y1;
};

/* One shape, card units. With n_seg == 0 a rounded rectangle (a disc has
 * hw == hh == radius). With n_seg > 0 a blob: the union of the capsules
 * (round-capped strokes) of radius `radius` around the layout's segments
 * seg0 .. seg0 + n_seg - 1; x, y, hw, hh are then its bounding box. */
struct render_shape {
	float x, y;     /* centre (card centre is (0, 0), y down, unrotated) */
	float hw, hh;   /* half width, half height */
	float radius;   /* corner radius, <= min(hw, hh); capsule radius */
	uint8_t white;  /* 1 white, 0 black (already resolved for w/b) */
	int8_t depth;   /* enum render_depth */
	uint8_t leaf;   /* 1 for symbol leaves (dots and holes) */
	int16_t end;    /* index one past this shape's last descendant */
	int16_t seg0;   /* first segment of a blob */
	int16_t n_seg;  /* 0: rounded rectangle */
};

struct render_layout {
	char colour;        /* 'w' or 'b' (the root's colour) */
	int n_nodes;        /* tree nodes, root included */
	int depth;          /* tree depth (1 or 2) */
	int grid_w, grid_h; /* cells used by the children */
	float cell;         /* cell side u, card units */
	int n_shapes;       /* painting order: a shape's descendants follow it */
	struct render_shape shapes[RENDER_MAX_SHAPES];
	int n_segs;
	struct render_segment segs[RENDER_MAX_SEGMENTS];
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
