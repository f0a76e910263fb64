/*
 * feed.h - a source kept running: open, reopen with back-off, pacing, and
 * the frame size the rest of the program is built for.
 *
 * Two ways to use it:
 *   - live (feed_start): a capture thread reads frames straight into the
 *     slots of a latest-frame-wins ring (ring.h) that the feed owns; the
 *     sources that convert or decode (camera, demo, raw) write into the slot
 *     itself (capture_read_into). A camera that fails at open or later is
 *     closed and reopened with back-off (0.25 s doubling to 4 s), logged
 *     once each way, with a status text for the summary line meanwhile.
 *     Sources that do not pace themselves (all but the camera) are paced at
 *     capture_pace_fps(cfg.fps).
 *   - synchronous (feed_read): the caller reads frame by frame into its own
 *     buffers; every frame exactly once, in order.
 *
 * Size: feed_create(..., live) reads the first frame (up to 50 tries) and
 * sizes the ring for it, or for default_width x default_height when there is
 * none (a camera that is not there yet); that first frame is the first one
 * the ring delivers. Slots are never resized: a camera that comes back with
 * larger frames has them counted as bad until a restart.
 *
 * Threads: feed_start runs one capture thread; feed_bad_frames and
 * feed_status may be called from any thread; everything else from the
 * thread that created the feed. Memory: the ring's three slots are
 * allocated at create; nothing per frame.
 */
#ifndef TT_CAPTURE_FEED_H
#define TT_CAPTURE_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/frame.h"
#include "../core/ring.h"
#include "capture.h"

struct feed_config {
	struct capture_config cap;        /* the source (copied; sprites stay borrowed) */
	bool live;                        /* a ring and a capture thread; else feed_read */
	int default_width, default_height; /* ring size when no first frame could be read */
	bool (*should_stop)(void);        /* a shutdown was asked for (a signal); NULL = never */
};

struct feed;

/* Opens the source. A v4l2 camera that cannot be opened in live mode is
 * retried by the capture thread (one warning, *err 0); any other failure
 * returns NULL with *err set (ERR_CONFIG for a bad setting) and logged. */
struct feed *feed_create(const struct feed_config *cfg, int *err);
/* Stops the capture thread (if started), closes the ring and the source. NULL-safe. */
void feed_destroy(struct feed *f);

/* Whether the source never ends by itself (a camera, the demo): --once
 * cannot run on it. */
bool feed_is_endless(const struct feed *f);

/* Live: the ring frames arrive in (owned by the feed; NULL when not live). */
struct ring *feed_ring(struct feed *f);
/* Live: the frame size the ring was made for. */
void feed_size(const struct feed *f, int *width, int *height);
/* Live: starts the capture thread; it ends at the end of a finite source
 * (closing the ring) or at feed_stop. */
int feed_start(struct feed *f);
/* Live: asks the capture thread to end, closes the ring, waits for it. */
void feed_stop(struct feed *f);

/* Synchronous: the next frame into dst (see capture_read_into; a dst with no
 * buffer gets a view of the source's frame, borrowed until the next read).
 * ERR_AGAIN is retried and bad frames are counted and skipped; returns 0,
 * ERR_EOF at the end, ERR_DEVICE when the source failed (logged), or
 * ERR_AGAIN when `should_stop` (may be NULL) said so. */
int feed_read(struct feed *f, struct frame *dst, bool (*should_stop)(void));

/* Frames the source delivered as bad (skipped), any thread. */
uint64_t feed_bad_frames(const struct feed *f);
/* The source's state for a status line ("" when fine), any thread. */
void feed_status(struct feed *f, char *buf, size_t cap);

#endif
