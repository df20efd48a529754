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

/* What the pass learnt, kept to type a block again (leak examples, the
 * blocks that retain most) and counted per type; no type is kept per block
 * unless a list of them is asked for (16 bytes of our memory per block is
 * the budget of the whole analysis, issue 42). */
struct cen_typing {
	struct vt_slot *slots;
	struct heap_strtab names;	/* id = type index; [0] "" (untyped) */
	uint64_t *blocks, *bytes;	/* per type */
	size_t cap;
	struct jma_census_size *untyped;	/* untyped blocks by usable size */
	size_t nuntyped, capuntyped;
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
static uint32_t type_named(struct cen_typing *ty, const char *name)
{
	uint32_t id = ty->names.n < TYPES_MAX ? heap_str(&ty->names, name) : 0;

	if (id == UINT32_MAX)
		return 0;
	if (id >= ty->cap) {
		size_t cap = ty->cap, cap2 = ty->cap;
		if (cen_grow(&ty->blocks, &cap, id + 1, sizeof(*ty->blocks)) ||
		    cen_grow(&ty->bytes, &cap2, id + 1, sizeof(*ty->bytes)))
			return 0;
		memset(ty->blocks + ty->cap, 0, (cap - ty->cap) * sizeof(*ty->blocks));
		memset(ty->bytes + ty->cap, 0, (cap - ty->cap) * sizeof(*ty->bytes));
		ty->cap = cap;
	}
	return id;
}

/* The type whose vtable @vt is, 0 if it is none. */
static uint32_t vtable_type(struct cen *c, struct cen_typing *ty, uint64_t vt)
{
	uint64_t ti, nm;
	char *str = NULL, *mangled, *dem;
	int trunc = 0;
	uint32_t t = 0;

	if (cen_read(c, vt - 8, &ti, 8) || !cen_ptr_ok(ti) || ti % 8 ||
	    cen_read(c, ti + 8, &nm, 8) || !cen_ptr_ok(nm) || !ro_data(c, nm, 1))
		return 0;
	if (sess_read_str(c->s, nm, NAME_MAX_LEN, &str, &trunc) || trunc || !str[0]) {
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

/* The type of a block whose first word is @w0 (0: none). */
static uint32_t type_of_word(struct cen *c, struct cen_typing *ty, uint64_t w0)
{
	size_t h;

	/* Most first words are no pointer into read-only data: one search of
	 * the mappings settles them, with no table to fill. */
	if (w0 % 8 || !cen_ptr_ok(w0) || !ro_data(c, w0, 0))
		return 0;
	h = (size_t)((w0 >> 3) * 0x9e3779b97f4a7c15ULL >> 48) & (VT_SLOTS - 1);
	for (unsigned probe = 0; probe < VT_PROBES; probe++, h = (h + 1) & (VT_SLOTS - 1)) {
		if (ty->slots[h].vt == w0)
			return ty->slots[h].type;
		if (!ty->slots[h].vt) {
			ty->slots[h].vt = w0;
			ty->slots[h].type = vtable_type(c, ty, w0);
			return ty->slots[h].type;
		}
	}
	return vtable_type(c, ty, w0);	/* its neighbourhood is full: not remembered */
}

static int cmp_size(const void *a, const void *b)
{
	const struct jma_census_size *x = a, *y = b;
	return (x->size > y->size) - (x->size < y->size);
}

/* The untyped rows sorted by size, rows of one size merged. */
static void merge_untyped(struct cen_typing *ty)
{
	size_t n = 0;

	if (!ty->nuntyped)
		return;
	qsort(ty->untyped, ty->nuntyped, sizeof(*ty->untyped), cmp_size);
	for (size_t i = 0; i < ty->nuntyped; i++) {
		if (n && ty->untyped[n - 1].size == ty->untyped[i].size) {
			ty->untyped[n - 1].blocks += ty->untyped[i].blocks;
			ty->untyped[n - 1].bytes += ty->untyped[i].bytes;
		} else {
			ty->untyped[n++] = ty->untyped[i];
		}
	}
	ty->nuntyped = n;
}

/* An untyped block of @size bytes: a row per usable size.  Blocks come by
 * address, runs of one size mostly: a new row when the size changes, the
 * rows merged when they fill their array (and at the end). */
static int count_untyped(struct cen_typing *ty, uint64_t size)
{
	struct jma_census_size *u = ty->nuntyped ? &ty->untyped[ty->nuntyped - 1] : NULL;

	if (!u || u->size != size) {
		if (ty->nuntyped == ty->capuntyped && ty->nuntyped > 1024)
			merge_untyped(ty);
		if (cen_grow(&ty->untyped, &ty->capuntyped, ty->nuntyped + 1, sizeof(*ty->untyped)))
			return -ENOMEM;
		u = &ty->untyped[ty->nuntyped++];
		*u = (struct jma_census_size){ .size = size };
	}
	u->blocks++;
	u->bytes += size;
	return 0;
}

static int count(struct cen *c, struct cen_typing *ty, size_t b, uint32_t t)
{
	uint64_t size = cen_block_size(&c->ix, b);

	if (c->btype)
		c->btype[b] = t;
	if (!t)
		return count_untyped(ty, size);
	ty->blocks[t]++;
	ty->bytes[t] += size;
	return 0;
}

static int type_block(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct cen_typing *ty = arg;

	if (off)
		return 0;
	/* A thread cache's stack: its first word is a stale pointer. */
	if (cen_is_stack(c, b))
		return count(c, ty, b, 1);
	return count(c, ty, b, nw ? type_of_word(c, ty, w[0]) : 0);
}

uint32_t cen_type_of(struct cen *c, size_t b)
{
	uint64_t w0;

	if (!c->typing)
		return 0;
	if (c->btype)
		return c->btype[b];
	if (cen_is_stack(c, b))
		return 1;
	if (cen_read(c, cen_block_addr(&c->ix, b), &w0, 8))
		return 0;
	return type_of_word(c, c->typing, w0);
}

int cen_types(struct cen *c)
{
	struct cen_typing *ty = calloc(1, sizeof(*ty));
	int err = 0;

	c->typing = ty;
	if (!ty || !(ty->slots = calloc(VT_SLOTS, sizeof(*ty->slots))) || heap_strtab_init(&ty->names) ||
	    type_named(ty, "(jemalloc: thread cache stacks)") != 1)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if ((c->o->flags & JMA_CENSUS_LIST) && !(c->btype = calloc(c->ix.nblocks ? c->ix.nblocks : 1,
								   sizeof(*c->btype))))
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	err = cen_blocks_read(c, &c->ix, NULL, 8, "types", type_block, ty);
	if (err == -ENOMEM)
		err = sess_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	return err;
}

static int cmp_type(const void *a, const void *b, void *arg)
{
	const struct jma_census_type *t = arg, *x = &t[*(const uint32_t *)a], *y = &t[*(const uint32_t *)b];
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

int cen_types_finish(struct cen *c, uint32_t **where)
{
	struct cen_typing *ty = c->typing;
	struct jma_census *o = c->out;
	uint32_t *order;
	size_t n;

	*where = NULL;
	if (!ty)
		return 0;
	merge_untyped(ty);
	o->untyped = ty->untyped;
	o->nuntyped = n = ty->nuntyped;
	ty->untyped = NULL;
	/* [0] (untyped) stays first, the rest by bytes; *where[old] = new. */
	o->types = calloc(ty->names.n, sizeof(*o->types));
	order = malloc(ty->names.n * sizeof(*order));
	*where = malloc(ty->names.n * sizeof(**where));
	if (!o->types || !order || !*where) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ty->names.n; i++) {
		o->types[i].name = ty->names.str[i];
		ty->names.str[i] = NULL;
		o->types[i].blocks = i ? ty->blocks[i] : 0;
		o->types[i].bytes = i ? ty->bytes[i] : 0;
		order[i] = (uint32_t)i;
	}
	for (size_t i = 0; i < n; i++) {
		o->types[0].blocks += o->untyped[i].blocks;
		o->types[0].bytes += o->untyped[i].bytes;
	}
	o->ntypes = ty->names.n;
	qsort_r(order + 1, o->ntypes - 1, sizeof(*order), cmp_type, o->types);
	{
		struct jma_census_type *t = malloc(o->ntypes * sizeof(*t));
		if (!t) {
			free(order);
			return -ENOMEM;
		}
		for (size_t k = 0; k < o->ntypes; k++) {
			t[k] = o->types[order[k]];
			(*where)[order[k]] = (uint32_t)k;
		}
		free(o->types);
		o->types = t;
	}
	free(order);
	return 0;
}

void cen_types_free(struct cen *c)
{
	struct cen_typing *ty = c->typing;

	if (!ty)
		return;
	free(ty->slots);
	heap_strtab_free(&ty->names);
	free(ty->blocks);
	free(ty->bytes);
	free(ty->untyped);
	free(ty);
	c->typing = NULL;
}
