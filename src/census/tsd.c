/* tsd.c -- where each thread's jemalloc 5 thread data (tsd_t) is, with or without symbols.
 *
 * tsd is jemalloc 5's one TLS variable, tsd_tls: at the thread pointer +
 * tpoff in every thread, found as tls.c finds any TLS variable of
 * jemalloc's -- a library's GOT slot (initial-exec), or, linked into an
 * executable (Redis, a Rust program), tsd_tls's symbol in the executable's
 * TLS block.  A library stripped of its symbols still has its one slot.  An
 * executable stripped of every symbol has neither: its TLS block is
 * searched, once the threads are stopped, for what only a tsd holds: its
 * embedded tcache points at its own tcache_slow, which points back (5.3+),
 * or its bin array descriptor at its own bins (5.1, 5.2) -- at the offsets
 * the layout derived.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

void cen_tsd_find(struct cen *c)
{
	uint64_t off = 0, size = 0;
	int is_tls = 0, sym = syms_jemalloc_sym(c->s->syms, "tsd_tls", &off, &size, &is_tls) && is_tls;
	struct cen_tls t;

	if (cen_tls_find(c, sym ? off : CEN_TLS_ANY, &t) || t.how != CEN_TLS_TP)
		return;
	c->tpoff = (uint64_t)t.tpoff;
	c->have_tpoff = 1;
	snprintf(c->tsd_how, sizeof(c->tsd_how), "%s", t.in_block ? "symbol tsd_tls" :
		 "TLS offset from its GOT slot");
}

/* Is a tsd at @at of the thread data @d (its bytes from @base)?  1 yes, 0
 * not, -1 cannot tell (no cache made yet). */
static int tsd_at(const struct cen *c, const unsigned char *d, uint64_t base, uint64_t at)
{
	const struct cen_layout *L = c->L;
	const unsigned char *t = d + (at - base);
	uint64_t w, back;

	if (L->bins53) {
		memcpy(&w, t + L->tcache_off, 8);
		memcpy(&back, t + L->rtree_ctx_off - 8, 8);	/* tcache_slow's last word */
		if (!w)
			return -1;
		return w == at + L->slow_off && back == at + L->tcache_off;
	}
	if (!L->desc_off)
		return -1;
	/* 5.1, 5.2: cache_bin_array_descriptor_t {link, bins_small, bins_large}. */
	memcpy(&w, t + L->tcache_off + L->desc_off + 16, 8);
	memcpy(&back, t + L->tcache_off + L->desc_off + 24, 8);
	if (!w)
		return -1;
	return w == at + L->tcache_off + 0x10 && back == at + L->tcache_off + L->large_off;
}

#define TLS_MAX	(1u << 20)	/* an executable's TLS block, at most */

/* tpoff found in thread @t's TLS block (an executable's, @block bytes at
 * @base_off from the thread pointer). */
static int scan_block(struct cen *c, size_t t, int64_t base_off, uint64_t block)
{
	uint64_t tp = arch_regs_tls_base(&c->th[t].regs), base = tp + (uint64_t)base_off;
	unsigned char *d;
	int r = -1;

	if (block > TLS_MAX || block < c->L->tls_size || !cen_ptr_ok(tp) || !cen_ptr_ok(base) ||
	    !(d = malloc(block)))
		return -1;
	if (!cen_read(c, base, d, block))
		for (uint64_t at = base; at + c->L->tls_size <= base + block && r != 1; at += 8)
			if ((r = tsd_at(c, d, base, at)) == 1)
				c->tpoff = at - tp;
	free(d);
	return r;
}

int cen_tsd_settle(struct cen *c)
{
	uint64_t block = cen_tls_memsz(c);
	int64_t base_off;

	if (c->have_tpoff || cen_tls_exec(c, 0, &base_off))
		return 0;
	for (size_t t = 0; t < c->nth && !c->have_tpoff; t++)
		if (scan_block(c, t, base_off, block) == 1) {
			c->have_tpoff = 1;
			snprintf(c->tsd_how, sizeof(c->tsd_how), "found in thread %d's TLS block",
				 (int)c->th[t].tid);
		}
	return 0;
}
