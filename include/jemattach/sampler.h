/* jemattach/sampler.h -- heap profiles of a process started without prof:true,
 * by uprobes and eBPF (`prof sample`).
 *
 * The kernel inserts breakpoints into the target's address space only (per
 * process, never system-wide) and removes them when our descriptors close,
 * however we end.  Nothing is written into the target; each probe hit costs
 * it a trap (about 5-10 us on a VM), counted, shown, and kept within a budget
 * by degrading the sampling.  When the free of a sampled block may have gone
 * unseen, jemalloc's metadata is read at the end (the census's map walk:
 * every thread stopped for some milliseconds).
 */
#ifndef JEMATTACH_SAMPLER_H
#define JEMATTACH_SAMPLER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

struct jma_sampler_opts {
	double seconds;			/* the window */
	unsigned lg_sample;		/* mean sample interval 2^lg_sample bytes; 0: automatic,
					 * 2^5 times finer than lg_nominal's to start with,
					 * sparser while samples come faster than 200 a second */
	unsigned lg_nominal;		/* with lg_sample 0: the sparsest rate (0: 19, jemalloc's
					 * default); prof window passes the process's own */
	int alloc_only;			/* follow no frees: allocation totals only */
	int slow_paths;			/* jemalloc 5: start where the guard degrades to (the
					 * allocation entries in bursts, jemalloc's slow paths
					 * throughout), not with every call probed */
	double settle;			/* then follow frees only for this long, so that short-lived
					 * objects sampled in the window are freed (prof window) */
	double max_overhead;		/* the probes' budget (0..1): that share of one CPU, less
					 * what the process's busiest thread used or waited for,
					 * and never less than that share of the CPU it gets.
					 * Past it the sampler degrades (bursts, a smaller duty,
					 * a sparser rate), ending early only with nothing left
					 * to give up; 0: no limit, every call probed */
	volatile sig_atomic_t *stop;	/* set asynchronously: end the window now (may be NULL) */
	/* prof track: every @snapshot_every seconds of the window, the heap_v2
	 * profile so far is handed to @snapshot (NULL: none); a non-zero
	 * return ends the window (JMA_SAMPLER_STOPPED). */
	double snapshot_every;
	int (*snapshot)(void *arg, const char *profile, size_t len);
	void *snapshot_arg;
};

enum jma_sampler_end {
	JMA_SAMPLER_TIME,		/* the window ran its length */
	JMA_SAMPLER_STOPPED,		/* *stop was set */
	JMA_SAMPLER_OVERHEAD,		/* the cost passed max_overhead with nothing left to give up */
	JMA_SAMPLER_EXITED,		/* the target exited */
	JMA_SAMPLER_EXECED,		/* the target ran exec: its probes are gone */
};

struct jma_sampler_result {
	char *profile;			/* heap_v2 text (malloc'ed), MAPPED_LIBRARIES included */
	size_t len;
	enum jma_sampler_end end;
	double seconds;			/* the window's actual length */
	double settled;			/* how long frees were followed after it (settle) */
	unsigned nprobes;		/* probes attached at the start */
	unsigned nslow;			/* of the functions, with a slow path found */
	int by_counter;			/* jemalloc's per-thread byte counter was read (5.3+, BTF) */
	int counted;			/* hits and bpf_ns known: the kernel's run-time statistics
					 * could be enabled (CAP_SYS_ADMIN); else no cost limit */
	uint64_t hits;			/* probe hits (the kernel's count of program runs) */
	uint64_t bpf_ns;		/* time in our BPF programs (kernel run-time stats; 0: unknown) */
	double hit_us;			/* cost of one hit to the target, measured at start (CPU time) */
	double target_cpu;		/* the target's CPU seconds in the window (probes included) */
	double cost;			/* CPU seconds the probes cost it: hits * hit_us + bpf_ns,
					 * never more than target_cpu */
	double overhead;		/* cost / target_cpu */
	double cost_rate;		/* cost a second of the window: share of one CPU */
	double allowed;			/* what the budget allowed at the last check (share of a CPU) */
	/* What the guard did.  every_call: seconds every allocation and free call
	 * was probed from the start; past the budget then (full_rate, against
	 * full_allowed), the allocation entries were placed in @bursts bursts
	 * (@burst_s seconds in all, @duty of the time aimed at), sampling at
	 * 2^lg_sample >> @shift, each burst sample standing for @scale of it
	 * (by jemalloc's counter, or the time when not by_counter). */
	unsigned lg_sample;		/* the sparsest rate (2^lg_sample bytes); shift: the finest
					 * used, 2^(lg_sample - shift) */
	double every_call;
	double full_rate, full_allowed;
	unsigned bursts;
	double burst_s, duty, scale;
	unsigned shift;
	double slowed;			/* the share of its progress (bytes it allocated, by
					 * jemalloc's own counter) the process lost while bursts
					 * were about, against its rate between them; -1 unknown */
	double k;			/* that loss over the hits' direct CPU share (0: not measured) */
	int frees_dropped;		/* the free entries were removed (sampling or settle) */
	int base_dropped;		/* the slow-path probes were removed too */
	/* Blocks whose free was not seen, read in jemalloc's metadata at the end
	 * (the census's map walk): @checked of them, @still_live still
	 * allocated; @check_err says why not when it could not be read. */
	uint64_t checked, still_live;
	char check_err[256];
	uint64_t samples, lost, unwound_short, untracked, live, reused;
	uint64_t alloc_bytes;		/* estimated bytes allocated in the window (unbiased) */
	uint64_t inuse_bytes;		/* estimated bytes of those still in use at its end */
};

/* Sample the allocations of the session's process (jma_open'ed; no ptrace
 * stop is made) for o->seconds and write its heap profile into @r.
 * -EPERM/-ENOSYS/-EOPNOTSUPP with kind JMA_ERR_MISSING when the kernel or our
 * privileges do not allow uprobes and BPF (the message says what and the
 * prof:true alternative). */
int jma_sampler_run(jma_session *s, const struct jma_sampler_opts *o, struct jma_sampler_result *r)
	JMA_MUST_CHECK;
void jma_sampler_result_free(struct jma_sampler_result *r);
/* The rate @o starts sampling at: 2^(what this returns) bytes on average. */
unsigned jma_sampler_lg_start(const struct jma_sampler_opts *o);

JMA_API_END

#endif
