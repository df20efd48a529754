/* ptrace_borrow.c -- a thread borrowed for calls and given back exactly as it was.
 *
 * Seized through attach/ or, under --freeze, taken from the threads
 * proc_freeze_all stopped; the thread choice then hijacks it (its registers
 * saved, the call engine made ready) and looks at where it is
 * (ptrace_choose.c).  A candidate found unsuitable goes back at once; the
 * borrowed one at the end of the attachment, and the frozen ones with it.
 */
#include <errno.h>
#include <stdio.h>

#include "attach/perm.h"
#include "process/dump.h"
#include "process/engine.h"
#include "process/ptrace_be.h"
#include "symbols/symbols.h"

/* The longest a seize waits for the thread to stop (less when the call
 * timeout is shorter). */
#define SEIZE_MS	2000

static void describe_cb(void *arg, uint64_t addr, char *buf, size_t len)
{
	syms_describe(arg, addr, buf, len);
}

int ptrace_seize(struct ptrace_be *p, pid_t tid, char *why, size_t len)
{
	jma_session *s = p->be.s;
	struct att_thread *t = &p->th;
	int err = 0, seize_ms = sess_timeout_ms(s) < SEIZE_MS ? sess_timeout_ms(s) : SEIZE_MS;

	if (p->fz.t) {
		if (proc_freeze_take(&p->fz, tid, t)) {
			snprintf(why, len, "tid %d is not frozen", (int)tid);
			return 1;
		}
	} else {
		proc_thread_setup(s, t, tid);
		/* Before the seize: it arms the return-value breakpoint ahead of the stop. */
		t->restorer = p->restorer;
		err = att_thread_seize(t, seize_ms);
		/* Another jemattach holds the thread for a moment: wait for it (a
		 * third may take it first: a few times). */
		for (int i = 0; err == -EPERM && i < 5; i++) {
			if (att_wait_tracer(s->pid, tid, ATT_TRACER_WAIT_MS, why, len))
				return sess_fail(s, JMA_ERR_ATTACH, -EBUSY, "%s", why);
			err = att_thread_seize(t, seize_ms);
		}
	}
	t->maps = syms_maps(s->syms, &t->nmaps);
	t->sym = describe_cb;
	t->sym_arg = s->syms;
	t->restorer = p->restorer;
	t->restorer_none = !p->restorer;	/* ptrace_begin searched */
	if (err == -EPERM) {
		char msg[512];
		att_explain_eperm(s->pid, msg, sizeof(msg));
		return sess_fail(s, JMA_ERR_ATTACH, err, "cannot attach to process %d: %s", (int)s->pid,
				msg);
	}
	if (err == -EINTR)
		return proc_fail_att(s, t, JMA_ERR_UNSAFE, err);
	if (err) {
		snprintf(why, len, "%s", t->err);
		return 1;
	}
	return 0;
}

void ptrace_give_back(struct ptrace_be *p)
{
	if (!p->fz.t) {
		att_thread_release(&p->th);
		sess_logf(p->be.s, JMA_LOG_INFO, "tid %d held for %.3f ms, then given back",
			 (int)p->th.tid, (double)(p->th.run_ns - p->th.stop_ns) / 1e6);
		return;
	}
	att_thread_restore(&p->th);
	proc_freeze_put(&p->fz, &p->th);
}

int ptrace_end(struct jma_backend *b)
{
	struct ptrace_be *p = (struct ptrace_be *)b;
	jma_session *s = b->s;
	int err = att_thread_release(&p->th), frozen = p->fz.t != NULL;

	proc_thaw_all(&p->fz);
	p->text_checked = 0;
	/* See jma_held_ns: from the stop to the moment it runs again. */
	p->held_ns = p->th.run_ns > p->th.stop_ns ? (uint64_t)(p->th.run_ns - p->th.stop_ns) : 0;
	sess_logf(s, JMA_LOG_DEBUG, "tid %d stopped at %lld ns, running at %lld ns (CLOCK_MONOTONIC)",
		 (int)p->th.tid, (long long)p->th.stop_ns, (long long)p->th.run_ns);
	if (frozen)
		sess_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms; every thread stopped for %.3f ms",
			 (int)p->th.tid, (double)p->held_ns / 1e6,
			 (double)p->fz.held_ns / 1e6);
	else
		sess_logf(s, JMA_LOG_INFO, "tid %d held for %.3f ms", (int)p->th.tid,
			 (double)p->held_ns / 1e6);
	if (err)
		err = sess_fail(s, JMA_ERR_UNSAFE, err, "restoring tid %d: %s", (int)p->th.tid,
			       p->th.err);
	if (p->dumped[0])
		proc_dump_sweep(s, p->dumped, p->dump_name);
	p->dumped[0] = '\0';
	return err;
}
