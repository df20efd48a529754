/* findmap.c -- jemalloc's map of active extents: finding it, with or without symbols, and its shape.
 *
 * The map is `arena_emap_global` (5.3+) or `extents_rtree` (5.0-5.2): a
 * radix tree keyed by page address, its root inside the struct (after a
 * base pointer and a mutex: rtree_t), two levels below 37 significant
 * bits (LG_VADDR - LG_PAGE: 18 + 18 with 4 KiB pages and 48-bit
 * addresses, 16 + 16 with 64 KiB pages), three above (57-bit build hosts:
 * 15 + 15 + 15), a leaf entry per page: one word holding szind in its top
 * bits, or {edata, metadata} when the top bits are too few (57-bit).  How
 * many bits a build has is what its root holds: its symbol's size gives
 * the root's length (and where the root starts); without one, each shape
 * the build could have is tried and the one that validates is it.
 *
 * With symbols the map is named.  In a stripped library, malloc_usable_size
 * looks it up on its slow path: every address its first bytes compute
 * relative to the pc (the machine's descriptor decodes them: x86_64's lea,
 * arm64's adrp + add, or adrp + ldr of a GOT slot) is a candidate, and the
 * one whose root validates is the map.  Failing that, once the threads are stopped: a thread's lookup
 * cache (tsd.rtree_ctx) holds {leafkey, leaf} pairs, and the root entry for
 * leafkey holds the leaf (two levels) or a node holding it (three) --
 * found among jemalloc's writable data, it places the root.  Valid: every
 * entry is null or a user-space pointer into a mapping, and leaf entries
 * decode to extents that cover the page of their index -- what chap checks
 * of tcmalloc's page map.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define CODE_SCAN	1024
#define CHECK_MAX	64	/* leaf entries checked per root validation */
/* Heap a map may cover, at most, when validated (a forged root naming every
 * leaf is not one): 16 TiB -- 16384 leaves with 4 KiB pages and 48 bits. */
#define COVER_MAX	(1ULL << 44)

size_t cen_leaf_words(const struct cen *c)
{
	return ((size_t)1 << c->g.bits[c->g.height - 1]) * (c->g.compact ? 1 : 2);
}

int cen_leaf_entry(const struct cen *c, const uint64_t *leaf, unsigned j, struct cen_entry *e)
{
	const struct cen_layout *L = c->L;
	uint64_t w, meta;

	if (c->g.compact) {
		/* szind in the bits above LG_VADDR, the edata pointer below,
		 * its alignment's low bits holding slab (and 5.3's state). */
		w = leaf[j];
		if (!w)
			return 0;
		e->edata = w & ((1ULL << c->g.lg_vaddr) - 1) & ~L->edata_low;
		e->szind = (unsigned)(w >> c->g.lg_vaddr);
		e->slab = (int)(w & 1);
		e->state = L->leaf_state ? (int)((w >> 2) & 7) : 0;
		return 1;
	}
	/* {le_edata, le_metadata}: 5.3's metadata is slab, is_head, state (3
	 * bits), szind; 5.0-5.2's le_szind (4 bytes) and le_slab (1). */
	w = leaf[2 * j];
	meta = leaf[2 * j + 1];
	if (!w)
		return 0;
	e->edata = w;
	if (L->leaf_state) {
		e->szind = (unsigned)((meta & 0xffffffff) >> 5);
		e->slab = (int)(meta & 1);
		e->state = (int)((meta >> 2) & 7);
	} else {
		e->szind = (unsigned)(meta & 0xffffffff);
		e->slab = (int)((meta >> 32) & 0xff);
		e->state = 0;
	}
	return 1;
}

/* Is @p a pointer to a node or leaf: user space, aligned, mapped? */
static int child_ok(const struct cen *c, uint64_t p)
{
	return cen_ptr_ok(p) && p % 8 == 0 && att_maps_find(c->maps, c->nmaps, p);
}

/* The first pages a leaf covers, and its key's low bits. */
static uint64_t leaf_span(const struct cen *c)
{
	return 1ULL << (c->g.lg_page + c->g.bits[c->g.height - 1]);
}

/* Leaves under the root at @map + root_off (their keys and addresses into
 * @out, at most @max; more is an error), the interior level read into
 * @node.  -EFAULT (root unreadable), -E2BIG (too many), -EINVAL (an entry
 * not a pointer). */
/* Is @p a child to follow?  1 yes, 0 no (null; or not a pointer, counted,
 * unless @strict: -EINVAL). */
static int follow(struct cen *c, uint64_t p, int strict)
{
	if (!p)
		return 0;
	if (child_ok(c, p))
		return 1;
	if (strict)
		return -EINVAL;
	c->bad_words++;
	return 0;
}

static int leaves_of(struct cen *c, uint64_t map, uint64_t *root, uint64_t *node,
		     struct cen_leafref *out, size_t max, size_t *n, int strict)
{
	const struct cen_geom *g = &c->g;
	unsigned root_n = 1u << g->bits[0], node_n = g->height == 3 ? 1u << g->bits[1] : 0;
	int f;

	*n = 0;
	if (cen_read(c, map + c->L->root_off, root, root_n * sizeof(*root)))
		return -EFAULT;
	for (unsigned i = 0; i < root_n; i++) {
		uint64_t key = (uint64_t)i << g->shift[0];

		if ((f = follow(c, root[i], strict)) <= 0) {
			if (f)
				return f;
			continue;
		}
		if (g->height == 2) {
			if (*n == max)
				return -E2BIG;
			out[(*n)++] = (struct cen_leafref){ key, root[i] };
			continue;
		}
		if (cen_read(c, root[i], node, node_n * sizeof(*node)))
			continue;
		for (unsigned k = 0; k < node_n; k++) {
			if ((f = follow(c, node[k], strict)) <= 0) {
				if (f)
					return f;
				continue;
			}
			if (*n == max)
				return -E2BIG;
			out[(*n)++] = (struct cen_leafref){ key | (uint64_t)k << g->shift[1], node[k] };
		}
	}
	return 0;
}

/* The walk's buffers: root, node, leaf (cen_walk_prepare makes them). */
static size_t root_words(const struct cen *c)
{
	return (size_t)1 << c->g.bits[0];
}

static size_t node_words(const struct cen *c)
{
	return c->g.height == 3 ? (size_t)1 << c->g.bits[1] : 0;
}

size_t cen_map_words(const struct cen *c)
{
	return root_words(c) + node_words(c) + cen_leaf_words(c);
}

size_t cen_map_leaves_max(const struct cen *c)
{
	return (size_t)(COVER_MAX / leaf_span(c));
}

int cen_root_valid(struct cen *c, uint64_t map)
{
	size_t max = cen_map_leaves_max(c), n = 0, lw = cen_leaf_words(c);
	unsigned leaf_n = 1u << c->g.bits[c->g.height - 1], good = 0, bad = 0;
	uint64_t *root = malloc(root_words(c) * 8), *node = malloc((node_words(c) + 1) * 8);
	uint64_t *leaf = malloc(lw * 8), pmask = c->g.page - 1;
	struct cen_leafref *refs = malloc(max * sizeof(*refs));
	int err = -EINVAL;

	if (!root || !node || !leaf || !refs || leaves_of(c, map, root, node, refs, max, &n, 1))
		goto out;
	for (size_t r = 0; r < n && good < CHECK_MAX; r++) {
		if (cen_read(c, refs[r].addr, leaf, lw * 8))
			continue;
		for (unsigned j = 0; j < leaf_n && good + bad < CHECK_MAX; j++) {
			struct cen_entry e;
			uint64_t x[3], page = refs[r].key + ((uint64_t)j << c->g.lg_page);

			if (!cen_leaf_entry(c, leaf, j, &e) || e.szind >= c->g.nsizes)
				continue;
			if (!cen_ptr_ok(e.edata) || cen_read(c, e.edata, x, sizeof(x))) {
				bad++;
				continue;
			}
			if (page >= (x[1] & ~pmask) && page - (x[1] & ~pmask) < (x[2] & ~pmask))
				good++;
			else
				bad++;
		}
	}
	/* Threads run during this check: a word may change under us. */
	if (good && bad * 4 <= good)
		err = 0;
out:
	free(root);
	free(node);
	free(leaf);
	free(refs);
	return err;
}

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = ((const struct cen_leafref *)a)->addr, y = ((const struct cen_leafref *)b)->addr;
	return (x > y) - (x < y);
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = ((const struct cen_leafref *)a)->key, y = ((const struct cen_leafref *)b)->key;
	return (x > y) - (x < y);
}

int cen_map_leafrefs(struct cen *c)
{
	uint64_t *root = c->wbuf, *node = c->wbuf + root_words(c);
	size_t n = 0, k = 0;
	int err;

	c->nleaves = 0;
	err = leaves_of(c, c->map, root, node, c->leaves, c->capleaves, &n, 0);
	if (err == -EFAULT)
		return err;
	/* Each part of the address space has a leaf of its own: one named
	 * twice is forged, and so is what names it. */
	qsort(c->leaves, n, sizeof(*c->leaves), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		int rep = (i && c->leaves[i - 1].addr == c->leaves[i].addr) ||
			  (i + 1 < n && c->leaves[i + 1].addr == c->leaves[i].addr);
		if (rep)
			c->bad_words++;
		else
			c->leaves[k++] = c->leaves[i];
	}
	qsort(c->leaves, k, sizeof(*c->leaves), cmp_key);
	c->nleaves = k;
	if (err)
		c->bad_words++;		/* entries past a bad one are not followed */
	return 0;
}

int cen_map_entry(struct cen *c, uint64_t addr, struct cen_entry *e)
{
	const struct cen_geom *g = &c->g;
	unsigned h = g->height, lw = g->compact ? 1 : 2;
	uint64_t p = c->map + c->L->root_off, w[2];

	for (unsigned l = 0; l + 1 < h; l++) {
		if (cen_read(c, p + 8 * ((addr >> g->shift[l]) & ((1ULL << g->bits[l]) - 1)), &p, 8))
			return -EFAULT;
		if (!p)
			return 0;
		if (!child_ok(c, p))
			return -EFAULT;
	}
	if (cen_read(c, p + 8ULL * lw * ((addr >> g->shift[h - 1]) & ((1ULL << g->bits[h - 1]) - 1)),
		     w, 8 * lw))
		return -EFAULT;
	return cen_leaf_entry(c, w, 0, e);
}

/* The LG_VADDR a build may have: configure takes the build host's (48, or
 * 57 on a CPU with 5-level paging; 57 when cross-compiling), 48 on arm64. */
static const unsigned vaddrs[] = { 48, 57 };

/* Take @map as the map with LG_VADDR @lg if its root validates (geometry
 * left set then). */
static int try_map(struct cen *c, uint64_t map, unsigned lg)
{
	c->b.lg_vaddr = lg;
	if (cen_layout_derive(c))
		return -ENOTSUP;
	return cen_root_valid(c, map);
}

/* The LG_VADDR whose root has the length a symbol of @size gives, the root
 * being the struct's last member: sizeof = root_off + 8 << root bits (the
 * offset taken from the size too: a debug build's mutex is larger). */
static int vaddr_from_size(struct cen *c, uint64_t size)
{
	for (size_t i = 0; i < sizeof(vaddrs) / sizeof(*vaddrs); i++) {
		c->b.lg_vaddr = vaddrs[i];
		if (cen_layout_derive(c))
			return -ENOTSUP;
		uint64_t root = 8ULL << c->g.bits[0];
		if (size > root && size - root >= 0x40 && size - root < 0x400) {
			c->lay.root_off = size - root;
			return 0;
		}
	}
	return -ENOENT;
}

/* @n candidate addresses: the first whose root validates, any LG_VADDR. */
static int pick_map(struct cen *c, const uint64_t *cand, size_t n)
{
	for (size_t v = 0; v < sizeof(vaddrs) / sizeof(*vaddrs); v++)
		for (size_t i = 0; i < n; i++)
			if (!try_map(c, cand[i], vaddrs[v])) {
				c->map = cand[i];
				return 0;
			}
	c->b.lg_vaddr = vaddrs[0];
	cen_layout_derive(c);
	return -ENOENT;
}

int cen_map_find(struct cen *c)
{
	jma_session *s = c->s;
	const struct jma_copy *je = syms_jemalloc(s->syms);
	const char *name = c->L->leaf_state ? "arena_emap_global" : "extents_rtree";
	const struct att_machine *m = c->L->mach;
	unsigned char code[CODE_SCAN];
	uint64_t a, sz, fn = 0, cand[32], slot[16], v;
	char fname[96];
	size_t n, ns;
	int tls;

	if (syms_jemalloc_sym(s->syms, name, &a, &sz, &tls) && !tls) {
		if ((sz && vaddr_from_size(c, sz)) || (sz && cen_root_valid(c, a)) ||
		    (!sz && pick_map(c, &a, 1)))
			return sess_fail(s, JMA_ERR_MISSING, -EINVAL, "census: %s at 0x%llx (%llu bytes) "
					"does not hold a valid map of extents for jemalloc %s with "
					"%llu-byte pages (layout %s)", name, (unsigned long long)a,
					(unsigned long long)sz, c->out->version,
					(unsigned long long)c->g.page, c->L->name);
		c->map = a;
		snprintf(c->out->map_how, sizeof(c->out->map_how), "symbol %s", name);
		return 0;
	}
	snprintf(fname, sizeof(fname), "%smalloc_usable_size", je->prefix);
	if (!syms_jemalloc_sym(s->syms, fname, &fn, &sz, &tls) || tls || !fn)
		return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's map of extents has "
				"no symbol (%s) and %s was not found", name, fname);
	if (cen_read(c, fn, code, sizeof(code)))
		return sess_fail(s, JMA_ERR_MISSING, -EFAULT, "census: reading the code of %s at 0x%llx",
				fname, (unsigned long long)fn);
	/* The addresses it computes, then what the GOT slots it loads hold
	 * (Debian's arm64 library reaches the map through one). */
	n = m->addr_refs(code, sizeof(code), fn, cand, sizeof(cand) / sizeof(*cand));
	ns = m->slot_refs ? m->slot_refs(code, sizeof(code), fn, slot, sizeof(slot) / sizeof(*slot)) : 0;
	for (size_t i = 0; i < ns && n < sizeof(cand) / sizeof(*cand); i++)
		if (!cen_read(c, slot[i], &v, sizeof(v)) && cen_ptr_ok(v) && v % 8 == 0)
			cand[n++] = v;
	if (!pick_map(c, cand, n)) {
		snprintf(c->out->map_how, sizeof(c->out->map_how),
			 "decoded from %s (no symbols), root validated", fname);
		return 0;
	}
	return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "census: jemalloc's map of extents not found: "
			"no symbol %s, and none of the %zu addresses %s uses holds a valid one "
			"(%u-byte quantum, %llu-byte pages, 48- or 57-bit)", name, n, fname,
			1u << c->b.lg_quantum, (unsigned long long)c->g.page);
}

#define CTX_ENTRIES	16	/* RTREE_CTX_NCACHE */
#define SCAN_CHUNK	(256 * 1024)
#define DATA_MAX	(64ULL << 20)	/* jemalloc's writable data scanned, at most */

/* Where in jemalloc's writable data the root entry for @key is: the word
 * holding @leaf (two levels), or a node pointer whose entry for @key holds
 * it (three); each hit tried as the root. */
static int find_root_entry(struct cen *c, uint64_t leaf, uint64_t key, uint64_t *buf)
{
	const struct cen_geom *g = &c->g;
	uint64_t scanned = 0, idx = (key >> g->shift[0]) & ((1ULL << g->bits[0]) - 1);
	uint64_t idx1 = g->height == 3 ? (key >> g->shift[1]) & ((1ULL << g->bits[1]) - 1) : 0;

	for (size_t i = 0; i < c->nmaps; i++) {
		const struct att_map *m = &c->maps[i];

		if (!cen_je_data(c, i, 1))
			continue;
		for (uint64_t a = m->start; a < m->end && scanned < DATA_MAX; a += SCAN_CHUNK) {
			uint64_t n = m->end - a < SCAN_CHUNK ? m->end - a : SCAN_CHUNK, v;

			scanned += n;
			if (cen_read(c, a, buf, n))
				continue;
			for (size_t k = 0; k < n / 8; k++) {
				uint64_t at = a + k * 8, map = at - c->L->root_off - idx * 8;

				if (at < c->L->root_off + idx * 8)
					continue;
				if (g->height == 3 ? !child_ok(c, buf[k]) ||
				    cen_read(c, buf[k] + idx1 * 8, &v, 8) || v != leaf : buf[k] != leaf)
					continue;
				if (!cen_root_valid(c, map)) {
					c->map = map;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int cen_map_from_tsd(struct cen *c)
{
	uint64_t ctx[CTX_ENTRIES * 2], *buf;
	int err = -ENOENT;

	if (!c->L->rtree_ctx_off || !c->have_tpoff)
		return err;
	if (!(buf = malloc(SCAN_CHUNK)))
		return -ENOMEM;
	for (size_t v = 0; v < sizeof(vaddrs) / sizeof(*vaddrs) && err; v++) {
		c->b.lg_vaddr = vaddrs[v];
		if (cen_layout_derive(c))
			break;
		for (size_t t = 0; t < c->nth && err; t++) {
			uint64_t tsd = arch_regs_tls_base(&c->th[t].regs) + c->tpoff;

			if (!cen_ptr_ok(tsd) || cen_read(c, tsd + c->L->rtree_ctx_off, ctx, sizeof(ctx)))
				continue;
			for (unsigned e = 0; e < CTX_ENTRIES && err; e++) {
				uint64_t key = ctx[2 * e], leaf = ctx[2 * e + 1];

				/* An unused entry's key is RTREE_LEAFKEY_INVALID (1). */
				if (key & (leaf_span(c) - 1) || !cen_ptr_ok(leaf) || leaf % 8)
					continue;
				err = find_root_entry(c, leaf, key, buf);
			}
		}
	}
	free(buf);
	if (err) {
		c->b.lg_vaddr = vaddrs[0];
		cen_layout_derive(c);
		return err;
	}
	snprintf(c->out->map_how, sizeof(c->out->map_how), "found from a thread's lookup cache "
		 "(tsd.rtree_ctx), root validated");
	return 0;
}
