/* check_census.c -- the census's pieces: size classes, the lea decoder, and the map walk on
 * forged metadata (a target controls its own memory: the walk must stay bounded and sane). */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "census/census.h"

START_TEST(test_census_sizes)
{
	uint64_t s[CEN_NSIZES_MAX];
	unsigned nbins, n = cen_sizes_compute(4, 12, s, &nbins);

	ck_assert_uint_eq(n, 232);
	ck_assert_uint_eq(nbins, 36);
	ck_assert_uint_eq(s[0], 8);
	ck_assert_uint_eq(s[1], 16);
	ck_assert_uint_eq(s[4], 64);
	ck_assert_uint_eq(s[5], 80);
	ck_assert_uint_eq(s[8], 128);
	ck_assert_uint_eq(s[35], 14336);	/* SC_SMALL_MAXCLASS with 4 KiB pages */
	ck_assert_uint_eq(s[36], 16384);	/* SC_LARGE_MINCLASS */
	ck_assert_uint_eq(s[40], 32768);
	ck_assert_uint_eq(s[n - 1], 7ULL << 60);	/* SC_LARGE_MAXCLASS group, one short */
	for (unsigned i = 1; i < n; i++)
		ck_assert(s[i] > s[i - 1]);
	/* Redis's 8-byte quantum (sc.h from a tree configured with
	 * --with-lg-quantum=3: SC_NSIZES 235, SC_NBINS 39): no tiny class. */
	n = cen_sizes_compute(3, 12, s, &nbins);
	ck_assert_uint_eq(n, 235);
	ck_assert_uint_eq(nbins, 39);
	ck_assert_uint_eq(s[2], 24);
	ck_assert_uint_eq(s[4], 40);
	ck_assert_uint_eq(s[8], 80);
	ck_assert_uint_eq(s[38], 14336);
	ck_assert_uint_eq(s[n - 1], 7ULL << 60);
	/* 64 KiB pages: the small classes go up to 224 KiB. */
	cen_sizes_compute(4, 16, s, &nbins);
	ck_assert_uint_eq(nbins, 52);
}
END_TEST

/* A layout derived for a build: x86_64 unless @machine. */
static void derive(struct cen *c, unsigned major, unsigned minor, unsigned patch, unsigned machine,
		   unsigned q, unsigned page, unsigned vaddr, uint64_t tls)
{
	memset(&c->b, 0, sizeof(c->b));
	c->b.major = major;
	c->b.minor = minor;
	c->b.patch = patch;
	c->b.mach = att_machine_of(machine);
	c->b.lg_quantum = q;
	c->b.lg_page = page;
	c->b.lg_vaddr = vaddr;
	c->b.tls_size = tls;
	ck_assert_int_eq(cen_layout_derive(c), 0);
}

/* The layouts derived from each family's structs give what offsetof gives
 * against each configured tree: the measured tables of DESIGN.md section 9
 * (default configure, x86_64), Debian's arm64 build, and Redis's. */
START_TEST(test_census_layouts)
{
	static const struct {
		unsigned minor, patch, machine, q, page;
		uint64_t tls, tcache, large, rtree, root, name_tls;
		unsigned nbins;
	} want[] = {
		{ 0, 1, EM_X86_64, 4, 12, 0x17d8, 0x1b8, 0x3b0, 0x20, 0x68, 0, 0 },
		{ 1, 0, EM_X86_64, 4, 12, 0x1800, 0x1c0, 0x3d0, 0, 0x68, 0, 0 },
		{ 2, 1, EM_X86_64, 4, 12, 0x1848, 0x1f0, 0x3e8, 0x30, 0x70, 0, 0 },
		{ 3, 0, EM_X86_64, 4, 12, 0xa48, 0x358, 0, 0x1b0, 0x78, 0, 73 },
		{ 3, 1, EM_X86_64, 4, 12, 0x788, 0x398, 0, 0x1f0, 0x78, 0x788, 41 },
		{ 3, 1, EM_X86_64, 4, 12, 0x790, 0x3a0, 0, 0x1f8, 0x78, 0x790, 41 },	/* --enable-prof */
		{ 3, 0, EM_AARCH64, 4, 16, 0xa88, 0x398, 0, 0x1f0, 0x80, 0, 73 },
		/* offsetof against the trees scripts/build-jemalloc.sh
		 * configures: 5.3.0-redis (Redis 7.2's bundled build),
		 * 5.3.0-page14, 5.3.0-page16 (16 and 64 KiB pages on x86_64). */
		{ 3, 0, EM_X86_64, 3, 12, 0xaa0, 0x368, 0, 0x1c0, 0x78, 0, 76 },
		{ 3, 0, EM_X86_64, 4, 14, 0xa68, 0x378, 0, 0x1d0, 0x78, 0, 73 },
		{ 3, 0, EM_X86_64, 4, 16, 0xa88, 0x398, 0, 0x1f0, 0x78, 0, 73 },
	};
	struct cen c;

	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		memset(&c, 0, sizeof(c));
		derive(&c, 5, want[i].minor, want[i].patch, want[i].machine, want[i].q, want[i].page, 48,
		       want[i].name_tls);
		ck_assert_msg(c.L->tls_size == want[i].tls, "row %zu: tls 0x%llx", i,
			      (unsigned long long)c.L->tls_size);
		ck_assert_uint_eq(c.L->tcache_off, want[i].tcache);
		ck_assert_uint_eq(c.L->large_off, want[i].large);
		ck_assert_uint_eq(c.L->rtree_ctx_off, want[i].rtree);
		ck_assert_uint_eq(c.L->root_off, want[i].root);
		ck_assert_uint_eq(c.L->nbins, want[i].nbins);
	}
	/* 4.x: not a family of extents. */
	memset(&c, 0, sizeof(c));
	c.s = jma_new(NULL);
	c.b.major = 4;
	c.b.minor = 5;
	ck_assert_int_eq(cen_layout_derive(&c), -ENOTSUP);
	jma_free(c.s);
}
END_TEST

START_TEST(test_census_rip_leas)
{
	/* Debian 5.3.0's malloc_usable_size: lea 0x2bae0c(%rip),%rax at 0x31b4d,
	 * mov 0x9b414(%rip),%rdi (not a lea), lea 0x2b9ef9(%rip),%rax at 0x31bc0,
	 * the first again, and a lea through %rsi (r/m 110: not rip-relative). */
	static const unsigned char code[] = {
		0x48, 0x8d, 0x05, 0x0c, 0xae, 0x2b, 0x00,
		0x48, 0x8b, 0x3d, 0x14, 0xb4, 0x09, 0x00,
		0x48, 0x8d, 0x05, 0xf9, 0x9e, 0x2b, 0x00,
		0x48, 0x8d, 0x05, 0xf7, 0xad, 0x2b, 0x00,
		0x48, 0x8d, 0x46, 0x08,
	};
	uint64_t out[8];
	const struct att_machine *m = att_machine_of(EM_X86_64);
	size_t n = m->addr_refs(code, sizeof(code), 0x31b4d, out, 8);

	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0], 0x2ec960);
	ck_assert_uint_eq(out[1], 0x31b4d + 14 + 7 + 0x2b9ef9);
	ck_assert_uint_eq(m->addr_refs(code, sizeof(code), 0x31b4d, out, 1), 1);
	ck_assert_ptr_null(m->slot_refs);
}
END_TEST

/* A forged target: a few regions of memory, the rest unmapped. */
#define MAP_AT		0x10000000ULL
#define LEAF_AT		0x20000000ULL
#define EDATA_AT	0x30000000ULL
#define HEAP_AT		0x40000000ULL	/* GiB 1: root[1] */
#define TSD_AT		0x50000000ULL
#define LEAFSZ		(1ULL << 21)

struct fake {
	struct jma_backend be;
	unsigned char *map, *leaf, *edata, *tsd;
	unsigned seed;
};

static unsigned char *region(struct fake *f, uint64_t a, uint64_t *base, uint64_t *len)
{
	if (a >= MAP_AT && a < MAP_AT + 0x78 + LEAFSZ) {
		*base = MAP_AT;
		*len = 0x78 + LEAFSZ;
		return f->map;
	}
	if (a >= LEAF_AT && a < LEAF_AT + LEAFSZ) {
		*base = LEAF_AT;
		*len = LEAFSZ;
		return f->leaf;
	}
	if (a >= TSD_AT && a < TSD_AT + 4096) {
		*base = TSD_AT;
		*len = 4096;
		return f->tsd;
	}
	if (a >= EDATA_AT && a < EDATA_AT + 1024 * 128) {
		*base = EDATA_AT;
		*len = 1024 * 128;
		return f->edata;
	}
	return NULL;
}

static int fake_read(struct jma_backend *b, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = (struct fake *)b;
	uint64_t base, rlen;
	unsigned char *r = region(f, addr, &base, &rlen);

	if (!r || len > rlen - (addr - base))
		return -EFAULT;
	memcpy(buf, r + (addr - base), len);
	return 0;
}

static const struct jma_backend_ops fake_ops = { .name = "fake", .read = fake_read };

static struct att_map fake_maps[] = {
	{ MAP_AT, MAP_AT + 0x78 + LEAFSZ + 4096, 0, "rw-p", 0, 0, "/fake/libjemalloc.so.2" },
	{ LEAF_AT, LEAF_AT + LEAFSZ, 0, "rw-p", 0, 0, NULL },
	{ EDATA_AT, EDATA_AT + 1024 * 128, 0, "rw-p", 0, 0, NULL },
	{ HEAP_AT, HEAP_AT + (64ULL << 20), 0, "rw-p", 0, 0, NULL },
	{ TSD_AT, TSD_AT + 4096, 0, "rw-p", 0, 0, NULL },
};

static void setup_layout(struct fake *f, struct cen *c, jma_session **s, struct jma_census *out,
			 unsigned machine, unsigned page)
{
	memset(f, 0, sizeof(*f));
	f->be.ops = &fake_ops;
	f->map = calloc(1, 0x78 + LEAFSZ);
	f->leaf = calloc(1, LEAFSZ);
	f->edata = calloc(1024, 128);
	f->tsd = calloc(1, 4096);
	ck_assert(f->map && f->leaf && f->edata && f->tsd);
	*s = jma_new(NULL);
	ck_assert_ptr_nonnull(*s);
	(*s)->be = &f->be;
	f->be.s = *s;
	memset(c, 0, sizeof(*c));
	memset(out, 0, sizeof(*out));
	c->s = *s;
	c->out = out;
	derive(c, 5, 3, 0, machine, 4, page, 48, 0);
	c->map = MAP_AT;
	c->maps = fake_maps;
	c->nmaps = sizeof(fake_maps) / sizeof(*fake_maps);
	c->deadline_ns = att_now_ns() + 5000000000LL;
	ck_assert_int_eq(cen_walk_prepare(c), 0);
}

static void setup_fake(struct fake *f, struct cen *c, jma_session **s, struct jma_census *out)
{
	setup_layout(f, c, s, out, EM_X86_64, 12);
}

static void teardown_fake(struct fake *f, struct cen *c, jma_session *s)
{
	free(c->raw);
	free(c->bits);
	free(c->wbuf);
	free(c->leaves);
	cen_index_free(&c->ix);
	cen_cache_free(c);
	s->be = NULL;
	jma_free(s);
	free(f->map);
	free(f->leaf);
	free(f->edata);
	free(f->tsd);
}

static void set_root_at(struct fake *f, uint64_t root_off, unsigned i, uint64_t leaf)
{
	memcpy(f->map + root_off + i * 8, &leaf, 8);
}

static void set_root(struct fake *f, unsigned i, uint64_t leaf)
{
	set_root_at(f, 0x78, i, leaf);
}

/* Leaf word for edata @k (5.3: szind << 48 | edata | slab). */
static void set_word(struct fake *f, unsigned page, unsigned k, unsigned szind, int slab)
{
	uint64_t w = ((uint64_t)szind << 48) | (EDATA_AT + k * 128) | (uint64_t)slab;
	memcpy(f->leaf + page * 8, &w, 8);
}

/* edata @k: active, @szind, slab or not, at @addr of @size. */
static void set_edata(struct fake *f, unsigned k, uint64_t addr, uint64_t size, unsigned szind,
		      int slab, unsigned nfree)
{
	struct cen c = { 0 };
	const struct cen_layout *L = &c.lay;	/* e_bits: 5.3's on arm64 too */
	uint64_t bits;
	unsigned char *e = f->edata + k * 128;

	derive(&c, 5, 3, 0, EM_X86_64, 4, 12, 48, 0);
	bits = ((uint64_t)slab << L->sh_slab) | ((uint64_t)szind << L->sh_szind) |
			((uint64_t)nfree << L->sh_nfree);

	memcpy(e, &bits, 8);
	memcpy(e + 8, &addr, 8);
	memcpy(e + 16, &size, 8);
}

START_TEST(test_census_walk_honest)
{
	struct fake f;
	struct cen c;
	struct jma_census out;
	jma_session *s;
	uint64_t free_bits = ~0ULL << 4;	/* regions 0-3 of slab 0 allocated */

	setup_fake(&f, &c, &s, &out);
	set_root(&f, 1, LEAF_AT);
	/* A 4 KiB slab of 64-byte regions (szind 4) at page 0 of GiB 1, 4 live. */
	set_edata(&f, 0, HEAP_AT, 4096, 4, 1, 60);
	memcpy(f.edata + 0x40, &free_bits, 8);
	memset(f.edata + 0x48, 0xff, 56);
	set_word(&f, 0, 0, 4, 1);
	/* A 20 KiB large extent at page 2 (szind 37, 20480), its last page too. */
	set_edata(&f, 1, HEAP_AT + 2 * 4096 + 64, 24576, 37, 0, 0);
	set_word(&f, 2, 1, 37, 0);
	set_word(&f, 7, 1, 37, 0);
	ck_assert_int_eq(cen_root_valid(&c, MAP_AT), 0);
	c.keep = 1;
	ck_assert_int_eq(cen_walk(&c), 0);
	ck_assert_uint_eq(c.nraw, 2);
	ck_assert_int_eq(cen_expand(&c), 0);
	ck_assert_uint_eq(out.live.blocks, 5);
	ck_assert_uint_eq(out.live.bytes, 4 * 64 + 20480);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 4), HEAP_AT + 2 * 4096 + 64);
	ck_assert_uint_eq(cen_block_size(&c.ix, 4), 20480);
	ck_assert_int_eq(cen_block_of(&c.ix, HEAP_AT + 2 * 4096 + 64 + 20479), 4);
	ck_assert_int_eq(cen_block_of(&c.ix, HEAP_AT + 3 * 64 + 63), 3);
	ck_assert_int_eq(cen_block_of(&c.ix, HEAP_AT + 4 * 64), -1);
	ck_assert_uint_eq(c.bad_nfree, 0);
	teardown_fake(&f, &c, s);
}
END_TEST

/* arm64: adrp + add pairs (and adrp + ldr), checked against objdump's reading of the same
 * words at 0x10000 (adrp x1, 0xd5000; mov x2, x3; add x0, x1, #0x9e0; adrp
 * x3, 0xf000; add x4, x3, #0x1, lsl #12; add x0, sp, #0x10; add x5, x6, #0x1
 * (x6 no adrp's); the first add again). */
START_TEST(test_census_adrp_adds)
{
	static const uint32_t words[] = {
		0xb0000621, 0xaa0303e2, 0x91278020, 0xf0ffffe3,
		0x91400464, 0x910043e0, 0x910004c5, 0x91278020,
	};
	const struct att_machine *m = att_machine_of(EM_AARCH64);
	unsigned char code[sizeof(words)];
	uint64_t out[8];
	size_t n;

	/* Debian's malloc_usable_size at 0x20c94: adrp x2, 0x9f000; ldr x2, [x2, #3840]. */
	static const uint32_t got_words[] = { 0xf00003e2, 0xf9478042 };
	unsigned char got[sizeof(got_words)];

	memcpy(code, words, sizeof(code));	/* little-endian, as arm64 Linux */
	n = m->addr_refs(code, sizeof(code), 0x10000, out, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0], 0xd59e0);
	ck_assert_uint_eq(out[1], 0x10000);
	ck_assert_uint_eq(m->addr_refs(code, sizeof(code), 0x10000, out, 1), 1);
	ck_assert_uint_eq(m->slot_refs(code, sizeof(code), 0x10000, out, 8), 0);
	memcpy(got, got_words, sizeof(got));
	ck_assert_uint_eq(m->slot_refs(got, sizeof(got), 0x20c94, out, 8), 1);
	ck_assert_uint_eq(out[0], 0x9f000 + 3840);
	ck_assert_uint_eq(m->addr_refs(got, sizeof(got), 0x20c94, out, 8), 0);
}
END_TEST

/* The rtree's shape and the small classes follow the build's page size and
 * address bits, as jemalloc's rtree.h and sc.c derive them. */
START_TEST(test_census_geometry)
{
	struct cen c;

	memset(&c, 0, sizeof(c));
	derive(&c, 5, 3, 0, EM_X86_64, 4, 12, 48, 0);
	ck_assert_uint_eq(c.g.page, 4096);
	ck_assert_uint_eq(c.g.height, 2);
	ck_assert_uint_eq(c.g.bits[0], 18);
	ck_assert_uint_eq(c.g.bits[1], 18);
	ck_assert_uint_eq(c.g.shift[0], 30);
	ck_assert_uint_eq(c.g.shift[1], 12);
	ck_assert(c.g.compact);
	ck_assert_uint_eq(c.g.nbins, 36);	/* SC_NBINS */
	ck_assert_uint_eq(c.g.nregs_max, 512);
	/* arm64's Debian build (LG_PAGE 16), from its configured tree: RTREE_NSB
	 * 32, SC_NBINS 52, SC_LG_SLAB_MAXREGS 13. */
	derive(&c, 5, 3, 0, EM_AARCH64, 4, 16, 48, 0);
	ck_assert_uint_eq(c.g.page, 65536);
	ck_assert_uint_eq(c.g.bits[0], 16);
	ck_assert_uint_eq(c.g.bits[1], 16);
	ck_assert_uint_eq(c.g.shift[0], 32);
	ck_assert_uint_eq(c.g.nbins, 52);
	ck_assert_uint_eq(c.g.nregs_max, 8192);
	ck_assert_uint_eq(c.sizes[51], 229376);	/* SC_SMALL_MAXCLASS */
	ck_assert_uint_eq(c.sizes[52], 262144);	/* SC_LARGE_MINCLASS */
	/* 16 KiB pages: RTREE_NSB 34, 17 + 17. */
	derive(&c, 5, 3, 0, EM_X86_64, 4, 14, 48, 0);
	ck_assert_uint_eq(c.g.bits[0], 17);
	ck_assert_uint_eq(c.g.shift[0], 31);
	/* A 57-bit build host: RTREE_NSB 45, three levels of 15 bits, and no
	 * room above the address for szind (RTREE_NHIB 7 < 8): no compact leaf. */
	derive(&c, 5, 3, 0, EM_X86_64, 4, 12, 57, 0);
	ck_assert_uint_eq(c.g.height, 3);
	ck_assert_uint_eq(c.g.bits[0], 15);
	ck_assert_uint_eq(c.g.bits[1], 15);
	ck_assert_uint_eq(c.g.bits[2], 15);
	ck_assert_uint_eq(c.g.shift[0], 42);
	ck_assert_uint_eq(c.g.shift[1], 27);
	ck_assert_uint_eq(c.g.shift[2], 12);
	ck_assert(!c.g.compact);
	ck_assert_uint_eq(cen_leaf_words(&c), 2u << 15);
	ck_assert_str_eq(c.L->name, "5.3 (57-bit)");
}
END_TEST

/* 64 KiB pages: a leaf word per 64 KiB, a leaf per 4 GiB (HEAP_AT is in
 * root[0], its page at leaf index 16384), a slab of 8-byte regions with a
 * 1 KiB bitmap and an nfree wider than 10 bits, a large block padded by a page. */
START_TEST(test_census_walk_64k)
{
	struct fake f;
	struct cen c;
	struct jma_census out;
	jma_session *s;
	uint64_t w0 = ~0ULL << 4, w125 = ~1ULL;	/* regions 0-3 and 8000 allocated */
	const unsigned j0 = (unsigned)(HEAP_AT >> 16);

	setup_layout(&f, &c, &s, &out, EM_AARCH64, 16);
	set_root_at(&f, c.L->root_off, 0, LEAF_AT);
	set_edata(&f, 0, HEAP_AT, 65536, 0, 1, 8187);
	memset(f.edata + 0x40, 0xff, 1024);
	memcpy(f.edata + 0x40, &w0, 8);
	memcpy(f.edata + 0x40 + 125 * 8, &w125, 8);
	set_word(&f, j0, 0, 0, 1);
	/* 256 KiB (szind 52, the first large class) + a 64 KiB pad, at page 2. */
	set_edata(&f, 10, HEAP_AT + 2 * 65536 + 64, 5 * 65536, 52, 0, 0);
	set_word(&f, j0 + 2, 10, 52, 0);
	set_word(&f, j0 + 6, 10, 52, 0);
	ck_assert_int_eq(cen_root_valid(&c, MAP_AT), 0);
	c.keep = 1;
	ck_assert_int_eq(cen_walk(&c), 0);
	ck_assert_uint_eq(c.nraw, 2);
	ck_assert_int_eq(cen_expand(&c), 0);
	ck_assert_uint_eq(out.live.blocks, 6);
	ck_assert_uint_eq(out.live.bytes, 5 * 8 + 262144);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 4), HEAP_AT + 8000 * 8);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 5), HEAP_AT + 2 * 65536 + 64);
	ck_assert_uint_eq(c.bad_nfree, 0);
	ck_assert_uint_eq(c.bad_words, 0);
	teardown_fake(&f, &c, s);
}
END_TEST

/* No symbol, no usable code: a thread's lookup cache names a leaf, and the
 * root entry holding it is found in jemalloc's writable data. */
START_TEST(test_census_map_from_tsd)
{
	struct fake f;
	struct cen c;
	struct jma_census out;
	struct cen_thread th;
	jma_session *s;
	uint64_t ctx[4] = { 1, 0, 1ULL << 30, LEAF_AT };	/* an unused entry, then GiB 1's */

	setup_fake(&f, &c, &s, &out);
	set_root(&f, 1, LEAF_AT);
	set_edata(&f, 0, HEAP_AT, 4096, 4, 1, 64);
	memset(f.edata + 0x40, 0xff, 64);
	set_word(&f, 0, 0, 4, 1);
	memcpy(f.tsd + c.L->rtree_ctx_off, ctx, sizeof(ctx));
	memset(&th, 0, sizeof(th));	/* thread pointer 0: tsd = tpoff */
	c.th = &th;
	c.nth = 1;
	c.tpoff = TSD_AT;
	c.have_tpoff = 1;
	c.map = 0;
	c.je_path = "/fake/libjemalloc.so.2";
	ck_assert_int_eq(cen_map_from_tsd(&c), 0);
	ck_assert_uint_eq(c.map, MAP_AT);
	/* Not jemalloc's data: not looked at. */
	c.je_path = "/other.so";
	c.map = 0;
	ck_assert_int_eq(cen_map_from_tsd(&c), -ENOENT);
	c.th = NULL;
	teardown_fake(&f, &c, s);
}
END_TEST

/* jemalloc's own size table says its quantum: 16 bytes, Redis's 8, or a
 * table sc.c does not make, or no table at all. */
START_TEST(test_census_sizes_check)
{
	struct fake f;
	struct cen c;
	struct jma_census out;
	jma_session *s;
	uint64_t t[CEN_NSIZES_MAX];

	setup_fake(&f, &c, &s, &out);
	memcpy(f.tsd, c.sizes, 48 * 8);
	ck_assert_int_eq(cen_sizes_check(&c, TSD_AT), 0);
	ck_assert_uint_eq(c.b.lg_quantum, 4);
	/* Redis's: another quantum than the layout was derived for... */
	cen_sizes_compute(3, 12, t, NULL);
	memcpy(f.tsd, t, 48 * 8);
	cen_cache_flush(&c);	/* the census reads through a page cache */
	ck_assert_int_eq(cen_sizes_check(&c, TSD_AT), -ENOTSUP);
	ck_assert(strstr(jma_errmsg(s), "8-byte quanta, not the 16-byte") != NULL);
	/* ... read before any layout: the build's. */
	c.L = NULL;
	ck_assert_int_eq(cen_sizes_check(&c, TSD_AT), 0);
	ck_assert_uint_eq(c.b.lg_quantum, 3);
	/* 8-byte steps up to 64, then 16-byte ones for ever: no quantum's. */
	for (unsigned i = 0; i < 48; i++)
		t[i] = i < 8 ? 8 * (i + 1) : 64 + 16 * (i - 7);
	memcpy(f.tsd, t, 48 * 8);
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_sizes_check(&c, TSD_AT), -ENOTSUP);
	ck_assert(strstr(jma_errmsg(s), "none sc.c makes") != NULL);
	memset(f.tsd, 0x5a, 48 * 8);
	cen_cache_flush(&c);
	ck_assert_int_eq(cen_sizes_check(&c, TSD_AT), 1);
	ck_assert_int_eq(cen_sizes_check(&c, 0xdead0000), 1);
	teardown_fake(&f, &c, s);
}
END_TEST

START_TEST(test_census_walk_forged)
{
	struct fake f;
	struct cen c;
	struct jma_census out;
	jma_session *s;
	int64_t t0;

	setup_fake(&f, &c, &s, &out);
	/* Every root entry the same leaf; every leaf word an extent whose
	 * edata claims the whole address space, a slab of 8-byte regions, or
	 * an address outside any mapping; random words besides. */
	for (unsigned i = 0; i < (1u << 18); i++)
		set_root(&f, i, LEAF_AT);
	srand(42);
	for (unsigned k = 0; k < 1024; k++) {
		uint64_t addr = HEAP_AT + (uint64_t)(rand() % 16384) * 4096;
		switch (k % 4) {
		case 0:
			set_edata(&f, k, addr, ~0ULL, 0, 1, 1023);
			break;
		case 1:
			set_edata(&f, k, addr, 1ULL << 40, 100, 0, 0);
			break;
		case 2:
			set_edata(&f, k, 0xdead000000ULL, 4096, 5, 1, 3);
			break;
		default:
			for (unsigned b = 0; b < 128; b++)
				f.edata[k * 128 + b] = (unsigned char)rand();
		}
	}
	for (unsigned j = 0; j < (1u << 18); j++) {
		unsigned k = (unsigned)rand() % 1024;
		set_word(&f, j, k, (unsigned)rand() % 240, rand() & 1);
	}
	/* A root whose leaves repeat is not a map, nor walked. */
	ck_assert_int_ne(cen_root_valid(&c, MAP_AT), 0);
	c.keep = 1;
	ck_assert_int_eq(cen_walk(&c), 0);
	ck_assert_uint_eq(c.nraw, 0);
	ck_assert(c.bad_words > 0);
	/* One leaf of forged words. */
	for (unsigned i = 0; i < (1u << 18); i++)
		set_root(&f, i, 0);
	set_root(&f, 1, LEAF_AT);
	t0 = att_now_ns();
	(void)cen_walk(&c);
	ck_assert(att_now_ns() - t0 < 5000000000LL);
	/* One leaf read; extents only inside the heap mapping, not overlapping. */
	ck_assert(c.nraw <= (64ULL << 20) / 4096);
	for (size_t i = 1; i < c.nraw; i++)
		ck_assert(c.raw[i].base >= c.raw[i - 1].base + c.raw[i - 1].size);
	ck_assert_int_eq(cen_expand(&c), 0);
	ck_assert(out.live.bytes <= (64ULL << 20));
	teardown_fake(&f, &c, s);
}
END_TEST


/* The block index: runs of one size bridge small gaps, numbers follow
 * addresses, lookups inside a block, between blocks, past the last. */
START_TEST(test_census_index)
{
	struct cen c;
	uint64_t a, sz;

	memset(&c, 0, sizeof(c));
	/* 16-byte blocks at positions 0, 1, 5, 69 (63 free between: one run), then
	 * 200 (a gap past 64: a new run), then a 20480-byte block. */
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10000, 16, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10010, 16, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10050, 16, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10000 + 69 * 16, 16, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10000 + 200 * 16, 16, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x20040, 20480, 0), 0);
	ck_assert_uint_eq(c.ix.nblocks, 6);
	ck_assert_uint_eq(c.ix.nruns, 3);
	ck_assert_int_eq(cen_block_of(&c.ix, 0xffff), -1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x10000), 0);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x1001f), 1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x10020), -1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x10000 + 69 * 16 + 8), 3);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x10000 + 200 * 16), 4);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x20040 + 20479), 5);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x20040 + 20480), -1);
	for (size_t b = 0; b < c.ix.nblocks; b++) {
		cen_block_at(&c.ix, b, &a, &sz);
		ck_assert_int_eq(cen_block_of(&c.ix, a), (long)b);
		ck_assert_int_eq(cen_block_of(&c.ix, a + sz - 1), (long)b);
	}
	cen_block_at(&c.ix, 3, &a, &sz);
	ck_assert_uint_eq(a, 0x10000 + 69 * 16);
	ck_assert_uint_eq(sz, 16);
	ck_assert_uint_eq(cen_block_size(&c.ix, 5), 20480);
	cen_index_free(&c.ix);
}
END_TEST

/* A block with slack (4.x's large blocks: listed at their run's first
 * page, somewhere in it): a run of its own, which no later block of its
 * size continues, found by every address of its span and none past it. */
START_TEST(test_census_index_slack)
{
	struct cen c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10000, 48, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x10030, 48, 0), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x11000, 20480, 4096), 0);
	/* 48 bytes and 64 of slack, then a block three positions on. */
	ck_assert_int_eq(cen_index_add(&c.ix, 0x20000, 48, 64), 0);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x20000 + 3 * 48, 48, 0), 0);
	ck_assert_uint_eq(c.ix.nblocks, 5);
	ck_assert_uint_eq(c.ix.nruns, 4);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x1005f), 1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x11000), 2);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x11000 + 4096 + 20479), 2);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x11000 + 4096 + 20480), -1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x20000 + 48 + 63), 3);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x20000 + 48 + 64), -1);
	ck_assert_int_eq(cen_block_of(&c.ix, 0x20000 + 3 * 48), 4);
	ck_assert_uint_eq(cen_block_addr(&c.ix, 2), 0x11000);
	ck_assert_uint_eq(cen_block_size(&c.ix, 2), 20480);
	ck_assert_uint_eq(cen_block_span(&c.ix, 2), 20480 + 4096);
	ck_assert_uint_eq(cen_block_span(&c.ix, 4), 48);
	ck_assert_uint_eq(cen_index_end(&c.ix), 0x20000 + 4 * 48);
	cen_index_free(&c.ix);
	ck_assert_int_eq(cen_index_add(&c.ix, 0x11000, 20480, 4096), 0);
	ck_assert_uint_eq(cen_index_end(&c.ix), 0x11000 + 4096 + 20480);
	cen_index_free(&c.ix);
}
END_TEST

/* The set's next member across its levels' words, set and cleared. */
START_TEST(test_census_bits)
{
	struct cen_bits b;
	const size_t n = 5000000;

	ck_assert_int_eq(cen_bits_init(&b, n), 0);
	ck_assert_uint_eq(cen_bits_next(&b, 0), SIZE_MAX);
	cen_bits_set(&b, 3);
	cen_bits_set(&b, 262144 * 3 + 7);
	cen_bits_set(&b, n - 1);
	ck_assert_uint_eq(cen_bits_next(&b, 0), 3);
	ck_assert_uint_eq(cen_bits_next(&b, 4), 262144 * 3 + 7);
	ck_assert_uint_eq(cen_bits_next(&b, 262144 * 3 + 8), n - 1);
	ck_assert_uint_eq(cen_bits_next(&b, n), SIZE_MAX);
	cen_bits_clear(&b, 262144 * 3 + 7);
	ck_assert_int_eq(cen_bits_test(&b, 262144 * 3 + 7), 0);
	ck_assert_uint_eq(cen_bits_next(&b, 4), n - 1);
	cen_bits_clear(&b, n - 1);
	cen_bits_clear(&b, 3);
	ck_assert_uint_eq(cen_bits_next(&b, 0), SIZE_MAX);
	/* Every 1000th, found in order. */
	for (size_t i = 0; i < n; i += 1000)
		cen_bits_set(&b, i);
	for (size_t i = 0, k = 0; (i = cen_bits_next(&b, i)) != SIZE_MAX; i++, k += 1000)
		ck_assert_uint_eq(i, k);
	cen_bits_free(&b);
}
END_TEST

Suite *suite_census(void)
{
	Suite *s = suite_create("census");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_census_sizes);
	tcase_add_test(tc, test_census_layouts);
	tcase_add_test(tc, test_census_rip_leas);
	tcase_add_test(tc, test_census_adrp_adds);
	tcase_add_test(tc, test_census_walk_honest);
	tcase_add_test(tc, test_census_geometry);
	tcase_add_test(tc, test_census_walk_64k);
	tcase_add_test(tc, test_census_walk_forged);
	tcase_add_test(tc, test_census_map_from_tsd);
	tcase_add_test(tc, test_census_sizes_check);
	tcase_add_test(tc, test_census_index);
	tcase_add_test(tc, test_census_index_slack);
	tcase_add_test(tc, test_census_bits);
	suite_add_tcase(s, tc);
	return s;
}
