/* test_ring.c - the frame ring: latest-wins dropping, lossless blocking,
 * timeouts and close, with a real producer thread and consumer thread. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "../src/core/err.h"
#include "../src/core/ring.h"
#include "common/testutil.h"

#define W 64
#define H 48

static void fill(struct frame *f, uint64_t seq)
{
	f->img.width = W - (int)(seq % 7);
	f->img.height = H - (int)(seq % 5);
	for (int y = 0; y < f->img.height; y++)
		memset(image_u8_row(&f->img, y), (int)(seq & 255), (size_t)f->img.width);
	f->seq = seq;
	f->t_capture_ns = (int64_t)seq * 1000;
}

/* Every pixel must carry the frame's own seq: a slot written while being read
 * would show up here. */
static int intact(const struct frame *f)
{
	if (f->img.width != W - (int)(f->seq % 7) || f->img.height != H - (int)(f->seq % 5))
		return 0;
	for (int y = 0; y < f->img.height; y++)
		for (int x = 0; x < f->img.width; x++)
			if (image_u8_row(&f->img, y)[x] != (uint8_t)(f->seq & 255))
				return 0;
	return 1;
}

struct producer {
	struct ring *r;
	int n;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (int i = 0; i < p->n; i++) {
		struct frame *f = ring_acquire_write(p->r);
		if (!f)
			break;
		fill(f, (uint64_t)i);
		ring_publish(p->r);
	}
	ring_close(p->r);
	return NULL;
}

static void test_single_thread_latest_wins(void **state)
{
	(void)state;
	int err = 1;
	struct ring *r = ring_create(W, H, false, &err);
	assert_non_null(r);
	assert_int_equal(err, 0);
	assert_null(ring_take(r, 0));
	for (int i = 0; i < 3; i++) {
		struct frame *f = ring_acquire_write(r);
		assert_non_null(f);
		assert_int_equal(f->img.width, W);
		fill(f, (uint64_t)i);
		ring_publish(r);
	}
	assert_int_equal(ring_dropped(r), 2);
	struct frame *f = ring_take(r, 10);
	assert_non_null(f);
	assert_int_equal(f->seq, 2);
	assert_true(intact(f));
	/* while the consumer holds it, the producer fills the other slots */
	for (int i = 3; i < 10; i++) {
		struct frame *w = ring_acquire_write(r);
		assert_ptr_not_equal(w, f);
		fill(w, (uint64_t)i);
		ring_publish(r);
	}
	assert_int_equal(f->seq, 2);
	assert_true(intact(f));
	ring_release(r);
	f = ring_take(r, 10);
	assert_int_equal(f->seq, 9);
	ring_release(r);
	assert_null(ring_take(r, 5));
	ring_close(r);
	assert_true(ring_is_closed(r));
	assert_null(ring_acquire_write(r));
	assert_null(ring_take(r, -1));
	ring_destroy(r);
	ring_destroy(NULL);
}

static void test_two_threads_latest_wins(void **state)
{
	(void)state;
	struct ring *r = ring_create(W, H, false, NULL);
	assert_non_null(r);
	struct producer p = {r, 3000};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
	uint64_t taken = 0;
	int64_t last = -1;
	int bad = 0;
	struct frame *f;
	while ((f = ring_take(r, -1)) != NULL) {
		if ((int64_t)f->seq <= last || !intact(f))
			bad++;
		last = (int64_t)f->seq;
		taken++;
		ring_release(r);
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_int_equal(last, 2999); /* the newest frame is never lost */
	assert_int_equal(taken + ring_dropped(r), 3000);
	ring_destroy(r);
}

static void test_two_threads_lossless(void **state)
{
	(void)state;
	struct ring *r = ring_create(W, H, true, NULL);
	assert_non_null(r);
	struct producer p = {r, 2000};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, produce, &p), 0);
	uint64_t expect = 0;
	int bad = 0;
	struct frame *f;
	while ((f = ring_take(r, -1)) != NULL) {
		if (f->seq != expect || !intact(f))
			bad++;
		expect++;
		/* no release: the next take releases the previous frame */
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_int_equal(expect, 2000);
	assert_int_equal(ring_dropped(r), 0);
	ring_destroy(r);
}

static void *close_later(void *arg)
{
	struct ring *r = arg;
	ring_close(r);
	return NULL;
}

static void test_close_wakes_waiter(void **state)
{
	(void)state;
	struct ring *r = ring_create(W, H, false, NULL);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, close_later, r), 0);
	assert_null(ring_take(r, -1)); /* would hang forever if close did not wake it */
	pthread_join(t, NULL);
	ring_destroy(r);
}

static void test_closed_ring_drains(void **state)
{
	(void)state;
	struct ring *r = ring_create(W, H, false, NULL);
	struct frame *f = ring_acquire_write(r);
	fill(f, 41);
	ring_publish(r);
	ring_close(r);
	f = ring_take(r, 0);
	assert_non_null(f);
	assert_int_equal(f->seq, 41);
	assert_null(ring_take(r, 0));
	ring_destroy(r);
}

static void test_bad_size(void **state)
{
	(void)state;
	int err = 0;
	assert_null(ring_create(0, 10, false, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_null(ring_create(IMAGE_MAX_SIDE + 1, 10, false, &err));
	assert_int_equal(err, ERR_RANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_thread_latest_wins),
		cmocka_unit_test(test_two_threads_latest_wins),
		cmocka_unit_test(test_two_threads_lossless),
		cmocka_unit_test(test_close_wakes_waiter),
		cmocka_unit_test(test_closed_ring_drains),
		cmocka_unit_test(test_bad_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
