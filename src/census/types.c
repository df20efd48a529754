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

#define VT_SLOTS	65536	/* distinct first words remembered (power of 2), 1 MiB */
#define VT_PROBES	16
#define NAME_MAX_LEN	512
#define TYPES_MAX	65536
#define NAME_SLOTS	(2 * TYPES_MAX)	/* names by hash: indexes into out->types */

struct vt_slot {
	uint64_t vt;		/* 0: empty */
	uint32_t type;		/* 0: not a vtable */
};

struct typing {
	struct vt_slot *slots;
	uint32_t *names;	/* NAME_SLOTS, 0 empty */
	size_t cap;		/* of out->types */
};

static int ro_data(const struct cen *c, uint64_t a)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, a);

	return m && m->path && m->perms[0] == 'r' && m->perms[1] == '-' && m->perms[2] == '-';
}

static size_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h & (NAME_SLOTS - 1));
}

/* The index of type @name, made if new; 0 when the table is full. */
static uint32_t type_named(struct cen *c, struct typing *ty, const char *name)
{
	struct jma_census *o = c->out;
	size_t h = name_hash(name);

	for (; ty->names[h]; h = (h + 1) & (NAME_SLOTS - 1))
		if (!strcmp(o->types[ty->names[h]].name, name))
			return ty->names[h];
	/* At most TYPES_MAX of NAME_SLOTS used: the probe above always ends. */
	if (o->ntypes >= TYPES_MAX || cen_grow(&o->types, &ty->cap, o->ntypes + 1, sizeof(*o->types)))
		return 0;
	memset(&o->types[o->ntypes], 0, sizeof(*o->types));
	if (!(o->types[o->ntypes].name = strdup(name)))
		return 0;
	ty->names[h] = (uint32_t)o->ntypes;
	return (uint32_t)o->ntypes++;
}

/* The type whose vtable @vt is, 0 if it is none. */
static uint32_t vtable_type(struct cen *c, struct typing *ty, uint64_t vt)
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
			t = type_named(c, ty, dem);
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
	int err;

	ty.slots = calloc(VT_SLOTS, sizeof(*ty.slots));
	ty.names = calloc(NAME_SLOTS, sizeof(*ty.names));
	c->btype = calloc(c->nblocks ? c->nblocks : 1, sizeof(*c->btype));
	err = !ty.slots || !ty.names || !c->btype ||
	      cen_grow(&o->types, &ty.cap, 1, sizeof(*o->types)) ? -ENOMEM : 0;
	if (!err) {
		memset(o->types, 0, sizeof(*o->types));
		if (!(o->types[0].name = strdup("")))
			err = -ENOMEM;
		else
			o->ntypes = 1;
	}
	if (err)
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	if (!err)
		err = cen_blocks_read(c, 8, "types", type_block, &ty);
	for (size_t i = 0; !err && i < c->nstacks; i++) {
		long t = cen_block_of(c, c->stacks[i]);
		if (t >= 0)
			c->btype[t] = type_named(c, &ty, "(jemalloc: thread cache stacks)");
	}
	free(ty.slots);
	free(ty.names);
	if (err)
		return err;
	for (size_t b = 0; b < c->nblocks; b++) {
		o->types[c->btype[b]].blocks++;
		o->types[c->btype[b]].bytes += c->bsize[b];
	}
	return 0;
}
