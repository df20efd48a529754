/* walk.c -- the walk of jemalloc's map of active extents: every live block.
 *
 * Leaves are read whole (2 MiB, one per GiB of address space in use, with
 * 4 KiB pages; 512 KiB per 4 GiB with 64 KiB pages: cen_geometry).  A
 * leaf word names the extent its page belongs to; an extent is taken at its
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

int cen_add_block(struct cen *c, unsigned szind, uint64_t addr, uint64_t usize, uint32_t slack,
		  int how)
{
	if (how) {
		c->out->cached.blocks++;
		c->out->cached.bytes += usize;
		if (how == 2) {
			c->out->explicit_cached.blocks++;
			c->out->explicit_cached.bytes += usize;
		}
		return 0;
	}
	c->out->live.blocks++;
	c->out->live.bytes += usize;
	if (szind < CEN_NSIZES) {	/* chunks.c counts its sizes itself */
		c->bysz[szind].blocks++;
		c->bysz[szind].bytes += usize;
	}
	if (!c->keep)
		return 0;
	return cen_index_add(&c->ix, addr, usize, slack);
}

void cen_add_extent(struct cen *c, uint64_t size, int slab)
{
	c->out->extents++;
	c->out->slabs += !!slab;
	c->extent_bytes += size;
}

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
		return jma_fail(c->s, JMA_ERR_TARGET, err, "census: more than %u blocks", UINT32_MAX - 2);
	if (err)
		return jma_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu blocks",
				c->ix.nblocks);
	return 0;
}

/* Is [base, base + size) inside one readable mapping of the target?  An
 * extent in a PROT_NONE reservation has nothing to count: its claims cost
 * the target nothing. */
static int in_mapping(const struct cen *c, uint64_t base, uint64_t size)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, base);

	return m && m->perms[0] == 'r' && size <= m->end - base;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Is leaf pointer @p named by more than one root entry (@sorted: them all)?
 * Each GiB has a leaf of its own: a repeated one is forged. */
static int repeated(const uint64_t *sorted, size_t n, uint64_t p)
{
	const uint64_t *hit = bsearch(&p, sorted, n, sizeof(*sorted), cmp_u64);

	return hit && ((hit > sorted && hit[-1] == p) || (hit + 1 < sorted + n && hit[1] == p));
}

/* Leaf @i's words: the extents starting in its part of the address space. */
static int walk_leaf(struct cen *c, unsigned i, const uint64_t *leaf)
{
	const struct cen_layout *L = c->L;
	unsigned char e[EDATA_HEAD];
	uint64_t pmask = c->g.page - 1;
	int err = 0;

	for (unsigned j = 0; j < 1u << c->g.leaf_bits && !err; j++) {
		uint64_t w = leaf[j], ed, page, e_bits, e_addr, base, size;
		unsigned szind = (unsigned)(w >> 48), state, slab;

		/* A forged leaf costs its maker 8 bytes a word: checked often. */
		if (j % 4096 == 4095 && cen_timed_out(c))
			return -ETIMEDOUT;
		/* A slab's interior pages repeat its first page's word: the
		 * extent was settled there. */
		if (!w || w == (j ? leaf[j - 1] : 0) || szind >= CEN_NSIZES ||
		    (L->leaf_state && ((w >> 2) & 7)))
			continue;
		ed = w & ((1ULL << 48) - 1) & ~L->edata_low;
		page = ((uint64_t)i << c->g.root_shift) | ((uint64_t)j << L->lg_page);
		/* An edata nothing maps is not read (a system call each). */
		if (!cen_ptr_ok(ed) || !in_mapping(c, ed, sizeof(e)) || cen_read(c, ed, e, sizeof(e))) {
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
		if (((e_bits >> L->sh_szind) & 0xff) != szind || size == 0 || !cen_ptr_ok(e_addr) ||
		    !in_mapping(c, base, size) || base < c->walk_end) {
			c->bad_words++;
			continue;
		}
		/* Extents come in address order and never overlap: a forged map
		 * cannot name more of them than the target has pages. */
		c->walk_end = base + size;
		err = add_raw(c, ed, e, e_addr, base, size, szind, slab);
	}
	return err;
}

int cen_walk(struct cen *c)
{
	unsigned root_n = 1u << c->g.root_bits, leaf_n = 1u << c->g.leaf_bits;
	uint64_t *root = c->wbuf, *leaf = c->wbuf + root_n, *sorted = c->wbuf + root_n + leaf_n;
	unsigned nleaves = 0, done = 0;
	int err = 0;

	if (c->ch)
		return cen_chunks_walk(c);
	if (!c->wbuf)
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	c->nbits = 0;
	if (cen_read(c, c->map + c->L->root_off, root, root_n * sizeof(*root)))
		return jma_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading the map's root at 0x%llx",
				(unsigned long long)(c->map + c->L->root_off));
	for (unsigned i = 0; i < root_n; i++)
		if (root[i])
			sorted[nleaves++] = root[i];
	qsort(sorted, nleaves, sizeof(*sorted), cmp_u64);
	c->walk_end = 0;
	for (unsigned i = 0; i < root_n && !err; i++) {
		if (!root[i])
			continue;
		if (repeated(sorted, nleaves, root[i])) {
			c->bad_words++;
			continue;
		}
		if (cen_timed_out(c)) {
			err = jma_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out walking the "
				       "map (%u of %u leaves read)", done, nleaves);
			break;
		}
		cen_progress(c, "map", done, nleaves);
		if (!cen_ptr_ok(root[i]) || cen_read(c, root[i], leaf, leaf_n * sizeof(*leaf))) {
			c->bad_words++;
			continue;
		}
		err = walk_leaf(c, i, leaf);
		done++;
		if (err == -ETIMEDOUT)
			err = jma_fail(c->s, JMA_ERR_UNSAFE, err, "census: timed out walking the map "
				       "(%u of %u leaves read)", done, nleaves);
		else if (err)
			err = jma_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu extents",
				       c->nraw);
	}
	cen_progress(c, "map", done, nleaves);
	return err;
}

/* How many extents the map names now (distinct runs of leaf words, an
 * upper bound), read while the threads run: room for them is made before
 * the stop.  0 when the map cannot be read (the walk will say so). */
static size_t extents_now(struct cen *c)
{
	unsigned root_n = 1u << c->g.root_bits, leaf_n = 1u << c->g.leaf_bits;
	uint64_t *root = c->wbuf, *leaf = c->wbuf + root_n;
	size_t n = 0;

	if (c->defer_map || cen_read(c, c->map + c->L->root_off, root, root_n * sizeof(*root)))
		return 0;
	for (unsigned i = 0; i < root_n; i++) {
		if (!root[i] || !cen_ptr_ok(root[i]) || cen_read(c, root[i], leaf, leaf_n * sizeof(*leaf)))
			continue;
		for (unsigned j = 0; j < leaf_n; j++)
			n += leaf[j] && leaf[j] != (j ? leaf[j - 1] : 0);
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
	size_t want = 0, max;
	size_t nw = ((size_t)2 << c->g.root_bits) + ((size_t)1 << c->g.leaf_bits);

	if (c->ch)
		return cen_chunks_prepare(c);
	/* Touched now, so that the kernel finds its pages while the target
	 * runs, not during the stop (a third of a stop went to page faults
	 * into fresh buffers).  Again for a second stop (leaks.c). */
	free(c->wbuf);
	free(c->raw);
	free(c->bits);
	c->wbuf = calloc(nw, sizeof(*c->wbuf));
	if (!c->wbuf)
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	cen_touch(c->wbuf, nw * sizeof(*c->wbuf));
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
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	c->capraw = want;
	c->capbits = want * 8;
	cen_touch(c->raw, want * sizeof(*c->raw));
	cen_touch(c->bits, want * 8 * sizeof(*c->bits));
	return cen_cache_prepare(c);
}

int cen_alive(struct cen *c, uint64_t addr)
{
	const struct cen_layout *L = c->L;
	uint64_t entry, w, ed, e_bits, e_addr, base, size, reg, r, bits;
	unsigned szind;

	if (c->ch)
		return cen_chunks_alive(c, addr);
	/* The map as the walk reads it, for one page: root, leaf word, edata. */
	if (cen_read(c, c->map + L->root_off + 8 * (addr >> c->g.root_shift), &entry, 8) ||
	    !cen_ptr_ok(entry) ||
	    cen_read(c, entry + 8 * ((addr >> L->lg_page) & ((1ULL << c->g.leaf_bits) - 1)), &w, 8))
		return -EFAULT;
	szind = (unsigned)(w >> 48);
	ed = w & ((1ULL << 48) - 1) & ~L->edata_low;
	if (!w || szind >= CEN_NSIZES || (L->leaf_state && ((w >> 2) & 7)))
		return 0;	/* no active extent there now */
	if (!cen_ptr_ok(ed) || cen_read(c, ed, &e_bits, 8) || cen_read(c, ed + 8, &e_addr, 8) ||
	    cen_read(c, ed + 16, &size, 8))
		return -EFAULT;
	base = e_addr & ~(c->g.page - 1);
	size &= ~(c->g.page - 1);
	if (((e_bits >> L->sh_state) & ((1u << L->w_state) - 1)) || addr < base || addr - base >= size)
		return 0;
	if (!((e_bits >> L->sh_slab) & 1))
		return e_addr == addr;	/* a large extent: its one block */
	if (szind >= c->g.nbins || !(reg = c->sizes[szind]) || (addr - base) % reg)
		return 0;
	r = (addr - base) / reg;
	if (r >= c->g.nregs_max || cen_read(c, ed + CEN_BITMAP_OFF + 8 * (r / 64), &bits, 8))
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
