/* chunks.c -- the census of jemalloc 3.6 and 4.5: every chunk, its runs, every huge allocation.
 *
 * Which chunks there are.  4.5 registers every chunk it holds -- arena
 * chunks and the first chunk of each huge allocation -- in chunks_rtree
 * (key: the chunk's address, value: its extent_node_t; an arena chunk's is
 * its own header, en_achunk set).  3.6 keeps no such list on Linux (its
 * rtree exists only for OS X's zones; arena chunks with no dirty page are
 * in no tree, and a full one in no list at all): every chunk-aligned
 * address of the target's writable anonymous mappings is read, and one
 * whose first word names one of the arenas and whose page map tiles the
 * chunk exactly, each small run's header naming its own arena's bin, is an
 * arena chunk; huge allocations are the nodes of the global `huge` tree
 * (whose chunks are left out of the scan: their first word is the
 * program's).  A freed chunk is purged (its header reads zero) or reused.
 *
 * Each arena chunk's page map (one entry per page after the header's
 * map_bias pages) tiles it into runs: unallocated (size in the entry),
 * large (one block: 3.6 at the run, usable size the run's; 4.x's
 * cache-oblivious block somewhere in the run's first page, usable size the
 * run's less that page, or the small class of a promoted prof sample), small
 * (bin index in every page's entry; regions at reg0 + i * reg_interval, a
 * bitmap with 1 = free: 3.6 keeps it in the run's first page after
 * arena_run_t, 4.x in the page's arena_chunk_map_misc_t).  The run's own
 * nfree is checked against its bitmap, as 5.x slabs' are.
 *
 * The bounds are walk.c's: every chunk, rtree node, extent node and huge
 * allocation lies in readable mappings, in address order, apart from the
 * others, so what is kept is bounded by what the target maps (and the room
 * made before the stop by its resident memory); every loop over target
 * data is bounded and checks the deadline.  Whether a block is allocated
 * now (leaks.c's second look) is read the same way, for its one page.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/mem.h"
#include "census/chunks.h"

#define HUGE_MAX	(1u << 24)	/* nodes of 3.6's huge tree visited, at most */
#define SCAN_CHECK	256		/* 3.6's scan: chunk-aligned addresses between deadline checks */
#define HDR_MAX		(16 + 2048 / 8)	/* 3.6: a run's header and its largest bitmap */

/* Is [base, base + size) mapped readable, across adjacent mappings (the
 * kernel splits one chunk where mlock, mprotect or madvise changed part of
 * it)?  A chunk in a PROT_NONE reservation costs the target nothing. */
static int in_maps(const struct cen *c, uint64_t base, uint64_t size)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, base), *end = c->maps + c->nmaps;

	for (; m && m < end && m->start <= base && m->perms[0] == 'r'; m++) {
		if (m->end - base >= size)
			return 1;
		size -= m->end - base;
		base = m->end;
	}
	return 0;
}

static struct chk_run *new_run(struct cen *c)
{
	struct cen_chunks *k = c->ch;

	if (cen_grow(&k->runs, &k->capruns, k->nruns + 1, sizeof(*k->runs)))
		return NULL;
	memset(&k->runs[k->nruns], 0, sizeof(*k->runs));
	return &k->runs[k->nruns++];
}

/* A small run of bin @binind at page @p of @chunk: its record, room for
 * its bitmap; 4.x's header and bitmap are in the copied misc array, 3.6's
 * at the run (read for the whole chunk at once: small_headers).  0, 1 when
 * they do not agree with the map. */
static int small_run(struct cen *c, uint64_t chunk, uint64_t p, unsigned binind, uint64_t *pages)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	const struct chk_bin *b = &k->bins[binind];
	uint64_t nw = (b->nregs + 63) / 64;
	struct chk_run *r;

	*pages = b->run_size / CHK_PAGE;
	if (!L->misc_size && b->bitmap + nw * 8 > HDR_MAX)
		return 1;
	if (cen_grow(&c->bits, &c->capbits, c->nbits + nw, sizeof(*c->bits)) || !(r = new_run(c)))
		return -ENOMEM;
	r->base = chunk + p * CHK_PAGE;
	r->size = b->run_size;
	r->bits = c->nbits;
	r->binind = (uint16_t)binind;
	r->kind = CHK_SMALL;
	c->nbits += nw;
	if (L->misc_size) {	/* {binind, nfree, bitmap} in the page's misc entry */
		const unsigned char *m = k->misc + (p - k->map_bias) * L->misc_size + L->misc_run;
		uint32_t rbin;

		memcpy(&rbin, m, 4);
		memcpy(&r->nfree, m + 4, 4);
		memcpy(c->bits + r->bits, m + 8, nw * 8);
		return rbin != binind || r->nfree > b->nregs;
	}
	/* {bin, nextind, nfree} at the run, the bitmap at b->bitmap. */
	k->pieces[k->npieces] = (struct att_piece){ r->base, k->hdr + k->npieces * HDR_MAX,
						    b->bitmap + nw * 8, 0 };
	k->npieces++;
	return 0;
}

/* 3.6: the headers and bitmaps of a chunk's small runs (records @from on),
 * in one system call per IOV_MAX of them live; each run must name its own
 * arena's bin. */
static int small_headers(struct cen *c, uint64_t arena, size_t from)
{
	struct cen_chunks *k = c->ch;
	size_t q = 0;

	int batched = !c->s->offline && c->s->pid > 0 &&
		      !att_mem_read_pieces(c->s->pid, k->pieces, k->npieces);

	/* A core, or a process that cannot be read so: through the backend. */
	for (size_t i = 0; !batched && i < k->npieces; i++)
		k->pieces[i].ok = !cen_read(c, k->pieces[i].addr, k->pieces[i].buf, k->pieces[i].len);
	for (size_t i = from; i < k->nruns; i++) {
		struct chk_run *r = &k->runs[i];
		const struct chk_bin *b = &k->bins[r->binind];
		const unsigned char *h;
		uint64_t bin;

		if (r->kind != CHK_SMALL)
			continue;
		if (q >= k->npieces || !k->pieces[q].ok)
			return 1;
		h = k->pieces[q++].buf;
		memcpy(&bin, h, 8);
		memcpy(&r->nfree, h + 12, 4);
		if (bin != arena + k->L->bins_off + r->binind * k->L->bin_size || r->nfree > b->nregs)
			return 1;
		memcpy(c->bits + r->bits, h + b->bitmap, (b->nregs + 63) / 64 * 8);
	}
	return 0;
}

/* The page-map entry of page @p (>= map_bias) in the copied map. */
static uint64_t map_entry(const struct cen_chunks *k, uint64_t p)
{
	uint64_t w;

	memcpy(&w, (const unsigned char *)k->buf + (p - k->map_bias) * k->L->map_size + k->L->map_bits, 8);
	return w;
}

/* An arena chunk's runs.  1 when its map does not tile it (not a chunk
 * after all, or changed under us): nothing of it is kept. */
static int walk_chunk(struct cen *c, uint64_t chunk, uint64_t arena)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	size_t nruns = k->nruns, nbits = c->nbits;
	uint64_t n = k->npages - k->map_bias, szmask = ~((1ULL << L->runind_shift) - 1);
	int err = 0, misc = 0;

	k->npieces = 0;
	if (cen_read(c, chunk + L->map_off, k->buf, n * L->map_size))
		return 1;
	for (uint64_t p = k->map_bias, pages = 0; p < k->npages && !err; p += pages) {
		uint64_t bits = map_entry(k, p), size = (bits & szmask) >> L->size_shift;
		unsigned binind = (unsigned)(bits >> L->binind_shift) & CHK_BININD_INVALID;
		struct chk_run *r;

		pages = size / CHK_PAGE;
		if (!(bits & CHK_MAP_ALLOC)) {
			if (!pages || size % CHK_PAGE)
				err = 1;
		} else if (bits & CHK_MAP_LARGE) {
			/* A prof sample of a small class promoted to a run of
			 * its own keeps its bin (a page in 3.6, LARGE_MINCLASS
			 * and the pad in 4.x). */
			if (!pages || size % CHK_PAGE || size <= k->large_pad || (binind != CHK_BININD_INVALID &&
			    (binind >= k->nbins || size > 4 * CHK_PAGE + k->large_pad)))
				err = 1;
			else if (!(r = new_run(c)))
				err = -ENOMEM;
			else {
				r->base = chunk + p * CHK_PAGE;
				r->size = size;
				r->usize = binind != CHK_BININD_INVALID ? k->bins[binind].reg_size :
					   size - k->large_pad;
				r->kind = CHK_LARGE;
			}
		} else if (binind >= k->nbins || bits >> L->runind_shift) {
			err = 1;
		} else {
			/* 4.x: the misc entries, all at once, at the first small run. */
			if (L->misc_size && !misc++ &&
			    cen_read(c, chunk + k->misc_off, k->misc, n * L->misc_size))
				err = 1;
			if (!err)
				err = small_run(c, chunk, p, binind, &pages);
			/* Every page of a small run names the bin and its own place. */
			for (uint64_t i = 1; !err && i < pages && p + i < k->npages; i++) {
				uint64_t w = map_entry(k, p + i);
				if ((w & (CHK_MAP_ALLOC | CHK_MAP_LARGE)) != CHK_MAP_ALLOC || w >> L->runind_shift != i ||
				    ((w >> L->binind_shift) & CHK_BININD_INVALID) != binind)
					err = 1;
			}
		}
		if (!err && p + pages > k->npages)
			err = 1;
	}
	if (!err && !L->misc_size)
		err = small_headers(c, arena, nruns);
	if (err) {
		k->nruns = nruns;
		c->nbits = nbits;
		return err < 0 ? err : 1;
	}
	k->nchunks++;
	return 0;
}

static int add_huge(struct cen *c, uint64_t addr, uint64_t usize)
{
	struct cen_chunks *k = c->ch;
	uint64_t span = (usize + k->chunksize - 1) & ~(k->chunksize - 1);
	struct chk_run *r;

	if (!usize || span < usize || addr & (k->chunksize - 1) || addr < k->walk_end ||
	    !in_maps(c, addr, span)) {
		c->bad_words++;
		return 0;
	}
	if (!(r = new_run(c)))
		return -ENOMEM;
	r->base = addr;
	r->size = span;
	r->usize = usize;
	r->kind = CHK_HUGE;
	k->walk_end = addr + span;
	k->nhuge++;
	return 0;
}

/* 4.x: the extent node a leaf names for the chunk at @key. */
static int take_node(struct cen *c, uint64_t key, uint64_t node)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	unsigned char e[0x28];
	uint64_t arena, addr, size;
	int err;

	k->nnodes++;
	if (!in_maps(c, node, sizeof(e)) || cen_read(c, node, e, sizeof(e))) {
		c->bad_words++;
		return 0;
	}
	memcpy(&arena, e, 8);
	memcpy(&addr, e + L->node_addr, 8);
	memcpy(&size, e + L->node_size, 8);
	if (addr != key || !cen_ptr_ok(arena)) {
		c->bad_words++;
		return 0;
	}
	if (!e[L->node_achunk]) {
		/* The node is jemalloc's own block (an arena allocation). */
		err = cen_stack_add(c, node);
		return err ? err : add_huge(c, addr, size);
	}
	if (node != addr || size != k->chunksize || addr < k->walk_end ||
	    !in_maps(c, addr, k->chunksize)) {
		c->bad_words++;
		return 0;
	}
	err = walk_chunk(c, addr, arena);
	if (err > 0)
		c->bad_words++;
	else if (!err)
		k->walk_end = addr + k->chunksize;
	return err < 0 ? err : 0;
}

/* 4.x: may rtree node @node (@len bytes) be read in this walk (it is then
 * recorded)?  1 when it meets one read already: in a tree every node has
 * one parent and memory of its own, so one named twice or overlapping
 * another is forged (a walk through it would read the same leaves 2^16
 * times), and the nodes read are at most what the target maps. */
static int node_seen(struct cen *c, uint64_t node, uint64_t len)
{
	struct cen_chunks *k = c->ch;
	size_t lo = 0, hi = k->nnodes_seen;

	while (lo < hi) {	/* the first node starting at or after @node */
		size_t mid = lo + (hi - lo) / 2;
		if (k->nodes[2 * mid] < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	if ((lo && k->nodes[2 * lo - 1] > node) || (lo < k->nnodes_seen && k->nodes[2 * lo] - node < len))
		return 1;
	if (cen_grow(&k->nodes, &k->capnodes, 2 * (k->nnodes_seen + 1), sizeof(*k->nodes)))
		return -ENOMEM;
	memmove(&k->nodes[2 * lo + 2], &k->nodes[2 * lo], (k->nnodes_seen - lo) * 2 * sizeof(*k->nodes));
	k->nodes[2 * lo] = node;
	k->nodes[2 * lo + 1] = node + len;
	k->nnodes_seen++;
	return 0;
}

/* 4.x: the subtree at @level (its node @node), keys so far @prefix. */
static int walk_rtree(struct cen *c, const uint64_t *lv, unsigned height, unsigned level,
		      uint64_t node, uint64_t prefix, uint64_t *bufs[CHK_RTREE_LEVELS])
{
	unsigned bits = (unsigned)lv[2 * level + 1], cum = (unsigned)(lv[2 * level + 1] >> 32);
	uint64_t n = 1ULL << bits, *v = bufs[level];
	int err = cen_ptr_ok(node) && in_maps(c, node, n * 8) ? node_seen(c, node, n * 8) : 1;

	if (err || cen_read(c, node, v, n * 8)) {
		c->bad_words++;
		return err < 0 ? err : 0;
	}
	for (uint64_t j = 0; j < n && !err; j++) {
		uint64_t key = prefix | (j << (64 - cum));

		if (v[j] <= 1)	/* empty, or RTREE_NODE_INITIALIZING */
			continue;
		if (cen_timed_out(c))
			return sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out walking "
					"the chunks (%llu read)", (unsigned long long)c->ch->nchunks);
		err = level + 1 == height ? take_node(c, key, v[j]) :
		      walk_rtree(c, lv, height, level + 1, v[j], key, bufs);
	}
	return err;
}

static int walk_4x(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	uint64_t lv[CHK_RTREE_LEVELS * 2], *bufs[CHK_RTREE_LEVELS] = { 0 }, *at = k->buf;
	uint32_t height;
	int err = 0;

	if (cen_read(c, k->rtree + k->L->rt_height, &height, 4) ||
	    cen_read(c, k->rtree + k->L->rt_levels, lv, sizeof(lv)) || !height || height > CHK_RTREE_LEVELS)
		return sess_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading chunks_rtree at 0x%llx",
				(unsigned long long)k->rtree);
	/* One buffer per level (the walk goes down one path at a time), after
	 * the page map's in k->buf; chk_layout_find checked the shape. */
	at += k->npages * k->L->map_size / 8 + 1;
	for (unsigned i = 0; i < height; i++) {
		unsigned bits = (unsigned)lv[2 * i + 1];
		if (bits > 16 || at + (1ULL << bits) > k->buf + k->nbuf)
			return sess_fail(c->s, JMA_ERR_TARGET, -EPROTO, "census: chunks_rtree changed "
					"its shape");
		bufs[i] = at;
		at += 1ULL << bits;
	}
	/* Each level's subtree holds the keys whose higher bits are all zero:
	 * the deepest first is address order. */
	for (unsigned i = height; i-- > 0 && !err;)
		if (lv[2 * i] > 1)
			err = walk_rtree(c, lv, height, i, lv[2 * i], 0, bufs);
	return err;
}

/* 3.6: the huge tree in address order (its address links), into @out:
 * the allocations that can be (chunk-aligned, in readable mappings, each
 * after the last: no more than the mappings hold). */
static int huge_nodes(struct cen *c, uint64_t **out, size_t *nout)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	uint64_t nil = k->huge + 8, stack[CHK_RB_DEPTH], node, *v = NULL, w[2], end = 0, cs = k->chunksize;
	size_t n = 0, cap = 0, depth = 0, seen = 0;

	if (cen_read(c, k->huge, &node, 8))
		return sess_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading the huge tree");
	while ((node != nil || depth) && seen++ < HUGE_MAX) {
		if (seen % 4096 == 0 && cen_timed_out(c)) {
			free(v);
			return sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out reading "
					"the tree of huge allocations (%zu read)", n / 2);
		}
		if (node != nil) {
			if (depth == CHK_RB_DEPTH || !cen_ptr_ok(node) ||
			    cen_read(c, node + L->node_left, &w[0], 8))
				goto bad;
			stack[depth++] = node;
			node = w[0];
			continue;
		}
		node = stack[--depth];
		if (cen_read(c, node + L->node_addr, w, sizeof(w)) || w[0] < end)
			goto bad;	/* unreadable, or out of address order */
		end = w[0] + 1;
		if (!w[1] || w[1] > UINT64_MAX - cs || (w[0] & (cs - 1)) ||
		    !in_maps(c, w[0], (w[1] + cs - 1) & ~(cs - 1))) {
			c->bad_words++;
		} else {
			if (cen_grow(&v, &cap, n + 2, sizeof(*v)))
				goto bad;
			v[n++] = w[0];
			v[n++] = w[1];
			end = w[0] + ((w[1] + cs - 1) & ~(cs - 1));
		}
		if (cen_read(c, node + L->node_right, &node, 8))
			goto bad;
		node &= ~1ULL;	/* the colour bit */
	}
	*out = v;
	*nout = n / 2;
	return 0;
bad:
	free(v);
	return sess_fail(c->s, JMA_ERR_TARGET, -EPROTO, "census: the tree of huge allocations is not "
			"a tree (%zu nodes read)", n / 2);
}

/* 3.6: the arena chunks among the chunk-aligned addresses of writable,
 * anonymous memory, interleaved with the huge allocations in address order. */
static int walk_36(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	uint64_t *huge = NULL, cs = k->chunksize;
	size_t nhuge = 0, h = 0;
	int err = huge_nodes(c, &huge, &nhuge);

	for (size_t i = 0; i < c->nmaps && !err; i++) {
		const struct att_map *m = &c->maps[i];

		if (m->perms[0] != 'r' || m->perms[1] != 'w' || (m->path && m->path[0] != '['))
			continue;
		for (uint64_t a = (m->start + cs - 1) & ~(cs - 1), j = 1; a >= m->start && a < m->end &&
		     !err; a += cs, j++) {
			uint64_t first;

			/* A sparse mapping of terabytes has millions of them. */
			if (j % SCAN_CHECK == 0 && cen_timed_out(c)) {
				err = sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out "
					       "reading chunks (%llu read)", (unsigned long long)k->nchunks);
				break;
			}
			while (h < nhuge && huge[2 * h] <= a && !err)
				err = add_huge(c, huge[2 * h], huge[2 * h + 1]), h++;
			/* A page never touched holds no header, and reading it
			 * would give the target a page table (a large sparse
			 * mapping: one for every 2 MiB read). */
			if (err || a < k->walk_end || (k->pagemap >= 0 && !att_page_present(k->pagemap, a)) ||
			    cen_read(c, a, &first, 8) || !chk_is_arena(k, first) || !in_maps(c, a, cs))
				continue;
			if (cen_timed_out(c))
				err = sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out "
					       "reading chunks (%llu read)",
					       (unsigned long long)k->nchunks);
			else if (!(err = walk_chunk(c, a, first)))
				k->walk_end = a + cs;
			else if (err > 0)
				c->bad_words++, err = 0;
		}
	}
	while (h < nhuge && !err)
		err = add_huge(c, huge[2 * h], huge[2 * h + 1]), h++;
	free(huge);
	/* What the arenas count of their own chunks (the spare included). */
	k->counted = 0;
	for (size_t i = 0; i < k->narenas && !err; i++) {
		uint64_t mapped;
		if (!cen_read(c, k->arenas[i] + k->L->arena_mapped, &mapped, 8))
			k->counted += mapped / cs;
	}
	return err;
}

int cen_chunks_walk(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	int err;

	k->nruns = 0;
	k->nchunks = k->nhuge = k->nnodes = 0;
	k->nnodes_seen = 0;
	k->walk_end = 0;
	c->nbits = 0;
	c->bad_words = 0;
	err = k->L->major == 4 ? walk_4x(c) : walk_36(c);
	if (err == -ENOMEM)
		err = sess_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu runs", k->nruns);
	return err;
}

int cen_chunks_prepare(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	size_t cap, capb, want, ns;
	uint64_t res;
	int err;

	/* Again for a second stop (leaks.c): the last one's buffers go (and
	 * the walk's: cen_walk_prepare freed them). */
	if (k->pagemap < 0 && k->L->major == 3 && !c->s->offline)
		k->pagemap = att_proc_pagemap(c->s->pid);
	free(k->buf);
	free(k->misc);
	free(k->pieces);
	c->capbits = 0;
	/* The page map, and 4.x's rtree levels (2^16 words at most each); the
	 * misc array (4.x) or the runs' headers and bitmaps (3.6). */
	k->nbuf = k->npages * k->L->map_size / 8 + 1 + (k->L->major == 4 ? CHK_RTREE_LEVELS << 16 : 0);
	k->buf = malloc(k->nbuf * 8);
	k->misc = malloc(k->npages * (k->L->misc_size ? k->L->misc_size : HDR_MAX));
	k->pieces = k->L->misc_size ? NULL : malloc(k->npages * sizeof(*k->pieces));
	if (!k->buf || !k->misc || (!k->L->misc_size && !k->pieces))
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	k->hdr = k->misc;
	cen_touch(k->buf, k->nbuf * 8);
	cen_touch(k->misc, k->npages * (k->L->misc_size ? k->L->misc_size : HDR_MAX));
	if ((err = cen_cache_prepare(c)))
		return sess_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	/* A walk now, the threads running, says how much room the one in the
	 * stop needs: made and touched here, so that the stop takes no page
	 * faults of ours. */
	ns = c->nstacks;
	/* Read while they change: only running out of memory matters here. */
	if ((err = cen_chunks_walk(c)) == -ENOMEM)
		return err;
	c->nstacks = ns;	/* huge nodes: the walk in the stop finds them again */
	cen_cache_flush(c);
	/* Each run the map names costs the target a page-map entry it wrote
	 * (8 bytes at least): no more room than its resident memory says. */
	want = k->nruns + k->nruns / 8;
	res = cen_resident(c);
	if (res && want > res / 8)
		want = res / 8;
	want += 4096;
	cap = k->capruns;
	capb = c->capbits;
	if (cen_grow(&k->runs, &k->capruns, want, sizeof(*k->runs)) ||
	    cen_grow(&c->bits, &c->capbits, c->nbits + c->nbits / 8 + 4096, sizeof(*c->bits)))
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	cen_touch(k->runs + cap, (k->capruns - cap) * sizeof(*k->runs));
	cen_touch(c->bits + capb, (c->capbits - capb) * sizeof(*c->bits));
	return 0;
}

void cen_chunks_walk_free(struct cen *c)
{
	struct cen_chunks *k = c->ch;

	free(k->runs);
	k->runs = NULL;
	k->nruns = k->capruns = 0;
}

void cen_chunks_free(struct cen *c)
{
	struct cen_chunks *k = c->ch;

	if (!k)
		return;
	if (k->pagemap >= 0)
		close(k->pagemap);
	free(k->arenas);
	free(k->nodes);
	free(k->runs);
	free(k->buf);
	free(k->misc);
	free(k->pieces);
	free(k->bysize);
	free(k);
	c->ch = NULL;
}
