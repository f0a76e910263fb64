/* test_sort.c - sort_inplace() (src/core/sort.h) against qsort: the same
 * arrays element for element under total orders, of every length from 0
 * to 300 and longer, elements of 4, 8, 12 and 64 bytes, with many equal
 * keys (ties broken by an index, as the frame path's comparisons do). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../src/core/sort.h"

static uint32_t rng = 12345;
static uint32_t rnd(void)
{
	rng = rng * 1664525u + 1013904223u;
	return rng >> 8;
}

static int cmp_int(const void *a, const void *b)
{
	const int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The tracker's association candidate: distance, then item, then detection. */
struct pair {
	float d;
	int32_t det, item;
};

static int cmp_pair(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;
	if (a->d != b->d)
		return a->d < b->d ? -1 : 1;
	if (a->item != b->item)
		return a->item < b->item ? -1 : 1;
	return (a->det > b->det) - (a->det < b->det);
}

/* 64 bytes, keyed by a small value and then its position. */
struct big {
	int32_t key, at;
	unsigned char pad[56];
};

static int cmp_big(const void *pa, const void *pb)
{
	const struct big *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1; /* descending, as the outline stage's units */
	return (a->at > b->at) - (a->at < b->at);
}

static void same_as_qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	void *ref = malloc(n * size + 1);
	assert_non_null(ref);
	memcpy(ref, v, n * size);
	qsort(ref, n, size, cmp);
	sort_inplace(v, n, size, cmp);
	assert_memory_equal(v, ref, n * size);
	free(ref);
}

static void test_ints(void **state)
{
	(void)state;
	int v[1000];
	for (size_t n = 0; n <= 300; n++)
		for (int spread = 1; spread <= 1000; spread *= 10) {
			for (size_t i = 0; i < n; i++)
				v[i] = (int)(rnd() % (uint32_t)spread);
			same_as_qsort(v, n, sizeof *v, cmp_int);
		}
	for (size_t i = 0; i < 1000; i++) /* sorted, reversed */
		v[i] = (int)i;
	same_as_qsort(v, 1000, sizeof *v, cmp_int);
	for (size_t i = 0; i < 1000; i++)
		v[i] = 1000 - (int)i;
	same_as_qsort(v, 1000, sizeof *v, cmp_int);
}

static void test_pairs(void **state)
{
	(void)state;
	static struct pair p[4096];
	for (size_t n = 1; n <= 4096; n *= 2) {
		for (size_t i = 0; i < n; i++)
			p[i] = (struct pair){.d = (float)(rnd() % 16) * 0.5f, .det = (int32_t)(i % 37),
					     .item = (int32_t)(i / 37)};
		same_as_qsort(p, n, sizeof *p, cmp_pair);
	}
}

static void test_big(void **state)
{
	(void)state;
	static struct big b[700];
	for (size_t n = 0; n <= 700; n += 7) {
		for (size_t i = 0; i < n; i++) {
			b[i] = (struct big){.key = (int32_t)(rnd() % 5), .at = (int32_t)i};
			memset(b[i].pad, (int)(i & 255), sizeof b[i].pad);
		}
		same_as_qsort(b, n, sizeof *b, cmp_big);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ints),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
