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
 * The window starts when the first probes are in place (the programs do
 * nothing until user space sets `active`), every allocation and free call
 * probed; window.c then keeps the cost within the budget (guard.c), moving
 * the allocation entries to bursts if need be.  With a settle time,
 * `sampling` is then cleared and only frees are followed for that long.
 * When a sampled block's free may have gone unseen, jemalloc's metadata
 * says at the end whether it is still allocated (liveness.c).
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

#include "core/sized.h"
#include "attach/procfs.h"
#include "attach/unwind.h"
#include "core/session.h"
#include "sampler/counter.h"
#include "sampler/events.h"
#include "sampler/liveness.h"
#include "sampler/run.h"
#include "sampler.skel.h"

#define HIT_US_DEFAULT	5.0	/* a hit's cost when it cannot be measured (this VM's) */
#define SMP_FINE	5	/* an automatic rate starts 2^5 times finer than the nominal */

enum { LOAD_SESSION, LOAD_MULTI, LOAD_PERF };

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
	sess_logf(log_to, level == LIBBPF_WARN ? JMA_LOG_INFO : JMA_LOG_DEBUG, "libbpf: %s", buf);
	return 0;
}

/* Why the kernel refused, and what to do instead. */
static int refused(struct run *u, int err, const char *what)
{
	const struct jma_copy *c = syms_jemalloc(u->s->syms);
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
	return sess_fail_hint(u->s, err == -EACCES ? JMA_HINT_LOG : 0, JMA_ERR_MISSING, err,
			     "%s: %s%s; the alternative: restart the process with "
			     "%s=prof:true,prof_active:false and use prof window", what, why, lock,
			     c ? c->conf_env : "MALLOC_CONF");
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
		err = smp_profile_add(u->prof, e->id, e->size, e->shift, e->exact, pcs, n);
		if (err == -E2BIG)
			u->dropped++;
		else if (err)
			u->err = err;
	} else if (type == SMP_EV_RET && size >= sizeof(struct smp_ev_ret)) {
		const struct smp_ev_ret *e = data;

		if (e->ptr)
			smp_profile_returned(u->prof, e->id, e->ptr);
	} else if (type == SMP_EV_FREE && size >= sizeof(struct smp_ev_free)) {
		const struct smp_ev_free *e = data;

		smp_profile_freed(u->prof, e->id);
	}
	return 0;
}

/* Open and load the programs for @how (a uprobe session, uprobe_multi, or
 * perf events). */
static int load_for(struct run *u, int how)
{
	struct bpf_program *progs[SMP_NKINDS];
	int err;

	u->skel = sampler_bpf__open();
	if (!u->skel)
		return -errno;
	progs[SMP_P_ENTRY] = u->skel->progs.on_alloc;
	progs[SMP_P_RETURN] = u->skel->progs.on_alloc_ret;
	progs[SMP_P_FREE] = u->skel->progs.on_free;
	progs[SMP_P_FREE_SLOW] = u->skel->progs.on_free_slow;
	progs[SMP_P_EXACT] = u->skel->progs.on_alloc_exact;
	smp_expo_fill((volatile uint64_t *)u->skel->rodata->expo, SMP_EXPO_N, u->period);
	u->skel->rodata->target_tgid = (__u32)u->s->pid;
	u->skel->rodata->tsd_off = u->tsd_off;
	u->skel->rodata->tp_off = u->tp_off;
	u->skel->rodata->session = how == LOAD_SESSION;
	for (size_t i = 0; i < u->nsites && i < SMP_SITES_MAX; i++)
		u->skel->rodata->site_addr[i] = u->sites[i].addr;
	for (int k = 0; k < SMP_NKINDS; k++)
		if (how != LOAD_PERF)
			bpf_program__set_expected_attach_type(progs[k], how == LOAD_SESSION &&
							      (k == SMP_P_ENTRY || k == SMP_P_EXACT)
							      ? SMP_TRACE_UPROBE_SESSION
							      : SMP_TRACE_UPROBE_MULTI);
	err = sampler_bpf__load(u->skel);
	if (err) {
		sampler_bpf__destroy(u->skel);
		u->skel = NULL;
		return err < 0 ? err : -EINVAL;
	}
	for (int g = 0; g < SMP_NGROUPS; g++) {
		u->grp[g].pid = u->s->pid;
		u->grp[g].multi = how != LOAD_PERF;
		u->grp[g].session = how == LOAD_SESSION;
		memcpy(u->grp[g].prog, progs, sizeof(progs));
	}
	return 0;
}

static void uncollect(struct run *u)
{
	for (int g = 0; g < SMP_NGROUPS; g++)
		smp_probes_free(&u->grp[g]);
	u->r->nprobes = 0;
	u->used = 0;
}

/* The first probes in place: every call's, or (--slow-paths) the slow paths
 * with bursts to come. */
static int place_first(struct run *u)
{
	int err;

	u->r->hit_us = smp_hit_cost(&u->grp[SMP_G_CALLS], HIT_US_DEFAULT);
	if ((err = smp_collect(u, UINT64_MAX, 0, 1)))
		return err;
	u->g.base = u->grp[SMP_G_BASE].total > 0;
	if (u->g.level == SMP_BURSTS)
		return u->g.base ? smp_group_set(u, SMP_G_BASE, 1) : 0;
	if ((err = smp_group_set(u, SMP_G_CALLS, 1)))
		return err;
	if (u->g.frees && (err = smp_group_set(u, SMP_G_FREES, 1)))
		smp_group_set(u, SMP_G_CALLS, 0);
	return err;
}

/* Load and place, falling back from uprobe sessions (6.13) to uprobe_multi
 * (6.6) to a perf event a probe: a kernel may load the programs for an
 * attach type and refuse only the link (Debian 12's 6.1 does so for
 * uprobe_multi). */
static int load_and_place(struct run *u)
{
	static const char *const how[] = { "uprobe sessions", "uprobe_multi", "perf events" };
	int err = -EINVAL;

	libbpf_set_print(libbpf_log);
	for (int h = LOAD_SESSION; h <= LOAD_PERF; h++) {
		if (u->skel) {
			uncollect(u);
			sampler_bpf__destroy(u->skel);
			u->skel = NULL;
		}
		err = load_for(u, h);
		if (!err) {
			/* The kernel counts run time only while someone holds this. */
			if (u->stats_fd < 0)
				u->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
			err = place_first(u);
		}
		if (err != -EINVAL && err != -EOPNOTSUPP && err != -E2BIG)
			break;
		if (h < LOAD_PERF)
			sess_logf(u->s, JMA_LOG_INFO, "no %s in this kernel (%s): trying %s", how[h],
				 strerror(-err), how[h + 1]);
	}
	if (!err)
		return 0;
	if (err == -ESRCH)
		return sess_fail(u->s, JMA_ERR_ATTACH, err, "process %d exited", (int)u->s->pid);
	return refused(u, err, u->skel ? "attaching a uprobe" : "loading the BPF program");
}

void jma_sampler_result_free(struct jma_sampler_result *r)
{
	if (r) {
		free(r->profile);
		r->profile = NULL;
	}
}

/* The sites, the slow paths and jemalloc's counter; -errno with the message set. */
static int find_sites(struct run *u)
{
	jma_session *s = u->s;
	char msg[512];
	int err = smp_sites_find(s->syms, &u->sites, &u->nsites, msg, sizeof(msg));

	if (err)
		return err == -ENOMEM ? sess_fail(s, JMA_ERR_TARGET, err, "out of memory")
				      : sess_fail(s, JMA_ERR_MISSING, err, "%s", msg);
	/* The sites' first is malloc (smp_sites_find). */
	if (!smp_counter_find(s->pid, u->sites[0].addr, u->sites[0].size, &u->tsd_off) &&
	    smp_counter_tp(&u->tp_off)) {
		sess_logf(s, JMA_LOG_INFO, "jemalloc's counter found, but the kernel has no BTF to "
			 "find a thread's thread pointer: bursts are scaled by time");
		u->tsd_off = 0;
	}
	err = smp_sites_slow(s->syms, s->pid, u->sites, u->nsites, s);
	if (err < 0)
		return sess_fail(s, JMA_ERR_TARGET, err, "out of memory");
	u->r->nslow = (unsigned)err;
	return 0;
}

static unsigned nominal(const struct jma_sampler_opts *o)
{
	return o->lg_sample ? o->lg_sample : o->lg_nominal ? o->lg_nominal : 19;
}

static unsigned max_shift(unsigned lg)
{
	return lg > 6 ? lg - 6 : 0;
}

unsigned jma_sampler_lg_start(const struct jma_sampler_opts *opts)
{
	struct jma_sampler_opts o;
	unsigned lg, fine;

	if (SIZED_IN(opts, &o))
		return 0;
	lg = nominal(&o);
	fine = max_shift(lg) < SMP_FINE ? max_shift(lg) : SMP_FINE;
	return o.lg_sample ? lg : lg - fine;
}

static void guard_init(struct run *u, unsigned lg)
{
	u->g.budget = u->o->max_overhead;
	u->g.level = u->o->slow_paths ? SMP_BURSTS : SMP_EVERY_CALL;
	u->g.frees = !u->o->alloc_only && !u->o->slow_paths;
	u->g.max_shift = max_shift(lg);
	u->g.auto_rate = !u->o->lg_sample;
	u->g.fine = u->g.fine_max = (int)(lg - jma_sampler_lg_start(u->o));
	if (u->o->seconds > 0)
		u->g.min_rate = SMP_BURSTS_MIN / u->o->seconds;
	/* --slow-paths: two bursts a second to start with. */
	u->g.rate = u->o->slow_paths ? 2 : 0;
	u->g.duty = u->g.rate * SMP_BURST_GUESS_S;
	u->g.shift = smp_guard_shift(&u->g);
	u->rnd = (uint64_t)smp_now() * 0x9e3779b97f4a7c15ull ^ (uint64_t)u->s->pid << 32 ^ 1;
}

/* The window, then the settle time: sampled, then frees only. */
static void run_window(struct run *u)
{
	const struct jma_sampler_opts *o = u->o;
	struct jma_sampler_result *r = u->r;

	smp_cost_start(u);
	/* Threads count jemalloc's counter from their first hit on (events.h). */
	__atomic_store_n(&u->skel->bss->cgen, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&u->skel->bss->shift, u->g.shift, __ATOMIC_RELEASE);
	r->shift = u->g.shift;
	__atomic_store_n(&u->skel->bss->sampling, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&u->skel->bss->active, 1, __ATOMIC_RELEASE);
	if (u->g.level == SMP_BURSTS)
		smp_start_bursts(u);
	r->end = smp_window(u, o->seconds, &r->seconds, 1);
	if (u->g.level == SMP_EVERY_CALL)
		r->every_call = r->seconds;
	smp_burst_scale(u);
	if (r->end == JMA_SAMPLER_TIME && o->settle > 0 && !o->alloc_only) {
		enum jma_sampler_end e;

		__atomic_store_n(&u->skel->bss->sampling, 0, __ATOMIC_RELEASE);
		e = smp_window(u, o->settle, &r->settled, 0);
		if (e != JMA_SAMPLER_TIME)
			r->end = e;
	}
	smp_cost_result(u, r->seconds + r->settled);
}

/* After the window: what was sampled, read back (and checked against
 * jemalloc's metadata where frees went unseen), into r->profile. */
static int finish(struct run *u, char **maps_text, const char *path)
{
	struct jma_sampler_result *r = u->r;
	double alloc, inuse;
	size_t len;
	int err;

	if (u->err)
		return sess_fail(u->s, JMA_ERR_TARGET, u->err, "keeping samples: %s", strerror(-u->err));
	r->samples = smp_stat(u, SMP_ST_SAMPLES);
	r->lost = smp_stat(u, SMP_ST_LOST) + u->dropped;
	r->untracked = smp_stat(u, SMP_ST_UNTRACKED);
	r->reused = smp_stat(u, SMP_ST_REUSED);
	if (u->frees_gap && r->end != JMA_SAMPLER_EXITED && r->end != JMA_SAMPLER_EXECED) {
		uint64_t checked, live;

		if (!smp_liveness_check(u->s, u->prof, &checked, &live, r->check_err,
					sizeof(r->check_err))) {
			r->checked = checked;
			r->still_live = live;
		}
	} else if (u->frees_gap) {
		snprintf(r->check_err, sizeof(r->check_err), "the process is gone");
	}
	smp_profile_totals(u->prof, &alloc, &inuse, &r->live);
	r->alloc_bytes = (uint64_t)alloc;
	r->inuse_bytes = (uint64_t)inuse;
	/* The maps as they are now, when the target still runs the program
	 * the samples come from. */
	if (r->end != JMA_SAMPLER_EXITED && r->end != JMA_SAMPLER_EXECED) {
		char *now = NULL;

		if (!att_proc_read(path, &now, &len)) {
			free(*maps_text);
			*maps_text = now;
		}
	}
	err = smp_profile_write(u->prof, *maps_text, &r->profile, &r->len);
	if (err)
		return sess_fail(u->s, JMA_ERR_TARGET, err, "writing the profile: out of memory");
	return 0;
}

static int sampler_run(jma_session *s, const struct jma_sampler_opts *o, struct jma_sampler_result *r)
{
	struct run u = { .s = s, .o = o, .r = r, .stats_fd = -1 };
	char path[64], *maps_text = NULL;
	unsigned lg;
	size_t len;
	int err;

	memset(r, 0, sizeof(*r));
	if (!s->syms || !syms_jemalloc(s->syms))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "prof sample: no process open");
	if (o->seconds <= 0 || o->lg_sample > 40 || o->lg_nominal > 40)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "prof sample: bad window or lg_sample");
	lg = nominal(o);
	u.period = 1ull << lg;
	r->lg_sample = lg;
	u.maps = syms_maps(s->syms, &u.nmaps);
	u.sched.pid = s->pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	if (att_proc_read(path, &maps_text, &len))
		return sess_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	if ((err = find_sites(&u)))
		goto out;
	u.maps_text = maps_text;
	log_to = s;
	guard_init(&u, lg);
	if (!(u.prof = smp_profile_new(u.period))) {
		err = sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
	if ((err = load_and_place(&u)))
		goto out;
	r->counted = u.stats_fd >= 0;
	if (!r->counted)
		u.g.budget = 0;	/* nothing to measure it with */
	u.rb = ring_buffer__new(bpf_map__fd(u.skel->maps.rb), on_event, &u, NULL);
	if (!u.rb) {
		err = sess_fail(s, JMA_ERR_TARGET, -errno, "ring buffer: %s", strerror(errno));
		goto out;
	}
	if (smp_closer_start(&u.closer))
		sess_logf(s, JMA_LOG_INFO, "no thread to remove the bursts' probes: removed in turn");
	run_window(&u);
	/* Breakpoints out first, then what they sent before. */
	__atomic_store_n(&u.skel->bss->active, 0, __ATOMIC_RELEASE);
	smp_closer_stop(&u.closer);
	for (int k = 0; k < SMP_NGROUPS; k++)
		smp_group_set(&u, k, 0);
	ring_buffer__consume(u.rb);
	err = finish(&u, &maps_text, path);
out:
	smp_closer_stop(&u.closer);
	for (int g = 0; g < SMP_NGROUPS; g++)
		smp_probes_free(&u.grp[g]);
	ring_buffer__free(u.rb);
	sampler_bpf__destroy(u.skel);
	if (u.stats_fd >= 0)
		close(u.stats_fd);
	smp_sites_free(u.sites, u.nsites);
	smp_profile_free(u.prof);
	smp_sched_free(&u.sched);
	free(maps_text);
	log_to = NULL;
	return err;
}

int jma_sampler_run(jma_session *s, const struct jma_sampler_opts *opts, struct jma_sampler_result *r)
{
	struct jma_sampler_opts o;
	struct jma_sampler_result full;
	int err;

	if (sized_of(r) < offsetof(struct jma_sampler_result, len) + sizeof(r->len))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "prof sample: the result's sz is not set");
	if ((err = SIZED_IN(opts, &o)))
		return sess_fail(s, JMA_ERR_USAGE, err, "prof sample: its options' sz is not that "
				"of a struct jma_sampler_opts this library knows");
	err = sampler_run(s, &o, &full);
	full.sz = sizeof(full);
	sized_out(r, &full, sizeof(full), 0);
	return err;
}
