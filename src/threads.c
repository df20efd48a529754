/* threads.c -- every thread's stack, symbolized, jemalloc frames marked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "select.h"
#include "session.h"
#include "unwind.h"

/* How long to wait for one thread to stop before reporting it unreachable
 * (a thread in uninterruptible sleep does not stop until the kernel lets go). */
#define STOP_MS 500

static void log_cb(void *arg, int level, const char *msg)
{
	const jma_session *s = arg;

	if (s->opt.log && level <= s->opt.log_level)
		s->opt.log(s->opt.log_arg, level, msg);
}

int jma_stack_of(jma_session *s, pid_t tid, uint64_t *pcs, int max, char *err, size_t errlen)
{
	struct att_thread t;
	int complete, n;

	att_thread_init(&t, s->pid, tid);
	t.log = log_cb;
	t.log_arg = s;
	t.log_level = s->opt.log_level;
	n = att_thread_seize(&t, STOP_MS);
	if (n) {
		snprintf(err, errlen, "%s", t.err);
		return n;
	}
	n = att_unwind(tid, pcs, max, &complete);
	att_thread_release(&t);
	if (n < 0)
		snprintf(err, errlen, "unwinding tid %d: %s", (int)tid, strerror(-n));
	return n;
}

void jma_frames_fill(jma_session *s, const uint64_t *pcs, int n, struct jma_frame *f)
{
	for (int i = 0; i < n; i++) {
		/* Callers' pcs are return addresses: look up the call instruction. */
		uint64_t look = pcs[i] - (i > 0);
		uint64_t off;

		f[i].pc = pcs[i];
		f[i].func = jma_syms_name(s->syms, look, &off, &f[i].module, &f[i].file, &f[i].line);
		f[i].off = off + (i > 0);
		f[i].in_jemalloc = jma_syms_in_jemalloc(s->syms, look);
	}
}

int jma_threads(jma_session *s, int max_frames, jma_thread_fn fn, void *arg)
{
	struct att_candidate *c;
	uint64_t *pcs;
	struct jma_frame *frames;
	size_t n;
	int err;

	if (!s->syms)
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "session not open");
	if (max_frames < 1)
		max_frames = 1;
	err = att_select_threads(s->pid, 0, &c, &n);
	if (err)
		return jma_fail(s, JMA_ERR_ATTACH, err, "listing threads of process %d: %s",
				(int)s->pid, strerror(-err));
	pcs = calloc((size_t)max_frames, sizeof(*pcs));
	frames = calloc((size_t)max_frames, sizeof(*frames));
	if (!pcs || !frames) {
		err = jma_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
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
		nf = s->attached && t.tid == s->th.tid ? -EBUSY
						       : jma_stack_of(s, t.tid, pcs, max_frames, why,
								      sizeof(why));
		if (nf == -EBUSY)
			snprintf(why, sizeof(why), "borrowed by jemattach");
		if (nf < 0) {
			t.err = nf;
			t.errmsg = why;
		} else {
			jma_frames_fill(s, pcs, nf, frames);
			t.nframes = nf;
			t.frames = frames;
			for (int f = 0; f < nf; f++)
				t.in_jemalloc |= frames[f].in_jemalloc;
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

	if (!t->in_jemalloc || left < 2)
		return 0;
	h->found++;
	n = snprintf(h->buf + h->used, left, "\n  thread %d (%s) is inside jemalloc%s%s:",
		     (int)t->tid, t->comm, t->syscall_name ? ", blocked in " : "",
		     t->syscall_name ? t->syscall_name : "");
	for (int i = 0; i < t->nframes && n > 0 && (size_t)n < left; i++) {
		const struct jma_frame *f = &t->frames[i];
		const char *mod = f->module ? strrchr(f->module, '/') : NULL;

		h->used += (size_t)n;
		left = h->len - h->used;
		if (f->func)
			n = snprintf(h->buf + h->used, left, "\n    #%d %s+0x%llx (%s)", i, f->func,
				     (unsigned long long)f->off, mod ? mod + 1 : "?");
		else
			n = snprintf(h->buf + h->used, left, "\n    #%d 0x%llx (%s)", i,
				     (unsigned long long)f->pc, mod ? mod + 1 : "?");
	}
	if (n > 0 && (size_t)n < left)
		h->used += (size_t)n;
	return 0;
}

void jma_explain_stall(jma_session *s)
{
	struct holders h = { .buf = s->err, .len = sizeof(s->err) };
	enum jma_errkind kind = s->kind;
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
}
