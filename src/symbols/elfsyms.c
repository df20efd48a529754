/* elfsyms.c -- what a module's own ELF file says, read cheaply: its symbol tables
 * searched by a needle, its .rodata (see elfsyms.h). */
#include <string.h>

#include "symbols/elfsyms.h"

int syms_is_func(const GElf_Sym *s)
{
	int t = GELF_ST_TYPE(s->st_info);
	return (t == STT_FUNC || t == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF;
}

Elf_Data *syms_rodata(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && !strcmp(nm, ".rodata"))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

int syms_has_jemalloc_strings(Dwfl_Module *mod)
{
	Elf_Data *d = syms_rodata(mod);

	return d && d->d_buf && memmem(d->d_buf, d->d_size, "<jemalloc>: ", 12);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* One memmem over a string table rules out most modules (libc's thousands
 * of names) without a look at each symbol; @fn names a symbol with
 * elf_strptr(@elf, @strtab, st_name) only when it needs to. */
int syms_each_symbol(Elf *elf, Elf64_Word type, const char *needle, size_t nlen,
		     int (*fn)(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg), void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d, *str;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)) ||
		    (type ? sh.sh_type != type
			  : sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		str = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
		if (str && str->d_buf && !memmem(str->d_buf, str->d_size, needle, nlen))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			int r;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (r = fn(elf, sh.sh_link, &sym, arg)))
				return r;
		}
	}
	return 0;
}

static int is_mallctl(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	const char *nm = elf_strptr(elf, strtab, sym->st_name);

	(void)arg;
	return nm && ends_with(nm, "mallctl");
}

/* Does the module's main file define a *mallctl symbol (.dynsym or
 * .symtab)?  Asked before anything else so that separate debuginfo is searched
 * only where it may be needed: loading libc's debuginfo for its symbol table
 * would cost more than the rest of the start-up together. */
int syms_has_mallctl_symbol(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	/* "mallctl" and its NUL: a name ending so. */
	return !elf || syms_each_symbol(elf, 0, "mallctl", 8, is_mallctl, NULL);
}

/* Could this module hold jemalloc: by its symbols, or by jemalloc's messages
 * in its .rodata (a stripped copy that debuginfo may name)? */
int syms_maybe_jemalloc(Dwfl_Module *mod)
{
	return syms_has_mallctl_symbol(mod) || syms_has_jemalloc_strings(mod);
}
