/*
 * snapshot.h - what the pipeline shows the window, and what the window asks.
 *
 * The pipeline thread fills a snapshot after each frame (copying into
 * buffers the snapshot owns, sized at create time) and swaps it under a
 * mutex; the UI reads the newest one and never makes the pipeline wait.
 * Commands go the other way through a small bounded queue.
 */
#ifndef TT_CORE_SNAPSHOT_H
#define TT_CORE_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "detect.h"
#include "image.h"
#include "tracked.h"

#define SNAPSHOT_MAX_ITEMS 256
#define SNAPSHOT_MAX_CONTOUR_POINTS 8192
#define SNAPSHOT_MAX_RECOGNISED 32

/* An object recognised by its look (src/objects/), as its last
 * recognition saw it: the outline of its learned picture in the frame, px. */
struct snapshot_recognised {
	int32_t id;
	char name[64];            /* the library name (at most 63 characters) */
	float corners[4][2];
};

struct snapshot {
	uint64_t frame;
	struct image_u8 grey;      /* camera frame (owned by the snapshot) */
	struct image_u8 binary;    /* thresholded frame, 0/255 (owned) */
	int32_t n_objects, n_cursors, n_blobs;
	struct tracked_object objects[SNAPSHOT_MAX_ITEMS];
	struct tracked_cursor cursors[SNAPSHOT_MAX_ITEMS];
	struct tracked_blob blobs[SNAPSHOT_MAX_ITEMS];
	int32_t n_fids;            /* raw detections of this frame, px */
	struct fiducial_det fids[SNAPSHOT_MAX_ITEMS];
	/* The outline stage's work this frame, px (empty when it did not run):
	 * fingers with their touch state, outlines as in struct detections. */
	int32_t n_fingers;
	struct finger_det fingers[SNAPSHOT_MAX_ITEMS];
	int32_t n_contours, n_points;
	struct contour_det contours[SNAPSHOT_MAX_ITEMS];
	struct contour_point points[SNAPSHOT_MAX_CONTOUR_POINTS];
	int32_t n_recognised;      /* objects = FILE: the recognised objects' outlines */
	struct snapshot_recognised recognised[SNAPSHOT_MAX_RECOGNISED];
	float fps;
	float stage_ms[8];         /* threshold, segment, match, track, tuio, total, -, - */
	uint64_t dropped_frames, bad_frames;
	char backend[16];          /* "cpu" or "cuda" */
	char status[128];          /* source state ("camera lost, retrying", ...) */
	/* Current tunables, so the window can show them. */
	int radius, gate, median;
	char threshold_mode[16];   /* the method, as the config key "threshold" names it ("bernsen", "mean", ...) */
	int mean_radius, mean_bias; /* local-mean methods, both scales */
	int radius2, median2;      /* the second scale; radius2 0 = off */
	char threshold2_mode[16];  /* the second scale's method, as the key "threshold2" names it */
	char threshold3_mode[16];  /* the third scale's method, or "off" (key "threshold3") */
	float finger_size, finger_sensitivity, blob_min, blob_max;
	float touch_sharpness;
	bool invert_x, invert_y, invert_angle, paused;
};

enum ui_command_kind {
	UI_CMD_QUIT = 1,
	UI_CMD_SET,             /* key/value: any live-tunable config key */
	UI_CMD_RESET_TRACKING,  /* SPACE */
	UI_CMD_EQUALIZE,        /* capture background reference */
	UI_CMD_EQUALIZE_RESET,
	UI_CMD_PAUSE,
	UI_CMD_SAVE_CONFIG,
	UI_CMD_GRID_CHANGED,    /* calibration grid edited: reload from the shared map */
	UI_CMD_LEARN_OBJECT,    /* value "X0 Y0 X1 Y1": learn the object in that box of the frame (px, inclusive) */
};

struct ui_command {
	enum ui_command_kind kind;
	char key[32];
	char value[96];
};

#endif
