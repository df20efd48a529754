/* types.c -- a block's C++ type, from the vtable its first word points to.
 *
 * An object with virtual functions starts with a pointer into its class's
 * vtable (after offset-to-top and the typeinfo pointer, Itanium C++ ABI).
 * So: first word in a module's read-only data (a file mapping, r--p: RELRO
 * .data.rel.ro), the word before it (vtable[-1]) a typeinfo whose second word
 * points to the mangled name (in .rodata: r--p, or r-xp on arm64) ("N4shop5OrderE", _ZTS without its prefix),
 * which demangles with "_Z" in front.  Vtable addresses seen are kept (most
 * blocks share a few): a word that is no vtable costs its reads once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"
#include "symbols/demangle.h"

#define VT_SLOTS	65536	/* distinct first words remembered (power of 2), 1 MiB */
#define VT_PROBES	16
#define NAME_MAX_LEN	512
#define TYPES_MAX	65536

struct vt_slot {
	uint64_t vt;		/* 0: empty */
	uint32_t type;		/* 0: not a vtable */
};

struct typing {
	struct vt_slot *slots;
	struct heap_strtab names;	/* id = type index; [0] "" (untyped) */
};

/* In a module's read-only data (r--p); with @text_ok its text too (r-xp):
 * arm64's linker keeps .rodata, the type names, in the text segment (x86_64's
 * -z separate-code gives it a segment of its own). */
static int ro_data(const struct cen *c, uint64_t a, int text_ok)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, a);

	return m && m->path && m->perms[0] == 'r' && m->perms[1] == '-' &&
	       (m->perms[2] == '-' || (text_ok && m->perms[2] == 'x'));
}

/* The index of type @name, made if new; 0 when there are too many. */
static uint32_t type_named(struct typing *ty, const char *name)
{
	uint32_t id = ty->names.n < TYPES_MAX ? heap_str(&ty->names, name) : 0;

	return id == UINT32_MAX ? 0 : id;
}

/* The type whose vtable @vt is, 0 if it is none. */
static uint32_t vtable_type(struct cen *c, struct typing *ty, uint64_t vt)
{
	uint64_t ti, nm;
	char *str = NULL, *mangled, *dem;
	int trunc = 0;
	uint32_t t = 0;

	if (cen_read(c, vt - 8, &ti, 8) || !cen_ptr_ok(ti) || ti % 8 ||
	    cen_read(c, ti + 8, &nm, 8) || !cen_ptr_ok(nm) || !ro_data(c, nm, 1))
		return 0;
	if (jma_read_str(c->s, nm, NAME_MAX_LEN, &str, &trunc) || trunc || !str[0]) {
		free(str);
		return 0;
	}
	mangled = malloc(strlen(str) + 3);
	if (mangled) {
		strcpy(mangled, "_Z");
		strcat(mangled, str);
		dem = sym_demangle(mangled);
		if (dem) {
			t = type_named(ty, dem);
			free(dem);
		}
		free(mangled);
	}
	free(str);
	return t;
}

static int type_block(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct typing *ty = arg;
	uint64_t vt;
	size_t h;

	c->btype[b] = 0;
	/* Most first words are no pointer into read-only data: one search of
	 * the mappings settles them, with no table to fill. */
	if (off || !nw || w[0] % 8 || !cen_ptr_ok(w[0]) || !ro_data(c, w[0], 0))
		return 0;
	vt = w[0];
	h = (size_t)((vt >> 3) * 0x9e3779b97f4a7c15ULL >> 48) & (VT_SLOTS - 1);
	for (unsigned probe = 0; probe < VT_PROBES; probe++, h = (h + 1) & (VT_SLOTS - 1)) {
		if (ty->slots[h].vt == vt) {
			c->btype[b] = ty->slots[h].type;
			return 0;
		}
		if (!ty->slots[h].vt) {
			ty->slots[h].vt = vt;
			ty->slots[h].type = vtable_type(c, ty, vt);
			c->btype[b] = ty->slots[h].type;
			return 0;
		}
	}
	c->btype[b] = vtable_type(c, ty, vt);	/* its neighbourhood is full: not remembered */
	return 0;
}

int cen_types(struct cen *c)
{
	struct typing ty = { 0 };
	struct jma_census *o = c->out;
	int err = 0;

	ty.slots = calloc(VT_SLOTS, sizeof(*ty.slots));
	c->btype = calloc(c->nblocks ? c->nblocks : 1, sizeof(*c->btype));
	if (!ty.slots || !c->btype || heap_strtab_init(&ty.names))
		err = jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if (!err)
		err = cen_blocks_read(c, 8, "types", type_block, &ty);
	for (size_t i = 0; !err && i < c->nstacks; i++) {
		long t = cen_block_of(c, c->stacks[i]);
		if (t >= 0)
			c->btype[t] = type_named(&ty, "(jemalloc: thread cache stacks)");
	}
	free(ty.slots);
	if (!err && !(o->types = calloc(ty.names.n, sizeof(*o->types))))
		err = jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if (err) {
		heap_strtab_free(&ty.names);
		return err;
	}
	/* The names pass to the result. */
	for (size_t i = 0; i < ty.names.n; i++) {
		o->types[i].name = ty.names.str[i];
		ty.names.str[i] = NULL;
	}
	o->ntypes = ty.names.n;
	heap_strtab_free(&ty.names);
	for (size_t b = 0; b < c->nblocks; b++) {
		o->types[c->btype[b]].blocks++;
		o->types[c->btype[b]].bytes += c->bsize[b];
	}
	return 0;
}
