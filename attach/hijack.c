/* hijack.c -- taking over a stopped thread's state and putting it back.
 *
 * att_thread_hijack saves the registers, the FP/vector state and the signal
 * mask, checks the stack and picks the engine (thread.h); att_thread_restore
 * puts back what a call left changed; att_thread_release restores and
 * detaches, so "take over" and "give back" live in this one file.  The scratch
 * allocator lives here because it hands out memory below the red zone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "call.h"
#include "crashpoint.h"
#include "mem.h"
#include "procfs.h"
#include "restorer.h"
#include "retcap.h"
#include "thread.h"

/* Below the red zone: our arguments (scratch), each call's signal frame and
 * the stack frames of the function we call. */
#define SCRATCH_MAX	(16 * 1024)
#define CALLEE_MIN	(32 * 1024)
#define BP_RETRIES	20

/* The stack pointer must lie in a stack whose bounds are known: the main
 * thread's [stack], or a thread stack (an anonymous mapping right above its
 * PROT_NONE guard page, as pthread_create makes them).  Anything else may be
 * a heap block serving as a stack (fibers, coroutines, a malloc'd
 * sigaltstack): writing below its stack pointer could overwrite other
 * objects. */
static int stack_room(struct att_thread *t, uint64_t below, uint64_t *room)
{
	struct att_map *own = NULL;
	const struct att_map *maps = t->maps, *m;
	size_t n = t->nmaps, i;
	int err, known;

	/* The caller's maps snapshot, taken before the thread stopped, when it has one. */
	if (!maps) {
		err = att_proc_maps(t->pid, &own, &n);
		if (err)
			return att_fail(t, err, "reading /proc/%d/maps: %s", (int)t->pid, strerror(-err));
		maps = own;
	}
	m = att_maps_find(maps, n, below - 1);
	i = m ? (size_t)(m - maps) : 0;
	known = m && m->perms[0] == 'r' && m->perms[1] == 'w' &&
		((m->path && !strncmp(m->path, "[stack", 6)) ||
		 (!m->path && i > 0 && maps[i - 1].end == m->start && !strncmp(maps[i - 1].perms, "---", 3)));
	*room = m ? below - m->start : 0;
	if (own)
		att_maps_free(own, n);
	if (!known)
		return att_fail(t, -EFAULT, "tid %d: stack pointer 0x%llx is not in a known stack "
				"(a fiber or heap-allocated stack?)", (int)t->tid,
				(unsigned long long)below);
	if (*room < SCRATCH_MAX + CALLEE_MIN + ARCH_SIGFRAME_MAX)
		return att_fail(t, -ENOSPC, "tid %d: only %llu bytes of stack below its red zone",
				(int)t->tid, (unsigned long long)*room);
	return 0;
}

/* The return-value breakpoint, on the stopped thread.  Its four debug
 * registers may all be taken for a moment by other jemattachs, which arm
 * theirs before they try to seize the thread and close them at once when
 * they find it taken (six at a time on one thread saw ENOSPC): a few more
 * tries then, the thread held up to BP_RETRIES ms longer. */
static int open_retcap(struct att_thread *t)
{
	int err = att_retcap_open(&t->rc, t->tid, t->restorer, t->engine_why, sizeof(t->engine_why));

	for (int i = 0; (err == -ENOSPC || err == -EBUSY) && i < BP_RETRIES; i++) {
		usleep(1000);
		err = att_retcap_open(&t->rc, t->tid, t->restorer, t->engine_why,
				      sizeof(t->engine_why));
	}
	return err;
}

/* Use the self-restoring call unless something it needs is missing; the
 * reason goes to nosf and engine_why. */
static void choose_engine(struct att_thread *t)
{
	t->engine = ATT_ENGINE_SENTINEL;
	if (t->no_sigframe) {
		t->nosf = ATT_NOSF_ASKED;
		snprintf(t->engine_why, sizeof(t->engine_why), "the fallback engine was asked for");
		return;
	}
	/* Callers that hold threads for long find it before seizing. */
	if (!t->restorer && !t->restorer_none &&
	    att_restorer_find(t->pid, t->maps, t->nmaps, &t->restorer))
		t->restorer = 0;
	if (!t->restorer) {
		t->nosf = ATT_NOSF_TRAMPOLINE;
		snprintf(t->engine_why, sizeof(t->engine_why), "process %d has no rt_sigreturn "
			 "trampoline (__restore_rt)", (int)t->pid);
		return;
	}
	if (arch_sigframe_refuses(&t->saved_gp)) {
		t->nosf = ATT_NOSF_RESTART;
		snprintf(t->engine_why, sizeof(t->engine_why), "tid %d is stopped in restart_syscall",
			 (int)t->tid);
		return;
	}
	if (t->rc.fd < 0 && open_retcap(t)) {
		t->nosf = ATT_NOSF_BREAKPOINT;
		return;
	}
	t->engine = ATT_ENGINE_SIGFRAME;
	t->nosf = ATT_NOSF_NONE;
	t->engine_why[0] = '\0';
}

int att_thread_hijack(struct att_thread *t)
{
	uint64_t all = ~0ULL, below, room = 0;
	int err;

	if (t->hijacked)
		return 0;
	if (!t->stopped)
		return att_fail(t, -ESRCH, "tid %d is not stopped", (int)t->tid);
	if (!t->saved_ext && !(t->saved_ext = malloc(sizeof(*t->saved_ext))))
		return att_fail(t, -ENOMEM, "out of memory");
	err = arch_gpregs_get(t->tid, &t->saved_gp);
	if (err)
		return att_fail(t, err, "reading registers of tid %d: %s", (int)t->tid, strerror(-err));
	err = arch_extregs_get(t->tid, t->saved_ext);
	if (err)
		return att_fail(t, err, "reading FP/vector state of tid %d: %s", (int)t->tid,
				strerror(-err));
	/* Size 8 = the kernel's sigset_t; glibc's is larger. */
	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(uint64_t), &t->saved_sigmask) < 0) {
		err = -errno;
		return att_fail(t, err, "PTRACE_GETSIGMASK tid %d: %s", (int)t->tid, strerror(-err));
	}
	below = (arch_sp(&t->saved_gp) - ARCH_RED_ZONE) & ~(uint64_t)15;
	err = stack_room(t, below, &room);
	if (err)
		return err;
	choose_engine(t);
	if (t->engine == ATT_ENGINE_SENTINEL && t->sigframe_only)
		return att_fail(t, -ENOTSUP, "tid %d: the self-restoring call cannot be used: %s",
				(int)t->tid, t->engine_why);
	t->resume_gp = t->saved_gp;
	/* Whether a signal waits matters only for an EINTR, which
	 * att_thread_seize has usually turned into a restart already: /proc
	 * is read only when it still matters. */
	if (!arch_restart_adjust(&t->resume_gp, &t->sc_note, t->engine == ATT_ENGINE_SIGFRAME, 0)) {
		struct arch_gpregs r = t->resume_gp;

		if (arch_restart_adjust(&r, &t->sc_note, t->engine == ATT_ENGINE_SIGFRAME, 1) &&
		    !att_thread_signal_waiting(t, t->saved_sigmask))
			t->resume_gp = r;
	}
	if (t->engine == ATT_ENGINE_SENTINEL) {
		att_log(t, ATT_LOG_INFO, "tid %d: fallback call engine: %s", (int)t->tid, t->engine_why);
		/* Pending signals stay pending and are delivered after the restore. */
		if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(uint64_t), &all) < 0) {
			err = -errno;
			return att_fail(t, err, "PTRACE_SETSIGMASK tid %d: %s", (int)t->tid, strerror(-err));
		}
	}
	t->scratch_top = below;
	t->scratch_cur = below;
	t->scratch_floor = below - SCRATCH_MAX;
	t->hijacked = 1;
	att_crashpoint("hijacked");
	return 0;
}

/* Put registers, FP state and mask back by hand: the fallback engine, or a
 * self-restoring call that faulted. */
static int restore_direct(struct att_thread *t)
{
	int err = 0, e;

	e = arch_gpregs_set(t->tid, &t->resume_gp);
	if (e)
		err = att_fail(t, e, "restoring registers of tid %d: %s", (int)t->tid, strerror(-e));
	e = arch_extregs_set(t->tid, t->saved_ext);
	if (e && !err)
		err = att_fail(t, e, "restoring FP/vector state of tid %d: %s", (int)t->tid,
			       strerror(-e));
	/* PTRACE_GETSIGMASK returned the mask a sigsuspend/ppoll would restore;
	 * setting it clears the restore flag, and the interrupted syscall is
	 * restarted with its own temporary mask (see CRIU's use of the pair). */
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(uint64_t), &t->saved_sigmask) < 0 && !err) {
		e = -errno;
		err = att_fail(t, e, "PTRACE_SETSIGMASK tid %d: %s", (int)t->tid, strerror(-e));
	}
	return err;
}

int att_thread_restore(struct att_thread *t)
{
	int err = 0;

	if (!t->hijacked)
		return 0;
	/* Kept stopped (--freeze): the thread is to be as it was now. */
	if (!t->gone && !t->left_running)
		err = att_call_settle(t);
	if (!t->gone && !t->left_running) {
		if (t->engine == ATT_ENGINE_SENTINEL || t->in_call)
			err = restore_direct(t);
		/* Between calls every rt_sigreturn already put the state back;
		 * only the restart adjustment may be left to apply. */
		else if ((err = arch_gpregs_set(t->tid, &t->resume_gp)))
			att_fail(t, err, "restoring registers of tid %d: %s", (int)t->tid,
				 strerror(-err));
	}
	att_retcap_close(&t->rc);
	t->in_call = 0;
	t->hijacked = 0;
	att_crashpoint("restored");
	return err;
}
uint64_t att_scratch_alloc(struct att_thread *t, size_t len, size_t align)
{
	uint64_t a;

	if (!t->hijacked) {
		att_fail(t, -EINVAL, "scratch memory requested before hijack");
		return 0;
	}
	/* The last call's frame may lie where this goes: its rt_sigreturn first. */
	if (att_call_settle(t))
		return 0;
	if (align < 1)
		align = 1;
	if (len > t->scratch_cur - t->scratch_floor) {
		att_fail(t, -ENOSPC, "tid %d: %zu bytes do not fit in the scratch area", (int)t->tid, len);
		return 0;
	}
	a = (t->scratch_cur - len) & ~(uint64_t)(align - 1);
	if (a < t->scratch_floor) {
		att_fail(t, -ENOSPC, "tid %d: %zu bytes do not fit in the scratch area", (int)t->tid, len);
		return 0;
	}
	t->scratch_cur = a;
	return a;
}

uint64_t att_scratch_push(struct att_thread *t, const void *data, size_t len, size_t align)
{
	uint64_t a = att_scratch_alloc(t, len, align);
	int err;

	if (!a)
		return 0;
	err = att_mem_write(t->pid, a, data, len);
	if (err) {
		att_fail(t, err, "writing scratch memory of tid %d: %s", (int)t->tid, strerror(-err));
		return 0;
	}
	return a;
}

void att_scratch_reset(struct att_thread *t)
{
	t->scratch_cur = t->scratch_top;
}

int att_thread_release(struct att_thread *t)
{
	int err = 0, e;

	if (t->hijacked && !t->gone && !t->stopped) {
		/* Still running our code (a timeout path that could not stop it
		 * yet): it must stop before its registers can be put back. */
		e = att_thread_interrupt(t, 30000);
		if (e && !t->gone)
			err = att_fail(t, e, "tid %d could not be stopped to restore it: %s",
				       (int)t->tid, strerror(-e));
	}
	if (t->hijacked && t->sigret_pending && !t->gone) {
		/* At our frame's rt_sigreturn entry: detached, the thread goes on
		 * and restores itself (what our death would let it do).  The
		 * breakpoint is closed after the detach (att_thread_detach): it
		 * only samples, and closing it costs the stopped thread time. */
		t->hijacked = 0;
		att_crashpoint("restored");
	} else if (t->hijacked) {
		e = att_thread_restore(t);
		if (e && !err)
			err = e;
	}
	e = att_thread_detach(t);
	t->sigret_pending = 0;
	t->in_call = 0;
	if (e && !err)
		err = e;
	free(t->saved_ext);
	t->saved_ext = NULL;
	return err;
}
