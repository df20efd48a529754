/* ptrace.c -- the live-process backend: calls run in one borrowed thread.
 *
 * jma_open installs it.  begin chooses a thread (preferring the main thread
 * and threads asleep in system calls, never one whose stack is inside
 * jemalloc), seizes and hijacks it; call runs the function there through the
 * attach engine; end puts the thread back exactly as it was.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/call.h"
#include "attach/mem.h"
#include "attach/perm.h"
#include "attach/select.h"
#include "attach/sink.h"
#include "attach/unwind.h"
#include "core/session.h"
#include "process/cgmem.h"
#include "process/dump.h"
#include "process/engine.h"
#include "process/execcheck.h"
#include "process/freeze.h"
#include "process/open.h"
#include "process/stuck.h"
#include "process/symcache.h"
#include "symbols/symbols.h"
#include "process/threads.h"

#define MAX_FRAMES	64
/* How far above the stack pointer the conservative scan for jemalloc return
 * addresses looks (see unsafe_frames). */
#define STACK_SCAN	(256 * 1024)
#define MAIN_RETRIES	5
#define MAIN_RETRY_US	2000
/* jemalloc 5.3 hands write_cb 64 KiB at a time; older and debug builds a
 * line (<= 4 KiB).  Anything much larger is not jemalloc's doing. */
#define TEXT_MAX	(4 * 1024 * 1024)
/* A thread in restart_syscall returns from its timed wait by itself: how
 * long to wait for that at most (less when the call timeout is shorter), and
 * how often to look. */
#define RESTART_WAIT_MS	3000
#define RESTART_POLL_US	2000

struct ptrace_be {
	struct jma_backend be;
	struct att_thread th;		/* the borrowed thread */
	struct jma_freeze fz;		/* --freeze: the other threads, all stopped */
	uint64_t restorer;		/* the target's rt_sigreturn trampoline, 0 if none */
	int begun;			/* begin ran before: the maps snapshot is old */
	int text_checked;		/* malloc_message read for this command (expect_text) */
	int has_logger;			/* ... and the application had set it */
	uint64_t sink;			/* the text sink (sink.h), 0 if none */
	int sink_known;			/* looked for in this session */
	size_t stray;			/* bytes the last call wrote to fd 2 besides its text */
	pid_t restart_tid;		/* a thread this begin passed over for restart_syscall */
	char restart_why[200];		/* ... in words */
	char waited[96];		/* what begin waited for, for tid_why */
	struct att_status st;		/* the process's status (att_precheck, then describe) */
	/* The thread calls run in (for info, threads and -v), and why that one. */
	pid_t tid;
	char tid_why[160];
	char tid_comm[64];
	uint64_t held_ns;		/* the last attachment's hold (jma_held_ns) */
	char dumped[512];		/* the private directory of a dump, to sweep beside at end */
	char dump_name[64];		/* ... and the file it held */
};

static struct jma_backend *ptrace_new(const struct att_status *st);

/* Refuse (unless --force) a target whose cgroup could OOM-kill it for the
 * memory our first call costs it (cgmem.h). */
static int cgmem_check(jma_session *s)
{
	char which[4400];
	uint64_t room;

	if (s->opt.flags & JMA_F_FORCE)
		return 0;
	if (jma_cgmem_room(s->pid, &room, which, sizeof(which)) || room >= JMA_CGMEM_FIRST_CALL)
		return 0;
	return jma_fail(s, JMA_ERR_UNSAFE, -ENOMEM, "process %d has %llu KiB left under its "
			"memory cgroup's limit (%s); a first call into it can cost up to %lu KiB "
			"and could get it OOM-killed: refused (--force to call anyway)",
			(int)s->pid, (unsigned long long)(room / 1024), which,
			JMA_CGMEM_FIRST_CALL / 1024);
}

/* Refuse (unless --force) before any thread stops when one stays asleep
 * inside jemalloc where it may hold a lock: our call would wait on it until
 * the timeout, then be left running to finish on its own. */
static int stuck_check(jma_session *s)
{
	struct jma_holder h;
	char msg[sizeof(s->err)];
	int err = jma_stuck_find(s, &h);

	if (err <= 0)
		return 0;	/* a listing that failed fails again, clearly, in begin */
	if (s->opt.flags & JMA_F_FORCE) {
		jma_holder_format(s, &h, "calling anyway (--force)", "the call may wait for it "
				  "until the timeout", 0, msg, sizeof(msg));
		jma_logf(s, JMA_LOG_WARN, "%s", msg);
		return 0;
	}
	jma_holder_format(s, &h, s->opt.flags & JMA_F_FREEZE ? "--freeze refused" : "refused",
			  "a call would wait for that lock: --force calls anyway; --emulate reads "
			  "the numbers from a copy of the process without taking a lock", 1, msg,
			  sizeof(msg));
	return jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "%s", msg);
}

int jma_open(jma_session *s, pid_t pid)
{
	char msg[sizeof(s->err)];
	const struct jma_copy *c;
	const struct att_map *maps;
	size_t nm;
	struct att_status st;
	struct jma_backend *be;
	int err = jma_open_process(s, pid, &st);

	if (err)
		return err;
	if (!(be = ptrace_new(&st)))
		return jma_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if ((err = jma_set_backend(s, be)))
		return err;
	c = s->je;
	if (!c)
		return 0;
	/* Checked here, before any thread is stopped, to keep the hold short. */
	maps = jma_syms_maps(s->syms, &nm);
	err = att_call_check_sentinels(pid, maps, nm, msg, sizeof(msg));
	if (err)
		return jma_fail(s, JMA_ERR_UNSAFE, err, "%s", msg);
	err = cgmem_check(s);
	if (err)
		return err;
	if (!c->fn_stats_print && c->fn_mallctl)
		jma_logf(s, JMA_LOG_WARN, "%smalloc_stats_print not found: stats will not work",
			 c->prefix);
	jma_logf(s, JMA_LOG_INFO, "jemalloc in %s (prefix \"%s\")%s", c->path, c->prefix,
		 jma_syms_cached(s->syms) ? ", known from the cache" : "");
	return 0;
}

static void describe_cb(void *arg, uint64_t addr, char *buf, size_t len)
{
	jma_syms_describe(arg, addr, buf, len);
}

/* Read, in one process_vm_readv, the stopped thread's stack from @sp up to
 * the end of its mapping (at most STACK_SCAN bytes), the mapping found in the
 * snapshot of /proc/PID/maps taken at jma_open; only a stack mapped since
 * (a new thread) costs a fresh read of the maps.  stk->len is 0 when nothing
 * could be read: the unwinder then reads what it needs itself. */
static void read_stack(jma_session *s, pid_t tid, uint64_t sp, struct att_stack *stk)
{
	size_t nm;
	const struct att_map *maps = jma_syms_maps(s->syms, &nm), *m = att_maps_find(maps, nm, sp);
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
static int in_loader(struct ptrace_be *p, uint64_t pc)
{
	size_t n;
	const struct att_map *maps = jma_syms_maps(p->be.s->syms, &n);
	uint64_t ld_base = p->be.s->exec_where.ld_base;
	const struct att_map *m = att_maps_find(maps, n, pc), *ld = att_maps_find(maps, n, ld_base);

	return ld_base && m && ld && m->path && ld->path && !strcmp(m->path, ld->path);
}

enum { FRAMES_OK, FRAMES_JEMALLOC, FRAMES_LOADER };

static int frame_kind(struct ptrace_be *p, uint64_t at)
{
	if (jma_syms_in_jemalloc(p->be.s->syms, at))
		return FRAMES_JEMALLOC;
	return in_loader(p, at) ? FRAMES_LOADER : FRAMES_OK;
}

/* Is the stopped thread anywhere inside jemalloc (FRAMES_JEMALLOC), or in
 * code the dynamic loader called (FRAMES_LOADER)?  The loader on the stack
 * means a program still loading (just after an exec: relocations unfinished,
 * ifunc resolvers and constructors running, jemalloc's own initialisation
 * among them -- a call faults or waits forever), a library being loaded or a
 * symbol bound (the loader's lock held).  Unwinding finds the frames
 * libunwind can follow.  When it could not walk to the outermost frame, a
 * scan of the live stack above the stack pointer for words pointing into
 * jemalloc's code stands in for the frames it missed: stale words make that
 * scan err on the side of refusing, which only costs us this thread, while a
 * miss could deadlock the target.  Both work on one copy of the stack. */
static int unsafe_frames(struct ptrace_be *p, pid_t tid, char *where, size_t len)
{
	uint64_t pcs[MAX_FRAMES], pc = arch_pc(&p->th.saved_gp);
	jma_session *s = p->be.s;
	struct att_stack stk;
	const struct att_map *maps;
	const uint64_t *w;
	size_t nm;
	int complete, n, found = frame_kind(p, pc);

	/* The pc alone settles it: no stack to read. */
	if (found) {
		jma_syms_describe(s->syms, pc, where, len);
		return found;
	}
	read_stack(s, tid, arch_sp(&p->th.saved_gp), &stk);
	maps = jma_syms_maps(s->syms, &nm);
	n = att_unwind(s->pid, tid, &stk, maps, nm, pcs, MAX_FRAMES, &complete);
	/* Frame 0 is the pc; the callers' are return addresses: the call
	 * instruction is just before. */
	for (int i = 1; i < n && !found; i++) {
		found = frame_kind(p, pcs[i] - 1);
		if (found)
			jma_syms_describe(s->syms, pcs[i] - 1, where, len);
	}
	w = stk.buf;
	for (size_t i = 0; !found && !complete && i < stk.len / 8; i++)
		if (w[i] > 4096 && jma_syms_in_jemalloc(s->syms, w[i] - 1)) {
			char d[200];
			jma_syms_describe(s->syms, w[i] - 1, d, sizeof(d));
			snprintf(where, len, "%s (return address found on its stack)", d);
			found = FRAMES_JEMALLOC;
		}
	free((void *)stk.buf);
	return found;
}

/* Before stopping @c: when it sits in a system call, walk its last known
 * stack from where it entered it.  A jemalloc frame there rules it out
 * without stopping it (1, reason in @where); otherwise the walk has cached
 * the unwind rules the check on the stopped thread will use.  Advisory only:
 * the stopped thread is checked again. */
static int known_in_jemalloc(jma_session *s, const struct att_candidate *c, char *where, size_t len)
{
	uint64_t pcs[MAX_FRAMES];
	size_t nm;
	const struct att_map *maps = jma_syms_maps(s->syms, &nm);
	int n = c->sp ? att_unwind_at(s->pid, c->tid, c->sp, c->pc, maps, nm, pcs, MAX_FRAMES) : 0;

	for (int i = 0; i < n; i++)
		if (jma_syms_in_jemalloc(s->syms, pcs[i] - (i > 0))) {
			jma_syms_describe(s->syms, pcs[i] - (i > 0), where, len);
			return 1;
		}
	return 0;
}

/* An unsuitable candidate goes back to how it was: released, or under
 * --freeze restored but kept stopped with the others. */
static void give_back(struct ptrace_be *p)
{
	if (!p->fz.t) {
		att_thread_release(&p->th);
		jma_logf(p->be.s, JMA_LOG_INFO, "tid %d held for %.3f ms, then given back",
			 (int)p->th.tid, (double)(p->th.run_ns - p->th.stop_ns) / 1e6);
		return;
	}
	att_thread_restore(&p->th);
	jma_freeze_put(&p->fz, &p->th);
}

static int exec_fail(jma_session *s)
{
	if (!s->exec_mark)
		return jma_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d: its AT_RANDOM bytes could "
				"not be read or are zeros, so whether it still runs the program read "
				"cannot be told: refused", (int)s->pid);
	return jma_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d executed a new program since "
			"jemattach read its symbols", (int)s->pid);
}

/* The fallback call engine returns into page 0: should jemattach die during
 * a call, the thread faults there and the process dies.  It is used only
 * with --force; @why says why the self-restoring engine cannot be. */
static int engine_refused(jma_session *s, const char *why)
{
	/* What it needs was not found because the process exited or ran
	 * another program meanwhile?  That is the error then. */
	if (jma_exec_ident_same(s->pid, &s->ident))
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	if (jma_exec_same(s->pid, s->exec_mark, &s->exec_where) == -ENOEXEC)
		return exec_fail(s);
	/* An exec under way reads as code that vanished before it shows in the
	 * exec mark: a moment's look (1 run in 30 of 47-exec). */
	if (jma_exec_loading(s->pid, s->exec_mark, JMA_LOADING_WAIT_MS))
		return exec_fail(s);
	return jma_fail(s, JMA_ERR_UNSAFE, -ENOTSUP, "%s: only the fallback call engine could call "
			"into process %d, and if jemattach died during a call the process would die "
			"too: refused (--force uses it anyway; --emulate reads the numbers from a "
			"copy without calling)", why, (int)s->pid);
}

/* Thread @tid is in restart_syscall: a timed wait (poll, nanosleep, a futex
 * with a timeout...) resumed after an earlier stop -- a debugger, gcore, a
 * killed jemattach -- cut it short.  Its original call is gone from its
 * registers and rt_sigreturn would end it with EINTR: the self-restoring
 * call cannot borrow it.  Pass it over, remembering it for ptrace_begin to
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

/* Try one candidate.  0: attached and hijacked.  >0: unsuitable, reason in
 * @why, try the next.  <0: fatal. */
static int try_thread(struct ptrace_be *p, const struct att_candidate *c, char *why, size_t len)
{
	jma_session *s = p->be.s;
	struct att_thread *t = &p->th;
	char where[256];
	int unsafe, err, seize_ms = jma_timeout_ms(s) < 2000 ? jma_timeout_ms(s) : 2000;

	if (p->fz.t) {
		/* --freeze: already stopped (and checked) by jma_freeze_all. */
		if (jma_freeze_take(&p->fz, c->tid, t)) {
			snprintf(why, len, "tid %d is not frozen", (int)c->tid);
			return 1;
		}
		err = 0;
	} else {
		if (c->rank == ATT_RANK_RESTART && !(s->opt.flags & JMA_F_FORCE))
			return restart_skip(p, c->tid, c->comm, why, len);
		if (!(s->opt.thread && (s->opt.flags & JMA_F_FORCE)) &&
		    known_in_jemalloc(s, c, where, sizeof(where))) {
			snprintf(why, len, "tid %d (%s) is inside jemalloc: %s (seen before stopping it)",
				 (int)c->tid, c->comm, where);
			return 1;
		}
		jma_thread_setup(s, t, c->tid);
		/* Before the seize: it arms the return-value breakpoint ahead of the stop. */
		t->restorer = p->restorer;
		err = att_thread_seize(t, seize_ms);
		/* Another jemattach holds the thread for a moment: wait for it (a
		 * third may take it first: a few times). */
		for (int i = 0; err == -EPERM && i < 5; i++) {
			if (att_wait_tracer(s->pid, c->tid, ATT_TRACER_WAIT_MS, why, len))
				return jma_fail(s, JMA_ERR_ATTACH, -EBUSY, "%s", why);
			err = att_thread_seize(t, seize_ms);
		}
	}
	t->maps = jma_syms_maps(s->syms, &t->nmaps);
	t->sym = describe_cb;
	t->sym_arg = s->syms;
	t->restorer = p->restorer;
	t->restorer_none = !p->restorer;	/* ptrace_begin searched */
	if (err == -EPERM) {
		char msg[512];
		att_explain_eperm(s->pid, msg, sizeof(msg));
		return jma_fail(s, JMA_ERR_ATTACH, err, "cannot attach to process %d: %s", (int)s->pid,
				msg);
	}
	if (err == -EINTR)
		return jma_fail_att(s, t, JMA_ERR_UNSAFE, err);
	if (err) {
		snprintf(why, len, "%s", t->err);
		return 1;
	}
	/* Registers are needed for the stack checks: hijack saves them.  The
	 * fallback engine only with --force (engine_refused). */
	t->sigframe_only = !(s->opt.flags & JMA_F_FORCE);
	err = att_thread_hijack(t);
	if (err == -ENOTSUP && t->nosf == ATT_NOSF_RESTART) {
		give_back(p);
		return restart_skip(p, c->tid, c->comm, why, len);
	}
	if (err == -ENOTSUP) {
		snprintf(why, len, "%s", t->engine_why);
		give_back(p);
		return engine_refused(s, why);
	}
	if (err) {
		snprintf(why, len, "%s", t->err);
		give_back(p);
		return err == -ENOSPC || err == -EFAULT ? 1 : jma_fail(s, JMA_ERR_TARGET, err, "%s", why);
	}
	/* Stopped: the thread is the process's we opened, running its program. */
	if (jma_exec_ident_same(s->pid, &s->ident)) {
		give_back(p);
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	}
	if (jma_exec_same(s->pid, s->exec_mark, &s->exec_where) == -ENOEXEC) {
		give_back(p);
		return exec_fail(s);
	}
	unsafe = unsafe_frames(p, c->tid, where, sizeof(where));
	if (unsafe == FRAMES_LOADER) {
		snprintf(why, len, "tid %d (%s) is inside the dynamic loader (%s): a program or "
			 "library still loading", (int)c->tid, c->comm, where);
		give_back(p);
		return 1;
	}
	if (unsafe == FRAMES_JEMALLOC) {
		if (!(s->opt.thread && (s->opt.flags & JMA_F_FORCE))) {
			snprintf(why, len, "tid %d (%s) is inside jemalloc: %s", (int)c->tid, c->comm, where);
			give_back(p);
			return 1;
		}
		jma_logf(s, JMA_LOG_WARN, "using tid %d although it is inside jemalloc (%s): --force",
			 (int)c->tid, where);
	}
	return 0;
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
		 * that waits in ptrace_begin. */
		for (int retry = 0; err > 0 && !p->fz.t && c[i].tid == s->pid &&
		     p->restart_tid != c[i].tid && retry < MAIN_RETRIES; retry++) {
			usleep(MAIN_RETRY_US);
			err = try_thread(p, &c[i], why, len);
		}
		if (err < 0)
			return err;
		if (err == 0) {
			long nr = arch_stopped_syscall(&p->th.saved_gp, &p->th.sc_note);
			const char *nm = nr >= 0 ? arch_syscall_name(nr) : NULL;
			char seen[96];

			/* /proc saw it a moment before it stopped; its registers say
			 * where it really was (a thread seen running has often just
			 * gone back to sleep). */
			snprintf(seen, sizeof(seen), "%s", c[i].why);
			if (c[i].state == 'R' && nm)
				snprintf(seen, sizeof(seen), "asleep in %s", nm);
			*attached = 1;
			p->tid = c[i].tid;
			snprintf(p->tid_comm, sizeof(p->tid_comm), "%s", c[i].comm);
			snprintf(p->tid_why, sizeof(p->tid_why), "%s%s; %s%s%s", seen,
				 s->opt.thread ? ", chosen with --thread" : "",
				 p->th.engine == ATT_ENGINE_SIGFRAME ? "self-restoring calls"
								     : "fallback engine (--force): ",
				 p->th.engine == ATT_ENGINE_SIGFRAME ? "" : p->th.engine_why,
				 p->waited);
			jma_logf(s, JMA_LOG_INFO, "using tid %d (%s), %s", (int)c[i].tid, c[i].comm,
				 p->tid_why);
			if (p->th.engine != ATT_ENGINE_SIGFRAME)
				jma_logf(s, JMA_LOG_WARN, "tid %d: fallback call engine (--force): %s; "
					 "if jemattach dies during a call, process %d dies too "
					 "(SIGSEGV at address 0x%x)", (int)c[i].tid, p->th.engine_why,
					 (int)s->pid, (unsigned)ATT_RET_SENTINEL);
			return 0;
		}
		jma_logf(s, JMA_LOG_INFO, "skipping tid %d: %s", (int)c[i].tid, why);
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
		return jma_fail(s, JMA_ERR_USAGE, err, "thread %d is not a thread of process %d",
				(int)s->opt.thread, (int)s->pid);
	if (err)
		return jma_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
				(int)s->pid, strerror(-err));
	if ((s->opt.flags & JMA_F_FREEZE) && (err = jma_freeze_all(s, &p->fz, c, n))) {
		free(c);
		return err;
	}
	err = try_list(p, c, n, tried, why, len, attached);
	free(c);
	if (!*attached)
		jma_thaw_all(&p->fz);
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

static int ptrace_begin(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	size_t n;
	char why[512] = "";
	int err = 0, attached = 0, wait_ms;
	int64_t t0 = 0, deadline = 0;

	if (!jma_syms_jemalloc(s->syms))
		return jma_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	/* Its PID may be another process's by now (checked again once stopped). */
	if (jma_exec_ident_same(s->pid, &s->ident))
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	/* Before anything stops: one maps snapshot for the command (jma_open's
	 * for the first, a new one for each later command of a session),
	 * jemalloc looked for in it; a stopped candidate only compares the exec
	 * mark (execcheck.h). */
	if (p->begun++ && (err = jma_syms_refresh_maps(s->syms)))
		return jma_fail(s, JMA_ERR_ATTACH, err, "reading /proc/%d/maps: %s", (int)s->pid,
				strerror(-err));
	{
		const struct jma_copy *je = jma_syms_jemalloc(s->syms);
		const struct att_map *maps = jma_syms_maps(s->syms, &n);

		if (!je->fn_mallctl)
			return jma_fail(s, JMA_ERR_MISSING, -ENOTSUP, "jemalloc in %s is stripped of "
					"its symbols: nothing in it can be called", je->path);
		if (jma_exec_check(maps, n, je->path, je->fn_mallctl))
			return exec_fail(s);
	}
	/* Before any thread stops: a search reads up to 64 MiB of code. */
	if (!p->restorer)
		p->restorer = jma_syms_restorer(s->syms);
	if (!p->restorer && !(s->opt.flags & JMA_F_FORCE)) {
		snprintf(why, sizeof(why), "process %d has no rt_sigreturn trampoline (__restore_rt)",
			 (int)s->pid);
		return engine_refused(s, why);
	}
	if ((err = stuck_check(s)))
		return err;
	wait_ms = jma_timeout_ms(s) < RESTART_WAIT_MS ? jma_timeout_ms(s) : RESTART_WAIT_MS;
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
			jma_logf(s, JMA_LOG_INFO, "tid %d is in restart_syscall (a timed wait resumed "
				 "after an earlier stop); waiting up to %d ms for it to return",
				 (int)rt, wait_ms);
		}
		if (restart_wait(p, rt, deadline))
			break;
		snprintf(p->waited, sizeof(p->waited), ", after waiting %.0f ms for tid %d to leave "
			 "restart_syscall", (double)(att_now_ns() - t0) / 1e6, (int)rt);
		jma_logf(s, JMA_LOG_INFO, "tid %d left restart_syscall after %.1f ms", (int)rt,
			 (double)(att_now_ns() - t0) / 1e6);
	}
	if (jma_exec_ident_same(s->pid, &s->ident))
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	if (p->restart_tid)
		return jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "no thread of process %d can be borrowed: "
				"%s, and it was still there after %d ms; if jemattach died during a "
				"fallback call the process would die too: refused (--force uses that "
				"engine anyway; or try again once it has returned)", (int)s->pid,
				p->restart_why, wait_ms);
	return jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "no thread of process %d is safe to use%s%s",
			(int)s->pid, why[0] ? "; last: " : "", why);
}

static int ptrace_end(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	int err = att_thread_release(&p->th), frozen = p->fz.t != NULL;

	jma_thaw_all(&p->fz);
	p->text_checked = 0;
	/* See jma_held_ns: from the stop to the moment it runs again. */
	p->held_ns = p->th.run_ns > p->th.stop_ns ? (uint64_t)(p->th.run_ns - p->th.stop_ns) : 0;
	jma_logf(s, JMA_LOG_DEBUG, "tid %d stopped at %lld ns, running at %lld ns (CLOCK_MONOTONIC)",
		 (int)p->th.tid, (long long)p->th.stop_ns, (long long)p->th.run_ns);
	if (frozen)
		jma_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms; every thread stopped for %.3f ms "
			 "(--freeze)", (int)p->th.tid, (double)p->held_ns / 1e6,
			 (double)p->fz.held_ns / 1e6);
	else
		jma_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms", (int)p->th.tid,
			 (double)p->held_ns / 1e6);
	if (err)
		err = jma_fail(s, JMA_ERR_UNSAFE, err, "restoring tid %d: %s", (int)p->th.tid,
			       p->th.err);
	if (p->dumped[0])
		jma_dump_sweep(s, p->dumped, p->dump_name);
	p->dumped[0] = '\0';
	return err;
}

/* Sigframe engine: jemalloc's default writer wrote a piece of the text to fd 2. */
static int on_write(struct att_thread *t, const char *buf, size_t len, void *arg)
{
	const struct jma_bcall *bc = arg;
	int err = bc->text(bc->text_ctx, buf, strnlen(buf, len));

	if (err)
		return att_fail(t, err, "passing on written text: %s", strerror(err < 0 ? -err : err));
	return 0;
}

/* Text going through the sink, yet the call wrote to fd 2 (jemalloc's own
 * error messages go there whatever write_cb is): taken from the target's
 * stderr all the same, counted, not mixed into the text. */
static int on_stray_write(struct att_thread *t, const char *buf, size_t len, void *arg)
{
	struct ptrace_be *p = arg;

	(void)t;
	(void)buf;
	p->stray += len;
	return 0;
}

/* With write_cb NULL, jemalloc writes through je_malloc_message when the
 * application set it (its own logger): then our capture of fd 2 would see
 * nothing.  Looked at before the stop when the operation says it will print
 * (without a cache entry the symbol search takes milliseconds), else at the
 * call.  1 when it is set (or cannot be read).  Only without a sink. */
static int app_has_logger(struct ptrace_be *p)
{
	jma_session *s = p->be.s;
	uint64_t v = 0, at;

	if (p->text_checked)
		return p->has_logger;
	at = jma_syms_malloc_message(s->syms);
	p->text_checked = 1;
	p->has_logger = at && (att_mem_read(s->pid, at, &v, sizeof(v)) || v != 0);
	return p->has_logger;
}

/* The process's text sink (sink.h), 0 when it has none: searched once per
 * session, before the stop when the operation says it will print. */
static uint64_t find_sink(struct ptrace_be *p)
{
	jma_session *s = p->be.s;
	const struct att_map *maps;
	char where[256];
	size_t n;
	int64_t t0 = att_now_ns();
	double ms;

	if (p->sink_known)
		return p->sink;
	p->sink_known = 1;
	maps = jma_syms_maps(s->syms, &n);
	if (att_sink_find(s->pid, maps, n, &p->sink)) {
		p->sink = 0;
		jma_logf(s, JMA_LOG_INFO, "no text sink (getpid-like code) in process %d",
			 (int)s->pid);
		return 0;
	}
	/* Naming code may load every module's symbols: only for -v. */
	if (!s->opt.log || s->opt.log_level < JMA_LOG_INFO)
		return p->sink;
	ms = (double)(att_now_ns() - t0) / 1e6;
	jma_syms_describe(s->syms, p->sink, where, sizeof(where));
	jma_logf(s, JMA_LOG_INFO, "text taken at %s, a harmless system call of the process "
		 "(found in %.3f ms): a report cut short by our death is dropped there", where, ms);
	return p->sink;
}

static void ptrace_expect_text(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;

	if (!jma_syms_jemalloc(b->s->syms))
		return;
	/* A later command of a session: is the sink still there? */
	if (p->sink && att_sink_check(b->s->pid, p->sink))
		p->sink_known = 0;
	if (!find_sink(p))
		app_has_logger(p);
}

/* write_cb(void *opaque, const char *s) was called, at the callback
 * sentinel or at the sink: hand its text to the caller. */
static int on_text(struct att_thread *t, const uint64_t args[ARCH_NARGS], uint64_t *retval,
		   void *arg)
{
	const struct jma_bcall *bc = arg;
	char *str;
	int trunc, err;

	*retval = 0;
	err = att_mem_read_str(t->pid, args[1], TEXT_MAX, &str, &trunc);
	if (err)
		return att_fail(t, err, "reading callback text at 0x%llx: %s",
				(unsigned long long)args[1], strerror(-err));
	err = bc->text(bc->text_ctx, str, strlen(str));
	free(str);
	if (err)
		return att_fail(t, err, "passing on callback text: %s", strerror(err < 0 ? -err : err));
	if (trunc)
		return att_fail(t, -E2BIG, "a callback text exceeded %d bytes", TEXT_MAX);
	return 0;
}

/* How @bc's text reaches us.  The self-restoring engine hands it to the
 * sink, where nothing is left to write once we are gone.  Without a sink,
 * only with --force: jemalloc's default writer, whose write(2)s to fd 2
 * are taken (our death sends the rest of the text to the target's stderr),
 * or, when the application set its own malloc_message, the callback
 * sentinel (our death kills the target).  The fallback engine serves the
 * sentinel, as it serves everything. */
static int route_text(struct ptrace_be *p, const struct jma_bcall *bc, struct att_call *c)
{
	jma_session *s = p->be.s;
	int sigframe = p->th.engine == ATT_ENGINE_SIGFRAME;

	c->cb = on_text;
	c->cb_arg = (void *)bc;
	if (sigframe && find_sink(p)) {
		if (bc->text_arg + 1 >= (int)bc->nargs)
			return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "a text callback without its "
					"opaque argument");
		c->args[bc->text_arg] = p->sink;
		c->args[bc->text_arg + 1] = ATT_SINK_COOKIE;
		c->sink = p->sink;
		p->stray = 0;
		c->on_write = on_stray_write;
		c->write_arg = p;
		return 0;
	}
	if (sigframe && !(s->opt.flags & JMA_F_FORCE))
		return jma_fail(s, JMA_ERR_UNSAFE, -ENOTSUP, "process %d has no code to take the text "
				"through safely (a getpid-like `mov $NR,%%eax; syscall; ret`): should "
				"jemattach die during the call, the rest of the text would go to the "
				"process's stderr: refused (--force prints it anyway; --emulate reads it "
				"from a copy)", (int)s->pid);
	if (sigframe && !app_has_logger(p)) {
		jma_logf(s, JMA_LOG_WARN, "no text sink in process %d (--force): should jemattach "
			 "die during the call, the rest of the text goes to its stderr", (int)s->pid);
		c->cb = NULL;
		c->args[bc->text_arg] = 0;
		c->on_write = on_write;
		c->write_arg = (void *)bc;
		return 0;
	}
	if (sigframe)
		jma_logf(s, JMA_LOG_WARN, "no text sink in process %d, and the application set its "
			 "own malloc_message (--force): this text comes through a fault address; a "
			 "death of jemattach during it would kill the process", (int)s->pid);
	c->args[bc->text_arg] = ATT_CB_SENTINEL;
	return 0;
}

static int ptrace_call(struct jma_backend *b, const struct jma_bcall *bc, uint64_t *ret)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	struct att_call c = { .fn = bc->fn, .nargs = bc->nargs };
	int err;

	memcpy(c.args, bc->args, sizeof(uint64_t) * bc->nargs);
	if (bc->text && (err = route_text(p, bc, &c))) {
		att_scratch_reset(&p->th);
		return err;
	}
	c.timeout_ms = jma_timeout_ms(s);
	c.grace_ms = c.timeout_ms;
	err = att_call(&p->th, &c, ret);
	if (c.sink && p->stray)
		jma_logf(s, JMA_LOG_WARN, "the call also wrote %zu bytes to fd 2 of process %d "
			 "(jemalloc's own messages): taken, not printed", p->stray, (int)s->pid);
	if (err == -ETIMEDOUT && p->th.left_running)
		snprintf(p->th.err + strlen(p->th.err), sizeof(p->th.err) - strlen(p->th.err),
			 "; --emulate reads the numbers from a copy meanwhile");
	att_scratch_reset(&p->th);
	if (err) {
		jma_fail_att(s, &p->th, jma_kind_of(err), err);
		if (err == -ETIMEDOUT || err == -EINTR || err == -ESRCH || err == -EFAULT) {
			/* The thread's state is unknown to jemalloc now: give it back. */
			char keep[sizeof(s->err)];
			memcpy(keep, s->err, sizeof(keep));
			if (jma_detach(s))
				return err;
			memcpy(s->err, keep, sizeof(keep));
			s->kind = jma_kind_of(err);
			if (err == -ETIMEDOUT) {
				size_t used;
				jma_explain_stall(s);
				used = strlen(s->err);
				snprintf(s->err + used, sizeof(s->err) - used, "\n  jemattach --emulate "
					 "%d ... can still read the stats: it runs jemalloc on a copy "
					 "of the process and takes no lock", (int)s->pid);
			}
		}
	}
	return err;
}

static uint64_t ptrace_scratch(struct jma_backend *b, const void *data, size_t len, size_t align)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	uint64_t r = data ? att_scratch_push(&p->th, data, len, align)
			  : att_scratch_alloc(&p->th, len, align);

	if (!r)
		jma_fail_att(b->s, &p->th, JMA_ERR_TARGET, -ENOSPC);
	return r;
}

static int ptrace_read(struct jma_backend *b, uint64_t addr, void *buf, size_t len)
{
	return att_mem_read(b->s->pid, addr, buf, len);
}

static int ptrace_read_str(struct jma_backend *b, uint64_t addr, size_t max, char **out, int *trunc)
{
	return att_mem_read_str(b->s->pid, addr, max, out, trunc);
}

static int ptrace_dump(struct jma_backend *b, const char *dir, const char *name, size_t max,
		       jma_dump_fn write, void *arg, char **buf, size_t *len)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	char used[sizeof(p->dumped)];
	int err = jma_dump_private(b->s, dir, name, max, write, arg, buf, len, used, sizeof(used));

	/* Swept at end, once the thread is given back. */
	if (used[0]) {
		snprintf(p->dumped, sizeof(p->dumped), "%s", used);
		snprintf(p->dump_name, sizeof(p->dump_name), "%s", name);
	}
	return err;
}

static void ptrace_describe(struct jma_backend *b, struct jma_target_info *info)
{
	struct ptrace_be *p = (struct ptrace_be *)b;

	att_proc_status(b->s->pid, 0, &p->st);
	snprintf(info->comm, sizeof(info->comm), "%s", p->st.name);
	info->nthreads = p->st.nthreads;
	if (!p->tid)
		return;
	info->tid = p->tid;
	snprintf(info->tid_comm, sizeof(info->tid_comm), "%s", p->tid_comm);
	info->tid_why = p->tid_why;
}

static uint64_t ptrace_held_ns(struct jma_backend *b)
{
	return ((struct ptrace_be *)b)->held_ns;
}

static void ptrace_destroy(struct jma_backend *b)
{
	free(b);
}

static const struct jma_backend_ops ptrace_ops = {
	.name = "ptrace",
	.begin = ptrace_begin,
	.end = ptrace_end,
	.expect_text = ptrace_expect_text,
	.call = ptrace_call,
	.scratch = ptrace_scratch,
	.read = ptrace_read,
	.read_str = ptrace_read_str,
	.dump = ptrace_dump,
	.describe = ptrace_describe,
	.held_ns = ptrace_held_ns,
	.destroy = ptrace_destroy,
};

static struct jma_backend *ptrace_new(const struct att_status *st)
{
	struct ptrace_be *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->be.ops = &ptrace_ops;
	p->st = *st;
	return &p->be;
}
