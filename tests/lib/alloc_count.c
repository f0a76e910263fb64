/*
 * alloc_count.c - an LD_PRELOAD library that counts the heap allocations
 * of each thread, by the thread's name (tests/e2e_noalloc.sh).
 *
 * malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign are
 * counted and passed to glibc's own (__libc_*); free is not counted. At
 * exit the counts go to the file ALLOC_COUNT_OUT names, a line a thread
 * name: "NAME COUNT" (threads of one name summed). An allocation with the
 * CUDA driver (libcuda.so, closed source) on its stack counts apart, as
 * "NAME[libcuda] COUNT". ALLOC_COUNT_TRACE=NAME also writes the stack of
 * every allocation of the threads so named to standard error, after the
 * first ALLOC_COUNT_TRACE_SKIP of them, for finding where a count comes
 * from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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

static char names[NAMES][32];
static long counts[NAMES];
static int n_names;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int busy; /* no counting of what counting itself allocates */
static long traced;

/* Whether a frame of the stack lies in the CUDA driver. */
static int in_driver(void *const *frames, int n)
{
	for (int i = 0; i < n; i++) {
		Dl_info info;
		if (dladdr(frames[i], &info) && info.dli_fname && strstr(info.dli_fname, "libcuda.so"))
			return 1;
	}
	return 0;
}

static void count(void)
{
	if (busy)
		return;
	busy = 1;
	char name[32] = {0};
	prctl(PR_GET_NAME, name);
	void *frames[48];
	const int depth = backtrace(frames, 48);
	if (in_driver(frames, depth))
		strcat(name, "[libcuda]");
	pthread_mutex_lock(&lock);
	int i = 0;
	while (i < n_names && strcmp(names[i], name) != 0)
		i++;
	if (i == n_names && n_names < NAMES)
		memcpy(names[n_names++], name, sizeof name);
	if (i < NAMES)
		counts[i]++;
	pthread_mutex_unlock(&lock);
	const char *trace = getenv("ALLOC_COUNT_TRACE"), *skip = getenv("ALLOC_COUNT_TRACE_SKIP");
	if (trace && strncmp(trace, name, strlen(trace)) == 0 && (name[strlen(trace)] == 0 || name[strlen(trace)] == '[') &&
	    __atomic_add_fetch(&traced, 1, __ATOMIC_RELAXED) > (skip ? atol(skip) : 0)) {
		dprintf(2, "alloc_count: allocation in %s\n", name);
		backtrace_symbols_fd(frames, depth, 2);
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
