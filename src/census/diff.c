/* diff.c -- what grew between two censuses: per size class, type, root and holder; blocks born and died.
 *
 * Tables are matched by their key (a size class, a type's name, a root's
 * name, a holder's path: which holds its address, so a container that moved
 * shows as one gone and one new).  Blocks are matched by address in one
 * merge of the two address-ordered lists: an address live in both with the
 * same size is the same block (a block freed and another allocated in its
 * place between the two is not seen); any other is born (now only) or died
 * (base only), counted by its type and its owner at the census that saw it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach/census_diff.h>

#include "census/census.h"	/* cen_fold_room */

const char *jma_census_owner_name(const struct jma_census *c, uint32_t o)
{
	if (o < c->nroots)
		return c->roots[o].name;
	if (o - c->nroots < c->nholders)
		return c->holders[o - c->nroots].path;
	return o == JMA_CENSUS_OWNER_SHARED ? "(several roots)" :
	       o == JMA_CENSUS_OWNER_OTHER ? "(a root past the table)" : "(no root)";
}

/* A row being matched: which side, its key, its counts. */
struct item {
	const char *name;
	uint64_t size;
	struct jma_census_count k;
	int now;
};

static int cmp_key(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");

	if (c)
		return c;
	if (x->size != y->size)
		return (x->size > y->size) - (x->size < y->size);
	return x->now - y->now;
}

static int same_key(const struct item *x, const struct item *y)
{
	return x->size == y->size && !strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int64_t growth(const struct jma_census_change *r)
{
	return (int64_t)(r->now.bytes - r->base.bytes);
}

static int cmp_growth(const void *a, const void *b)
{
	const struct jma_census_change *x = a, *y = b;
	int64_t gx = growth(x), gy = growth(y);

	if (gx != gy)
		return (gx < gy) - (gx > gy);
	if (x->size != y->size)
		return (x->size > y->size) - (x->size < y->size);
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* The @n items (both sides, mixed) matched by key into *@out, sorted by growth. */
static int match(struct item *v, size_t n, struct jma_census_change **out, size_t *nout)
{
	struct jma_census_change *r = calloc(n ? n : 1, sizeof(*r));
	size_t k = 0;

	if (!r)
		return -ENOMEM;
	if (n)	/* (a tally of nothing has no array) */
		qsort(v, n, sizeof(*v), cmp_key);
	for (size_t i = 0; i < n; i++) {
		struct jma_census_count *side;

		if (!i || !same_key(&v[i], &v[i - 1]))
			r[k++] = (struct jma_census_change){ .name = v[i].name, .size = v[i].size };
		side = v[i].now ? &r[k - 1].now : &r[k - 1].base;
		side->blocks += v[i].k.blocks;
		side->bytes += v[i].k.bytes;
	}
	qsort(r, k, sizeof(*r), cmp_growth);
	*out = r;
	*nout = k;
	return 0;
}

/* Each table of @base and @now, as items; @what picks it. */
enum table { T_SIZES, T_TYPES, T_ROOTS, T_HOLDERS };

static size_t table_len(const struct jma_census *c, enum table t)
{
	return t == T_SIZES ? c->nsizes : t == T_TYPES ? c->ntypes : t == T_ROOTS ? c->nroots :
	       c->nholders;
}

static struct item table_item(const struct jma_census *c, enum table t, size_t i, int now)
{
	switch (t) {
	case T_SIZES:
		return (struct item){ NULL, c->sizes[i].size, { c->sizes[i].blocks, c->sizes[i].bytes }, now };
	case T_TYPES:
		return (struct item){ i ? c->types[i].name : NULL, 0,
				      { c->types[i].blocks, c->types[i].bytes }, now };
	case T_ROOTS:
		return (struct item){ c->roots[i].name, 0, { c->roots[i].blocks, c->roots[i].bytes }, now };
	default:
		return (struct item){ c->holders[i].path, 0,
				      { c->holders[i].blocks, c->holders[i].bytes }, now };
	}
}

static int diff_table(const struct jma_census *base, const struct jma_census *now, enum table t,
		      struct jma_census_change **out, size_t *nout)
{
	size_t nb = table_len(base, t), n = nb + table_len(now, t);
	struct item *v = malloc((n ? n : 1) * sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = i < nb ? table_item(base, t, i, 0) : table_item(now, t, i - nb, 1);
	err = match(v, n, out, nout);
	free(v);
	return err;
}

/* Items of one side being counted (cen_fold_room keeps them few). */
struct bag {
	struct item *v;
	size_t n, cap;
};

static void item_sum(void *into, const void *from)
{
	struct item *x = into;
	const struct item *y = from;

	x->k.blocks += y->k.blocks;
	x->k.bytes += y->k.bytes;
}

static int bag_add(struct bag *g, struct item x)
{
	if (cen_fold_room(&g->v, &g->n, &g->cap, sizeof(*g->v), cmp_key, item_sum))
		return -ENOMEM;
	g->v[g->n++] = x;
	return 0;
}

/* Born or died blocks of one census, counted by type and owner. */
struct tally {
	const struct jma_census *c;
	struct bag types, owners;	/* as items of one side (now = 1) */
};

static int tally_add(struct tally *t, const struct jma_census_block *b)
{
	const struct jma_census *c = t->c;
	int typed = b->type && b->type < c->ntypes;
	/* Untyped blocks by their size, as the census's type table prints them. */
	int err = bag_add(&t->types, (struct item){ typed ? c->types[b->type].name : NULL,
						    typed ? 0 : b->size, { 1, b->size }, 1 });

	if (!err && c->owners)
		err = bag_add(&t->owners, (struct item){ jma_census_owner_name(c, b->owner), 0,
							 { 1, b->size }, 1 });
	return err;
}

/* Change rows with the tally's counts on side @now (1: born) or base (0: died). */
static int tally_rows(struct item *v, size_t n, int now, struct jma_census_change **out,
		      size_t *nout)
{
	int err = match(v, n, out, nout);

	for (size_t i = 0; !err && !now && i < *nout; i++) {
		(*out)[i].base = (*out)[i].now;
		(*out)[i].now = (struct jma_census_count){ 0, 0 };
	}
	if (!err && !now)
		qsort(*out, *nout, sizeof(**out), cmp_growth);
	return err;
}

/* One block of the merge, born (in @now) or died (in @base): listed and tallied. */
static int one(struct jma_census_diff *d, int born, struct tally *t, const struct jma_census_block *b,
	       size_t n)
{
	struct jma_census_count *k = born ? &d->born : &d->died;
	uint32_t **list = born ? &d->born_list : &d->died_list;

	/* The list doubles at powers of two. */
	if (k->blocks >= 1024 && !(k->blocks & (k->blocks - 1))) {
		uint32_t *v = realloc(*list, 2 * k->blocks * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*list = v;
	}
	(*list)[k->blocks] = (uint32_t)n;
	k->blocks++;
	k->bytes += b->size;
	return tally_add(t, b);
}

/* Both lists merged by address, each a cursor's blocks. */
static int born_died(struct jma_census_diff *d, const struct jma_census *base,
		     const struct jma_census *now)
{
	struct tally born = { .c = now }, died = { .c = base };
	struct jma_census_cursor kb = { 0 }, kn = { 0 };
	struct jma_census_block b, n;
	int err = 0, hb, hn;

	d->born_list = malloc(1024 * sizeof(*d->born_list));
	d->died_list = malloc(1024 * sizeof(*d->died_list));
	if (!d->born_list || !d->died_list)
		return -ENOMEM;

	hb = jma_census_next(base, &kb, &b);
	hn = jma_census_next(now, &kn, &n);
	while (!err && (hb || hn)) {
		if (hb && hn && b.addr == n.addr && b.size == n.size) {
			hb = jma_census_next(base, &kb, &b);
			hn = jma_census_next(now, &kn, &n);
		} else if (hn && (!hb || n.addr <= b.addr)) {
			/* Born: new here, or in the place of a block of another size. */
			err = one(d, 1, &born, &n, kn.n - 1);
			if (!err && hb && b.addr == n.addr) {
				err = one(d, 0, &died, &b, kb.n - 1);
				hb = jma_census_next(base, &kb, &b);
			}
			hn = jma_census_next(now, &kn, &n);
		} else {
			err = one(d, 0, &died, &b, kb.n - 1);
			hb = jma_census_next(base, &kb, &b);
		}
	}
	if (!err)
		err = tally_rows(born.types.v, born.types.n, 1, &d->born_types, &d->nborn_types);
	if (!err)
		err = tally_rows(born.owners.v, born.owners.n, 1, &d->born_owners, &d->nborn_owners);
	if (!err)
		err = tally_rows(died.types.v, died.types.n, 0, &d->died_types, &d->ndied_types);
	if (!err)
		err = tally_rows(died.owners.v, died.owners.n, 0, &d->died_owners, &d->ndied_owners);
	free(born.types.v);
	free(born.owners.v);
	free(died.types.v);
	free(died.owners.v);
	return err;
}

/* What makes the comparison doubtful; 1 when addresses cannot be compared. */
static int doubts(struct jma_census_diff *d, const struct jma_census *base,
		  const struct jma_census_meta *bm, const struct jma_census *now,
		  const struct jma_census_meta *nm)
{
	size_t used = 0;
	int apart = 0;

#define SAY(...) (used += (size_t)snprintf(d->warn + used, used < sizeof(d->warn) ? \
		  sizeof(d->warn) - used : 0, __VA_ARGS__), used = used < sizeof(d->warn) ? used : \
		  sizeof(d->warn))
	if (bm && nm && bm->exec_mark && nm->exec_mark && bm->exec_mark != nm->exec_mark) {
		SAY("%sthe base is of another run of a program (process %d then, %d now): blocks are "
		    "not compared by address", used ? "; " : "", (int)bm->pid, (int)nm->pid);
		apart = 1;
	}
	if (bm && nm && bm->time && nm->time && bm->time > nm->time)
		SAY("%sthe base was taken after this census", used ? "; " : "");
	if (!apart && (!base->blocks) != (!now->blocks))
		SAY("%sblocks born since the base need addresses in both (a snapshot saved with "
		    "its blocks, and a census that keeps its list)", used ? "; " : "");
	if ((base->ntypes == 0) != (now->ntypes == 0))
		SAY("%sonly one of the two has types (by vtable)", used ? "; " : "");
	if ((base->nroots == 0) != (now->nroots == 0))
		SAY("%sonly one of the two has owners (what each root retains)", used ? "; " : "");
#undef SAY
	return apart;
}

int jma_census_diff(const struct jma_census *base, const struct jma_census_meta *bm,
		    const struct jma_census *now, const struct jma_census_meta *nm,
		    struct jma_census_diff **out)
{
	struct jma_census_diff *d = calloc(1, sizeof(*d));
	int err, apart;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->base = base->live;
	d->now = now->live;
	apart = doubts(d, base, bm, now, nm);
	err = diff_table(base, now, T_SIZES, &d->sizes, &d->nsizes);
	if (!err && (base->ntypes || now->ntypes))
		err = diff_table(base, now, T_TYPES, &d->types, &d->ntypes);
	if (!err && (base->nroots || now->nroots))
		err = diff_table(base, now, T_ROOTS, &d->roots, &d->nroots);
	if (!err && (base->nholders || now->nholders))
		err = diff_table(base, now, T_HOLDERS, &d->holders, &d->nholders);
	if (!err && !apart && base->blocks && now->blocks) {
		d->blocks = 1;
		err = born_died(d, base, now);
	}
	if (err) {
		jma_census_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void jma_census_diff_free(struct jma_census_diff *d)
{
	if (!d)
		return;
	free(d->sizes);
	free(d->types);
	free(d->roots);
	free(d->holders);
	free(d->born_types);
	free(d->born_owners);
	free(d->died_types);
	free(d->died_owners);
	free(d->born_list);
	free(d->died_list);
	free(d);
}
