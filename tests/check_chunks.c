/* check_chunks.c -- the census of jemalloc 3.6 and 4.5 on forged metadata: a chunk's page map
 * walked into the blocks it holds, and forged maps, trees and headers that must leave the walk
 * bounded and its blocks inside their chunks; TLS through a dynamic thread vector. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "census/chunks.h"

#define MB		(1ULL << 20)
#define DATA_AT		0x10000000ULL	/* "jemalloc's data": rtree_t, huge tree, arenas */
#define NODES_AT	0x20000000ULL	/* rtree nodes, extent nodes */
#define CHUNK_AT	0x300000000ULL	/* 12 GiB: the rtree's level 1 holds it */

/* A target of a few regions, the rest unmapped. */
struct region {
	uint64_t at, len;
	unsigned char *b;
};

struct fake {
	struct jma_backend be;
	struct region r[4];
	size_t n;
};

static int fake_read(struct jma_backend *be, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = (struct fake *)be;

	for (size_t i = 0; i < f->n; i++)
		if (addr >= f->r[i].at && len <= f->r[i].len && addr - f->r[i].at <= f->r[i].len - len) {
			memcpy(buf, f->r[i].b + (addr - f->r[i].at), len);
			return 0;
		}
	return -EFAULT;
}

static const struct jma_backend_ops fake_ops = { .name = "fake", .read = fake_read };

static unsigned char *add_region(struct fake *f, uint64_t at, uint64_t len)
{
	struct region *r = &f->r[f->n++];

	r->at = at;
	r->len = len;
	r->b = calloc(1, len);
	ck_assert_ptr_nonnull(r->b);
	return r->b;
}

static void put(unsigned char *b, uint64_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static struct att_map maps[] = {
	{ DATA_AT, DATA_AT + MB, 0, "rw-p", 0, 0, NULL },
	{ NODES_AT, NODES_AT + MB, 0, "rw-p", 0, 0, NULL },
	{ CHUNK_AT, CHUNK_AT + 16 * MB, 0, "rw-p", 0, 0, NULL },
};

/* A census of @row over @f with chunks of @chunksize; its bins are
 * 5.x's first classes in one-page runs (3.6: header, bitmap, then regions). */
static void setup(struct fake *f, struct cen *c, jma_session **s, struct jma_census *out,
		  const char *row, uint64_t chunksize, uint64_t map_bias)
{
	struct cen_chunks *k;

	memset(c, 0, sizeof(*c));
	memset(out, 0, sizeof(*out));
	f->be.ops = &fake_ops;
	*s = jma_new(NULL);
	ck_assert_ptr_nonnull(*s);
	(*s)->be = &f->be;
	f->be.s = *s;
	c->s = *s;
	c->out = out;
	c->maps = maps;
	c->nmaps = sizeof(maps) / sizeof(*maps);
	c->keep = 1;
	c->deadline_ns = att_now_ns() + 5000000000LL;
	c->g.nsizes = cen_sizes_compute(4, 12, c->sizes, NULL);
	k = c->ch = calloc(1, sizeof(*k));
	ck_assert_ptr_nonnull(k);
	k->L = chk_layout_named(row);
	ck_assert_ptr_nonnull(k->L);
	c->b.mach = att_machine_of(k->L->em);
	k->pagemap = -1;
	k->chunksize = chunksize;
	k->npages = chunksize >> 12;
	k->map_bias = map_bias;
	k->misc_off = k->L->map_off + k->L->map_size * (k->npages - map_bias);
	k->large_pad = k->L->major == 4 ? 4096 : 0;
	k->nbins = k->L->nbins;
	for (unsigned i = 0; i < k->nbins; i++) {
		struct chk_bin *b = &k->bins[i];
		b->reg_size = b->reg_interval = c->sizes[i];
		b->run_size = 4096 * 4;
		b->bitmap = k->L->major == 3 ? 16 : 0;
		b->reg0 = k->L->major == 3 ? 16 + 64 * 8 : 0;
		b->nregs = (uint32_t)((b->run_size - b->reg0) / b->reg_size);
		if (b->nregs > k->L->maxregs)
			b->nregs = k->L->maxregs;
	}
}

static void teardown(struct fake *f, struct cen *c, jma_session *s)
{
	free(c->out->sizes);
	cen_chunks_free(c);
	free(c->bits);
	cen_index_free(&c->ix);
	free(c->stacks);
	free(c->cached);
	free(c->th);
	cen_cache_free(c);
	s->be = NULL;
	jma_free(s);
	for (size_t i = 0; i < f->n; i++)
		free(f->r[i].b);
}

/* 4.5: rtree_t at DATA_AT of three levels (16, 16, 11 bits: 2 MiB chunks);
 * level 1 (where keys below 2^48 start) at NODES_AT, its leaf after it;
 * @key's leaf entry set to @node. */
static void rtree45(struct fake *f, unsigned char *data, unsigned char *nodes, uint64_t key,
		    uint64_t node)
{
	uint64_t leaf = NODES_AT + (8ULL << 16);

	(void)f;
	/* height, and start_level[i] = min(3 - i, height - 1) (rtree_new's) */
	memcpy(data + 0x10, (uint32_t[]){ 3, 2, 2, 1, 0 }, 20);
	put(data, 0x28 + 8, 16ULL | (16ULL << 32));
	put(data, 0x38, NODES_AT);
	put(data, 0x38 + 8, 16ULL | (32ULL << 32));
	put(data, 0x48 + 8, 11ULL | (43ULL << 32));
	put(nodes, ((key >> 32) & 0xffff) * 8, leaf);
	put(nodes, leaf - NODES_AT + ((key >> 21) & 0x7ff) * 8, node);
}

/* 4.5 with 2 MiB chunks: the rtree names an arena chunk at CHUNK_AT,
 * whose header is its own extent node (the page map is the caller's). */
static void setup45(struct fake *f, struct cen *c, jma_session **s, struct jma_census *out,
		    unsigned char **data, unsigned char **nodes, unsigned char **chunk)
{
	*data = add_region(f, DATA_AT, MB);
	*nodes = add_region(f, NODES_AT, MB);
	*chunk = add_region(f, CHUNK_AT, 4 * MB);
	setup(f, c, s, out, "4.5", 2 * MB, 13);
	c->ch->rtree = DATA_AT;
	rtree45(f, *data, *nodes, CHUNK_AT, CHUNK_AT);
}

static void node45(unsigned char *chunk)
{
	put(chunk, 0, DATA_AT + 0x1000);
	put(chunk, 8, CHUNK_AT);
	put(chunk, 0x10, 2 * MB);
	chunk[0x22] = 1;
}

START_TEST(test_chunks_45_honest)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data, *nodes, *chunk;
	uint64_t huge = CHUNK_AT + 2 * MB, hnode = NODES_AT + MB - 128, bitmap = ~0ULL << 4;

	setup45(&f, &c, &s, &out, &data, &nodes, &chunk);
	rtree45(&f, data, nodes, huge, hnode);
	node45(chunk);
	/* Page 13: a run of bin 4 (64 bytes), 4 regions live. */
	put(chunk, 0x78 + 0 * 8, (4ULL << 5) | 1);
	for (uint64_t i = 1; i < 4; i++)
		put(chunk, 0x78 + i * 8, (i << 13) | (4ULL << 5) | 1);
	put(chunk, c.ch->misc_off + 0x18, 4ULL | (252ULL << 32));
	put(chunk, c.ch->misc_off + 0x18 + 8, bitmap);
	memset(chunk + c.ch->misc_off + 0x18 + 16, 0xff, 7 * 8);
	/* Pages 17-22: a large run of 20480 bytes and the pad. */
	put(chunk, 0x78 + 4 * 8, (24576ULL << 1) | (0xffULL << 5) | 3);
	/* Pages 23-511: free. */
	put(chunk, 0x78 + 10 * 8, (489ULL * 4096) << 1);
	/* A huge allocation of 5 MiB in the next chunks. */
	put(nodes, hnode - NODES_AT, DATA_AT + 0x1000);
	put(nodes, hnode - NODES_AT + 8, huge);
	put(nodes, hnode - NODES_AT + 0x10, 5 * MB);
	ck_assert_int_eq(cen_chunks_prepare(&c), 0);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert_uint_eq(c.bad_words, 0);
	ck_assert_uint_eq(c.ch->nchunks, 1);
	ck_assert_uint_eq(c.ch->nhuge, 1);
	ck_assert_int_eq(cen_chunks_expand(&c), 0);
	ck_assert_int_eq(cen_chunks_result(&c), 0);
	ck_assert_uint_eq(out.live.blocks, 6);
	ck_assert_uint_eq(out.live.bytes, 4 * 64 + 20480 + 5 * MB);
	ck_assert_uint_eq(c.bad_nfree, 0);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 3), CHUNK_AT + 13 * 4096 + 3 * 64);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 4), CHUNK_AT + 17 * 4096);	/* the large block's page */
	ck_assert_uint_eq(c.ch->large_paged, 1);
	/* Where it may be: the page more; the huge block exactly. */
	ck_assert_uint_eq(cen_block_span(&c.ix, 4), 4096 + 20480);
	ck_assert_int_eq(cen_block_of(&c.ix, CHUNK_AT + 17 * 4096 + 4096 + 20479), 4);
	ck_assert_int_eq(cen_block_of(&c.ix, CHUNK_AT + 17 * 4096 + 4096 + 20480), -1);
	ck_assert_int_eq(cen_block_of(&c.ix, huge + 5 * MB - 1), 5);
	ck_assert_int_eq(cen_block_of(&c.ix, huge + 5 * MB), -1);
	ck_assert_uint_eq(out.nsizes, 3);
	ck_assert_uint_eq(out.sizes[1].size, 20480);
	/* Allocated now, as the rtree, the map and the run's bitmap say. */
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 13 * 4096 + 3 * 64), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 13 * 4096 + 4 * 64), 0);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 17 * 4096), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 30 * 4096), 0);
	ck_assert_int_eq(cen_chunks_alive(&c, huge), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 8 * MB), 0);	/* no chunk there */
	/* The huge node is jemalloc's own block. */
	ck_assert_uint_eq(c.nstacks, 1);
	ck_assert_uint_eq(c.stacks[0], hnode);
	teardown(&f, &c, s);
}
END_TEST

START_TEST(test_chunks_45_forged)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data, *nodes, *chunk;
	int64_t t0;

	setup45(&f, &c, &s, &out, &data, &nodes, &chunk);
	/* Every level-1 entry names the same leaf, every leaf entry the chunk;
	 * the chunk's node and page map are noise. */
	for (uint64_t j = 0; j < 65536; j++)
		put(nodes, j * 8, NODES_AT + (8ULL << 16));
	for (uint64_t j = 0; j < 2048; j++)
		put(nodes, (8ULL << 16) + j * 8, CHUNK_AT);
	srand(7);
	for (size_t i = 0; i < 4 * MB; i++)
		chunk[i] = (unsigned char)rand();
	node45(chunk);
	t0 = att_now_ns();
	ck_assert_int_eq(cen_chunks_prepare(&c), 0);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert(att_now_ns() - t0 < 5000000000LL);
	/* The leaf is read once; the chunk taken at most once. */
	ck_assert(c.ch->nnodes <= 2048);
	ck_assert(c.ch->nchunks <= 1);
	ck_assert_int_eq(cen_chunks_expand(&c), 0);
	for (size_t b = 0, end = 0; b < c.ix.nblocks; b++) {
		uint64_t a = cen_block_addr(&c.ix, b), span = cen_block_span(&c.ix, b);
		ck_assert(a >= CHUNK_AT && a + span <= CHUNK_AT + 2 * MB);
		ck_assert(a >= end);
		end = a + span;
	}
	teardown(&f, &c, s);
}
END_TEST

/* Rtree nodes that overlap one read already are not read: a real tree's
 * nodes are allocations of their own. */
START_TEST(test_chunks_45_nodes_apart)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data, *nodes, *chunk;
	uint64_t j0 = (CHUNK_AT >> 32) & 0xffff;

	setup45(&f, &c, &s, &out, &data, &nodes, &chunk);
	node45(chunk);
	put(chunk, 0x78, (499ULL * 4096) << 1);	/* pages 13-511 free */
	/* The next level-1 entry names a "leaf" 8 bytes into the real one. */
	put(nodes, (j0 + 1) * 8, NODES_AT + (8ULL << 16) + 8);
	ck_assert_int_eq(cen_chunks_prepare(&c), 0);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert_uint_eq(c.ch->nchunks, 1);
	ck_assert_uint_eq(c.ch->nnodes, 1);	/* one extent node taken */
	ck_assert_uint_eq(c.ch->nnodes_seen, 2);	/* level 1 and the leaf */
	ck_assert_uint_eq(c.bad_words, 1);
	teardown(&f, &c, s);
}
END_TEST

/* A chunk (and its header, its extent node) in memory the target cannot
 * read is not walked, whatever the rtree says. */
START_TEST(test_chunks_45_unreadable)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data, *nodes, *chunk;
	struct att_map m[3];

	setup45(&f, &c, &s, &out, &data, &nodes, &chunk);
	node45(chunk);
	put(chunk, 0x78, (499ULL * 4096) << 1);
	memcpy(m, maps, sizeof(m));
	memcpy(m[2].perms, "---p", 4);
	c.maps = m;
	ck_assert_int_eq(cen_chunks_prepare(&c), 0);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert_uint_eq(c.ch->nchunks, 0);
	ck_assert_uint_eq(c.bad_words, 1);
	teardown(&f, &c, s);
}
END_TEST

#ifdef __x86_64__
/* 4.5's thread cache and quarantine through tcache.c's claims: a bin past
 * its capacity (200 small, 20 large) and two bins whose stacks overlap are
 * not read; the quarantine's ring, which wraps, is read in two pieces, its
 * blocks counted as cached and as quarantined. */
START_TEST(test_chunks_45_caches_bounded)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data, *nodes, *chunk;
	uint64_t tp = DATA_AT + 0x10000, tc = NODES_AT + 0x90000, q = NODES_AT + 0xa0000;
	uint64_t stk = tc + 0x1000, ring[8] = { 0 }, bytes = 0;
	const uint64_t bins[5][3] = {	/* bin, items, where they end */
		{ 0, 500, stk + 500 * 8 },		/* past 200 */
		{ 1, 5, stk + 0x2000 + 40 },		/* overlaps the next */
		{ 2, 3, stk + 0x2000 + 40 },
		{ 37, 2, stk + 0x3000 + 16 },		/* large: believed */
		{ 38, 21, stk + 0x4000 + 21 * 8 },	/* large: past 20 */
	};

	setup45(&f, &c, &s, &out, &data, &nodes, &chunk);
	c.ch->nhbins = 40;
	for (size_t i = 0; i < 5; i++) {
		uint64_t at = tc + 0x28 + bins[i][0] * 0x20;
		memcpy(nodes + (at - NODES_AT) + 0x10, &(uint32_t){ (uint32_t)bins[i][1] }, 4);
		put(nodes, at - NODES_AT + 0x18, bins[i][2]);
		for (uint64_t j = 0; j < bins[i][1]; j++)
			put(nodes, bins[i][2] - (j + 1) * 8 - NODES_AT, CHUNK_AT + MB + (i * 64 + j) * 64);
	}
	/* {curbytes, curobjs 4, first 6, lg_maxobjs 3}: entries 6, 7, 0, 1. */
	put(nodes, q - NODES_AT + 8, 4);
	put(nodes, q - NODES_AT + 16, 6);
	put(nodes, q - NODES_AT + 24, 3);
	for (uint64_t j = 0; j < 4; j++) {
		uint64_t e = (6 + j) % 8;
		ring[e] = CHUNK_AT + 3 * MB + j * 4096;
		put(nodes, q - NODES_AT + 32 + e * 16, ring[e]);
		put(nodes, q - NODES_AT + 32 + e * 16 + 8, 100 + j);
		bytes += 100 + j;
	}
	/* The thread's tsd at tp - 0x100: its tcache and quarantine. */
	put(data, tp - 0x100 - DATA_AT + 0x8, tc);
	put(data, tp - 0x100 - DATA_AT + 0x50, q);
	c.ch->tls_tcache = (struct cen_tls){ .how = CEN_TLS_TP, .tpoff = -0x100 };
	c.ch->tls_quarantine = c.ch->tls_tcache;
	c.have_tpoff = 1;
	c.nth = 1;
	c.th = calloc(1, sizeof(*c.th));
	ck_assert_ptr_nonnull(c.th);
	c.th[0].regs.r.fs_base = tp;
	ck_assert_int_eq(cen_tcache_read(&c), 0);
	cen_tcache_sort(&c);
	ck_assert_uint_eq(c.ncached, 2 + 4);
	ck_assert_uint_eq(c.bad_bins, 4);
	ck_assert_uint_eq(c.quarantined, 4);
	ck_assert_uint_eq(c.quarantined_bytes, bytes);
	ck_assert_int_eq(cen_is_cached(&c, ring[7]), 1);
	ck_assert_int_eq(cen_is_cached(&c, ring[1]), 1);
	ck_assert_int_eq(cen_is_cached(&c, CHUNK_AT + MB + (3 * 64 + 1) * 64), 1);
	ck_assert_int_eq(cen_is_cached(&c, CHUNK_AT + MB + (1 * 64) * 64), 0);
	ck_assert_uint_eq(c.nstacks, 2);	/* the tcache and the quarantine: jemalloc's */
	teardown(&f, &c, s);
}
END_TEST
#endif

/* 3.6 (prof): arena at DATA_AT + 0x1000 (its bins from 0x130, 0xa0 each),
 * its huge tree at DATA_AT, a 4 MiB chunk at CHUNK_AT naming it, noise in
 * the chunk-aligned address after it. */
START_TEST(test_chunks_36)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data = add_region(&f, DATA_AT, MB), *nodes = add_region(&f, NODES_AT, MB);
	unsigned char *chunk = add_region(&f, CHUNK_AT, 16 * MB);
	uint64_t arena = DATA_AT + 0x1000, nil = DATA_AT + 8, run = CHUNK_AT + 8 * 4096;
	const struct chk_layout *L;

	setup(&f, &c, &s, &out, "3.6+prof", 4 * MB, 8);
	L = c.ch->L;
	c.ch->huge = DATA_AT;
	c.ch->arenas = malloc(sizeof(uint64_t));
	c.ch->arenas[0] = arena;
	c.ch->narenas = 1;
	/* The huge tree: one node (4 MiB at CHUNK_AT + 8 MiB) under the nil. */
	put(data, 0, NODES_AT);
	put(data, 8 + L->node_left, nil);
	put(data, 8 + L->node_right, nil);
	put(nodes, L->node_left, nil);
	put(nodes, L->node_right, nil | 1);
	put(nodes, L->node_addr, CHUNK_AT + 8 * MB);
	put(nodes, L->node_size, 4 * MB);
	put(chunk, 8 * MB, arena);	/* the program's data in it: not a header */
	/* The arena chunk: a small run of bin 4 at page 8 (3 live), a large
	 * run of 5 pages, the rest free. */
	put(chunk, 0, arena);
	put(chunk, L->map_off + 0 * L->map_size + L->map_bits, (4ULL << 4) | 1);
	for (uint64_t i = 1; i < 4; i++)
		put(chunk, L->map_off + i * L->map_size + L->map_bits, (i << 12) | (4ULL << 4) | 1);
	put(chunk, 8 * 4096, arena + L->bins_off + 4 * L->bin_size);
	put(chunk, 8 * 4096 + 8, (uint64_t)(c.ch->bins[4].nregs - 3) << 32);
	memset(chunk + 8 * 4096 + 16, 0xff, 8 * 8);
	put(chunk, 8 * 4096 + 16, ~7ULL);
	put(chunk, L->map_off + 4 * L->map_size + L->map_bits, (5ULL * 4096) | (0xffULL << 4) | 3);
	put(chunk, L->map_off + 9 * L->map_size + L->map_bits, (1024ULL - 8 - 9) * 4096);
	/* At CHUNK_AT + 4 MiB, a "header" naming the arena over a map that does
	 * not tile its chunk. */
	put(chunk, 4 * MB, arena);
	put(chunk, 4 * MB + L->map_off + L->map_bits, (2000ULL * 4096) | 3);
	ck_assert_int_eq(cen_chunks_prepare(&c), 0);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert_uint_eq(c.ch->nchunks, 1);
	ck_assert_uint_eq(c.ch->nhuge, 1);
	ck_assert_uint_eq(c.bad_words, 1);
	ck_assert_int_eq(cen_chunks_expand(&c), 0);
	ck_assert_uint_eq(out.live.blocks, 5);
	ck_assert_uint_eq(out.live.bytes, 3 * 64 + 5 * 4096 + 4 * MB);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 0), run + c.ch->bins[4].reg0);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 3), CHUNK_AT + 12 * 4096);
	ck_assert_uint_eq(cen_block_span(&c.ix, 3), 5 * 4096);	/* 3.6: no slack */
	ck_assert_uint_eq(cen_block_addr(&c.ix, 4), CHUNK_AT + 8 * MB);
	ck_assert_uint_eq(c.bad_nfree, 0);
	/* Allocated now: as the map, the run's bitmap and the huge tree say. */
	ck_assert_int_eq(cen_chunks_alive(&c, run + c.ch->bins[4].reg0 + 2 * 64), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, run + c.ch->bins[4].reg0 + 3 * 64), 0);
	ck_assert_int_eq(cen_chunks_alive(&c, run + c.ch->bins[4].reg0 + 2 * 64 + 8), 0);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 12 * 4096), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 13 * 4096), 0);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 8 * MB), 1);
	ck_assert_int_eq(cen_chunks_alive(&c, CHUNK_AT + 12 * MB), 0);
	put(chunk, 8 * 4096 + 16, ~3ULL);	/* region 2 freed */
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_chunks_alive(&c, run + c.ch->bins[4].reg0 + 2 * 64), 0);
	/* A run naming another bin than its map's is not one. */
	put(chunk, 8 * 4096, arena + L->bins_off + 5 * L->bin_size);
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_chunks_walk(&c), 0);
	ck_assert_uint_eq(c.ch->nchunks, 0);
	ck_assert_uint_eq(c.bad_words, 2);
	teardown(&f, &c, s);
}
END_TEST

/* 3.6's scan of chunk-aligned addresses over a sparse mapping of 64 TiB
 * (16M of them) stops at the deadline; a huge tree out of address order
 * is not one. */
START_TEST(test_chunks_36_bounded)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data = add_region(&f, DATA_AT, MB), *nodes = add_region(&f, NODES_AT, MB);
	struct att_map m[3];
	const struct chk_layout *L;
	uint64_t nil = DATA_AT + 8, a = NODES_AT, b = NODES_AT + 0x100;

	setup(&f, &c, &s, &out, "3.6+prof", 4 * MB, 8);
	L = c.ch->L;
	c.ch->huge = DATA_AT;
	put(data, 0, nil);
	put(data, 8 + L->node_left, nil);
	put(data, 8 + L->node_right, nil);
	memcpy(m, maps, sizeof(m));
	m[2] = (struct att_map){ 0x200000000000ULL, 0x600000000000ULL, 0, "rw-p", 0, 0, NULL };
	c.maps = m;
	c.deadline_ns = att_now_ns() - 1;
	ck_assert_int_eq(cen_chunks_walk(&c), -ETIMEDOUT);
	/* Root a (16 MiB) with a left child b at a higher address. */
	c.deadline_ns = att_now_ns() + 5000000000LL;
	put(data, 0, a);
	put(nodes, a - NODES_AT + L->node_left, b);
	put(nodes, a - NODES_AT + L->node_right, nil);
	put(nodes, a - NODES_AT + L->node_addr, 0x200000000000ULL + 16 * MB);
	put(nodes, a - NODES_AT + L->node_size, 4 * MB);
	put(nodes, b - NODES_AT + L->node_left, nil);
	put(nodes, b - NODES_AT + L->node_right, nil);
	put(nodes, b - NODES_AT + L->node_addr, 0x200000000000ULL + 32 * MB);
	put(nodes, b - NODES_AT + L->node_size, 4 * MB);
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_chunks_walk(&c), -EPROTO);
	teardown(&f, &c, s);
}
END_TEST

#ifdef __x86_64__
/* Global-dynamic TLS: the thread's dtv (at fs_base + 8), dtv[-1] the count,
 * the module's id in a GOT slot; an untouched block is -1. */
START_TEST(test_chunks_tls_dtv)
{
	struct fake f = { 0 };
	struct cen c;
	struct jma_census out;
	jma_session *s;
	unsigned char *data = add_region(&f, DATA_AT, MB);
	struct cen_tls t = { .how = CEN_TLS_DTV, .modid_slot = DATA_AT + 0x800, .off = 0x38 };
	struct arch_gpregs r;
	uint64_t tp = DATA_AT + 0x1000, dtv = DATA_AT + 0x2000, block = DATA_AT + 0x8000, a = 0;

	setup(&f, &c, &s, &out, "3.6", 4 * MB, 8);
	memset(&r, 0, sizeof(r));
	r.r.fs_base = tp;
	put(data, 0x800, 3);
	put(data, 0x1008, dtv);
	put(data, 0x2000 - 16, 4);
	put(data, 0x2000 + 3 * 16, block);
	ck_assert_int_eq(cen_tls_addr(&c, &t, &r, &a), 0);
	ck_assert_uint_eq(a, block + 0x38);
	put(data, 0x2000 + 3 * 16, UINT64_MAX);
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_tls_addr(&c, &t, &r, &a), 1);
	put(data, 0x800, 9);	/* past the vector */
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_tls_addr(&c, &t, &r, &a), 1);
	t.how = CEN_TLS_TP;
	t.tpoff = -0x100;
	ck_assert_int_eq(cen_tls_addr(&c, &t, &r, &a), 0);
	ck_assert_uint_eq(a, tp - 0x100);
	teardown(&f, &c, s);
}
END_TEST
#endif

Suite *suite_chunks(void)
{
	Suite *s = suite_create("chunks");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_chunks_45_honest);
	tcase_add_test(tc, test_chunks_45_forged);
	tcase_add_test(tc, test_chunks_45_nodes_apart);
	tcase_add_test(tc, test_chunks_45_unreadable);
#ifdef __x86_64__
	tcase_add_test(tc, test_chunks_45_caches_bounded);
#endif
	tcase_add_test(tc, test_chunks_36);
	tcase_add_test(tc, test_chunks_36_bounded);
#ifdef __x86_64__
	tcase_add_test(tc, test_chunks_tls_dtv);
#endif
	suite_add_tcase(s, tc);
	return s;
}
