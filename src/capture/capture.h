/*
 * capture.h - where frames come from.
 *
 * Sources, chosen by the prefix of the source string from a table of ops:
 *     folder:DIR     every *.pgm and *.png in DIR in name order (8-bit grey;
 *                    colour and 16-bit converted)
 *     file:IMG       one image, repeated
 *     raw:WxH[:FPS]  raw GRAY8 frames on standard input (or raw:WxH@PATH for a FIFO)
 *     demo           a built-in moving synthetic scene (symbols given as sprites)
 *     v4l2:DEV       a V4L2 camera through libv4l2 (v4l2:N = /dev/videoN)
 *     faulty:SPEC    a test source that injects faults (for tests only):
 *                    faulty:KEY=N[:KEY=N...]:INNER wraps the source INNER, e.g.
 *                    faulty:every=5:demo. Keys: every=N (every Nth frame is
 *                    ERR_FORMAT), again=N (every Nth read is ERR_AGAIN),
 *                    lose=N (from the Nth read of each open on: ERR_DEVICE
 *                    until reopened), openfail=N (the first N opens in this
 *                    process fail with ERR_DEVICE), eof=N (ERR_EOF after N
 *                    frames), delay=MS (sleep before each read), noise=N
 *                    (every Nth frame is delivered as deterministic noise).
 *
 * Pacing: sources deliver frames as fast as they are read (the demo's motion
 * advances 1/fps seconds a frame); the camera paces itself, and the caller
 * paces the others (capture_fps() says the source's own rate, if any).
 *
 * Time: t_capture_ns is the driver's timestamp for a camera and the read
 * time for raw and demo. folder: and file: frames carry no time of their
 * own: they get (seq + 1) / fps on the source's own timeline (fps as
 * configured, CAPTURE_FPS_DEFAULT for 0 and the words) with frame.replay
 * set, so the tracker, and the TUIO it sends, is the same on every replay.
 *
 * capture_read() returns a frame borrowed from the source, valid until the
 * next read or close. Errors: ERR_EOF (finite source done), ERR_AGAIN
 * (nothing yet), ERR_FORMAT (this frame is bad: skip it and go on),
 * ERR_DEVICE (lost device: close, back off, reopen).
 *
 * Memory: each source allocates its buffers at open (the folder and file
 * sources hold the current image, decoded by libpng per frame); a read
 * allocates nothing else. Not thread-safe: one thread reads a source.
 *
 * V4L2: opened through libv4l2 (non-blocking, mmap streaming, 3..32
 * buffers). Format: the configured one, or "auto": the cheapest luma the
 * camera offers natively (GREY, Y16, YUYV/UYVY, NV12/YU12, MJPEG decoded by
 * libturbojpeg; see pixfmt.h), preferring one that reaches the wanted fps;
 * "max": the readable format offering the largest frame size (by area),
 * then the highest rate at it, then the cheapest; "min": the one whose
 * largest size is smallest, then the cheapest. Size: an explicit WxH is
 * asked for with S_FMT (a warning when the camera gives another); auto keeps
 * the driver's current size; max/min pick from VIDIOC_ENUM_FRAMESIZES
 * (discrete, stepwise or continuous) the largest/smallest by area, and when
 * one side is given (or auto beside a max/min) the size that matches it,
 * best the other way. Rate: max/min pick the shortest/longest interval
 * VIDIOC_ENUM_FRAMEINTERVALS offers at the chosen size and set it with
 * S_PARM; auto and 0 keep the current one. A driver that does not enumerate
 * keeps its current size/rate (one log line), never a failure. The chosen
 * format, size and rate, with the words that chose them, are logged once
 * per open in the description line.
 * Each read polls up to 1 s (ERR_AGAIN on timeout), dequeues, converts into
 * the source's own frame and requeues the buffer at once, so the camera
 * never runs dry while the pipeline works. The driver's monotonic timestamp
 * becomes t_capture_ns. Error-flagged, short or undecodable buffers and EIO
 * are ERR_FORMAT (skip); ENODEV, POLLERR or 30 EIOs in a row are
 * ERR_DEVICE. Camera controls (cfg->controls) are applied at every open, so
 * a replugged camera gets them back; unsupported ones are reported once.
 * The system calls sit behind an ops struct (v4l2_sys.h) for the tests'
 * fake camera.
 *
 * Demo: symbols in a grid over the left 3/4 of the frame, each drifting in
 * its cell and turning (bilinear sampling), on an unevenly lit table with
 * light sensor noise; two bright fingers move in the right strip. The frame
 * depends only on its number: two demos with the same config give the same
 * bytes. 640x480 with 6 sprites of 112 px: 2.2 ms a frame (AMD EPYC dev VM,
 * gcc -O2, median).
 */
#ifndef TT_CAPTURE_H
#define TT_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/frame.h"
#include "../core/image.h"

/* The words of capture_config.width/height/fps (config.h's TT_SIZE_* and
 * TT_FPS_* have the same values; the pipeline copies them through). */
#define CAPTURE_SIZE_AUTO 0     /* the driver's current size */
#define CAPTURE_SIZE_MAX (-1)   /* the largest size the format offers */
#define CAPTURE_SIZE_MIN (-2)   /* the smallest */
#define CAPTURE_FPS_MAX (-1)    /* the fastest rate offered at the chosen size */
#define CAPTURE_FPS_MIN (-2)    /* the slowest */
#define CAPTURE_FPS_AUTO (-3)   /* the camera's current rate (as 0) */
#define CAPTURE_FPS_DEFAULT 30  /* what the words mean to sources that are not a camera */

struct capture_config {
	char source[512];
	bool loop;                 /* file sources: start again at the end */
	int width, height;         /* wanted camera size, or CAPTURE_SIZE_* (0 = driver default) */
	int fps;                   /* wanted camera rate, 0 or CAPTURE_FPS_*; also the demo's rate */
	char format[16];           /* camera pixel format: "auto", "max", "min", "GREY", "YUYV",
	                            * "MJPG", ... */
	int n_buffers;             /* V4L2 mmap buffers (>= 3) */
	const struct image_u8 *sprites; /* demo: symbol images to move around (borrowed) */
	int n_sprites;
	const int *sprite_ids;     /* demo: the ID each sprite shows, for its truth */
	char controls[256];        /* V4L2 controls, "key=value,key=value": exposure=auto|N
	                            * (N in 100 us units), gain, brightness, contrast, gamma,
	                            * sharpness, focus=auto|N, power_line=off|50|60,
	                            * white_balance=auto|N (kelvin); "" = leave as is */
	/* A read that waits on a stream (raw:) asks this every 100 ms and ends
	 * the source (ERR_EOF) when it says so, so that a silent writer cannot
	 * hold up a shutdown. NULL = never interrupted. */
	bool (*interrupted)(void *ctx);
	void *interrupted_ctx;
};

/* Per-source counters since open. */
struct capture_stats {
	uint64_t n_frames;         /* frames delivered */
	uint64_t n_bad;            /* frames skipped with ERR_FORMAT/ERR_SIZE (bad file, bad buffer) */
	uint64_t n_again;          /* reads that returned ERR_AGAIN */
};

/* Where the demo put things in the last delivered frame (pixel units,
 * pixel i centred at i; angle radians clockwise on screen, amoeba.md §7).
 * For a symbol, (x, y, angle) is the sprite's centre and rotation: the
 * sprite drawn upright counts as angle 0. */
enum capture_truth_kind { CAPTURE_TRUTH_SYMBOL = 0, CAPTURE_TRUTH_FINGER = 1 };
struct capture_truth {
	int kind;                  /* enum capture_truth_kind */
	int id;                    /* sprite_ids[i] (or i when sprite_ids is NULL); finger number */
	double x_px, y_px;
	double angle_rad;          /* 0 for fingers */
	double radius_px;          /* half the drawn sprite side, or the finger's radius */
};

struct capture;

/* Opens the source; NULL with *err set and one log line naming the problem. */
struct capture *capture_open(const struct capture_config *cfg, int *err);
void capture_close(struct capture *c);  /* NULL-safe */
int capture_read(struct capture *c, struct frame **out);
/* Reads the next frame into dst, whose img is a buffer of capacity
 * img.stride * img.height bytes on entry (a ring slot as ring_acquire_write
 * hands it out): sources that convert or decode (camera, demo, raw) write
 * into it directly, others are copied once. dst->img comes back set to the
 * frame's size (stride kept when the size is the buffer's, else = width);
 * seq, t_capture_ns and name are set. ERR_SIZE (counted as bad) when the
 * frame does not fit; other errors as capture_read. */
int capture_read_into(struct capture *c, struct frame *dst);
/* True when the source is finite (folder, file without loop, raw pipe). */
/* Whether the config's interrupted() says to give up waiting. */
bool capture_interrupted(const struct capture *c);
bool capture_is_finite(const struct capture *c);
const char *capture_describe(const struct capture *c);
/* The source's own frame rate (camera's negotiated rate, raw:WxH:FPS, demo
 * fps); 0 when it has none. */
int capture_fps(const struct capture *c);
void capture_get_stats(const struct capture *c, struct capture_stats *out);
/* Truth of the last delivered frame into out[0..cap); returns how many
 * (0 for sources without truth: everything but demo, and faulty:...:demo). */
int capture_truth(const struct capture *c, struct capture_truth *out, int cap);

/* The rate at which a caller paces a source that does not pace itself
 * (folder, file, raw, demo) for a configured fps: the rate itself, 0 (as
 * fast as possible) for 0, and CAPTURE_FPS_DEFAULT for auto, max and min, so
 * that max never becomes an unthrottled loop. */
static inline int capture_pace_fps(int fps)
{
	return fps > 0 ? fps : fps == 0 ? 0 : CAPTURE_FPS_DEFAULT;
}

/* Prints every /dev/video* device: driver, card, bus, pixel formats with
 * their sizes and frame rates, and controls with ranges and current values;
 * a clear message when there is none. Returns 0 when at least one capture
 * device was listed, ERR_DEVICE when there is none. */
int capture_list_cameras(FILE *out);

#endif
