/* call.c -- the remote function call loop (see call.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "call.h"
#include "defer.h"
#include "mem.h"
#include "procfs.h"

int att_call_check_sentinels(pid_t pid, char *msg, size_t len)
{
	char *buf;
	unsigned long min;
	struct att_map *maps;
	size_t n;
	int err = att_proc_read("/proc/sys/vm/mmap_min_addr", &buf, NULL);

	if (err) {
		snprintf(msg, len, "reading vm.mmap_min_addr: %s", strerror(-err));
		return err;
	}
	min = strtoul(buf, NULL, 10);
	free(buf);
	if (min < 4096) {
		snprintf(msg, len, "vm.mmap_min_addr is %lu: page 0 can be mapped, so the call "
			 "sentinels are not safe", min);
		return -EPERM;
	}
	err = att_proc_maps(pid, &maps, &n);
	if (err) {
		snprintf(msg, len, "reading /proc/%d/maps: %s", (int)pid, strerror(-err));
		return err;
	}
	if (att_maps_find(maps, n, ATT_RET_SENTINEL) || att_maps_find(maps, n, ATT_CB_SENTINEL)) {
		snprintf(msg, len, "page 0 is mapped in process %d", (int)pid);
		err = -EPERM;
	}
	att_maps_free(maps, n);
	return err;
}

static void describe(struct att_thread *t, uint64_t addr, char *buf, size_t len)
{
	buf[0] = '\0';
	if (t->sym)
		t->sym(t->sym_arg, addr, buf, len);
	if (!buf[0])
		snprintf(buf, len, "unknown code");
}

static int unexpected_stop(struct att_thread *t, int status, const struct arch_gpregs *r)
{
	siginfo_t si;
	char sb[32], where[256];
	int sig = WSTOPSIG(status);
	uint64_t pc = arch_pc(r);

	describe(t, pc, where, sizeof(where));
	memset(&si, 0, sizeof(si));
	ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si);
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
		return att_fail(t, -EFAULT, "tid %d: %s (code %d) at pc 0x%llx in %s, fault address %p",
				(int)t->tid, att_signame(sig, sb, sizeof(sb)), si.si_code,
				(unsigned long long)pc, where, si.si_addr);
	return att_fail(t, -EFAULT, "tid %d: stopped by %s at pc 0x%llx in %s", (int)t->tid,
			att_signame(sig, sb, sizeof(sb)), (unsigned long long)pc, where);
}

static int exit_error(struct att_thread *t)
{
	char sb[32];
	int st = t->exit_status;

	if (WIFSIGNALED(st))
		return att_fail(t, -ESRCH, "tid %d was killed by %s during the call", (int)t->tid,
				att_signame(WTERMSIG(st), sb, sizeof(sb)));
	if (WIFEXITED(st))
		return att_fail(t, -ESRCH, "tid %d exited (status %d) during the call", (int)t->tid,
				WEXITSTATUS(st));
	return att_fail(t, -ESRCH, "tid %d disappeared during the call", (int)t->tid);
}

/* Where a stopped thread is: "futex in __lll_lock_wait+0x2a (libc.so.6)". */
static long where_stopped(struct att_thread *t, char *buf, size_t len)
{
	struct arch_gpregs r;
	const char *sc;
	char sym[256];
	long nr;

	if (arch_gpregs_get(t->tid, &r)) {
		snprintf(buf, len, "an unknown place");
		return -1;
	}
	nr = arch_syscall_nr(&r);
	sc = nr >= 0 ? arch_syscall_name(nr) : NULL;
	describe(t, arch_pc(&r), sym, sizeof(sym));
	if (nr >= 0)
		snprintf(buf, len, "syscall %s in %s", sc ? sc : "?", sym);
	else
		snprintf(buf, len, "%s", sym);
	return nr;
}

/* The call did not finish in time: get the thread stopped so release can
 * restore it. */
static int abandon(struct att_thread *t, int timeout_ms)
{
	char where[320];
	int err = att_thread_interrupt(t, 30000);

	if (t->gone)
		return exit_error(t);
	if (err)
		return att_fail(t, err, "tid %d: could not stop it after the timeout: %s", (int)t->tid,
				strerror(-err));
	where_stopped(t, where, sizeof(where));
	return att_fail(t, -ETIMEDOUT, "tid %d: the call did not return within %d ms; it was "
			"blocked in %s", (int)t->tid, timeout_ms, where);
}

/* Stop the thread and say whether it may be taken back at once: a thread
 * waiting on a futex is (in the common case) waiting to acquire a lock and
 * holds none.  Anything else may be working with locks held: taking it back
 * could leave one held for good.  Returns 1 with the place in @where when the
 * call should rather be allowed to go on; the thread is then stopped and the
 * caller resumes it. */
static int busy_elsewhere(struct att_thread *t, char *where, size_t len)
{
	long nr;

	if (att_thread_interrupt(t, 30000) || t->gone)
		return 0;
	nr = where_stopped(t, where, len);
	return !(nr >= 0 && arch_syscall_class(nr) == ARCH_SC_FUTEX);
}

static int serve_callback(struct att_thread *t, const struct att_call *c, struct arch_gpregs *r,
			  int *cb_err)
{
	uint64_t args[ARCH_NARGS], ret_word = 0, retval = 0;
	int err;

	if (arch_ret_from_stack) {
		err = att_mem_read(t->pid, arch_sp(r), &ret_word, sizeof(ret_word));
		if (err)
			return att_fail(t, err, "tid %d: reading the callback's return address: %s",
					(int)t->tid, strerror(-err));
	}
	arch_args(r, args);
	if (!*cb_err) {
		char keep[sizeof(t->err)];

		err = c->cb(t, args, &retval, c->cb_arg);
		if (err) {
			/* Keep the callback's message: it is the error to report. */
			memcpy(keep, t->err, sizeof(keep));
			*cb_err = err;
			memcpy(t->err, keep, sizeof(keep));
		}
	}
	arch_emulate_return(r, ret_word, retval);
	return arch_gpregs_set(t->tid, r);
}

int att_call(struct att_thread *t, const struct att_call *c, uint64_t *retval)
{
	struct arch_gpregs r = t->saved_gp;
	uint64_t push_addr, push_val;
	int npush, err, cb_err = 0, graced = 0, interrupted = 0;
	char where[320];
	int64_t deadline;

	if (!t->hijacked || !t->stopped)
		return att_fail(t, -EINVAL, "tid %d is not ready for a call", (int)t->tid);
	if (att_defer_pending())
		return att_fail(t, -EINTR, "not starting a call: jemattach received a signal");
	arch_call_prepare(&r, c->fn, c->args, c->nargs, t->scratch_cur, ATT_RET_SENTINEL,
			  &push_addr, &push_val, &npush);
	if (npush && push_addr < t->scratch_floor - 64)
		return att_fail(t, -ENOSPC, "tid %d: no stack left for the call", (int)t->tid);
	if (npush && (err = att_mem_write(t->pid, push_addr, &push_val, sizeof(push_val))))
		return att_fail(t, err, "tid %d: writing the return address: %s", (int)t->tid,
				strerror(-err));
	if ((err = arch_gpregs_set(t->tid, &r)))
		return att_fail(t, err, "tid %d: setting registers: %s", (int)t->tid, strerror(-err));

	deadline = att_now_ns() + (int64_t)c->timeout_ms * 1000000;
	for (;;) {
		int status, sig;

		t->stopped = 0;
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0) {
			err = -errno;
			if (err == -ESRCH) {
				/* Killed between stops: collect the exit. */
				att_wait(t, att_now_ns() + 1000000000, &status, 0);
				return exit_error(t);
			}
			return att_fail(t, err, "PTRACE_CONT tid %d: %s", (int)t->tid, strerror(-err));
		}
	wait:
		err = att_wait(t, deadline, &status, !interrupted);
		if (err == -ETIMEDOUT && !graced && c->grace_ms > 0 &&
		    busy_elsewhere(t, where, sizeof(where))) {
			att_log(t, ATT_LOG_WARN, "tid %d: the call is still running (in %s); taking "
				"the thread back now could leave a lock held, waiting %d ms more",
				(int)t->tid, where, c->grace_ms);
			graced = 1;
			deadline = att_now_ns() + (int64_t)c->grace_ms * 1000000;
			continue;
		}
		/* Our own SIGINT/SIGTERM never cuts a call short: even a futex wait
		 * may be made with a lock held (jemalloc's epoch refresh waits for
		 * arena locks holding ctl_mtx).  The call runs on, within its
		 * timeout, and no further call starts. */
		if (err == -EINTR) {
			att_log(t, ATT_LOG_INFO, "tid %d: signal received; letting the call finish "
				"first", (int)t->tid);
			interrupted = 1;
			goto wait;
		}
		if (err == -ETIMEDOUT)
			return abandon(t, c->timeout_ms);
		if (err)
			return att_fail(t, err, "waiting for tid %d: %s", (int)t->tid, strerror(-err));
		if (t->gone)
			return exit_error(t);
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			/* Another thread started a group stop.  Finish the call; the
			 * kernel puts this thread back into the stop at detach. */
			if (WSTOPSIG(status) != SIGTRAP)
				t->group_stopped = 1;
			continue;
		}
		sig = WSTOPSIG(status);
		if ((err = arch_gpregs_get(t->tid, &r)))
			return att_fail(t, err, "tid %d: reading registers: %s", (int)t->tid,
					strerror(-err));
		if (sig == SIGSEGV && arch_pc(&r) == ATT_RET_SENTINEL) {
			*retval = arch_retval(&r);
			return cb_err;
		}
		if (sig == SIGSEGV && arch_pc(&r) == ATT_CB_SENTINEL && c->cb) {
			if ((err = serve_callback(t, c, &r, &cb_err)))
				return err;
			continue;
		}
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* Stop signals cannot be blocked: keep it for detach so the
			 * process still stops, and let our call finish. */
			t->pending_sig = sig;
			continue;
		}
		return unexpected_stop(t, status, &r);
	}
}
