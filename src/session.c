/* session.c -- the session handle: open, attach (choosing a thread), detach, errors. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call.h"
#include "mem.h"
#include "perm.h"
#include "select.h"
#include "session.h"
#include "unwind.h"

#define MAX_FRAMES	64
/* How far above the stack pointer the conservative scan for jemalloc return
 * addresses looks (see frames_in_jemalloc). */
#define STACK_SCAN	(256 * 1024)
#define MAIN_RETRIES	5
#define MAIN_RETRY_US	2000

int jma_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->kind = kind;
	jma_logf(s, JMA_LOG_DEBUG, "error: %s", s->err);
	return err < 0 ? err : -err;
}

enum jma_errkind jma_kind_of(int err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -EINTR:
		return JMA_ERR_UNSAFE;
	case -EPERM:
	case -EBUSY:
		return JMA_ERR_ATTACH;
	default:
		return JMA_ERR_TARGET;
	}
}

int jma_fail_att(jma_session *s, enum jma_errkind kind, int err)
{
	return jma_fail(s, kind, err, "%s", s->th.err[0] ? s->th.err : strerror(-err));
}

void jma_logf(const jma_session *s, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!s->opt.log || level > s->opt.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->opt.log(s->opt.log_arg, level, msg);
}

int jma_timeout_ms(const jma_session *s)
{
	double t = s->opt.timeout > 0 ? s->opt.timeout : 10.0;
	return t > 86400 ? 86400000 : (int)(t * 1000);
}

const char *jma_errmsg(const jma_session *s)
{
	return s->err;
}

enum jma_errkind jma_errkind(const jma_session *s)
{
	return s->kind;
}

int jma_attached(const jma_session *s)
{
	return s->attached;
}

jma_session *jma_new(const struct jma_options *opts)
{
	jma_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (opts)
		s->opt = *opts;
	if ((opts && opts->prefix && !(s->opt_prefix = strdup(opts->prefix))) ||
	    (opts && opts->module && !(s->opt_module = strdup(opts->module)))) {
		free(s->opt_prefix);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->opt.prefix = s->opt_prefix;
	s->opt.module = s->opt_module;
	return s;
}

void jma_free(jma_session *s)
{
	if (!s)
		return;
	jma_detach(s);
	jma_syms_close(s->syms);
	free(s->opt_prefix);
	free(s->opt_module);
	free(s);
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
	c = jma_syms_jemalloc(s->syms);
	if (!c)
		return 0;
	/* Checked here, before any thread is stopped, to keep the hold short. */
	err = att_call_check_sentinels(pid, msg, sizeof(msg));
	if (err)
		return jma_fail(s, JMA_ERR_UNSAFE, err, "%s", msg);
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

static void log_cb(void *arg, int level, const char *msg)
{
	const jma_session *s = arg;

	if (s->opt.log && level <= s->opt.log_level)
		s->opt.log(s->opt.log_arg, level, msg);
}

/* Is the stopped thread anywhere inside jemalloc?  Unwinding finds the frames
 * libunwind can follow.  When it could not walk to the outermost frame, a
 * scan of the live stack above the stack pointer for words pointing into
 * jemalloc's code stands in for the frames it missed: stale words make that
 * scan err on the side of refusing, which only costs us this thread, while a
 * miss could deadlock the target. */
static int frames_in_jemalloc(jma_session *s, pid_t tid, char *where, size_t len)
{
	uint64_t pcs[MAX_FRAMES];
	int complete, n = att_unwind(tid, pcs, MAX_FRAMES, &complete);
	uint64_t sp = arch_sp(&s->th.saved_gp);
	struct att_map *maps;
	size_t nm;

	for (int i = 0; i < n; i++)
		if (jma_syms_in_jemalloc(s->syms, pcs[i] - (i > 0))) {
			jma_syms_describe(s->syms, pcs[i] - (i > 0), where, len);
			return 1;
		}
	if (jma_syms_in_jemalloc(s->syms, arch_pc(&s->th.saved_gp))) {
		jma_syms_describe(s->syms, arch_pc(&s->th.saved_gp), where, len);
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
static void give_back(jma_session *s)
{
	struct att_thread *t;

	if (!s->frozen) {
		att_thread_release(&s->th);
		return;
	}
	att_thread_restore(&s->th);
	t = realloc(s->frozen, (s->nfrozen + 1) * sizeof(*t));
	if (!t) {
		att_thread_release(&s->th);
		return;
	}
	s->frozen = t;
	s->frozen[s->nfrozen++] = s->th;
}

/* Try one candidate.  0: attached and hijacked.  >0: unsuitable, reason in
 * @why, try the next.  <0: fatal. */
static int try_thread(jma_session *s, const struct att_candidate *c, char *why, size_t len)
{
	struct att_thread *t = &s->th;
	char where[256];
	int err, seize_ms = jma_timeout_ms(s) < 2000 ? jma_timeout_ms(s) : 2000;

	if (s->frozen) {
		/* --freeze: already stopped (and checked) by jma_freeze_all. */
		if (jma_take_frozen(s, c->tid)) {
			snprintf(why, len, "tid %d is not frozen", (int)c->tid);
			return 1;
		}
		err = 0;
	} else {
		att_thread_init(t, s->pid, c->tid);
	}
	t->log = log_cb;
	t->log_arg = s;
	t->log_level = s->opt.log_level;
	t->sym = describe_cb;
	t->sym_arg = s->syms;
	if (!s->frozen)
		err = att_thread_seize(t, seize_ms);
	if (err == -EPERM) {
		char msg[512];
		att_explain_eperm(s->pid, msg, sizeof(msg));
		return jma_fail(s, JMA_ERR_ATTACH, err, "cannot attach to process %d: %s", (int)s->pid,
				msg);
	}
	if (err == -EINTR)
		return jma_fail_att(s, JMA_ERR_UNSAFE, err);
	if (err) {
		snprintf(why, len, "%s", t->err);
		return 1;
	}
	/* Registers are needed for the stack checks: hijack saves them. */
	err = att_thread_hijack(t);
	if (err) {
		snprintf(why, len, "%s", t->err);
		give_back(s);
		return err == -ENOSPC || err == -EFAULT ? 1 : jma_fail(s, JMA_ERR_TARGET, err, "%s", why);
	}
	if (frames_in_jemalloc(s, c->tid, where, sizeof(where))) {
		if (!(s->opt.thread && (s->opt.flags & JMA_F_FORCE))) {
			snprintf(why, len, "tid %d (%s) is inside jemalloc: %s", (int)c->tid, c->comm, where);
			give_back(s);
			return 1;
		}
		jma_logf(s, JMA_LOG_WARN, "using tid %d although it is inside jemalloc (%s): --force",
			 (int)c->tid, where);
	}
	return 0;
}

int jma_attach(jma_session *s)
{
	struct att_candidate *c;
	size_t n;
	char why[512] = "";
	int err;

	if (!s->syms)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	if (s->attached)
		return 0;
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
	if ((s->opt.flags & JMA_F_FREEZE) && (err = jma_freeze_all(s, c, n))) {
		free(c);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		err = try_thread(s, &c[i], why, sizeof(why));
		/* The main thread is usually only briefly busy (or inside jemalloc):
		 * waiting a little for it beats borrowing a thread jemalloc has
		 * never seen (see att_select_threads). */
		for (int retry = 0; err > 0 && !s->frozen && c[i].tid == s->pid && retry < MAIN_RETRIES;
		     retry++) {
			usleep(MAIN_RETRY_US);
			err = try_thread(s, &c[i], why, sizeof(why));
		}
		if (err < 0)
			break;
		if (err == 0) {
			s->attached = 1;
			s->attached_ns = att_now_ns();
			s->epoch_fresh = 0;
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
	if (!s->attached)
		jma_thaw_all(s);
	if (err > 0 && kill(s->pid, 0) && errno == ESRCH)
		return jma_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)s->pid);
	if (err > 0 || (err == 0 && !s->attached))
		return jma_fail(s, JMA_ERR_UNSAFE, -EAGAIN, "no thread of process %d is safe to use%s%s",
				(int)s->pid, why[0] ? "; last: " : "", why);
	return err;
}

int jma_detach(jma_session *s)
{
	int err;

	if (!s->attached)
		return 0;
	s->attached = 0;
	err = att_thread_release(&s->th);
	jma_thaw_all(s);
	jma_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms", (int)s->th.tid,
		 (double)(att_now_ns() - s->attached_ns) / 1e6);
	if (err)
		return jma_fail(s, JMA_ERR_UNSAFE, err, "restoring tid %d: %s", (int)s->th.tid, s->th.err);
	return 0;
}

int jma_auto_begin(jma_session *s, int *attached_here)
{
	*attached_here = 0;
	if (s->attached)
		return 0;
	*attached_here = 1;
	return jma_attach(s);
}

int jma_auto_end(jma_session *s, int attached_here, int err)
{
	char keep[sizeof(s->err)];
	enum jma_errkind kind = s->kind;
	int derr;

	if (!attached_here)
		return err;
	memcpy(keep, s->err, sizeof(keep));
	derr = jma_detach(s);
	if (derr)
		return derr;
	memcpy(s->err, keep, sizeof(keep));
	s->kind = kind;
	return err;
}

int jma_call(jma_session *s, struct att_call *c, uint64_t *ret)
{
	int err;

	if (!s->attached)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "not attached");
	c->timeout_ms = jma_timeout_ms(s);
	c->grace_ms = c->timeout_ms;
	err = att_call(&s->th, c, ret);
	att_scratch_reset(&s->th);
	if (err) {
		jma_fail_att(s, jma_kind_of(err), err);
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

int jma_target_info(jma_session *s, struct jma_target_info *info)
{
	const struct jma_copy *c;

	if (!s->syms)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	c = jma_syms_jemalloc(s->syms);
	if (!c)
		return jma_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	memset(info, 0, sizeof(*info));
	info->pid = s->pid;
	att_proc_status(s->pid, 0, &s->st);
	snprintf(info->comm, sizeof(info->comm), "%s", s->st.name);
	info->nthreads = s->st.nthreads;
	info->module = c->path;
	info->prefix = c->prefix;
	info->is_static = c->is_static;
	info->conf_env = c->conf_env;
	if (s->th.tid && (s->attached || s->tid_why[0])) {
		info->tid = s->th.tid;
		snprintf(info->tid_comm, sizeof(info->tid_comm), "%s", s->tid_comm);
		info->tid_why = s->tid_why;
	}
	return 0;
}
