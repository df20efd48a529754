/* chunktcache.c -- 3.6's and 4.5's thread caches and quarantines: allocated for jemalloc, free for the program.
 *
 * A thread's tcache_t is a block of its own (an arena allocation: the
 * header, nhbins tcache_bin_t, then every bin's stack of pointers), named by
 * a TLS pointer: 4.5's tsd.tcache, 3.6's tcache_tls; values up to 3 are
 * states (disabled, reincarnated, purgatory), not caches.  A bin holds
 * ncached pointers: 4.5 at avail[-ncached..-1], 3.6 at avail[0..ncached).
 * nhbins is the library's; a library without it has it in each cache: the
 * first bin's stack starts right after the bins (3.6), 4.5's ends
 * ncached_max = min(2 * nregs, 200) pointers later.  tcache.create's
 * caches (4.x) go through tcache.c's tcaches walk to chk_read_tcache.
 *
 * A quarantine (opt.quarantine, 3.x/4.x's use-after-free detector) holds
 * freed blocks back, still allocated for jemalloc: a ring of {ptr, usize}
 * of 2^lg_maxobjs entries, curobjs of them from first.  Its blocks count
 * with the thread caches' (said in the output).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/chunks.h"

#define TCACHE_STATE_MAX	3
#define NSLOTS_SMALL_MAX	200	/* TCACHE_NSLOTS_SMALL_MAX */
#define QUARANTINE_MAX		(1u << 22)	/* entries read, at most */

/* The cache's bin count from its first bin's stack (no nhbins symbol). */
static unsigned nhbins_of(struct cen *c, uint64_t tc, uint64_t avail0)
{
	const struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	uint64_t start = avail0, n0 = 2ULL * k->bins[0].nregs;

	if (L->avail_below)
		start -= 8 * (n0 < NSLOTS_SMALL_MAX ? n0 : NSLOTS_SMALL_MAX);
	if (start < tc + L->tc_tbins || (start - tc - L->tc_tbins) % L->tbin_size)
		return 0;
	return (unsigned)((start - tc - L->tc_tbins) / L->tbin_size);
}

int chk_read_tcache(struct cen *c, uint64_t tc, int explicit_cache)
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
	if (nh <= k->nbins || nh > CEN_NSIZES || !(buf = malloc(nh * L->tbin_size)))
		return nh <= k->nbins || nh > CEN_NSIZES ? 0 : -ENOMEM;
	if ((err = cen_stack_add(c, tc)) || cen_read(c, tc + L->tc_tbins, buf, nh * L->tbin_size))
		goto out;
	for (unsigned i = 0; i < nh && !err; i++) {
		uint32_t n;
		uint64_t avail;

		memcpy(&n, buf + i * L->tbin_size + L->tbin_ncached, 4);
		memcpy(&avail, buf + i * L->tbin_size + L->tbin_avail, 8);
		if (n && (!L->avail_below || avail > n * 8ULL))
			err = cen_cached_items(c, L->avail_below ? avail - n * 8ULL : avail, n,
					       explicit_cache);
	}
out:
	free(buf);
	return err;
}

static int quarantine(struct cen *c, uint64_t q)
{
	struct cen_chunks *k = c->ch;
	uint64_t h[4], mask;
	int err = 0;

	/* {curbytes, curobjs, first, lg_maxobjs}, then the ring */
	if (!cen_ptr_ok(q) || cen_read(c, q, h, sizeof(h)) || h[3] > 22 || h[1] > (1ULL << h[3]) ||
	    h[2] >> h[3])
		return 0;
	if ((err = cen_stack_add(c, q)))
		return err;
	mask = (1ULL << h[3]) - 1;
	for (uint64_t i = 0; i < h[1] && i < QUARANTINE_MAX && !err; i++) {
		uint64_t at = q + 32 + ((h[2] + i) & mask) * 16, obj[2];

		if (cen_read(c, at, obj, sizeof(obj)))
			break;
		err = cen_cached_items(c, at, 1, 0);
		k->quarantined++;
		k->quarantined_bytes += obj[1];
	}
	return err;
}

int chk_thread_cache(struct cen *c, const struct arch_gpregs *r)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	uint64_t var, p;
	int err = 0;

	if (cen_tls_addr(c, &k->tls_tcache, r, &var))
		return 0;	/* no jemalloc TLS in this thread yet: no cache */
	if (!cen_read(c, var + L->tcache_in, &p, 8) && p > TCACHE_STATE_MAX && cen_ptr_ok(p))
		err = chk_read_tcache(c, p, 0);
	/* 4.x's per-thread arena data: jemalloc's own block. */
	if (!err && L->arenas_tdata_in && !cen_read(c, var + L->arenas_tdata_in, &p, 8) && p)
		err = cen_stack_add(c, p);
	if (!err && k->tls_quarantine.how && !cen_tls_addr(c, &k->tls_quarantine, r, &var) &&
	    !cen_read(c, var + L->quarantine_in, &p, 8) && p)
		err = quarantine(c, p);
	return err;
}
