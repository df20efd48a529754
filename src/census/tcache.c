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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define ITEMS_MAX	8192	/* per bin: 5.3's cache_bin_sz_t allows 65536 / 8 */
#define TCACHES_MAX	4096	/* MALLOCX_TCACHE_MAX + 1 */
#define BIN_SIZE	24

static int add(struct cen *c, uint64_t v)
{
	if (cen_grow(&c->cached, &c->capcached, c->ncached + 1, sizeof(*c->cached)))
		return -ENOMEM;
	c->cached[c->ncached++] = v;
	return 0;
}

/* The @n items at @at into the cached list. */
static int add_items(struct cen *c, uint64_t at, uint64_t n, int explicit_cache)
{
	uint64_t items[256];

	if (n > ITEMS_MAX || !cen_ptr_ok(at))
		return 0;	/* not a bin: ignored (counted by the stats.allocated check) */
	while (n) {
		size_t k = n < 256 ? (size_t)n : 256;
		if (cen_read(c, at, items, k * 8))
			return 0;
		for (size_t i = 0; i < k; i++)
			if (cen_ptr_ok(items[i]) && !(items[i] & 7) && add(c, items[i] | !!explicit_cache))
				return -ENOMEM;
		at += k * 8;
		n -= k;
	}
	return 0;
}

/* The stack array a bin's pointer @p falls in: one record per tcache is
 * enough (all its bins share one allocation), more do no harm. */
static int add_stack(struct cen *c, uint64_t p)
{
	if (!cen_ptr_ok(p) || (c->nstacks && c->stacks[c->nstacks - 1] == p))
		return 0;
	if (cen_grow(&c->stacks, &c->capstacks, c->nstacks + 1, sizeof(*c->stacks)))
		return -ENOMEM;
	c->stacks[c->nstacks++] = p;
	return 0;
}

/* One tcache_t at @tc.  @tsd_lo/@tsd_hi: for an embedded one, where its
 * tcache_slow must point (the layout check); 0 for explicit caches. */
static int read_tcache(struct cen *c, uint64_t tc, uint64_t tsd_lo, uint64_t tsd_hi, int explicit_cache)
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
			uint16_t empty;

			memcpy(&head, b, 8);
			memcpy(&empty, b + 20, 2);
			err = add_items(c, head, (uint16_t)(empty - (uint16_t)head) / 8, explicit_cache);
			if (!err && i == 0)
				err = add_stack(c, head);
		}
	} else {
		for (unsigned i = 0; i < c->g.nsizes && !err; i++) {
			size_t off = i < c->g.nbins ? 0x10 + i * BIN_SIZE :
				     L->large_off + (i - c->g.nbins) * BIN_SIZE;
			uint32_t ncached;
			uint64_t avail;

			memcpy(&ncached, buf + off + 4, 4);
			memcpy(&avail, buf + off + 16, 8);
			if (i == 0 && (err = add_stack(c, avail - 8)))
				break;
			if (ncached && ncached <= ITEMS_MAX && avail > ncached * 8ULL)
				err = add_items(c, avail - ncached * 8ULL, ncached, explicit_cache);
		}
	}
out:
	free(buf);
	return err;
}

static int read_explicit(struct cen *c)
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
			err = read_tcache(c, v[i], 0, 0, 1);
		}
	free(v);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a & ~1ULL, y = *(const uint64_t *)b & ~1ULL;
	return x < y ? -1 : x > y;
}

int cen_tcache_read(struct cen *c)
{
	int err = 0;

	if (!c->have_tpoff) {
		snprintf(c->out->warn, sizeof(c->out->warn), "thread caches not read (jemalloc's "
			 "TLS offset not found): their blocks count as live");
	}
	for (size_t i = 0; c->have_tpoff && i < c->nth && !err; i++) {
		uint64_t fs = arch_regs_tls_base(&c->th[i].regs), tsd = fs + c->tpoff;

		if (!cen_ptr_ok(fs) || !cen_ptr_ok(tsd))
			continue;
		err = read_tcache(c, tsd + c->L->tcache_off, tsd, tsd + c->L->tls_size, 0);
		if (err == -EPROTO)
			return jma_fail(c->s, JMA_ERR_MISSING, -EPROTO, "census: thread %d's cache does "
					"not match layout %s of jemalloc %s", (int)c->th[i].tid,
					c->L->name, c->out->version);
		c->out->threads++;
	}
	if (!err)
		err = read_explicit(c);
	if (err)
		return jma_fail(c->s, JMA_ERR_TARGET, err, "census: reading thread caches: %s",
				strerror(-err));
	qsort(c->cached, c->ncached, sizeof(*c->cached), cmp_u64);
	return 0;
}

size_t cen_cached_from(const struct cen *c, uint64_t addr)
{
	size_t lo = 0, hi = c->ncached;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((c->cached[mid] & ~1ULL) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cen_is_cached(const struct cen *c, uint64_t addr)
{
	size_t k = cen_cached_from(c, addr);

	if (k < c->ncached && (c->cached[k] & ~1ULL) == addr)
		return 1 + (int)(c->cached[k] & 1);
	return 0;
}
