/* session.c -- the session handle: options, errors, logging, and the backend's operations. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session.h"

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

int jma_fail_att(jma_session *s, const struct att_thread *t, enum jma_errkind kind, int err)
{
	return jma_fail(s, kind, err, "%s", t->err[0] ? t->err : strerror(-err));
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
	    (opts && opts->module && !(s->opt_module = strdup(opts->module))) ||
	    (opts && opts->cache_dir && !(s->opt_cache_dir = strdup(opts->cache_dir)))) {
		free(s->opt_prefix);
		free(s->opt_module);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->ident.pidfd = -1;
	s->opt.prefix = s->opt_prefix;
	s->opt.module = s->opt_module;
	s->opt.cache_dir = s->opt_cache_dir;
	return s;
}

void jma_free(jma_session *s)
{
	if (!s)
		return;
	jma_detach(s);
	/* Symbols first: a core's may still read the file its backend holds. */
	jma_syms_close(s->syms);
	if (s->be)
		s->be->ops->destroy(s->be);
	free(s->opt_prefix);
	free(s->opt_module);
	free(s->opt_cache_dir);
	jma_exec_ident_release(&s->ident);
	free(s);
}

int jma_open_backend(jma_session *s, pid_t pid, struct jma_backend *be, const struct jma_copy *je)
{
	char msg[sizeof(s->err)];
	int err;

	be->s = s;
	if (s->be || s->syms) {
		be->ops->destroy(be);
		return jma_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	}
	s->be = be;
	s->pid = pid;
	err = jma_syms_given(pid, je, &s->syms, msg, sizeof(msg));
	return err ? jma_fail(s, JMA_ERR_MISSING, err, "%s", msg) : 0;
}

int jma_exited(const jma_session *s)
{
	return !s->offline && (s->ident.pidfd >= 0 || s->ident.start) &&
	       jma_exec_ident_same(s->pid, &s->ident) == -ESRCH;
}

static void log_cb(void *arg, int level, const char *msg)
{
	const jma_session *s = arg;

	if (s->opt.log && level <= s->opt.log_level)
		s->opt.log(s->opt.log_arg, level, msg);
}

void jma_thread_setup(jma_session *s, struct att_thread *t, pid_t tid)
{
	att_thread_init(t, s->pid, tid);
	t->log = log_cb;
	t->log_arg = s;
	t->log_level = s->opt.log_level;
}

int jma_attach(jma_session *s)
{
	int err;

	if (!s->be)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	if (s->attached)
		return 0;
	err = s->be->ops->begin(s->be);
	if (err)
		return err;
	s->attached = 1;
	s->epoch_fresh = 0;
	return 0;
}

int jma_detach(jma_session *s)
{
	if (!s->attached)
		return 0;
	s->attached = 0;
	return s->be->ops->end(s->be);
}

uint64_t jma_held_ns(const jma_session *s)
{
	return s->held_ns;
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

void jma_expect_text(jma_session *s)
{
	if (s->be && s->be->ops->expect_text)
		s->be->ops->expect_text(s->be);
}

int jma_call(jma_session *s, const struct jma_bcall *c, uint64_t *ret)
{
	if (!s->attached)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "not attached");
	return s->be->ops->call(s->be, c, ret);
}

uint64_t jma_scratch(jma_session *s, const void *data, size_t len, size_t align)
{
	return s->be->ops->scratch(s->be, data, len, align);
}

int jma_read(jma_session *s, uint64_t addr, void *buf, size_t len)
{
	return s->be->ops->read(s->be, addr, buf, len);
}

int jma_read_str(jma_session *s, uint64_t addr, size_t max, char **out, int *trunc)
{
	return s->be->ops->read_str(s->be, addr, max, out, trunc);
}

int jma_take_file(jma_session *s, char **buf, size_t *len)
{
	return s->be->ops->take_file ? s->be->ops->take_file(s->be, buf, len) : -ENOTSUP;
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
	if (!s->offline)
		att_proc_status(s->pid, 0, &s->st);
	snprintf(info->comm, sizeof(info->comm), "%s", s->st.name);
	info->nthreads = s->st.nthreads;
	info->module = c->path;
	info->prefix = c->prefix;
	info->is_static = c->is_static;
	info->conf_env = c->conf_env;
	if (s->tid && (s->attached || s->tid_why[0])) {
		info->tid = s->tid;
		snprintf(info->tid_comm, sizeof(info->tid_comm), "%s", s->tid_comm);
		info->tid_why = s->tid_why;
	}
	return 0;
}
