/*
 * frame.h - a captured frame: grey pixels plus where it came from.
 */
#ifndef TT_CORE_FRAME_H
#define TT_CORE_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "image.h"

struct frame {
	struct image_u8 img;    /* grey pixels; owner stated where the frame is made */
	uint64_t seq;           /* source's frame counter, from 0, +1 a delivered frame */
	int64_t t_capture_ns;   /* CLOCK_MONOTONIC time the sensor/driver stamped (or read time);
	                         * for a replay, the frame's place on the source's own timeline */
	bool replay;            /* a file source: t_capture_ns is (seq + 1) / fps, not a clock
	                         * reading, so a replay tracks the same way every time */
	int64_t t_arrival_ns;   /* CLOCK_MONOTONIC time the source handed the frame to the capture
	                         * thread (read, decoded, dequeued): where a replay's capture-to-TUIO
	                         * latency starts, since its t_capture_ns is no clock reading */
	char name[64];          /* file name or device, for logs and dumps ("" if none) */
};

/* Everything of src but its pixels into dst (a ring slot, a copy). */
static inline void frame_meta_copy(struct frame *dst, const struct frame *src)
{
	if (dst == src)
		return;
	dst->seq = src->seq;
	dst->t_capture_ns = src->t_capture_ns;
	dst->replay = src->replay;
	dst->t_arrival_ns = src->t_arrival_ns;
	memcpy(dst->name, src->name, sizeof dst->name);
}

#endif
