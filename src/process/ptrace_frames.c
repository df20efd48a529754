/* ptrace_frames.c -- is a thread inside jemalloc or the dynamic loader: its stack, unwound or scanned.
 *
 * A call from a thread inside jemalloc could wait for a lock that thread
 * holds, or find jemalloc's state half-changed; one inside the loader finds
 * a program still loading.  The thread choice (ptrace_choose.c) passes such
 * threads over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/mem.h"
#include "attach/unwind.h"
#include "process/ptrace_be.h"
#include "symbols/symbols.h"

#define MAX_FRAMES	64
/* How far above the stack pointer the conservative scan for jemalloc return
 * addresses looks (see ptrace_frames_unsafe). */
#define STACK_SCAN	(256 * 1024)

/* Read, in one process_vm_readv, the stopped thread's stack from @sp up to
 * the end of its mapping (at most STACK_SCAN bytes), the mapping found in the
 * snapshot of /proc/PID/maps taken at jma_open; only a stack mapped since
 * (a new thread) costs a fresh read of the maps.  stk->len is 0 when nothing
 * could be read: the unwinder then reads what it needs itself. */
static void read_stack(jma_session *s, pid_t tid, uint64_t sp, struct att_stack *stk)
{
	size_t nm;
	const struct att_map *maps = syms_maps(s->syms, &nm), *m = att_maps_find(maps, nm, sp);
	struct att_map *fresh = NULL;
	uint64_t end;
	void *buf;

	stk->lo = sp;
	stk->buf = NULL;
	stk->len = 0;
	if (!m && att_proc_maps(s->pid, &fresh, &nm) == 0)
		m = att_maps_find(fresh, nm, sp);
	end = m ? m->end : sp;
	att_maps_free(fresh, fresh ? nm : 0);
	if (end > sp + STACK_SCAN)
		end = sp + STACK_SCAN;
	if (end <= sp || !(buf = malloc((size_t)(end - sp))))
		return;
	if (att_mem_read(tid, sp, buf, (size_t)(end - sp))) {
		free(buf);
		return;
	}
	stk->buf = buf;
	stk->len = (size_t)(end - sp);
}

/* Is @pc in the dynamic loader? */
static int in_loader(jma_session *s, uint64_t pc)
{
	size_t n;
	const struct att_map *maps = syms_maps(s->syms, &n);
	uint64_t ld_base = s->exec_where.ld_base;
	const struct att_map *m = att_maps_find(maps, n, pc), *ld = att_maps_find(maps, n, ld_base);

	return ld_base && m && ld && m->path && ld->path && !strcmp(m->path, ld->path);
}

static int frame_kind(jma_session *s, uint64_t at)
{
	if (syms_in_jemalloc(s->syms, at))
		return PTRACE_FRAMES_JEMALLOC;
	return in_loader(s, at) ? PTRACE_FRAMES_LOADER : PTRACE_FRAMES_OK;
}

/* The loader on the stack means a program still loading (just after an
 * exec: relocations unfinished, ifunc resolvers and constructors running,
 * jemalloc's own initialisation among them -- a call faults or waits
 * forever), a library being loaded or a symbol bound (the loader's lock
 * held).  Unwinding finds the frames libunwind can follow.  When it could
 * not walk to the outermost frame, a scan of the live stack above the stack
 * pointer for words pointing into jemalloc's code stands in for the frames
 * it missed: stale words make that scan err on the side of refusing, which
 * only costs us this thread, while a miss could deadlock the target.  Both
 * work on one copy of the stack. */
int ptrace_frames_unsafe(jma_session *s, const struct att_thread *t, char *where, size_t len)
{
	uint64_t pcs[MAX_FRAMES], pc = arch_pc(&t->saved_gp);
	struct att_stack stk;
	const struct att_map *maps;
	const uint64_t *w;
	size_t nm;
	int complete, n, found = frame_kind(s, pc);

	/* The pc alone settles it: no stack to read. */
	if (found) {
		syms_describe(s->syms, pc, where, len);
		return found;
	}
	read_stack(s, t->tid, arch_sp(&t->saved_gp), &stk);
	maps = syms_maps(s->syms, &nm);
	n = att_unwind(s->pid, t->tid, &stk, maps, nm, pcs, MAX_FRAMES, &complete);
	/* Frame 0 is the pc; the callers' are return addresses: the call
	 * instruction is just before. */
	for (int i = 1; i < n && !found; i++) {
		found = frame_kind(s, pcs[i] - 1);
		if (found)
			syms_describe(s->syms, pcs[i] - 1, where, len);
	}
	w = stk.buf;
	for (size_t i = 0; !found && !complete && i < stk.len / 8; i++)
		if (w[i] > 4096 && syms_in_jemalloc(s->syms, w[i] - 1)) {
			char d[200];
			syms_describe(s->syms, w[i] - 1, d, sizeof(d));
			snprintf(where, len, "%s (return address found on its stack)", d);
			found = PTRACE_FRAMES_JEMALLOC;
		}
	free((void *)stk.buf);
	return found;
}

/* When @c sits in a system call, walk its last known stack from where it
 * entered it.  A jemalloc frame there rules it out without stopping it;
 * otherwise the walk has cached the unwind rules the check on the stopped
 * thread will use.  Advisory only: the stopped thread is checked again. */
int ptrace_frames_known_unsafe(jma_session *s, const struct att_candidate *c, char *where,
			       size_t len)
{
	uint64_t pcs[MAX_FRAMES];
	size_t nm;
	const struct att_map *maps = syms_maps(s->syms, &nm);
	int n = c->sp ? att_unwind_at(s->pid, c->tid, c->sp, c->pc, maps, nm, pcs, MAX_FRAMES) : 0;

	for (int i = 0; i < n; i++)
		if (syms_in_jemalloc(s->syms, pcs[i] - (i > 0))) {
			syms_describe(s->syms, pcs[i] - (i > 0), where, len);
			return 1;
		}
	return 0;
}
