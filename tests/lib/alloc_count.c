/*
 * alloc_count.c - an LD_PRELOAD library that counts the heap allocations
 * of each thread, by the thread's name (tests/e2e_noalloc.sh).
 *
 * malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign are
 * counted and passed to glibc's own (__libc_*); free is not counted. At
 * exit the counts go to the file ALLOC_COUNT_OUT names, a line a thread
 * name: "NAME COUNT" (threads of one name summed). ALLOC_COUNT_TRACE=NAME
 * also writes the stack of every allocation of the threads so named to
 * standard error, for finding where a count comes from.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

#define NAMES 128

static char names[NAMES][16];
static long counts[NAMES];
static int n_names;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int busy; /* no counting of what counting itself allocates */

static void count(void)
{
	if (busy)
		return;
	busy = 1;
	char name[16] = {0};
	prctl(PR_GET_NAME, name);
	pthread_mutex_lock(&lock);
	int i = 0;
	while (i < n_names && strcmp(names[i], name) != 0)
		i++;
	if (i == n_names && n_names < NAMES)
		memcpy(names[n_names++], name, sizeof name);
	if (i < NAMES)
		counts[i]++;
	pthread_mutex_unlock(&lock);
	const char *trace = getenv("ALLOC_COUNT_TRACE");
	if (trace && strcmp(trace, name) == 0) {
		void *frames[32];
		dprintf(2, "alloc_count: allocation in %s\n", name);
		backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
	}
	busy = 0;
}

void *malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	count();
	void *p = __libc_memalign(align, n);
	if (!p)
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

void free(void *p)
{
	__libc_free(p);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("ALLOC_COUNT_OUT");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	for (int i = 0; i < n_names; i++)
		fprintf(f, "%s %ld\n", names[i], counts[i]);
	fclose(f);
}
