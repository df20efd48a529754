/* ptrace_text.c -- the text a call writes (malloc_stats_print's write_cb): how it reaches the caller.
 *
 * Through the process's text sink where it has one (sink.h): code that
 * writes nothing, where a report cut short by our death ends harmlessly.
 * Without one, only with --force: jemalloc's default writer, its write(2)s
 * to fd 2 taken, or the callback sentinel.  What serves a command is looked
 * up before anything stops (expect_text).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "attach/mem.h"
#include "attach/sink.h"
#include "process/ptrace_be.h"
#include "symbols/symbols.h"

/* jemalloc 5.3 hands write_cb 64 KiB at a time; older and debug builds a
 * line (<= 4 KiB).  Anything much larger is not jemalloc's doing. */
#define TEXT_MAX	(4 * 1024 * 1024)

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
	at = syms_malloc_message(s->syms);
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
	maps = syms_maps(s->syms, &n);
	if (att_sink_find(s->pid, maps, n, &p->sink)) {
		p->sink = 0;
		sess_logf(s, JMA_LOG_INFO, "no text sink (getpid-like code) in process %d",
			 (int)s->pid);
		return 0;
	}
	/* Naming code may load every module's symbols: only for -v. */
	if (!s->opt.log || s->opt.log_level < JMA_LOG_INFO)
		return p->sink;
	ms = (double)(att_now_ns() - t0) / 1e6;
	syms_describe(s->syms, p->sink, where, sizeof(where));
	sess_logf(s, JMA_LOG_INFO, "text taken at %s, a harmless system call of the process "
		 "(found in %.3f ms): a report cut short by our death is dropped there", where, ms);
	return p->sink;
}

void ptrace_expect_text(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;

	if (!syms_jemalloc(b->s->syms))
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
int ptrace_route_text(struct ptrace_be *p, const struct jma_bcall *bc, struct att_call *c)
{
	jma_session *s = p->be.s;
	int sigframe = p->th.engine == ATT_ENGINE_SIGFRAME;

	c->cb = on_text;
	c->cb_arg = (void *)bc;
	if (sigframe && find_sink(p)) {
		if (bc->text_arg + 1 >= (int)bc->nargs)
			return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "a text callback without its "
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
		return sess_fail_hint(s, JMA_HINT_FORCE | JMA_HINT_EMULATE, JMA_ERR_UNSAFE, -ENOTSUP,
				     "process %d has no code to take the text through safely (a "
				     "getpid-like `mov $NR,%%eax; syscall; ret`): should jemattach die "
				     "during the call, the rest of the text would go to the process's "
				     "stderr: refused", (int)s->pid);
	if (sigframe && !app_has_logger(p)) {
		sess_logf(s, JMA_LOG_WARN, "no text sink in process %d (forced): should jemattach "
			 "die during the call, the rest of the text goes to its stderr", (int)s->pid);
		c->cb = NULL;
		c->args[bc->text_arg] = 0;
		c->on_write = on_write;
		c->write_arg = (void *)bc;
		return 0;
	}
	if (sigframe)
		sess_logf(s, JMA_LOG_WARN, "no text sink in process %d, and the application set its "
			 "own malloc_message (forced): this text comes through a fault address; a "
			 "death of jemattach during it would kill the process", (int)s->pid);
	c->args[bc->text_arg] = ATT_CB_SENTINEL;
	return 0;
}
