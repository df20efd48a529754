/* thread.h -- one traced thread: seize, hijack, call, restore, release.
 *
 * Life of a thread in our hands:
 *
 *   att_thread_init -> att_thread_seize -> att_thread_hijack -> att_call ... ->
 *   att_thread_restore -> att_thread_release (restore + att_thread_detach)
 *
 * Only the seized thread stops; the rest of the process keeps running.  Every
 * change made to the thread (registers, FP state, signal mask) is undone by
 * att_thread_restore, which att_thread_release also calls, so one call to
 * release undoes everything on any path.  Memory below the red zone that a
 * call used is not written back: it is dead stack (and writing back a saved
 * copy would revert other threads' writes when the "stack" is a heap block).
 * A thread stopped by us in an interface that reports EINTR after any stop
 * (epoll_wait, accept with SO_RCVTIMEO...) resumes restarting that call.
 */
#ifndef ATTACH_THREAD_H
#define ATTACH_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "clock.h"
#include "retcap.h"

enum { ATT_LOG_ERR, ATT_LOG_WARN, ATT_LOG_INFO, ATT_LOG_DEBUG };

/* How calls run (call.h).  SIGFRAME: each call returns through the target's
 * rt_sigreturn into a signal frame holding the thread's own state, so it
 * restores itself even if we die.  SENTINEL (the fallback, when the target
 * has no trampoline, perf breakpoints are unavailable or the thread is in
 * restart_syscall: enum att_nosigframe; a caller may forbid it with
 * sigframe_only): returns fault in page 0 and we put the state back; our
 * death mid-call kills the target. */
enum { ATT_ENGINE_SIGFRAME = 1, ATT_ENGINE_SENTINEL };

/* Why the self-restoring engine cannot be used (engine_why says it in words). */
enum att_nosigframe {
	ATT_NOSF_NONE,
	ATT_NOSF_ASKED,		/* no_sigframe */
	ATT_NOSF_TRAMPOLINE,	/* the process has no rt_sigreturn trampoline */
	ATT_NOSF_RESTART,	/* this thread is stopped in restart_syscall */
	ATT_NOSF_BREAKPOINT,	/* the return-value breakpoint cannot be set */
};

typedef void (*att_log_fn)(void *arg, int level, const char *msg);
/* Describe a code address ("mallctl+0x12 in /usr/lib/libjemalloc.so.2"). */
typedef void (*att_sym_fn)(void *arg, uint64_t addr, char *buf, size_t len);

struct att_map;

struct att_thread {
	pid_t pid, tid;
	int seized;		/* we are its tracer */
	int stopped;		/* it sits in a ptrace-stop now */
	int group_stopped;	/* it was (or got) group-stopped: stays stopped after detach */
	int pending_sig;	/* stop signal that arrived during a call: handed back at detach */
	int gone;		/* exited (or the whole process did) */
	int deferring;		/* holds a reference on defer.h's deferral */
	int exit_status;	/* wait status when gone */
	/* The stop the target feels, bounded from outside: stop_ns just before
	 * PTRACE_INTERRUPT (it cannot stop earlier), run_ns just after
	 * PTRACE_DETACH returned (it runs again by then).  att_now_ns clock. */
	int64_t stop_ns, run_ns;
	/* /proc/PID/maps as the caller read it before the stop (NULL: none):
	 * hijack looks for the stack there rather than reading the maps while
	 * the thread is stopped (milliseconds with a thousand thread stacks). */
	const struct att_map *maps;
	size_t nmaps;

	/* hijack.c: what att_thread_restore puts back */
	int hijacked;
	int engine;		/* ATT_ENGINE_*, chosen by att_thread_hijack */
	int no_sigframe;	/* set by the caller: use the fallback engine */
	/* Set by the caller: never fall back; hijack fails with -ENOTSUP
	 * instead, leaving the thread as it was (see nosf). */
	int sigframe_only;
	int nosf;		/* enum att_nosigframe: why the fallback engine was (or would be) used */
	char engine_why[200];	/* ... in words */
	int in_call;		/* our registers are in the thread */
	int left_running;	/* a self-restoring call left to finish on its own */
	int sigret_pending;	/* stopped at our frame's rt_sigreturn entry (att_call_settle) */
	struct arch_gpregs saved_gp;	/* as stopped */
	struct arch_gpregs resume_gp;	/* saved_gp with the restart adjustment */
	struct arch_extregs *saved_ext;
	uint64_t saved_sigmask;
	struct arch_sc_note sc_note;	/* taken before each stop (arch_syscall_note) */
	uint64_t restorer;	/* rt_sigreturn trampoline (restorer.h); 0: hijack finds it */
	int restorer_none;	/* set by the caller: it searched, there is none (no
				 * second search with the thread stopped) */
	struct att_retcap rc;	/* the return-value breakpoint */
	uint64_t scratch_top, scratch_cur, scratch_floor;

	char err[768];		/* the last error message */
	att_log_fn log;
	void *log_arg;
	int log_level;
	att_sym_fn sym;
	void *sym_arg;
};

void att_thread_init(struct att_thread *t, pid_t pid, pid_t tid);

/* PTRACE_SEIZE + PTRACE_INTERRUPT; waits up to @timeout_ms for the stop.
 * Signals that arrive first are delivered as if we were not there.  Deferral
 * of our own SIGINT/SIGTERM/SIGHUP/SIGPIPE starts here (defer.h). */
int att_thread_seize(struct att_thread *t, int timeout_ms);

/* If our stop made the thread's system call fail with EINTR (and no signal
 * of its own is waiting), make it restart that call instead.  Seize calls it
 * as soon as the thread stops, detach again. */
void att_thread_fix_eintr(struct att_thread *t);
/* A signal that @mask does not block is pending for the thread. */
int att_thread_signal_waiting(const struct att_thread *t, uint64_t mask);

/* Detach only (nothing hijacked, or already restored); the thread resumes
 * from its ptrace-stop, or stays group-stopped if it was. */
int att_thread_detach(struct att_thread *t);

/* Undo everything (att_thread_restore, hijack.c) and detach; the thread
 * resumes as it was (still group-stopped if it was).  Returns the first
 * failure to restore. */
int att_thread_release(struct att_thread *t);

/* Save registers, FP state and signal mask; check the stack pointer lies in
 * a known stack (-EFAULT otherwise); choose the engine.  The fallback engine
 * blocks all signals here; the sigframe engine changes nothing until a call.
 * Undone by att_thread_restore.  With sigframe_only, -ENOTSUP (t->nosf and
 * t->engine_why say why) where the fallback engine would be chosen: nothing
 * was changed, the caller releases the thread. */
int att_thread_hijack(struct att_thread *t);
int att_thread_restore(struct att_thread *t);

/* Scratch memory on the thread's stack below the red zone, valid until
 * att_scratch_reset or restore.  Returns the remote address, or 0 with t->err
 * set when the stack has no room. */
uint64_t att_scratch_push(struct att_thread *t, const void *data, size_t len, size_t align);
uint64_t att_scratch_alloc(struct att_thread *t, size_t len, size_t align);
void att_scratch_reset(struct att_thread *t);

/* Wait for the next stop or exit of @t, until @deadline_ns (CLOCK_MONOTONIC).
 * Returns 0 with *status, -ETIMEDOUT, or, when @interruptible, -EINTR as soon
 * as one of our deferred signals is pending. */
int att_wait(struct att_thread *t, int64_t deadline_ns, int *status, int interruptible);

/* Stop a running seized thread again (after a timeout). */
int att_thread_interrupt(struct att_thread *t, int timeout_ms);

int att_fail(struct att_thread *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void att_log(const struct att_thread *t, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "SIGSEGV" for SIGSEGV; "signal 40" for the rest. */
const char *att_signame(int sig, char *buf, size_t len);

#endif
