/* sampler.c -- `prof sample`: load the BPF program, probe the target's
 * jemalloc per process, take the samples off the ring buffer, unwind them.
 *
 * Per process (probes.c): the kernel is given the target's pid and inserts
 * the breakpoints into that address space only (a probe on the file would
 * trap every process using the library), and removes them when our
 * descriptors close -- our exit, SIGKILL included.  New threads of
 * the target share its address space and are covered; a forked child gets a
 * copy of the breakpoints, which the kernel removes at their first hit there
 * (the child is not ours: not sampled); an exec replaces the address space,
 * probes and all, and ends the window.
 *
 * The window starts when every probe is in place (the programs do nothing
 * until user space sets `active`), so that the frees and returns of every
 * sample are followed; with a settle time, `sampling` is then cleared and
 * only frees are followed for that long.
 *
 * Cost: the kernel's run-time statistics count the hits and the time in our
 * programs; the trap around each (the bigger part on a VM) is measured at
 * start on a probe in our own process.  Their sum against the target's own
 * CPU time in the window is the overhead shown, and bounded.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jemattach/sampler.h>

#include "attach/procfs.h"
#include "attach/unwind.h"
#include "process/execcheck.h"
#include "core/clock.h"
#include "core/session.h"
#include "sampler/counter.h"
#include "sampler/events.h"
#include "sampler/probes.h"
#include "sampler/profile.h"
#include "sampler/sites.h"
#include "sampler.skel.h"

#define POLL_MS		100
#define CHECK_EVERY_NS	500000000ull	/* exit, exec and overhead checks */
#define CALIB_CALLS	100
#define CALIB_ROUNDS	4
#define MIN_COST_S	0.02		/* below this, an overhead share is noise */

struct run {
	jma_session *s;
	const struct jma_sampler_opts *o;
	struct jma_sampler_result *r;
	struct sampler_bpf *skel;
	struct smp_profile *prof;
	const struct att_map *maps;
	size_t nmaps;
	struct smp_site *sites;
	size_t nsites;
	struct smp_probes probes;
	int stats_fd;
	uint64_t base_cnt, base_ns;	/* the programs' counters before the window */
	uint64_t period;
	int64_t tsd_off;		/* counted mode: jemalloc's counter (counter.c), else 0 */
	uint32_t tp_off;
	int err;			/* from the event handler */
	uint64_t dropped;
	const char *maps_text;		/* the target's maps at the start, for snapshots */
};

static jma_session *log_to;

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (!log_to)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	jma_logf(log_to, level == LIBBPF_WARN ? JMA_LOG_INFO : JMA_LOG_DEBUG, "libbpf: %s", buf);
	return 0;
}

/* The target's user + system CPU seconds (/proc/PID/stat), -1 when gone. */
static double target_cpu(pid_t pid)
{
	char path[64], *buf = NULL, *p;
	unsigned long long ut, st;
	size_t len;
	double v = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (att_proc_read(path, &buf, &len))
		return -1;
	/* After the comm, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
		v = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	free(buf);
	return v;
}

/* Why the kernel refused, and what to do instead. */
static int refused(struct run *u, int err, const char *what)
{
	const struct jma_copy *c = jma_syms_jemalloc(u->s->syms);
	char lock[128] = "", *buf = NULL;
	const char *why;
	size_t len;

	if (!att_proc_read("/sys/kernel/security/lockdown", &buf, &len) && strstr(buf, "[none]") == NULL)
		snprintf(lock, sizeof(lock), " (the kernel is locked down: %.*s)",
			 (int)strcspn(buf, "\n"), buf);
	free(buf);
	if (err == -EACCES)
		why = "refused by the kernel (its verifier or a security module)";
	else if (err == -EPERM)
		why = "not permitted: needs root, or CAP_BPF and CAP_PERFMON (a container's seccomp "
		      "profile may forbid bpf() and perf_event_open())";
	else if (err == -ENOSYS)
		why = "the kernel has no bpf() system call";
	else if (err == -ENOENT || err == -EOPNOTSUPP || err == -EINVAL)
		why = "the kernel does not support uprobes with BPF programs";
	else
		why = strerror(-err);
	return jma_fail_hint(u->s, err == -EACCES ? JMA_HINT_LOG : 0, JMA_ERR_MISSING, err,
			     "%s: %s%s; the alternative: restart the process with "
			     "%s=prof:true,prof_active:false and use prof window", what, why, lock,
			     c ? c->conf_env : "MALLOC_CONF");
}

/* Where the kernel should put a probe at @addr of the target: its file as
 * the target maps it (map_files: the very inode, deleted or in a container)
 * and the offset in it. */
static int probe_place(struct run *u, uint64_t addr, char *path, size_t len, uint64_t *off)
{
	const struct att_map *m = att_maps_find(u->maps, u->nmaps, addr);
	int fd;

	if (!m || !m->path || m->perms[2] != 'x')
		return -ENOENT;
	snprintf(path, len, "/proc/%d/map_files/%llx-%llx", (int)u->s->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
	} else if (snprintf(path, len, "/proc/%d/root%s", (int)u->s->pid, m->path) >= (int)len) {
		/* Following map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE:
		 * with CAP_BPF and CAP_PERFMON alone, the file by its path in the
		 * target's root. */
		return -ENAMETOOLONG;
	}
	*off = addr - m->start + m->offset;
	return 0;
}

static int prog_stats(struct run *u, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_program *progs[] = { u->skel->progs.on_alloc, u->skel->progs.on_alloc_ret,
					u->skel->progs.on_free };

	*cnt = *ns = 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			return -errno;
		*cnt += info.run_cnt;
		*ns += info.run_time_ns;
	}
	return 0;
}

/* The function the calibration probes: in our own process only. */
__attribute__((noinline)) void smp_calibration_point(void *p);
__attribute__((noinline)) void smp_calibration_point(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Nanoseconds a call of smp_calibration_point: the least of a few rounds
 * (on a shared machine, the others include someone else's time). */
static double timed_calls(void)
{
	double best = 1e12;

	for (int r = 0; r < CALIB_ROUNDS; r++) {
		uint64_t t = (uint64_t)jma_clock_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < CALIB_CALLS; i++)
			smp_calibration_point(&i);
		t = (uint64_t)jma_clock_ns(CLOCK_MONOTONIC) - t;
		if ((double)t / CALIB_CALLS < best)
			best = (double)t / CALIB_CALLS;
	}
	return best;
}

/* What one probe hit costs a process here, apart from our program's own run
 * time (counted by the kernel for every hit): a probe on a function of our
 * own, called with and without it.  Microseconds; 10 when it cannot be
 * measured (the figure measured on this machine kind). */
static double calibrate(struct run *u)
{
	uint64_t addr = (uint64_t)(uintptr_t)&smp_calibration_point;
	uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;
	struct smp_probes self = u->probes;
	struct att_map *maps = NULL;
	const struct att_map *m;
	double per, prog, base;
	char path[4200];
	size_t n = 0;
	int err;

	if (att_proc_maps(getpid(), &maps, &n))
		return 10;
	m = att_maps_find(maps, n, addr);
	/* Our own file, as we map it: its path is ours to trust. */
	err = !m || !m->path || snprintf(path, sizeof(path), "%s", m->path) >= (int)sizeof(path);
	if (!err) {
		self.pid = 0;
		addr = addr - m->start + m->offset;
	}
	att_maps_free(maps, n);
	if (err)
		return 10;
	base = timed_calls();
	if (smp_probes_add(&self, SMP_P_FREE, path, addr, SMP_COOKIE(0, 0, 1, 0, 0, 0)) ||
	    smp_probes_commit(&self)) {
		smp_probes_remove(&self);
		return 10;
	}
	/* The first hit of a process maps the kernel's out-of-line area. */
	smp_calibration_point(&base);
	prog_stats(u, &c0, &n0);
	per = timed_calls();
	prog_stats(u, &c1, &n1);
	smp_probes_remove(&self);
	per -= base;
	prog = c1 > c0 ? (double)(n1 - n0) / (double)(c1 - c0) : 0;
	return per > prog ? (per - prog) / 1000 : 10;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct run *u = ctx;
	uint32_t type;

	if (size < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	if (type == SMP_EV_SAMPLE && size >= offsetof(struct smp_ev_sample, stack)) {
		const struct smp_ev_sample *e = data;
		struct att_stack stk = { e->regs[ARCH_BPF_REG_SP], e->stack,
					 e->stack_len <= SMP_STACK_MAX ? e->stack_len : 0 };
		uint64_t pcs[SMP_MAX_FRAMES], regs[SMP_NREGS];
		int complete = 0, n, err;

		for (int i = 0; i < SMP_NREGS; i++)
			regs[i] = e->regs[i];
		n = att_unwind_regs(u->s->pid, regs, SMP_NREGS, &stk, u->maps, u->nmaps, pcs,
				    SMP_MAX_FRAMES, &complete);
		if (n <= 0) {
			pcs[0] = e->regs[ARCH_BPF_REG_PC];
			n = 1;
		}
		if (n < 4)
			u->r->unwound_short++;
		err = smp_profile_add(u->prof, e->id, e->size, pcs, n);
		if (err == -E2BIG)
			u->dropped++;
		else if (err)
			u->err = err;
	} else if (type == SMP_EV_RET && size >= sizeof(struct smp_ev_ret)) {
		const struct smp_ev_ret *e = data;

		if (e->ptr)
			smp_profile_returned(u->prof, e->id);
	} else if (type == SMP_EV_FREE && size >= sizeof(struct smp_ev_free)) {
		const struct smp_ev_free *e = data;

		smp_profile_freed(u->prof, e->id);
	}
	return 0;
}

/* Open and load the programs, for uprobe_multi when the kernel has it. */
static int load_for(struct run *u, int multi)
{
	struct bpf_program *progs[SMP_NKINDS];
	int err;

	u->skel = sampler_bpf__open();
	if (!u->skel)
		return -errno;
	progs[SMP_P_ENTRY] = u->skel->progs.on_alloc;
	progs[SMP_P_RETURN] = u->skel->progs.on_alloc_ret;
	progs[SMP_P_FREE] = u->skel->progs.on_free;
	smp_expo_fill((volatile uint64_t *)u->skel->rodata->expo, SMP_EXPO_N, u->period);
	u->skel->rodata->target_tgid = (__u32)u->s->pid;
	u->skel->rodata->tsd_off = u->tsd_off;
	u->skel->rodata->tp_off = u->tp_off;
	for (int k = 0; k < SMP_NKINDS; k++) {
		u->probes.prog[k] = progs[k];
		if (multi)
			bpf_program__set_expected_attach_type(progs[k], SMP_TRACE_UPROBE_MULTI);
	}
	err = sampler_bpf__load(u->skel);
	if (err) {
		sampler_bpf__destroy(u->skel);
		u->skel = NULL;
		return err < 0 ? err : -EINVAL;
	}
	u->probes.multi = multi;
	return 0;
}

static int load(struct run *u)
{
	int err;

	libbpf_set_print(libbpf_log);
	u->probes.pid = u->s->pid;
	err = load_for(u, 1);
	if (err == -EINVAL || err == -EOPNOTSUPP) {
		jma_logf(u->s, JMA_LOG_INFO, "no uprobe_multi in this kernel: one perf event a probe");
		err = load_for(u, 0);
	}
	if (err)
		return refused(u, err, "loading the BPF program");
	/* The kernel counts run time only while someone holds this. */
	u->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	return 0;
}

/* Each site's probes placed (and committed, for uprobe_multi). */
static int place_sites(struct run *u)
{
	char path[4200];
	uint64_t off;
	int err = 0;

	for (size_t i = 0; i < u->nsites && !err; i++) {
		const struct smp_site *st = &u->sites[i];
		int track = !u->o->alloc_only;
		uint64_t cookie = st->cookie | SMP_COOKIE(0, 0, 0, 0, track, i);

		if ((st->frees && u->o->alloc_only) || st->skip)
			continue;
		if (probe_place(u, st->addr, path, sizeof(path), &off)) {
			jma_logf(u->s, JMA_LOG_INFO, "%s at 0x%llx: not in a mapped file; not probed",
				 st->name, (unsigned long long)st->addr);
			continue;
		}
		err = smp_probes_add(&u->probes, st->frees ? SMP_P_FREE : SMP_P_ENTRY, path, off, cookie);
		if (!err && !st->frees && track)
			err = smp_probes_add(&u->probes, SMP_P_RETURN, path, off, cookie);
	}
	return err ? err : smp_probes_commit(&u->probes);
}

static int attach_sites(struct run *u)
{
	int err;

	u->r->hit_us = calibrate(u);
	err = place_sites(u);
	/* A kernel before 6.6 (Debian 12's 6.1) may load the programs for uprobe_multi (it
	 * does not check that attach type) and refuse only the link: nothing is placed then,
	 * and the programs are loaded again for one perf event a probe. */
	if ((err == -EINVAL || err == -EOPNOTSUPP) && u->probes.multi && !u->probes.count) {
		jma_logf(u->s, JMA_LOG_INFO, "no uprobe_multi links in this kernel: one perf event a probe");
		smp_probes_remove(&u->probes);
		sampler_bpf__destroy(u->skel);
		u->skel = NULL;
		err = load_for(u, 0);
		if (err) {
			u->r->nprobes = 0;
			return refused(u, err, "loading the BPF program");
		}
		u->r->hit_us = calibrate(u);
		err = place_sites(u);
	}
	u->r->nprobes = u->probes.count;
	if (err) {
		smp_probes_remove(&u->probes);
		if (err == -ESRCH)
			return jma_fail(u->s, JMA_ERR_ATTACH, err, "process %d exited", (int)u->s->pid);
		return refused(u, err, "attaching a uprobe");
	}
	return 0;
}

/* The share of the target's CPU time since @cpu0 spent in probe hits, and that time. */
static double overhead(struct run *u, double cpu0, double *cost, double *cpu)
{
	uint64_t cnt = 0, ns = 0;

	prog_stats(u, &cnt, &ns);
	cnt -= u->base_cnt;
	ns -= u->base_ns;
	u->r->counted = u->stats_fd >= 0;
	u->r->hits = u->r->counted ? cnt : 0;
	u->r->bpf_ns = u->r->counted ? ns : 0;
	*cost = (double)cnt * u->r->hit_us / 1e6 + (double)u->r->bpf_ns / 1e9;
	*cpu = target_cpu(u->s->pid);
	if (*cpu < 0)
		return 0;
	*cpu -= cpu0;
	/* The CPU time is counted in clock ticks: a light target's can be
	 * below the estimate, which is part of it. */
	return *cpu > 0 ? (*cost < *cpu ? *cost / *cpu : 1) : 0;
}

/* Hand the profile so far to o->snapshot: non-zero when it ends the window. */
static int snapshot(struct run *u)
{
	char *buf = NULL;
	size_t len = 0;
	int stop;

	if (smp_profile_write(u->prof, u->maps_text, &buf, &len)) {
		u->err = -ENOMEM;
		return 1;
	}
	stop = u->o->snapshot(u->o->snapshot_arg, buf, len);
	free(buf);
	return stop;
}

/* Consume events for @secs seconds (*@elapsed: how long it ran), or until
 * the target exits or execs, the cost passes its budget or *stop is set. */
static enum jma_sampler_end window(struct run *u, struct ring_buffer *rb, double cpu0, double secs,
				   double *elapsed)
{
	uint64_t t0 = (uint64_t)jma_clock_ns(CLOCK_MONOTONIC), last = t0, snap = t0, len = (uint64_t)(secs * 1e9);
	uint64_t every = (uint64_t)(u->o->snapshot_every * 1e9);
	double cost, cpu;

	for (;;) {
		uint64_t t;

		ring_buffer__poll(rb, POLL_MS);
		if (u->err)
			return JMA_SAMPLER_STOPPED;
		if (u->o->stop && *u->o->stop)
			return JMA_SAMPLER_STOPPED;
		t = (uint64_t)jma_clock_ns(CLOCK_MONOTONIC);
		*elapsed = (double)(t - t0) / 1e9;
		if (t - t0 >= len)
			return JMA_SAMPLER_TIME;
		if (u->o->snapshot && every && t - snap >= every) {
			snap = t;
			if (snapshot(u))
				return JMA_SAMPLER_STOPPED;
		}
		if (t - last < CHECK_EVERY_NS)
			continue;
		last = t;
		if (jma_exec_ident_same(u->s->pid, &u->s->ident))
			return JMA_SAMPLER_EXITED;
		if (jma_exec_same(u->s->pid, u->s->exec_mark, &u->s->exec_where) == -ENOEXEC)
			return JMA_SAMPLER_EXECED;
		if (u->o->max_overhead > 0 && overhead(u, cpu0, &cost, &cpu) > u->o->max_overhead &&
		    cost > MIN_COST_S)
			return JMA_SAMPLER_OVERHEAD;
	}
}

void jma_sampler_result_free(struct jma_sampler_result *r)
{
	if (r) {
		free(r->profile);
		r->profile = NULL;
	}
}

int jma_sampler_run(jma_session *s, const struct jma_sampler_opts *o, struct jma_sampler_result *r)
{
	struct run u = { .s = s, .o = o, .r = r, .stats_fd = -1 };
	struct ring_buffer *rb = NULL;
	char msg[512], path[64], *maps_text = NULL;
	uint64_t stats[SMP_NSTATS] = { 0 };
	double cpu0, cost, cpu, alloc, inuse;
	size_t len;
	int err;

	memset(r, 0, sizeof(*r));
	if (!s->syms || !jma_syms_jemalloc(s->syms))
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "prof sample: no process open");
	if (o->seconds <= 0 || o->lg_sample > 40)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "prof sample: bad window or lg_sample");
	u.period = 1ull << (o->lg_sample ? o->lg_sample : 19);
	u.maps = jma_syms_maps(s->syms, &u.nmaps);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	if (att_proc_read(path, &maps_text, &len))
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	err = smp_sites_find(s->syms, &u.sites, &u.nsites, msg, sizeof(msg));
	/* The sites' first is malloc (smp_sites_find). */
	if (!err && o->slow_paths &&
	    !smp_counter_find(s->pid, u.sites[0].addr, u.sites[0].size, &u.tsd_off)) {
		if (smp_counter_tp(&u.tp_off)) {
			jma_logf(s, JMA_LOG_INFO, "jemalloc's counter found, but the kernel has no BTF "
				 "to find a thread's thread pointer: entries probed");
			u.tsd_off = 0;
		}
		r->by_counter = u.tsd_off != 0;
	}
	if (!err && o->slow_paths) {
		err = smp_sites_slow(s->syms, s->pid, u.sites, u.nsites, s);
		r->nslow = err > 0 ? (unsigned)err : 0;
		err = err < 0 ? err : 0;
	}
	if (err) {
		free(maps_text);
		return err == -ENOMEM ? jma_fail(s, JMA_ERR_TARGET, err, "out of memory")
				      : jma_fail(s, JMA_ERR_MISSING, err, "%s", msg);
	}
	u.maps_text = maps_text;
	log_to = s;
	if (!(u.prof = smp_profile_new(u.period))) {
		err = jma_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
	if ((err = load(&u)) || (err = attach_sites(&u)))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(u.skel->maps.rb), on_event, &u, NULL);
	if (!rb) {
		err = jma_fail(s, JMA_ERR_TARGET, -errno, "ring buffer: %s", strerror(errno));
		goto out;
	}
	prog_stats(&u, &u.base_cnt, &u.base_ns);
	cpu0 = target_cpu(s->pid);
	__atomic_store_n(&u.skel->bss->sampling, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&u.skel->bss->active, 1, __ATOMIC_RELEASE);
	r->end = window(&u, rb, cpu0, o->seconds, &r->seconds);
	if (r->end == JMA_SAMPLER_TIME && o->settle > 0 && !o->alloc_only) {
		enum jma_sampler_end e;

		__atomic_store_n(&u.skel->bss->sampling, 0, __ATOMIC_RELEASE);
		e = window(&u, rb, cpu0, o->settle, &r->settled);
		if (e != JMA_SAMPLER_TIME)
			r->end = e;
	}
	overhead(&u, cpu0, &cost, &cpu);
	r->target_cpu = cpu > 0 ? cpu : 0;
	r->overhead = r->target_cpu > 0 ? (cost < r->target_cpu ? cost / r->target_cpu : 1) : 0;
	/* Breakpoints out first, then what they sent before. */
	__atomic_store_n(&u.skel->bss->active, 0, __ATOMIC_RELEASE);
	smp_probes_remove(&u.probes);
	ring_buffer__consume(rb);
	if (u.err) {
		err = jma_fail(s, JMA_ERR_TARGET, u.err, "keeping samples: %s", strerror(-u.err));
		goto out;
	}
	{
		int ncpu = libbpf_num_possible_cpus();
		__u64 *v = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*v));

		for (__u32 k = 0; v && k < SMP_NSTATS; k++)
			if (!bpf_map_lookup_elem(bpf_map__fd(u.skel->maps.stats), &k, v))
				for (int i = 0; i < ncpu; i++)
					stats[k] += v[i];
		free(v);
	}
	r->samples = stats[SMP_ST_SAMPLES];
	r->lost = stats[SMP_ST_LOST] + u.dropped;
	r->untracked = stats[SMP_ST_UNTRACKED];
	smp_profile_totals(u.prof, &alloc, &inuse, &r->live);
	r->alloc_bytes = (uint64_t)alloc;
	r->inuse_bytes = (uint64_t)inuse;
	/* The maps as they are now, when the target still runs the program
	 * the samples come from. */
	if (r->end != JMA_SAMPLER_EXITED && r->end != JMA_SAMPLER_EXECED) {
		char *now = NULL;

		if (!att_proc_read(path, &now, &len)) {
			free(maps_text);
			maps_text = now;
		}
	}
	err = smp_profile_write(u.prof, maps_text, &r->profile, &r->len);
	if (err)
		err = jma_fail(s, JMA_ERR_TARGET, err, "writing the profile: out of memory");
out:
	smp_probes_remove(&u.probes);
	ring_buffer__free(rb);
	sampler_bpf__destroy(u.skel);
	if (u.stats_fd >= 0)
		close(u.stats_fd);
	smp_sites_free(u.sites, u.nsites);
	smp_profile_free(u.prof);
	free(maps_text);
	log_to = NULL;
	return err;
}
