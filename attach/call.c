/* call.c -- the remote function call loop (see call.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "call.h"
#include "crashpoint.h"
#include "defer.h"
#include "mem.h"
#include "procfs.h"
#include "retcap.h"
#include "sink.h"

int att_call_check_sentinels(pid_t pid, const struct att_map *maps, size_t n, char *msg,
			     size_t len)
{
	char *buf;
	unsigned long min;
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
	if (att_maps_find(maps, n, ATT_RET_SENTINEL) || att_maps_find(maps, n, ATT_CB_SENTINEL)) {
		snprintf(msg, len, "page 0 is mapped in process %d", (int)pid);
		return -EPERM;
	}
	return 0;
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
	nr = arch_stopped_syscall(&r, &t->sc_note);
	sc = nr >= 0 ? arch_syscall_name(nr) : NULL;
	describe(t, arch_pc(&r), sym, sizeof(sym));
	if (nr >= 0)
		snprintf(buf, len, "syscall %s in %s", sc ? sc : "?", sym);
	else
		snprintf(buf, len, "%s", sym);
	return nr;
}

/* The call did not finish in time (@why -ETIMEDOUT), or we were told to stop
 * (-EINTR): get the thread stopped.  With @leave (the sigframe engine) just
 * long enough to detach: the call is left to finish and restore the thread
 * itself, as taking it back could leave a lock held.  Otherwise release
 * restores it. */
static int overdue(struct att_thread *t, int timeout_ms, int why, int leave)
{
	char where[320];
	int err = att_thread_interrupt(t, 30000);

	if (t->gone)
		return exit_error(t);
	if (err)
		return att_fail(t, err, "tid %d: could not stop it after the timeout: %s", (int)t->tid,
				strerror(-err));
	where_stopped(t, where, sizeof(where));
	if (!leave)
		return att_fail(t, -ETIMEDOUT, "tid %d: the call did not return within %d ms; it "
				"was blocked in %s", (int)t->tid, timeout_ms, where);
	t->left_running = 1;
	if (why == -EINTR)
		return att_fail(t, why, "tid %d: signal received during the call (blocked in %s); "
				"the call was left to finish on its own: it restores the thread "
				"when it returns", (int)t->tid, where);
	return att_fail(t, -ETIMEDOUT, "tid %d: the call did not return within %d ms; it was "
			"blocked in %s; it was left to finish on its own and restores the thread "
			"when it returns", (int)t->tid, timeout_ms, where);
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

/* Call the caller's callback, unless one failed before (the function still
 * runs to its end: call.h); the first failure, whose message stays in
 * t->err, is the call's. */
static void run_cb(struct att_thread *t, const struct att_call *c, const uint64_t *args,
		   uint64_t *retval, int *cb_err)
{
	if (!*cb_err)
		*cb_err = c->cb(t, args, retval, c->cb_arg);
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
	run_cb(t, c, args, &retval, cb_err);
	arch_emulate_return(r, ret_word, retval);
	return arch_gpregs_set(t->tid, r);
}

/* A stop at the entry of the sink's system call: when it is our callback
 * (the cookie in its first argument), hand its arguments to the caller.  The
 * system call then runs as it would without us. */
static void serve_sink(struct att_thread *t, const struct att_call *c, const struct arch_gpregs *r,
		       int *cb_err)
{
	uint64_t args[ARCH_NARGS], ignored = 0;

	arch_args(r, args);
	if (args[0] != ATT_SINK_COOKIE) {
		att_log(t, ATT_LOG_DEBUG, "tid %d: the call itself makes the sink's system call",
			(int)t->tid);
		return;
	}
	att_crashpoint("text");
	run_cb(t, c, args, &ignored, cb_err);
}

/* Text jemalloc hands write_cb is at most 64 KiB (5.3) or a line; bound what
 * we read from the target. */
#define WRITE_MAX	(4 * 1024 * 1024)

/* Resume the stopped thread with @req (PTRACE_CONT or PTRACE_SYSCALL). */
static int resume(struct att_thread *t, int req)
{
	int status, err;

	t->stopped = 0;
	if (ptrace(req, t->tid, 0, 0) == 0)
		return 0;
	err = -errno;
	if (err == -ESRCH) {
		/* Killed between stops: collect the exit. */
		att_wait(t, att_now_ns() + 1000000000, &status, 0);
		return exit_error(t);
	}
	return att_fail(t, err, "%s tid %d: %s", req == PTRACE_SYSCALL ? "PTRACE_SYSCALL" : "PTRACE_CONT",
			(int)t->tid, strerror(-err));
}

/* A wait during a call returned @err and @status: 1 when it needs nothing from
 * the call loop (another thread started a group stop: finish the call, the
 * kernel puts this thread back into the stop at detach; a stop signal, which
 * cannot be blocked: kept for detach so the process still stops), -ESRCH
 * when the thread is gone, -errno when the wait failed, else 0 with its
 * registers in @r. */
static int call_stop(struct att_thread *t, int err, int status, struct arch_gpregs *r)
{
	int sig = WSTOPSIG(status);

	if (err)
		return att_fail(t, err, "waiting for tid %d: %s", (int)t->tid, strerror(-err));
	if (t->gone)
		return exit_error(t);
	if ((status >> 16) == PTRACE_EVENT_STOP) {
		if (sig != SIGTRAP)
			t->group_stopped = 1;
		return 1;
	}
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		t->pending_sig = sig;
		return 1;
	}
	if ((err = arch_gpregs_get(t->tid, r)))
		return att_fail(t, err, "tid %d: reading registers: %s", (int)t->tid, strerror(-err));
	return 0;
}

/* A write(2, buf, len) of the function: hand its text over, turn it into a
 * write to fd -1 (EBADF, no effect, still a write for seccomp) and remember
 * the length to return at its exit. */
static int take_write(struct att_thread *t, const struct att_call *c, struct arch_gpregs *r,
		      long *write_len, int *cb_err)
{
	size_t len = (size_t)arch_syscall_arg(r, 2);
	char *buf;
	int err;

	if (len > WRITE_MAX)
		len = WRITE_MAX;
	buf = malloc(len ? len : 1);
	if (!buf)
		return att_fail(t, -ENOMEM, "out of memory");
	err = att_mem_read(t->pid, (uint64_t)arch_syscall_arg(r, 1), buf, len);
	/* After a failed callback the function still runs to its end (call.h);
	 * its message stays in t->err. */
	if (!err && !*cb_err)
		*cb_err = c->on_write(t, buf, len, c->write_arg);
	free(buf);
	if (err)
		return att_fail(t, err, "tid %d: reading written text: %s", (int)t->tid, strerror(-err));
	*write_len = arch_syscall_arg(r, 2);
	arch_syscall_set_arg(r, 0, -1);
	att_crashpoint("write");
	return arch_gpregs_set(t->tid, r);
}

/* Frame, registers, signal mask: in this order (call.h). */
static int start_sigframe(struct att_thread *t, const struct att_call *c, uint64_t *base)
{
	struct arch_gpregs r = t->resume_gp;
	uint64_t push_addr, push_val, all = ~0ULL;
	unsigned char *frame = malloc(ARCH_SIGFRAME_MAX);
	size_t len;
	int npush, err;

	if (!frame)
		return att_fail(t, -ENOMEM, "out of memory");
	len = arch_sigframe_build(&t->resume_gp, t->saved_ext, t->saved_sigmask, t->scratch_cur,
				  t->restorer, frame, ARCH_SIGFRAME_MAX, base);
	err = len ? att_mem_write(t->pid, *base, frame, len) : -ENOSPC;
	free(frame);
	if (err)
		return att_fail(t, err, "tid %d: writing the signal frame: %s", (int)t->tid,
				strerror(-err));
	att_crashpoint("frame");
	arch_call_prepare(&r, c->fn, c->args, c->nargs, arch_sigframe_ret_sp(*base), t->restorer,
			  &push_addr, &push_val, &npush);
	if (npush && (push_addr != *base || push_val != t->restorer))
		return att_fail(t, -EINVAL, "tid %d: the frame is not where the call returns",
				(int)t->tid);
	att_retcap_drain(&t->rc);
	if ((err = arch_gpregs_set(t->tid, &r)))
		return att_fail(t, err, "tid %d: setting registers: %s", (int)t->tid, strerror(-err));
	t->in_call = 1;
	att_crashpoint("regs");
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(all), &all) < 0) {
		err = -errno;
		return att_fail(t, err, "PTRACE_SETSIGMASK tid %d: %s", (int)t->tid, strerror(-err));
	}
	att_crashpoint("mask");
	return 0;
}

int att_call_settle(struct att_thread *t)
{
	int64_t deadline = att_now_ns() + 30000 * (int64_t)1000000;

	if (!t->sigret_pending)
		return 0;
	t->sigret_pending = 0;
	for (;;) {
		struct __ptrace_syscall_info si;
		struct arch_gpregs r;
		int status, err;

		if ((err = resume(t, PTRACE_SYSCALL)))
			return err;
		err = att_wait(t, deadline, &status, 0);
		if (err == -ETIMEDOUT)
			return att_fail(t, err, "tid %d: rt_sigreturn did not complete", (int)t->tid);
		err = call_stop(t, err, status, &r);
		if (err > 0)
			continue;
		if (err)
			return err;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80))
			return unexpected_stop(t, status, &r);
		if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) <= 0)
			return att_fail(t, -errno, "PTRACE_GET_SYSCALL_INFO tid %d: %s", (int)t->tid,
					strerror(errno));
		if (si.op != PTRACE_SYSCALL_INFO_EXIT)
			continue;
		if (!arch_same_state(&r, &t->resume_gp))
			return att_fail(t, -EFAULT, "tid %d: rt_sigreturn did not restore the thread "
					"(pc 0x%llx)", (int)t->tid, (unsigned long long)arch_pc(&r));
		t->in_call = 0;
		return 0;
	}
}

/* The deadline after a piece of text: one timeout from now, never past
 * @last, the call's whole bound. */
static int64_t progress(const struct att_call *c, int64_t last)
{
	int64_t d = att_now_ns() + (int64_t)c->timeout_ms * 1000000;

	return d < last ? d : last;
}

/* The sigframe engine's loop: syscall stops until the entry of our frame's
 * rt_sigreturn, where the thread is left (t->sigret_pending): going on
 * restores it, which the next call or the release lets it do. */
static int call_sigframe(struct att_thread *t, const struct att_call *c, uint64_t *retval)
{
	uint64_t base = 0;
	long write_len = -1;
	int err, cb_err = 0, interrupted = 0;
	int64_t deadline, last;

	if ((err = start_sigframe(t, c, &base)))
		return err;
	deadline = att_now_ns() + (int64_t)c->timeout_ms * 1000000;
	last = deadline + (int64_t)(c->total_ms > c->timeout_ms ? c->total_ms - c->timeout_ms : 0) *
	       1000000;
	for (;;) {
		struct __ptrace_syscall_info si;
		struct arch_gpregs r;
		int status;

		if ((err = resume(t, PTRACE_SYSCALL)))
			return err;
		err = att_wait(t, deadline, &status, !interrupted);
		if (err == -ETIMEDOUT || err == -EINTR)
			return overdue(t, deadline == last && c->total_ms > c->timeout_ms ?
				       c->total_ms : c->timeout_ms, err, 1);
		err = call_stop(t, err, status, &r);
		if (err > 0)
			continue;
		if (err)
			return err;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(si), &si) <= 0)
				return att_fail(t, -errno, "PTRACE_GET_SYSCALL_INFO tid %d: %s",
						(int)t->tid, strerror(errno));
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
				if (arch_at_sigreturn(&r, t->restorer, base)) {
					uint64_t sp = arch_sigframe_ret_sp(base);
					int have_ret = att_retcap_take(&t->rc, sp, retval) == 0;

					/* No sample (seen on arm64 under qemu TCG with
					 * signals arriving): the registers, where the
					 * trampoline leaves the value. */
					if (!have_ret && arch_sigreturn_retval(&r, retval)) {
						have_ret = 1;
						att_log(t, ATT_LOG_DEBUG, "tid %d: no breakpoint sample; "
							"the return value from the registers at "
							"rt_sigreturn", (int)t->tid);
					}

					t->sigret_pending = 1;
					att_crashpoint("sigreturn");
					if (have_ret)
						return cb_err;
					if ((err = att_call_settle(t)))
						return err;
					return att_fail(t, -EIO, "tid %d: the call returned but its "
							"return value was not sampled", (int)t->tid);
				} else if (c->sink && c->cb && arch_at_sink(&r, c->sink)) {
					serve_sink(t, c, &r, &cb_err);
					/* Progress, as a write below, while the text is wanted. */
					if (!cb_err)
						deadline = progress(c, last);
				} else if (c->on_write && arch_syscall_nr(&r) == arch_syscall_write_nr() &&
					   arch_syscall_arg(&r, 0) == 2) {
					if ((err = take_write(t, c, &r, &write_len, &cb_err)))
						return err;
					/* Output is progress, not a lock wait: jemalloc before 5.3
					 * writes a stats report a line at a time (thousands of
					 * writes), so the timeout counts from the last one --
					 * while the text is wanted: once the callback refused it
					 * (too much, too long) writing on is no progress, and
					 * neither are writes beside a text that goes to the
					 * sink (a function that floods fd 2 would otherwise
					 * run for ever). */
					if (!cb_err && !c->sink)
						deadline = progress(c, last);
				} else {
					att_log(t, ATT_LOG_DEBUG, "tid %d: the call makes system call %ld",
						(int)t->tid, arch_syscall_nr(&r));
					att_crashpoint("syscall");
				}
				continue;
			}
			if (write_len >= 0) {
				arch_set_retval(&r, (uint64_t)write_len);
				write_len = -1;
				if ((err = arch_gpregs_set(t->tid, &r)))
					return att_fail(t, err, "tid %d: setting registers: %s",
							(int)t->tid, strerror(-err));
			}
			continue;
		}
		/* The callback sentinel, when the caller could not use fd 2. */
		if (WSTOPSIG(status) == SIGSEGV && arch_pc(&r) == ATT_CB_SENTINEL && c->cb) {
			if ((err = serve_callback(t, c, &r, &cb_err)))
				return err;
			continue;
		}
		return unexpected_stop(t, status, &r);
	}
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
	if ((err = att_call_settle(t)))
		return err;
	if (t->engine == ATT_ENGINE_SIGFRAME)
		return call_sigframe(t, c, retval);
	arch_call_prepare(&r, c->fn, c->args, c->nargs, t->scratch_cur, ATT_RET_SENTINEL,
			  &push_addr, &push_val, &npush);
	if (npush && push_addr < t->scratch_floor - 64)
		return att_fail(t, -ENOSPC, "tid %d: no stack left for the call", (int)t->tid);
	if (npush && (err = att_mem_write(t->pid, push_addr, &push_val, sizeof(push_val))))
		return att_fail(t, err, "tid %d: writing the return address: %s", (int)t->tid,
				strerror(-err));
	if ((err = arch_gpregs_set(t->tid, &r)))
		return att_fail(t, err, "tid %d: setting registers: %s", (int)t->tid, strerror(-err));
	t->in_call = 1;

	deadline = att_now_ns() + (int64_t)c->timeout_ms * 1000000;
	for (;;) {
		int status;

		if ((err = resume(t, PTRACE_CONT)))
			return err;
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
			return overdue(t, c->timeout_ms, -ETIMEDOUT, 0);
		err = call_stop(t, err, status, &r);
		if (err > 0)
			continue;
		if (err)
			return err;
		if (WSTOPSIG(status) == SIGSEGV && arch_pc(&r) == ATT_RET_SENTINEL) {
			*retval = arch_retval(&r);
			t->in_call = 0;
			return cb_err;
		}
		if (WSTOPSIG(status) == SIGSEGV && arch_pc(&r) == ATT_CB_SENTINEL && c->cb) {
			if ((err = serve_callback(t, c, &r, &cb_err)))
				return err;
			continue;
		}
		return unexpected_stop(t, status, &r);
	}
}
