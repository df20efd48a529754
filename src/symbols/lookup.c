/* lookup.c -- symbols looked up by name: the condition waits, jemalloc's own symbols, malloc_message, the sigreturn trampoline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/restorer.h"
#include "symbols/elfsyms.h"
#include "symbols/handle.h"

struct waits {
	struct jma_range *v;
	size_t n, cap;
	uint64_t bias;
	int err;
};

/* Note @sym when it is a pthread_cond_*wait function. */
static int add_cond_wait(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	struct waits *w = arg;
	const char *nm;

	if (!sym->st_size || !syms_is_func(sym))
		return 0;
	nm = elf_strptr(elf, strtab, sym->st_name);
	if (!nm || (strncmp(nm, "pthread_cond_", 13) && strncmp(nm, "__pthread_cond_", 15)) ||
	    !strstr(nm, "wait"))
		return 0;
	w->err = syms_ranges_add(&w->v, &w->n, &w->cap, w->bias + sym->st_value,
			   w->bias + sym->st_value + sym->st_size);
	return w->err;
}

static int module_cond_waits(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low,
			     void *arg)
{
	struct waits *w = arg;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	(void)ud;
	(void)name;
	(void)low;
	w->bias = bias;
	if (elf && syms_each_symbol(elf, SHT_DYNSYM, "pthread_cond_", 13, add_cond_wait, w))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Where the process's pthread_cond_*wait functions are, by the exported
 * symbols of every module's own file (.dynsym), which span what those
 * functions inline: no symbol table or debuginfo is loaded.  Found once,
 * from libdwfl or the cache; none when neither can say. */
int syms_find_cond_waits(struct jma_syms *sy)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	struct waits w = { 0 };

	if (sy->waits_known)
		return 0;
	sy->waits_known = 1;
	dwfl = syms_enter(sy, &prev);
	if (dwfl)
		dwfl_getmodules(dwfl, module_cond_waits, &w, 0);
	sym_dwfl_leave(prev);
	if (w.err) {
		free(w.v);
		return w.err;
	}
	syms_ranges_merge(w.v, &w.n, 0);
	sy->waits = w.v;
	sy->nwaits = w.n;
	return 0;
}

int syms_in_cond_wait(struct jma_syms *sy, uint64_t pc)
{
	syms_find_cond_waits(sy);
	return syms_ranges_has(sy->waits, sy->nwaits, pc);
}

Elf *syms_jemalloc_elf(struct jma_syms *sy, uint64_t *bias)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	const struct jma_copy *c = syms_jemalloc(sy);
	Dwfl_Module *mod;
	Dwarf_Addr b = 0;
	Elf *e;

	dwfl = syms_enter(sy, &prev);
	mod = c && dwfl ? dwfl_addrmodule(dwfl, c->fn_mallctl ? c->fn_mallctl : c->base) : NULL;
	e = mod ? dwfl_module_getelf(mod, &b) : NULL;
	sym_dwfl_leave(prev);
	*bias = b;
	return e;
}

struct obj_find {
	const char *name;
	int type;		/* STT_OBJECT or STT_FUNC */
	struct jma_syms *sy;	/* STT_FUNC: only jemalloc's own code */
	uint64_t addr, size;
	int in_jemalloc;	/* found only in jemalloc's own module so far */
};

static int find_object(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	struct obj_find *of = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)ud;
	(void)low;
	(void)name;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &addr, NULL, NULL, NULL);

		if (!nm || s.st_shndx == SHN_UNDEF || GELF_ST_TYPE(s.st_info) != of->type ||
		    strcmp(nm, of->name))
			continue;
		if (of->type == STT_FUNC) {
			if (!syms_in_jemalloc(of->sy, addr))
				continue;
			of->addr = addr;
			of->size = s.st_size;
			return DWARF_CB_ABORT;
		}
		/* A copy relocation in the executable is the live variable; the
		 * library's own definition is then unused. */
		if (!of->addr || (of->in_jemalloc && !syms_maybe_jemalloc(mod))) {
			of->addr = addr;
			of->in_jemalloc = syms_maybe_jemalloc(mod);
		}
		break;
	}
	return DWARF_CB_OK;
}

static uint64_t syms_find(struct jma_syms *sy, const char *name, int type, uint64_t *size)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	struct obj_find of = { name, type, sy, 0, 0, 0 };

	dwfl = syms_enter(sy, &prev);
	if (dwfl)
		dwfl_getmodules(dwfl, find_object, &of, 0);
	sym_dwfl_leave(prev);
	if (size)
		*size = of.size;
	return of.addr;
}

/* Is @nm jemalloc's private @name: itself, je_@name, or that after a
 * --with-private-namespace (tikv-jemalloc-sys: _rjem_je_@name)? */
static int private_name(const char *nm, const char *name)
{
	size_t ln = strlen(nm), l = strlen(name);

	return !strcmp(nm, name) ||
	       (ln >= l + 3 && !strcmp(nm + ln - l, name) && !strncmp(nm + ln - l - 3, "je_", 3));
}

int syms_jemalloc_sym(struct jma_syms *sy, const char *name, uint64_t *addr, uint64_t *size,
			  int *is_tls)
{
	struct sym_dwfl *prev;
	Dwfl *dwfl;
	const struct jma_copy *c = syms_jemalloc(sy);
	Dwfl_Module *mod;
	int n, found = 0;

	dwfl = syms_enter(sy, &prev);
	mod = c && dwfl ? dwfl_addrmodule(dwfl, c->fn_mallctl ? c->fn_mallctl : c->base) : NULL;
	n = mod ? dwfl_module_getsymtab(mod) : 0;
	for (int i = 1; i < n && !found; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (!nm || s.st_shndx == SHN_UNDEF || !private_name(nm, name))
			continue;
		*is_tls = GELF_ST_TYPE(s.st_info) == STT_TLS;
		*addr = *is_tls ? s.st_value : a;
		*size = s.st_size;
		found = 1;
	}
	sym_dwfl_leave(prev);
	return found;
}

uint64_t syms_malloc_message(struct jma_syms *sy)
{
	const struct jma_copy *c = syms_jemalloc(sy);
	char name[96];

	if (!sy->message_known && c) {
		snprintf(name, sizeof(name), "%smalloc_message", c->prefix);
		sy->message = syms_find(sy, name, STT_OBJECT, NULL);
		sy->message_known = 1;
	}
	return sy->message;
}

uint64_t syms_func(struct jma_syms *sy, const char *name, uint64_t *size)
{
	return syms_jemalloc(sy) ? syms_find(sy, name, STT_FUNC, size) : 0;
}

uint64_t syms_restorer(struct jma_syms *sy)
{
	if (!sy->restorer_known) {
		int err = att_restorer_find(sy->pid, sy->maps, sy->nmaps, &sy->restorer);

		if (err)
			sy->restorer = 0;
		/* Maps that are no longer the process's (it executed a program
		 * during the search) say nothing of it: searched again on need,
		 * and never kept as "none" (symcache.h). */
		sy->restorer_known = err != -ESTALE;
	}
	return sy->restorer;
}
