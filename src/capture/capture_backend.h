/*
 * capture_backend.h - the inside of the capture room: the ops every source
 * implements and the state capture.c keeps for it. Not for other rooms.
 *
 * capture_open() finds the backend whose name prefixes the source string
 * ("name" alone or "name:ARG"), allocates a struct capture and calls
 * open(c, ARG). capture_read() calls read() and then stamps what every source
 * shares: seq (+1 a delivered frame), a read-time timestamp when the backend
 * gave none, and the counters.
 *
 * capture_read_into() runs the same read with c->target set to the caller's
 * buffer: a backend that converts or decodes a frame asks capture_target()
 * where to write it and so writes straight into the caller's buffer (a ring
 * slot); a backend that does not (a held file image) returns its own frame
 * and capture.c copies the pixels.
 */
#ifndef TT_CAPTURE_BACKEND_H
#define TT_CAPTURE_BACKEND_H

#include "capture.h"

struct capture;

struct capture_backend {
	const char *name;  /* the prefix, without the colon */
	/* Sets c->priv, c->finite, c->fps, c->desc. Logs its own failure. */
	int (*open)(struct capture *c, const char *arg);
	/* Returns 0 and a frame borrowed until the next read/close, or ERR_*. */
	int (*read)(struct capture *c, struct frame **out);
	void (*close)(struct capture *c);
	/* Optional: truth of the last frame (see capture_truth). */
	int (*truth)(const struct capture *c, struct capture_truth *out, int cap);
};

struct capture {
	const struct capture_backend *be;
	struct capture_config cfg;   /* a copy; sprites stay borrowed */
	void *priv;                  /* the backend's state */
	bool finite;
	bool replay;                 /* frames from files: timestamps from the frame number */
	int fps;
	struct capture_stats stats;
	char desc[640];
	struct image_u8 *target;     /* capture_read_into's buffer during a read, else NULL */
	size_t target_bytes;         /* its capacity */
	bool target_written;         /* the backend wrote this read's pixels into target */
};

/* For a backend's read: where to write a w x h frame. The caller's buffer,
 * set to w x h, during capture_read_into when the frame fits; `own` (the
 * backend's frame image) otherwise. */
struct image_u8 *capture_target(struct capture *c, struct image_u8 *own, int w, int h);

extern const struct capture_backend capture_backend_folder;
extern const struct capture_backend capture_backend_file;
extern const struct capture_backend capture_backend_raw;
extern const struct capture_backend capture_backend_demo;
extern const struct capture_backend capture_backend_v4l2;
extern const struct capture_backend capture_backend_faulty;

#endif
