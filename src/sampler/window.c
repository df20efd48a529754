/* window.c -- a sampler window: the events consumed, the allocation entries
 * placed in bursts once every call costs too much, the guard's checks acted
 * on, the profile so far handed out (prof track).
 *
 * Every check (0.1 s after the start, then every 0.5 s) measures the period
 * as the target felt it: the hits of each probe group (the kernel's count of
 * our programs' runs) times what a hit costs, plus the programs' own run
 * time, never more than the CPU time its threads used (schedstat); that
 * CPU time and the runqueue time of its busiest thread; then guard.c
 * decides.  Bursts start at random (exponential gaps), so that what the
 * bursts see is not in step with anything periodic in the target.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "attach/mem.h"
#include "core/clock.h"
#include "core/session.h"
#include "process/execcheck.h"
#include "sampler/events.h"
#include "sampler/liveness.h"
#include "sampler/run.h"
#include "sampler.skel.h"

#define POLL_S		0.1
#define CHECK_FIRST_S	0.1	/* the first check: a busy target pays every call meanwhile */
#define CHECK_EVERY_S	0.5	/* the guard, exit and exec */
#define BURST_KEEP	0.99	/* bursts probe the entries with 99% of the calls */
#define EXACT_SHARE	0.001	/* an allocation entry with at most this share of them
				 * is probed all the time (sites.c smp_sites_cold) */
#define PROGRESS_S	0.05	/* how often the target's progress is read */
#define PROGRESS_THREADS 1024	/* threads whose counters are read, at most */

double smp_now(void)
{
	return (double)jma_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

uint64_t smp_stat(struct run *u, unsigned which)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*v));
	uint64_t sum = 0;
	__u32 k = which;

	if (v && !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.stats), &k, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

int smp_group_set(struct run *u, int k, int on)
{
	struct smp_probes *p = &u->grp[k];
	int err;

	if (!on) {
		smp_probes_detach(p);
		return 0;
	}
	if (p->count || !p->total)
		return 0;
	if ((err = smp_probes_attach(p)))
		return err;
	if (!(u->used & 1u << k))
		u->r->nprobes += p->total;
	u->used |= 1u << k;
	return 0;
}

/* The kernel's run counts and times of each group's programs. */
static void prog_stats(struct run *u, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_program *progs[SMP_NGROUPS][2] = {
		{ u->skel->progs.on_alloc, u->skel->progs.on_alloc_ret },
		{ u->skel->progs.on_free, NULL },
		{ u->skel->progs.on_free_slow, u->skel->progs.on_alloc_exact },
	};

	for (int k = 0; k < SMP_NGROUPS; k++) {
		cnt[k] = ns[k] = 0;
		for (int i = 0; i < 2 && progs[k][i]; i++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[k][i]), &info, &len))
				continue;
			cnt[k] += info.run_cnt;
			ns[k] += info.run_time_ns;
		}
	}
}

/* A uniform (0, 1] from xorshift64*. */
static double uniform(struct run *u)
{
	u->rnd ^= u->rnd >> 12;
	u->rnd ^= u->rnd << 25;
	u->rnd ^= u->rnd >> 27;
	return ((double)((u->rnd * 2685821657736338717ull) >> 11) + 1) / 9007199254740992.0;
}

/* The next burst's start: at a random moment of the next 1/g.rate seconds.
 * Random, so that nothing the process does in step with anything aliases
 * with them; one in each such slot, so that a window has as many as its
 * rate says: a Poisson process of 0.2-0.5 a second gave a 10 s window of
 * Redis one burst in 2 runs of 9, 180 samples, and its top site was missed
 * (issue 43). */
static void next_burst(struct run *u, double now)
{
	double len = 1 / (u->g.rate > 0 ? u->g.rate : SMP_RATE_MIN);
	double from = u->slot_end > now ? u->slot_end : now;

	u->next_burst = from + uniform(u) * len;
	u->slot_end = from + len;
}

static void set_shift(struct run *u)
{
	u->g.shift = smp_guard_shift(&u->g);
	__atomic_store_n(&u->skel->bss->shift, u->g.shift, __ATOMIC_RELEASE);
	__atomic_fetch_add(&u->skel->bss->sgen, 1, __ATOMIC_RELEASE);
	if (u->g.shift > u->r->shift)
		u->r->shift = u->g.shift;
}

/* From now on the allocation entries go in bursts: jemalloc's slow paths
 * probed throughout (its counter; large frees); what was sampled before
 * stands for itself. */
/* The bytes every thread allocated since the window started, by jemalloc's
 * counter: the first and last value each thread's hits read. */
static double counted_total(struct run *u)
{
	int fd = bpf_map__fd(u->skel->maps.threads);
	__u32 gen = __atomic_load_n(&u->skel->bss->cgen, __ATOMIC_ACQUIRE), key, next, *prev = NULL;
	struct smp_thread st;
	double total = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &st) && st.cgen == gen && st.last > st.first)
			total += (double)(st.last - st.first);
	}
	return total;
}

/* What the target has allocated so far, by jemalloc's counter read in its
 * memory (each thread's at the thread pointer its hits gave, + tsd_off):
 * how far it got, whatever probe is in place.  -1 unknown. */
static double progress(struct run *u)
{
	static struct att_piece pc[PROGRESS_THREADS];
	static uint64_t val[PROGRESS_THREADS];
	int fd = bpf_map__fd(u->skel->maps.threads);
	__u32 key, next, *prev = NULL;
	struct smp_thread st;
	double sum = 0;
	size_t n = 0;

	if (!u->tsd_off)
		return -1;
	while (n < PROGRESS_THREADS && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &st) && st.tp) {
			pc[n] = (struct att_piece){ .addr = st.tp + (uint64_t)u->tsd_off, .buf = &val[n],
						    .len = sizeof(val[n]) };
			n++;
		}
	}
	if (!n || att_mem_read_pieces(u->s->pid, pc, n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (pc[i].ok)
			sum += (double)val[i];
	return sum;
}

/* Read the progress now and then; the interval since the last reading is
 * the bursts' (affected) if one was in place or being placed or removed at
 * either end, else quiet: the reference it is compared with. */
static void progress_tick(struct run *u)
{
	double now = smp_now(), p;
	unsigned pending;
	int busy;

	if (now - u->prog_t < PROGRESS_S)
		return;
	smp_closer_on(&u->closer, &pending);
	busy = u->burst_busy || u->grp[SMP_G_CALLS].count || pending;
	p = progress(u);
	if (p >= 0 && u->prog_t > 0 && u->prog_p >= 0 && p >= u->prog_p) {
		if (busy || u->prog_aff) {
			u->aff_t += now - u->prog_t;
			u->aff_b += p - u->prog_p;
		} else {
			u->quiet_t += now - u->prog_t;
			u->quiet_b += p - u->prog_p;
		}
	}
	u->prog_t = now;
	u->prog_p = p;
	u->prog_aff = busy;
	u->burst_busy = 0;
}

/* The share of its progress the target lost to bursts this period: what it
 * allocated while they were about, against its quiet rate; -1 unknown. */
static double period_lost(struct run *u)
{
	double lost = -1, expected;

	if (u->quiet_t >= 0.1 && u->aff_t > 0 && u->quiet_b > 0) {
		expected = u->quiet_b / u->quiet_t * u->aff_t;
		lost = expected > u->aff_b ? (expected - u->aff_b) / (expected + u->quiet_b) : 0;
		u->lost_sum += lost * (u->aff_t + u->quiet_t);
		u->lost_t += u->aff_t + u->quiet_t;
	}
	u->aff_t = u->aff_b = u->quiet_t = u->quiet_b = 0;
	return lost;
}

/* The bursts' groups anew: the sites of @mask; those of @exact into the slow
 * paths' group (not placed yet, or out). */
static void burst_collect(struct run *u, uint64_t mask, uint64_t exact)
{
	smp_probes_free(&u->grp[SMP_G_CALLS]);
	smp_probes_free(&u->grp[SMP_G_FREES]);
	if (smp_collect(u, mask, exact, 0))
		u->err = -ENOMEM;
}

/* The bursts' probes: the sites every call showed to be hit (sites.c), but
 * the allocation entries it hardly hit, probed all the time instead. */
static void burst_sites(struct run *u)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = calloc((size_t)(ncpu > 0 ? ncpu : 1), sizeof(*v));
	uint64_t hits[SMP_SITES_MAX] = { 0 };
	int fd = bpf_map__fd(u->skel->maps.site_hits);

	for (__u32 k = 0; v && k < SMP_SITES_MAX; k++)
		if (!bpf_map_lookup_elem(fd, &k, v))
			for (int i = 0; i < ncpu; i++)
				hits[k] += v[i];
	free(v);
	u->exact_mask = smp_sites_cold(u->sites, u->nsites, hits, EXACT_SHARE);
	u->burst_mask = smp_sites_hot(u->sites, u->nsites, hits, BURST_KEEP) & ~u->exact_mask;
	for (size_t i = 0; i < u->nsites && i < SMP_SITES_MAX; i++)
		if ((u->burst_mask | u->exact_mask) >> i & 1)
			sess_logf(u->s, JMA_LOG_DEBUG, "%s probe %s (%llu hits with every call)",
				 u->exact_mask >> i & 1 ? "all the time," : "bursts", u->sites[i].name,
				 (unsigned long long)hits[i]);
	burst_collect(u, u->burst_mask, u->exact_mask);
	/* As placed first (sampler.c): the slow paths, and now these. */
	u->g.base = u->grp[SMP_G_BASE].total > 0;
	sess_logf(u->s, JMA_LOG_INFO, "bursts probe %u allocation and free entries (%u with every call)",
		 u->grp[SMP_G_CALLS].total + u->grp[SMP_G_FREES].total, u->r->nprobes);
}

void smp_start_bursts(struct run *u)
{
	double now = smp_now();
	int err;

	smp_group_set(u, SMP_G_CALLS, 0);
	smp_group_set(u, SMP_G_FREES, 0);
	burst_sites(u);
	/* Every handler has finished when the link is gone: ids from here on are bursts'. */
	u->burst_from = __atomic_load_n(&u->skel->bss->next_id, __ATOMIC_ACQUIRE);
	u->seen0 = smp_stat(u, SMP_ST_SEEN);
	u->req0 = smp_stat(u, SMP_ST_PAIR_REQ);
	u->usz0 = smp_stat(u, SMP_ST_PAIR_USZ);
	u->total0 = counted_total(u);
	u->samples_bursts = smp_stat(u, SMP_ST_SAMPLES);
	u->r->every_call = now - u->t_start;
	u->t_bursts = now;
	if (!u->o->alloc_only)
		u->frees_gap = 1;
	if (u->g.base && (err = smp_group_set(u, SMP_G_BASE, 1))) {
		sess_logf(u->s, JMA_LOG_INFO, "jemalloc's slow paths could not be probed: %s",
			 strerror(-err));
		u->g.base = 0;
	}
	set_shift(u);
	next_burst(u, now);
}

/* One burst: the allocation entries (and the frees) placed, their removal
 * handed to the closer for burst_len later (and the grace period after it,
 * which we do not wait for).  While the closer still has the last one, the
 * next waits. */
static int burst(struct run *u, double end)
{
	double placed = smp_now(), until;
	unsigned pending;
	int err;

	smp_closer_on(&u->closer, &pending);
	if (pending) {
		/* The last burst is still being removed: this slot's, a little later. */
		u->next_burst = placed + SMP_BURST_S;
		return 0;
	}
	progress_tick(u);
	u->burst_busy = 1;
	__atomic_fetch_add(&u->skel->bss->bgen, 1, __ATOMIC_RELEASE);
	/* The frees too: most blocks are freed within a few milliseconds of
	 * their allocation, and a free seen here is one the end's check of
	 * jemalloc's metadata cannot mistake (liveness.c).  Placing and removing
	 * take tens of milliseconds on a loaded machine: the frees are placed
	 * first and removed last, so that no sample's free goes unseen then
	 * (the other way round, argv objects Redis frees a microsecond later
	 * read as 8% of its growth). */
	if ((!u->o->alloc_only && (err = smp_group_set(u, SMP_G_FREES, 1))) ||
	    (err = smp_group_set(u, SMP_G_CALLS, 1))) {
		smp_group_set(u, SMP_G_FREES, 0);
		return err;
	}
	until = smp_now() + SMP_BURST_S;
	if (until > end)
		until = end;
	/* Without the closer's thread, this one keeps the time. */
	for (double t = smp_now(); !u->closer.started && t < until; t = smp_now())
		ring_buffer__poll(u->rb, (int)((until - t) * 1000) + 1);
	smp_probes_detach_by(&u->grp[SMP_G_CALLS], 2, &u->closer, placed, until);
	u->r->bursts++;
	next_burst(u, smp_now());
	return 0;
}

/* Act on what the guard decided. */
static void apply(struct run *u, int ch, int sampling)
{
	if (ch & SMP_G_FREES_OFF) {
		smp_group_set(u, SMP_G_FREES, 0);
		u->r->frees_dropped = 1;
		u->frees_gap = 1;
		if (!sampling) {
			/* --settle: the entries were in for realloc's old pointers only. */
			smp_group_set(u, SMP_G_CALLS, 0);
			if (u->g.base)
				smp_group_set(u, SMP_G_BASE, 1);
		}
	}
	if (ch & SMP_G_BURSTS)
		smp_start_bursts(u);
	else if (ch & SMP_G_RATE)
		set_shift(u);
	if (ch & SMP_G_BASE_OFF) {
		smp_group_set(u, SMP_G_BASE, 0);
		u->r->base_dropped = 1;
		/* The entries that were probed all the time go in bursts now. */
		if (u->exact_mask)
			burst_collect(u, u->burst_mask | u->exact_mask, 0);
	}
}

/* The CPU seconds each group's hits cost since the last measure, into @c. */
static void measure(struct run *u, double *c)
{
	uint64_t cnt[SMP_NGROUPS], ns[SMP_NGROUPS];

	prog_stats(u, cnt, ns);
	for (int k = 0; k < SMP_NGROUPS; k++) {
		c[k] = (double)(cnt[k] - u->cnt[k]) * u->r->hit_us / 1e6 + (double)(ns[k] - u->ns[k]) / 1e9;
		u->cnt[k] = cnt[k];
		u->ns[k] = ns[k];
	}
}

/* A guard period ends: measure it as the target felt it, let the guard
 * decide, act.  Non-zero: over the budget with nothing left to give up. */
static int check(struct run *u, int sampling, int early)
{
	double now = smp_now(), wall = now - u->pt0, c[SMP_NGROUPS], total = 0;
	uint64_t samples = smp_stat(u, SMP_ST_SAMPLES);
	struct smp_cpu cpu;
	struct smp_period p;
	int ch = 0;

	measure(u, c);
	if (smp_sched_read(&u->sched, wall, &cpu))
		memset(&cpu, 0, sizeof(cpu));
	for (int k = 0; k < SMP_NGROUPS; k++)
		total += c[k];
	/* What the hits cost was spent by the target's threads: never more. */
	if (cpu.run > 0 && total > cpu.run)
		for (int k = 0; k < SMP_NGROUPS; k++)
			c[k] *= cpu.run / total;
	for (int k = 0; k < SMP_NGROUPS; k++)
		u->cost += c[k];
	u->run0 += cpu.run;
	/* In bursts the free entries go in and out with the allocations'. */
	p = (struct smp_period){ .wall = wall, .calls = c[SMP_G_CALLS], .frees = c[SMP_G_FREES],
				 .base = c[SMP_G_BASE], .run = cpu.run, .wait = cpu.wait,
				 .busiest = cpu.busiest, .lost = period_lost(u) };
	if (u->t_bursts > 0 && now > u->t_bursts) {
		p.samples = (double)(samples - u->samples_bursts) / (now - u->t_bursts);
		p.duty = smp_closer_on(&u->closer, NULL) / (now - u->t_bursts);
	} else {
		p.samples = (double)(samples - u->samples) / wall;
	}
	u->samples = samples;
	if (u->grp[SMP_G_CALLS].count && u->g.level == SMP_EVERY_CALL) {
		p.calls_on = wall;
	} else {
		double on = smp_closer_on(&u->closer, NULL);

		p.calls += p.frees;
		p.frees = 0;
		p.calls_on = on - u->on_seen;
		p.bursts = u->r->bursts - u->bursts_seen;
		u->on_seen = on;
		u->bursts_seen = u->r->bursts;
	}
	ch = smp_guard_check(&u->g, &p, sampling, early && u->r->counted);
	sess_logf(u->s, JMA_LOG_DEBUG, "guard: %.2f s: hits cost %.1f ms (calls %.1f, frees %.1f, slow "
		 "paths %.1f) of %.1f ms run, %.1f ms waiting, busiest %.0f%%: %.1f%% of a CPU, "
		 "allowed %.1f%%; %.0f samples; lost %.1f%% (k %.1f); level %d rate %.2f duty %.4f "
		 "shift %u -> %#x", wall,
		 (c[0] + c[1] + c[2]) * 1e3, c[0] * 1e3, c[1] * 1e3, c[2] * 1e3, cpu.run * 1e3,
		 cpu.wait * 1e3, cpu.busiest * 100, (c[0] + c[1] + c[2]) / wall * 100,
		 u->g.allowed * 100, p.samples, p.lost * 100, u->g.k, u->g.level, u->g.rate, u->g.duty,
		 u->g.shift, ch);
	apply(u, ch, sampling);
	u->pt0 = now;
	return ch & SMP_G_OVER;
}

void smp_cost_start(struct run *u)
{
	struct smp_cpu none;

	prog_stats(u, u->cnt0, u->ns0);
	memcpy(u->cnt, u->cnt0, sizeof(u->cnt));
	memcpy(u->ns, u->ns0, sizeof(u->ns));
	smp_sched_read(&u->sched, 0, &none);
	u->cpu0 = smp_target_cpu(u->s->pid);
	u->t_start = smp_now();
}

void smp_cost_result(struct run *u, double elapsed)
{
	struct jma_sampler_result *r = u->r;
	double c[SMP_NGROUPS], cpu, cap;

	measure(u, c);
	for (int k = 0; k < SMP_NGROUPS; k++) {
		u->cost += c[k];
		r->hits += r->counted ? u->cnt[k] - u->cnt0[k] : 0;
		r->bpf_ns += r->counted ? u->ns[k] - u->ns0[k] : 0;
	}
	cpu = smp_target_cpu(u->s->pid);
	r->target_cpu = cpu >= 0 && cpu > u->cpu0 ? cpu - u->cpu0 : 0;
	/* /proc/PID/stat counts in clock ticks; schedstat in ns, living threads only. */
	cap = r->target_cpu > u->run0 ? r->target_cpu : u->run0;
	r->cost = r->counted ? (u->cost < cap ? u->cost : cap) : 0;
	r->overhead = r->target_cpu > 0 ? (r->cost < r->target_cpu ? r->cost / r->target_cpu : 1) : 0;
	r->cost_rate = elapsed > 0 ? r->cost / elapsed : 0;
	r->allowed = u->g.allowed;
	r->burst_s = smp_closer_on(&u->closer, NULL);
	r->slowed = u->lost_t > 0 ? u->lost_sum / u->lost_t : -1;
	r->k = u->g.k;
	r->duty = r->seconds > r->every_call ? r->burst_s / (r->seconds - r->every_call) : 0;
	r->full_rate = u->g.full_rate;
	r->full_allowed = u->g.full_allowed;
}

/* The bytes every thread allocated while bursts ran, by jemalloc's counter
 * (since they started), over the bytes the bursts saw (asked, turned into
 * usable sizes by the counter's moves between calls of a burst); by time
 * when the counter is unknown. */
void smp_burst_scale(struct run *u)
{
	double total, seen = (double)(smp_stat(u, SMP_ST_SEEN) - u->seen0), ratio = 1, scale, on;
	uint64_t req = smp_stat(u, SMP_ST_PAIR_REQ) - u->req0, usz = smp_stat(u, SMP_ST_PAIR_USZ) - u->usz0;

	if (!u->t_bursts)
		return;
	total = counted_total(u) - u->total0;
	if (req && usz)
		ratio = (double)usz / (double)req;
	u->r->by_counter = u->tsd_off && total > 0;
	if (u->r->by_counter)
		scale = seen > 0 ? total / (seen * ratio) : 1;
	else
		scale = (on = smp_closer_on(&u->closer, NULL)) > 0 ? (smp_now() - u->t_bursts) / on : 1;
	u->r->scale = scale > 1 ? scale : 1;
	smp_profile_scale(u->prof, u->burst_from, u->r->scale);
}

/* Hand the profile so far to o->snapshot: non-zero when it ends the window. */
static int snapshot(struct run *u)
{
	char *buf = NULL;
	size_t len = 0;
	int stop;

	if (u->frees_gap) {
		uint64_t checked, live;

		smp_burst_scale(u);
		if (!smp_liveness_check(u->s, u->prof, &checked, &live, u->r->check_err,
					sizeof(u->r->check_err))) {
			u->r->checked = checked;
			u->r->still_live = live;
		}
	}
	if (smp_profile_write(u->prof, u->maps_text, &buf, &len)) {
		u->err = -ENOMEM;
		return 1;
	}
	stop = u->o->snapshot(u->o->snapshot_arg, buf, len);
	free(buf);
	return stop;
}

enum jma_sampler_end smp_window(struct run *u, double secs, double *elapsed, int sampling)
{
	double t0 = smp_now(), last = t0, snap = t0, end = t0 + secs;
	double next_check = t0 + (u->g.level == SMP_EVERY_CALL && sampling ? CHECK_FIRST_S : CHECK_EVERY_S);
	int early = u->g.level == SMP_EVERY_CALL && sampling;

	u->pt0 = t0;
	for (;;) {
		int bursting = sampling && u->g.level == SMP_BURSTS && u->g.rate > 0;
		double t = smp_now(), wait = POLL_S;

		*elapsed = t - t0;
		if (u->err || (u->o->stop && *u->o->stop))
			return JMA_SAMPLER_STOPPED;
		if (t >= end)
			return JMA_SAMPLER_TIME;
		if (bursting && t >= u->next_burst) {
			int err = burst(u, end);

			if (err) {
				if (sess_exec_ident_same(u->s->pid, &u->s->ident))
					return JMA_SAMPLER_EXITED;
				sess_logf(u->s, JMA_LOG_INFO, "placing a burst's probes: %s", strerror(-err));
				u->g.rate = 0;
			}
			continue;
		}
		if (next_check - t < wait)
			wait = next_check - t;
		if (PROGRESS_S < wait)
			wait = PROGRESS_S;
		if (end - t < wait)
			wait = end - t;
		if (bursting && u->next_burst - t < wait)
			wait = u->next_burst - t;
		/* A check overdue after a burst: no wait (-1 would be forever). */
		ring_buffer__poll(u->rb, wait > 0 ? (int)(wait * 1000) + 1 : 0);
		progress_tick(u);
		t = smp_now();
		if (u->o->snapshot && u->o->snapshot_every > 0 && t - snap >= u->o->snapshot_every) {
			snap = t;
			if (snapshot(u))
				return JMA_SAMPLER_STOPPED;
		}
		if (t - last >= CHECK_EVERY_S) {
			last = t;
			if (sess_exec_ident_same(u->s->pid, &u->s->ident))
				return JMA_SAMPLER_EXITED;
			if (proc_exec_same(u->s->pid, u->s->exec_mark, &u->s->exec_where) == -ENOEXEC)
				return JMA_SAMPLER_EXECED;
		}
		if (t >= next_check) {
			if (check(u, sampling, early))
				return JMA_SAMPLER_OVERHEAD;
			early = 0;
			next_check = t + CHECK_EVERY_S;
		}
	}
}
