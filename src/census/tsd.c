/* tsd.c -- where each thread's jemalloc thread data (tsd_t) is, with or without symbols.
 *
 * tsd is jemalloc's one TLS variable, tsd_tls: at the thread pointer +
 * tpoff in every thread.  A library reaches it through one GOT slot the
 * loader fills with tpoff (initial-exec TLS: R_X86_64_TPOFF64,
 * R_AARCH64_TLS_TPREL), which the census reads.  Linked into an executable
 * (Redis, a Rust program), the slot is gone (local-exec: the offset is in
 * the code): tsd_tls's symbol places it in the executable's TLS block; with
 * no symbols, the block itself is searched, once the threads are stopped,
 * for what only a tsd holds: its embedded tcache points at its own
 * tcache_slow, which points back (5.3+), or its bin array descriptor at its
 * own bins (5.1, 5.2) -- at the offsets the layout derived.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

/* The GOT slot to read with several (Debian's arm64 library has two, both
 * for offset 0): the one for tsd_tls's offset, any when all agree. */
void cen_tpoff_find(struct cen *c, const struct cen_elf *f, uint64_t bias)
{
	uint64_t off = 0, size = 0;
	int is_tls = 0, sym = jma_syms_jemalloc_sym(c->s->syms, "tsd_tls", &off, &size, &is_tls) && is_tls;
	int above = f->machine == EM_AARCH64, same = 1;
	int64_t v;

	for (size_t i = 1; i < f->ntpoff; i++)
		same &= f->tpoff_addend[i] == f->tpoff_addend[0];
	for (size_t i = 0; i < f->ntpoff && !c->have_tpoff; i++) {
		if (f->ntpoff > 1 && (sym ? f->tpoff_addend[i] != (int64_t)off : !same))
			continue;
		if (cen_read(c, f->tpoff_slot[i] + bias, &v, sizeof(v)))
			continue;
		if (above ? v > 0 && v < (1LL << 32) : v < 0 && v > -(1LL << 32)) {
			c->tpoff = (uint64_t)v;
			c->have_tpoff = 1;
			snprintf(c->tsd_how, sizeof(c->tsd_how), "TLS offset from its GOT slot");
		}
	}
	/* x86_64 keeps the executable's TLS block below the thread pointer
	 * (ending at it); arm64 above, past the 16-byte TCB, aligned. */
	if (!c->have_tpoff && !f->ntpoff && sym && f->tls_align) {
		uint64_t a = f->tls_align, block = (f->tls_memsz + a - 1) / a * a;
		c->tpoff = above ? (16 + a - 1) / a * a + off : off - block;
		c->have_tpoff = 1;
		snprintf(c->tsd_how, sizeof(c->tsd_how), "symbol tsd_tls");
	}
	c->tls_block = f->ntpoff ? 0 : f->tls_memsz;
	c->tls_align = f->tls_align;
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

/* tpoff found in thread @t's TLS block (an executable's). */
static int scan_block(struct cen *c, size_t t)
{
	uint64_t a = c->tls_align ? c->tls_align : 8, block = (c->tls_block + a - 1) / a * a;
	uint64_t tp = arch_regs_tls_base(&c->th[t].regs), base;
	unsigned char *d;
	int r = -1;

	/* arm64 keeps the block above the thread pointer, past the TCB. */
	base = c->L->machine == EM_AARCH64 ? tp + (16 + a - 1) / a * a : tp - block;
	if (!block || block > TLS_MAX || block < c->L->tls_size || !cen_ptr_ok(base) ||
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
	if (c->have_tpoff || !c->tls_block)
		return 0;
	for (size_t t = 0; t < c->nth && !c->have_tpoff; t++)
		if (scan_block(c, t) == 1) {
			c->have_tpoff = 1;
			snprintf(c->tsd_how, sizeof(c->tsd_how), "found in thread %d's TLS block",
				 (int)c->th[t].tid);
		}
	return 0;
}
