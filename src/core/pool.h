/*
 * pool.h - a small fixed pool of parked worker threads that run numbered
 * tasks: the segmenter's bands and the engine's second-scale job.
 *
 * A pool has n_workers threads, started by pool_create() and parked until
 * work is published. Worker w always runs the same task number, so a task
 * may keep per-task state (a band's arrays, a scale's buffers) without
 * locking: pool_run() runs task 0 on the calling thread and task t on
 * worker t - 1; pool_start() runs task t on worker t, returns at once, and
 * pool_wait() waits for those tasks.
 *
 * Waiting never busy-waits for long: a parked worker, or a caller waiting
 * for the workers, spins for at most POOL_SPIN_NS (a few microseconds, the
 * gap between the phases of one frame) and then sleeps on a condition
 * variable; publishing costs the caller a mutex and a broadcast.
 *
 * Memory ordering: everything the caller wrote before publishing is
 * visible to the tasks, and everything the tasks wrote is visible to the
 * caller once pool_run() or pool_wait() returns.
 *
 * One publisher: pool_run/pool_start/pool_wait must not be called from two
 * threads at once, and a task must not publish to its own pool.
 */
#ifndef TT_CORE_POOL_H
#define TT_CORE_POOL_H

#define POOL_MAX_WORKERS 64
/* How long a waiting thread spins before it sleeps. */
#define POOL_SPIN_NS 5000

/* A task: arg as published, task the task number. */
typedef void (*pool_fn)(void *arg, int task);

struct pool;

/* Starts n_workers (0..POOL_MAX_WORKERS) parked threads. Errors: ERR_RANGE,
 * ERR_NOMEM (also when a thread cannot be started). Owned by the caller:
 * free with pool_destroy(). */
struct pool *pool_create(int n_workers, int *err);

/* NULL-safe; waits for published tasks, then stops and joins the workers. */
void pool_destroy(struct pool *p);

int pool_workers(const struct pool *p);

/* Runs fn(arg, t) for t in [0, n_tasks): task 0 on the calling thread,
 * the others on workers 0 .. n_tasks - 2, and returns when all are done.
 * n_tasks is 1 .. pool_workers(p) + 1. */
void pool_run(struct pool *p, pool_fn fn, void *arg, int n_tasks);

/* Starts fn(arg, t) for t in [0, n_tasks) on workers 0 .. n_tasks - 1 and
 * returns at once; n_tasks is 1 .. pool_workers(p). pool_wait() must be
 * called before the next pool_start() or pool_run(). */
void pool_start(struct pool *p, pool_fn fn, void *arg, int n_tasks);
void pool_wait(struct pool *p);

#endif
