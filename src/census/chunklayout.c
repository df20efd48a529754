/* chunklayout.c -- the facts of jemalloc 3.6 and 4.5 (chunks and runs), and which apply to the target.
 *
 * Offsets by offsetof against each configured tree (x86_64, 4 KiB pages,
 * default configure with and without --enable-prof: in 4.5 prof changes
 * nothing we read, in 3.6 it adds a word to each page-map entry and moves
 * arena_t's bins).  The row is chosen by the version string; 3.6's prof or
 * not by which one its own map_bias agrees with.  The rest is read from the
 * library, by symbol (a library with its .symtab, or its debuginfo): the
 * chunk size, map_bias, the bins' region sizes, run sizes and region
 * offsets (arena_bin_info, checked against the size classes), the number
 * of thread-cache bins; 4.5's map of chunks (chunks_rtree); 3.6's arenas
 * and its tree of huge allocations.  Without symbols the census is refused
 * (naming what is missing).
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/chunks.h"

#define RTREE_HEIGHT_MAX	4	/* 64-bit keys, 16 bits a level */
#define SCAN_PIECE		(256 * 1024)
#define SCAN_MAX		(64ULL << 20)	/* of jemalloc's data scanned for its rtree */
#define ARENAS_MAX		4096

static const struct chk_layout rows[] = {
	{ .name = "3.6", .major = 3, .minor = 6, .em = EM_X86_64, .prof = 0,
	  .map_off = 0x30, .map_size = 0x18, .map_bits = 0x10, .binind_shift = 4, .runind_shift = 12,
	  .bins_off = 0x120, .bin_size = 0x98, .arena_mapped = 0x30,
	  .bi_size = 0x68, .bi_reg_interval = 0x10, .bi_run_size = 0x18, .bi_nregs = 0x20,
	  .bi_bitmap = 0x24, .bi_reg0 = 0x64, .nbins = 28, .maxregs = 2048,
	  .tc_tbins = 0x28, .tbin_size = 0x20, .tbin_ncached = 0x10, .tbin_avail = 0x18,
	  .tls_tcache = "tcache_tls", .tls_quarantine = "quarantine_tls",
	  .node_addr = 0x28, .node_size = 0x30, .node_left = 0x10, .node_right = 0x18 },
	{ .name = "3.6+prof", .major = 3, .minor = 6, .em = EM_X86_64, .prof = 1,
	  .map_off = 0x30, .map_size = 0x20, .map_bits = 0x18, .binind_shift = 4, .runind_shift = 12,
	  .bins_off = 0x130, .bin_size = 0xa0, .arena_mapped = 0x30,
	  .bi_size = 0x68, .bi_reg_interval = 0x10, .bi_run_size = 0x18, .bi_nregs = 0x20,
	  .bi_bitmap = 0x24, .bi_reg0 = 0x64, .nbins = 28, .maxregs = 2048,
	  .tc_tbins = 0x28, .tbin_size = 0x20, .tbin_ncached = 0x10, .tbin_avail = 0x18,
	  .tls_tcache = "tcache_tls", .tls_quarantine = "quarantine_tls",
	  .node_addr = 0x28, .node_size = 0x30, .node_left = 0x10, .node_right = 0x18 },
	{ .name = "4.5", .major = 4, .minor = 5, .em = EM_X86_64,
	  .map_off = 0x78, .map_size = 8, .map_bits = 0, .misc_size = 0x60, .misc_run = 0x18,
	  .binind_shift = 5, .runind_shift = 13, .size_shift = 1,
	  .bins_off = 0x980, .bin_size = 0xa8,
	  .bi_size = 0x40, .bi_reg_interval = 0x10, .bi_run_size = 0x18, .bi_nregs = 0x20,
	  .bi_bitmap = 0, .bi_reg0 = 0x38, .nbins = 36, .maxregs = 512,
	  .tc_tbins = 0x28, .tbin_size = 0x20, .tbin_ncached = 0x10, .tbin_avail = 0x18,
	  .avail_below = 1,
	  .tls_tcache = "tsd_tls", .tls_quarantine = "tsd_tls",
	  .tcache_in = 0x8, .quarantine_in = 0x50, .arenas_tdata_in = 0x38,
	  .node_addr = 0x8, .node_size = 0x10, .node_achunk = 0x22,
	  .rt_height = 0x10, .rt_levels = 0x28, .tsd_size = 0x68 },
};

const struct chk_layout *chk_layout_named(const char *name)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* A global of jemalloc's by name (je_-prefixed or not); 0 when absent. */
static uint64_t sym(struct cen *c, const char *name)
{
	uint64_t a = 0, sz;
	int tls = 0;

	if (!syms_jemalloc_sym(c->s->syms, name, &a, &sz, &tls) || tls)
		return 0;
	return a;
}

static int read_u64(struct cen *c, const char *name, uint64_t *v)
{
	uint64_t a = sym(c, name);

	return a && !cen_read(c, a, v, sizeof(*v)) ? 0 : -ENOENT;
}

/* arena_boot's map_bias for page-map entries of @entry bytes after @map_off. */
static uint64_t map_bias_for(uint64_t npages, uint64_t map_off, uint64_t entry)
{
	uint64_t bias = 0;

	for (int i = 0; i < 3; i++)
		bias = (map_off + entry * (npages - bias) + 4095) >> 12;
	return bias;
}

/* arena_bin_info[]: each bin's region size (which must be jemalloc's size
 * class of that index), spacing, run size, count and offsets. */
static int read_bins(struct cen *c, struct cen_chunks *k)
{
	const struct chk_layout *L = k->L;
	uint64_t a = sym(c, "arena_bin_info"), run_max = k->chunksize - (k->map_bias << 12);
	unsigned char *buf;
	int err = 0;

	if (!a && L->major == 4) {
		/* bin_info_run_size_calc without redzones: the smallest run
		 * of whole pages that whole regions fill. */
		for (unsigned i = 0; i < L->nbins; i++) {
			struct chk_bin *x = &k->bins[i];

			x->reg_size = x->reg_interval = c->sizes[i];
			for (x->run_size = 4096; x->run_size % x->reg_size; x->run_size += 4096)
				;
			x->nregs = (uint32_t)(x->run_size / x->reg_size);
		}
		k->nbins = L->nbins;
		k->bins_how = "computed";
		return 0;
	}
	if (!a)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s needs its symbols "
				"(arena_bin_info): this library has none; install its debuginfo",
				c->out->version);
	k->bins_how = "arena_bin_info";
	if (!(buf = malloc(L->bi_size * L->nbins)))
		return -ENOMEM;
	if (cen_read(c, a, buf, L->bi_size * L->nbins))
		err = -EFAULT;
	for (unsigned i = 0; i < L->nbins && !err; i++) {
		const unsigned char *b = buf + i * L->bi_size;
		struct chk_bin *x = &k->bins[i];
		uint32_t nregs, reg0, bitmap = 0;

		memcpy(&x->reg_size, b, 8);
		memcpy(&x->reg_interval, b + L->bi_reg_interval, 8);
		memcpy(&x->run_size, b + L->bi_run_size, 8);
		memcpy(&nregs, b + L->bi_nregs, 4);
		memcpy(&reg0, b + L->bi_reg0, 4);
		if (L->bi_bitmap)
			memcpy(&bitmap, b + L->bi_bitmap, 4);
		x->nregs = nregs;
		x->reg0 = reg0;
		x->bitmap = bitmap;
		/* The small classes are 5.x's first ones in both (8, 16, 32, 48 ...). */
		/* Redzones (opt.redzone) space the regions out: reg0 is past
		 * the first one, the last region's trails past its run. */
		if (x->reg_size != c->sizes[i] || x->reg_interval < x->reg_size || !nregs ||
		    nregs > L->maxregs || x->run_size % 4096 || x->run_size > run_max ||
		    x->reg0 + (nregs - 1ULL) * x->reg_interval + x->reg_size > x->run_size ||
		    (L->bi_bitmap && (bitmap < 16 || bitmap + (nregs + 63) / 64 * 8 > reg0)))
			err = sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s's bin %u "
				       "(%llu-byte regions in runs of %llu) is not what layout %s "
				       "expects", c->out->version, i, (unsigned long long)x->reg_size,
				       (unsigned long long)x->run_size, L->name);
	}
	free(buf);
	if (err == -EFAULT)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: reading arena_bin_info at 0x%llx",
				(unsigned long long)a);
	k->nbins = L->nbins;
	return err;
}

/* 4.5's rtree_t at @w (RT_WORDS words: alloc, dalloc, height and
 * start_level[4], levels[4] {subtree, bits, cumbits}): its key bits (64 -
 * lg_chunk), 0 when it is not one.  rtree_new's shape: each level 16 bits
 * but the leaves' the rest, the lookup's start level min(3 - i, height - 1)
 * for keys with 16 i leading bits, unused levels zero. */
#define RT_WORDS	13
static unsigned rtree_bits(const uint64_t *w)
{
	uint32_t height = (uint32_t)w[2], start[4] = { (uint32_t)(w[2] >> 32), (uint32_t)w[3],
							(uint32_t)(w[3] >> 32), (uint32_t)w[4] };
	unsigned cum = 0;

	if (!w[0] || !height || height > RTREE_HEIGHT_MAX)
		return 0;
	for (unsigned i = 0; i < RTREE_HEIGHT_MAX; i++) {
		uint32_t bits = (uint32_t)w[6 + 2 * i], cumbits = (uint32_t)(w[6 + 2 * i] >> 32);
		uint32_t want = 3 - i < height - 1 ? 3 - i : height - 1;

		if (start[i] != want)
			return 0;
		if (i >= height) {
			if (bits || cumbits || w[5 + 2 * i])
				return 0;
			continue;
		}
		cum += bits;
		if (!bits || bits > 16 || cumbits != cum || (i + 1 < height && bits != 16))
			return 0;
	}
	return cum >= 64 - 40 && cum <= 64 - 14 ? cum : 0;
}

/* Without symbols: the one rtree_t among jemalloc's writable data (at most
 * SCAN_MAX of it: the anonymous mapping after its .bss is the target's to
 * make as large as it likes). */
static uint64_t rtree_scan(struct cen *c)
{
	uint64_t *buf = malloc(SCAN_PIECE + RT_WORDS * 8), found = 0, done = 0;
	unsigned hits = 0;

	for (size_t i = 0; buf && i < c->nmaps && hits < 2; i++) {
		const struct att_map *m = &c->maps[i];

		for (uint64_t a = m->start; cen_je_data(c, i, 1) && a < m->end && hits < 2 && done < SCAN_MAX;
		     a += SCAN_PIECE, done += SCAN_PIECE) {
			uint64_t n = m->end - a < SCAN_PIECE + RT_WORDS * 8 ? m->end - a :
				     SCAN_PIECE + RT_WORDS * 8;

			if (cen_read(c, a, buf, n))
				continue;
			for (uint64_t j = 0; j + RT_WORDS <= n / 8 && j < SCAN_PIECE / 8; j++)
				if (rtree_bits(buf + j) && (!hits || a + j * 8 != found)) {
					found = a + j * 8;
					hits++;
				}
		}
	}
	free(buf);
	return hits == 1 ? found : 0;
}

/* 4.5: chunks_rtree, whose own header gives its shape: the chunk size is
 * what its leaf level leaves out of a 64-bit key. */
static int find_rtree(struct cen *c, struct cen_chunks *k)
{
	uint64_t a = sym(c, "chunks_rtree"), w[RT_WORDS];
	unsigned cum;
	const char *how = "symbol chunks_rtree";

	if (!a && (a = rtree_scan(c)))
		how = "chunks_rtree found in jemalloc's data (no symbols)";
	if (!a)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: no symbol "
				"chunks_rtree, and no radix tree of chunks in its data", c->out->version);
	if (cen_read(c, a, w, sizeof(w)))
		return sess_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading chunks_rtree");
	if (!(cum = rtree_bits(w)))
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: chunks_rtree at 0x%llx is "
				"not a radix tree of chunks (layout %s)", (unsigned long long)a,
				k->L->name);
	k->rtree = a;
	k->chunksize = 1ULL << (64 - cum);
	snprintf(c->out->map_how, sizeof(c->out->map_how), "%s (%u levels, %llu KiB chunks)", how,
		 (unsigned)w[2], (unsigned long long)(k->chunksize >> 10));
	c->map = a;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* 3.6: the arenas (a chunk's header names its own) and the huge tree. */
static int find_arenas(struct cen *c, struct cen_chunks *k)
{
	uint64_t arr = 0, t[5];
	uint32_t n = 0;
	uint64_t *v;
	size_t m = 0;

	if (read_u64(c, "arenas", &arr) || !(k->huge = sym(c, "huge")) ||
	    cen_read(c, sym(c, "narenas_total"), &n, sizeof(n)) || !sym(c, "narenas_total"))
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s needs its symbols "
				"(arenas, narenas_total, huge): this library has none; install its "
				"debuginfo", c->out->version);
	if (!cen_ptr_ok(arr) || !n || n > ARENAS_MAX)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc's arenas are not "
				"set up (%u arenas at 0x%llx)", n, (unsigned long long)arr);
	/* The tree is {root, nil}: the nil node's address-tree links name
	 * itself (its root too when the tree is empty). */
	if (cen_read(c, k->huge, t, sizeof(t)) || !cen_ptr_ok(t[0]) ||
	    t[(8 + k->L->node_left) / 8] != k->huge + 8 ||
	    (t[(8 + k->L->node_right) / 8] & ~1ULL) != k->huge + 8)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: the tree of huge allocations "
				"at 0x%llx is not one", (unsigned long long)k->huge);
	if (!(v = malloc(n * sizeof(*v))) || !(k->arenas = malloc(n * sizeof(*k->arenas)))) {
		free(v);
		return -ENOMEM;
	}
	if (cen_read(c, arr, v, n * sizeof(*v))) {
		free(v);
		return sess_fail(c->s, JMA_ERR_TARGET, -EFAULT, "census: reading the arenas at 0x%llx",
				(unsigned long long)arr);
	}
	for (uint32_t i = 0; i < n; i++)
		if (v[i] && cen_ptr_ok(v[i]))
			k->arenas[m++] = v[i];
	free(v);
	qsort(k->arenas, m, sizeof(*k->arenas), cmp_u64);
	k->narenas = m;
	snprintf(c->out->map_how, sizeof(c->out->map_how), "the mappings' chunk-aligned headers naming "
		 "one of %zu arenas (symbol arenas) and the huge tree (symbol huge)", m);
	c->map = arr;
	return 0;
}

/* TLS variable @name, at @in within it for what we read; a library without
 * symbols whose TLS block is the size of 4.5's tsd_t holds nothing else. */
/* 3.6: the row (with prof or not) under which the arenas' current runs
 * agree with their bins: the run names its bin (run->bin, whose place in
 * arena_t prof moves), and its page's map word (whose place in the chunk
 * header prof moves) the bin's index.  One row only, or none. */
#define BIN_RUNCUR	0x28	/* arena_bin_t.runcur, after its mutex */
static const struct chk_layout *prof_by_bins(struct cen *c, const struct cen_chunks *k)
{
	const struct chk_layout *found = NULL;

	for (size_t r = 0; r < 2; r++) {
		const struct chk_layout *L = &rows[r];
		unsigned hits = 0;

		for (size_t a = 0; a < k->narenas; a++)
			for (unsigned i = 0; i < L->nbins; i++) {
				uint64_t bin = k->arenas[a] + L->bins_off + i * L->bin_size, run, back,
					 chunk, page, bits;

				if (cen_read(c, bin + BIN_RUNCUR, &run, 8) || !cen_ptr_ok(run) ||
				    cen_read(c, run, &back, 8) || back != bin)
					continue;
				chunk = run & ~(k->chunksize - 1);
				page = (run - chunk) >> 12;
				hits += page >= k->map_bias &&
					!cen_read(c, chunk + L->map_off + (page - k->map_bias) * L->map_size +
						  L->map_bits, &bits, 8) &&
					(bits & 3) == 1 && ((bits >> L->binind_shift) & 0xff) == i;
			}
		if (hits && found)
			return NULL;
		if (hits)
			found = L;
	}
	return found;
}

static int find_tls(struct cen *c, const char *name, struct cen_tls *t)
{
	uint64_t off = 0, sz;
	int tls = 0;

	if (!syms_jemalloc_sym(c->s->syms, name, &off, &sz, &tls) || !tls) {
		if (!c->ch->L->tsd_size || cen_tls_memsz(c) != c->ch->L->tsd_size)
			return -ENOENT;
		off = 0;
	}
	return cen_tls_find(c, off, t);
}

int chk_layout_find(struct cen *c, unsigned major, unsigned minor)
{
	struct cen_chunks *k;
	const struct chk_layout *L = NULL;
	uint64_t v;
	uint32_t nh = 0;
	unsigned nsizes;
	int err;

	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows) && !L; i++)
		if (rows[i].major == major && rows[i].minor == minor)
			L = &rows[i];
	if (!L)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: no known layout "
				"(of the chunk-era releases, 3.6 and 4.5 are known)", c->out->version);
	if (L->em != c->b.mach->em)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: its layout is "
				"known on %s only", c->out->version, att_machine_of(L->em)->name);
	if (!(k = c->ch = calloc(1, sizeof(*k))))
		return -ENOMEM;
	k->L = L;
	k->pagemap = -1;
	nsizes = cen_sizes_compute(4, 12, c->sizes, NULL);
	err = major == 4 ? find_rtree(c, k) : find_arenas(c, k);
	if (err)
		return err;
	if (major == 3) {
		if (read_u64(c, "chunksize", &k->chunksize))
			return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: no "
					"symbol chunksize", c->out->version);
	} else if (!read_u64(c, "chunksize", &v) && v != k->chunksize) {
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: chunks_rtree's chunks (%llu "
				"bytes) are not chunksize (%llu)", (unsigned long long)k->chunksize,
				(unsigned long long)v);
	}
	if (k->chunksize < (1ULL << 14) || k->chunksize > (1ULL << 40) || (k->chunksize & (k->chunksize - 1)))
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: a chunk size of %llu bytes",
				(unsigned long long)k->chunksize);
	k->npages = k->chunksize >> 12;
	/* map_bias: the library's; it tells 3.6 built with prof from without
	 * (4.5's is the same either way: arena_boot's, computed). */
	if (read_u64(c, "map_bias", &k->map_bias) && major == 4)
		k->map_bias = map_bias_for(k->npages, L->map_off, L->map_size + L->misc_size);
	else if (!sym(c, "map_bias"))
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: no symbol "
				"map_bias", c->out->version);
	if (major == 3 && map_bias_for(k->npages, rows[0].map_off, rows[0].map_size) ==
	    map_bias_for(k->npages, rows[1].map_off, rows[1].map_size)) {
		/* Small chunks (lg_chunk 16 to 18) have headers of one size
		 * either way: the arenas' bins tell. */
		if (!(L = prof_by_bins(c, k)))
			return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s with "
					"%llu-byte chunks: built with prof or not cannot be told yet "
					"(no small run)", c->out->version,
					(unsigned long long)k->chunksize);
		k->L = L;
	} else if (major == 3 && map_bias_for(k->npages, L->map_off, L->map_size) != k->map_bias) {
		k->L = L = &rows[1];
	}
	if (map_bias_for(k->npages, L->map_off, L->map_size + L->misc_size) != k->map_bias)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s's chunk header "
				"(%llu pages for %llu-byte chunks) matches no known layout",
				c->out->version, (unsigned long long)k->map_bias,
				(unsigned long long)k->chunksize);
	k->misc_off = L->map_off + L->map_size * (k->npages - k->map_bias);
	/* Cache-oblivious large runs: one page more than the block, which
	 * starts somewhere in the first (4.x's default configure). */
	k->large_pad = major == 4 ? 4096 : 0;
	if ((err = read_bins(c, k)))
		return err;
	/* What the shared phases ask of the geometry (contents.c: which
	 * blocks are small, read together). */
	c->g = (struct cen_geom){ .page = 4096, .lg_page = 12, .nsizes = nsizes, .nbins = k->nbins,
				  .nregs_max = L->maxregs };
	snprintf(c->out->layout, sizeof(c->out->layout), "%s", L->name);
	/* Thread caches: their pointers in TLS, their bin count in nhbins. */
	find_tls(c, L->tls_tcache, &k->tls_tcache);
	find_tls(c, L->tls_quarantine, &k->tls_quarantine);
	k->tls_memsz = cen_tls_memsz(c);
	if (!cen_read(c, sym(c, "nhbins"), &nh, sizeof(nh)) && sym(c, "nhbins") && nh > L->nbins &&
	    nh <= c->g.nsizes)
		k->nhbins = nh;
	if (major == 4) {
		c->tcaches = sym(c, "tcaches");
		c->tcaches_past = sym(c, "tcaches_past");
	} else {
		c->out->explicit_known = 1;	/* tcache.create came with 4.0 */
	}
	c->have_tpoff = k->tls_tcache.how != 0;
	return 0;
}
