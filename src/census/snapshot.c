/* snapshot.c -- a census saved to a file and read back: jma_census_save, jma_census_parse.
 *
 * The file: "JMACENS" and a format version byte, then one gzip stream of
 *
 *   flags pid exec_mark time(8 bytes, IEEE LE) snapflags
 *   version layout map_how map_addr                      strings: length, bytes
 *   live cached explicit_cached (blocks, bytes) explicit_known extents slabs
 *   threads stop_ns meta_ns total_ns mem_bytes
 *   anchored jemalloc_own leaked unreferenced (blocks, bytes) warn
 *   nsizes   { size blocks bytes }
 *   ntypes   { name blocks bytes }                       [0] is "" (untyped)
 *   nuntyped { size blocks bytes }                       untyped blocks by size
 *   nroots   { name blocks bytes shared [addr size type] }   the top of the tree
 *   nholders { addr size type blocks bytes path }
 *   nblocks  { addr - end of the one before, size, type << 2 | class, owner + 3 }
 *   SNAP_END
 *
 * every number an unsigned LEB128 varint.  Blocks come in address order and
 * do not overlap, so a delta is small and compresses well: a few bytes per
 * block raw, and runs of a slab's regions deflate to almost nothing (Redis
 * with 220 000 blocks: 7.5 KiB): so no bound follows from the file's size
 * (deflate's ratio reaches 1032).  Read back, the file is hostile input: the
 * body inflates to SNAP_INFLATED_MAX at most; each count is checked against
 * the bytes left before anything is allocated (a block takes 3 bytes of
 * body at least) and the tables together against SNAP_TABLES_MAX (as much
 * as the blocks of a heap of 400 M blocks take, kept); strings against
 * SNAP_STR_MAX, indexes against their tables, addresses against overflow
 * and overlap; a failure names the offset in the inflated body.  The
 * blocks read back are kept as a census keeps its list (blocks.c: about 9
 * bytes a block), their memory counted against the same bound as it grows.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <jemattach/census_diff.h>

#include "census/census.h"	/* the blocks kept (blocks.c) */
#include "census/snapshot.h"
#include "heap/heap.h"	/* heap_read_file */

#define SNAP_MAGIC	"JMACENS"
#define SNAP_VERSION	1
#define SNAP_HEAD	8		/* the magic and the version byte */
#define SNAP_END	0x444e45	/* "END" */
#define SNAP_STR_MAX	4096
#define SNAP_INFLATED_MAX (4ULL << 30)
#define SNAP_TABLES_MAX	(4ULL << 30)	/* 400 M blocks kept with owners (blocks.c) */
#define SNAP_OWNERS	0x2		/* snapflags: each block's owner follows its type */
/* An owner is written plus this (mod 2^32): _OTHER 0, _SHARED 1, _NONE 2, roots and holders after. */
#define SNAP_OWNER_BIAS	3U
#define SNAP_CHUNK	(1 << 16)

/* --- writing ---------------------------------------------------------------- */

struct enc {
	z_stream z;
	jma_write_fn write;
	void *arg;
	int err;
	size_t n;
	unsigned char in[SNAP_CHUNK], out[SNAP_CHUNK];
};

static void deflate_some(struct enc *e, int flush)
{
	int rc;

	e->z.next_in = e->in;
	e->z.avail_in = (uInt)e->n;
	do {
		e->z.next_out = e->out;
		e->z.avail_out = sizeof(e->out);
		rc = deflate(&e->z, flush);
		if (rc == Z_STREAM_ERROR && !e->err)
			e->err = -EIO;
		if (!e->err && sizeof(e->out) > e->z.avail_out)
			e->err = e->write(e->arg, (const char *)e->out, sizeof(e->out) - e->z.avail_out);
	} while (e->z.avail_out == 0 && !e->err);
	e->n = 0;
}

static void put(struct enc *e, const void *p, size_t len)
{
	while (len && !e->err) {
		size_t k = sizeof(e->in) - e->n < len ? sizeof(e->in) - e->n : len;

		memcpy(e->in + e->n, p, k);
		e->n += k;
		p = (const char *)p + k;
		len -= k;
		if (e->n == sizeof(e->in))
			deflate_some(e, Z_NO_FLUSH);
	}
}

static void put_v(struct enc *e, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	put(e, b, n);
}

/* A string cut at SNAP_STR_MAX (names are far shorter; paths are capped). */
static void put_s(struct enc *e, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > SNAP_STR_MAX)
		n = SNAP_STR_MAX;

	put_v(e, n);
	put(e, s, n);
}

static void put_count(struct enc *e, const struct jma_census_count *k)
{
	put_v(e, k->blocks);
	put_v(e, k->bytes);
}

static void put_header(struct enc *e, const struct jma_census *c, const struct jma_census_meta *m,
		       unsigned sf)
{
	unsigned char t[8];
	uint64_t bits;
	double time = m ? m->time : 0;

	put_v(e, m ? m->flags : 0);
	put_v(e, m && m->pid > 0 ? (uint64_t)m->pid : 0);
	put_v(e, m ? m->exec_mark : 0);
	memcpy(&bits, &time, sizeof(bits));
	for (int i = 0; i < 8; i++)
		t[i] = (unsigned char)(bits >> (8 * i));
	put(e, t, sizeof(t));
	put_v(e, sf);
	put_s(e, c->version);
	put_s(e, c->layout);
	put_s(e, c->map_how);
	put_v(e, c->map_addr);
	put_count(e, &c->live);
	put_count(e, &c->cached);
	put_count(e, &c->explicit_cached);
	put_v(e, c->explicit_known != 0);
	put_v(e, c->extents);
	put_v(e, c->slabs);
	put_v(e, c->threads);
	put_v(e, c->stop_ns);
	put_v(e, c->meta_ns);
	put_v(e, c->total_ns);
	put_v(e, c->mem_bytes);
	put_count(e, &c->anchored);
	put_count(e, &c->jemalloc_own);
	put_count(e, &c->leaked);
	put_count(e, &c->unreferenced);
	put_s(e, c->warn);
}

static void put_tables(struct enc *e, const struct jma_census *c)
{
	put_v(e, c->nsizes);
	for (size_t i = 0; i < c->nsizes; i++) {
		put_v(e, c->sizes[i].size);
		put_v(e, c->sizes[i].blocks);
		put_v(e, c->sizes[i].bytes);
	}
	put_v(e, c->ntypes);
	for (size_t i = 0; i < c->ntypes; i++) {
		put_s(e, i ? c->types[i].name : "");
		put_v(e, c->types[i].blocks);
		put_v(e, c->types[i].bytes);
	}
	put_v(e, c->nuntyped);
	for (size_t i = 0; i < c->nuntyped; i++) {
		put_v(e, c->untyped[i].size);
		put_v(e, c->untyped[i].blocks);
		put_v(e, c->untyped[i].bytes);
	}
	put_v(e, c->nroots);
	for (size_t i = 0; i < c->nroots; i++) {
		const struct jma_census_root *r = &c->roots[i];

		put_s(e, r->name);
		put_v(e, r->blocks);
		put_v(e, r->bytes);
		put_v(e, r->shared != 0);
		if (r->shared) {
			put_v(e, r->addr);
			put_v(e, r->size);
			put_v(e, r->type < c->ntypes ? r->type : 0);
		}
	}
	put_v(e, c->nholders);
	for (size_t i = 0; i < c->nholders; i++) {
		const struct jma_census_holder *h = &c->holders[i];

		put_v(e, h->addr);
		put_v(e, h->size);
		put_v(e, h->type < c->ntypes ? h->type : 0);
		put_v(e, h->blocks);
		put_v(e, h->bytes);
		put_s(e, h->path);
	}
}

/* Every block, in address order (the kept blocks are, without overlap). */
static void put_blocks(struct enc *e, const struct jma_census *c, int all)
{
	struct jma_census_cursor k = { 0 };
	struct jma_census_block b;
	uint64_t end = 0;

	put_v(e, all ? c->nlisted : 0);
	while (all && !e->err && jma_census_next(c, &k, &b)) {
		put_v(e, b.addr - end);
		put_v(e, b.size);
		put_v(e, (uint64_t)(b.type < c->ntypes ? b.type : 0) << 2 | (b.cls & 3));
		if (c->owners)
			put_v(e, (uint32_t)(b.owner + SNAP_OWNER_BIAS));
		end = b.addr + b.size;
	}
}

int jma_census_save(const struct jma_census *c, const struct jma_census_meta *m, unsigned flags,
		    jma_write_fn write, void *arg)
{
	int all = !!(flags & JMA_SNAP_ADDRESSES);
	unsigned char head[SNAP_HEAD] = SNAP_MAGIC;
	struct enc *e;
	int err;

	if (all && !c->blocks)
		return -EINVAL;
	if (!(e = calloc(1, sizeof(*e))))
		return -ENOMEM;
	e->write = write;
	e->arg = arg;
	/* windowBits 15 + 16: a gzip stream (zcat shows the body). */
	if (deflateInit2(&e->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(e);
		return -ENOMEM;
	}
	head[SNAP_HEAD - 1] = SNAP_VERSION;
	e->err = write(arg, (const char *)head, sizeof(head));
	put_header(e, c, m, (all ? JMA_SNAP_ADDRESSES : 0) | (all && c->owners ? SNAP_OWNERS : 0));
	put_tables(e, c);
	put_blocks(e, c, all);
	put_v(e, SNAP_END);
	if (!e->err)
		deflate_some(e, Z_FINISH);
	deflateEnd(&e->z);
	err = e->err;
	free(e);
	return err;
}

/* --- reading ---------------------------------------------------------------- */

struct dec {
	const unsigned char *p, *start, *end;
	uint64_t budget;	/* bytes the tables may still take */
	char *msg;
	size_t msglen;
	int err;
};

static int bad(struct dec *d, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct dec *d, int err, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (d->err)
		return d->err;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(d->msg, d->msglen, "census snapshot: %s at offset %zu of its body", what,
		 (size_t)(d->p - d->start));
	return d->err = err;
}

static uint64_t get_v(struct dec *d, const char *what)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !d->err; shift += 7) {
		unsigned b;

		if (d->p == d->end) {
			bad(d, -EINVAL, "truncated (%s)", what);
			break;
		}
		b = *d->p++;
		if (shift == 63 && b > 1) {
			bad(d, -EINVAL, "a number out of range (%s)", what);
			break;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

/* At most @max; else the snapshot is refused. */
static uint64_t get_max(struct dec *d, uint64_t max, const char *what)
{
	uint64_t v = get_v(d, what);

	if (!d->err && v > max)
		bad(d, -EINVAL, "%s %llu past its bound %llu", what, (unsigned long long)v,
		    (unsigned long long)max);
	return d->err ? 0 : v;
}

/* Room for @n elements of @each bytes from the budget, and the bytes left
 * able to hold @n records of at least @min bytes: then calloc'd. */
static void *get_array(struct dec *d, uint64_t n, size_t each, size_t min, const char *what)
{
	void *v;

	if (d->err)
		return NULL;
	if (n > (uint64_t)(d->end - d->p) / min) {
		bad(d, -EINVAL, "%llu %s in %zu bytes", (unsigned long long)n, what,
		    (size_t)(d->end - d->p));
		return NULL;
	}
	if (n * each + each > d->budget) {
		bad(d, -E2BIG, "%llu %s would take more memory than a snapshot of this size may",
		    (unsigned long long)n, what);
		return NULL;
	}
	d->budget -= n * each + each;
	if (!(v = calloc(n ? n : 1, each)))
		bad(d, -ENOMEM, "out of memory for %s", what);
	return v;
}

/* A string, NUL-free, into @buf (@len bytes) or, when @buf is NULL, malloc'ed. */
static char *get_s(struct dec *d, char *buf, size_t len, const char *what)
{
	uint64_t n = get_max(d, SNAP_STR_MAX, what);
	char *s;

	if (d->err)
		return NULL;
	if (n > (uint64_t)(d->end - d->p)) {
		bad(d, -EINVAL, "truncated (%s)", what);
		return NULL;
	}
	if (memchr(d->p, 0, n)) {
		bad(d, -EINVAL, "a NUL byte in %s", what);
		return NULL;
	}
	if (buf) {
		snprintf(buf, len, "%.*s", (int)n, (const char *)d->p);
		s = buf;
	} else if (n + 1 > d->budget) {
		bad(d, -E2BIG, "%s would take more memory than a snapshot of this size may", what);
		return NULL;
	} else if (!(s = strndup((const char *)d->p, n))) {
		bad(d, -ENOMEM, "out of memory");
		return NULL;
	} else {
		d->budget -= n + 1;
	}
	d->p += n;
	return s;
}

static void get_count(struct dec *d, struct jma_census_count *k, const char *what)
{
	k->blocks = get_v(d, what);
	k->bytes = get_v(d, what);
}

static void get_header(struct dec *d, struct jma_census *c, struct jma_census_meta *m, unsigned *sf)
{
	uint64_t bits = 0;

	m->flags = (unsigned)get_max(d, 0xff, "flags");
	m->pid = (pid_t)get_max(d, 0x7fffffff, "pid");
	m->exec_mark = get_v(d, "exec mark");
	if (!d->err && d->end - d->p < 8)
		bad(d, -EINVAL, "truncated (time)");
	for (int i = 0; !d->err && i < 8; i++)
		bits |= (uint64_t)*d->p++ << (8 * i);
	memcpy(&m->time, &bits, sizeof(m->time));
	if (!d->err && (!isfinite(m->time) || m->time < 0 || m->time > 1e11))
		bad(d, -EINVAL, "an impossible time");
	*sf = (unsigned)get_max(d, JMA_SNAP_ADDRESSES | SNAP_OWNERS, "snapshot flags");
	get_s(d, c->version, sizeof(c->version), "version");
	get_s(d, c->layout, sizeof(c->layout), "layout");
	get_s(d, c->map_how, sizeof(c->map_how), "map_how");
	c->map_addr = get_v(d, "map address");
	get_count(d, &c->live, "live");
	get_count(d, &c->cached, "cached");
	get_count(d, &c->explicit_cached, "explicit cached");
	c->explicit_known = (int)get_max(d, 1, "explicit_known");
	c->extents = get_v(d, "extents");
	c->slabs = get_v(d, "slabs");
	c->threads = (unsigned)get_max(d, UINT32_MAX, "threads");
	c->stop_ns = get_v(d, "stop_ns");
	c->meta_ns = get_v(d, "meta_ns");
	c->total_ns = get_v(d, "total_ns");
	c->mem_bytes = get_v(d, "mem_bytes");
	get_count(d, &c->anchored, "anchored");
	get_count(d, &c->jemalloc_own, "jemalloc's own");
	get_count(d, &c->leaked, "leaked");
	get_count(d, &c->unreferenced, "unreferenced");
	get_s(d, c->warn, sizeof(c->warn), "warning");
}

static void get_tables(struct dec *d, struct jma_census *c)
{
	uint64_t n = get_v(d, "sizes");

	if ((c->sizes = get_array(d, n, sizeof(*c->sizes), 3, "sizes")))
		c->nsizes = n;
	for (size_t i = 0; i < c->nsizes && !d->err; i++) {
		c->sizes[i].size = get_v(d, "size");
		c->sizes[i].blocks = get_v(d, "size blocks");
		c->sizes[i].bytes = get_v(d, "size bytes");
		if (!d->err && (!c->sizes[i].size || (i && c->sizes[i].size <= c->sizes[i - 1].size)))
			bad(d, -EINVAL, "size classes out of order");
	}
	n = get_v(d, "types");
	if ((c->types = get_array(d, n, sizeof(*c->types), 3, "types")))
		c->ntypes = n;
	for (size_t i = 0; i < c->ntypes && !d->err; i++) {
		c->types[i].name = get_s(d, NULL, 0, "a type name");
		c->types[i].blocks = get_v(d, "type blocks");
		c->types[i].bytes = get_v(d, "type bytes");
		if (!d->err && !i && c->types[0].name[0])
			bad(d, -EINVAL, "the first type is not the untyped one");
	}
	n = get_v(d, "untyped sizes");
	if ((c->untyped = get_array(d, n, sizeof(*c->untyped), 3, "untyped sizes")))
		c->nuntyped = n;
	for (size_t i = 0; i < c->nuntyped && !d->err; i++) {
		c->untyped[i].size = get_v(d, "untyped size");
		c->untyped[i].blocks = get_v(d, "untyped blocks");
		c->untyped[i].bytes = get_v(d, "untyped bytes");
	}
	n = get_v(d, "roots");
	if ((c->roots = get_array(d, n, sizeof(*c->roots), 4, "roots")))
		c->nroots = n;
	for (size_t i = 0; i < c->nroots && !d->err; i++) {
		struct jma_census_root *r = &c->roots[i];

		r->name = get_s(d, NULL, 0, "a root name");
		r->blocks = get_v(d, "root blocks");
		r->bytes = get_v(d, "root bytes");
		if (!(r->shared = (int)get_max(d, 1, "a root's kind")))
			continue;
		r->addr = get_v(d, "shared block address");
		r->size = get_v(d, "shared block size");
		r->type = (uint32_t)get_max(d, c->ntypes ? c->ntypes - 1 : 0, "shared block type");
	}
	n = get_v(d, "holders");
	if ((c->holders = get_array(d, n, sizeof(*c->holders), 6, "holders")))
		c->nholders = n;
	for (size_t i = 0; i < c->nholders && !d->err; i++) {
		struct jma_census_holder *h = &c->holders[i];

		h->addr = get_v(d, "holder address");
		h->size = get_v(d, "holder size");
		h->type = (uint32_t)get_max(d, c->ntypes ? c->ntypes - 1 : 0, "holder type");
		h->blocks = get_v(d, "holder blocks");
		h->bytes = get_v(d, "holder bytes");
		h->path = get_s(d, NULL, 0, "a holder path");
	}
}

/* Room for @n blocks checked as get_array checks a table (their type, class
 * and owner: 9 bytes each at most), made; the index counted as it grows. */
static int blocks_room(struct dec *d, struct jma_census *c, uint64_t n, int owners)
{
	uint64_t each = 4 + (owners ? 4 : 0) + 1;

	if (n > (uint64_t)(d->end - d->p) / (owners ? 4 : 3)) {
		bad(d, -EINVAL, "%llu blocks in %zu bytes", (unsigned long long)n, (size_t)(d->end - d->p));
		return 0;
	}
	if (n * each + 64 > d->budget) {
		bad(d, -E2BIG, "%llu blocks would take more memory than a snapshot of this size may",
		    (unsigned long long)n);
		return 0;
	}
	d->budget -= n * each + 64;
	if (cen_blocks_reserve(c, n, owners)) {
		bad(d, -ENOMEM, "out of memory for blocks");
		return 0;
	}
	return 1;
}

static void get_blocks(struct dec *d, struct jma_census *c, unsigned sf)
{
	uint64_t n = get_v(d, "blocks"), end = 0;
	uint64_t nowners = (uint64_t)c->nroots + c->nholders;
	int owners = !!(sf & SNAP_OWNERS), err;

	if (!d->err && n && !(sf & JMA_SNAP_ADDRESSES))
		bad(d, -EINVAL, "blocks in a snapshot without addresses");
	if (!d->err && n > UINT32_MAX - 2)
		bad(d, -EINVAL, "%llu blocks: more than a census indexes", (unsigned long long)n);
	if (!n || d->err || !blocks_room(d, c, n, owners))
		return;
	for (size_t i = 0; i < n && !d->err; i++) {
		struct jma_census_block b = { .owner = JMA_CENSUS_OWNER_NONE };
		uint64_t delta = get_v(d, "address"), tc;

		b.addr = end + delta;
		b.size = get_v(d, "block size");
		tc = get_v(d, "block type");
		if (d->err)
			break;
		if (b.addr < end || !b.size || b.addr + b.size < b.addr) {
			bad(d, -EINVAL, "block %zu overlaps the one before or wraps", i);
			break;
		}
		if ((tc >> 2) >= (c->ntypes ? c->ntypes : 1)) {
			bad(d, -EINVAL, "block %zu names no type", i);
			break;
		}
		b.type = (uint32_t)(tc >> 2);
		b.cls = (uint8_t)(tc & 3);
		end = b.addr + b.size;
		if (owners) {
			uint64_t o = get_max(d, nowners + SNAP_OWNER_BIAS - 1, "owner");

			b.owner = (uint32_t)(o - SNAP_OWNER_BIAS);
		}
		if (d->err)
			break;
		if ((err = cen_blocks_add(c, &b))) {
			if (err == -ENOMEM)
				bad(d, err, "out of memory for blocks");
			else
				bad(d, -EINVAL, "block %zu does not follow the one before", i);
			break;
		}
		if (cen_index_bytes(&c->blocks->ix) > d->budget)
			bad(d, -E2BIG, "the blocks would take more memory than a snapshot of this size may");
	}
}

/* Inflate the gzip stream @in (@len bytes, under 4 GiB) into *@out, at most @max bytes. */
static int inflate_all(const unsigned char *in, size_t len, uint64_t max, unsigned char **out,
		       size_t *olen, char *msg, size_t msglen)
{
	z_stream z = { 0 };
	size_t cap = 0, n = 0;
	unsigned char *buf = NULL;
	int err = 0;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		size_t room;
		int rc;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : len * 4 + 4096;
			unsigned char *nb;

			if (cap >= max) {
				snprintf(msg, msglen, "census snapshot: inflates past %llu bytes (the bound "
					 "for a file of this size)", (unsigned long long)max);
				err = -E2BIG;
				break;
			}
			if (ncap > max)
				ncap = (size_t)max;
			if (!(nb = realloc(buf, ncap))) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		room = cap - n > (1U << 30) ? 1U << 30 : cap - n;
		z.next_out = buf + n;
		z.avail_out = (uInt)room;
		rc = inflate(&z, Z_NO_FLUSH);
		n += room - z.avail_out;
		if (rc == Z_STREAM_END)
			break;
		if (rc == Z_OK || (rc == Z_BUF_ERROR && !z.avail_out))
			continue;
		if (rc == Z_BUF_ERROR) {
			snprintf(msg, msglen, "census snapshot: the compressed body is truncated");
			err = -EINVAL;
		} else {
			snprintf(msg, msglen, "census snapshot: the compressed body is corrupt (%s)",
				 z.msg ? z.msg : "zlib");
			err = rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
		}
		break;
	}
	if (!err && z.avail_in) {
		snprintf(msg, msglen, "census snapshot: %u bytes after the compressed body", z.avail_in);
		err = -EINVAL;
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*olen = n;
	return 0;
}

int jma_census_parse(const void *buf, size_t len, struct jma_census **out, struct jma_census_meta *m,
		     char *msg, size_t msglen)
{
	return census_snap_parse(buf, len, SNAP_INFLATED_MAX, SNAP_TABLES_MAX, out, m, msg, msglen);
}

int census_snap_parse(const void *buf, size_t len, uint64_t max, uint64_t tables,
		      struct jma_census **out, struct jma_census_meta *m, char *msg, size_t msglen)
{
	const unsigned char *b = buf;
	struct jma_census_meta mm;
	struct jma_census *c;
	unsigned char *body = NULL;
	struct dec d = { .msg = msg, .msglen = msglen };
	unsigned sf = 0;
	size_t blen = 0;
	int err;

	*out = NULL;
	if (len < SNAP_HEAD || memcmp(b, SNAP_MAGIC, SNAP_HEAD - 1)) {
		snprintf(msg, msglen, "not a census snapshot");
		return -EINVAL;
	}
	if (b[SNAP_HEAD - 1] != SNAP_VERSION) {
		snprintf(msg, msglen, "a census snapshot of format version %u; this jemattach reads "
			 "version %u", b[SNAP_HEAD - 1], SNAP_VERSION);
		return -ENOTSUP;
	}
	if (len - SNAP_HEAD > UINT32_MAX) {
		snprintf(msg, msglen, "census snapshot: larger than 4 GiB");
		return -E2BIG;
	}
	if ((err = inflate_all(b + SNAP_HEAD, len - SNAP_HEAD, max, &body, &blen, msg, msglen)))
		return err;
	if (!(c = calloc(1, sizeof(*c)))) {
		free(body);
		return -ENOMEM;
	}
	memset(&mm, 0, sizeof(mm));
	d.p = d.start = body;
	d.end = body + blen;
	d.budget = tables;
	get_header(&d, c, &mm, &sf);
	get_tables(&d, c);
	get_blocks(&d, c, sf);
	if (!d.err && get_v(&d, "end") != SNAP_END && !d.err)
		bad(&d, -EINVAL, "no end mark");
	if (!d.err && d.p != d.end)
		bad(&d, -EINVAL, "%zu bytes after the end mark", (size_t)(d.end - d.p));
	free(body);
	if (d.err) {
		jma_census_free(c);
		return d.err;
	}
	if (m)
		*m = mm;
	*out = c;
	return 0;
}

int jma_census_load(const char *path, struct jma_census **out, struct jma_census_meta *m, char *msg,
		    size_t msglen)
{
	char *buf = NULL, why[400];
	size_t len = 0;
	int err = heap_read_file(path, JMA_SNAP_MAX_BYTES, &buf, &len, msg, msglen);

	*out = NULL;
	if (err)
		return err;
	if ((err = jma_census_parse(buf, len, out, m, why, sizeof(why))))
		snprintf(msg, msglen, "%s: %s", path, why);
	free(buf);
	return err;
}
