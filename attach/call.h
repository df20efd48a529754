/* call.h -- running a function inside a hijacked thread.
 *
 * No code is written into the target and no system call is injected: the
 * thread's registers are pointed at the function.  Two engines (thread.h):
 *
 * - sigframe (CRIU compel's "cure" path, without a parasite): below the red
 *   zone sits a kernel-format signal frame holding the thread's own state,
 *   and the return address is the target's rt_sigreturn trampoline.  When the
 *   function returns, rt_sigreturn restores registers, FP state and signal
 *   mask, with us or without us.  Steps, in this order: frame, registers,
 *   signal mask, so that our death between any two leaves either the
 *   original state or a call that ends by restoring it.  We follow it with
 *   PTRACE_SYSCALL: the return value comes from a perf breakpoint on the
 *   trampoline (retcap.h), and its rt_sigreturn, when we see it complete
 *   (att_call_settle), is checked to land where the thread was.  A callback
 *   is the sink (sink.h), the target's own getpid: each call of it is
 *   served at its system call's entry, and without us the text is dropped.
 *   Text the function writes to fd 2 (jemalloc's default writer) is taken
 *   at the write's syscall entry and the write is made to fail harmlessly
 *   (fd -1) while it returns its length: without us the text lands on the
 *   target's stderr.
 * - sentinel (fallback): the return address is a sentinel in page 0 and
 *   returning faults there; a second sentinel stands in for a callback
 *   function pointer, each call of it faults, the tracer serves it and
 *   emulates the return.  Our death mid-call kills the target.
 */
#ifndef ATTACH_CALL_H
#define ATTACH_CALL_H

#include <stdint.h>

#include "thread.h"

/* Both lie in page 0, which no process can map while vm.mmap_min_addr >= 4096
 * (att_call_check_sentinels checks). */
#define ATT_RET_SENTINEL	0x120ULL
#define ATT_CB_SENTINEL		0x240ULL

/* Serve one call of the callback sentinel.  @args are its integer arguments;
 * set *retval.  A non-zero return marks the call as failed, but the remote
 * function still runs to its end (abandoning it could leave a lock held):
 * later callbacks are then answered with 0 without calling back. */
typedef int (*att_cb_fn)(struct att_thread *t, const uint64_t args[ARCH_NARGS], uint64_t *retval,
			 void *arg);

struct att_call {
	uint64_t fn;
	uint64_t args[ARCH_NARGS];
	unsigned nargs;
	att_cb_fn cb;		/* NULL: the callback sentinel is a fault like any other */
	void *cb_arg;
	/* Sigframe engine: the callback argument holds this sink (sink.h), and
	 * its first argument ATT_SINK_COOKIE: @cb serves each call of it (its
	 * *retval is not used: the sink returns what it returns).  0: none. */
	uint64_t sink;
	/* The sigframe engine restarts it at each piece of the text it takes
	 * (the sink, or fd 2 when that is where the text goes), never past
	 * @total_ms from the call's start: stray writes to fd 2 while the text
	 * goes to the sink are no progress.  @total_ms below @timeout_ms (0):
	 * no restart at all. */
	int timeout_ms;
	int total_ms;
	/* When the timeout expires and the thread is not waiting on a futex --
	 * it is still working, or blocked in I/O, possibly holding locks -- it is
	 * given this much longer before being abandoned.  0: abandon at once. */
	int grace_ms;
	/* Sigframe engine: writes of the function to fd 2 go here instead
	 * (NULL: they happen). */
	int (*on_write)(struct att_thread *t, const char *buf, size_t len, void *arg);
	void *write_arg;
};

/* Run @c in @t, which must be hijacked.  Returns 0 and the function's return
 * value in *retval; -ETIMEDOUT when it did not return in time: with the
 * sigframe engine the call is left to finish on its own (t->left_running;
 * release only detaches; taking it back could leave a jemalloc lock held),
 * with the fallback engine the thread is stopped again, still hijacked, and
 * release restores it; t->err says where it was blocked.  A deferred signal
 * of ours arriving during a sigframe call leaves it running the same way
 * (-EINTR).  -EINTR, without starting, when one of our deferred signals is
 * pending (with the fallback engine one that arrives during the call lets
 * it finish); -EFAULT on any
 * unexpected stop (t->err says which
 * signal, where, and in which symbol); -ESRCH if the thread or process exited;
 * the callback's error if it failed. */
int att_call(struct att_thread *t, const struct att_call *c, uint64_t *retval);

/* After a sigframe call the thread is left at the entry of its rt_sigreturn
 * (t->sigret_pending), where going on restores it -- as our death would:
 * the last call of a command needs no further stop, release just detaches
 * (one round trip less with the thread stopped).  Anything else that would
 * touch the thread or the stack below it first lets the rt_sigreturn run
 * with this, and checks that it landed where the thread was.  0 when
 * nothing was pending. */
int att_call_settle(struct att_thread *t);

/* Refuse to run calls when page 0 could be mapped in process @pid, whose
 * /proc/PID/maps snapshot is @maps: -EPERM with the reason in @msg.  Needs no
 * stopped thread. */
int att_call_check_sentinels(pid_t pid, const struct att_map *maps, size_t n, char *msg,
			     size_t len);

#endif
