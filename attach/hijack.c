/* hijack.c -- taking over a stopped thread's state and putting it back.
 *
 * Everything att_thread_hijack changes is undone by att_thread_restore, in
 * reverse order: the stack window, the registers, the FP/vector state and the
 * signal mask; att_thread_release restores and detaches, so the pair of
 * "take over" and "give back" lives in this one file.  The scratch allocator lives here because it hands out memory
 * inside the saved window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "mem.h"
#include "procfs.h"
#include "thread.h"

/* How much of the stack below the red zone we save and may use: room for our
 * arguments (scratch) and for the stack frames of the function we call. */
#define WINDOW_MAX	(64 * 1024)
#define SCRATCH_MAX	(16 * 1024)
#define CALLEE_MIN	(16 * 1024)

static int stack_window(struct att_thread *t, uint64_t below, uint64_t *lo)
{
	struct att_map *maps = NULL;
	const struct att_map *m = t->maps ? att_maps_find(t->maps, t->nmaps, below - 1) : NULL;
	size_t n = 0;
	int err = 0;

	if (!m && !(err = att_proc_maps(t->pid, &maps, &n)))
		m = att_maps_find(maps, n, below - 1);
	if (err)
		return att_fail(t, err, "reading /proc/%d/maps: %s", (int)t->pid, strerror(-err));
	if (!m || m->perms[0] != 'r' || m->perms[1] != 'w') {
		att_maps_free(maps, n);
		return att_fail(t, -EFAULT, "tid %d: stack pointer 0x%llx is not in a writable mapping",
				(int)t->tid, (unsigned long long)below);
	}
	*lo = below - m->start > WINDOW_MAX ? below - WINDOW_MAX : m->start;
	att_maps_free(maps, n);
	if (below - *lo < CALLEE_MIN + 1024)
		return att_fail(t, -ENOSPC, "tid %d: only %llu bytes of stack below its red zone",
				(int)t->tid, (unsigned long long)(below - *lo));
	return 0;
}

int att_thread_hijack(struct att_thread *t)
{
	uint64_t all = ~0ULL, below, lo = 0;
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
	err = stack_window(t, below, &lo);
	if (err)
		return err;
	t->win_len = below - lo;
	t->win_addr = lo;
	t->win = malloc(t->win_len);
	if (!t->win)
		return att_fail(t, -ENOMEM, "out of memory");
	err = att_mem_read(t->pid, lo, t->win, t->win_len);
	if (err) {
		att_fail(t, err, "saving the stack of tid %d: %s", (int)t->tid, strerror(-err));
		goto err_win;
	}
	/* Pending signals stay pending and are delivered after the restore. */
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(uint64_t), &all) < 0) {
		err = -errno;
		att_fail(t, err, "PTRACE_SETSIGMASK tid %d: %s", (int)t->tid, strerror(-err));
		goto err_win;
	}
	t->scratch_top = below;
	t->scratch_cur = below;
	t->scratch_floor = below - (t->win_len - CALLEE_MIN < SCRATCH_MAX ? t->win_len - CALLEE_MIN
									  : SCRATCH_MAX);
	t->hijacked = 1;
	return 0;

err_win:
	free(t->win);
	t->win = NULL;
	return err;
}

int att_thread_restore(struct att_thread *t)
{
	int err = 0, e;

	if (!t->hijacked)
		return 0;
	if (t->gone) {
		t->hijacked = 0;
		free(t->win);
		t->win = NULL;
		return 0;
	}
	e = att_mem_write(t->pid, t->win_addr, t->win, t->win_len);
	if (e)
		err = att_fail(t, e, "restoring the stack of tid %d: %s", (int)t->tid, strerror(-e));
	e = arch_gpregs_set(t->tid, &t->saved_gp);
	if (e && !err)
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
	free(t->win);
	t->win = NULL;
	t->hijacked = 0;
	return err;
}

uint64_t att_scratch_alloc(struct att_thread *t, size_t len, size_t align)
{
	uint64_t a;

	if (!t->hijacked) {
		att_fail(t, -EINVAL, "scratch memory requested before hijack");
		return 0;
	}
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
	if (t->hijacked) {
		e = att_thread_restore(t);
		if (e && !err)
			err = e;
	}
	e = att_thread_detach(t);
	if (e && !err)
		err = e;
	free(t->saved_ext);
	t->saved_ext = NULL;
	return err;
}
