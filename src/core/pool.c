#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "clock.h"
#include "err.h"

/* The published word: generation << 17 | quit << 16 | first << 8 | n_tasks.
 * Worker w runs task w + first when that is below n_tasks. A worker reads
 * fn and arg only for a word it has a task in; the publisher cannot change
 * them before that task is done, so a worker that slept through a word it
 * had no task in never reads a half-published one. */
#define WORD_QUIT (1u << 16)
#define WORD_GEN_SHIFT 17

struct pool_worker {
	struct pool *p;
	int index;
};

struct pool {
	int n_workers, n_started;
	pthread_t *threads;
	struct pool_worker *workers;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	_Atomic uint64_t word;
	atomic_int pending; /* worker tasks of the current word not yet done */
	pool_fn fn;
	void *arg;
};

/* One step of a bounded spin: pauses, and every 16th step reads the clock.
 * False once POOL_SPIN_NS have passed since the first reading (*t0 starts
 * at 0): the caller then sleeps instead. */
static bool spin_step(unsigned i, int64_t *t0)
{
	clock_spin_pause();
	if (i % 16 != 0)
		return true;
	int64_t t = clock_now_ns();
	if (!*t0)
		*t0 = t;
	return t - *t0 <= POOL_SPIN_NS;
}

/* Spins for at most POOL_SPIN_NS until the word differs from seen, then
 * sleeps until it does. */
static uint64_t wait_word(struct pool *p, uint64_t seen)
{
	int64_t t0 = 0;
	for (unsigned i = 1;; i++) {
		uint64_t w = atomic_load_explicit(&p->word, memory_order_acquire);
		if (w != seen)
			return w;
		if (!spin_step(i, &t0))
			break;
	}
	uint64_t w;
	pthread_mutex_lock(&p->mu);
	while ((w = atomic_load_explicit(&p->word, memory_order_acquire)) == seen)
		pthread_cond_wait(&p->go, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return w;
}

static void *worker_main(void *arg)
{
	const struct pool_worker *wk = arg;
	pthread_setname_np(pthread_self(), "tt-pool"); /* --stats' CPU by thread */
	struct pool *p = wk->p;
	uint64_t seen = 0;
	for (;;) {
		const uint64_t w = wait_word(p, seen);
		seen = w;
		if (w & WORD_QUIT)
			break;
		const int task = wk->index + (int)((w >> 8) & 0xff), n_tasks = (int)(w & 0xff);
		if (task >= n_tasks)
			continue;
		p->fn(p->arg, task);
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_broadcast(&p->done);
			pthread_mutex_unlock(&p->mu);
		}
	}
	return NULL;
}

static void publish(struct pool *p, uint64_t flags)
{
	uint64_t w = atomic_load_explicit(&p->word, memory_order_relaxed);
	w = ((w >> WORD_GEN_SHIFT) + 1) << WORD_GEN_SHIFT | flags;
	pthread_mutex_lock(&p->mu);
	atomic_store_explicit(&p->word, w, memory_order_release);
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
}

struct pool *pool_create(int n_workers, int *err)
{
	int e = ERR_RANGE;
	struct pool *p = NULL;
	if (n_workers < 0 || n_workers > POOL_MAX_WORKERS)
		goto fail;
	e = ERR_NOMEM;
	p = calloc(1, sizeof *p);
	if (!p)
		goto fail;
	p->n_workers = n_workers;
	p->threads = calloc((size_t)n_workers + 1, sizeof *p->threads);
	p->workers = calloc((size_t)n_workers + 1, sizeof *p->workers);
	if (!p->threads || !p->workers)
		goto fail_free;
	if (pthread_mutex_init(&p->mu, NULL))
		goto fail_free;
	if (pthread_cond_init(&p->go, NULL))
		goto fail_mu;
	if (pthread_cond_init(&p->done, NULL))
		goto fail_go;
	atomic_init(&p->word, 0);
	atomic_init(&p->pending, 0);
	for (int i = 0; i < n_workers; i++) {
		p->workers[i].p = p;
		p->workers[i].index = i;
		if (pthread_create(&p->threads[i], NULL, worker_main, &p->workers[i])) {
			pool_destroy(p);
			p = NULL;
			goto fail;
		}
		p->n_started = i + 1;
	}
	if (err)
		*err = 0;
	return p;
fail_go:
	pthread_cond_destroy(&p->go);
fail_mu:
	pthread_mutex_destroy(&p->mu);
fail_free:
	free(p->threads);
	free(p->workers);
	free(p);
fail:
	if (err)
		*err = e;
	return NULL;
}

void pool_destroy(struct pool *p)
{
	if (!p)
		return;
	pool_wait(p);
	publish(p, WORD_QUIT);
	for (int i = 0; i < p->n_started; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->go);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p->workers);
	free(p);
}

int pool_workers(const struct pool *p)
{
	return p ? p->n_workers : 0;
}

void pool_start(struct pool *p, pool_fn fn, void *arg, int n_tasks)
{
	p->fn = fn;
	p->arg = arg;
	atomic_store_explicit(&p->pending, n_tasks, memory_order_relaxed);
	publish(p, (uint64_t)n_tasks);
}

void pool_wait(struct pool *p)
{
	int64_t t0 = 0;
	for (unsigned i = 1;; i++) {
		if (atomic_load_explicit(&p->pending, memory_order_acquire) == 0)
			return;
		if (!spin_step(i, &t0))
			break;
	}
	pthread_mutex_lock(&p->mu);
	while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void pool_run(struct pool *p, pool_fn fn, void *arg, int n_tasks)
{
	if (n_tasks > 1) {
		p->fn = fn;
		p->arg = arg;
		atomic_store_explicit(&p->pending, n_tasks - 1, memory_order_relaxed);
		publish(p, 1u << 8 | (uint64_t)n_tasks);
	}
	fn(arg, 0);
	if (n_tasks > 1)
		pool_wait(p);
}
