/*
 * tracked.h - the tracker's output for one frame: what TUIO sends.
 *
 * Positions are normalised to [0, 1) of the image (x / width, y / height),
 * angles in radians [0, 2pi) clockwise on screen, velocities in normalised
 * units a second, angular velocity A in turns a second, m and r the changes
 * of speed and of A a second (TUIO specification §1). Session IDs come
 * from one counter shared by all three kinds and are never reused.
 *
 * The arrays are owned by the tracker (sized at create time) and borrowed by
 * readers until the next track_process(). `changed` says a `set` is due this
 * frame (moved, new, or just stopped).
 */
#ifndef TT_CORE_TRACKED_H
#define TT_CORE_TRACKED_H

#include <stdbool.h>
#include <stdint.h>

enum tracked_how {
	TRACKED_DECODED = 0,  /* tree decoded this frame */
	TRACKED_FUZZY,        /* damaged tree near the prediction */
	TRACKED_ROOT,         /* only the root region near the prediction */
	TRACKED_PREDICTED,    /* not seen; lingering at the predicted position */
};

struct tracked_object {
	uint32_t session_id;
	int32_t class_id;     /* fiducial ID */
	float x, y, angle;
	float X, Y, A, m, r;
	bool changed;
	uint8_t how;          /* enum tracked_how */
	float size;           /* root size, normalised by width (for overlays and blobs) */
};

struct tracked_cursor {
	uint32_t session_id;
	float x, y;
	float X, Y, m;
	bool changed;
	float diameter;       /* normalised by width */
	/* Touch (outline stage): touch_measured when touch_sharpness is on;
	 * then hover says the finger is above the surface. hand_session: the
	 * session of the hand blob it is a fingertip of, 0 for none. */
	bool touch_measured, hover;
	uint32_t hand_session;
};

/* An outline of an item (outline stage): points[first .. first + n),
 * normalised, inverted and calibrated like positions; hole = an inner
 * contour (TUIO 2.0 icg), else the outer one (ocg). */
struct tracked_contour {
	uint32_t session_id;
	bool hole;
	int32_t first, n;
};

struct tracked_point {
	float x, y;
};

struct tracked_blob {
	uint32_t session_id;
	float x, y, angle, w, h, area;
	float X, Y, A, m, r;
	bool changed;
};

struct tracked_state {
	uint64_t frame;        /* pipeline frame counter (fseq) */
	int64_t t_capture_ns;
	int width, height;
	int32_t n_objects, n_cursors, n_blobs;
	const struct tracked_object *objects;
	/* cursors[0 .. n_cursors) touch the surface (TUIO 1.1 2Dcur);
	 * cursors[n_cursors .. n_cursors + n_hover) hover (TUIO 2.0 ptr with
	 * pressure 0 only), present when the tracker is asked for them. */
	const struct tracked_cursor *cursors;
	int32_t n_hover;
	const struct tracked_blob *blobs;
	int32_t n_contours;
	const struct tracked_contour *contours;
	const struct tracked_point *contour_points;
};

#endif
