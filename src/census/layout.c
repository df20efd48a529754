/* layout.c -- what this jemalloc build is, read from the library, and the layout that follows.
 *
 * Every offset the census uses moves with the release and with configure's
 * choices: the quantum (Redis's --with-lg-quantum=3 makes 39 small classes,
 * not 36, and the thread data holds arrays of that many), the page
 * (--with-lg-page), the virtual address bits of the build host (LG_VADDR:
 * the radix tree's shape), the ELF machine (its descriptor, attach/machine.h:
 * pthread_mutex_t's size, the usual page).  So
 * the build's parameters are read from the library itself -- the version
 * string from its read-only data, the quantum and page from the size-class
 * tables jemalloc fills at boot (sizes.c), LG_VADDR from the shape of the
 * map it validates (findmap.c) -- and the layout is derived from them by
 * the rules of its family of releases (one function each below, written
 * from the structs of each release's headers: tsd.h, tcache_structs.h,
 * rtree.h, edata.h).  A release no family covers is refused, naming it.
 * 3.6 and 4.5 (chunks and runs) are chunklayout.c's, chosen here by the
 * version.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define RTREE_CTX	384	/* rtree_ctx_t: 16 + 8 {leafkey, leaf} pairs */
#define BIN_SIZE	24	/* cache_bin_t (5.3: stack_head, nrequests, low_water, full, empty) */
#define TCACHE_LG_MAX	23	/* 5.3's TCACHE_LG_MAXCLASS_LIMIT: bins up to 8 MiB */

static uint64_t up8(uint64_t x)
{
	return (x + 7) & ~7ULL;
}

/* sizeof(malloc_mutex_t): mutex_prof_data_t (64 bytes from 5.2 on, 56
 * before) and the pthread mutex (the machine's glibc's), 5.3's `locked`
 * flag padded to a word. */
static uint64_t mutex_size(const struct cen_build *b)
{
	uint64_t pthread = b->mach->pthread_mutex_size;

	if (b->minor >= 3 || b->major > 5)
		return 64 + pthread + 8;
	return (b->minor >= 2 ? 64 : 56) + pthread;
}

/* The 5.0-5.2 tcache_t, embedded in tsd: prof_accumbytes, gc_ticker, then
 * bins_small[SC_NBINS], a few fields, lg_fill_div[SC_NBINS] and
 * bins_large[]: @fixed is what lies between them (5.1 adds the bin array
 * descriptor, 5.2 the tsd link and in_hook). */
static void derive_50(const struct cen_build *b, const struct cen_geom *g, struct cen_layout *L)
{
	uint64_t fixed = b->minor == 0 ? 44 : b->minor == 1 ? 76 : 100;

	L->sh_slab = 12;
	L->sh_state = b->minor == 0 ? 15 : 16;
	L->w_state = 2;
	L->sh_szind = b->minor == 0 ? 17 : 18;
	L->sh_nfree = b->minor == 0 ? 25 : 26;
	L->edata_low = 1;
	L->large_off = up8(fixed + (uint64_t)(BIN_SIZE + 1) * g->nbins);
	if (b->minor)
		L->desc_off = 0x10 + (uint64_t)BIN_SIZE * g->nbins + (b->minor == 1 ? 16 : 40);
	/* tsd: the rtree_ctx after a few words (5.2 adds offset_state and
	 * bytes_until_sample), then iarena, arena, arenas_tdata, 5.2's
	 * binshards[SC_NBINS], the tcache. */
	L->rtree_ctx_off = b->minor == 2 ? 0x30 : 0x20;
	L->tcache_off = L->rtree_ctx_off + RTREE_CTX + 24;
	if (b->minor == 2) {
		L->tcache_off = up8(L->tcache_off + g->nbins);
	} else if (b->minor == 1) {
		/* 5.1's tsd holds one word more before its tcache (measured:
		 * 0x1c0); where its rtree_ctx is was not. */
		L->tcache_off += 8;
		L->rtree_ctx_off = 0;
	}
	/* ... and the witness data (16 bytes) after it. */
	L->tls_size = L->tcache_off + L->large_off + (uint64_t)BIN_SIZE * (g->nsizes - g->nbins) + 16;
}

/* 5.3 (and dev): tsd's slow fields up to binshards[SC_NBINS] (@head bytes:
 * 5.3's events are fixed, dev's te_data holds @events words), then the
 * tsd link, in_hook, peak and activity thunk (5.3; dev has peak alone),
 * tcache_slow_t (three arrays of SC_NBINS bytes -- dev's first of 2-byte
 * entries -- among pointers and counters), rtree_ctx; the fast fields
 * (state, four counters), the tcache: {tcache_slow, bins[TCACHE_NBINS_MAX]},
 * the witness data. */
static void derive_53(const struct cen_geom *g, struct cen_layout *L, int dev, unsigned events)
{
	unsigned lg_large_min = g->lg_page + 2;
	uint64_t head = dev ? 113 + 8ULL * events : 161;
	uint64_t slow = dev ? up8(60 + 4ULL * g->nbins) + 16 : up8(52 + 3ULL * g->nbins) + 16;

	L->sh_slab = 12;
	L->sh_state = 17;
	L->w_state = 3;
	L->sh_szind = 20;
	L->sh_nfree = 28;
	L->edata_low = 0x7f;	/* EDATA_ALIGNMENT 128 */
	L->leaf_state = 1;
	L->bins53 = 1;
	L->large_by_size = dev;
	/* TCACHE_NBINS_MAX: dev caches up to LG_PAGE + 3 only. */
	L->nbins = g->nbins + 4 * ((dev ? g->lg_page + 3 : TCACHE_LG_MAX) - lg_large_min) + 1;
	L->slow_off = up8(head + g->nbins) + (dev ? 16 : 24 + 32);
	L->rtree_ctx_off = L->slow_off + slow;
	L->tcache_off = L->rtree_ctx_off + RTREE_CTX + 8 + 32;
	L->tls_size = L->tcache_off + 8 + (uint64_t)BIN_SIZE * L->nbins + 16;
}

/* dev's te_data_t holds 11 event words, one more with --enable-prof, two
 * more with stats (on by default): where jemalloc is a library of its own,
 * its TLS size tells them apart; inside an executable, the default. */
static void derive_dev(const struct cen_build *b, const struct cen_geom *g, struct cen_layout *L)
{
	static const unsigned events[] = { 13, 14, 11, 12 };

	for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++) {
		derive_53(g, L, 1, events[i]);
		if (L->tls_size == b->tls_size)
			return;
	}
	derive_53(g, L, 1, events[0]);
}

static void derive_53rel(const struct cen_build *b, const struct cen_geom *g, struct cen_layout *L)
{
	(void)b;
	derive_53(g, L, 0, 0);
}

/* The families of releases whose heap the census reads: 5.0.x and 5.1.x,
 * 5.2.x, 5.3.0 (with any distance past it: tikv-jemalloc-sys builds
 * 5.3.0-1), and dev (what came after 5.3.0).  3.x and 4.x keep chunks and
 * runs: another walker, dispatched before these by the major version. */
struct cen_family {
	const char *name;
	unsigned major, minor, min_patch, max_patch;
	void (*derive)(const struct cen_build *b, const struct cen_geom *g, struct cen_layout *L);
};

static const struct cen_family families[] = {
	{ .name = "5.0", .major = 5, .minor = 0, .max_patch = 99, .derive = derive_50 },
	{ .name = "5.1", .major = 5, .minor = 1, .max_patch = 99, .derive = derive_50 },
	{ .name = "5.2", .major = 5, .minor = 2, .max_patch = 99, .derive = derive_50 },
	{ .name = "5.3", .major = 5, .minor = 3, .max_patch = 0, .derive = derive_53rel },
	{ .name = "dev", .major = 5, .minor = 3, .min_patch = 1, .max_patch = 99, .derive = derive_dev },
};

void cen_geometry(struct cen *c)
{
	const struct cen_build *b = &c->b;
	struct cen_geom *g = &c->g;
	unsigned nsb = b->lg_vaddr - b->lg_page;

	g->lg_page = b->lg_page;
	g->lg_vaddr = b->lg_vaddr;
	g->page = 1ULL << b->lg_page;
	/* rtree.h's rtree_levels: the remainder bits go to the lower levels. */
	g->height = nsb <= 36 ? 2 : 3;
	if (g->height == 2) {
		g->bits[0] = nsb / 2;
		g->bits[1] = nsb / 2 + nsb % 2;
	} else {
		g->bits[0] = nsb / 3;
		g->bits[1] = nsb / 3 + nsb % 3 / 2;
		g->bits[2] = nsb / 3 + nsb % 3 - nsb % 3 / 2;
	}
	for (unsigned l = 0, cum = 0; l < g->height; l++) {
		cum += g->bits[l];
		g->shift[l] = b->lg_vaddr - cum;
	}
	g->nsizes = cen_sizes_compute(b->lg_quantum, b->lg_page, c->sizes, &g->nbins);
	/* RTREE_LEAF_COMPACT: the high bits left over hold LG_CEIL(SC_NSIZES) = 8. */
	g->compact = 64 - b->lg_vaddr >= 8;
	g->nregs_max = 1u << (b->lg_page - 3);	/* the 8-byte class fills a one-page slab */
}

/* "5.3", or with what differs from the default configure: "5.3 (q8 57-bit 64K)" (it
 * fits the result's 32 bytes).  The default page is the machine's largest (Debian's
 * arm64 package has 64 KiB pages). */
static void layout_name(struct cen *c, const char *family)
{
	const struct cen_build *b = &c->b;
	char what[40] = "";
	size_t n = 0;

	if (b->lg_quantum != 4)
		n += (size_t)snprintf(what + n, sizeof(what) - n, " q%u", 1u << b->lg_quantum);
	if (b->lg_vaddr != 48 && n < sizeof(what))
		n += (size_t)snprintf(what + n, sizeof(what) - n, " %u-bit", b->lg_vaddr);
	if (b->lg_page != b->mach->lg_page_max && n < sizeof(what))
		snprintf(what + n, sizeof(what) - n, " %lluK", (unsigned long long)(c->g.page >> 10));
	if (what[0])
		snprintf(c->lay.name, sizeof(c->lay.name), "%s (%s)", family, what + 1);
	else
		snprintf(c->lay.name, sizeof(c->lay.name), "%s", family);
}

int cen_layout_derive(struct cen *c)
{
	const struct cen_build *b = &c->b;
	struct cen_layout *L = &c->lay;
	const struct cen_family *f = NULL;

	for (size_t i = 0; i < sizeof(families) / sizeof(*families) && !f; i++)
		if (families[i].major == b->major && families[i].minor == b->minor &&
		    b->patch >= families[i].min_patch && b->patch <= families[i].max_patch)
			f = &families[i];
	if (!f && b->major == 5 && b->minor > 3)
		f = &families[sizeof(families) / sizeof(*families) - 1];
	if (!f)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %u.%u.%u: no family "
				"of releases the census knows", b->major, b->minor, b->patch);
	/* What configure allows on 64-bit hosts: RTREE_NSB of 11 to 52 bits. */
	if (b->lg_quantum < 3 || b->lg_quantum > 4 || b->lg_page < 12 || b->lg_page > 16 ||
	    b->lg_vaddr < b->lg_page + 11 || b->lg_vaddr > 64)
		return sess_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %u.%u.%u with "
				"LG_QUANTUM %u, LG_PAGE %u, LG_VADDR %u: not a build the census reads",
				b->major, b->minor, b->patch, b->lg_quantum, b->lg_page, b->lg_vaddr);
	cen_geometry(c);
	memset(L, 0, sizeof(*L));
	f->derive(b, &c->g, L);
	L->major = b->major;
	L->minor = b->minor;
	L->mach = b->mach;
	L->lg_page = b->lg_page;
	L->root_off = 8 + mutex_size(b);	/* rtree_t: base, init_lock, root[] */
	layout_name(c, f->name);
	c->L = L;
	if (c->out)
		snprintf(c->out->layout, sizeof(c->out->layout), "%s", L->name);
	return 0;
}

/* "5.3.0-0-g54eaed1d..." (any length of hash: Redis's is "g0") among the
 * strings of @d; 1 with its numbers. */
static int version_in(Elf_Data *d, char *out, size_t len, struct cen_build *b)
{
	const char *p = d->d_buf, *end = p + d->d_size;

	for (const char *s = p; s < end; s += strnlen(s, (size_t)(end - s)) + 1) {
		unsigned a, m, pt, dist;
		int n = 0;
		char hex[41];
		size_t sl = strnlen(s, (size_t)(end - s));

		if (sl < 10 || sl > 70 || s + sl >= end || s[0] < '3' || s[0] > '5' || s[1] != '.')
			continue;
		if (sscanf(s, "%u.%u.%u-%u-g%40[0-9a-f]%n", &a, &m, &pt, &dist, hex, &n) == 5 &&
		    (size_t)n == sl) {
			snprintf(out, len, "%s", s);
			b->major = a;
			b->minor = m;
			b->patch = pt;
			return 1;
		}
	}
	return 0;
}

/* The ELF machine and the version string (where TLS is: tls.c, tsd.c). */
static void elf_read(Elf *e, struct cen_elf *f, struct cen_build *b)
{
	size_t shstr = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;

	if (gelf_getehdr(e, &eh))
		f->machine = eh.e_machine;
	if (elf_getshdrstrndx(e, &shstr))
		return;
	while ((scn = elf_nextscn(e, scn)) && !f->version[0]) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
			continue;
		nm = elf_strptr(e, shstr, sh.sh_name);
		if (nm && !strcmp(nm, ".rodata") && sh.sh_type == SHT_PROGBITS)
			version_in(d, f->version, sizeof(f->version), b);
	}
}

/* jemalloc's module as the mappings name it: a core's list may name the
 * file otherwise than the loader did (/usr/lib/... for /lib/...), so by
 * an address of its code where one is known.  A copy: the list is read
 * again at the stop. */
static const char *module_path(struct cen *c)
{
	const struct jma_copy *je = syms_jemalloc(c->s->syms);
	uint64_t at = je->fn_mallctl ? je->fn_mallctl : je->base;
	const struct att_map *m = at ? att_maps_find(c->maps, c->nmaps, at) : NULL;

	if (m && m->path && m->path[0] && (c->je_path_buf = strdup(m->path)))
		return c->je_path_buf;
	return je->path;
}

int cen_layout_find(struct cen *c)
{
	jma_session *s = c->s;
	struct cen_elf f = { 0 };
	uint64_t bias = 0, a, sz;
	int tls, err;
	Elf *e = syms_jemalloc_elf(s->syms, &bias);

	if (!e)
		return sess_fail(s, JMA_ERR_MISSING, -ENOEXEC, "census: the ELF file of jemalloc's "
				"module cannot be read");
	elf_read(e, &f, &c->b);
	snprintf(c->out->version, sizeof(c->out->version), "%s", f.version[0] ? f.version : "unknown");
	if (!f.version[0])
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc's version string is "
				"not in its read-only data: which release it is is unknown");
	c->je_path = module_path(c);
	if (!(c->b.mach = att_machine_of(f.machine)))
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc's module is code "
				"of ELF machine %u, which the census does not read (x86_64 and "
				"arm64 only)", f.machine);
	/* 3.x and 4.x: chunks and runs, not extents (chunklayout.c). */
	if (c->b.major < 5)
		return chk_layout_find(c, c->b.major, c->b.minor);
	c->b.tls_size = cen_tls_memsz(c);
	c->b.lg_vaddr = 48;	/* until the map's shape says (findmap.c) */
	if ((err = cen_sizes_read(c)) != 0)
		return err;
	if ((err = cen_layout_derive(c)) != 0)
		return err;
	cen_tsd_find(c);
	c->large_pad = c->g.page;
	if (syms_jemalloc_sym(s->syms, "sz_large_pad", &a, &sz, &tls) && !tls)
		cen_read(c, a, &c->large_pad, sizeof(c->large_pad));
	if (c->large_pad > c->g.page)
		c->large_pad = c->g.page;
	if (syms_jemalloc_sym(s->syms, "tcaches", &a, &sz, &tls) && !tls)
		c->tcaches = a;
	if (syms_jemalloc_sym(s->syms, "tcaches_past", &a, &sz, &tls) && !tls)
		c->tcaches_past = a;
	return 0;
}
