/* target.c -- the census's view of the target: every thread stopped, their registers, the mappings.
 *
 * Live: --freeze's machinery stops every thread and refuses while one is
 * inside jemalloc (where the metadata may be half-changed); refused, it is
 * tried again every RETRY_MS until the timeout.  No thread is hijacked and
 * nothing runs in the target.  With --force, once half the timeout has
 * gone by, a thread that stays inside jemalloc (a hung process) is stopped
 * with the others and the census says its figures may be off.  A core: its
 * threads as dumped, nothing to stop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/select.h"
#include "census/census.h"
#include "process/freeze.h"

#define RETRY_MS	20

static int core_threads(struct cen *c)
{
	const struct jma_backend_ops *ops = c->s->be->ops;
	struct arch_gpregs *regs = NULL;
	pid_t *tids = NULL;
	size_t n = 0;
	int err = ops->threads ? ops->threads(c->s->be, &tids, &regs, &n) : -ENOTSUP;

	if (err)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: the core's threads: %s",
				strerror(-err));
	c->th = calloc(n ? n : 1, sizeof(*c->th));
	if (!c->th) {
		free(tids);
		free(regs);
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		c->th[i].tid = tids[i];
		c->th[i].regs = regs[i];
	}
	c->nth = n;
	free(tids);
	free(regs);
	return 0;
}

static int live_threads(struct cen *c, struct jma_freeze *fz)
{
	jma_session *s = c->s;
	struct att_candidate *cand;
	size_t n;
	int err;

	for (;;) {
		/* Extents must lie in the mappings (walk.c): a fresh list, just
		 * before the stop, so that few can be newer. */
		err = syms_refresh_maps(s->syms);
		if (!err) {
			c->maps = (struct att_map *)syms_maps(s->syms, &c->nmaps);
			err = att_select_threads(s->pid, 0, 0, &cand, &n);
		}
		if (err)
			return sess_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
					(int)s->pid, strerror(-err));
		err = proc_freeze_all(s, fz, cand, n);
		/* A thread that stays inside jemalloc (a hung process): with
		 * --force, read anyway what it may be half-way through changing. */
		if (err == -EAGAIN && (s->opt.flags & JMA_F_FORCE) && cen_half_timed_out(c)) {
			err = proc_freeze_all_anyway(s, fz, cand, n);
			c->forced = !err;
		}
		free(cand);
		if (err != -EAGAIN || cen_timed_out(c))
			break;
		sess_logf(s, JMA_LOG_INFO, "census: %s; again in %d ms", jma_errmsg(s), RETRY_MS);
		usleep(RETRY_MS * 1000);
	}
	if (err)
		return err;
	c->th = calloc(fz->n ? fz->n : 1, sizeof(*c->th));
	if (!c->th) {
		proc_thaw_all(fz);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < fz->n; i++) {
		if (arch_gpregs_get(fz->t[i].tid, &c->th[c->nth].regs))
			continue;	/* gone meanwhile */
		c->th[c->nth++].tid = fz->t[i].tid;
	}
	return 0;
}

int cen_stop(struct cen *c, void **token)
{
	struct jma_freeze *fz;
	int err;

	*token = NULL;
	if (c->s->offline)
		return core_threads(c);
	fz = calloc(1, sizeof(*fz));
	if (!fz)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	err = live_threads(c, fz);
	if (err) {
		free(fz);
		return err;
	}
	*token = fz;
	return 0;
}

void cen_go(struct cen *c, void *token)
{
	struct jma_freeze *fz = token;

	if (!fz)
		return;
	proc_thaw_all(fz);
	c->out->stop_ns = (uint64_t)fz->held_ns;
	free(fz);
}
