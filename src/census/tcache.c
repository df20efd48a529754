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
 * jemalloc 3.6 and 4.5 (chunktcache.c) find their caches their own way and
 * claim their bins' stacks here, under the same rules; a quarantine's ring
 * (opt.quarantine) is a stack of {pointer, usable size} pairs.
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
#define CHUNK_ITEMS	512	/* items read at a time; the deadline checked between */

/* A bin's stack as its tcache claims it: @n items at @at (CEN_STACK_*). */
struct bin_stack {
	uint64_t at;
	uint32_t n;
	uint32_t flags;
};

struct cen_stacks {
	struct bin_stack *v;
	size_t n, cap;
	uint64_t rejected;	/* bins not believed (capacity, mapping, overlap) */
};

/* The bytes of a stack of @n items. */
static uint64_t stack_len(uint64_t n, unsigned flags)
{
	return n * (flags & CEN_STACK_RING ? 16 : 8);
}

int cen_stack_claim(struct cen *c, struct cen_stacks *st, uint64_t at, uint64_t n, uint64_t max,
		    unsigned flags)
{
	const struct att_map *m;

	if (!n)
		return 0;
	m = cen_ptr_ok(at) ? att_maps_find(c->maps, c->nmaps, at) : NULL;
	if (n > max || (at & 7) || !m || m->perms[0] != 'r' || stack_len(n, flags) > m->end - at) {
		st->rejected++;
		return 0;
	}
	if (cen_grow(&st->v, &st->cap, st->n + 1, sizeof(*st->v)))
		return -ENOMEM;
	st->v[st->n++] = (struct bin_stack){ at, (uint32_t)n, flags };
	return 0;
}

static int add(struct cen *c, uint64_t v)
{
	if (cen_grow(&c->cached, &c->capcached, c->ncached + 1, sizeof(*c->cached)))
		return -ENOMEM;
	c->cached[c->ncached++] = v;
	return 0;
}

/* The items of stack @b into the cached list (a ring's: counted apart too). */
static int copy_items(struct cen *c, const struct bin_stack *b)
{
	uint64_t items[CHUNK_ITEMS], at = b->at, n = b->n;
	unsigned w = b->flags & CEN_STACK_RING ? 2 : 1;

	while (n) {
		size_t k = n < CHUNK_ITEMS / w ? (size_t)n : CHUNK_ITEMS / w;
		if (cen_timed_out(c))
			return -ETIMEDOUT;
		if (cen_read(c, at, items, stack_len(k, b->flags)))
			return 0;	/* unreadable: counted by the stats.allocated check */
		for (size_t i = 0; i < k; i++) {
			uint64_t p = items[i * w];
			if (!cen_ptr_ok(p) || (p & 7))
				continue;
			if (add(c, p | (b->flags & CEN_STACK_EXPLICIT)))
				return -ENOMEM;
			if (w == 2) {
				c->quarantined++;
				c->quarantined_bytes += items[i * w + 1];
			}
		}
		at += stack_len(k, b->flags);
		n -= k;
	}
	return 0;
}

/* The stack array a bin's pointer @p falls in: one record per tcache is
 * enough (all its bins share one allocation), more do no harm. */
int cen_stack_add(struct cen *c, uint64_t p)
{
	if (!cen_ptr_ok(p) || (c->nstacks && c->stacks[c->nstacks - 1] == p))
		return 0;
	if (cen_grow(&c->stacks, &c->capstacks, c->nstacks + 1, sizeof(*c->stacks)))
		return -ENOMEM;
	c->stacks[c->nstacks++] = p;
	return 0;
}

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

static int cmp_stack(const void *a, const void *b)
{
	const struct bin_stack *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

/* Copy the stacks claimed, but none that overlaps another: each byte of
 * the target's memory is copied at most once. */
static int copy_stacks(struct cen *c, struct cen_stacks *st)
{
	uint64_t end = 0;
	int err = 0;

	if (st->n)
		qsort(st->v, st->n, sizeof(*st->v), cmp_stack);
	for (size_t i = 0; i < st->n && !err; i++) {
		const struct bin_stack *b = &st->v[i];
		uint64_t len = stack_len(b->n, b->flags);

		if (b->at < end || (i + 1 < st->n && st->v[i + 1].at < b->at + len)) {
			st->rejected++;
			if (b->at + len > end)
				end = b->at + len;
			continue;
		}
		end = b->at + len;
		err = copy_items(c, b);
	}
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a & ~1ULL, y = *(const uint64_t *)b & ~1ULL;
	return x < y ? -1 : x > y;
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
		err = copy_stacks(c, &st);
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

void cen_tcache_sort(struct cen *c)
{
	if (c->ncached)
		qsort(c->cached, c->ncached, sizeof(*c->cached), cmp_u64);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int cen_stacks_index(struct cen *c)
{
	if (!(c->stack_ids = malloc((c->nstacks ? c->nstacks : 1) * sizeof(*c->stack_ids))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nstacks; i++) {
		long b = cen_block_of(&c->ix, c->stacks[i]);
		if (b >= 0)
			c->stack_ids[c->nstack_ids++] = (uint32_t)b;
	}
	qsort(c->stack_ids, c->nstack_ids, sizeof(*c->stack_ids), cmp_u32);
	return 0;
}

int cen_is_stack(const struct cen *c, size_t b)
{
	uint32_t k = (uint32_t)b;

	return c->nstack_ids && bsearch(&k, c->stack_ids, c->nstack_ids, sizeof(k), cmp_u32);
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
