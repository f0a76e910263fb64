/* core/clock: timing statistics used by --stats and the live status line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../src/core/clock.h"
#include "common/testutil.h"

static void test_empty(void **state)
{
	(void)state;
	static struct timing t;
	int64_t med = -1, p99 = -1;
	timing_summary(&t, &med, &p99);
	assert_int_equal(med, 0);
	assert_int_equal(p99, 0);
	assert_int_equal(timing_recent_median(&t, TIMING_RECENT_MAX), 0);
}

static void test_summary_and_recent(void **state)
{
	(void)state;
	static struct timing t;
	/* 1..1000, then a recent run of 64 samples of 5000..5063 in shuffled order. */
	for (int64_t i = 1; i <= 1000; i++)
		timing_add(&t, i);
	uint32_t seed = 7;
	int64_t recent[64];
	for (int i = 0; i < 64; i++)
		recent[i] = 5000 + i;
	for (int i = 63; i > 0; i--) {
		int j = (int)(test_rand(&seed) % (uint32_t)(i + 1));
		int64_t x = recent[i];
		recent[i] = recent[j];
		recent[j] = x;
	}
	for (int i = 0; i < 64; i++)
		timing_add(&t, recent[i]);
	int64_t med, p99;
	timing_summary(&t, &med, &p99);
	assert_int_equal(med, 533);    /* sorted[1064 / 2]: 532 small ones below it */
	assert_true(p99 >= 5000);
	assert_int_equal(timing_recent_median(&t, 64), 5032);
	assert_int_equal(timing_recent_median(&t, 1000), 5032); /* capped at TIMING_RECENT_MAX */
	assert_int_equal(timing_recent_median(&t, 1), recent[63]);
}

static void test_ring_wraps(void **state)
{
	(void)state;
	static struct timing t;
	for (int64_t i = 0; i < TIMING_SAMPLES + 100; i++)
		timing_add(&t, i < TIMING_SAMPLES ? 1 : 9);
	int64_t med, p99;
	timing_summary(&t, &med, &p99);
	assert_int_equal(med, 1);
	assert_int_equal(p99, 9);
	assert_int_equal(timing_recent_median(&t, 64), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_summary_and_recent),
		cmocka_unit_test(test_ring_wraps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
