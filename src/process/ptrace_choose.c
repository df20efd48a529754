/* ptrace_choose.c -- which thread of the process calls run in: candidates in order, each looked at before and after it stops.
 *
 * The main thread and threads asleep in system calls come first
 * (att_select_threads); the best one alone when it is idle, every one only
 * when it is not.  A thread is passed over when its stack is inside
 * jemalloc (a lock it may hold) or the dynamic loader (a program still
 * loading), or when it is in restart_syscall, which only the fallback call
 * engine could borrow: when no other will do, such a thread is waited for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/clock.h"
#include "attach/procfs.h"
#include "process/open.h"
#include "process/ptrace_be.h"

#define MAIN_RETRIES	5
#define MAIN_RETRY_US	2000
/* A thread in restart_syscall returns from its timed wait by itself: how
 * long to wait for that at most (less when the call timeout is shorter), and
 * how often to look. */
#define RESTART_WAIT_MS	3000
#define RESTART_POLL_US	2000

/* The caller named the thread and forced its use, inside jemalloc or not. */
static int thread_forced(const jma_session *s)
{
	return s->opt.thread && (s->opt.flags & JMA_F_FORCE);
}

/* Thread @tid is in restart_syscall: a timed wait (poll, nanosleep, a futex
 * with a timeout...) resumed after an earlier stop -- a debugger, gcore, a
 * killed jemattach -- cut it short.  Its original call is gone from its
 * registers and rt_sigreturn would end it with EINTR: the self-restoring
 * call cannot borrow it.  Pass it over, remembering it for ptrace_choose to
 * wait for.  Returns 1 (unsuitable). */
static int restart_skip(struct ptrace_be *p, pid_t tid, const char *comm, char *why, size_t len)
{
	snprintf(why, len, "tid %d (%s) is in restart_syscall, resuming a timed wait an earlier "
		 "stop cut short: only the fallback call engine could borrow it", (int)tid, comm);
	if (!p->restart_tid) {
		p->restart_tid = tid;
		snprintf(p->restart_why, sizeof(p->restart_why), "%s", why);
	}
	return 1;
}

/* Before stopping @c (not frozen): 1 when what /proc shows of it rules it
 * out, reason in @why; else 0. */
static int unsuitable_running(struct ptrace_be *p, const struct att_candidate *c, char *why,
			      size_t len)
{
	jma_session *s = p->be.s;
	char where[256];

	if (c->rank == ATT_RANK_RESTART && !(s->opt.flags & JMA_F_FORCE))
		return restart_skip(p, c->tid, c->comm, why, len);
	if (!thread_forced(s) && ptrace_frames_known_unsafe(s, c, where, sizeof(where))) {
		snprintf(why, len, "tid %d (%s) is inside jemalloc: %s (seen before stopping it)",
			 (int)c->tid, c->comm, where);
		return 1;
	}
	return 0;
}

/* The stopped @c could not be hijacked (att_thread_hijack's @err): it goes
 * back, and the next is tried (1) or the failure recorded (< 0). */
static int hijack_failed(struct ptrace_be *p, const struct att_candidate *c, int err, char *why,
			 size_t len)
{
	struct att_thread *t = &p->th;

	if (err == -ENOTSUP && t->nosf == ATT_NOSF_RESTART) {
		ptrace_give_back(p);
		return restart_skip(p, c->tid, c->comm, why, len);
	}
	if (err == -ENOTSUP) {
		snprintf(why, len, "%s", t->engine_why);
		ptrace_give_back(p);
		return ptrace_refuse_engine(p->be.s, why);
	}
	snprintf(why, len, "%s", t->err);
	ptrace_give_back(p);
	return err == -ENOSPC || err == -EFAULT ? 1 : sess_fail(p->be.s, JMA_ERR_TARGET, err, "%s", why);
}

/* The stopped, hijacked @c: 0 when calls may run in it; else it goes back,
 * and the next is tried (1) or the failure recorded (< 0). */
static int unsuitable_stopped(struct ptrace_be *p, const struct att_candidate *c, char *why,
			      size_t len)
{
	jma_session *s = p->be.s;
	char where[256];
	/* The thread is the process's we opened, running its program? */
	int unsafe, err = ptrace_fail_changed(s);

	if (err) {
		ptrace_give_back(p);
		return err;
	}
	unsafe = ptrace_frames_unsafe(s, &p->th, where, sizeof(where));
	if (unsafe == PTRACE_FRAMES_LOADER) {
		snprintf(why, len, "tid %d (%s) is inside the dynamic loader (%s): a program or "
			 "library still loading", (int)c->tid, c->comm, where);
		ptrace_give_back(p);
		return 1;
	}
	if (unsafe == PTRACE_FRAMES_JEMALLOC) {
		if (!thread_forced(s)) {
			snprintf(why, len, "tid %d (%s) is inside jemalloc: %s", (int)c->tid, c->comm, where);
			ptrace_give_back(p);
			return 1;
		}
		sess_logf(s, JMA_LOG_WARN, "using tid %d although it is inside jemalloc (%s): forced",
			 (int)c->tid, where);
	}
	return 0;
}

/* Try one candidate.  0: attached and hijacked.  >0: unsuitable, reason in
 * @why, try the next.  <0: fatal. */
static int try_thread(struct ptrace_be *p, const struct att_candidate *c, char *why, size_t len)
{
	jma_session *s = p->be.s;
	int err;

	/* Under --freeze already stopped (and checked) by proc_freeze_all. */
	if (!p->fz.t && (err = unsuitable_running(p, c, why, len)))
		return err;
	if ((err = ptrace_seize(p, c->tid, why, len)))
		return err;
	/* Registers are needed for the stack checks: hijack saves them.  The
	 * fallback engine only with --force (ptrace_refuse_engine). */
	p->th.sigframe_only = !(s->opt.flags & JMA_F_FORCE);
	err = att_thread_hijack(&p->th);
	if (err)
		return hijack_failed(p, c, err, why, len);
	return unsuitable_stopped(p, c, why, len);
}

/* @c is the thread calls run in: said for info, threads and -v. */
static void chosen(struct ptrace_be *p, const struct att_candidate *c)
{
	jma_session *s = p->be.s;
	long nr = arch_stopped_syscall(&p->th.saved_gp, &p->th.sc_note);
	const char *nm = nr >= 0 ? arch_syscall_name(nr) : NULL;
	char seen[96];

	/* /proc saw it a moment before it stopped; its registers say where it
	 * really was (a thread seen running has often just gone back to
	 * sleep). */
	snprintf(seen, sizeof(seen), "%s", c->why);
	if (c->state == 'R' && nm)
		snprintf(seen, sizeof(seen), "asleep in %s", nm);
	p->tid = c->tid;
	snprintf(p->tid_comm, sizeof(p->tid_comm), "%s", c->comm);
	snprintf(p->tid_why, sizeof(p->tid_why), "%s%s; %s%s%s", seen,
		 s->opt.thread ? ", the one asked for" : "",
		 p->th.engine == ATT_ENGINE_SIGFRAME ? "self-restoring calls"
						     : "fallback engine (forced): ",
		 p->th.engine == ATT_ENGINE_SIGFRAME ? "" : p->th.engine_why,
		 p->waited);
	sess_logf(s, JMA_LOG_INFO, "using tid %d (%s), %s", (int)c->tid, c->comm, p->tid_why);
	if (p->th.engine != ATT_ENGINE_SIGFRAME)
		sess_logf(s, JMA_LOG_WARN, "tid %d: fallback call engine (forced): %s; if jemattach "
			 "dies during a call, process %d dies too (SIGSEGV at address 0x%x)",
			 (int)c->tid, p->th.engine_why, (int)s->pid, (unsigned)ATT_RET_SENTINEL);
}

/* Try @c in order (skipping tid @skip, already tried) until one is attached
 * (*attached = 1).  Returns like try_thread for the last one tried. */
static int try_list(struct ptrace_be *p, const struct att_candidate *c, size_t n, pid_t skip,
		    char *why, size_t len, int *attached)
{
	jma_session *s = p->be.s;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		if (c[i].tid == skip)
			continue;
		err = try_thread(p, &c[i], why, len);
		/* The main thread is usually only briefly busy (or inside jemalloc):
		 * waiting a little for it beats borrowing a thread jemalloc has
		 * never seen (see att_select_threads).  Not out of restart_syscall:
		 * that waits in ptrace_choose. */
		for (int retry = 0; err > 0 && !p->fz.t && c[i].tid == s->pid &&
		     p->restart_tid != c[i].tid && retry < MAIN_RETRIES; retry++) {
			usleep(MAIN_RETRY_US);
			err = try_thread(p, &c[i], why, len);
		}
		if (err < 0)
			return err;
		if (err == 0) {
			*attached = 1;
			chosen(p, &c[i]);
			return 0;
		}
		sess_logf(s, JMA_LOG_INFO, "skipping tid %d: %s", (int)c[i].tid, why);
	}
	return err;
}

/* Choose, seize and hijack a thread: 0 with *attached, >0 when none could be
 * used (the last reason in @why), <0 on a refusal recorded in the session. */
static int pick_thread(struct ptrace_be *p, char *why, size_t len, int *attached)
{
	jma_session *s = p->be.s;
	struct att_candidate *c;
	size_t n;
	int err;
	pid_t tried = 0;

	/* The best candidate alone when it is idle; all of them only if it is
	 * not, or turns out unusable. */
	if (!s->opt.thread && !(s->opt.flags & JMA_F_FREEZE)) {
		err = att_select_threads(s->pid, 0, 1, &c, &n);
		if (err == 1) {
			err = try_list(p, c, n, 0, why, len, attached);
			tried = c[0].tid;
			free(c);
			if (*attached || err < 0)
				return err;
			err = att_select_threads(s->pid, 0, 0, &c, &n);
		}
	} else {
		err = att_select_threads(s->pid, s->opt.thread, 0, &c, &n);
	}
	if (err == -ESRCH && s->opt.thread)
		return sess_fail(s, JMA_ERR_USAGE, err, "thread %d is not a thread of process %d",
				(int)s->opt.thread, (int)s->pid);
	if (err)
		return sess_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
				(int)s->pid, strerror(-err));
	if ((s->opt.flags & JMA_F_FREEZE) && (err = proc_freeze_all(s, &p->fz, c, n))) {
		free(c);
		return err;
	}
	err = try_list(p, c, n, tried, why, len, attached);
	free(c);
	if (!*attached)
		proc_thaw_all(&p->fz);
	return err;
}

/* Wait until thread @tid is out of restart_syscall (or gone), polling /proc
 * up to @deadline: 0, or -ETIMEDOUT. */
static int restart_wait(struct ptrace_be *p, pid_t tid, int64_t deadline)
{
	for (;;) {
		long nr = att_proc_syscall(p->be.s->pid, tid);

		if (nr < 0 || arch_syscall_class(nr) != ARCH_SC_RESTART)
			return 0;
		if (att_now_ns() >= deadline)
			return -ETIMEDOUT;
		usleep(RESTART_POLL_US);
	}
}

/* No thread could be borrowed, the last reason in @why: the error. */
static int none_usable(struct ptrace_be *p, const char *why, int wait_ms)
{
	jma_session *s = p->be.s;
	int err;

	if ((err = ptrace_fail_exited(s)))
		return err;
	/* (A thread in libc, unwound with maps read before libc was mapped,
	 * looks like one inside jemalloc: its stack still holds jemalloc's
	 * start-up.  The maps, not the thread, are wrong then.) */
	if ((err = ptrace_fail_loading(s, JMA_LOADING_WAIT_MS)))
		return err;
	if (p->restart_tid)
		return sess_fail_hint(s, JMA_HINT_FORCE | JMA_HINT_RETRY, JMA_ERR_UNSAFE, -EAGAIN,
				     "no thread of process %d can be borrowed: %s, and it was still "
				     "there after %d ms; if jemattach died during a fallback call the "
				     "process would die too: refused", (int)s->pid, p->restart_why,
				     wait_ms);
	return sess_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "no thread of process %d is safe to use%s%s",
			(int)s->pid, why[0] ? "; last: " : "", why);
}

int ptrace_choose(struct ptrace_be *p)
{
	jma_session *s = p->be.s;
	char why[512] = "";
	int err, attached = 0;
	int wait_ms = sess_timeout_ms(s) < RESTART_WAIT_MS ? sess_timeout_ms(s) : RESTART_WAIT_MS;
	int64_t t0 = 0, deadline = 0;

	p->waited[0] = '\0';
	for (;;) {
		pid_t rt;

		p->restart_tid = 0;
		err = pick_thread(p, why, sizeof(why), &attached);
		if (attached || err < 0)
			return err;
		if (!p->restart_tid || (deadline && att_now_ns() >= deadline))
			break;
		/* Only threads in restart_syscall are left: wait for one to return
		 * from its timed wait, then choose again. */
		rt = p->restart_tid;
		if (!deadline) {
			t0 = att_now_ns();
			deadline = t0 + (int64_t)wait_ms * 1000000;
			sess_logf(s, JMA_LOG_INFO, "tid %d is in restart_syscall (a timed wait resumed "
				 "after an earlier stop); waiting up to %d ms for it to return",
				 (int)rt, wait_ms);
		}
		if (restart_wait(p, rt, deadline))
			break;
		snprintf(p->waited, sizeof(p->waited), ", after waiting %.0f ms for tid %d to leave "
			 "restart_syscall", (double)(att_now_ns() - t0) / 1e6, (int)rt);
		sess_logf(s, JMA_LOG_INFO, "tid %d left restart_syscall after %.1f ms", (int)rt,
			 (double)(att_now_ns() - t0) / 1e6);
	}
	return none_usable(p, why, wait_ms);
}
