#include "sort.h"

#include <assert.h>
#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
	unsigned char t[SORT_MAX_SIZE];
	memcpy(t, a, size);
	memcpy(a, b, size);
	memcpy(b, t, size);
}

/* Moves element i of the heap of n down until both children are no larger. */
static void sift_down(unsigned char *v, size_t i, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && cmp(v + c * size, v + (c + 1) * size) < 0)
			c++;
		if (cmp(v + i * size, v + c * size) >= 0)
			return;
		swap(v + i * size, v + c * size, size);
		i = c;
	}
}

void sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	assert(size > 0 && size <= SORT_MAX_SIZE);
	unsigned char *v = base;
	if (n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n, size, cmp);
	for (size_t end = n - 1; end > 0; end--) {
		swap(v, v + end * size, size);
		sift_down(v, 0, end, size, cmp);
	}
}
