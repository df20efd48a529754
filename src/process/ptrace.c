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
#include "process/cgmem.h"
#include "process/execcheck.h"
#include "attach/select.h"
#include "attach/unwind.h"
#include "process/freeze.h"
#include "process/session.h"
#include "process/threads.h"

#define MAX_FRAMES	64
/* How far above the stack pointer the conservative scan for jemalloc return
 * addresses looks (see frames_in_jemalloc). */
#define STACK_SCAN	(256 * 1024)
#define MAIN_RETRIES	5
#define MAIN_RETRY_US	2000
/* jemalloc 5.3 hands write_cb 64 KiB at a time; older and debug builds a
 * line (<= 4 KiB).  Anything much larger is not jemalloc's doing. */
#define TEXT_MAX	(4 * 1024 * 1024)

struct ptrace_be {
	struct jma_backend be;
	struct att_thread th;		/* the borrowed thread */
	struct jma_freeze fz;		/* --freeze: the other threads, all stopped */
	int64_t attached_ns;		/* when the thread was stopped, for the hold time */
};

static struct jma_backend *ptrace_new(jma_session *s);

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

int jma_open(jma_session *s, pid_t pid)
{
	char msg[sizeof(s->err)];
	const struct jma_copy *c;
	int err;

	if (s->syms)
		return jma_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	err = att_precheck(pid, msg, sizeof(msg));
	if (err)
		return jma_fail(s, JMA_ERR_ATTACH, err, "%s", msg);
	s->pid = pid;
	att_proc_status(pid, 0, &s->st);
	err = jma_syms_open(pid, s->opt.prefix, s->opt.module, !!(s->opt.flags & JMA_F_ANY_PROCESS),
			    &s->syms, msg, sizeof(msg));
	if (err && kill(pid, 0) && errno == ESRCH)
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)pid);
	if (err == -EEXIST)
		return jma_fail(s, JMA_ERR_USAGE, err, "%s", msg);
	if (err == -ESRCH)
		return jma_fail(s, JMA_ERR_ATTACH, err, "no such process %d", (int)pid);
	if (err == -EACCES || err == -EPERM) {
		att_explain_eperm(pid, msg, sizeof(msg));
		return jma_fail(s, JMA_ERR_ATTACH, err, "cannot attach to process %d: %s", (int)pid, msg);
	}
	if (err)
		return jma_fail(s, JMA_ERR_MISSING, err, "%s", msg);
	if (!(s->be = ptrace_new(s)))
		return jma_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	c = jma_syms_jemalloc(s->syms);
	if (!c)
		return 0;
	/* Checked here, before any thread is stopped, to keep the hold short. */
	err = att_call_check_sentinels(pid, msg, sizeof(msg));
	if (err)
		return jma_fail(s, JMA_ERR_UNSAFE, err, "%s", msg);
	err = cgmem_check(s);
	if (err)
		return err;
	if (!c->fn_stats_print)
		jma_logf(s, JMA_LOG_WARN, "%smalloc_stats_print not found: stats will not work",
			 c->prefix);
	jma_logf(s, JMA_LOG_INFO, "jemalloc in %s (prefix \"%s\")", c->path, c->prefix);
	return 0;
}

static void describe_cb(void *arg, uint64_t addr, char *buf, size_t len)
{
	jma_syms_describe(arg, addr, buf, len);
}

/* Is the stopped thread anywhere inside jemalloc?  Unwinding finds the frames
 * libunwind can follow.  When it could not walk to the outermost frame, a
 * scan of the live stack above the stack pointer for words pointing into
 * jemalloc's code stands in for the frames it missed: stale words make that
 * scan err on the side of refusing, which only costs us this thread, while a
 * miss could deadlock the target. */
static int frames_in_jemalloc(struct ptrace_be *p, pid_t tid, char *where, size_t len)
{
	uint64_t pcs[MAX_FRAMES];
	int complete, n = att_unwind(tid, pcs, MAX_FRAMES, &complete);
	jma_session *s = p->be.s;
	uint64_t sp = arch_sp(&p->th.saved_gp);
	struct att_map *maps;
	size_t nm;

	for (int i = 0; i < n; i++)
		if (jma_syms_in_jemalloc(s->syms, pcs[i] - (i > 0))) {
			jma_syms_describe(s->syms, pcs[i] - (i > 0), where, len);
			return 1;
		}
	if (jma_syms_in_jemalloc(s->syms, arch_pc(&p->th.saved_gp))) {
		jma_syms_describe(s->syms, arch_pc(&p->th.saved_gp), where, len);
		return 1;
	}
	if (!complete && att_proc_maps(s->pid, &maps, &nm) == 0) {
		const struct att_map *m = att_maps_find(maps, nm, sp);
		uint64_t end = m ? m->end : sp;
		size_t words;
		uint64_t *buf;

		if (end > sp + STACK_SCAN)
			end = sp + STACK_SCAN;
		words = (size_t)(end - sp) / 8;
		buf = malloc(words * 8 + 8);
		if (buf && att_mem_read(s->pid, sp, buf, words * 8) == 0) {
			for (size_t i = 0; i < words; i++)
				if (buf[i] > 4096 && jma_syms_in_jemalloc(s->syms, buf[i] - 1)) {
					char d[200];
					jma_syms_describe(s->syms, buf[i] - 1, d, sizeof(d));
					snprintf(where, len, "%s (return address found on its stack)", d);
					free(buf);
					att_maps_free(maps, nm);
					return 1;
				}
		}
		free(buf);
		att_maps_free(maps, nm);
	}
	return 0;
}

/* An unsuitable candidate goes back to how it was: released, or under
 * --freeze restored but kept stopped with the others. */
static void give_back(struct ptrace_be *p)
{
	if (!p->fz.t) {
		att_thread_release(&p->th);
		return;
	}
	att_thread_restore(&p->th);
	jma_freeze_put(&p->fz, &p->th);
}

/* Try one candidate.  0: attached and hijacked.  >0: unsuitable, reason in
 * @why, try the next.  <0: fatal. */
static int try_thread(struct ptrace_be *p, const struct att_candidate *c, char *why, size_t len)
{
	jma_session *s = p->be.s;
	struct att_thread *t = &p->th;
	char where[256];
	int err, seize_ms = jma_timeout_ms(s) < 2000 ? jma_timeout_ms(s) : 2000;

	if (p->fz.t) {
		/* --freeze: already stopped (and checked) by jma_freeze_all. */
		if (jma_freeze_take(&p->fz, c->tid, t)) {
			snprintf(why, len, "tid %d is not frozen", (int)c->tid);
			return 1;
		}
		err = 0;
	} else {
		jma_thread_setup(s, t, c->tid);
		err = att_thread_seize(t, seize_ms);
		/* Another jemattach holds the thread for a moment: wait for it (a
		 * third may take it first: a few times). */
		for (int i = 0; err == -EPERM && i < 5; i++) {
			if (att_wait_tracer(s->pid, c->tid, ATT_TRACER_WAIT_MS, why, len))
				return jma_fail(s, JMA_ERR_ATTACH, -EBUSY, "%s", why);
			err = att_thread_seize(t, seize_ms);
		}
	}
	t->sym = describe_cb;
	t->sym_arg = s->syms;
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
	/* Registers are needed for the stack checks: hijack saves them. */
	err = att_thread_hijack(t);
	if (err) {
		snprintf(why, len, "%s", t->err);
		give_back(p);
		return err == -ENOSPC || err == -EFAULT ? 1 : jma_fail(s, JMA_ERR_TARGET, err, "%s", why);
	}
	if (jma_exec_check(s->pid, jma_syms_jemalloc(s->syms)->path,
			   jma_syms_jemalloc(s->syms)->fn_mallctl) == -ENOEXEC) {
		give_back(p);
		return jma_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d executed a new program "
				"since jemattach read its symbols", (int)s->pid);
	}
	if (frames_in_jemalloc(p, c->tid, where, sizeof(where))) {
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

static int ptrace_begin(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	struct att_candidate *c;
	size_t n;
	char why[512] = "";
	int err, attached = 0;

	if (!jma_syms_jemalloc(s->syms))
		return jma_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	err = att_select_threads(s->pid, s->opt.thread, &c, &n);
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
	for (size_t i = 0; i < n; i++) {
		err = try_thread(p, &c[i], why, sizeof(why));
		/* The main thread is usually only briefly busy (or inside jemalloc):
		 * waiting a little for it beats borrowing a thread jemalloc has
		 * never seen (see att_select_threads). */
		for (int retry = 0; err > 0 && !p->fz.t && c[i].tid == s->pid && retry < MAIN_RETRIES;
		     retry++) {
			usleep(MAIN_RETRY_US);
			err = try_thread(p, &c[i], why, sizeof(why));
		}
		if (err < 0)
			break;
		if (err == 0) {
			attached = 1;
			p->attached_ns = att_now_ns();
			s->tid = c[i].tid;
			snprintf(s->tid_comm, sizeof(s->tid_comm), "%s", c[i].comm);
			snprintf(s->tid_why, sizeof(s->tid_why), "%s%s", c[i].why,
				 s->opt.thread ? ", chosen with --thread" : "");
			jma_logf(s, JMA_LOG_INFO, "using tid %d (%s), %s", (int)c[i].tid, c[i].comm,
				 s->tid_why);
			break;
		}
		jma_logf(s, JMA_LOG_INFO, "skipping tid %d: %s", (int)c[i].tid, why);
	}
	free(c);
	if (!attached)
		jma_thaw_all(&p->fz);
	if (err > 0 && kill(s->pid, 0) && errno == ESRCH)
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	if (err > 0 || (err == 0 && !attached))
		return jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "no thread of process %d is safe to use%s%s",
				(int)s->pid, why[0] ? "; last: " : "", why);
	return err;
}

static int ptrace_end(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	int err = att_thread_release(&p->th);

	jma_thaw_all(&p->fz);
	jma_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms", (int)p->th.tid,
		 (double)(att_now_ns() - p->attached_ns) / 1e6);
	if (err)
		return jma_fail(s, JMA_ERR_UNSAFE, err, "restoring tid %d: %s", (int)p->th.tid, p->th.err);
	return 0;
}

/* The callback sentinel: write_cb(void *opaque, const char *s) was called;
 * hand its text to the caller and emulate the return. */
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

static int ptrace_call(struct jma_backend *b, const struct jma_bcall *bc, uint64_t *ret)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	struct att_call c = { .fn = bc->fn, .nargs = bc->nargs };
	int err;

	memcpy(c.args, bc->args, sizeof(uint64_t) * bc->nargs);
	if (bc->text) {
		c.args[bc->text_arg] = ATT_CB_SENTINEL;
		c.cb = on_text;
		c.cb_arg = (void *)bc;
	}
	c.timeout_ms = jma_timeout_ms(s);
	c.grace_ms = c.timeout_ms;
	err = att_call(&p->th, &c, ret);
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
			if (err == -ETIMEDOUT)
				jma_explain_stall(s);
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

static void ptrace_destroy(struct jma_backend *b)
{
	free(b);
}

static const struct jma_backend_ops ptrace_ops = {
	.name = "ptrace",
	.begin = ptrace_begin,
	.end = ptrace_end,
	.call = ptrace_call,
	.scratch = ptrace_scratch,
	.read = ptrace_read,
	.read_str = ptrace_read_str,
	.destroy = ptrace_destroy,
};

static struct jma_backend *ptrace_new(jma_session *s)
{
	struct ptrace_be *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->be.ops = &ptrace_ops;
	p->be.s = s;
	return &p->be;
}
