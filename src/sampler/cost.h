/* cost.h -- what the target spends (CPU and runqueue time, by thread) and what a probe hit costs. */
#ifndef JMA_SAMPLER_COST_H
#define JMA_SAMPLER_COST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/probes.h"

/* The target's threads as last read (their schedstat). */
struct smp_sched {
	pid_t pid;
	pid_t *tid;
	uint64_t *run, *wait;	/* nanoseconds, as the kernel counts them */
	size_t n, cap;
};

/* Since the last smp_sched_read: seconds on a CPU and runnable but waiting,
 * summed over the threads (those that ended in between are missed), and the
 * busiest thread's (run + wait) / @wall. */
struct smp_cpu {
	double run, wait, busiest;
};

/* Read every thread's /proc/PID/task/TID/schedstat; *@out the change since
 * the last call over @wall seconds (zeros the first time).  -errno (-ESRCH:
 * the process is gone). */
int smp_sched_read(struct smp_sched *s, double wall, struct smp_cpu *out);
void smp_sched_free(struct smp_sched *s);

/* The process's user + system CPU seconds (/proc/PID/stat, every thread's,
 * those that ended included), -1 when gone. */
double smp_target_cpu(pid_t pid);

/* Microseconds of CPU a probe hit costs a thread here, our BPF program's
 * run apart: a probe on a function of our own process (placed with a copy
 * of @tmpl's programs), called with and without it, timed by this thread's
 * CPU clock (a shared machine's other work is not counted).  @fallback when
 * it cannot be measured. */
double smp_hit_cost(const struct smp_probes *tmpl, double fallback);

#endif
