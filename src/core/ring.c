#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"

/* Three slots are enough for latest-wins: one being filled, one published,
 * one being read. The producer never waits for the consumer. */
#define RING_SLOTS 3

struct ring {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* any change of ready/read/closed */
	struct frame slots[RING_SLOTS];
	int max_width, max_height, max_stride;
	bool lossless;
	int write_idx; /* owned by the producer between acquire and publish, else -1 */
	int ready_idx; /* published, not yet taken, else -1 */
	int read_idx;  /* owned by the consumer between take and release, else -1 */
	atomic_bool closed;
	atomic_uint_fast64_t dropped;
};

struct ring *ring_create(int max_width, int max_height, bool lossless, int *err)
{
	int e = 0;
	struct ring *r = calloc(1, sizeof *r);
	if (!r) {
		e = ERR_NOMEM;
		goto fail;
	}
	r->max_width = max_width;
	r->max_height = max_height;
	r->lossless = lossless;
	r->write_idx = r->ready_idx = r->read_idx = -1;
	atomic_init(&r->closed, false);
	atomic_init(&r->dropped, 0);
	for (int i = 0; i < RING_SLOTS; i++) {
		e = image_u8_alloc(&r->slots[i].img, max_width, max_height);
		if (e)
			goto fail;
	}
	r->max_stride = r->slots[0].img.stride;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	/* Timeouts must not jump when the wall clock is set. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&r->lock, NULL);
	if (err)
		*err = 0;
	return r;
fail:
	if (r)
		for (int i = 0; i < RING_SLOTS; i++)
			image_u8_free(&r->slots[i].img);
	free(r);
	if (err)
		*err = e;
	return NULL;
}

void ring_destroy(struct ring *r)
{
	if (!r)
		return;
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	for (int i = 0; i < RING_SLOTS; i++)
		image_u8_free(&r->slots[i].img);
	free(r);
}

struct frame *ring_acquire_write(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	if (atomic_load(&r->closed)) {
		pthread_mutex_unlock(&r->lock);
		return NULL;
	}
	if (r->write_idx < 0) {
		for (int i = 0; i < RING_SLOTS; i++)
			if (i != r->ready_idx && i != r->read_idx) {
				r->write_idx = i;
				break;
			}
	}
	struct frame *f = &r->slots[r->write_idx];
	pthread_mutex_unlock(&r->lock);
	/* The producer may have narrowed the last frame (even its stride); the
	 * buffer itself never changes. */
	f->img.width = r->max_width;
	f->img.height = r->max_height;
	f->img.stride = r->max_stride;
	return f;
}

void ring_publish(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->write_idx < 0 || atomic_load(&r->closed)) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (r->ready_idx >= 0)
		atomic_fetch_add(&r->dropped, 1);
	int mine = r->write_idx;
	r->ready_idx = mine;
	r->write_idx = -1;
	pthread_cond_broadcast(&r->cond);
	if (r->lossless)
		while (r->ready_idx == mine && !atomic_load(&r->closed))
			pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

struct frame *ring_take(struct ring *r, int timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	if (timeout_ms > 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&r->lock);
	r->read_idx = -1;
	while (r->ready_idx < 0 && !atomic_load(&r->closed)) {
		if (timeout_ms == 0)
			break;
		int rc = timeout_ms < 0 ? pthread_cond_wait(&r->cond, &r->lock)
					: pthread_cond_timedwait(&r->cond, &r->lock, &until);
		if (rc == ETIMEDOUT)
			break;
	}
	struct frame *f = NULL;
	if (r->ready_idx >= 0) {
		r->read_idx = r->ready_idx;
		r->ready_idx = -1;
		f = &r->slots[r->read_idx];
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return f;
}

void ring_release(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->read_idx = -1;
	pthread_mutex_unlock(&r->lock);
}

void ring_close(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->closed, true);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

bool ring_is_closed(struct ring *r)
{
	return atomic_load(&r->closed);
}

uint64_t ring_dropped(const struct ring *r)
{
	return (uint64_t)atomic_load(&r->dropped);
}

int ring_slot_buffer(const struct ring *r, int i, void **data, size_t *bytes)
{
	if (i < 0 || i >= RING_SLOTS)
		return ERR_RANGE;
	*data = r->slots[i].img.data;
	*bytes = (size_t)r->max_stride * (size_t)r->max_height;
	return 0;
}
