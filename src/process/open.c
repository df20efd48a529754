/* open.c -- opening a session's process: shared by the live engine and the emulator. */
#include <errno.h>
#include <stdio.h>

#include "attach/mem.h"
#include "attach/perm.h"
#include "process/execcheck.h"
#include "process/open.h"
#include "process/symcache.h"
#include "symbols/symbols.h"

/* No jemalloc found while the process loads code: read again, this often. */
#define LOADING_TRIES	5

void proc_set_syms(jma_session *s, struct jma_syms *sy)
{
	s->syms = sy;
	s->syms_close = syms_close;
	s->je = syms_jemalloc(sy);
	if (s->opt.flags & JMA_F_NO_DEMANGLE)
		syms_set_demangle(sy, 0);
}

int proc_open_process(jma_session *s, pid_t pid, struct att_status *st)
{
	char msg[sizeof(s->err)];
	struct jma_syms *sy = NULL;
	struct proc_symcache_use cache;
	struct jma_syms_opts so = { s->opt.prefix, s->opt.module, !!(s->opt.flags & JMA_F_ANY_PROCESS),
				    !!(s->opt.flags & JMA_F_DEBUGINFOD), NULL,
				    !!(s->opt.flags & JMA_F_STRIPPED) };
	int err;

	if (s->syms)
		return sess_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	/* No access to its memory waits longer than a call may (attach/mem.h). */
	att_mem_set_timeout(sess_timeout_ms(s));
	err = att_precheck(pid, st, msg, sizeof(msg));
	if (err)
		return sess_fail(s, JMA_ERR_ATTACH, err, "%s", msg);
	s->pid = pid;
	/* This process for the whole session, whoever gets its PID later. */
	if (sess_exec_ident_take(pid, &s->ident))
		return sess_fail(s, JMA_ERR_ATTACH, -ESRCH, "no such process %d", (int)pid);
	for (int tries = 0;; tries++) {
		/* Before the maps are read: an exec after this is seen at the stop. */
		s->exec_mark = proc_exec_mark_at(pid, &s->exec_where);
		proc_symcache_use(&cache, s->opt.cache_dir, s->opt.prefix, s->opt.module);
		so.cache = s->opt.cache_dir ? &cache.hooks : NULL;
		err = syms_open(pid, &so, &sy, msg, sizeof(msg));
		proc_symcache_done(&cache);
		/* Read in the middle of an exec, before the loader mapped it? */
		if (err != -ENOENT || tries == LOADING_TRIES ||
		    !proc_exec_loading(pid, s->exec_mark, NULL, 0, JMA_LOADING_WAIT_MS))
			break;
	}
	if (err && sess_exec_ident_same(pid, &s->ident))
		return sess_fail(s, JMA_ERR_ATTACH, -ESRCH, "process %d exited", (int)pid);
	/* Its files read in the middle of an exec (a module gone or another
	 * program's: "Exec format error" from libdwfl, seen 1 run in 900): the
	 * exec is the error. */
	if (err && s->exec_mark && (proc_exec_same(pid, s->exec_mark, &s->exec_where) == -ENOEXEC ||
				    proc_exec_loading(pid, s->exec_mark, NULL, 0, JMA_LOADING_WAIT_MS)))
		return sess_fail(s, JMA_ERR_ATTACH, -ENOEXEC, "process %d executed a new program "
				"while jemattach read its modules", (int)pid);
	/* Several copies of jemalloc (msg lists them): the caller chooses one. */
	if (err == -EEXIST)
		return sess_fail_hint(s, JMA_HINT_MODULE, JMA_ERR_USAGE, err, "%s", msg);
	if (err == -ESRCH)
		return sess_fail(s, JMA_ERR_ATTACH, err, "no such process %d", (int)pid);
	if (err == -EACCES || err == -EPERM) {
		att_explain_eperm(pid, msg, sizeof(msg));
		return sess_fail(s, JMA_ERR_ATTACH, err, "cannot attach to process %d: %s", (int)pid, msg);
	}
	if (err)
		return sess_fail(s, JMA_ERR_MISSING, err, "%s", msg);
	proc_set_syms(s, sy);
	return 0;
}

int proc_open_backend(jma_session *s, pid_t pid, struct jma_backend *be, const struct jma_copy *je)
{
	char msg[sizeof(s->err)];
	struct jma_syms *sy;
	int err;

	if (s->syms) {
		be->s = s;
		be->ops->destroy(be);
		return sess_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	}
	err = sess_set_backend(s, be);
	if (err)
		return err;
	s->pid = pid;
	err = syms_given(pid, je, &sy, msg, sizeof(msg));
	if (err)
		return sess_fail(s, JMA_ERR_MISSING, err, "%s", msg);
	proc_set_syms(s, sy);
	return 0;
}
