/* check_census_grow.c -- census snapshots (format, bounds), the difference of two, the pprof
 * and JSON reports, and the ranking of a census series (pure logic, no target). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <jemattach.h>

#include "census/census.h"	/* cen_blocks_reserve, cen_blocks_add */
#include "census/snapshot.h"
#include "profile.pb-c.h"

/* Append block @addr of @size to @c's list. */
static void add(struct jma_census *c, uint64_t addr, uint64_t size, uint32_t type, uint8_t cls,
		uint32_t owner)
{
	struct jma_census_block b = { .addr = addr, .size = size, .type = type, .owner = owner, .cls = cls };

	ck_assert_int_eq(cen_blocks_add(c, &b), 0);
}

/* Block number @n of @c's list. */
static struct jma_census_block nth(const struct jma_census *c, size_t n)
{
	struct jma_census_cursor k = { 0 };
	struct jma_census_block b = { 0 };

	while (jma_census_next(c, &k, &b) && k.n <= n)
		;
	ck_assert_uint_eq(k.n, n + 1);
	return b;
}

/* A census of three types, two roots and a holder:
 *   types: [0] untyped, [1] app::A (48 bytes), [2] app::B (80 bytes)
 *   blocks: @na A's from 0x10000 (48 apart), 3 B's at 0x20000.., one untyped
 *   64-byte block at 0x30000 (the holder: the vector holding the A's)
 *   owners: the A's and the holder: holders[0]; B's: roots[1] "g_b (fix)";
 *   the untyped block when @leak: none.  With @moved, the last B is at
 *   0x20100 and the untyped block 80 bytes long (the lists only). */
static struct jma_census *census(unsigned na, int leak, int moved)
{
	struct jma_census *c = calloc(1, sizeof(*c));
	size_t n = na + 4;

	snprintf(c->version, sizeof(c->version), "5.3.0-0-g54eaed1d8b56");
	snprintf(c->layout, sizeof(c->layout), "5.3");
	snprintf(c->map_how, sizeof(c->map_how), "by symbol");
	ck_assert_int_eq(cen_blocks_reserve(c, n, 1), 0);
	c->ntypes = 3;
	c->types = calloc(3, sizeof(*c->types));
	c->types[0].name = strdup("");
	c->types[1].name = strdup("app::A");
	c->types[2].name = strdup("app::B");
	c->nroots = 2;
	c->roots = calloc(2, sizeof(*c->roots));
	c->roots[0].name = strdup("g_a (fix)");
	c->roots[1].name = strdup("g_b (fix)");
	c->nholders = 1;
	c->holders = calloc(1, sizeof(*c->holders));
	c->holders[0] = (struct jma_census_holder){ 0x30000, 64, 0, na + 1, 48ULL * na + 64,
						    strdup("g_a (fix) -> 0x30000 (64)") };
	for (unsigned i = 0; i < na; i++)
		add(c, 0x10000 + 48ULL * i, 48, 1, 0, 2);	/* nroots + 0 */
	for (unsigned i = 0; i < 3; i++)
		add(c, moved && i == 2 ? 0x20100 : 0x20000 + 80ULL * i, 80, 2, 0, 1);
	add(c, 0x30000, moved ? 80 : 64, 0, leak ? JMA_CENSUS_UNREFERENCED : 0,
	    leak ? JMA_CENSUS_OWNER_NONE : 2);
	ck_assert_uint_eq(c->nlisted, n);
	c->nuntyped = 1;
	c->untyped = calloc(1, sizeof(*c->untyped));
	c->untyped[0] = (struct jma_census_size){ 64, 1, 64 };
	c->jemalloc_own = (struct jma_census_count){ 2, 96 };
	c->types[1] = (struct jma_census_type){ c->types[1].name, na, 48ULL * na };
	c->types[2] = (struct jma_census_type){ c->types[2].name, 3, 240 };
	c->types[0] = (struct jma_census_type){ c->types[0].name, 1, 64 };
	c->roots[0].blocks = na + 1;
	c->roots[0].bytes = 48ULL * na + 64;
	c->roots[1].blocks = 3;
	c->roots[1].bytes = 240;
	c->nsizes = 3;
	c->sizes = calloc(3, sizeof(*c->sizes));
	c->sizes[0] = (struct jma_census_size){ 48, na, 48ULL * na };
	c->sizes[1] = (struct jma_census_size){ 64, 1, 64 };
	c->sizes[2] = (struct jma_census_size){ 80, 3, 240 };
	c->live = (struct jma_census_count){ n, 48ULL * na + 304 };
	c->cached = (struct jma_census_count){ 7, 700 };
	c->stop_ns = 1234567;
	c->extents = 3;
	c->slabs = 2;
	c->threads = 4;
	snprintf(c->warn, sizeof(c->warn), "a warning");
	return c;
}

struct mem {
	char *p;
	size_t len, cap;
};

static int to_mem(void *arg, const char *buf, size_t len)
{
	struct mem *m = arg;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static struct mem save(const struct jma_census *c, unsigned flags, double time)
{
	struct jma_census_meta m = { .pid = 4242, .exec_mark = 77, .time = time,
				     .flags = JMA_CENSUS_TYPES | JMA_CENSUS_ROOTS };
	struct mem out = { 0 };

	ck_assert_int_eq(jma_census_save(c, &m, flags, to_mem, &out), 0);
	return out;
}

START_TEST(test_census_grow_roundtrip)
{
	struct jma_census *c = census(100, 1, 0), *r;
	struct jma_census_cursor kc = { 0 }, kr = { 0 };
	struct jma_census_block bc, br;
	struct jma_census_meta m;
	struct mem s = save(c, JMA_SNAP_ADDRESSES, 1700000000.25);
	char msg[256];

	ck_assert_msg(jma_census_parse(s.p, s.len, &r, &m, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(m.pid, 4242);
	ck_assert_uint_eq(m.exec_mark, 77);
	ck_assert(m.time == 1700000000.25);
	ck_assert_uint_eq(m.flags, JMA_CENSUS_TYPES | JMA_CENSUS_ROOTS);
	ck_assert_str_eq(r->version, c->version);
	ck_assert_str_eq(r->layout, "5.3");
	ck_assert_str_eq(r->warn, "a warning");
	ck_assert_uint_eq(r->live.blocks, c->live.blocks);
	ck_assert_uint_eq(r->live.bytes, c->live.bytes);
	ck_assert_uint_eq(r->cached.bytes, 700);
	ck_assert_uint_eq(r->stop_ns, 1234567);
	ck_assert_uint_eq(r->nsizes, 3);
	ck_assert_uint_eq(r->sizes[2].bytes, 240);
	ck_assert_uint_eq(r->ntypes, 3);
	ck_assert_str_eq(r->types[0].name, "");
	ck_assert_str_eq(r->types[1].name, "app::A");
	ck_assert_uint_eq(r->types[1].blocks, 100);
	ck_assert_uint_eq(r->nroots, 2);
	ck_assert_str_eq(r->roots[1].name, "g_b (fix)");
	ck_assert_uint_eq(r->nholders, 1);
	ck_assert_str_eq(r->holders[0].path, "g_a (fix) -> 0x30000 (64)");
	ck_assert_uint_eq(r->holders[0].bytes, 4864);
	ck_assert_uint_eq(r->nuntyped, 1);
	ck_assert_uint_eq(r->untyped[0].size, 64);
	ck_assert_uint_eq(r->jemalloc_own.bytes, 96);
	ck_assert_uint_eq(r->nlisted, c->nlisted);
	ck_assert(r->owners);
	while (jma_census_next(c, &kc, &bc)) {
		ck_assert(jma_census_next(r, &kr, &br));
		ck_assert_uint_eq(br.addr, bc.addr);
		ck_assert_uint_eq(br.size, bc.size);
		ck_assert_uint_eq(br.type, bc.type);
		ck_assert_uint_eq(br.cls, bc.cls);
		ck_assert_uint_eq(br.owner, bc.owner);
	}
	ck_assert(!jma_census_next(r, &kr, &br));
	ck_assert_uint_eq(nth(r, 100).addr, 0x20000);
	ck_assert_uint_eq(nth(r, c->nlisted - 1).owner, JMA_CENSUS_OWNER_NONE);
	jma_census_free(r);
	free(s.p);
	/* Without addresses: the tables only. */
	/* A block several roots reach, at the top of the tree: itself too. */
	c->roots[1].shared = 1;
	c->roots[1].addr = 0x20000;
	c->roots[1].size = 80;
	c->roots[1].type = 2;
	s = save(c, 0, 0);
	ck_assert_int_eq(jma_census_parse(s.p, s.len, &r, NULL, msg, sizeof(msg)), 0);
	ck_assert_ptr_null(r->blocks);
	ck_assert(!r->owners);
	ck_assert_uint_eq(r->ntypes, 3);
	ck_assert(!r->roots[0].shared);
	ck_assert(r->roots[1].shared);
	ck_assert_uint_eq(r->roots[1].addr, 0x20000);
	ck_assert_uint_eq(r->roots[1].size, 80);
	ck_assert_uint_eq(r->roots[1].type, 2);
	jma_census_free(r);
	free(s.p);
	/* Addresses need a list. */
	cen_blocks_free(c->blocks);
	c->blocks = NULL;
	ck_assert_int_eq(jma_census_save(c, NULL, JMA_SNAP_ADDRESSES, to_mem, &s), -EINVAL);
	jma_census_free(c);
}
END_TEST

/* A snapshot file made of @body (the inflated stream) with the given header. */
static struct mem wrap(const unsigned char *body, size_t len, unsigned version)
{
	struct mem m = { 0 };
	z_stream z = { 0 };

	m.cap = len + len / 100 + 1024;
	m.p = malloc(m.cap);
	memcpy(m.p, "JMACENS", 7);
	m.p[7] = (char)version;
	ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)m.p + 8;
	z.avail_out = (uInt)(m.cap - 8);
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	m.len = 8 + z.total_out;
	deflateEnd(&z);
	return m;
}

/* The inflated body of snapshot @s. */
static unsigned char *body_of(const struct mem *s, size_t *len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	unsigned char *b = malloc(cap);

	ck_assert_int_eq(inflateInit2(&z, 31), Z_OK);
	z.next_in = (Bytef *)s->p + 8;
	z.avail_in = (uInt)(s->len - 8);
	z.next_out = b;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	*len = z.total_out;
	inflateEnd(&z);
	return b;
}

/* Parse @m: must fail, with a message, and leak nothing (ASan). */
static void refused(const struct mem *m, const char *why)
{
	struct jma_census *r = (struct jma_census *)1;
	char msg[256] = "";
	int err = jma_census_parse(m->p, m->len, &r, NULL, msg, sizeof(msg));

	ck_assert_msg(err < 0, "accepted: %s", why);
	ck_assert_ptr_null(r);
	ck_assert_msg(msg[0], "no message: %s", why);
}

START_TEST(test_census_grow_hostile)
{
	struct jma_census *c = census(50, 0, 0), *r;
	struct mem s = save(c, JMA_SNAP_ADDRESSES, 1e9), m;
	size_t blen;
	unsigned char *body = body_of(&s, &blen), *b2;
	unsigned seed = 1;
	char msg[256];
	int ok = 0;

	/* The header. */
	m = s;
	m.len = 5;
	refused(&m, "short");
	m.p = strdup("GIF89a..........");
	m.len = 16;
	refused(&m, "not a snapshot");
	free(m.p);
	m = wrap(body, blen, 2);
	ck_assert_int_eq(jma_census_parse(m.p, m.len, &r, NULL, msg, sizeof(msg)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(msg, "version 2"));
	free(m.p);
	/* The compressed stream cut anywhere, or with bytes after it. */
	for (size_t n = 8; n < s.len; n++) {
		m = s;
		m.len = n;
		refused(&m, "compressed stream cut");
	}
	m.p = malloc(s.len + 3);
	memcpy(m.p, s.p, s.len);
	memcpy(m.p + s.len, "xyz", 3);
	m.len = s.len + 3;
	refused(&m, "bytes after the stream");
	free(m.p);
	/* The body cut at every byte, and with a byte after its end mark. */
	for (size_t n = 0; n < blen; n++) {
		m = wrap(body, n, 1);
		refused(&m, "body cut");
		free(m.p);
	}
	b2 = malloc(blen + 1);
	memcpy(b2, body, blen);
	b2[blen] = 0;
	m = wrap(b2, blen + 1, 1);
	refused(&m, "byte after the end");
	free(m.p);
	/* Every byte of the body changed at random, many times: refused or
	 * read, never a crash, an overlap or an index out of its table. */
	for (int round = 0; round < 3000; round++) {
		memcpy(b2, body, blen);
		for (int k = 0; k < 1 + round % 3; k++)
			b2[rand_r(&seed) % blen] = (unsigned char)rand_r(&seed);
		m = wrap(b2, blen, 1);
		if (jma_census_parse(m.p, m.len, &r, NULL, msg, sizeof(msg)) == 0) {
			struct jma_census_cursor k = { 0 };
			struct jma_census_block b;
			uint64_t end = 0;

			ok++;
			while (jma_census_next(r, &k, &b)) {
				ck_assert(b.addr >= end && b.size);
				end = b.addr + b.size;
				ck_assert(b.type < (r->ntypes ? r->ntypes : 1));
				ck_assert(b.owner >= JMA_CENSUS_OWNER_OTHER ||
					  b.owner < r->nroots + r->nholders);
			}
			ck_assert_uint_eq(k.n, r->nlisted);
			for (size_t i = 0; i < r->nholders; i++)
				ck_assert(r->holders[i].type < (r->ntypes ? r->ntypes : 1));
			jma_census_free(r);
		}
		free(m.p);
	}
	ck_assert_int_gt(ok, 0);	/* some changes are only numbers */
	free(b2);
	/* A length far beyond its bound, in a few bytes: refused before any
	 * allocation. */
	{
		static const unsigned char huge[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
						      0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };
		m = wrap(huge, sizeof(huge), 1);
		refused(&m, "a length past its bound");
		free(m.p);
	}
	/* Past the bounds (lowered here: 4 GiB of body and of tables are the
	 * real ones): a body that inflates too far, tables too large. */
	{
		size_t big = 2 << 20;
		unsigned char *z = calloc(1, big);
		m = wrap(z, big, 1);
		ck_assert_int_eq(census_snap_parse(m.p, m.len, 1 << 20, 1 << 30, &r, NULL, msg,
						   sizeof(msg)), -E2BIG);
		ck_assert_ptr_nonnull(strstr(msg, "inflates past"));
		free(m.p);
		free(z);
		ck_assert_int_eq(census_snap_parse(s.p, s.len, 1 << 20, 1000, &r, NULL, msg,
						   sizeof(msg)), -E2BIG);
		ck_assert_ptr_nonnull(strstr(msg, "more memory"));
		ck_assert_int_eq(census_snap_parse(s.p, s.len, 1 << 20, 1 << 20, &r, NULL, msg,
						   sizeof(msg)), 0);
		jma_census_free(r);
	}
	free(body);
	free(s.p);
	jma_census_free(c);
}
END_TEST

/* A file that is not a regular file is refused unread; a missing one named. */
START_TEST(test_census_grow_load)
{
	struct jma_census *r;
	char msg[256];

	ck_assert_int_eq(jma_census_load("/dev/zero", &r, NULL, msg, sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "not a regular file"));
	ck_assert_int_eq(jma_census_load("/nonexistent/x.snap", &r, NULL, msg, sizeof(msg)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "/nonexistent/x.snap"));
}
END_TEST

static const struct jma_census_change *row(const struct jma_census_change *v, size_t n,
					   const char *name, uint64_t size)
{
	for (size_t i = 0; i < n; i++)
		if ((name ? v[i].name && !strcmp(v[i].name, name) : !v[i].name) && v[i].size == size)
			return &v[i];
	return NULL;
}

START_TEST(test_census_grow_diff)
{
	struct jma_census *base = census(100, 0, 0), *now = census(130, 1, 1);
	struct jma_census_meta bm = { .pid = 1, .exec_mark = 5, .time = 10 };
	struct jma_census_meta nm = { .pid = 1, .exec_mark = 5, .time = 20 };
	struct jma_census_diff *d;
	const struct jma_census_change *x;

	/* One B died and another was born at another address; the untyped
	 * block kept its address but not its size: born and died. */
	ck_assert_int_eq(jma_census_diff(base, &bm, now, &nm, &d), 0);
	ck_assert_str_eq(d->warn, "");
	ck_assert_uint_eq(d->now.blocks - d->base.blocks, 30);
	/* Types: A grew first, by 30 blocks. */
	ck_assert_str_eq(d->types[0].name, "app::A");
	ck_assert_uint_eq(d->types[0].now.blocks - d->types[0].base.blocks, 30);
	ck_assert_uint_eq(d->types[0].now.bytes - d->types[0].base.bytes, 1440);
	x = row(d->types, d->ntypes, "app::B", 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->now.bytes, x->base.bytes);
	/* Roots and holders by name and path. */
	ck_assert_str_eq(d->roots[0].name, "g_a (fix)");
	ck_assert_uint_eq(d->roots[0].now.bytes - d->roots[0].base.bytes, 1440);
	ck_assert_str_eq(d->holders[0].name, "g_a (fix) -> 0x30000 (64)");
	/* Sizes: 48 grew by 30 blocks. */
	ck_assert_uint_eq(d->sizes[0].size, 48);
	/* Blocks: 30 A's born, one B moved, the untyped one changed size. */
	ck_assert(d->blocks);
	ck_assert_uint_eq(d->born.blocks, 32);
	ck_assert_uint_eq(d->died.blocks, 2);
	ck_assert_uint_eq(d->died.bytes, 80 + 64);
	x = row(d->born_types, d->nborn_types, "app::A", 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->now.blocks, 30);
	ck_assert_uint_eq(x->now.bytes, 1440);
	ck_assert_str_eq(d->born_types[0].name, "app::A");	/* the most bytes first */
	x = row(d->born_types, d->nborn_types, NULL, 80);	/* untyped, by size */
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->now.blocks, 1);
	x = row(d->born_owners, d->nborn_owners, "g_a (fix) -> 0x30000 (64)", 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->now.blocks, 30);
	ck_assert_ptr_nonnull(row(d->born_owners, d->nborn_owners, "(no root)", 0));
	x = row(d->died_owners, d->ndied_owners, "g_b (fix)", 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->base.blocks, 1);
	/* The born list, in address order, points at the new blocks. */
	for (uint64_t i = 0; i < 30; i++)
		ck_assert_uint_eq(nth(now, d->born_list[i]).addr, 0x10000 + 48 * (100 + i));
	jma_census_diff_free(d);
	/* Another run of the program: no address compared, said so. */
	nm.exec_mark = 6;
	ck_assert_int_eq(jma_census_diff(base, &bm, now, &nm, &d), 0);
	ck_assert(!d->blocks);
	ck_assert_ptr_nonnull(strstr(d->warn, "another run"));
	ck_assert_str_eq(d->types[0].name, "app::A");
	jma_census_diff_free(d);
	/* A base without addresses: tables only. */
	cen_blocks_free(base->blocks);
	base->blocks = NULL;
	ck_assert_int_eq(jma_census_diff(base, NULL, now, NULL, &d), 0);
	ck_assert(!d->blocks);
	ck_assert_ptr_nonnull(strstr(d->warn, "addresses"));
	jma_census_diff_free(d);
	jma_census_free(base);
	jma_census_free(now);
}
END_TEST

/* @n blocks of app::A, 48 bytes apart from 0x100000, owned by root "g (fix)". */
static struct jma_census *many(unsigned n)
{
	struct jma_census *c = calloc(1, sizeof(*c));

	ck_assert_int_eq(cen_blocks_reserve(c, n, 1), 0);
	c->ntypes = 2;
	c->types = calloc(2, sizeof(*c->types));
	c->types[0].name = strdup("");
	c->types[1].name = strdup("app::A");
	c->nroots = 1;
	c->roots = calloc(1, sizeof(*c->roots));
	c->roots[0].name = strdup("g (fix)");
	for (unsigned i = 0; i < n; i++)
		add(c, 0x100000 + 48ULL * i, 48, 1, 0, 0);
	return c;
}

/* Many blocks born: their tallies stay as small as their rows, the lists grow. */
START_TEST(test_census_grow_diff_many)
{
	struct jma_census *base = many(10), *now = many(300000);
	struct jma_census_diff *d;

	ck_assert_int_eq(jma_census_diff(base, NULL, now, NULL, &d), 0);
	ck_assert(d->blocks);
	ck_assert_uint_eq(d->born.blocks, 299990);
	ck_assert_uint_eq(d->born.bytes, 299990ULL * 48);
	ck_assert_uint_eq(d->died.blocks, 0);
	ck_assert_uint_eq(d->nborn_types, 1);
	ck_assert_str_eq(d->born_types[0].name, "app::A");
	ck_assert_uint_eq(d->born_types[0].now.blocks, 299990);
	ck_assert_uint_eq(d->nborn_owners, 1);
	ck_assert_str_eq(d->born_owners[0].name, "g (fix)");
	ck_assert_uint_eq(d->born_owners[0].now.bytes, 299990ULL * 48);
	ck_assert_uint_eq(d->born_list[0], 10);
	ck_assert_uint_eq(d->born_list[299989], 299999);
	ck_assert_uint_eq(nth(now, d->born_list[299989]).addr, 0x100000 + 48 * 299999);
	jma_census_diff_free(d);
	jma_census_free(base);
	jma_census_free(now);
}
END_TEST

/* gunzip @m and unpack the profile. */
static Perftools__Profiles__Profile *unpack(const struct mem *m)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	unsigned char *b = malloc(cap);
	Perftools__Profiles__Profile *p;

	ck_assert_int_eq(inflateInit2(&z, 31), Z_OK);
	z.next_in = (Bytef *)m->p;
	z.avail_in = (uInt)m->len;
	z.next_out = b;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, b);
	inflateEnd(&z);
	free(b);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* The sample whose leaf is @leaf (and whose caller is @owner, or none). */
static const Perftools__Profiles__Sample *sample_of(const Perftools__Profiles__Profile *p,
						    const char *leaf, const char *owner)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const char *names[2] = { NULL, NULL };

		for (size_t k = 0; k < s->n_location_id && k < 2; k++) {
			const Perftools__Profiles__Location *l = p->location[s->location_id[k] - 1];
			const Perftools__Profiles__Function *f = p->function[l->line[0]->function_id - 1];
			names[k] = p->string_table[f->name];
		}
		if (names[0] && !strcmp(names[0], leaf) &&
		    (owner ? names[1] && !strcmp(names[1], owner) : !names[1]))
			return s;
	}
	return NULL;
}

START_TEST(test_census_grow_pprof)
{
	struct jma_census *base = census(100, 0, 0), *now = census(130, 0, 0);
	struct jma_census_report_opts ro = { .format = JMA_CENSUS_PPROF };
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Sample *s;
	struct mem m = { 0 };

	ck_assert_int_eq(jma_census_report(now, NULL, &ro, to_mem, &m), 0);
	p = unpack(&m);
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(p->string_table[p->sample_type[1]->type], "inuse_space");
	ck_assert_str_eq(p->string_table[p->default_sample_type], "inuse_space");
	s = sample_of(p, "app::A", "g_a (fix) -> 0x30000 (64)");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->value[0], 130);
	ck_assert_int_eq(s->value[1], 130 * 48);
	ck_assert_ptr_nonnull(sample_of(p, "app::B", "g_b (fix)"));
	ck_assert_ptr_nonnull(sample_of(p, "(no vtable) 64 bytes", "g_a (fix) -> 0x30000 (64)"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	/* The difference: only what changed. */
	m.len = 0;
	ck_assert_int_eq(jma_census_report(now, base, &ro, to_mem, &m), 0);
	p = unpack(&m);
	ck_assert_uint_eq(p->n_sample, 1);
	s = sample_of(p, "app::A", "g_a (fix) -> 0x30000 (64)");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->value[0], 30);
	ck_assert_int_eq(s->value[1], 30 * 48);
	perftools__profiles__profile__free_unpacked(p, NULL);
	/* Against a base without a list: by the type table, no owners. */
	cen_blocks_free(base->blocks);
	base->blocks = NULL;
	m.len = 0;
	ck_assert_int_eq(jma_census_report(now, base, &ro, to_mem, &m), 0);
	p = unpack(&m);
	s = sample_of(p, "app::A", NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->value[1], 30 * 48);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(m.p);
	jma_census_free(base);
	jma_census_free(now);
}
END_TEST

START_TEST(test_census_grow_json)
{
	struct jma_census *base = census(100, 0, 0), *now = census(130, 0, 0);
	struct jma_census_report_opts ro = { .format = JMA_CENSUS_JSON, .top = 1 };
	struct jma_census_meta nm = { .pid = 9, .time = 5 };
	struct jma_census_diff *d;
	struct mem m = { 0 };

	free(now->types[2].name);
	now->types[2].name = strdup("evil\"\n\x1b[2J\xff");
	ro.meta = &nm;
	ck_assert_int_eq(jma_census_report(now, NULL, &ro, to_mem, &m), 0);
	to_mem(&m, "", 1);
	ck_assert_ptr_nonnull(strstr(m.p, "\"pid\": 9"));
	ck_assert_ptr_nonnull(strstr(m.p, "\"evil\\\"\\u000a\\u001b[2J\\u00ff\""));
	ck_assert_ptr_nonnull(strstr(m.p, "\"holders\": [{\"addr\": \"0x30000\""));
	m.len = 0;
	ck_assert_int_eq(jma_census_diff(base, NULL, now, NULL, &d), 0);
	ck_assert_int_eq(jma_census_diff_json(d, &ro, to_mem, &m), 0);
	to_mem(&m, "", 1);
	ck_assert_ptr_nonnull(strstr(m.p, "\"change\": {\"blocks\": 30, \"bytes\": 1440}"));
	ck_assert_ptr_nonnull(strstr(m.p, "\"types\": [{\"type\": \"app::A\", \"base_blocks\": 100"));
	ck_assert_ptr_nonnull(strstr(m.p, "\"born\": {\"blocks\": 30, \"bytes\": 1440}"));
	jma_census_diff_free(d);
	free(m.p);
	jma_census_free(base);
	jma_census_free(now);
}
END_TEST

START_TEST(test_census_grow_rows)
{
	struct jma_census *c = census(10, 0, 0);
	struct jma_census_row *r;
	char buf[64];
	size_t n;

	ck_assert_int_eq(jma_census_rows(c, JMA_CENSUS_BY_TYPE, &r, &n), 0);
	ck_assert_uint_eq(n, 3);	/* A, B, untyped 64 */
	ck_assert_str_eq(jma_census_row_label(&r[2], buf, sizeof(buf)), "(no vtable) 64 bytes");
	ck_assert_uint_eq(r[2].k.bytes, 64);
	free(r);
	ck_assert_int_eq(jma_census_rows(c, JMA_CENSUS_BY_OWNER, &r, &n), 0);
	ck_assert_uint_eq(n, 3);	/* two roots, a holder */
	ck_assert_str_eq(r[2].name, "g_a (fix) -> 0x30000 (64)");
	free(r);
	ck_assert_int_eq(jma_census_rows(c, JMA_CENSUS_BY_SIZE, &r, &n), 0);
	ck_assert_str_eq(jma_census_row_label(&r[0], buf, sizeof(buf)), "size class 48");
	free(r);
	jma_census_free(c);
}
END_TEST

/* A census series: A grows 480 bytes a second, B holds still; exact counts. */
START_TEST(test_census_grow_track)
{
	jma_track *t = jma_track_new(&(struct jma_track_opts){ .what = "type" });
	struct jma_track_rank *r;
	size_t n;
	char *log = NULL, *text = NULL;
	size_t loglen = 0, textlen = 0;
	FILE *f = open_memstream(&log, &loglen), *g;
	char path[] = "/tmp/jma-census-track.XXXXXX";
	int fd;

	for (int k = 0; k < 6; k++) {
		struct jma_track_count v[] = { { "app::B", 800, 10 }, { "app::A", 480.0 * k, 10.0 * k } };
		struct jma_track_meta m = { .time = 100 + k, .hold_ns = 1000 };

		ck_assert_int_eq(jma_track_add_counts(t, v, 2, &m), 0);
		ck_assert_int_eq(jma_track_write_last(t, JMA_TRACK_JSONL, f), 0);
	}
	fclose(f);
	ck_assert_int_eq(jma_track_ranking(t, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(r[0].name, "app::A");
	ck_assert(r[0].growing);
	ck_assert(fabs(r[0].bytes_per_s - 480) < 1e-6);
	ck_assert_str_eq(r[0].confidence, "exact");
	ck_assert(!r[1].growing);
	free(r);
	jma_track_free(t);
	/* Read back as report sites does: the same ranking, in the census's words. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	g = fdopen(fd, "w");
	fputs(log, g);
	fclose(g);
	t = jma_track_new(NULL);
	ck_assert_int_eq(jma_track_load(t, path), 0);
	unlink(path);
	f = open_memstream(&text, &textlen);
	ck_assert_int_eq(jma_track_write_ranking(t, 0, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "types by growth: 6 snapshots"));
	ck_assert_ptr_nonnull(strstr(text, "exact            app::A"));
	free(text);
	free(log);
	jma_track_free(t);
}
END_TEST

Suite *suite_census_grow(void)
{
	Suite *s = suite_create("census_grow");
	TCase *tc = tcase_create("logic");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_census_grow_roundtrip);
	tcase_add_test(tc, test_census_grow_hostile);
	tcase_add_test(tc, test_census_grow_load);
	tcase_add_test(tc, test_census_grow_diff);
	tcase_add_test(tc, test_census_grow_diff_many);
	tcase_add_test(tc, test_census_grow_pprof);
	tcase_add_test(tc, test_census_grow_json);
	tcase_add_test(tc, test_census_grow_rows);
	tcase_add_test(tc, test_census_grow_track);
	suite_add_tcase(s, tc);
	return s;
}
