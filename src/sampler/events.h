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

/* The cookie of a probe: which argument (1-based, 0 none) holds what. */
#define SMP_COOKIE(size, count, old, memptr, track, site) \
	((__u64)(size) | (__u64)(count) << 4 | (__u64)(old) << 8 | (__u64)(memptr) << 12 | \
	 (__u64)(track) << 16 | (__u64)(site) << 32)
#define SMP_SIZE_ARG(c)		((unsigned)((c) & 15))
#define SMP_COUNT_ARG(c)	((unsigned)((c) >> 4 & 15))
#define SMP_OLD_ARG(c)		((unsigned)((c) >> 8 & 15))	/* a pointer given back */
#define SMP_MEMPTR_ARG(c)	((unsigned)((c) >> 12 & 15))	/* result stored through it */
#define SMP_TRACK(c)		((unsigned)((c) >> 16 & 1))	/* return probe attached */
#define SMP_SITE(c)		((__u32)((c) >> 32))		/* index of the probed function */

enum { SMP_EV_SAMPLE = 1, SMP_EV_RET, SMP_EV_FREE };

struct smp_ev_sample {
	__u32 type;
	__u32 tid;
	__u64 id;
	__u64 size;
	__u32 site;
	__u32 stack_len;		/* bytes of stack[] valid, from regs[ARCH_BPF_REG_SP] up */
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

/* Per-CPU counters. */
enum { SMP_ST_SAMPLES, SMP_ST_LOST, SMP_ST_UNTRACKED, SMP_NSTATS };

#endif
