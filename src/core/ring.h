/*
 * ring.h - frames from the capture thread to the pipeline: latest wins.
 *
 * A fixed set of preallocated frame slots (sized at create time for the
 * largest frame). The producer writes into a free slot and publishes it; if
 * the consumer has not taken the previous one yet, that one is dropped and
 * counted, so latency never grows when the pipeline is slower than the
 * camera. In "lossless" mode (--once on finite sources) the producer waits
 * instead of dropping.
 */
#ifndef TT_CORE_RING_H
#define TT_CORE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

struct ring;

struct ring *ring_create(int max_width, int max_height, bool lossless, int *err);
void ring_destroy(struct ring *r);  /* NULL-safe */

/* Producer: a slot to fill (never NULL unless the ring is closed). The slot's
 * img is allocated for max_width x max_height and comes back with
 * width/height/stride set for that maximum: set width/height to the frame's
 * size (<= max; stride may be lowered to width), copy rows with
 * image_u8_copy, fill seq/t_capture_ns/name. The slot belongs to the ring;
 * the producer may use it until ring_publish. */
struct frame *ring_acquire_write(struct ring *r);
/* Producer: publishes the slot filled since acquire_write. Blocks in lossless mode until taken. */
void ring_publish(struct ring *r);
/* Consumer: waits up to timeout_ms (0 = poll, < 0 = forever) for a new frame;
 * NULL on timeout or when closed and drained. Borrowed until ring_release or
 * the next ring_take (which releases the previous one). */
struct frame *ring_take(struct ring *r, int timeout_ms);
/* Consumer: done with the frame from ring_take. */
void ring_release(struct ring *r);
/* Either side: no more frames (end of source or shutdown); wakes waiters. */
void ring_close(struct ring *r);
bool ring_is_closed(struct ring *r);
uint64_t ring_dropped(const struct ring *r);
/* The pixel buffers of the slots, for page-locking them once (GPU DMA):
 * slot i's buffer and its size in bytes; i from 0 while it returns 0. */
int ring_slot_buffer(const struct ring *r, int i, void **data, size_t *bytes);

#endif
