/* tcache.c -- blocks in thread caches: allocated for jemalloc, free for the program.
 *
 * Each thread's tsd is at its TLS base + the library's TP offset; its tcache
 * is embedded there (layout.c gives the offset).  5.3+: cache_bin_t is
 * {stack_head, nrequests, low_water, full, empty} (24 bytes), holding
 * (u16)(empty - (u16)stack_head) / 8 items at stack_head[0..n).  5.0-5.2:
 * {low_water, ncached, nrequests, avail} holding avail[-ncached..-1], small
 * bins at +0x10, large ones at layout's large_off.  Caches made by
 * tcache.create hang off the global `tcaches` array (symbols needed).  The
 * cached addresses are kept sorted; an explicit cache's carry bit 0.
 *
 * All of it is read with every thread stopped, and all of it is the
 * target's to forge: a bin may claim up to 8191 items, and every bin of
 * every thread may name the same page.  So a bin is believed only as far
 * as its stack can hold: no more items than its capacity (5.3: (empty -
 * full) / 8; 5.0-5.2: 200 small, 20 large), its stack inside one readable
 * mapping, and no two stacks overlapping.  The items copied are then at most
 * the bytes of the target's memory they come from (8 per item, the size of
 * our copy of it), and the copy checks the deadline as it goes.  Sorting
 * waits until the threads run again (cen_tcache_sort).
 *
 * The stacks claimed are copied by stacks.c, which holds those rules.
 * jemalloc 3.6 and 4.5 (chunktcache.c) find their caches their own way and
 * claim their bins' stacks there too; a quarantine's ring (opt.quarantine)
 * is a stack of {pointer, usable size} pairs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define ITEMS_MAX	8191	/* 5.3's CACHE_BIN_NCACHED_MAX: 65536 / 8 - 1 */
#define ITEMS_SMALL_52	200	/* 5.0-5.2: TCACHE_NSLOTS_SMALL_MAX */
#define ITEMS_LARGE_52	20	/* 5.0-5.2: TCACHE_NSLOTS_LARGE */
#define TCACHES_MAX	4096	/* MALLOCX_TCACHE_MAX + 1 */
#define BIN_SIZE	24

/* One tcache_t at @tc: its bins' stacks into @st.  @tsd_lo/@tsd_hi: for an
 * embedded one, where its tcache_slow must point (the layout check); 0 for
 * explicit caches. */
static int read_tcache(struct cen *c, struct cen_stacks *st, uint64_t tc, uint64_t tsd_lo,
		       uint64_t tsd_hi, unsigned explicit_cache)
{
	const struct cen_layout *L = c->L;
	size_t len = L->bins53 ? 8 + L->nbins * BIN_SIZE : L->large_off + (c->g.nsizes - c->g.nbins) * BIN_SIZE;
	unsigned char *buf = malloc(len);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (cen_read(c, tc, buf, len))
		goto out;
	if (L->bins53) {
		uint64_t slow;
		memcpy(&slow, buf, 8);
		if (!slow)
			goto out;	/* never initialised: no cache yet */
		if (tsd_hi && (slow < tsd_lo || slow >= tsd_hi)) {
			err = -EPROTO;
			goto out;
		}
		for (unsigned i = 0; i < L->nbins && !err; i++) {
			const unsigned char *b = buf + 8 + i * BIN_SIZE;
			uint64_t head;
			uint16_t full, empty;

			memcpy(&head, b, 8);
			memcpy(&full, b + 18, 2);
			memcpy(&empty, b + 20, 2);
			/* Its capacity: from the lowest slot to one past the highest. */
			err = cen_stack_claim(c, st, head, (uint16_t)(empty - (uint16_t)head) / 8,
					      (uint16_t)(empty - full) / 8 < ITEMS_MAX ?
					      (uint16_t)(empty - full) / 8 : ITEMS_MAX, explicit_cache);
			if (!err && i == 0)
				err = cen_stack_add(c, head);
		}
	} else {
		for (unsigned i = 0; i < c->g.nsizes && !err; i++) {
			size_t off = i < c->g.nbins ? 0x10 + i * BIN_SIZE :
				     L->large_off + (i - c->g.nbins) * BIN_SIZE;
			uint32_t ncached;
			uint64_t avail;

			memcpy(&ncached, buf + off + 4, 4);
			memcpy(&avail, buf + off + 16, 8);
			if (i == 0 && (err = cen_stack_add(c, avail - 8)))
				break;
			if (ncached && avail > ncached * 8ULL)
				err = cen_stack_claim(c, st, avail - ncached * 8ULL, ncached, i < c->g.nbins ?
						      ITEMS_SMALL_52 : ITEMS_LARGE_52, explicit_cache);
		}
	}
out:
	free(buf);
	return err;
}

static int read_explicit(struct cen *c, struct cen_stacks *st)
{
	uint64_t arr = 0, *v;
	uint32_t past = 0;
	int err = 0;

	if (!c->tcaches || !c->tcaches_past || cen_read(c, c->tcaches, &arr, 8) ||
	    cen_read(c, c->tcaches_past, &past, 4))
		return 0;
	c->out->explicit_known = 1;
	if (!arr || !past)
		return 0;
	if (past > TCACHES_MAX || !(v = malloc(past * 8ULL)))
		return 0;
	if (!cen_read(c, arr, v, past * 8ULL))
		for (uint32_t i = 0; i < past && !err; i++) {
			/* A free slot links to another slot; 1 is "needs reinit". */
			if (v[i] <= 1 || (v[i] >= arr && v[i] < arr + past * 8ULL) || !cen_ptr_ok(v[i]))
				continue;
			err = c->ch ? chk_read_tcache(c, st, v[i], 1) : read_tcache(c, st, v[i], 0, 0, 1);
		}
	free(v);
	return err;
}

int cen_tcache_read(struct cen *c)
{
	struct cen_stacks st = { 0 };
	int err = 0;

	c->quarantined = c->quarantined_bytes = 0;
	if (!c->have_tpoff) {
		snprintf(c->out->warn, sizeof(c->out->warn), "thread caches not read (jemalloc's "
			 "TLS offset not found): their blocks count as live");
	}
	for (size_t i = 0; c->have_tpoff && i < c->nth && !err; i++) {
		uint64_t fs = arch_regs_tls_base(&c->th[i].regs), tsd = fs + c->tpoff;

		if (cen_timed_out(c)) {
			err = -ETIMEDOUT;
			break;
		}
		if (c->ch) {	/* 3.6, 4.5: a pointer in TLS, not always at tpoff */
			err = chk_thread_cache(c, &st, i);
			c->out->threads++;
			continue;
		}
		if (!cen_ptr_ok(fs) || !cen_ptr_ok(tsd))
			continue;
		err = read_tcache(c, &st, tsd + c->L->tcache_off, tsd, tsd + c->L->tls_size, 0);
		if (err == -EPROTO) {
			free(st.v);
			return sess_fail(c->s, JMA_ERR_MISSING, -EPROTO, "census: thread %d's cache does "
					"not match layout %s of jemalloc %s", (int)c->th[i].tid,
					c->L->name, c->out->version);
		}
		c->out->threads++;
	}
	if (!err)
		err = read_explicit(c, &st);
	if (!err)
		err = cen_stacks_copy(c, &st);
	c->bad_bins += st.rejected;
	free(st.v);
	if (err == -ETIMEDOUT)
		return sess_fail(c->s, JMA_ERR_UNSAFE, err, "census: timed out reading thread caches "
				"(%zu items of %u threads' caches copied)", c->ncached, c->out->threads);
	if (err)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: reading thread caches: %s",
				strerror(-err));
	return 0;
}
