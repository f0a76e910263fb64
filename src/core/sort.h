/*
 * sort.h - an in-place sort for the frame path.
 *
 * glibc's qsort() is a merge sort that takes a buffer of the array's size
 * from malloc() once the array is over 1 KB: on the frame path that is an
 * allocation a frame wherever a frame happens to hold many elements (the
 * tracker's association candidates, the outline stage's units, a window's
 * edge steps). sort_inplace() takes qsort's arguments, sorts by heapsort
 * (O(n log n), no memory but the stack's) and is not stable, so the
 * comparison must be a total order (ties broken by an index): then the
 * result is the one qsort gives, element for element. Elements of at most
 * SORT_MAX_SIZE bytes.
 */
#ifndef TT_CORE_SORT_H
#define TT_CORE_SORT_H

#include <stddef.h>

#define SORT_MAX_SIZE 64

void sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
