#include "clock.h"

#include <errno.h>
#include <sys/resource.h>
#include <time.h>

int64_t clock_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void clock_sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
	/* A signal ends the sleep early on purpose: the caller re-checks its stop flag. */
	nanosleep(&ts, NULL);
}

void timing_add(struct timing *t, int64_t ns)
{
	t->samples[t->n_total % TIMING_SAMPLES] = ns;
	t->n_total++;
}

/* The k-th smallest (from 0) of v[0 .. n), n > k, found by bisecting the
 * range of values: what a sorted copy holds at k, without the copy (a
 * copy of 8192 samples, or qsort's own buffer, came from malloc). */
static int64_t kth_smallest(const int64_t *v, size_t n, size_t k)
{
	int64_t lo = v[0], hi = v[0];
	for (size_t i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	while (lo < hi) {
		const int64_t mid = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
		size_t at_most = 0;
		for (size_t i = 0; i < n; i++)
			at_most += v[i] <= mid;
		if (at_most > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void timing_summary(const struct timing *t, int64_t *median_ns, int64_t *p99_ns)
{
	size_t n = t->n_total < TIMING_SAMPLES ? (size_t)t->n_total : TIMING_SAMPLES;
	*median_ns = *p99_ns = 0;
	if (n == 0)
		return;
	*median_ns = kth_smallest(t->samples, n, n / 2);
	*p99_ns = kth_smallest(t->samples, n, (size_t)((double)(n - 1) * 0.99 + 0.5));
}

int64_t timing_recent_median(const struct timing *t, int n)
{
	int64_t v[TIMING_RECENT_MAX];
	uint64_t have = t->n_total < TIMING_SAMPLES ? t->n_total : TIMING_SAMPLES;
	if (n > TIMING_RECENT_MAX)
		n = TIMING_RECENT_MAX;
	if ((uint64_t)n > have)
		n = (int)have;
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		int64_t x = t->samples[(t->n_total - 1 - (uint64_t)i) % TIMING_SAMPLES];
		int j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[n / 2];
}

int64_t clock_process_cpu_ns(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

int64_t clock_thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
