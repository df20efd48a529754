/* layout.c -- the per-version facts of jemalloc's heap metadata, and which apply to the target.
 *
 * Offsets by offsetof against each configured tree (x86_64, 4 KiB pages,
 * 48-bit addresses, non-debug; ../shared/DESIGN.md section 9; arm64's row
 * against the tree scripts/aarch64/jemalloc-prof.sh configures).  A row is
 * chosen by the size of jemalloc's thread data (sizeof(tsd_t), which is the
 * library's PT_TLS size): it moves with every release and with the
 * configuration (dev with --enable-prof is 8 bytes larger) and the page
 * size, and a row is taken only for its own machine (the ELF's e_machine), so
 * a build no row knows is refused rather than misread (0 in a row: not known for it, the
 * method that needs it is not tried).  The version string is read from
 * the library's read-only data: no call into the target.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

static const struct cen_layout layouts[] = {
	{ "5.0", 5, 0, 0x17d8, 12, 15, 2, 17, 25, 0x68, 0x1, 0, 0x1b8, 0, 0, 0x3b0, 0, 0x20, EM_X86_64, 12 },
	{ "5.1", 5, 1, 0x1800, 12, 16, 2, 18, 26, 0x68, 0x1, 0, 0x1c0, 0, 0, 0x3d0, 0, 0, EM_X86_64, 12 },
	{ "5.2", 5, 2, 0x1848, 12, 16, 2, 18, 26, 0x70, 0x1, 0, 0x1f0, 0, 0, 0x3e8, 0, 0x30, EM_X86_64, 12 },
	{ "5.3", 5, 3, 0xa48, 12, 17, 3, 20, 28, 0x78, 0x7f, 1, 0x358, 1, 73, 0, 0, 0x1b0, EM_X86_64, 12 },
	{ "dev", 5, 3, 0x788, 12, 17, 3, 20, 28, 0x78, 0x7f, 1, 0x398, 1, 41, 0, 1, 0, EM_X86_64, 12 },
	{ "dev+prof", 5, 3, 0x790, 12, 17, 3, 20, 28, 0x78, 0x7f, 1, 0x3a0, 1, 41, 0, 1, 0x1f8, EM_X86_64, 12 },
	/* arm64, configured as Debian's package (--with-lg-page=16), with or
	 * without --enable-prof: tsd's binshards are SC_NBINS (52) bytes,
	 * glibc's pthread_mutex_t 48 (the root 8 further). */
	{ "5.3-arm64-64k", 5, 3, 0xa88, 12, 17, 3, 20, 28, 0x80, 0x7f, 1, 0x398, 1, 73, 0, 0, 0x1f0,
	  EM_AARCH64, 16 },
};

void cen_geometry(struct cen *c)
{
	unsigned lg = c->L->lg_page, nsb = CEN_LG_VADDR - lg;
	struct cen_geom *g = &c->g;

	g->page = 1ULL << lg;
	g->root_bits = nsb / 2;
	g->leaf_bits = nsb - g->root_bits;
	g->root_shift = lg + g->leaf_bits;
	g->nregs_max = 1u << (lg - 3);	/* the 8-byte class fills a one-page slab */
	cen_sizes_compute(c->sizes);
	for (g->nbins = 0; g->nbins < CEN_NSIZES && c->sizes[g->nbins] < (4ULL << lg); g->nbins++)
		;
}

const struct cen_layout *cen_layout_named(const char *name)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts); i++)
		if (!strcmp(layouts[i].name, name))
			return &layouts[i];
	return NULL;
}

/* "5.3.0-0-g54eaed1d..." among the strings of @d. */
static int version_in(Elf_Data *d, char *out, size_t len)
{
	const char *p = d->d_buf, *end = p + d->d_size;

	for (const char *s = p; s < end; s += strnlen(s, (size_t)(end - s)) + 1) {
		unsigned a, b, cc, dist;
		int n = 0;
		char hex[41];
		size_t sl = strnlen(s, (size_t)(end - s));

		if (sl < 48 || sl > 70 || s + sl >= end || s[0] < '0' || s[0] > '9')
			continue;
		if (sscanf(s, "%u.%u.%u-%u-g%40[0-9a-f]%n", &a, &b, &cc, &dist, hex, &n) == 5 &&
		    (size_t)n == sl && strlen(hex) == 40) {
			snprintf(out, len, "%s", s);
			return 1;
		}
	}
	return 0;
}

struct elf_facts {
	unsigned machine;		/* e_machine */
	uint64_t tls_memsz, tls_align;
	uint64_t tpoff_slot[4];		/* TP-offset GOT slots (unrelocated) */
	int64_t tpoff_addend[4];
	size_t ntpoff;
	char version[80];
};

static void elf_read(Elf *e, struct elf_facts *f)
{
	size_t nph = 0, shstr = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	unsigned tprel;

	if (gelf_getehdr(e, &eh))
		f->machine = eh.e_machine;
	/* The relocation that fills an initial-exec TLS GOT slot. */
	tprel = f->machine == EM_AARCH64 ? R_AARCH64_TLS_TPREL : R_X86_64_TPOFF64;

	if (elf_getphdrnum(e, &nph) == 0)
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_TLS) {
				f->tls_memsz = ph.p_memsz;
				f->tls_align = ph.p_align;
			}
		}
	if (elf_getshdrstrndx(e, &shstr))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
			continue;
		nm = elf_strptr(e, shstr, sh.sh_name);
		if (sh.sh_type == SHT_RELA && sh.sh_entsize) {
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Rela r;
				if (gelf_getrela(d, (int)i, &r) && ELF64_R_TYPE(r.r_info) == tprel &&
				    f->ntpoff < 4) {
					f->tpoff_slot[f->ntpoff] = r.r_offset;
					f->tpoff_addend[f->ntpoff++] = r.r_addend;
				}
			}
		} else if (nm && !strcmp(nm, ".rodata") && sh.sh_type == SHT_PROGBITS && !f->version[0]) {
			version_in(d, f->version, sizeof(f->version));
		}
	}
}

/* Where each thread's tsd is: the thread pointer + tpoff.  A library's one
 * TP-offset GOT slot (initial-exec TLS) holds it once relocated; with
 * several, the one for tsd_tls's offset (any when all are for one offset); jemalloc linked into an executable
 * (local-exec) has it at tsd_tls's offset in the executable's TLS block.
 * x86_64 keeps TLS below the thread pointer (the executable's block ends at
 * it); arm64 above (its block starts past the 16-byte TCB, aligned). */
static void find_tpoff(struct cen *c, const struct elf_facts *f, uint64_t bias)
{
	uint64_t off = 0, size = 0;
	int is_tls = 0, sym = jma_syms_jemalloc_sym(c->s->syms, "tsd_tls", &off, &size, &is_tls) && is_tls;
	int above = f->machine == EM_AARCH64, same = 1;
	int64_t v;

	/* Debian's arm64 library has two slots, both for offset 0 (tsd_tls). */
	for (size_t i = 1; i < f->ntpoff; i++)
		same &= f->tpoff_addend[i] == f->tpoff_addend[0];
	for (size_t i = 0; i < f->ntpoff && !c->have_tpoff; i++) {
		if (f->ntpoff > 1 && (sym ? f->tpoff_addend[i] != (int64_t)off : !same))
			continue;
		if (cen_read(c, f->tpoff_slot[i] + bias, &v, sizeof(v)))
			continue;
		if (above ? v > 0 && v < (1LL << 32) : v < 0 && v > -(1LL << 32)) {
			c->tpoff = (uint64_t)v;
			c->have_tpoff = 1;
		}
	}
	if (!c->have_tpoff && !f->ntpoff && sym && f->tls_align) {
		uint64_t a = f->tls_align, block = (f->tls_memsz + a - 1) / a * a;
		c->tpoff = above ? (16 + a - 1) / a * a + off : off - block;
		c->have_tpoff = 1;
	}
}

int cen_layout_find(struct cen *c)
{
	jma_session *s = c->s;
	struct elf_facts f = { 0 };
	uint64_t bias = 0, a, sz;
	unsigned major = 0, minor = 0;
	int tls;
	Elf *e = jma_syms_jemalloc_elf(s->syms, &bias);

	if (!e)
		return jma_fail(s, JMA_ERR_MISSING, -ENOEXEC, "census: the ELF file of jemalloc's "
				"module cannot be read");
	elf_read(e, &f);
	snprintf(c->out->version, sizeof(c->out->version), "%s", f.version[0] ? f.version : "unknown");
	if (f.version[0] && sscanf(f.version, "%u.%u", &major, &minor) == 2 && major < 5)
		return chk_layout_find(c, major, minor);	/* chunks and runs: chunklayout.c */
	for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts) && !c->L; i++)
		if (layouts[i].tls_size == f.tls_memsz && layouts[i].machine == f.machine)
			c->L = &layouts[i];
	if (!c->L && f.tls_memsz) {
		/* jemalloc inside a larger object: its TLS holds more than tsd. */
		for (size_t i = 0; i < sizeof(layouts) / sizeof(*layouts) && !c->L; i++)
			if (layouts[i].major == major && layouts[i].minor == minor &&
			    layouts[i].machine == f.machine)
				c->L = &layouts[i];
	}
	if (!c->L)
		return jma_fail(s, JMA_ERR_MISSING, -ENOTSUP, "census: jemalloc %s: no known layout "
				"for this build (thread data of 0x%llx bytes)", c->out->version,
				(unsigned long long)f.tls_memsz);
	snprintf(c->out->layout, sizeof(c->out->layout), "%s", c->L->name);
	c->je_path = jma_syms_jemalloc(s->syms)->path;
	find_tpoff(c, &f, bias);
	cen_geometry(c);
	if (jma_syms_jemalloc_sym(s->syms, "sz_index2size_tab", &a, &sz, &tls) && !tls &&
	    cen_sizes_check(c, a) < 0)
		return -ENOTSUP;
	c->large_pad = c->g.page;
	if (jma_syms_jemalloc_sym(s->syms, "sz_large_pad", &a, &sz, &tls) && !tls)
		cen_read(c, a, &c->large_pad, sizeof(c->large_pad));
	if (c->large_pad > c->g.page)
		c->large_pad = c->g.page;
	if (jma_syms_jemalloc_sym(s->syms, "tcaches", &a, &sz, &tls) && !tls)
		c->tcaches = a;
	if (jma_syms_jemalloc_sym(s->syms, "tcaches_past", &a, &sz, &tls) && !tls)
		c->tcaches_past = a;
	return 0;
}
