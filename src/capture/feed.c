#include "feed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/err.h"
#include "../core/log.h"

#define FEED_BACKOFF_MIN_NS 250000000LL
#define FEED_BACKOFF_MAX_NS 4000000000LL
#define FEED_FIRST_TRIES 50

struct feed {
	struct feed_config cfg;
	struct capture *cap;  /* NULL while a camera is lost */
	struct ring *ring;
	int width, height;
	bool paced;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	atomic_uint_fast64_t bad_frames;
	pthread_mutex_t status_lock;
	char status[128];
};

static bool is_camera(const char *source)
{
	return strncmp(source, "v4l2:", 5) == 0;
}

static void set_status(struct feed *f, const char *text)
{
	pthread_mutex_lock(&f->status_lock);
	snprintf(f->status, sizeof f->status, "%s", text);
	pthread_mutex_unlock(&f->status_lock);
}

/* Sizes the ring by the first real frame and hands that frame on as the
 * ring's first. */
static int size_by_first_frame(struct feed *f)
{
	struct frame *first = NULL;
	for (int tries = 0; f->cap && tries < FEED_FIRST_TRIES; tries++) {
		int e = capture_read(f->cap, &first);
		if (e == 0)
			break;
		first = NULL;
		if (e == ERR_EOF || e == ERR_DEVICE)
			break;
	}
	f->width = first ? first->img.width : f->cfg.default_width;
	f->height = first ? first->img.height : f->cfg.default_height;
	int err = 0;
	f->ring = ring_create(f->width, f->height, false, &err);
	if (!f->ring)
		return err;
	if (first) {
		struct frame *slot = ring_acquire_write(f->ring);
		if (slot) {
			image_u8_copy(&slot->img, &first->img);
			frame_meta_copy(slot, first);
			ring_publish(f->ring);
		}
	}
	return 0;
}

/* A read waiting on a stream gives up at feed_stop or a shutdown. */
static bool feed_interrupted(void *ctx)
{
	struct feed *f = ctx;
	return atomic_load(&f->stop) || (f->cfg.should_stop && f->cfg.should_stop());
}

struct feed *feed_create(const struct feed_config *cfg, int *err)
{
	struct feed *f = calloc(1, sizeof *f);
	if (!f) {
		*err = ERR_NOMEM;
		return NULL;
	}
	f->cfg = *cfg;
	atomic_init(&f->stop, false);
	atomic_init(&f->bad_frames, 0);
	pthread_mutex_init(&f->status_lock, NULL);
	f->cfg.cap.interrupted = feed_interrupted;
	f->cfg.cap.interrupted_ctx = f;
	f->cap = capture_open(&f->cfg.cap, err);
	if (!f->cap) {
		if (*err == ERR_CONFIG || !is_camera(cfg->cap.source) || !cfg->live)
			goto fail;
		log_warn("source %s not available yet: retrying in the background", cfg->cap.source);
		*err = 0;
	}
	f->paced = !f->cap || !is_camera(cfg->cap.source);
	if (cfg->live) {
		*err = size_by_first_frame(f);
		if (*err)
			goto fail;
	}
	return f;
fail:
	feed_destroy(f);
	return NULL;
}

void feed_destroy(struct feed *f)
{
	if (!f)
		return;
	feed_stop(f);
	capture_close(f->cap);
	ring_destroy(f->ring);
	pthread_mutex_destroy(&f->status_lock);
	free(f);
}

bool feed_is_endless(const struct feed *f)
{
	/* A camera not there yet (retried in the background) is endless too. */
	return !f->cap || !capture_is_finite(f->cap);
}

struct ring *feed_ring(struct feed *f)
{
	return f->ring;
}

void feed_size(const struct feed *f, int *width, int *height)
{
	*width = f->width;
	*height = f->height;
}

uint64_t feed_bad_frames(const struct feed *f)
{
	return (uint64_t)atomic_load(&f->bad_frames);
}

void feed_status(struct feed *f, char *buf, size_t cap)
{
	pthread_mutex_lock(&f->status_lock);
	snprintf(buf, cap, "%s", f->status);
	pthread_mutex_unlock(&f->status_lock);
}

static void *capture_main(void *arg)
{
	struct feed *f = arg;
	pthread_setname_np(pthread_self(), "tt-capture"); /* --stats' CPU by thread */
	bool lost_logged = false;
	int64_t backoff_ns = FEED_BACKOFF_MIN_NS;
	int pace = capture_pace_fps(f->cfg.cap.fps);
	int64_t period_ns = pace > 0 ? 1000000000LL / pace : 0;
	int64_t next_ns = clock_now_ns();
	const char *source = f->cfg.cap.source;

	while (!atomic_load(&f->stop)) {
		if (!f->cap) {
			int err = 0;
			f->cap = capture_open(&f->cfg.cap, &err);
			if (!f->cap) {
				clock_sleep_ns(backoff_ns);
				if (backoff_ns < FEED_BACKOFF_MAX_NS)
					backoff_ns *= 2;
				continue;
			}
			log_once_reset(&lost_logged, "source %s is back", source);
			set_status(f, "");
			backoff_ns = FEED_BACKOFF_MIN_NS;
		}
		struct frame *slot = ring_acquire_write(f->ring);
		if (!slot)
			break;
		int err = capture_read_into(f->cap, slot);
		if (err == ERR_EOF)
			break;
		if (err == ERR_AGAIN)
			continue;
		if (err == ERR_DEVICE) {
			log_once(&lost_logged, LOG_WARN, "source %s lost: retrying with back-off", source);
			set_status(f, "camera lost, retrying");
			capture_close(f->cap);
			f->cap = NULL;
			continue;
		}
		if (err) {
			atomic_fetch_add(&f->bad_frames, 1);
			continue;
		}
		ring_publish(f->ring);
		if (f->paced && period_ns) {
			next_ns += period_ns;
			int64_t now = clock_now_ns();
			if (next_ns < now)
				next_ns = now;
			clock_sleep_ns(next_ns - now);
		}
	}
	ring_close(f->ring);
	return NULL;
}

int feed_start(struct feed *f)
{
	if (!f->ring || f->thread_started)
		return ERR_RANGE;
	if (pthread_create(&f->thread, NULL, capture_main, f) != 0)
		return ERR_NOMEM;
	f->thread_started = true;
	return 0;
}

void feed_stop(struct feed *f)
{
	if (!f->thread_started)
		return;
	atomic_store(&f->stop, true);
	ring_close(f->ring);
	pthread_join(f->thread, NULL);
	f->thread_started = false;
}

int feed_read(struct feed *f, struct frame *dst, bool (*should_stop)(void))
{
	for (;;) {
		if (should_stop && should_stop())
			return ERR_AGAIN;
		int err;
		if (dst->img.data) {
			err = capture_read_into(f->cap, dst);
		} else {
			struct frame *src = NULL;
			err = capture_read(f->cap, &src);
			if (!err)
				*dst = *src;
		}
		if (err == ERR_EOF)
			return err;
		if (err == ERR_AGAIN)
			continue;
		if (err == ERR_DEVICE) {
			log_error("source %s failed: %s", f->cfg.cap.source, err_str(err));
			return err;
		}
		if (err) {
			atomic_fetch_add(&f->bad_frames, 1);
			continue;
		}
		return 0;
	}
}
