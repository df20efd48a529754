/* session.c -- the session handle: options, opening and freeing, attach and detach, what it opened. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sized.h"
#include "core/session.h"

int sess_timeout_ms(const jma_session *s)
{
	double t = s->opt.timeout > 0 ? s->opt.timeout : 10.0;
	return t > 86400 ? 86400000 : (int)(t * 1000);
}

int jma_attached(const jma_session *s)
{
	return s->attached;
}

jma_session *jma_new(const struct jma_options *opts)
{
	struct jma_options o;
	jma_session *s;
	int err = SIZED_IN(opts, &o);

	if (err) {
		errno = -err;
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	s->opt = o;
	if ((o.prefix && !(s->opt_prefix = strdup(o.prefix))) ||
	    (o.module && !(s->opt_module = strdup(o.module))) ||
	    (o.cache_dir && !(s->opt_cache_dir = strdup(o.cache_dir)))) {
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
	if (s->syms)
		s->syms_close(s->syms);
	if (s->be)
		s->be->ops->destroy(s->be);
	free(s->opt_prefix);
	free(s->opt_module);
	free(s->opt_cache_dir);
	sess_exec_ident_release(&s->ident);
	free(s);
}

int sess_set_backend(jma_session *s, struct jma_backend *be)
{
	be->s = s;
	if (s->be) {
		be->ops->destroy(be);
		return sess_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	}
	s->be = be;
	return 0;
}

int jma_exited(const jma_session *s)
{
	return !s->offline && (s->ident.pidfd >= 0 || s->ident.start) &&
	       sess_exec_ident_same(s->pid, &s->ident) == -ESRCH;
}

int jma_attach(jma_session *s)
{
	int err;

	if (!s->be)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
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
	return s->be && s->be->ops->held_ns ? s->be->ops->held_ns(s->be) : 0;
}

int sess_detach_keep(jma_session *s, int err)
{
	char keep[sizeof(s->err)];
	enum jma_errkind kind = s->kind;
	unsigned hints = s->hints;
	size_t used;
	int derr;

	memcpy(keep, s->err, sizeof(keep));
	derr = jma_detach(s);
	if (!derr) {
		memcpy(s->err, keep, sizeof(keep));
		s->kind = kind;
		s->hints = hints;
	} else if (err) {
		used = strlen(s->err);
		snprintf(s->err + used, sizeof(s->err) - used, "\n  before that: %s", keep);
	}
	return derr;
}

int jma_hold_begin(jma_session *s, int *own)
{
	int err;

	*own = 0;
	if (s->attached)
		return 0;
	err = jma_attach(s);
	*own = !err;
	return err;
}

int jma_hold_end(jma_session *s, int own, int err)
{
	int derr = own ? sess_detach_keep(s, err) : 0;

	return derr ? derr : err;
}

int jma_target_info(jma_session *s, struct jma_target_info *out)
{
	const struct jma_copy *c = s->je;
	struct jma_target_info full, *info = &full;

	if (!s->syms)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	if (!c)
		return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	memset(info, 0, sizeof(*info));
	info->sz = sizeof(*info);
	info->pid = s->pid;
	info->module = c->path;
	info->prefix = c->prefix;
	info->is_static = c->is_static;
	info->conf_env = c->conf_env;
	if (s->be && s->be->ops->describe)
		s->be->ops->describe(s->be, info);
	if (sized_out(out, info, sizeof(*info), offsetof(struct jma_target_info, pid) + sizeof(pid_t)))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "jma_target_info: its sz is not set");
	return 0;
}
