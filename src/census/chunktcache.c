/* chunktcache.c -- 3.6's and 4.5's thread caches and quarantines: allocated for jemalloc, free for the program.
 *
 * A thread's tcache_t is a block of its own (an arena allocation: the
 * header, nhbins tcache_bin_t, then every bin's stack of pointers), named by
 * a TLS pointer: 4.5's tsd.tcache, 3.6's tcache_tls; values up to 3 are
 * states (disabled, reincarnated, purgatory), not caches.  A bin holds
 * ncached pointers: 4.5 at avail[-ncached..-1], 3.6 at avail[0..ncached).
 * nhbins is the library's; a library without it has it in each cache: the
 * first bin's stack starts right after the bins (3.6), 4.5's ends
 * ncached_max pointers later.  tcache.create's caches (4.x) go through
 * tcache.c's tcaches walk to chk_read_tcache.
 *
 * A quarantine (opt.quarantine, 3.x/4.x's use-after-free detector) holds
 * freed blocks back, still allocated for jemalloc: a ring of {ptr, usize}
 * of 2^lg_maxobjs entries, curobjs of them from first.  Its blocks count
 * with the thread caches' (said in the output).
 *
 * Both are the target's to forge: each bin (and the ring, in at most two
 * pieces) is claimed through tcache.c, believed only as far as its stack
 * can hold -- ncached_max items (small bins: 2 * nregs within [20 (4.x) or
 * 0 (3.6), 200], large ones 20), inside one readable mapping, overlapping
 * no other stack -- and copied there with the deadline checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/chunks.h"

#define TCACHE_STATE_MAX	3
#define NSLOTS_SMALL_MAX	200	/* TCACHE_NSLOTS_SMALL_MAX */
#define NSLOTS_SMALL_MIN_4	20	/* 4.x's TCACHE_NSLOTS_SMALL_MIN */
#define NSLOTS_LARGE		20	/* TCACHE_NSLOTS_LARGE */
#define LG_QUARANTINE_MAX	22	/* a ring of more entries is not one */

/* Bin @i's ncached_max (tcache_boot's). */
static uint64_t ncached_max(const struct cen_chunks *k, unsigned i)
{
	uint64_t n;

	if (i >= k->nbins)
		return NSLOTS_LARGE;
	n = 2ULL * k->bins[i].nregs;
	if (k->L->major == 4 && n < NSLOTS_SMALL_MIN_4)
		n = NSLOTS_SMALL_MIN_4;
	return n < NSLOTS_SMALL_MAX ? n : NSLOTS_SMALL_MAX;
}

/* The cache's bin count from its first bin's stack (no nhbins symbol). */
static unsigned nhbins_of(struct cen *c, uint64_t tc, uint64_t avail0)
{
	const struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	uint64_t start = avail0;

	if (L->avail_below)
		start -= 8 * ncached_max(k, 0);
	if (start < tc + L->tc_tbins || (start - tc - L->tc_tbins) % L->tbin_size)
		return 0;
	return (unsigned)((start - tc - L->tc_tbins) / L->tbin_size);
}

int chk_read_tcache(struct cen *c, struct cen_stacks *st, uint64_t tc, int explicit_cache)
{
	const struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	unsigned char *buf;
	uint64_t avail0;
	unsigned nh = k->nhbins;
	int err;

	if (cen_read(c, tc + L->tc_tbins + L->tbin_avail, &avail0, 8))
		return 0;
	if (!nh)
		nh = nhbins_of(c, tc, avail0);
	if (nh <= k->nbins || nh > c->g.nsizes || !(buf = malloc(nh * L->tbin_size)))
		return nh <= k->nbins || nh > c->g.nsizes ? 0 : -ENOMEM;
	if ((err = cen_stack_add(c, tc)) || cen_read(c, tc + L->tc_tbins, buf, nh * L->tbin_size))
		goto out;
	for (unsigned i = 0; i < nh && !err; i++) {
		uint32_t n;
		uint64_t avail;

		memcpy(&n, buf + i * L->tbin_size + L->tbin_ncached, 4);
		memcpy(&avail, buf + i * L->tbin_size + L->tbin_avail, 8);
		if (n && (!L->avail_below || avail > n * 8ULL))
			err = cen_stack_claim(c, st, L->avail_below ? avail - n * 8ULL : avail, n,
					      ncached_max(k, i), explicit_cache ? CEN_STACK_EXPLICIT : 0);
	}
out:
	free(buf);
	return err;
}

/* A quarantine at @q: the curobjs entries of its ring from first, which
 * wraps at 2^lg_maxobjs. */
static int quarantine(struct cen *c, struct cen_stacks *st, uint64_t q)
{
	uint64_t h[4], size, n1;
	int err;

	/* {curbytes, curobjs, first, lg_maxobjs}, then the ring */
	if (!cen_ptr_ok(q) || cen_read(c, q, h, sizeof(h)) || h[3] > LG_QUARANTINE_MAX ||
	    h[1] > (1ULL << h[3]) || h[2] >> h[3])
		return 0;
	if ((err = cen_stack_add(c, q)))
		return err;
	size = 1ULL << h[3];
	n1 = h[1] < size - h[2] ? h[1] : size - h[2];
	err = cen_stack_claim(c, st, q + 32 + h[2] * 16, n1, size, CEN_STACK_RING);
	return err ? err : cen_stack_claim(c, st, q + 32, h[1] - n1, size, CEN_STACK_RING);
}

int chk_thread_cache(struct cen *c, struct cen_stacks *st, size_t t)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	const struct arch_gpregs *r = &c->th[t].regs;
	uint64_t var, p;
	int err = 0;

	if (cen_tls_addr(c, &k->tls_tcache, r, &var))
		return 0;	/* no jemalloc TLS in this thread yet: no cache */
	if (!cen_read(c, var + L->tcache_in, &p, 8) && p > TCACHE_STATE_MAX && cen_ptr_ok(p))
		err = chk_read_tcache(c, st, p, 0);
	/* 4.x's per-thread arena data: jemalloc's own block. */
	if (!err && L->arenas_tdata_in && !cen_read(c, var + L->arenas_tdata_in, &p, 8) && p)
		err = cen_stack_add(c, p);
	if (!err && k->tls_quarantine.how && !cen_tls_addr(c, &k->tls_quarantine, r, &var) &&
	    !cen_read(c, var + L->quarantine_in, &p, 8) && p)
		err = quarantine(c, st, p);
	return err;
}

int chk_tls_range(struct cen *c, size_t t, uint64_t *lo, uint64_t *hi)
{
	const struct cen_chunks *k = c->ch;
	uint64_t a;

	if (!k->tls_memsz || cen_tls_addr(c, &k->tls_tcache, &c->th[t].regs, &a) ||
	    a < k->tls_tcache.var || !cen_ptr_ok(a - k->tls_tcache.var))
		return 0;
	*lo = a - k->tls_tcache.var;
	*hi = *lo + k->tls_memsz;
	return 1;
}
