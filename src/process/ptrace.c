/* ptrace.c -- the live-process backend: calls run in one borrowed thread.
 *
 * jma_open installs it.  begin makes the checks that need nothing stopped,
 * then chooses a thread (never one whose stack is inside jemalloc), seizes
 * and hijacks it; call runs the function there through the attach engine;
 * end puts the thread back exactly as it was.  The jobs are in the files
 * ptrace_be.h lists: policy (refusals, the thread choice) apart from
 * mechanism (borrowing, the call, its text).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/mem.h"
#include "attach/restorer.h"
#include "process/dump.h"
#include "process/execcheck.h"
#include "process/open.h"
#include "process/ptrace_be.h"
#include "symbols/symbols.h"

static struct jma_backend *ptrace_new(const struct att_status *st);

int jma_open(jma_session *s, pid_t pid)
{
	const struct jma_copy *c;
	struct att_status st;
	struct jma_backend *be;
	int err = proc_open_process(s, pid, &st);

	if (err)
		return err;
	if (!(be = ptrace_new(&st)))
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if ((err = sess_set_backend(s, be)))
		return err;
	c = s->je;
	if (!c)
		return 0;
	/* Checked here, before any thread is stopped, to keep the hold short. */
	err = ptrace_refuse_open(s);
	if (err)
		return err;
	if (!c->fn_stats_print && c->fn_mallctl)
		sess_logf(s, JMA_LOG_WARN, "%smalloc_stats_print not found: stats will not work",
			 c->prefix);
	sess_logf(s, JMA_LOG_INFO, "jemalloc in %s (prefix \"%s\")%s", c->path, c->prefix,
		 syms_cached(s->syms) ? ", known from the cache" : "");
	return 0;
}

/* The rt_sigreturn trampoline the self-restoring engine returns through, 0
 * when the process has none.  Found before any thread stops: a search reads
 * up to 64 MiB of code. */
static uint64_t find_restorer(struct ptrace_be *p)
{
	jma_session *s = p->be.s;
	size_t n;

	if (!p->restorer)
		p->restorer = syms_restorer(s->syms);
	/* Maps read while the loader was still mapping the program lack libc:
	 * once more on fresh ones. */
	if (!p->restorer && !syms_refresh_maps(s->syms)) {
		const struct att_map *fresh = syms_maps(s->syms, &n);

		if (att_restorer_find(s->pid, fresh, n, &p->restorer))
			p->restorer = 0;
	}
	return p->restorer;
}

static int ptrace_begin(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	const struct jma_copy *je = syms_jemalloc(s->syms);
	const struct att_map *maps;
	char why[128];
	size_t n;
	int err;

	if (!je)
		return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	/* Its PID may be another process's by now (checked again once stopped). */
	if ((err = ptrace_fail_exited(s)))
		return err;
	/* Before anything stops: one maps snapshot for the command (jma_open's
	 * for the first, a new one for each later command of a session),
	 * jemalloc looked for in it; a stopped candidate only compares the exec
	 * mark (execcheck.h). */
	if (p->begun++ && (err = syms_refresh_maps(s->syms)))
		return sess_fail(s, JMA_ERR_ATTACH, err, "reading /proc/%d/maps: %s", (int)s->pid,
				strerror(-err));
	maps = syms_maps(s->syms, &n);
	/* A copy taken stripped (JMA_F_STRIPPED: a census reads it) has no
	 * entry point known. */
	if (!je->fn_mallctl)
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "jemalloc in %s is stripped of its "
				"symbols: nothing in it can be called", je->path);
	if (proc_exec_check(maps, n, je->path, je->fn_mallctl))
		return ptrace_fail_exec(s);
	if (!find_restorer(p) && !(s->opt.flags & JMA_F_FORCE)) {
		/* (ptrace_refuse_engine says so when an exec or the loader is why.) */
		snprintf(why, sizeof(why), "process %d has no rt_sigreturn trampoline (__restore_rt)",
			 (int)s->pid);
		return ptrace_refuse_engine(s, why);
	}
	if ((err = ptrace_refuse_stuck(s)))
		return err;
	return ptrace_choose(p);
}

/* Memory refused for what backs it, or given up on (attach/mem.h): said
 * once per session, whichever read it was. */
static int told(struct ptrace_be *p, int err)
{
	if ((err == -EREMOTE || err == -ETIMEDOUT) && !p->told_mem) {
		p->told_mem = 1;
		sess_logf(p->be.s, JMA_LOG_WARN, "%s", att_mem_why());
	}
	return err;
}

static int ptrace_read(struct jma_backend *b, uint64_t addr, void *buf, size_t len)
{
	return told((struct ptrace_be *)b, att_mem_read(b->s->pid, addr, buf, len));
}

static int ptrace_read_str(struct jma_backend *b, uint64_t addr, size_t max, char **out, int *trunc)
{
	return told((struct ptrace_be *)b, att_mem_read_str(b->s->pid, addr, max, out, trunc));
}

static int ptrace_dump(struct jma_backend *b, const char *dir, const char *name, size_t max,
		       jma_dump_fn write, void *arg, char **buf, size_t *len)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	char used[sizeof(p->dumped)];
	int err = proc_dump_private(b->s, dir, name, max, write, arg, buf, len, used, sizeof(used));

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
