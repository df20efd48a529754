/* select.c -- ranking a process's threads for borrowing (see select.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "procfs.h"
#include "select.h"
#include "yield.h"

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
			return ATT_RANK_OTHER;
		switch (arch_syscall_class(c->syscall)) {
		case ARCH_SC_IDLE: return ATT_RANK_IDLE;
		case ARCH_SC_FUTEX: return ATT_RANK_FUTEX;
		case ARCH_SC_RESTART: return ATT_RANK_RESTART;
		default: return ATT_RANK_OTHER;
		}
	case 'R':
		snprintf(c->why, sizeof(c->why), "running");
		return ATT_RANK_RUNNING;
	case 'T':
	case 't':
		snprintf(c->why, sizeof(c->why), "stopped");
		return ATT_RANK_STOPPED;
	default:
		snprintf(c->why, sizeof(c->why), "in state %c", c->state);
		return ATT_RANK_ELSE;
	}
}

static int cmp_cand(const void *a, const void *b, void *arg)
{
	const struct att_candidate *x = a, *y = b;
	pid_t main_tid = *(const pid_t *)arg;
	int xm = x->tid == main_tid, ym = y->tid == main_tid;
	/* The busy states the main thread leads, whatever its own. */
	int xb = x->rank > ATT_RANK_IDLE && x->rank <= ATT_RANK_RUNNING;
	int yb = y->rank > ATT_RANK_IDLE && y->rank <= ATT_RANK_RUNNING;

	/* Past the idle sleepers, the main thread comes first whatever it does:
	 * it is the thread most likely to have initialised the per-thread state
	 * of the libraries we call into.  A thread that never did would have it
	 * created by our call (for jemalloc: a tcache, an arena binding, possibly
	 * a new arena and its background thread).  Not when it is stopped, or in
	 * restart_syscall, where only the fallback engine could use it. */
	if (xb && yb && xm != ym)
		return xm ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (xm != ym)
		return xm ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Read thread @tid's state, syscall and rank into @c.  -1 if it is gone. */
static int look_at(pid_t pid, pid_t tid, struct att_candidate *c)
{
	if (att_proc_stat(pid, tid, &c->state, c->comm, sizeof(c->comm)) || c->state == 'Z' ||
	    c->state == 'X')
		return -1;	/* exited meanwhile */
	c->tid = tid;
	c->syscall = (c->state == 'S' || c->state == 'D') ? att_proc_syscall_at(pid, tid, &c->sp, &c->pc)
							 : -1;
	c->rank = rank_of(c);
	return 0;
}

int att_select_threads(pid_t pid, pid_t only, int first_idle, struct att_candidate **out,
		       size_t *n)
{
	pid_t *tids = NULL;
	size_t nt = 1, k = 0;
	struct att_candidate *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	/* One thread asked for: /proc/PID/task/TID exists only for threads of
	 * PID, so no need to list thousands of them.  Likewise the main thread
	 * when idle is the first choice whatever the others do (cmp_cand). */
	if (only || first_idle) {
		if (look_at(pid, only ? only : pid, v) == 0 && (only || v->rank == ATT_RANK_IDLE)) {
			*out = v;
			*n = 1;
			return !only;
		}
		if (only) {
			free(v);
			return -ESRCH;
		}
	}
	err = att_proc_tasks(pid, &tids, &nt);
	if (err || !(v = realloc(v, (nt ? nt : 1) * sizeof(*v)))) {
		free(tids);
		free(v);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < nt; i++) {
		att_yield_point();
		if (look_at(pid, tids[i], &v[k]))
			continue;
		/* With @first_idle the main thread (looked at above) is busy: the
		 * first idle thread, by tid, is the best choice. */
		if (first_idle && v[k].rank == ATT_RANK_IDLE && v[k].tid != pid) {
			v[0] = v[k];
			free(tids);
			*out = v;
			*n = 1;
			return 1;
		}
		k++;
	}
	free(tids);
	qsort_r(v, k, sizeof(*v), cmp_cand, &pid);
	*out = v;
	*n = k;
	return 0;
}
