/* sampler.bpf.c -- byte-sampling jemalloc's allocations from uprobes (kernel side).
 *
 * Attached per process by sampler.c, in groups it places and removes apart
 * (probes.c): the allocation entries (on_alloc: a uprobe session where the
 * kernel has them, so that only a sampled call traps again on its return;
 * else an entry probe and on_alloc_ret on every return), the free entries
 * (on_free), and jemalloc 5's free slow paths (on_free_slow: what large
 * blocks always take) with the allocation entries the program hardly calls
 * (on_alloc_exact, in place from the bursts' start).  Which argument holds
 * what comes in the attach cookie (SMP_* in events.h), so one program serves
 * every function.
 *
 * Sampling is jemalloc's: each thread counts down a Poisson threshold of
 * mean 2^lg_sample >> shift bytes; the allocation that reaches it is sampled
 * once and a new threshold is drawn (from a table of exponential quantiles
 * the user side fills, BPF having no floating point).  A sampled allocation
 * copies the registers and the top of the user stack into the ring buffer,
 * to be unwound there with the module's CFI.  Only sampled pointers are kept
 * (the live map), so a free costs one hash lookup.
 *
 * jemalloc 5.3's counter (thread_allocated, at tsd_off from the thread
 * pointer) is read at every allocation hit and free slow path hit when
 * known: its first and last values per thread give the bytes each thread
 * allocated in the window, bursts or not, and its moves between two calls
 * of one burst the usable size of what was asked (events.h).
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sampler/events.h"

char LICENSE[] SEC("license") = "GPL";

/* Filled by the user side before load. */
const volatile __u64 expo[SMP_EXPO_N];
const volatile __u32 target_tgid;
/* jemalloc's thread_allocated and the next thread event's threshold at the
 * thread pointer + tsd_off (counter.c); the thread pointer the kernel saved
 * at tp_off of the task_struct.  0: not known. */
const volatile __s64 tsd_off;
const volatile __u32 tp_off;
/* on_alloc runs as a uprobe session: at the entry (where the instruction
 * pointer is the site's address) and, when the entry asked for it, at the
 * return. */
const volatile __u32 session;
const volatile __u64 site_addr[SMP_SITES_MAX];

struct pending {
	__u64 id;
	__u64 memptr;		/* posix_memalign: where the pointer will be */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct smp_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SMP_LIVE_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* about 1000 samples */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SMP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Entry hits per probed function: which ones the bursts need. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SMP_SITES_MAX);
	__type(key, __u32);
	__type(value, __u64);
} site_hits SEC(".maps");

__u64 next_id;
/* Set by the user side once the first probes are in place: the window
 * starts then, with frees and returns followed from the first sample on. */
__u32 active;
/* Cleared for --settle: frees still followed, no new samples. */
__u32 sampling;
/* Thresholds are drawn at a mean of 2^lg_sample >> shift; a new sgen makes
 * every thread draw again (the rate changed). */
__u32 shift;
__u32 sgen;
/* Set once the window starts: threads count jemalloc's counter from their
 * first hit in generation cgen on; bgen is the burst (calls of two bursts
 * are no pair). */
__u32 cgen;
__u32 bgen;

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline void site_hit(__u32 site)
{
	__u64 *v = bpf_map_lookup_elem(&site_hits, &site);

	if (v)
		(*v)++;
}

static __always_inline int ours(void)
{
	return active && bpf_get_current_pid_tgid() >> 32 == target_tgid;
}

/* The first four arguments, read at fixed offsets before any is chosen by
 * number: the verifier refuses a context pointer moved by a computed amount. */
struct args {
	__u64 a[5];
};

static __always_inline void get_args(struct pt_regs *ctx, struct args *v)
{
	v->a[0] = 0;
	v->a[1] = PT_REGS_PARM1(ctx);
	v->a[2] = PT_REGS_PARM2(ctx);
	v->a[3] = PT_REGS_PARM3(ctx);
	v->a[4] = PT_REGS_PARM4(ctx);
}

static __always_inline __u64 arg(const struct args *v, unsigned n)
{
	return n < 5 ? v->a[n] : 0;
}

static __always_inline __s64 draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (SMP_EXPO_N - 1);

	return (__s64)(expo[i] >> (shift & 63)) + 1;
}

static __always_inline struct smp_thread *thread(__u32 tid)
{
	struct smp_thread *st = bpf_map_lookup_elem(&threads, &tid), fresh;

	if (st)
		return st;
	__builtin_memset(&fresh, 0, sizeof(fresh));
	fresh.left = draw();
	fresh.sgen = sgen;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&threads, &tid);
}

/* jemalloc's thread_allocated for this thread into *c, its thread pointer
 * into *tp; 0, or -1 unknown. */
static __always_inline int counter(__u64 *c, __u64 *tp)
{
	__u64 task = bpf_get_current_task();

	*tp = 0;
	if (!tsd_off || bpf_probe_read_kernel(tp, sizeof(*tp), (void *)(task + tp_off)) || !*tp ||
	    bpf_probe_read_user(c, sizeof(*c), (void *)(*tp + tsd_off)))
		return -1;
	return 0;
}

/* The counter's value @c seen by thread @st, whose thread pointer is @tp
 * (for the user side to read the counter between hits). */
static __always_inline void counted(struct smp_thread *st, __u64 c, __u64 tp)
{
	if (st->cgen != cgen || c < st->first) {
		st->cgen = cgen;
		st->first = c;
	}
	st->last = c;
	st->tp = tp;
}

/* A sampled pointer given back: no longer in use. */
static __always_inline void untrack(__u64 ptr)
{
	__u64 *id;
	struct smp_ev_free *e;

	if (!ptr || !(id = bpf_map_lookup_elem(&live, &ptr)))
		return;
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (e) {
		e->type = SMP_EV_FREE;
		e->id = *id;
		bpf_ringbuf_submit(e, 0);
	} else {
		count(SMP_ST_LOST, 1);
	}
	bpf_map_delete_elem(&live, &ptr);
}

static __always_inline void copy_regs(struct smp_ev_sample *e, struct pt_regs *ctx)
{
	ARCH_BPF_COPY_REGS(e->regs, ctx);
}

/* The top of the stack: as much of SMP_STACK_MAX as is mapped above sp (a
 * main thread's stack may end sooner). */
static __always_inline __u32 copy_stack(struct smp_ev_sample *e, __u64 sp)
{
	if (!bpf_probe_read_user(e->stack, SMP_STACK_MAX, (void *)sp))
		return SMP_STACK_MAX;
	if (!bpf_probe_read_user(e->stack, SMP_STACK_MAX / 4, (void *)sp))
		return SMP_STACK_MAX / 4;
	if (!bpf_probe_read_user(e->stack, SMP_STACK_MAX / 16, (void *)sp))
		return SMP_STACK_MAX / 16;
	if (!bpf_probe_read_user(e->stack, 256, (void *)sp))
		return 256;
	return 0;
}

/* The return of a sampled allocation: its pointer, now in use.  A pointer
 * already in the live map was freed without a probe seeing it (while only
 * jemalloc's slow paths were probed) and is given out again. */
static __always_inline int alloc_ret(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&pending, &tid);
	struct smp_ev_ret *e;
	__u64 ptr, id;

	if (!p)
		return 0;
	id = p->id;
	ptr = PT_REGS_RC(ctx);
	if (p->memptr) {
		/* posix_memalign: 0 on success, the pointer stored through memptr. */
		if (ptr || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)p->memptr))
			ptr = 0;
	}
	bpf_map_delete_elem(&pending, &tid);
	if (ptr && bpf_map_lookup_elem(&live, &ptr)) {
		untrack(ptr);
		count(SMP_ST_REUSED, 1);
	}
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count(SMP_ST_LOST, 1);
		return 0;
	}
	e->type = SMP_EV_RET;
	e->id = id;
	e->ptr = ptr;
	bpf_ringbuf_submit(e, 0);
	/* After the event: a free that finds the pointer comes after it. */
	if (ptr && bpf_map_update_elem(&live, &ptr, &id, BPF_ANY))
		count(SMP_ST_UNTRACKED, 1);
	return 0;
}

/* An allocation entry.  Its return value matters to a session only: 0 runs
 * the program again at the return (a sampled call whose pointer is wanted),
 * 1 does not.  A plain uprobe's is ignored.  @exact: an entry probed all the
 * time (one the program hardly calls), whose samples stand for themselves:
 * its bytes are not among those the bursts saw, nor its calls in their
 * pairs. */
static __always_inline int alloc_entry(struct pt_regs *ctx, int exact)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), size, c, tp;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), site = SMP_SITE(cookie);
	struct smp_thread *st;
	struct smp_ev_sample *e;
	struct pending p;
	struct args a;

	if (!ours())
		return 1;
	if (session && PT_REGS_IP(ctx) != site_addr[site & (SMP_SITES_MAX - 1)])
		return alloc_ret(ctx);
	site_hit(site);
	get_args(ctx, &a);
	size = arg(&a, SMP_SIZE_ARG(cookie));
	if (SMP_COUNT_ARG(cookie))
		size *= arg(&a, SMP_COUNT_ARG(cookie));
	if (SMP_OLD_ARG(cookie))
		untrack(arg(&a, SMP_OLD_ARG(cookie)));
	if (!size || !sampling || !(st = thread(tid)))
		return 1;
	if (!exact)
		count(SMP_ST_SEEN, size);
	if (!counter(&c, &tp)) {
		counted(st, c, tp);
		if (!exact && st->bgen == bgen && c > st->prev_c && c - st->prev_c < (1ull << 40)) {
			count(SMP_ST_PAIR_REQ, st->prev_size);
			count(SMP_ST_PAIR_USZ, c - st->prev_c);
		}
		/* An exact entry's call may come between bursts: no pair across
		 * it (bursts count from 1). */
		st->bgen = exact ? 0 : bgen;
		st->prev_c = c;
		st->prev_size = size;
	}
	if (st->sgen != sgen) {
		st->sgen = sgen;
		st->left = draw();
	}
	if (st->left > (__s64)size) {
		st->left -= (__s64)size;
		return 1;
	}
	st->left = draw();
	count(SMP_ST_SAMPLES, 1);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count(SMP_ST_LOST, 1);
		return 1;
	}
	e->type = SMP_EV_SAMPLE;
	e->tid = tid;
	e->id = __sync_fetch_and_add(&next_id, 1);
	e->size = size;
	e->site = site;
	e->shift = shift;
	e->exact = exact;
	copy_regs(e, ctx);
	e->stack_len = copy_stack(e, e->regs[ARCH_BPF_REG_SP]);
	p.id = e->id;
	p.memptr = arg(&a, SMP_MEMPTR_ARG(cookie));
	bpf_ringbuf_submit(e, 0);
	if (!SMP_TRACK(cookie))
		return 1;
	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

SEC("uprobe")
int on_alloc(struct pt_regs *ctx)
{
	return alloc_entry(ctx, 0);
}

SEC("uprobe")
int on_alloc_exact(struct pt_regs *ctx)
{
	return alloc_entry(ctx, 1);
}

/* Without sessions: a return probe on every allocation entry. */
SEC("uretprobe")
int on_alloc_ret(struct pt_regs *ctx)
{
	if (!ours())
		return 0;
	return alloc_ret(ctx);
}

static __always_inline int freed(struct pt_regs *ctx)
{
	struct args a;

	if (!ours())
		return 0;
	get_args(ctx, &a);
	untrack(arg(&a, SMP_OLD_ARG(bpf_get_attach_cookie(ctx))));
	return 0;
}

SEC("uprobe")
int on_free(struct pt_regs *ctx)
{
	if (ours())
		site_hit(SMP_SITE(bpf_get_attach_cookie(ctx)));
	return freed(ctx);
}

/* The free slow path (every large block, a full thread cache, jemalloc's
 * deallocation events): a program of its own for its own statistics.  It
 * reads the thread's allocation counter too: between bursts, it is what
 * keeps each thread's count current. */
SEC("uprobe")
int on_free_slow(struct pt_regs *ctx)
{
	struct smp_thread *st;
	__u64 c, tp;

	if (ours() && !counter(&c, &tp) && (st = thread((__u32)bpf_get_current_pid_tgid())))
		counted(st, c, tp);
	return freed(ctx);
}
