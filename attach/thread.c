/* thread.c -- seizing, waiting for and releasing one thread with ptrace. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "crashpoint.h"
#include "defer.h"
#include "procfs.h"
#include "thread.h"

const char *att_signame(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

void att_log(const struct att_thread *t, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!t->log || level > t->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->log(t->log_arg, level, msg);
}

int att_fail(struct att_thread *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	att_log(t, ATT_LOG_DEBUG, "%s", t->err);
	return err < 0 ? err : -err;
}

void att_thread_init(struct att_thread *t, pid_t pid, pid_t tid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	att_retcap_init(&t->rc);
}

static void note_exit(struct att_thread *t, int status)
{
	t->gone = 1;
	t->stopped = 0;
	t->seized = 0;
	t->exit_status = status;
}

/* How long att_wait polls before it sleeps.  Our stops and calls take
 * 10-200 us.  Asleep, our CPU idles, and in a VM waking an idle vCPU for the
 * thread's stop costs about as much again: with 1000 threads in the target,
 * where the scheduler ran the thread on the other CPU, a `get` held it
 * 0.71 ms sleeping and 0.57 ms polling (medians of 40).  Polling pays only
 * while our CPU has nothing else to run: a sched_yield between polls, and the
 * first one that gives the CPU away (the thread itself, queued on our CPU, or
 * a busy machine's other work, which polling would only take CPU from) ends
 * it. */
#define POLL_NS		300000

static long switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

int att_wait(struct att_thread *t, int64_t deadline_ns, int *status, int interruptible)
{
	int64_t poll_end = att_now_ns() + POLL_NS;
	long yielded = switches();

	for (;;) {
		pid_t r = waitpid(t->tid, status, WNOHANG | __WALL);
		int64_t now, left;
		int sig;

		if (r == t->tid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				note_exit(t, *status);
			else
				t->stopped = 1;
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			/* ECHILD: the thread is gone and was reaped by its process. */
			if (errno == ECHILD) {
				note_exit(t, 0);
				*status = 0;
				return 0;
			}
			return -errno;
		}
		if (interruptible && att_defer_pending())
			return -EINTR;
		now = att_now_ns();
		left = deadline_ns - now;
		if (left <= 0)
			return -ETIMEDOUT;
		if (now < poll_end && yielded >= 0) {
			sched_yield();
			if (switches() != yielded)
				poll_end = 0;
			continue;
		}
		/* A deferred signal taken here is recorded by att_defer_wait;
		 * when not interruptible, the wait simply goes on. */
		sig = att_defer_wait(left);
		if (interruptible && sig && sig != SIGCHLD)
			return -EINTR;
	}
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A signal-delivery stop for a fault the thread's own instruction raised. */
static int is_fault(const struct att_thread *t, int sig)
{
	siginfo_t si;

	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGTRAP)
		return 0;
	/* Unreadable: rather lose a signal than deliver a fault. */
	return ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) < 0 || si.si_code > 0;
}

/* What a wait reported: 1 for a PTRACE_EVENT_STOP (our interrupt, or a group
 * stop, which is remembered), 0 for a signal-delivery stop, -ESRCH when the
 * thread is gone. */
static int event_stop(struct att_thread *t, int status)
{
	if (t->gone)
		return -ESRCH;
	if ((status >> 16) != PTRACE_EVENT_STOP)
		return 0;
	if (is_stop_signal(WSTOPSIG(status)))
		t->group_stopped = 1;
	return 1;
}

/* Wait until the thread reports a PTRACE_EVENT_STOP (our interrupt or a group
 * stop).  Signal-delivery stops on the way are passed on unchanged, and the
 * interrupt asked for again: any ptrace-stop clears a pending one, so a
 * signal dequeued as the interrupt came in took its place (a thread a fast
 * timer keeps waking then ran on, traced, until our timeout).  Asking twice
 * is harmless: one stop answers both, or the second is one more event stop,
 * which the call loops pass over and the detach clears. */
static int wait_event_stop(struct att_thread *t, int64_t deadline)
{
	char sb[32];

	for (;;) {
		int status, err = att_wait(t, deadline, &status, 1);

		if (!err)
			err = event_stop(t, status);
		if (err)
			return err < 0 ? err : 0;
		att_log(t, ATT_LOG_DEBUG, "tid %d: passing on %s before our stop", (int)t->tid,
			att_signame(WSTOPSIG(status), sb, sizeof(sb)));
		t->stopped = 0;
		if (ptrace(PTRACE_CONT, t->tid, 0, WSTOPSIG(status)) < 0 ||
		    ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
			return -errno;
	}
}

/* A signal the thread does not block is pending: an EINTR it got is that
 * signal's, not our stop's, and must reach the application. */
int att_thread_signal_waiting(const struct att_thread *t, uint64_t mask)
{
	struct att_status st;

	return att_proc_status(t->pid, t->tid, &st) == 0 && (st.sigpnd & ~mask);
}

void att_thread_fix_eintr(struct att_thread *t)
{
	struct arch_gpregs r, orig;
	uint64_t mask;

	if (!t->seized || !t->stopped || t->gone || t->in_call || t->left_running)
		return;
	if (arch_gpregs_get(t->tid, &r))
		return;
	orig = r;
	/* Restart first, look for a signal of its own after: should we die in
	 * between, the thread restarts (the signal is still delivered first);
	 * the other order would leave it the EINTR for longer. */
	if (!arch_restart_adjust(&r, &t->sc_note, 0, 1) || arch_gpregs_set(t->tid, &r))
		return;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(mask), &mask) < 0 || att_thread_signal_waiting(t, mask))
		arch_gpregs_set(t->tid, &orig);
	else
		att_log(t, ATT_LOG_DEBUG, "tid %d: its EINTR came from our stop: restarting the call",
			(int)t->tid);
}

int att_thread_seize(struct att_thread *t, int timeout_ms)
{
	int err;

	/* Armed before the stop, so that none of its cost is the thread's (the
	 * engine is chosen once it is stopped; a failure here is met again
	 * there). */
	if (t->restorer && !t->no_sigframe && t->rc.fd < 0) {
		char ignored[200];

		att_retcap_open(&t->rc, t->tid, t->restorer, ignored, sizeof(ignored));
	}
	att_defer_enter();
	t->deferring = 1;
	/* TRACESYSGOOD: the self-restoring call tells syscall stops from
	 * SIGTRAPs by it. */
	if (ptrace(PTRACE_SEIZE, t->tid, 0, PTRACE_O_TRACESYSGOOD) < 0) {
		err = -errno;
		t->deferring = 0;
		att_defer_leave();
		att_retcap_close(&t->rc);
		return att_fail(t, err, "PTRACE_SEIZE tid %d: %s", (int)t->tid, strerror(-err));
	}
	t->seized = 1;
	arch_syscall_note(t->pid, t->tid, &t->sc_note);
	t->stop_ns = att_now_ns();
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) {
		err = -errno;
		att_fail(t, err, "PTRACE_INTERRUPT tid %d: %s", (int)t->tid, strerror(-err));
		goto err_detach;
	}
	err = wait_event_stop(t, att_now_ns() + (int64_t)timeout_ms * 1000000);
	if (err == -ETIMEDOUT)
		att_fail(t, err, "tid %d did not stop within %d ms (uninterruptible sleep?)",
			 (int)t->tid, timeout_ms);
	else if (err == -ESRCH)
		att_fail(t, err, "tid %d exited while being attached", (int)t->tid);
	else if (err == -EINTR)
		att_fail(t, err, "interrupted while attaching to tid %d", (int)t->tid);
	else if (err)
		att_fail(t, err, "waiting for tid %d: %s", (int)t->tid, strerror(-err));
	if (err)
		goto err_detach;
	att_log(t, ATT_LOG_DEBUG, "tid %d stopped%s", (int)t->tid,
		t->group_stopped ? " (group-stopped)" : "");
	/* At once, not at detach: should we die from here on, the thread
	 * restarts its call rather than report our stop as EINTR. */
	att_thread_fix_eintr(t);
	att_crashpoint("seized");
	return 0;

err_detach:
	{
		char keep[sizeof(t->err)];
		memcpy(keep, t->err, sizeof(keep));
		att_thread_detach(t);
		memcpy(t->err, keep, sizeof(keep));
	}
	return err;
}

int att_thread_interrupt(struct att_thread *t, int timeout_ms)
{
	int64_t deadline = att_now_ns() + (int64_t)timeout_ms * 1000000;

	if (t->stopped || t->gone)
		return 0;
	arch_syscall_note(t->pid, t->tid, &t->sc_note);
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return -errno;
	{
		/* Our own Ctrl-C must not stop us from getting the thread back. */
		int status, err = att_wait(t, deadline, &status, 0);

		if (!err)
			err = event_stop(t, status);
		if (err)
			return err < 0 ? err : 0;
		/* A signal-delivery stop also leaves it stopped; the signal is one
		 * we must not lose, so the detach delivers it (a timer's with its
		 * overrun count: same signal, same siginfo).  Not a fault, which
		 * re-triggers on resume if it was the program's and must not be
		 * delivered if it was our call's.  The detach delivers one signal:
		 * a stop signal kept earlier goes first, or the process would not
		 * stop. */
		if (WSTOPSIG(status) != (SIGTRAP | 0x80) && !is_stop_signal(t->pending_sig) &&
		    !is_fault(t, WSTOPSIG(status)))
			t->pending_sig = WSTOPSIG(status);
		return 0;
	}
}

int att_thread_detach(struct att_thread *t)
{
	int err = 0;

	if (t->seized && !t->gone) {
		if (!t->stopped)
			att_thread_interrupt(t, 2000);
		att_thread_fix_eintr(t);
		/* PTRACE_DETACH needs a ptrace-stop; from the stop we took it in,
		 * the kernel resumes it (or, if group-stopped, leaves it stopped). */
		if (ptrace(PTRACE_DETACH, t->tid, 0, t->pending_sig) < 0 && errno != ESRCH)
			err = att_fail(t, -errno, "PTRACE_DETACH tid %d: %s", (int)t->tid,
				       strerror(errno));
		t->run_ns = att_now_ns();
	}
	att_retcap_close(&t->rc);
	t->seized = 0;
	t->stopped = 0;
	if (t->deferring) {
		t->deferring = 0;
		att_defer_leave();
	}
	return err;
}
