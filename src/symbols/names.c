/* names.c -- naming code addresses: symbol, offset, module, source line, a C++ name demangled.
 *
 * Names already looked up are kept by pc: dwfl_module_addrinfo scans a
 * module's whole symbol table per address, and the threads of a process
 * mostly share their frames (a thousand workers in the same wait).  Code
 * without a symbol is named by its function's start (fdes.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dnames.h"
#include "symbols/handle.h"

/* @mod's table of function starts, loaded on first need; NULL on failure. */
static struct fde_table *fde_table_of(struct jma_syms *sy, Dwfl_Module *mod)
{
	struct fde_table *t, *v;

	for (size_t i = 0; i < sy->nfdes; i++)
		if (sy->fdes[i].mod == mod)
			return &sy->fdes[i];
	if (!(v = realloc(sy->fdes, (sy->nfdes + 1) * sizeof(*v))))
		return NULL;
	sy->fdes = v;
	t = &sy->fdes[sy->nfdes];
	t->mod = mod;
	if (syms_fdes_load(&t->f, mod))
		return NULL;
	sy->nfdes++;
	return t;
}

int syms_func_start(struct jma_syms *sy, uint64_t pc, uint64_t *start)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct fde_table *t;
	uint64_t s;

	dwfl = syms_enter(sy, &prev);
	mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	t = mod ? fde_table_of(sy, mod) : NULL;
	sym_dwfl_leave(prev);
	if (!t || syms_fdes_start(&t->f, pc, &s))
		return -ENOENT;
	*start = s + t->f.bias;
	return 0;
}

/* A function without a symbol, named by where its frame description says
 * it starts, as analyze names it: "fn_0xSTART", START the address nm would
 * show.  NULL when none. */
static const char *fde_name(struct jma_syms *sy, Dwfl_Module *mod, uint64_t pc, GElf_Off *off)
{
	struct fde_table *t = fde_table_of(sy, mod);
	uint64_t start;
	char buf[40], **nv;

	if (!t || syms_fdes_start(&t->f, pc, &start) ||
	    !(nv = realloc(sy->fde_names, (sy->nfde_names + 1) * sizeof(*nv))))
		return NULL;
	sy->fde_names = nv;
	snprintf(buf, sizeof(buf), "fn_0x%llx", (unsigned long long)start);
	if (!(nv[sy->nfde_names] = strdup(buf)))
		return NULL;
	*off = pc - t->f.bias - start;
	return nv[sy->nfde_names++];
}

const char *syms_name(struct jma_syms *sy, uint64_t pc, uint64_t *off, const char **module,
			  const char **file, int *line)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	const char *nm = NULL;
	GElf_Off o = 0;
	GElf_Sym s;
	struct named *e = NULL;

	if (!sy->names)
		sy->names = calloc(NAME_CACHE, sizeof(*sy->names));
	if (sy->names && pc) {
		e = &sy->names[(pc ^ (pc >> 12)) % NAME_CACHE];
		if (e->pc == pc && (e->with_line || !file || !line)) {
			*off = e->off;
			*module = e->module;
			if (file)
				*file = e->file;
			if (line)
				*line = e->line;
			return e->name;
		}
	}
	dwfl = syms_enter(sy, &prev);
	*off = 0;
	*module = NULL;
	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
	if (mod) {
		*module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		nm = dwfl_module_addrinfo(mod, pc, &o, &s, NULL, NULL, NULL);
		if (!nm)
			nm = fde_name(sy, mod, pc, &o);
		*off = o;
		if (file && line) {
			Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
			if (l)
				*file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
		}
	}
	sym_dwfl_leave(prev);
	if (e)
		*e = (struct named){ .pc = pc, .off = *off, .name = nm, .module = *module,
				     .file = file ? *file : NULL, .line = line ? *line : 0,
				     .with_line = file && line };
	return nm;
}

void syms_set_demangle(struct jma_syms *sy, int on)
{
	sy->no_demangle = !on;
}

const char *syms_demangled(struct jma_syms *sy, const char *name)
{
	if (sy->no_demangle || !name)
		return name;
	if (!sy->dnames)
		sy->dnames = sym_dnames_new();
	return sym_dnames_get(sy->dnames, name);
}

void syms_describe(struct jma_syms *sy, uint64_t pc, char *buf, size_t len)
{
	uint64_t off;
	const char *module, *nm = syms_demangled(sy, syms_name(sy, pc, &off, &module, NULL, NULL));

	if (nm)
		snprintf(buf, len, "%s+0x%llx (%s)", nm, (unsigned long long)off,
			 module ? syms_base_name(module) : "?");
	else if (module)
		snprintf(buf, len, "0x%llx (%s)", (unsigned long long)pc, syms_base_name(module));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
}

int syms_section(struct jma_syms *sy, uint64_t addr, uint64_t *vaddr, char *sec, size_t len)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl = syms_enter(sy, &prev);
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, addr) : NULL;
	Dwarf_Addr a = addr, bias = 0;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name = NULL;
	int err = -ENOENT;

	if (mod) {
		elf = dwfl_module_getelf(mod, &bias);
		/* The address as the module's file has it (what nm and readelf show). */
		*vaddr = addr - bias;
		err = 0;
		scn = elf ? dwfl_module_address_section(mod, &a, &bias) : NULL;
	}
	if (scn && gelf_getshdr(scn, &sh) && !elf_getshdrstrndx(elf, &shstrndx))
		name = elf_strptr(elf, shstrndx, sh.sh_name);
	snprintf(sec, len, "%s", name ? name : "");
	sym_dwfl_leave(prev);
	return err;
}
