/* events.h -- what the sampler's BPF program and its user side share: the
 * attach cookie's layout, the ring buffer's events, the statistics slots.
 * Included by sampler.bpf.c (clang -target bpf) and by the C side. */
#ifndef JMA_SAMPLER_EVENTS_H
#define JMA_SAMPLER_EVENTS_H

#include <linux/types.h>

#include "bpf_regs.h"	/* attach/arch/<arch>: the registers copied, their numbers */

#define SMP_STACK_MAX	16384	/* bytes of user stack copied per sample */
#define SMP_NREGS	ARCH_BPF_NREGS	/* libunwind's numbering (bpf_regs.h) */
#define SMP_EXPO_N	4096	/* exponential quantiles for the thresholds */
#define SMP_LIVE_MAX	262144	/* sampled pointers followed at once */
#define SMP_SITES_MAX	64	/* probed functions (sites.c has 35 entries) */

/* The cookie of a probe: which argument (1-based, 0 none) holds what. */
#define SMP_COOKIE(size, count, old, memptr, track, site) \
	((__u64)(size) | (__u64)(count) << 4 | (__u64)(old) << 8 | (__u64)(memptr) << 12 | \
	 (__u64)(track) << 16 | (__u64)(site) << 32)
#define SMP_SIZE_ARG(c)		((unsigned)((c) & 15))
#define SMP_COUNT_ARG(c)	((unsigned)((c) >> 4 & 15))
#define SMP_OLD_ARG(c)		((unsigned)((c) >> 8 & 15))	/* a pointer given back */
#define SMP_MEMPTR_ARG(c)	((unsigned)((c) >> 12 & 15))	/* result stored through it */
#define SMP_TRACK(c)		((unsigned)((c) >> 16 & 1))	/* its pointer is wanted back */
#define SMP_SITE(c)		((__u32)((c) >> 32))		/* index of the probed function */

enum { SMP_EV_SAMPLE = 1, SMP_EV_RET, SMP_EV_FREE };

struct smp_ev_sample {
	__u32 type;
	__u32 tid;
	__u64 id;
	__u64 size;
	__u32 site;
	__u32 stack_len;		/* bytes of stack[] valid, from regs[ARCH_BPF_REG_SP] up */
	__u32 shift;			/* sampled at a mean of 2^lg_sample >> shift bytes */
	__u32 exact;			/* by an entry probed all the time: stands for itself */
	__u64 regs[SMP_NREGS];
	unsigned char stack[SMP_STACK_MAX];
};

struct smp_ev_ret {
	__u32 type;
	__u32 pad;
	__u64 id;
	__u64 ptr;		/* 0: the allocation failed */
};

struct smp_ev_free {
	__u32 type;
	__u32 pad;
	__u64 id;
};

/* Per-CPU counters.  SEEN: bytes asked of the probed allocation entries
 * while sampling; PAIR_REQ and PAIR_USZ: the bytes asked and jemalloc's
 * counter's moves (usable sizes) over the calls whose next call in the same
 * burst was seen too, so that usable / asked is known. */
enum { SMP_ST_SAMPLES, SMP_ST_LOST, SMP_ST_UNTRACKED, SMP_ST_SEEN, SMP_ST_PAIR_REQ,
       SMP_ST_PAIR_USZ, SMP_ST_REUSED, SMP_NSTATS };

/* A thread's state (the threads map): its sampling countdown, and what
 * jemalloc's own counter said. */
struct smp_thread {
	__s64 left;		/* bytes until the next sample */
	__u32 sgen;		/* the sampling generation left was drawn in */
	__u32 cgen;		/* the counting generation first belongs to */
	__u64 first, last;	/* jemalloc's counter, first and last seen in generation cgen */
	__u32 bgen;		/* the burst prev_c was seen in */
	__u32 pad;
	__u64 prev_c, prev_size;	/* the previous allocation entry's counter and size */
	__u64 tp;		/* its thread pointer: the counter is at tp + tsd_off */
};

#endif
