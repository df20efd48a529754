/* stuck.c -- a thread that stays asleep inside jemalloc where it may hold a lock (see stuck.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/arch.h"
#include "attach/clock.h"
#include "attach/mem.h"
#include "attach/unwind.h"
#include "attach/yield.h"
#include "process/stuck.h"
#include "symbols/symbols.h"

/* Bytes of a sleeper's stack above its stack pointer looked at for return
 * addresses into jemalloc: jemalloc's frames sit right above the libc
 * wrapper of the system call it sleeps in. */
#define PEEK		4096
/* Stacks read per system call (att_mem_read_pieces).  Small: the kernel
 * copies a batch without giving up the CPU, holding the target's mmap lock
 * (256 stacks took 0.4-0.6 ms, and a target thread woken on our CPU waited
 * that long; 16 take under 50 us). */
#define BATCH		16
#define LOOK_MS		20	/* looks again this often */

struct seen {
	pid_t tid;
	long nr;
	uint64_t sp, pc, ctxsw;
};

/* A word of @w[0..n) pointing just past a call into jemalloc's code: a
 * return address, live or stale. */
static int has_jemalloc_word(jma_session *s, const uint64_t *w, size_t n)
{
	const struct jma_copy *c = syms_jemalloc(s->syms);
	uint64_t lo = c->code[0].lo, hi = c->code[c->ncode - 1].hi;

	for (size_t i = 0; i < n; i++)
		if (w[i] > lo && w[i] <= hi && syms_in_jemalloc(s->syms, w[i] - 1))
			return 1;
	return 0;
}

/* Of the sleepers @v[0..n), move to the front those that may hold a
 * jemalloc lock (filling @h[] for them) and return how many.  Their stacks
 * are read in batches; only a stack with a word pointing into jemalloc (or a
 * pc in it) is walked, which tells a live jemalloc frame from a stale word
 * and a condition wait from a lock. */
static size_t holders(jma_session *s, struct seen *v, size_t n, struct jma_holder *h, char *buf)
{
	struct att_piece p[BATCH];
	size_t nm, k = 0;
	const struct att_map *maps = syms_maps(s->syms, &nm);

	for (size_t b = 0; b < n; b += BATCH) {
		size_t cnt = n - b < BATCH ? n - b : BATCH;

		for (size_t j = 0; j < cnt; j++) {
			const struct att_map *m = att_maps_find(maps, nm, v[b + j].sp);
			uint64_t room = m ? (m->end - v[b + j].sp) & ~(uint64_t)7 : 0;

			p[j] = (struct att_piece){ v[b + j].sp, buf + j * PEEK, room < PEEK ? room : PEEK, 0 };
		}
		att_yield_point();
		if (att_mem_read_pieces(s->pid, p, cnt))
			return k;
		for (size_t j = 0; j < cnt; j++) {
			struct seen x = v[b + j];
			struct att_status st;
			uint64_t pcs[JMA_HOLDER_FRAMES];
			int nf;

			if (!syms_in_jemalloc(s->syms, x.pc) &&
			    !(p[j].ok && has_jemalloc_word(s, p[j].buf, p[j].len / 8)))
				continue;
			nf = att_unwind_at(s->pid, x.tid, x.sp, x.pc, maps, nm, pcs, JMA_HOLDER_FRAMES);
			/* Its status gives both the context switches and its name. */
			if (!proc_holder_of(s, x.tid, pcs, nf, &h[k]) ||
			    att_proc_status(s->pid, x.tid, &st))
				continue;
			snprintf(h[k].comm, sizeof(h[k].comm), "%s", st.name);
			x.ctxsw = st.ctxsw;
			h[k].syscall = x.nr;
			v[k++] = x;
		}
	}
	return k;
}

/* Still asleep in the same call at the same place, never switched in? */
static int unmoved(pid_t pid, const struct seen *v)
{
	struct att_status st;
	uint64_t sp, pc;

	return att_proc_syscall_at(pid, v->tid, &sp, &pc) == v->nr && sp == v->sp && pc == v->pc &&
	       att_proc_status(pid, v->tid, &st) == 0 && st.ctxsw == v->ctxsw;
}

int proc_stuck_find(jma_session *s, struct jma_holder *h)
{
	const struct jma_copy *c = syms_jemalloc(s->syms);
	size_t nt, n = 0, k, pick = 0;
	pid_t *tids;
	struct seen *v;
	struct jma_holder *hs;
	char *buf;
	int64_t since, t0 = att_now_ns();
	int err, dir;

	if (!c || !c->ncode)
		return 0;
	if ((dir = att_proc_taskdir(s->pid)) < 0)
		return dir;
	if ((err = att_proc_tasks_in(dir, &tids, &nt))) {
		close(dir);
		return err;
	}
	v = calloc(nt ? nt : 1, sizeof(*v));
	hs = calloc(nt ? nt : 1, sizeof(*hs));
	buf = malloc((size_t)BATCH * PEEK);
	if (!v || !hs || !buf) {
		err = -ENOMEM;
		goto out;
	}
	/* The first look, at every thread: asleep in a system call that is not
	 * one of jemalloc's memory calls (they finish). */
	for (size_t i = 0; i < nt; i++) {
		att_yield_point();
		v[n].tid = tids[i];
		v[n].nr = att_proc_syscall_in(dir, tids[i], &v[n].sp, &v[n].pc);
		if (v[n].nr >= 0 && v[n].sp && arch_syscall_class(v[n].nr) != ARCH_SC_MEMORY)
			n++;
	}
	close(dir);
	dir = -1;
	k = holders(s, v, n, hs, buf);
	since = att_now_ns();
	sess_logf(s, JMA_LOG_DEBUG, "looked for a stuck lock holder: %zu threads, %zu asleep in "
		 "system calls, %zu may hold a lock, in %.3f ms", nt, n, k, (double)(since - t0) / 1e6);
	/* A thread in a futex is waiting for a lock that a running holder
	 * passes on: on a loaded machine it may go unwoken for a hundred
	 * milliseconds (make check's 16-thread stress target did).  Those
	 * alone are watched to JMA_STUCK_FUTEX_MS; a thread asleep in any other
	 * call settles it at JMA_STUCK_MS. */
	for (int waited = 0; k; waited += LOOK_MS) {
		size_t kept = 0, other = 0;

		for (size_t i = 0; i < k; i++)
			other += arch_syscall_class(v[i].nr) != ARCH_SC_FUTEX;
		if (waited >= (other ? JMA_STUCK_MS : JMA_STUCK_FUTEX_MS))
			break;
		usleep(LOOK_MS * 1000);
		for (size_t i = 0; i < k; i++)
			if (unmoved(s->pid, &v[i])) {
				hs[kept] = hs[i];
				v[kept++] = v[i];
			}
		k = kept;
	}
	/* The thread asleep elsewhere than in a futex is the holder; those in
	 * futexes may only be waiting for it. */
	for (size_t i = 0; i < k; i++)
		if (arch_syscall_class(v[i].nr) != ARCH_SC_FUTEX) {
			pick = i;
			break;
		}
	if (k) {
		*h = hs[pick];
		h->ms = (att_now_ns() - since) / 1000000;
	}
	err = k > 0;
out:
	if (dir >= 0)
		close(dir);
	free(buf);
	free(hs);
	free(v);
	free(tids);
	return err;
}
