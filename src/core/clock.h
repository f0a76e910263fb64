/*
 * clock.h - monotonic time and per-stage timing statistics.
 *
 * struct timing keeps a fixed ring of the last TIMING_SAMPLES samples (ns) so
 * a long run never grows memory; timing_summary() gives median and p99 over
 * what is kept.
 */
#ifndef TT_CORE_CLOCK_H
#define TT_CORE_CLOCK_H

#include <stdint.h>

#define TIMING_SAMPLES 8192

int64_t clock_now_ns(void);               /* CLOCK_MONOTONIC */
void clock_sleep_ns(int64_t ns);          /* restarts on EINTR until slept or a signal flag is irrelevant */
/* CPU time (user + system) the whole process has used so far, every thread
 * included (getrusage RUSAGE_SELF), in ns. What a frame costs the machine,
 * as opposed to how long it took. */
int64_t clock_process_cpu_ns(void);
/* CPU time (user + system) the calling thread has used so far, in ns
 * (CLOCK_THREAD_CPUTIME_ID: a system call, for --stats, not every frame). */
int64_t clock_thread_cpu_ns(void);

/* One step of a spin-wait: tells the CPU (x86 PAUSE) so the sibling
 * hyperthread and the memory system are not flooded. */
static inline void clock_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

struct timing {
	int64_t samples[TIMING_SAMPLES];
	uint64_t n_total;                     /* samples ever added */
};

void timing_add(struct timing *t, int64_t ns);
/* Median and 99th percentile (ns) of the kept samples; 0 when empty.
 * Allocates nothing (a selection by bisection of the values, 64 passes
 * at most): call at exit or from the UI, not per frame. */
void timing_summary(const struct timing *t, int64_t *median_ns, int64_t *p99_ns);

/* Median (ns) of the last min(n, TIMING_RECENT_MAX) samples; 0 when empty.
 * No allocation: cheap enough for a live status line from the frame thread. */
#define TIMING_RECENT_MAX 64
int64_t timing_recent_median(const struct timing *t, int n);

#endif
