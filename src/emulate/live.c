/* live.c -- emulating on a live process: pages read with process_vm_readv.
 *
 * The only contact with the process's threads is reading one thread's
 * registers for its thread pointer (jemalloc's TLS): seize, interrupt, read it,
 * detach -- no code runs.  With --freeze every thread is held stopped while
 * the image is copied, for a consistent snapshot; none is inside our calls, so
 * freezing a thread that holds a jemalloc lock is harmless here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/mem.h"
#include "attach/procfs.h"
#include "emulate/backend.h"
#include "process/engine.h"
#include "process/open.h"

struct live {
	struct emu_origin o;
	pid_t pid;
	struct att_status st;		/* its status, refreshed by status */
	char what[32];
	struct att_thread *held;	/* stopped threads: the one whose TLS is used, or all (--freeze) */
	size_t nheld;
};

static int live_page(void *arg, uint64_t addr, void *page)
{
	const struct live *l = arg;
	int err = att_mem_read(l->pid, addr, page, EMU_PAGE);

	return err ? -EFAULT : 0;
}

static int live_maps_text(void *arg, char **text, size_t *len)
{
	const struct live *l = arg;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)l->pid);
	return att_proc_read(path, text, len);
}

static void live_finish(struct emu_origin *o)
{
	struct live *l = (struct live *)o;

	for (size_t i = 0; i < l->nheld; i++)
		if (l->held[i].seized)
			att_thread_detach(&l->held[i]);
	free(l->held);
	l->held = NULL;
	l->nheld = 0;
}

/* Stop @tids (all of them, or only @want) and read @want's thread pointer. */
static int hold_threads(struct live *l, jma_session *s, const pid_t *tids, size_t n, pid_t want,
			uint64_t *tp)
{
	int found = 0;

	l->held = calloc(n, sizeof(*l->held));
	if (!l->held)
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct att_thread *t = &l->held[l->nheld];
		int err;

		if (!(s->opt.flags & JMA_F_FREEZE) && tids[i] != want)
			continue;
		proc_thread_setup(s, t, tids[i]);
		err = att_thread_seize(t, 2000);
		if (err && tids[i] != want)
			continue;	/* a thread that just exited */
		if (err)
			return proc_fail_att(s, t, err == -EPERM ? JMA_ERR_ATTACH : sess_kind_of(err), err);
		l->nheld++;
		if (tids[i] != want)
			continue;
		if ((err = arch_tls_base(tids[i], tp)))
			return sess_fail(s, JMA_ERR_ATTACH, err, "reading the thread pointer of tid %d: %s",
					(int)tids[i], strerror(-err));
		found = 1;
		l->o.tid = want;
		snprintf(l->o.tid_comm, sizeof(l->o.tid_comm), "%s", l->st.name);
		snprintf(l->o.tid_why, sizeof(l->o.tid_why), "emulated with its thread-local data; "
			 "no thread of the process runs jemalloc for us");
		if (!(s->opt.flags & JMA_F_FREEZE))
			att_thread_detach(t);
	}
	if (!found)
		return sess_fail(s, JMA_ERR_USAGE, -ESRCH, "thread %d is not a thread of process %d",
				(int)want, (int)l->pid);
	return 0;
}

static int live_prepare(struct emu_origin *o, jma_session *s, struct emu_source *src,
			uint64_t **lo, uint64_t **hi, size_t *n, uint64_t *tp)
{
	struct live *l = (struct live *)o;
	struct att_map *maps;
	pid_t *tids, want = s->opt.thread ? s->opt.thread : l->pid;
	size_t nt, nm;
	int err;

	if ((err = att_proc_tasks(l->pid, &tids, &nt)))
		return sess_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
				(int)l->pid, strerror(-err));
	err = hold_threads(l, s, tids, nt, want, tp);
	free(tids);
	if (!err && (s->opt.flags & JMA_F_FREEZE))
		sess_logf(s, JMA_LOG_INFO, "freeze: %zu threads stopped while the copy is made",
			 l->nheld);
	if (!err && (err = att_proc_maps(l->pid, &maps, &nm)))
		sess_fail(s, JMA_ERR_ATTACH, err, "reading /proc/%d/maps: %s", (int)l->pid,
			 strerror(-err));
	if (err) {
		live_finish(o);
		return err;
	}
	*lo = calloc(nm + 1, sizeof(**lo));
	*hi = calloc(nm + 1, sizeof(**hi));
	for (size_t i = 0; *lo && *hi && i < nm; i++) {
		(*lo)[i] = maps[i].start;
		(*hi)[i] = maps[i].end;
	}
	att_maps_free(maps, nm);
	if (!*lo || !*hi) {
		free(*lo);
		free(*hi);
		live_finish(o);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	*n = nm;
	src->read_page = live_page;
	src->arg = l;
	return 0;
}

static void live_status(struct emu_origin *o, struct jma_target_info *info)
{
	struct live *l = (struct live *)o;

	att_proc_status(l->pid, 0, &l->st);
	snprintf(info->comm, sizeof(info->comm), "%s", l->st.name);
	info->nthreads = l->st.nthreads;
}

static void live_destroy(struct emu_origin *o)
{
	live_finish(o);
	free(o);
}

int jma_open_emulated(jma_session *s, pid_t pid)
{
	struct att_status st;
	struct live *l;
	int err;

	if (s->syms)
		return sess_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	err = proc_open_process(s, pid, &st);
	if (err)
		return err;
	if (!s->je)
		return 0;	/* JMA_F_ANY_PROCESS: nothing to emulate */
	l = calloc(1, sizeof(*l));
	if (!l)
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	l->pid = pid;
	l->st = st;
	snprintf(l->what, sizeof(l->what), "process %d", (int)pid);
	l->o.what = l->what;
	l->o.prepare = live_prepare;
	l->o.finish = live_finish;
	l->o.maps_text = live_maps_text;
	l->o.status = live_status;
	l->o.destroy = live_destroy;
	return emu_backend_install(s, &l->o);
}
