/* walk.c -- the walk of jemalloc's map of active extents: every live block.
 *
 * Leaves are read whole (2 MiB, one per GiB of address space in use, with
 * 4 KiB pages; 512 KiB per 4 GiB with 64 KiB pages; 512 KiB per 128 MiB in
 * a 57-bit build's three levels: cen_geometry, findmap.c).  A leaf entry
 * names the extent its page belongs to; an extent is taken at its
 * first page only (its last and interior pages repeat it), and only when its
 * own e_bits say active and its size index is a real class (5.3's SEC keeps
 * cached extents active with szind SC_NSIZES).  A slab's regions are live
 * unless its bitmap marks them free (1 = free) or a thread cache holds them;
 * its nfree is checked against the bitmap.  A large extent is one block at
 * e_addr (past the cache-oblivious random offset).  While the threads are
 * stopped only each extent's edata is copied (cen_walk); its blocks are
 * counted once they run again (cen_expand).  Full slabs and large
 * extents of automatic arenas are listed nowhere else: only this walk finds
 * every block.
 *
 * jemalloc 3.6 and 4.5 have no extents: the functions the other phases
 * call here (cen_walk_prepare, cen_walk, cen_expand, cen_alive,
 * cen_extent_at, cen_walk_free) hand those to chunks.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define EDATA_HEAD	CEN_BITMAP_OFF	/* e_bits, e_addr, e_size_esn ... up to the bitmap */
/* Extents made room for before the stop: those the map names then, and an
 * eighth more, up to 4M (440 MiB) and to what the target's memory can hold
 * (extents_max); past that the arrays grow in the stop. */
#define RAW_RESERVE_MAX	(4u << 20)

static int slab_blocks(struct cen *c, const struct cen_raw *x)
{
	uint64_t reg = c->sizes[x->szind], base = x->base, e_bits = x->e_bits;
	uint64_t nregs = x->size / reg, nfree = 0;
	const uint64_t *bitmap = c->bits + x->bits;
	unsigned szind = x->szind;
	int err = 0;

	if (szind >= c->g.nbins || nregs == 0 || nregs > c->g.nregs_max) {
		c->bad_words++;
		return 0;
	}
	/* The cached addresses are sorted: one search per slab, then a walk
	 * along with the regions. */
	size_t k = cen_cached_from(c, base);
	for (uint64_t r = 0; r < nregs && !err; r++) {
		uint64_t a = base + r * reg;
		int how = 0;

		while (k < c->ncached && (c->cached[k] & ~1ULL) < a)
			k++;
		if (k < c->ncached && (c->cached[k] & ~1ULL) == a)
			how = 1 + (int)(c->cached[k] & 1);
		if (bitmap[r / 64] >> (r % 64) & 1)
			nfree++;
		else
			err = cen_add_block(c, szind, a, reg, 0, how);
	}
	/* nfree's width: SC_LG_SLAB_MAXREGS + 1 bits. */
	if (nfree != ((e_bits >> c->L->sh_nfree) & ((2ULL * c->g.nregs_max) - 1)))
		c->bad_nfree++;
	return err;
}

/* What the expansion needs of an extent at @ed, copied while the threads are
 * stopped: its header @e, and a slab's bitmap (a word per 64 regions, read
 * after the header: 64 bytes with 4 KiB pages, up to 1 KiB with 64 KiB). */
static int add_raw(struct cen *c, uint64_t ed, const unsigned char *e, uint64_t e_addr,
		   uint64_t base, uint64_t size, unsigned szind, unsigned slab)
{
	struct cen_raw *x;
	uint64_t nw = 0;

	if (slab && szind < c->g.nbins) {
		uint64_t nregs = size / c->sizes[szind];
		nw = ((nregs < c->g.nregs_max ? nregs : c->g.nregs_max) + 63) / 64;
	}
	if (cen_grow(&c->raw, &c->capraw, c->nraw + 1, sizeof(*c->raw)) ||
	    cen_grow(&c->bits, &c->capbits, c->nbits + nw, sizeof(*c->bits)))
		return -ENOMEM;
	if (nw && cen_read(c, ed + CEN_BITMAP_OFF, c->bits + c->nbits, nw * 8)) {
		c->bad_words++;
		return 0;
	}
	x = &c->raw[c->nraw++];
	memcpy(&x->e_bits, e, 8);
	x->e_addr = e_addr;
	x->base = base;
	x->size = size;
	x->szind = (uint16_t)szind;
	x->slab = (uint8_t)slab;
	x->bits = c->nbits;
	c->nbits += nw;
	return 0;
}

/* The blocks of the extents the walk copied: live, or in a thread cache. */
int cen_expand(struct cen *c)
{
	const struct cen_layout *L = c->L;
	int err = 0;

	if (c->ch)
		return cen_chunks_expand(c);
	for (size_t i = 0; i < c->nraw && !err; i++) {
		const struct cen_raw *x = &c->raw[i];

		if (x->slab)
			err = slab_blocks(c, x);
		else
			err = cen_add_block(c, x->szind, x->e_addr, x->szind < c->g.nbins ||
					    !L->large_by_size ? c->sizes[x->szind] : x->size - c->large_pad,
					    0, cen_is_cached(c, x->e_addr));
		cen_add_extent(c, x->size, x->slab);
	}
	if (err == -E2BIG)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: more than %u blocks", UINT32_MAX - 2);
	if (err)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu blocks",
				c->ix.nblocks);
	return 0;
}

/* Is [base, base + size) inside one readable mapping of the target?  (An
 * edata: 128-byte aligned, its head never crosses a page.) */
static int in_mapping(const struct cen *c, uint64_t base, uint64_t size)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, base);

	return m && m->perms[0] == 'r' && size <= m->end - base;
}

size_t cen_maps_after(const struct cen *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nmaps;

	/* They come in address order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is [base, base + size) the target's memory?  One extent may be several
 * mappings: the kernel splits a mapping where part of it is mlock'ed,
 * mprotect'ed or madvise'd (MADV_DONTDUMP: Traffic Server's I/O buffers),
 * and guard pages (san_guard_*) are mappings of their own.  Live, they
 * must follow each other without a gap; on a core a gap is memory the core
 * does not hold (gcore leaves out MADV_DONTDUMP mappings; a kernel core
 * keeps them, empty), counted in *@unheld.  Some of it must be readable: an
 * extent in a PROT_NONE reservation alone holds nothing, and its claims
 * cost the target nothing (liarfix's fake slabs); an unreadable page of one
 * that is (a page mprotect'ed PROT_NONE) is skipped by contents.c, which
 * counts the blocks it touched. */
static int in_mappings(const struct cen *c, uint64_t base, uint64_t size, uint64_t *unheld)
{
	uint64_t at = base, end = base + size, readable = 0;

	*unheld = 0;
	if (end < base)
		return 0;
	for (size_t i = cen_maps_after(c, base); i < c->nmaps && at < end; i++) {
		const struct att_map *m = &c->maps[i];

		if (m->start > at) {
			if (!c->s->offline)
				return 0;
			*unheld += (m->start < end ? m->start : end) - at;
			at = m->start;
			if (at >= end)
				break;
		}
		if (m->perms[0] == 'r')
			readable += (m->end < end ? m->end : end) - at;
		at = m->end;
	}
	if (at < end) {
		if (!c->s->offline)
			return 0;
		*unheld += end - at;
	}
	return readable > 0;
}

/* The entries of the leaf at @key (the address of its first page): the
 * extents starting in its part of the address space. */
static int walk_leaf(struct cen *c, uint64_t key, const uint64_t *leaf)
{
	const struct cen_layout *L = c->L;
	unsigned char e[EDATA_HEAD];
	uint64_t pmask = c->g.page - 1, prev = 0;
	unsigned leaf_n = 1u << c->g.bits[c->g.height - 1];
	int err = 0;

	for (unsigned j = 0; j < leaf_n && !err; j++) {
		struct cen_entry x;
		uint64_t e_bits, e_addr, base, size, unheld, page;
		unsigned state, slab;

		/* A forged leaf costs its maker 8 bytes an entry: checked often. */
		if (j % 4096 == 4095 && cen_timed_out(c))
			return -ETIMEDOUT;
		/* A slab's interior pages repeat its first page's entry: the
		 * extent was settled there. */
		if (!cen_leaf_entry(c, leaf, j, &x) || x.edata == prev)
			continue;
		prev = x.edata;
		if (x.szind >= c->g.nsizes || x.state)
			continue;
		page = key + ((uint64_t)j << c->g.lg_page);
		/* An edata nothing maps is not read (a system call each). */
		if (!cen_ptr_ok(x.edata) || !in_mapping(c, x.edata, sizeof(e)) ||
		    cen_read(c, x.edata, e, sizeof(e))) {
			c->bad_words++;
			continue;
		}
		memcpy(&e_bits, e, 8);
		memcpy(&e_addr, e + 8, 8);
		memcpy(&size, e + 16, 8);
		base = e_addr & ~pmask;
		size &= ~pmask;
		if (page != base)
			continue;	/* not the extent's first page, or moved under us */
		state = (unsigned)(e_bits >> L->sh_state) & ((1u << L->w_state) - 1);
		slab = (unsigned)(e_bits >> L->sh_slab) & 1;
		if (state != 0)
			continue;
		if (((e_bits >> L->sh_szind) & 0xff) != x.szind || size == 0 || !cen_ptr_ok(e_addr) ||
		    !in_mappings(c, base, size, &unheld) || base < c->walk_end) {
			c->bad_words++;
			continue;
		}
		if (unheld) {
			c->unheld_extents++;
			c->unheld_bytes += unheld;
		}
		/* Extents come in address order and never overlap: a forged map
		 * cannot name more of them than the target has pages. */
		c->walk_end = base + size;
		err = add_raw(c, x.edata, e, e_addr, base, size, x.szind, slab);
	}
	return err;
}

int cen_walk(struct cen *c)
{
	uint64_t *leaf;
	size_t done = 0;
	int err = 0;

	if (c->ch)
		return cen_chunks_walk(c);
	if (!c->wbuf || !c->leaves)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	leaf = c->wbuf + cen_map_words(c) - cen_leaf_words(c);
	c->nbits = 0;
	if (cen_map_leafrefs(c))
		return sess_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading the map's root at 0x%llx",
				(unsigned long long)(c->map + c->L->root_off));
	c->walk_end = 0;
	for (size_t i = 0; i < c->nleaves && !err; i++) {
		if (cen_timed_out(c)) {
			err = sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out walking the "
				       "map (%zu of %zu leaves read)", done, c->nleaves);
			break;
		}
		cen_progress(c, "map", done, c->nleaves);
		if (cen_read(c, c->leaves[i].addr, leaf, cen_leaf_words(c) * 8)) {
			c->bad_words++;
			continue;
		}
		err = walk_leaf(c, c->leaves[i].key, leaf);
		done++;
		if (err == -ETIMEDOUT)
			err = sess_fail(c->s, JMA_ERR_UNSAFE, err, "census: timed out walking the map "
				       "(%zu of %zu leaves read)", done, c->nleaves);
		else if (err)
			err = sess_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu extents",
				       c->nraw);
	}
	cen_progress(c, "map", done, c->nleaves);
	return err;
}

/* How many extents the map names now (distinct runs of leaf entries, an
 * upper bound), read while the threads run: room for them is made before
 * the stop.  0 when the map cannot be read (the walk will say so). */
static size_t extents_now(struct cen *c)
{
	uint64_t *leaf = c->wbuf + cen_map_words(c) - cen_leaf_words(c);
	unsigned leaf_n = 1u << c->g.bits[c->g.height - 1];
	uint64_t bad = c->bad_words;
	size_t n = 0;

	if (c->defer_map || cen_map_leafrefs(c))
		return 0;
	c->bad_words = bad;	/* counted again by the walk */
	for (size_t i = 0; i < c->nleaves; i++) {
		uint64_t prev = 0;

		if (cen_read(c, c->leaves[i].addr, leaf, cen_leaf_words(c) * 8))
			continue;
		for (unsigned j = 0; j < leaf_n; j++) {
			struct cen_entry x;
			uint64_t ed = cen_leaf_entry(c, leaf, j, &x) ? x.edata : 0;

			n += ed && ed != prev;
			prev = ed;
		}
		if (n > RAW_RESERVE_MAX)
			return RAW_RESERVE_MAX;
	}
	return n;
}

/* How many extents the target can have: each has an edata of its own, 128
 * bytes the target wrote, so at most its resident and swapped memory / 128.
 * A map that names more (words that cost its maker 8 bytes each) gets no
 * more room before the stop. */
static size_t extents_max(struct cen *c)
{
	uint64_t b = cen_resident(c);

	return b ? (size_t)(b / 128) : RAW_RESERVE_MAX;
}

int cen_walk_prepare(struct cen *c)
{
	size_t want = 0, max, nw;

	if (c->ch) {
		cen_walk_free(c);	/* again for a second stop: the last one's buffers go */
		return cen_chunks_prepare(c);
	}
	/* Touched now, so that the kernel finds its pages while the target
	 * runs, not during the stop (a third of a stop went to page faults
	 * into fresh buffers).  Again for a second stop (leaks.c).  The
	 * leaves a map may have: 16 TiB of heap's (findmap.c). */
	nw = cen_map_words(c);
	free(c->wbuf);
	free(c->leaves);
	free(c->raw);
	free(c->bits);
	c->wbuf = calloc(nw, sizeof(*c->wbuf));
	c->capleaves = cen_map_leaves_max(c);
	c->leaves = calloc(c->capleaves, sizeof(*c->leaves));
	if (!c->wbuf || !c->leaves)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	cen_touch(c->wbuf, nw * sizeof(*c->wbuf));
	cen_touch(c->leaves, c->capleaves * sizeof(*c->leaves));
	/* A core is not stopped: its arrays grow as the walk goes. */
	if (!c->s->offline) {
		want = extents_now(c);
		want += want / 8;
		max = extents_max(c);
		if (want > max)
			want = max;
	}
	want += 4096;
	/* Bitmaps: 8 words an extent (a 4 KiB-page slab's); more grow in the
	 * stop.  Exactly that much (cen_grow would round up to a power of 2). */
	c->raw = calloc(want, sizeof(*c->raw));
	c->bits = calloc(want * 8, sizeof(*c->bits));
	if (!c->raw || !c->bits)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	c->capraw = want;
	c->capbits = want * 8;
	cen_touch(c->raw, want * sizeof(*c->raw));
	cen_touch(c->bits, want * 8 * sizeof(*c->bits));
	return cen_cache_prepare(c);
}

int cen_alive(struct cen *c, uint64_t addr)
{
	const struct cen_layout *L = c->L;
	uint64_t e_bits, e_addr, base, size, reg, r, bits;
	struct cen_entry x;
	int got;

	if (c->ch)
		return cen_chunks_alive(c, addr);
	/* The map as the walk reads it, for one page: its entry, the edata. */
	if ((got = cen_map_entry(c, addr, &x)) <= 0)
		return got;
	if (x.szind >= c->g.nsizes || x.state)
		return 0;	/* no active extent there now */
	if (!cen_ptr_ok(x.edata) || cen_read(c, x.edata, &e_bits, 8) ||
	    cen_read(c, x.edata + 8, &e_addr, 8) || cen_read(c, x.edata + 16, &size, 8))
		return -EFAULT;
	base = e_addr & ~(c->g.page - 1);
	size &= ~(c->g.page - 1);
	if (((e_bits >> L->sh_state) & ((1u << L->w_state) - 1)) || addr < base || addr - base >= size)
		return 0;
	if (!((e_bits >> L->sh_slab) & 1))
		return e_addr == addr;	/* a large extent: its one block */
	if (x.szind >= c->g.nbins || !(reg = c->sizes[x.szind]) || (addr - base) % reg)
		return 0;
	r = (addr - base) / reg;
	if (r >= c->g.nregs_max || cen_read(c, x.edata + CEN_BITMAP_OFF + 8 * (r / 64), &bits, 8))
		return -EFAULT;
	return !(bits >> (r % 64) & 1);	/* 1 = free */
}

int cen_extent_at(const struct cen *c, size_t i, uint64_t *base, uint64_t *size)
{
	if (c->ch)
		return cen_chunks_run_at(c, i, base, size);
	if (i >= c->nraw)
		return 0;
	*base = c->raw[i].base;
	*size = c->raw[i].size;
	return 1;
}

void cen_walk_free(struct cen *c)
{
	free(c->raw);
	free(c->bits);
	c->raw = NULL;
	c->bits = NULL;
	c->nraw = c->nbits = 0;
	if (c->ch)
		cen_chunks_walk_free(c);
}
