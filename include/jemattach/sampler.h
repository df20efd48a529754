/* jemattach/sampler.h -- heap profiles of a process started without prof:true,
 * by uprobes and eBPF (`prof sample`).
 *
 * The kernel inserts breakpoints into the target's address space only (per
 * process, never system-wide) and removes them when our descriptors close,
 * however we end.  Nothing is written into the target and it never stops;
 * each probe hit costs it a trap (about 10 us on a VM), counted and shown.
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
	unsigned lg_sample;		/* mean sample interval 2^lg_sample bytes; 0: 19 */
	int alloc_only;			/* follow no frees: allocation totals only */
	int slow_paths;			/* jemalloc 5: probe allocations on their slow paths only
					 * (fewer traps).  5.3+: each of jemalloc's thread events
					 * stands for the bytes it counted since the last (totals
					 * exact, sites picked by its 64 KiB schedule, which aliases
					 * with periodic patterns); 5.0-5.2: small allocations are
					 * under-counted */
	double settle;			/* then follow frees only for this long, so that short-lived
					 * objects sampled in the window are freed (prof window) */
	double max_overhead;		/* end early past this share of the target's CPU (0..1); 0: none */
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
	JMA_SAMPLER_OVERHEAD,		/* the cost passed max_overhead */
	JMA_SAMPLER_EXITED,		/* the target exited */
	JMA_SAMPLER_EXECED,		/* the target ran exec: its probes are gone */
};

struct jma_sampler_result {
	char *profile;			/* heap_v2 text (malloc'ed), MAPPED_LIBRARIES included */
	size_t len;
	enum jma_sampler_end end;
	double seconds;			/* the window's actual length */
	double settled;			/* how long frees were followed after it (settle) */
	unsigned nprobes;		/* probes attached */
	unsigned nslow;			/* of the allocation functions, probed on their slow path */
	int by_counter;			/* slow_paths: jemalloc's per-thread counter was found and used */
	int counted;			/* hits and bpf_ns known: the kernel's run-time statistics
					 * could be enabled (CAP_SYS_ADMIN); else no cost limit */
	uint64_t hits;			/* probe hits (the kernel's count of program runs) */
	uint64_t bpf_ns;		/* time in our BPF programs (kernel run-time stats; 0: unknown) */
	double hit_us;			/* cost of one hit to the target, measured at start */
	double target_cpu;		/* the target's CPU seconds in the window */
	double overhead;		/* estimated share of those spent in probe hits */
	uint64_t samples, lost, unwound_short, untracked, live;
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

JMA_API_END

#endif
