/* run.h -- one sampler window's state, shared by sampler.c (set-up, result)
 * and window.c (the window itself: bursts, the guard, snapshots). */
#ifndef JMA_SAMPLER_RUN_H
#define JMA_SAMPLER_RUN_H

#include <stdint.h>

#include <jemattach/sampler.h>

#include "attach/procfs.h"
#include "sampler/cost.h"
#include "sampler/guard.h"
#include "sampler/probes.h"
#include "sampler/profile.h"
#include "sampler/sites.h"

struct sampler_bpf;
struct ring_buffer;

/* The probe groups, placed and removed apart: the allocation entries (and
 * their returns), the free entries, jemalloc 5's slow paths. */
enum { SMP_G_CALLS, SMP_G_FREES, SMP_G_BASE, SMP_NGROUPS };

struct run {
	jma_session *s;
	const struct jma_sampler_opts *o;
	struct jma_sampler_result *r;
	struct sampler_bpf *skel;
	struct ring_buffer *rb;
	struct smp_profile *prof;
	const struct att_map *maps;
	size_t nmaps;
	struct smp_site *sites;
	size_t nsites;
	struct smp_probes grp[SMP_NGROUPS];
	struct smp_closer closer;	/* removes the bursts' probes */
	double on_seen;			/* smp_closer_on at the last check */
	unsigned bursts_seen;		/* bursts at the last check */
	unsigned used;			/* groups ever placed (bits) */
	int stats_fd;
	uint64_t period;
	int64_t tsd_off;		/* jemalloc's counter (counter.c), else 0 */
	uint32_t tp_off;
	int err;			/* from the event handler */
	uint64_t dropped;
	const char *maps_text;		/* the target's maps at the start, for snapshots */
	/* Cost: the programs' counters at the window's start and at the last
	 * check, by group; the target's threads. */
	uint64_t cnt0[SMP_NGROUPS], ns0[SMP_NGROUPS], cnt[SMP_NGROUPS], ns[SMP_NGROUPS];
	struct smp_sched sched;
	double cost;			/* CPU seconds of hits so far (each period's capped at its CPU) */
	uint64_t samples;		/* SMP_ST_SAMPLES at the last check */
	uint64_t samples_bursts;	/* ... when bursts began */
	double cpu0;			/* the target's CPU seconds (/proc/PID/stat) at the start */
	double run0;			/* ... its threads' CPU seconds (schedstat) summed since the start */
	/* The guard and its period. */
	struct smp_guard g;
	double pt0;			/* the period's start (monotonic seconds) */
	int frees_gap;			/* a sampled block's free may have gone unseen */
	double t_start, t_bursts;	/* when the window started, when bursts did */
	uint64_t burst_from;		/* the first sample id taken in a burst */
	uint64_t burst_mask, exact_mask; /* the sites in bursts, probed all the time */
	uint64_t seen0, req0, usz0;	/* SMP_ST_SEEN, PAIR_* when bursts started */
	double total0;			/* the bytes jemalloc's counter counted by then */
	double next_burst;
	double slot_end;		/* the end of the slot next_burst is in */
	uint64_t rnd;			/* xorshift state for the bursts' times */
	/* The target's progress (jemalloc's counter, read in its memory): the
	 * last reading, and this period's bytes and seconds with bursts in
	 * place or being placed (aff) and without (quiet). */
	double prog_t, prog_p;
	int prog_aff, burst_busy;
	double aff_t, aff_b, quiet_t, quiet_b;
	double lost_t, lost_sum;	/* the measured loss, weighted by the periods' seconds */
};

double smp_now(void);
/* Collect the probes of the sites in the mask @only into the entry groups,
 * those in @exact (allocation entries) into the slow paths' group as entries
 * probed all the time, with @base the slow paths' too (sampler.c).
 * -ENOMEM. */
int smp_collect(struct run *u, uint64_t only, uint64_t exact, int base);
/* Place (@on) or remove group @k; its first placing counts toward nprobes. -errno. */
int smp_group_set(struct run *u, int k, int on);
/* The sum of per-CPU statistic @which. */
uint64_t smp_stat(struct run *u, unsigned which);

/* The window starts: the cost's baselines (the programs' counters, the
 * target's CPU time and threads). */
void smp_cost_start(struct run *u);
/* The allocation entries in bursts from now on (window.c does it when the
 * guard says; --slow-paths at the start). */
void smp_start_bursts(struct run *u);

/* Consume events for @secs seconds (*@elapsed: how long it ran), placing
 * the allocation entries in bursts and acting on the guard's checks, until
 * the target exits or execs, the guard has nothing left to give up, or
 * *stop is set.  @sampling: allocations sampled (else --settle). */
enum jma_sampler_end smp_window(struct run *u, double secs, double *elapsed, int sampling);
/* The run's cost so far into the result (hits, bpf_ns, cost, overhead...). */
void smp_cost_result(struct run *u, double elapsed);
/* Bursts' samples: what each stands for (jemalloc's counter, or time). */
void smp_burst_scale(struct run *u);

#endif
