/* stacks.c -- one thread's stack: stopped just long enough to unwind it, then named. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/unwind.h"
#include "process/engine.h"
#include "process/stacks.h"
#include "symbols/symbols.h"

/* How long to wait for one thread to stop before reporting it unreachable
 * (a thread in uninterruptible sleep does not stop until the kernel lets go). */
#define STOP_MS 500

int proc_stack_of(jma_session *s, pid_t tid, uint64_t *pcs, int max, char *err, size_t errlen)
{
	struct att_thread t;
	const struct att_map *maps;
	size_t nm;
	int complete, n;

	proc_thread_setup(s, &t, tid);
	n = att_thread_seize(&t, STOP_MS);
	if (n) {
		snprintf(err, errlen, "%s", t.err);
		return n;
	}
	maps = syms_maps(s->syms, &nm);
	n = att_unwind(s->pid, tid, NULL, maps, nm, pcs, max, &complete);
	att_thread_release(&t);
	if (n < 0)
		snprintf(err, errlen, "unwinding tid %d: %s", (int)tid, strerror(-n));
	return n;
}

void proc_frames_fill(jma_session *s, const uint64_t *pcs, int n, struct jma_frame *f)
{
	for (int i = 0; i < n; i++) {
		/* Callers' pcs are return addresses: look up the call instruction. */
		uint64_t look = pcs[i] - (i > 0);
		uint64_t off;

		f[i].pc = pcs[i];
		f[i].func = syms_name(s->syms, look, &off, &f[i].module, &f[i].file, &f[i].line);
		f[i].demangled = syms_demangled(s->syms, f[i].func);
		f[i].off = off + (i > 0);
		f[i].in_jemalloc = syms_in_jemalloc(s->syms, look);
	}
}

void proc_frames_format(const struct jma_frame *f, int n, char *buf, size_t len, size_t *used)
{
	for (int i = 0; i < n && *used + 1 < len; i++) {
		const char *mod = f[i].module ? strrchr(f[i].module, '/') : NULL;
		const char *mark = f[i].in_jemalloc ? " [jemalloc]" : "";
		int k;

		if (f[i].func)
			k = snprintf(buf + *used, len - *used, "\n    #%d %s+0x%llx (%s)%s", i, f[i].demangled,
				     (unsigned long long)f[i].off, mod ? mod + 1 : "?", mark);
		else
			k = snprintf(buf + *used, len - *used, "\n    #%d 0x%llx (%s)%s", i,
				     (unsigned long long)f[i].pc, mod ? mod + 1 : "?", mark);
		if (k < 0)
			break;
		*used = (size_t)k < len - *used ? *used + (size_t)k : len - 1;
	}
}

int proc_lock_holder_index(const struct jma_frame_kind *k, int n)
{
	for (int i = 0; i < n; i++) {
		if (!k[i].in_jemalloc)
			continue;
		for (int j = 0; j < i; j++)
			if (k[j].cond_wait)
				return -1;
		return i;
	}
	return -1;
}

int proc_lock_holder_frame(jma_session *s, const uint64_t *pcs, int n)
{
	struct jma_frame_kind k[JMA_HOLDER_FRAMES];

	if (n > JMA_HOLDER_FRAMES)
		n = JMA_HOLDER_FRAMES;
	for (int i = 0; i < n; i++) {
		/* Callers' pcs are return addresses: look at the call instruction. */
		uint64_t look = pcs[i] - (i > 0);

		k[i].in_jemalloc = syms_in_jemalloc(s->syms, look);
		/* Only frames below a jemalloc frame can matter. */
		k[i].cond_wait = !k[i].in_jemalloc && syms_in_cond_wait(s->syms, look);
		if (k[i].in_jemalloc)
			return proc_lock_holder_index(k, i + 1);
	}
	return -1;
}

int proc_holder_of(jma_session *s, pid_t tid, const uint64_t *pcs, int n, struct jma_holder *h)
{
	if (n > JMA_HOLDER_FRAMES)
		n = JMA_HOLDER_FRAMES;
	if (n <= 0)
		return 0;
	if (proc_lock_holder_frame(s, pcs, n) < 0)
		return 0;
	h->tid = tid;
	memcpy(h->pcs, pcs, (size_t)n * sizeof(*pcs));
	h->nf = n;
	return 1;
}

void proc_holder_format(jma_session *s, const struct jma_holder *h, const char *lead,
		       const char *ways, int stack, char *buf, size_t len)
{
	struct jma_frame f[JMA_HOLDER_FRAMES];
	const char *sc = h->syscall >= 0 ? arch_syscall_name(h->syscall) : NULL;
	char asleep[96] = "";
	size_t used;
	int k, n;

	proc_frames_fill(s, h->pcs, h->nf, f);
	k = proc_lock_holder_frame(s, h->pcs, h->nf);
	if (h->syscall >= 0 && sc)
		snprintf(asleep, sizeof(asleep), ", asleep in %s for at least %lld ms", sc,
			 (long long)h->ms);
	else if (h->syscall >= 0)
		snprintf(asleep, sizeof(asleep), ", asleep in system call %ld for at least %lld ms",
			 h->syscall, (long long)h->ms);
	n = snprintf(buf, len, "%s: tid %d (%s) is inside jemalloc and may hold a lock, in %s%s; %s%s",
		     lead, (int)h->tid, h->comm, k >= 0 && f[k].func ? f[k].demangled : "jemalloc", asleep,
		     ways, stack ? ":" : "");
	used = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
	if (stack)
		proc_frames_format(f, h->nf, buf, len, &used);
}
