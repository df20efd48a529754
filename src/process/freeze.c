/* freeze.c -- --freeze: stop every thread, refusing if one may hold a jemalloc lock (see freeze.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/unwind.h"
#include "process/engine.h"
#include "process/freeze.h"
#include "process/stacks.h"
#include "symbols/symbols.h"

#define STOP_MS 1000

static int freeze(jma_session *s, struct jma_freeze *fz, const struct att_candidate *c, size_t n,
		  int refuse)
{
	size_t nm;
	const struct att_map *maps = syms_maps(s->syms, &nm);

	/* The holder check below may need to name code: not with every thread
	 * stopped. */
	syms_prepare(s->syms);
	fz->t = calloc(n ? n : 1, sizeof(*fz->t));
	fz->n = 0;
	fz->since_ns = att_now_ns();
	if (!fz->t)
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct att_thread *t = &fz->t[fz->n];
		uint64_t pcs[JMA_HOLDER_FRAMES];
		struct jma_holder h = { .syscall = -1 };
		char msg[sizeof(s->err)];
		int err, complete, nf;

		proc_thread_setup(s, t, c[i].tid);
		err = att_thread_seize(t, STOP_MS);
		if (err == -ESRCH)
			continue;	/* exited meanwhile: nothing to freeze */
		if (err) {
			sess_fail_hint(s, JMA_HINT_NO_FREEZE, err == -EPERM ? JMA_ERR_ATTACH : JMA_ERR_UNSAFE,
				      err, "cannot stop every thread: tid %d (%s): %s", (int)c[i].tid,
				      c[i].comm, t->err);
			proc_thaw_all(fz);
			return err;
		}
		fz->n++;
		nf = att_unwind(s->pid, t->tid, NULL, maps, nm, pcs, JMA_HOLDER_FRAMES, &complete);
		if (!proc_holder_of(s, t->tid, pcs, nf, &h))
			continue;
		snprintf(h.comm, sizeof(h.comm), "%s", c[i].comm);
		if (!refuse) {
			proc_holder_format(s, &h, "stopped anyway (forced)", "what it was changing "
					  "may be read half-changed", 0, msg, sizeof(msg));
			sess_logf(s, JMA_LOG_WARN, "%s", msg);
			continue;
		}
		proc_holder_format(s, &h, "freeze refused", "what it is changing would be read "
				  "half-changed", 1, msg, sizeof(msg));
		sess_fail_hint(s, JMA_HINT_RETRY | JMA_HINT_NO_FREEZE, JMA_ERR_UNSAFE, -EAGAIN, "%s", msg);
		proc_thaw_all(fz);
		return -EAGAIN;
	}
	sess_logf(s, JMA_LOG_INFO, "froze %zu threads", fz->n);
	return 0;
}

int proc_freeze_all(jma_session *s, struct jma_freeze *fz, const struct att_candidate *c, size_t n)
{
	return freeze(s, fz, c, n, 1);
}

int proc_freeze_all_anyway(jma_session *s, struct jma_freeze *fz, const struct att_candidate *c,
			  size_t n)
{
	return freeze(s, fz, c, n, 0);
}

int proc_freeze_take(struct jma_freeze *fz, pid_t tid, struct att_thread *out)
{
	for (size_t i = 0; i < fz->n; i++) {
		if (fz->t[i].tid != tid)
			continue;
		*out = fz->t[i];
		memmove(&fz->t[i], &fz->t[i + 1], (fz->n - i - 1) * sizeof(*fz->t));
		fz->n--;
		return 0;
	}
	return -ESRCH;
}

void proc_freeze_put(struct jma_freeze *fz, struct att_thread *t)
{
	struct att_thread *more = realloc(fz->t, (fz->n + 1) * sizeof(*more));

	if (!more) {
		att_thread_release(t);
		return;
	}
	fz->t = more;
	fz->t[fz->n++] = *t;
}

void proc_thaw_all(struct jma_freeze *fz)
{
	if (fz->t)
		fz->held_ns = att_now_ns() - fz->since_ns;
	for (size_t i = fz->n; i-- > 0;)
		att_thread_release(&fz->t[i]);
	free(fz->t);
	fz->t = NULL;
	fz->n = 0;
}
