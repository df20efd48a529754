/* probes.c -- uprobes on one process: uprobe_multi links, or one perf event each.
 *
 * Both are per process (the pid is given to the kernel, which inserts the
 * breakpoints into that address space only) and both go when their
 * descriptor closes.  uprobe_multi (kernel 6.6+) places all the probes of a
 * program in one file with one system call and removes them after a single
 * grace period; a perf event per probe costs a grace period each on removal,
 * one after the other (about 0.1 s each on this VM: 5 s for Debian's 49).
 * libbpf 1.1 predates uprobe_multi, so its link is made here by bpf(2) with
 * the kernel's layout of link_create for it.  A group is collected once and
 * placed and removed as often as the sampler wants (its bursts).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach/mem.h"
#include "heap/heap.h"
#include "sampler/probes.h"

#define UPROBE_MULTI_RETURN	1u	/* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr, as BPF_LINK_CREATE reads it for BPF_TRACE_UPROBE_MULTI. */
struct link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

static int link_multi(struct smp_probes *p, const struct smp_batch *b)
{
	struct link_create_uprobe_multi a;
	long fd;

	if (heap_grow((void **)&p->fds, &p->capfds, p->nfds + 1, sizeof(*p->fds)))
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)bpf_program__fd(p->prog[b->kind]);
	a.attach_type = p->session && (b->kind == SMP_P_ENTRY || b->kind == SMP_P_EXACT)
				? SMP_TRACE_UPROBE_SESSION : SMP_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)b->path;
	a.offsets = (uint64_t)(uintptr_t)b->offs;
	a.cookies = (uint64_t)(uintptr_t)b->cookies;
	a.cnt = (uint32_t)b->n;
	a.multi_flags = b->kind == SMP_P_RETURN ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)(p->pid ? p->pid : getpid());
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	p->fds[p->nfds++] = (int)fd;
	p->count += (unsigned)b->n;
	return 0;
}

static int link_each(struct smp_probes *p, const struct smp_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = b->cookies[i],
			    .retprobe = b->kind == SMP_P_RETURN);
		struct bpf_link *l;

		if (heap_grow((void **)&p->links, &p->caplinks, p->nlinks + 1, sizeof(*p->links)))
			return -ENOMEM;
		l = bpf_program__attach_uprobe_opts(p->prog[b->kind], p->pid, b->path, b->offs[i], &opts);
		if (!l)
			return -errno;
		p->links[p->nlinks++] = l;
		p->count++;
	}
	return 0;
}

/* Note @addr among @p's addresses (once). */
static int add_at(struct smp_probes *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nat; i++)
		if (p->at[i].addr == addr)
			return 0;
	if (heap_grow((void **)&p->at, &p->capat, p->nat + 1, sizeof(*p->at)))
		return -ENOMEM;
	memset(&p->at[p->nat], 0, sizeof(*p->at));
	p->at[p->nat++].addr = addr;
	return 0;
}

int smp_probes_add(struct smp_probes *p, int kind, const char *path, uint64_t off, uint64_t addr,
		   uint64_t cookie)
{
	struct smp_batch *b = NULL;

	for (size_t i = 0; i < p->nbatches && !b; i++)
		if (p->batches[i].kind == kind && !strcmp(p->batches[i].path, path))
			b = &p->batches[i];
	if (!b) {
		if (heap_grow((void **)&p->batches, &p->capbatches, p->nbatches + 1, sizeof(*p->batches)))
			return -ENOMEM;
		b = &p->batches[p->nbatches++];
		memset(b, 0, sizeof(*b));
		b->kind = kind;
		snprintf(b->path, sizeof(b->path), "%s", path);
	}
	if (heap_grow((void **)&b->offs, &b->cap, b->n + 1, sizeof(*b->offs)) ||
	    !(b->cookies = realloc(b->cookies, b->cap * sizeof(*b->cookies))))
		return -ENOMEM;
	b->offs[b->n] = off;
	b->cookies[b->n++] = cookie;
	p->total++;
	return addr ? add_at(p, addr) : 0;
}

int smp_probes_attach(struct smp_probes *p)
{
	int err = 0;

	for (size_t i = 0; i < p->nat; i++)
		p->at[i].known = p->pid && !att_mem_read(p->pid, p->at[i].addr, p->at[i].orig, SMP_INSN_PEEK);

	for (size_t i = 0; i < p->nbatches && !err; i++)
		err = p->multi ? link_multi(p, &p->batches[i]) : link_each(p, &p->batches[i]);
	if (err)
		smp_probes_detach(p);
	return err;
}

void smp_probes_detach(struct smp_probes *p)
{
	while (p->nlinks)
		bpf_link__destroy(p->links[--p->nlinks]);
	while (p->nfds)
		close(p->fds[--p->nfds]);
	p->count = 0;
}

void smp_probes_free(struct smp_probes *p)
{
	smp_probes_detach(p);
	for (size_t i = 0; i < p->nbatches; i++) {
		free(p->batches[i].offs);
		free(p->batches[i].cookies);
	}
	free(p->batches);
	free(p->links);
	free(p->fds);
	free(p->at);
	p->at = NULL;
	p->nat = p->capat = 0;
	p->batches = NULL;
	p->nbatches = p->capbatches = 0;
	p->links = NULL;
	p->fds = NULL;
	p->caplinks = p->capfds = 0;
	p->total = 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the closer removes at a deadline: the first group's fds and links
 * (first_fds, first_links of them), then the rest. */
struct batch {
	int *fds;
	size_t nfds, first_fds;
	struct bpf_link **links;
	size_t nlinks, first_links;
	struct smp_at *at;		/* the first group's probes */
	size_t nat;
	pid_t pid;
	int first_done;			/* the first group's closes have returned (atomic) */
};

static void close_part(struct batch *b, int first)
{
	size_t l0 = first ? 0 : b->first_links, l1 = first ? b->first_links : b->nlinks;
	size_t f0 = first ? 0 : b->first_fds, f1 = first ? b->first_fds : b->nfds;

	for (size_t i = l0; i < l1; i++)
		bpf_link__destroy(b->links[i]);
	for (size_t i = f0; i < f1; i++)
		close(b->fds[i]);
}

static void *close_first(void *arg)
{
	struct batch *b = arg;

	close_part(b, 1);
	__atomic_store_n(&b->first_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether every probe of @at[0..n) whose bytes were read is out of process
 * @pid: its bytes back (or unreadable: the process is gone). */
static int all_out(pid_t pid, const struct smp_at *at, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char now[SMP_INSN_PEEK];

		if (at[i].known && !att_mem_read(pid, at[i].addr, now, sizeof(now)) &&
		    memcmp(now, at[i].orig, sizeof(now)))
			return 0;
	}
	return 1;
}

/* In the order handed over: a burst's allocation probes before its free
 * probes, so that no sample is taken whose free goes unseen.  The kernel
 * takes a link's breakpoints out, then waits for a grace period (30-35 ms
 * here) before close returns: the first group is closed in a thread of its
 * own, and the rest as soon as its breakpoints read as out, or its closes
 * have returned (another tool's breakpoint at the same place is never out). */
static void remove_batch(struct batch *b)
{
	pthread_t th;

	if (b->nat && (b->first_fds < b->nfds || b->first_links < b->nlinks) &&
	    !pthread_create(&th, NULL, close_first, b)) {
		struct timespec poll = { 0, 100000 };

		while (!__atomic_load_n(&b->first_done, __ATOMIC_ACQUIRE) &&
		       !all_out(b->pid, b->at, b->nat))
			nanosleep(&poll, NULL);
		close_part(b, 0);
		pthread_join(th, NULL);
		return;
	}
	close_part(b, 1);
	close_part(b, 0);
}

static void *closer_main(void *arg)
{
	struct smp_closer *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct batch b;
		double now;

		while (!c->nfds && !c->nlinks && !c->quit)
			pthread_cond_wait(&c->cv, &c->mu);
		if (!c->nfds && !c->nlinks)
			break;
		while (!c->quit && (now = mono_s()) < c->deadline) {
			struct timespec ts;
			double d = c->deadline;

			/* The condition variable's clock is CLOCK_MONOTONIC. */
			ts.tv_sec = (time_t)d;
			ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
		}
		b = (struct batch){ c->fds, c->nfds, c->first_fds, c->links, c->nlinks, c->first_links,
				    c->at, c->nat, c->pid, 0 };
		c->fds = NULL;
		c->links = NULL;
		c->at = NULL;
		c->nfds = c->capfds = c->nlinks = c->caplinks = c->nat = c->capat = 0;
		c->on += mono_s() - c->since;
		pthread_mutex_unlock(&c->mu);
		remove_batch(&b);
		free(b.fds);
		free(b.links);
		free(b.at);
		pthread_mutex_lock(&c->mu);
		c->pending--;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int smp_closer_start(struct smp_closer *c)
{
	sigset_t all, old;
	pthread_condattr_t ca;
	int err;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&c->th, NULL, closer_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		return -err;
	}
	c->started = 1;
	return 0;
}

void smp_probes_detach_by(struct smp_probes *p, size_t n, struct smp_closer *c, double placed,
			  double deadline)
{
	int ok = 1;

	if (!c->started) {
		for (size_t k = 0; k < n; k++)
			smp_probes_detach(&p[k]);
		c->on += mono_s() - placed;
		return;
	}
	pthread_mutex_lock(&c->mu);
	/* One batch at a time: its start is the one placing time kept. */
	while (c->nfds || c->nlinks)
		pthread_cond_wait(&c->cv, &c->mu);
	for (size_t k = 0; k < n && ok; k++)
		ok = !heap_grow((void **)&c->fds, &c->capfds, c->nfds + p[k].nfds + 1, sizeof(*c->fds)) &&
		     !heap_grow((void **)&c->links, &c->caplinks, c->nlinks + p[k].nlinks + 1,
				sizeof(*c->links));
	if (ok && n && p[0].nat) {
		ok = !heap_grow((void **)&c->at, &c->capat, p[0].nat, sizeof(*c->at));
		if (ok)
			memcpy(c->at, p[0].at, p[0].nat * sizeof(*c->at));
		c->nat = ok ? p[0].nat : 0;
	}
	c->first_fds = n ? p[0].nfds : 0;
	c->first_links = n ? p[0].nlinks : 0;
	c->pid = n ? p[0].pid : 0;
	for (size_t k = 0; k < n && ok; k++) {
		if (p[k].nfds)
			memcpy(c->fds + c->nfds, p[k].fds, p[k].nfds * sizeof(*p[k].fds));
		c->nfds += p[k].nfds;
		if (p[k].nlinks)
			memcpy(c->links + c->nlinks, p[k].links, p[k].nlinks * sizeof(*p[k].links));
		c->nlinks += p[k].nlinks;
		p[k].nfds = p[k].nlinks = 0;
		p[k].count = 0;
	}
	if (ok && (c->nfds || c->nlinks)) {
		c->since = placed;
		c->deadline = deadline;
		c->pending++;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	for (size_t k = 0; k < n && !ok; k++)
		smp_probes_detach(&p[k]);
}

double smp_closer_on(struct smp_closer *c, unsigned *pending)
{
	double on;

	if (!c->started) {
		if (pending)
			*pending = 0;
		return c->on;
	}
	pthread_mutex_lock(&c->mu);
	on = c->on;
	if (pending)
		*pending = c->pending;
	pthread_mutex_unlock(&c->mu);
	return on;
}

void smp_closer_stop(struct smp_closer *c)
{
	if (!c->started)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->th, NULL);
	free(c->fds);
	free(c->links);
	free(c->at);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	c->started = 0;
}
