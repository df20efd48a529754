/* threads.c -- every thread's stack, symbolized, jemalloc frames marked; who holds a lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/arch.h"
#include "attach/procfs.h"
#include "attach/select.h"
#include "process/stacks.h"
#include "process/threads.h"

int jma_process_exe(pid_t pid, char *exe, size_t exelen, char *comm, size_t commlen)
{
	char link[64], state;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, exelen - 1);
	if (n <= 0)
		return n ? -errno : -ENOENT;
	exe[n] = '\0';
	if (att_proc_stat(pid, pid, &state, comm, commlen))
		comm[0] = '\0';
	return 0;
}

int jma_threads(jma_session *s, int max_frames, jma_thread_fn fn, void *arg)
{
	struct att_candidate *c;
	uint64_t *pcs;
	struct jma_frame *frames;
	size_t n;
	int err;
	pid_t borrowed;

	if (!s->syms)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	if (max_frames < 1)
		max_frames = 1;
	err = att_select_threads(s->pid, 0, 0, &c, &n);
	if (err)
		return sess_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
				(int)s->pid, strerror(-err));
	pcs = calloc((size_t)max_frames, sizeof(*pcs));
	frames = calloc((size_t)max_frames, sizeof(*frames));
	if (!pcs || !frames) {
		err = sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
	borrowed = sess_call_tid(s);
	/* Report in thread-id order, not preference order. */
	for (size_t k = 0; k < n; k++) {
		size_t i = 0;
		char why[768] = "";
		struct jma_thread t = { 0 };
		int nf;

		for (size_t j = 1; j < n; j++)
			if (c[j].tid != 0 && (c[i].tid == 0 || c[j].tid < c[i].tid))
				i = j;
		t.tid = c[i].tid;
		snprintf(t.comm, sizeof(t.comm), "%s", c[i].comm);
		t.state = c[i].state;
		t.syscall = c[i].syscall;
		t.syscall_name = c[i].syscall >= 0 ? arch_syscall_name(c[i].syscall) : NULL;
		c[i].tid = 0;
		nf = t.tid == borrowed ? -EBUSY : proc_stack_of(s, t.tid, pcs, max_frames, why,
								       sizeof(why));
		if (nf == -EBUSY)
			snprintf(why, sizeof(why), "borrowed by jemattach");
		if (nf < 0) {
			t.err = nf;
			t.errmsg = why;
		} else {
			proc_frames_fill(s, pcs, nf, frames);
			t.nframes = nf;
			t.frames = frames;
			for (int f = 0; f < nf; f++)
				t.in_jemalloc |= frames[f].in_jemalloc;
			t.may_hold_lock = proc_lock_holder_frame(s, pcs, nf) >= 0;
		}
		if ((err = fn(arg, &t)))
			break;
	}
out:
	free(pcs);
	free(frames);
	free(c);
	return err;
}

struct holders {
	char *buf;
	size_t len, used;
	int found;
};

static int note_holder(void *arg, const struct jma_thread *t)
{
	struct holders *h = arg;
	size_t left = h->len - h->used;
	int n;

	if (!t->may_hold_lock || left < 2)
		return 0;
	h->found++;
	n = snprintf(h->buf + h->used, left, "\n  thread %d (%s) is inside jemalloc%s%s:",
		     (int)t->tid, t->comm, t->syscall_name ? ", blocked in " : "",
		     t->syscall_name ? t->syscall_name : "");
	if (n < 0)
		return 0;
	h->used = (size_t)n < left ? h->used + (size_t)n : h->len - 1;
	proc_frames_format(t->frames, t->nframes, h->buf, h->len, &h->used);
	return 0;
}

void proc_explain_stall(jma_session *s)
{
	struct holders h = { .buf = s->err, .len = sizeof(s->err) };
	enum jma_errkind kind = s->kind;
	unsigned hints = s->hints;
	char keep[sizeof(s->err)];
	int err;

	h.used = strlen(s->err);
	memcpy(keep, s->err, sizeof(keep));
	err = jma_threads(s, 16, note_holder, &h);
	if (err)
		memcpy(s->err, keep, sizeof(keep));
	else if (!h.found)
		snprintf(s->err + h.used, h.len - h.used, "\n  no other thread is inside jemalloc "
			 "now: whatever held the lock has let go");
	s->kind = kind;
	s->hints = hints;
}
