/* elfsyms.h -- what a module's own ELF file says, read cheaply: its symbol
 * tables searched by a needle, its .rodata.  No separate debuginfo is looked
 * for: these answer which modules deserve it. */
#ifndef JMA_SYMBOLS_ELFSYMS_H
#define JMA_SYMBOLS_ELFSYMS_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>

/* A defined function (or IFUNC) symbol? */
int syms_is_func(const GElf_Sym *s);

/* Visit the defined symbols of @elf's tables of type @type (SHT_DYNSYM; 0:
 * .symtab and .dynsym) whose string table holds the @nlen bytes of @needle;
 * the first nonzero @fn returns is returned. */
int syms_each_symbol(Elf *elf, Elf64_Word type, const char *needle, size_t nlen,
		     int (*fn)(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg), void *arg);

/* @mod's .rodata, NULL when none. */
Elf_Data *syms_rodata(Dwfl_Module *mod);

/* Does @mod's own file define a *mallctl symbol?  Does its .rodata hold
 * jemalloc's messages ("<jemalloc>: ")?  Either: could it hold jemalloc? */
int syms_has_mallctl_symbol(Dwfl_Module *mod);
int syms_has_jemalloc_strings(Dwfl_Module *mod);
int syms_maybe_jemalloc(Dwfl_Module *mod);

#endif
