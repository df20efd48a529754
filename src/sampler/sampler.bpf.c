/* sampler.bpf.c -- byte-sampling jemalloc's allocations from uprobes (kernel side).
 *
 * Attached per process by sampler.c: an entry probe on each allocation
 * function (and on realloc-like ones, whose old pointer is a free), a return
 * probe on the same functions when in-use memory is followed, and an entry
 * probe on each free function.  Which argument holds what comes in the
 * attach cookie (SITE_* in sampler_events.h), so one program serves all.
 *
 * Sampling is jemalloc's: each thread counts down a Poisson threshold of
 * mean 2^lg_sample bytes; the allocation that reaches it is sampled once and
 * a new threshold is drawn (from a table of exponential quantiles the user
 * side fills, BPF having no floating point).  A sampled allocation copies
 * the registers and the top of the user stack into the ring buffer, to be
 * unwound there with the module's CFI.  Only sampled pointers are kept
 * (the live map), so a free costs one hash lookup.
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
/* Counted mode (counter.c): jemalloc's thread_allocated and the next thread
 * event's threshold at the thread pointer + tsd_off; the thread pointer the
 * kernel saved at tp_off of the task_struct.  0: every call is seen, the
 * sizes are counted here. */
const volatile __s64 tsd_off;
const volatile __u32 tp_off;

struct thread_state {
	__s64 left;		/* bytes until the next sample */
	__u64 last;		/* counted mode: jemalloc's counter after the last counted hit */
};

struct pending {
	__u64 id;
	__u64 memptr;		/* posix_memalign: where the pointer will be */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct thread_state);
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
	__uint(max_entries, 8 << 20);	/* resized by the user side */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SMP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

__u64 next_id;
/* Set by the user side once every probe is in place: the window starts
 * then, with frees and returns followed from the first sample on. */
__u32 active;
/* Cleared for --settle: frees still followed, no new samples. */
__u32 sampling;

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		(*v)++;
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

	return (__s64)expo[i];
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
		count(SMP_ST_LOST);
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

/* Counted mode: is this hit a thread event of jemalloc's (the allocation
 * that reaches the event's threshold: one every 64 KiB or so a thread
 * allocates, picked by bytes, as jemalloc's own profiler picks)?  Then it
 * stands for every byte the thread allocated since the last one, most of
 * them on the fast path, unseen: *size becomes that.  A hit that is no event
 * (a cache miss, a large size) is not counted: its bytes are in the
 * counter, counted at the next event. */
static __always_inline int counted(struct thread_state *st, __u64 *size)
{
	__u64 task = bpf_get_current_task(), tp = 0, c[2];

	if (bpf_probe_read_kernel(&tp, sizeof(tp), (void *)(task + tp_off)) || !tp ||
	    bpf_probe_read_user(c, sizeof(c), (void *)(tp + tsd_off)))
		return 0;
	/* c[1] is 0 while the thread is not on the fast path at all (every
	 * call is seen then). */
	if (c[1] && c[0] + *size < c[1])
		return 0;
	if (!st->last || st->last > c[0])
		st->last = c[0];
	c[1] = c[0] + *size;
	*size = c[1] - st->last;
	st->last = c[1];
	return 1;
}

SEC("uprobe")
int on_alloc(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *st, fresh;
	struct args a;
	__u64 size;
	struct smp_ev_sample *e;
	struct pending p;

	if (!active || bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	get_args(ctx, &a);
	size = arg(&a, SMP_SIZE_ARG(cookie));
	if (SMP_COUNT_ARG(cookie))
		size *= arg(&a, SMP_COUNT_ARG(cookie));
	if (SMP_OLD_ARG(cookie))
		untrack(arg(&a, SMP_OLD_ARG(cookie)));
	if (!size || !sampling)
		return 0;
	st = bpf_map_lookup_elem(&threads, &tid);
	if (!st) {
		fresh.left = draw();
		fresh.last = 0;
		bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
		st = bpf_map_lookup_elem(&threads, &tid);
		if (!st)
			return 0;
	}
	if (tsd_off && !counted(st, &size))
		return 0;
	if (st->left > (__s64)size) {
		st->left -= (__s64)size;
		return 0;
	}
	st->left = draw();
	count(SMP_ST_SAMPLES);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count(SMP_ST_LOST);
		return 0;
	}
	e->type = SMP_EV_SAMPLE;
	e->tid = tid;
	e->id = __sync_fetch_and_add(&next_id, 1);
	e->size = size;
	e->site = SMP_SITE(cookie);
	copy_regs(e, ctx);
	e->stack_len = copy_stack(e, e->regs[ARCH_BPF_REG_SP]);
	p.id = e->id;
	p.memptr = arg(&a, SMP_MEMPTR_ARG(cookie));
	bpf_ringbuf_submit(e, 0);
	if (SMP_TRACK(cookie))
		bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int on_alloc_ret(struct pt_regs *ctx)
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
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		count(SMP_ST_LOST);
		return 0;
	}
	e->type = SMP_EV_RET;
	e->id = id;
	e->ptr = ptr;
	bpf_ringbuf_submit(e, 0);
	/* After the event: a free that finds the pointer comes after it. */
	if (ptr && bpf_map_update_elem(&live, &ptr, &id, BPF_ANY))
		count(SMP_ST_UNTRACKED);
	return 0;
}

SEC("uprobe")
int on_free(struct pt_regs *ctx)
{
	struct args a;

	get_args(ctx, &a);
	untrack(arg(&a, SMP_OLD_ARG(bpf_get_attach_cookie(ctx))));
	return 0;
}
