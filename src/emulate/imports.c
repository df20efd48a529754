/* imports.c -- GOT slots of the jemalloc module, redirected to service stubs (image only). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emulate/imports.h"
#include "emulate/services.h"

/* Visit the defined functions of the module's .symtab that have a service;
 * @fn returns <0 to stop. */
static int each_serviced_function(Elf *elf, int (*fn)(void *arg, const char *name,
						       const GElf_Sym *sym), void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int t, err;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			t = GELF_ST_TYPE(sym.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    emu_service_find(name) < 0)
				continue;
			if ((err = fn(arg, name, &sym)) < 0)
				return err;
		}
	}
	return 0;
}

struct irel {
	uint64_t resolver;
	const char *name;
};

static int find_resolver(void *arg, const char *name, const GElf_Sym *sym)
{
	struct irel *ir = arg;

	if (GELF_ST_TYPE(sym->st_info) == STT_GNU_IFUNC && sym->st_value == ir->resolver)
		ir->name = name;
	return 0;
}

/* A static libc's ifunc slot (IRELATIVE: the addend is the resolver): the
 * slot of a serviced function gets its stub. */
static int redirect_irelative(struct emu_cpu *c, Elf *elf, const GElf_Rela *r, uint64_t bias,
			      char *msg, size_t len)
{
	struct irel ir = { (uint64_t)r->r_addend, NULL };
	uint64_t to;

	each_serviced_function(elf, find_resolver, &ir);
	if (!ir.name)
		return 0;
	if (!(to = emu_cpu_stub(c, ir.name))) {
		snprintf(msg, len, "too many imported functions");
		return -E2BIG;
	}
	return emu_image_write(&c->im, bias + r->r_offset, &to, sizeof(to)) ? -EFAULT : 1;
}

struct direct {
	struct emu_cpu *c;
	uint64_t bias;
	int n;
};

static int redirect_direct(void *arg, const char *name, const GElf_Sym *sym)
{
	struct direct *d = arg;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	if (emu_cpu_redirect(d->c, d->bias + sym->st_value, name))
		return -E2BIG;
	d->n++;
	return 0;
}

static int redirect_one(struct emu_cpu *c, Elf *elf, const GElf_Shdr *symsh, Elf_Data *syms,
			const GElf_Rela *r, uint64_t bias, char *msg, size_t len)
{
	const struct att_machine *a = c->arch->m;
	unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
	uint64_t slot = bias + r->r_offset, cur, to;
	const char *name;
	GElf_Sym sym;

	if (type == a->rel_irelative)
		return redirect_irelative(c, elf, r, bias, msg, len);
	if (type != a->rel_jump_slot && type != a->rel_glob_dat)
		return 0;
	if (!gelf_getsym(syms, (int)GELF_R_SYM(r->r_info), &sym))
		return 0;
	if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
		return 0;
	name = elf_strptr(elf, symsh->sh_link, sym.st_name);
	if (!name || !name[0])
		return 0;
	if (emu_image_read(&c->im, slot, &cur, sizeof(cur))) {
		snprintf(msg, len, "GOT slot of %s at 0x%llx is not readable", name,
			 (unsigned long long)slot);
		return -EFAULT;
	}
	if (sym.st_shndx != SHN_UNDEF) {
		/* Our own function: only fix a slot lazy binding left unresolved. */
		if (type != a->rel_jump_slot || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    cur == bias + sym.st_value)
			return 0;
		to = bias + sym.st_value;
	} else {
		if (!cur)	/* an unresolved weak reference stays NULL */
			return 0;
		if (!(to = emu_cpu_stub(c, name))) {
			snprintf(msg, len, "too many imported functions");
			return -E2BIG;
		}
	}
	return emu_image_write(&c->im, slot, &to, sizeof(to)) ? -EFAULT : 1;
}

int emu_imports_redirect(struct emu_cpu *c, Elf *elf, uint64_t bias, char *msg, size_t len)
{
	Elf_Scn *scn = NULL;
	int n = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *syms;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(data = elf_getdata(scn, NULL)))
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || !(syms = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			int err;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			err = redirect_one(c, elf, &symsh, syms, &r, bias, msg, len);
			if (err < 0) {
				if (err == -EFAULT && !msg[0])
					snprintf(msg, len, "writing a GOT slot in the image");
				return err;
			}
			n += err;
		}
	}
	/* A static libc: its functions are called directly, not through a slot. */
	{
		struct direct d = { c, bias, 0 };
		int err = each_serviced_function(elf, redirect_direct, &d);
		if (err) {
			snprintf(msg, len, "too many functions to redirect");
			return err;
		}
		n += d.n;
	}
	return n;
}
