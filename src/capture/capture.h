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
 *     faulty:SPEC    a test source that injects faults (for tests only)
 *
 * capture_read() returns a frame borrowed from the source, valid until the
 * next read or close. Errors: ERR_EOF (finite source done), ERR_AGAIN
 * (nothing yet), ERR_FORMAT (this frame is bad: skip it and go on),
 * ERR_DEVICE (lost device: close, back off, reopen).
 */
#ifndef TT_CAPTURE_H
#define TT_CAPTURE_H

#include <stdbool.h>

#include "../core/frame.h"
#include "../core/image.h"

struct capture_config {
	char source[512];
	bool loop;                 /* file sources: start again at the end */
	int width, height;         /* wanted camera size; 0 = driver default */
	int fps;                   /* wanted camera rate; also the demo's rate */
	char format[16];           /* camera pixel format: "auto", "GREY", "YUYV", "MJPG", ... */
	int n_buffers;             /* V4L2 mmap buffers (>= 3) */
	const struct image_u8 *sprites; /* demo: symbol images to move around (borrowed) */
	int n_sprites;
	const int *sprite_ids;     /* demo: the ID each sprite shows, for its truth */
};

struct capture;

/* Opens the source; NULL with *err set and one log line naming the problem. */
struct capture *capture_open(const struct capture_config *cfg, int *err);
void capture_close(struct capture *c);  /* NULL-safe */
int capture_read(struct capture *c, struct frame **out);
/* True when the source is finite (folder, file without loop, raw pipe). */
bool capture_is_finite(const struct capture *c);
const char *capture_describe(const struct capture *c);

#endif
