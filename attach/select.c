/* select.c -- ranking a process's threads for borrowing (see select.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "procfs.h"
#include "select.h"

static int rank_of(struct att_candidate *c)
{
	const char *nm;

	switch (c->state) {
	case 'S':
		nm = c->syscall >= 0 ? arch_syscall_name(c->syscall) : NULL;
		if (c->syscall >= 0 && !nm)
			snprintf(c->why, sizeof(c->why), "asleep in syscall %ld", c->syscall);
		else
			snprintf(c->why, sizeof(c->why), "asleep in %s", nm ? nm : "the kernel");
		if (c->syscall < 0)
			return 2;
		switch (arch_syscall_class(c->syscall)) {
		case ARCH_SC_IDLE: return 0;
		case ARCH_SC_FUTEX: return 1;
		default: return 2;
		}
	case 'R':
		snprintf(c->why, sizeof(c->why), "running");
		return 3;
	case 'T':
	case 't':
		snprintf(c->why, sizeof(c->why), "stopped");
		return 4;
	default:
		snprintf(c->why, sizeof(c->why), "in state %c", c->state);
		return 5;
	}
}

static int cmp_cand(const void *a, const void *b, void *arg)
{
	const struct att_candidate *x = a, *y = b;
	pid_t main_tid = *(const pid_t *)arg;

	/* Past the idle sleepers, the main thread comes first whatever its state:
	 * it is the thread most likely to have initialised the per-thread state
	 * of the libraries we call into.  A thread that never did would have it
	 * created by our call (for jemalloc: a tcache, an arena binding, possibly
	 * a new arena and its background thread). */
	if (x->rank > 0 && y->rank > 0 && (x->tid == main_tid) != (y->tid == main_tid))
		return x->tid == main_tid ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if ((x->tid == main_tid) != (y->tid == main_tid))
		return x->tid == main_tid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int att_select_threads(pid_t pid, pid_t only, struct att_candidate **out, size_t *n)
{
	pid_t *tids;
	size_t nt, k = 0;
	struct att_candidate *v;
	int err = att_proc_tasks(pid, &tids, &nt);

	if (err)
		return err;
	v = calloc(nt ? nt : 1, sizeof(*v));
	if (!v) {
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nt; i++) {
		struct att_status st;
		struct att_candidate *c = &v[k];

		if (only && tids[i] != only)
			continue;
		if (att_proc_status(pid, tids[i], &st))
			continue;	/* exited meanwhile */
		if (st.state == 'Z' || st.state == 'X')
			continue;
		c->tid = tids[i];
		c->state = st.state;
		snprintf(c->comm, sizeof(c->comm), "%s", st.name);
		c->syscall = (st.state == 'S' || st.state == 'D') ? att_proc_syscall(pid, tids[i]) : -1;
		c->rank = rank_of(c);
		k++;
	}
	free(tids);
	if (only && !k) {
		free(v);
		return -ESRCH;
	}
	qsort_r(v, k, sizeof(*v), cmp_cand, &pid);
	*out = v;
	*n = k;
	return 0;
}
