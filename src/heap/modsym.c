/* modsym.c -- the functions of one module, as tables built once and
 * searched per address.
 *
 * Looking each address up in libdw (dwarf_getscopes) walks its whole
 * compilation unit every time: on a 2000-function program built with -g that
 * made analyze 4x slower than jeprof.  Here each module gets, once:
 *   - its ELF function symbols (.symtab, .dynsym, MiniDebugInfo's
 *     .gnu_debugdata, a separate debug file's: libdwfl merges them), sorted;
 *   - its DWARF subprograms with their address ranges, sorted, from one walk
 *     of the top-level DIEs of each unit;
 *   - its call-frame tables (.eh_frame, else .debug_frame), whose FDEs bound
 *     every function even in a stripped binary.
 * An address is then a binary search: the symbol that contains it (never the
 * nearest one before it, which names a neighbour), else the FDE that
 * contains it ("module!fn_0x4ada0": one function, grouped as one site), and
 * its inlined chain from the subprogram's own subtree.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "heap/modsym.h"
#include "symbols/fdes.h"

struct modsym_fn {
	uint64_t lo, hi;	/* absolute addresses */
	uint32_t name;		/* strtab id */
	int rank;		/* among aliases: 0 global, 1 weak, 2 local */
	int alloc;		/* some alias is an allocator entry point */
};

struct modsym_sub {
	uint64_t lo, hi;	/* absolute addresses */
	Dwarf_Die die;
	int64_t inl;		/* its inlined calls: first in modsym.inl; -1 not read yet */
	size_t ninl;
};

/* One address range of an inlined call, in the order of a depth-first walk
 * of its function: a call nested in another comes after it. */
struct modsym_inl {
	Dwarf_Addr lo, hi;	/* DWARF addresses */
	Dwarf_Die die;
};

struct modsym {
	Dwfl_Module *dm;
	struct modsym_fn *fn;
	size_t nfn;
	struct modsym_sub *sub;
	size_t nsub, subcap;
	int has_dwarf;
	Dwarf_Off *cus;		/* the units whose subprograms are in sub */
	size_t ncus, cuscap;
	struct modsym_inl *inl;
	size_t ninl, inlcap;
	Dwarf_Addr dwbias;
	struct jma_fdes fdes;	/* where each function starts, by its FDE */
};

static int cmp_fn(const void *a, const void *b)
{
	const struct modsym_fn *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->rank - y->rank;
}

static int cmp_sub(const void *a, const void *b)
{
	const struct modsym_sub *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether a size-less symbol @nm of @type in section @shndx of @elf labels
 * code.  Not the Arm ELF ABI's mapping symbols ($x: A64 code from here, $d:
 * data; $a, $t: A32, T32; each may carry a ".suffix"), which every arm64
 * object file has in its symbol table and which name no function. */
static int is_code_label(Elf *elf, const char *nm, int type, GElf_Word shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (type != STT_FUNC && type != STT_NOTYPE)
		return 0;
	if (nm[0] == '$' && nm[1] && strchr("xdat", nm[1]) && (!nm[2] || nm[2] == '.'))
		return 0;
	scn = elf ? elf_getscn(elf, shndx) : NULL;
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Every function symbol; aliases (one address, several names) become one
 * entry named by the strongest binding.  Labels (size 0) have hi == lo. */
static int load_symbols(jma_heap *h, struct modsym *t)
{
	int n = dwfl_module_getsymtab(t->dm);
	size_t k = 0;

	if (n <= 1)
		return 0;
	t->fn = malloc((size_t)n * sizeof(*t->fn));
	if (!t->fn)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		const char *nm = dwfl_module_getsym_info(t->dm, i, &s, &addr, &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
		char *bare;

		if (!nm || !*nm || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
			continue;
		/* Functions, and the size-less labels of hand-written assembly in
		 * code sections (ld.so's _dl_start_user): see label_at. */
		if (s.st_size ? type != STT_FUNC && type != STT_GNU_IFUNC
			      : !is_code_label(elf, nm, type, shndx))
			continue;
		/* .dynsym names carry their version ("__libc_start_main@@GLIBC_2.34"). */
		bare = strndup(nm, strcspn(nm, "@"));
		t->fn[k].name = bare ? heap_str(&h->str, bare) : UINT32_MAX;
		free(bare);
		if (t->fn[k].name == UINT32_MAX)
			return -ENOMEM;
		t->fn[k].lo = addr;
		t->fn[k].hi = addr + s.st_size;
		t->fn[k].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		t->fn[k].alloc = heap_is_alloc_fn(h->str.str[t->fn[k].name]);
		k++;
	}
	qsort(t->fn, k, sizeof(*t->fn), cmp_fn);
	t->nfn = 0;
	for (size_t i = 0; i < k; i++) {
		struct modsym_fn *last = t->nfn ? &t->fn[t->nfn - 1] : NULL;

		if (last && last->lo == t->fn[i].lo) {
			last->alloc |= t->fn[i].alloc;
			if (t->fn[i].hi > last->hi)
				last->hi = t->fn[i].hi;
			continue;
		}
		t->fn[t->nfn++] = t->fn[i];
	}
	return 0;
}

static int add_sub(struct modsym *t, Dwarf_Die *d)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (heap_grow((void **)&t->sub, &t->subcap, t->nsub + 1, sizeof(*t->sub)))
			return -ENOMEM;
		t->sub[t->nsub++] = (struct modsym_sub){ lo + t->dwbias, hi + t->dwbias, *d, -1, 0 };
	}
	return 0;
}

/* The subprograms among @parent's children, and inside namespaces and
 * classes (C++ member functions); their own subtrees are skipped. */
static int collect_subs(struct modsym *t, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	int err = 0;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			err = add_sub(t, &c);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			err = collect_subs(t, &c, depth + 1);
			break;
		}
	} while (!err && dwarf_siblingof(&c, &c) == 0);
	return err;
}

/* The subprograms of the unit holding @addr, read at its first address: a
 * few addresses in a large library read a few of its units, not all. */
static int load_unit(struct modsym *t, uint64_t addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = t->has_dwarf ? dwfl_module_addrdie(t->dm, addr, &bias) : NULL;
	Dwarf_Off off;
	size_t first = t->nsub;
	int err;

	if (!cu)
		return 0;
	off = dwarf_dieoffset(cu);
	for (size_t i = 0; i < t->ncus; i++)
		if (t->cus[i] == off)
			return 0;
	if (heap_grow((void **)&t->cus, &t->cuscap, t->ncus + 1, sizeof(*t->cus)))
		return -ENOMEM;
	t->cus[t->ncus++] = off;
	t->dwbias = bias;
	err = collect_subs(t, cu, 0);
	if (err || first == t->nsub)
		return err;
	/* Units are met in address order mostly: sort the new ones, and all
	 * only when they do not follow the old. */
	qsort(t->sub + first, t->nsub - first, sizeof(*t->sub), cmp_sub);
	if (first && t->sub[first - 1].lo > t->sub[first].lo)
		qsort(t->sub, t->nsub, sizeof(*t->sub), cmp_sub);
	return 0;
}

struct modsym *modsym_new(jma_heap *h, Dwfl_Module *dm, int use_dwarf)
{
	struct modsym *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->dm = dm;
	t->has_dwarf = use_dwarf && dwfl_module_getdwarf(dm, &t->dwbias) != NULL;
	err = load_symbols(h, t);
	if (err) {
		modsym_free(t);
		errno = -err;
		return NULL;
	}
	if (syms_fdes_load(&t->fdes, dm)) {
		modsym_free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void modsym_free(struct modsym *t)
{
	if (!t)
		return;
	free(t->fn);
	free(t->sub);
	free(t->inl);
	syms_fdes_free(&t->fdes);
	free(t->cus);
	free(t);
}

/* The last entry of @n (sorted by lo, stride @size) whose lo <= @addr, and a
 * few before it, checked for containment: symbols may nest. */
static const void *containing(const void *v, size_t n, size_t size, uint64_t addr)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = (a + b) / 2;
		const uint64_t *lo = (const uint64_t *)((const char *)v + m * size);
		if (*lo <= addr)
			a = m + 1;
		else
			b = m;
	}
	for (size_t i = a, k = 0; i-- > 0 && k < 8; k++) {
		const uint64_t *r = (const uint64_t *)((const char *)v + i * size);
		if (addr < r[1])
			return r;
	}
	return NULL;
}

/* The label naming @addr when nothing else does: the nearest symbol before it
 * is a size-less label, and no function (symbol or FDE) starts in between --
 * code such as ld.so's _dl_start_user has neither a size nor an FDE. */
static const struct modsym_fn *label_at(const struct modsym *t, uint64_t addr)
{
	size_t a = 0, b = t->nfn;
	const struct modsym_fn *f;

	while (a < b) {
		size_t m = (a + b) / 2;
		if (t->fn[m].lo <= addr)
			a = m + 1;
		else
			b = m;
	}
	if (!a)
		return NULL;
	f = &t->fn[a - 1];
	if (f->hi != f->lo)
		return NULL;
	/* An FDE starting between the label and the address is another function. */
	a = 0;
	b = t->fdes.n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (t->fdes.start[m] + t->fdes.bias <= addr)
			a = m + 1;
		else
			b = m;
	}
	return a && t->fdes.start[a - 1] + t->fdes.bias > f->lo ? NULL : f;
}

static int add_frame(jma_heap *h, uint32_t func, const char *file, int line)
{
	struct heap_frame *f;

	if (h->nframes == h->frames_cap) {
		size_t ncap = h->frames_cap ? h->frames_cap * 2 : 1024;
		f = realloc(h->frames, ncap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		h->frames = f;
		h->frames_cap = ncap;
	}
	f = &h->frames[h->nframes];
	f->func = func;
	f->file = file ? heap_str(&h->str, file) : 0;
	f->line = line > 0 ? line : 0;
	/* Demangled here, once per name: every report prints this form. */
	f->dfunc = func == UINT32_MAX ? UINT32_MAX : heap_str_demangled(&h->str, func);
	if (f->func == UINT32_MAX || f->file == UINT32_MAX || f->dfunc == UINT32_MAX)
		return -ENOMEM;
	h->nframes++;
	return 0;
}

static uint32_t die_name(jma_heap *h, Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
	return heap_str(&h->str, n ? n : "??");
}

/* Where an inlined call sits in its caller: DW_AT_call_file/line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word idx = 0, ln = 0;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &ln) == 0 && ln < (1U << 30))
		*line = (int)ln;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

enum { MAX_INLINE = 64 };

/* Append the inlined calls under @parent (through lexical blocks and other
 * inlined calls) to t->inl, depth first. */
static int walk_inlined(struct modsym *t, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;

	if (depth > MAX_INLINE || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c), err;

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0) {
				if (heap_grow((void **)&t->inl, &t->inlcap, t->ninl + 1, sizeof(*t->inl)))
					return -ENOMEM;
				t->inl[t->ninl++] = (struct modsym_inl){ lo, hi, c };
			}
		}
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		err = walk_inlined(t, &c, depth + 1);
		if (err)
			return err;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

/* The inlined calls around @pc inside subprogram @s, outermost first; each
 * function's calls are read once, at its first address. */
static int inline_chain(struct modsym *t, struct modsym_sub *s, Dwarf_Addr pc, Dwarf_Die *chain)
{
	int n = 0;

	if (s->inl < 0) {
		size_t first = t->ninl;
		int err = walk_inlined(t, &s->die, 0);
		if (err)
			return err;
		s->inl = (int64_t)first;
		s->ninl = t->ninl - first;
	}
	for (size_t i = 0; i < s->ninl && n < MAX_INLINE; i++) {
		const struct modsym_inl *r = &t->inl[s->inl + (int64_t)i];
		if (r->lo <= pc && pc < r->hi)
			chain[n++] = r->die;
	}
	return n;
}

/* The DWARF frames of @addr in subprogram @s: inlined calls innermost first,
 * then the function itself, named @outer when the ELF symbol is known. */
static int dwarf_frames(jma_heap *h, struct modsym *t, struct modsym_sub *s, uint64_t addr,
			uint32_t outer, const char *file, int line)
{
	Dwarf_Die sub = s->die, cu, chain[MAX_INLINE];
	int n = inline_chain(t, s, addr - t->dwbias, chain), err = 0;

	if (n < 0)
		return n;
	if (!dwarf_diecu(&sub, &cu, NULL, NULL))
		n = 0;
	for (int i = n - 1; i >= 0 && !err; i--) {
		err = add_frame(h, die_name(h, &chain[i]), file, line);
		call_site(&cu, &chain[i], &file, &line);
	}
	if (!err)
		err = add_frame(h, outer ? outer : die_name(h, &sub), file, line);
	return err;
}

int modsym_name(jma_heap *h, struct modsym *t, const struct heap_module *m, struct heap_loc *l)
{
	const struct modsym_fn *fn = containing(t->fn, t->nfn, sizeof(*t->fn), l->addr);
	struct modsym_sub *sub;
	Dwfl_Line *dl;
	const char *file = NULL;
	uint32_t outer = 0;
	uint64_t start;
	int line = 0, has_fde, err = load_unit(t, l->addr);

	if (err)
		return err;
	sub = (struct modsym_sub *)containing(t->sub, t->nsub, sizeof(*t->sub), l->addr);
	dl = t->has_dwarf ? dwfl_module_getsrc(t->dm, l->addr) : NULL;

	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	l->frame = (uint32_t)h->nframes;
	l->nframe = 0;
	has_fde = !fn && !sub && !syms_fdes_start(&t->fdes, l->addr, &start);
	if (!fn && !sub && !has_fde)
		fn = label_at(t, l->addr);
	if (fn) {
		l->symbol = outer = fn->name;
		l->alloc |= fn->alloc;
		l->named = HEAP_NAMED_SYMBOL;
	} else if (has_fde) {
		char buf[512];
		const char *path = h->str.str[m->path], *slash = strrchr(path, '/');
		snprintf(buf, sizeof(buf), "%s!fn_0x%llx", slash ? slash + 1 : path,
			 (unsigned long long)start);
		outer = heap_str(&h->str, buf);
		if (outer == UINT32_MAX)
			return -ENOMEM;
		l->named = HEAP_NAMED_BOUNDARY;
	}
	if (sub) {
		err = dwarf_frames(h, t, sub, l->addr, outer, file, line);
		if (!fn)
			l->named = HEAP_NAMED_SYMBOL;
	} else if (outer) {
		err = add_frame(h, outer, file, line);
	}
	if (err)
		return err;
	l->nframe = (uint32_t)(h->nframes - l->frame);
	return 0;
}
