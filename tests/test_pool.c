/* core/pool: every task runs once, on its own worker, with the caller's
 * writes visible; asynchronous jobs; workers that went to sleep wake up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../src/core/clock.h"
#include "../src/core/err.h"
#include "../src/core/pool.h"
#include "common/testutil.h"

#define N_TASKS_MAX 9

struct job {
	int input;                  /* written by the caller before publishing */
	int seen[N_TASKS_MAX];      /* per task: the input it saw */
	int runs[N_TASKS_MAX];      /* per task: times it ran */
};

static void task_record(void *arg, int task)
{
	struct job *j = arg;
	j->seen[task] = j->input + task;
	j->runs[task]++;
}

static void test_run_every_task_once(void **state)
{
	(void)state;
	int err = -1;
	struct pool *p = pool_create(N_TASKS_MAX - 1, &err);
	assert_non_null(p);
	assert_int_equal(err, 0);
	assert_int_equal(pool_workers(p), N_TASKS_MAX - 1);
	struct job j;
	for (int round = 0; round < 2000; round++) {
		const int n = 1 + round % N_TASKS_MAX;
		memset(&j, 0, sizeof j);
		j.input = round * 100;
		if (round % 97 == 0)
			clock_sleep_ns(200000); /* past the spin: the workers sleep */
		pool_run(p, task_record, &j, n);
		for (int t = 0; t < N_TASKS_MAX; t++) {
			assert_int_equal(j.runs[t], t < n ? 1 : 0);
			if (t < n)
				assert_int_equal(j.seen[t], round * 100 + t);
		}
	}
	pool_destroy(p);
}

static void test_start_wait(void **state)
{
	(void)state;
	struct pool *p = pool_create(2, NULL);
	assert_non_null(p);
	struct job j;
	for (int round = 0; round < 500; round++) {
		memset(&j, 0, sizeof j);
		j.input = round;
		const int n = 1 + round % 2;
		pool_start(p, task_record, &j, n);
		if (round % 50 == 0)
			clock_sleep_ns(100000);
		pool_wait(p);
		for (int t = 0; t < N_TASKS_MAX; t++)
			assert_int_equal(j.runs[t], t < n ? 1 : 0);
		assert_int_equal(j.seen[0], round);
	}
	pool_wait(p); /* nothing published: returns at once */
	pool_destroy(p);
}

static void test_no_workers_and_range(void **state)
{
	(void)state;
	int err = 0;
	assert_null(pool_create(-1, &err));
	assert_int_equal(err, ERR_RANGE);
	assert_null(pool_create(POOL_MAX_WORKERS + 1, &err));
	assert_int_equal(err, ERR_RANGE);
	struct pool *p = pool_create(0, &err);
	assert_non_null(p);
	struct job j;
	memset(&j, 0, sizeof j);
	pool_run(p, task_record, &j, 1);
	assert_int_equal(j.runs[0], 1);
	pool_destroy(p);
	pool_destroy(NULL);
	assert_int_equal(pool_workers(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_every_task_once),
		cmocka_unit_test(test_start_wait),
		cmocka_unit_test(test_no_workers_and_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
