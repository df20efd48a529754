/* cost.c -- what the target spends (CPU and runqueue time, by thread) and what a probe hit costs.
 *
 * A hit's trap runs on the thread that called, so it is in that thread's CPU
 * time: the estimate of what the probes cost (hits times a hit's cost, plus
 * the programs' own run time, which the kernel counts) can be checked
 * against the target's CPU time, and sampler.c never reports more.  The
 * cost of a hit is measured by CPU time, not wall time: on a loaded machine
 * a wall clock counts other processes' turns too (measured here: 28 us "a
 * hit" against 5 in CPU time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/procfs.h"
#include "heap/heap.h"
#include "sampler/cost.h"
#include "sampler/events.h"

#define CALIB_CALLS	200
#define CALIB_ROUNDS	5

double smp_target_cpu(pid_t pid)
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

/* The index of @tid in the sorted @v[0..n), or n. */
static size_t find_tid(const pid_t *v, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] == tid)
			return mid;
		if (v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int smp_sched_read(struct smp_sched *s, double wall, struct smp_cpu *out)
{
	pid_t *tids = NULL;
	uint64_t *run, *wait;
	size_t n = 0, k = 0;
	int first = !s->tid, err;

	memset(out, 0, sizeof(*out));
	if ((err = att_proc_tasks(s->pid, &tids, &n)))
		return err;
	qsort(tids, n, sizeof(*tids), cmp_pid);
	run = calloc(n ? n : 1, sizeof(*run));
	wait = calloc(n ? n : 1, sizeof(*wait));
	if (!run || !wait) {
		free(tids);
		free(run);
		free(wait);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char path[64], *buf = NULL;
		unsigned long long r, w;
		size_t len, j;
		double d;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)s->pid, (int)tids[i]);
		if (att_proc_read(path, &buf, &len))
			continue;	/* it ended meanwhile */
		if (sscanf(buf, "%llu %llu", &r, &w) == 2) {
			tids[k] = tids[i];
			run[k] = r;
			wait[k] = w;
			j = find_tid(s->tid, s->n, tids[k]);
			if (!first) {
				uint64_t r0 = j < s->n && s->run[j] <= r ? s->run[j] : 0;
				uint64_t w0 = j < s->n && s->wait[j] <= w ? s->wait[j] : 0;

				out->run += (double)(r - r0) / 1e9;
				out->wait += (double)(w - w0) / 1e9;
				d = wall > 0 ? (double)(r - r0 + w - w0) / 1e9 / wall : 0;
				if (d > out->busiest)
					out->busiest = d;
			}
			k++;
		}
		free(buf);
	}
	free(s->tid);
	free(s->run);
	free(s->wait);
	s->tid = tids;
	s->run = run;
	s->wait = wait;
	s->n = k;
	return k ? 0 : -ESRCH;
}

void smp_sched_free(struct smp_sched *s)
{
	free(s->tid);
	free(s->run);
	free(s->wait);
	s->tid = NULL;
	s->run = s->wait = NULL;
	s->n = 0;
}

/* The function the calibration probes: in our own process only. */
__attribute__((noinline)) void smp_calibration_point(void *p);
__attribute__((noinline)) void smp_calibration_point(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU nanoseconds a call of smp_calibration_point: the least of a few rounds
 * (a round may still take an interrupt or a page fault). */
static double timed_calls(void)
{
	double best = 1e12;

	for (int r = 0; r < CALIB_ROUNDS; r++) {
		int64_t t = thread_cpu_ns();

		for (int i = 0; i < CALIB_CALLS; i++)
			smp_calibration_point(&i);
		t = thread_cpu_ns() - t;
		if ((double)t / CALIB_CALLS < best)
			best = (double)t / CALIB_CALLS;
	}
	return best;
}

double smp_hit_cost(const struct smp_probes *tmpl, double fallback)
{
	uint64_t addr = (uint64_t)(uintptr_t)&smp_calibration_point;
	struct smp_probes self;
	struct att_map *maps = NULL;
	const struct att_map *m;
	double per, base;
	char path[4200];
	size_t n = 0;
	int err;

	memset(&self, 0, sizeof(self));
	self.multi = tmpl->multi;
	memcpy(self.prog, tmpl->prog, sizeof(self.prog));
	if (att_proc_maps(getpid(), &maps, &n))
		return fallback;
	m = att_maps_find(maps, n, addr);
	/* Our own file, as we map it: its path is ours to trust. */
	err = !m || !m->path || snprintf(path, sizeof(path), "%s", m->path) >= (int)sizeof(path);
	if (!err)
		addr = addr - m->start + m->offset;
	att_maps_free(maps, n);
	if (err)
		return fallback;
	base = timed_calls();
	if (smp_probes_add(&self, SMP_P_FREE, path, addr, 0, SMP_COOKIE(0, 0, 1, 0, 0, 0)) ||
	    smp_probes_attach(&self)) {
		smp_probes_free(&self);
		return fallback;
	}
	/* The first hit of a process maps the kernel's out-of-line area. */
	smp_calibration_point(&base);
	per = timed_calls();
	smp_probes_free(&self);
	per -= base;
	return per > 0 ? per / 1000 : fallback;
}
