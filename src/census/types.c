/* types.c -- a block's C++ type, from the vtable its first word points to.
 *
 * An object with virtual functions starts with a pointer into its class's
 * vtable (after offset-to-top and the typeinfo pointer, Itanium C++ ABI).
 * So: first word in a module's read-only data (a file mapping, r--p: RELRO
 * .data.rel.ro), the word before it (vtable[-1]) a typeinfo whose second word
 * points to the mangled name ("N4shop5OrderE", _ZTS without its prefix),
 * which demangles with "_Z" in front.  Vtable addresses seen are kept (most
 * blocks share a few): a word that is no vtable costs its reads once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"
#include "symbols/demangle.h"

#define VT_SLOTS	4096	/* distinct first words remembered (power of 2) */
#define VT_PROBES	16
#define NAME_MAX_LEN	512
#define TYPES_MAX	65536

struct vt_slot {
	uint64_t vt;		/* 0: empty */
	uint32_t type;		/* 0: not a vtable */
};

struct typing {
	struct vt_slot *slots;
};

static int ro_data(const struct cen *c, uint64_t a)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, a);

	return m && m->path && m->perms[0] == 'r' && m->perms[1] == '-' && m->perms[2] == '-';
}

static uint32_t type_named(struct cen *c, const char *name)
{
	struct jma_census *o = c->out;
	struct jma_census_type *t;

	for (size_t i = 1; i < o->ntypes; i++)
		if (!strcmp(o->types[i].name, name))
			return (uint32_t)i;
	if (o->ntypes >= TYPES_MAX || !(t = realloc(o->types, (o->ntypes + 1) * sizeof(*t))))
		return 0;
	o->types = t;
	memset(&t[o->ntypes], 0, sizeof(*t));
	if (!(t[o->ntypes].name = strdup(name)))
		return 0;
	return (uint32_t)o->ntypes++;
}

/* The type whose vtable @vt is, 0 if it is none. */
static uint32_t vtable_type(struct cen *c, uint64_t vt)
{
	uint64_t ti, nm;
	char *str = NULL, *mangled, *dem;
	int trunc = 0;
	uint32_t t = 0;

	if (cen_read(c, vt - 8, &ti, 8) || !cen_ptr_ok(ti) || ti % 8 ||
	    cen_read(c, ti + 8, &nm, 8) || !cen_ptr_ok(nm) || !ro_data(c, nm))
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
			t = type_named(c, dem);
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
	if (off || !nw || w[0] % 8 || !cen_ptr_ok(w[0]) || !ro_data(c, w[0]))
		return 0;
	vt = w[0];
	h = (size_t)((vt >> 3) * 0x9e3779b97f4a7c15ULL >> 52) & (VT_SLOTS - 1);
	for (unsigned probe = 0; probe < VT_PROBES; probe++, h = (h + 1) & (VT_SLOTS - 1)) {
		if (ty->slots[h].vt == vt) {
			c->btype[b] = ty->slots[h].type;
			return 0;
		}
		if (!ty->slots[h].vt) {
			ty->slots[h].vt = vt;
			ty->slots[h].type = vtable_type(c, vt);
			c->btype[b] = ty->slots[h].type;
			return 0;
		}
	}
	c->btype[b] = vtable_type(c, vt);	/* its neighbourhood is full: not remembered */
	return 0;
}

int cen_types(struct cen *c)
{
	struct typing ty;
	struct jma_census *o = c->out;
	int err;

	ty.slots = calloc(VT_SLOTS, sizeof(*ty.slots));
	c->btype = calloc(c->nblocks ? c->nblocks : 1, sizeof(*c->btype));
	o->types = calloc(1, sizeof(*o->types));
	if (!ty.slots || !c->btype || !o->types || !(o->types[0].name = strdup(""))) {
		free(ty.slots);
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	o->ntypes = 1;
	err = cen_blocks_read(c, 8, "types", type_block, &ty);
	free(ty.slots);
	if (err)
		return err;
	for (size_t i = 0; i < c->nstacks; i++) {
		long t = cen_block_of(c, c->stacks[i]);
		if (t >= 0)
			c->btype[t] = type_named(c, "(jemalloc: thread cache stacks)");
	}
	for (size_t b = 0; b < c->nblocks; b++) {
		o->types[c->btype[b]].blocks++;
		o->types[c->btype[b]].bytes += c->bsize[b];
	}
	return 0;
}
