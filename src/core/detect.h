/*
 * detect.h - what the matcher finds in one frame, in pixel coordinates.
 *
 * Plain arrays with a capacity, owned by whoever created the struct
 * detections (detections_alloc / detections_free); the matcher fills them,
 * the tracker reads them. When a list is full, further items are dropped and
 * `overflow` is set: never a crash.
 */
#ifndef TT_CORE_DETECT_H
#define TT_CORE_DETECT_H

#include <stdbool.h>
#include <stdint.h>

struct fiducial_det {
	int32_t id;         /* symbol ID (position in the .trees file); -1 for fuzzy */
	float x, y;         /* centre, px (amoeba.md §7) */
	float angle;        /* rad, [0, 2pi), clockwise on screen, 0 = black leaves above */
	float size_px;      /* root region's bounding-box side (max of w, h) */
	int32_t root;       /* root region index in this frame's region tree */
	int32_t n_nodes;    /* regions in the candidate sub-tree (root included) */
	int32_t completed;  /* 1: read from a fuzzy tree that only this ID's tree holds (1-2 nodes
			     * lost), from lists the hairline round rebuilt (src/fiducial/match.h),
			     * or from a window whose motion streak was undone
			     * (threshold/deblur.h): weaker than a whole tree;
			     * FIDUCIAL_DOUBTFUL: read by a threshold kept for the places others
			     * lose (the third scale's ratio pass, its deblurring pass where it
			     * undid a defocus), believed only where no other read of the place
			     * disagrees (pipeline/merge.h); FIDUCIAL_VETO: a read whose dots
			     * look like a broken blob wall (match_config.dot_max_elongation),
			     * which only cancels its own pass's reads of other IDs at its
			     * place and never leaves that pass (merge_vetoes);
			     * FIDUCIAL_FALLBACK: read at a radius below the one its place
			     * asked for (the third scale's scaled pass, third.c), which
			     * stands only where no other read holds the place;
			     * FIDUCIAL_UNCONFIRMED: a small root read with more of its
			     * holes from 1-2 px specks than match_config.few_specks allows
			     * (match_config.specks_unconfirmed), or an ink window's read
			     * over its size cap (pipeline/third.c, up_ink_part), which
			     * never leaves its pass unless another threshold's tree at
			     * its place confirms it (pipeline/merge.h, merge_confirm);
			     * else 0 */
	int32_t votes;      /* other reads of this ID at this place merged into it from other
			     * scales and passes (pipeline/merge.h); 0 as decoded */
};
#define FIDUCIAL_DOUBTFUL 2
#define FIDUCIAL_VETO 3
#define FIDUCIAL_FALLBACK 4
#define FIDUCIAL_UNCONFIRMED 5

/* A region that could carry a known object when its tree is destroyed
 * (motion blur): not border, roughly square, about a symbol's size
 * (amoeba.md §8): a white root or root ring, or the black region inside a
 * ring. */
struct root_det {
	float x, y;         /* bounding-box centre, px */
	float size_px;      /* max of bounding-box w, h */
	int32_t region;
};

struct finger_det {
	float x, y;         /* centroid, px */
	float diameter_px;  /* max of bounding-box w, h */
	float roundness;    /* 0..1, 1 = perfect ellipse fit of a circle */
	float contrast;     /* grey levels between region and surround */
	int32_t region;     /* region index; -1 for a fingertip of a hand */
	/* Set by the outline stage (src/outline); zero (not measured, on the
	 * surface, no hand) otherwise. */
	float sharpness;    /* median edge sharpness of its outline, 1/px; 0 = not measured */
	bool hover;         /* blurred: above the surface, not touching it */
	bool in_hand;       /* a fingertip of the hand blobs[hand] */
	int32_t hand;
};

struct blob_det {
	float x, y;         /* centroid, px */
	float angle;        /* rad, of the long side, clockwise on screen, [0, pi) */
	float w, h;         /* oriented box sides, px; w >= h */
	float area_px;      /* pixel count */
	int32_t region;
	bool hand;          /* a hand (outline stage), not a plain blob */
};

/* An outline (outline stage): points[first .. first + n) of the owner's
 * outer boundary, or of one of its holes. */
enum contour_owner { CONTOUR_FINGER = 0, CONTOUR_BLOB };

struct contour_point {
	float x, y;         /* px, pixel-centre coordinates like centroids */
};

struct contour_det {
	uint8_t owner_kind; /* enum contour_owner */
	bool hole;          /* an inner contour (TUIO 2.0 icg), else outer (ocg) */
	int32_t owner;      /* index in fingers or blobs */
	int32_t first, n;
};

struct detections {
	int width, height;  /* frame size the coordinates refer to */
	int32_t n_fids, cap_fids;
	struct fiducial_det *fids;
	int32_t n_fuzzy, cap_fuzzy;
	struct fiducial_det *fuzzy;   /* damaged symbols (id = -1): track only, never create */
	int32_t n_roots, cap_roots;
	struct root_det *roots;
	int32_t n_fingers, cap_fingers;
	struct finger_det *fingers;
	int32_t n_blobs, cap_blobs;
	struct blob_det *blobs;
	/* Outlines: capacity 0 unless detections_alloc_outlines() was called. */
	int32_t n_contours, cap_contours;
	struct contour_det *contours;
	int32_t n_points, cap_points;
	struct contour_point *points;
	bool overflow;
};

/* Allocates every list with the given capacity. Returns 0 or ERR_NOMEM. */
int detections_alloc(struct detections *d, int32_t cap);
/* Adds the outline lists: max_contours contours of up to max_points points
 * each. Returns 0 or ERR_NOMEM (lists left empty). */
int detections_alloc_outlines(struct detections *d, int32_t max_contours, int32_t max_points);
void detections_free(struct detections *d);   /* NULL-safe */
void detections_clear(struct detections *d);  /* counts to 0, keeps buffers */

#endif
