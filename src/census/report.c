/* report.c -- a census, or the difference of two, as JSON or as a pprof profile.
 *
 * JSON: the document `census --json` prints (and `serve`'s /debug/census),
 * or a difference's own.  Strings come from the target (type names, symbols):
 * every byte outside printable ASCII is written as \u00XX, so the document
 * is valid whatever they hold.
 *
 * pprof: one sample per type (untyped blocks by usable size; size classes
 * when there are no types), with its owner -- the root or holder retaining
 * it -- as the caller when owners are known, so `go tool pprof -top` lists
 * types and `-peek`/`-tree` owners; inuse_objects and inuse_space.  Labels,
 * not addresses, identify a sample, so `go tool pprof -diff_base` compares
 * two censuses; given a base, the profile is the difference itself (values
 * may be negative), on the rows both censuses can tell apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach/census_diff.h>

#include "census/census.h"	/* cen_fold */
#include "heap/heap.h"	/* heap_out, heap_strtab, heap_gzip */
#include "profile.pb-c.h"

/* --- JSON --------------------------------------------------------------------- */

static void jstr(struct heap_out *o, const char *s)
{
	heap_out_write(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			heap_out_printf(o, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			heap_out_printf(o, "\\u%04x", *p);
		else
			heap_out_write(o, p, 1);
	}
	heap_out_write(o, "\"", 1);
}

static void jcount(struct heap_out *o, const char *name, const struct jma_census_count *k)
{
	heap_out_printf(o, ", \"%s\": {\"blocks\": %llu, \"bytes\": %llu}", name,
			(unsigned long long)k->blocks, (unsigned long long)k->bytes);
}

static size_t upto(size_t n, unsigned top)
{
	return top && n > top ? top : n;
}

static void json_meta(struct heap_out *o, const struct jma_census_meta *m)
{
	if (!m)
		return;
	if (m->pid > 0)
		heap_out_printf(o, ", \"pid\": %d", (int)m->pid);
	if (m->time > 0)
		heap_out_printf(o, ", \"time\": %.6f", m->time);
}

static void json_tables(struct heap_out *o, const struct jma_census *c)
{
	heap_out_printf(o, ", \"sizes\": [");
	for (size_t i = 0; i < c->nsizes; i++)
		heap_out_printf(o, "%s{\"size\": %llu, \"blocks\": %llu, \"bytes\": %llu}", i ? ", " : "",
				(unsigned long long)c->sizes[i].size, (unsigned long long)c->sizes[i].blocks,
				(unsigned long long)c->sizes[i].bytes);
	heap_out_printf(o, "]");
	if (c->ntypes) {
		heap_out_printf(o, ", \"types\": [");
		for (size_t i = 0; i < c->ntypes; i++) {
			heap_out_printf(o, "%s{\"type\": ", i ? ", " : "");
			if (i)
				jstr(o, c->types[i].name);
			else
				heap_out_printf(o, "null");
			heap_out_printf(o, ", \"blocks\": %llu, \"bytes\": %llu}",
					(unsigned long long)c->types[i].blocks,
					(unsigned long long)c->types[i].bytes);
		}
		heap_out_printf(o, "]");
	}
}

static void json_leaks(struct heap_out *o, const struct jma_census *c)
{
	jcount(o, "anchored", &c->anchored);
	jcount(o, "jemalloc_own", &c->jemalloc_own);
	jcount(o, "leaked", &c->leaked);
	jcount(o, "unreferenced", &c->unreferenced);
	jcount(o, "gone", &c->gone);
	heap_out_printf(o, ", \"reads\": {\"live\": %s, \"unreferenced_first\": %llu, \"confirmed\": %llu, "
			"\"confirm_stop_ns\": %llu, \"found_again\": %llu, \"reread_blocks\": %llu, "
			"\"reread_stopped_bytes\": %llu}", c->stop_ns ? "true" : "false",
			(unsigned long long)c->rechecked, (unsigned long long)c->confirmed,
			(unsigned long long)c->confirm_stop_ns, (unsigned long long)c->found_again,
			(unsigned long long)c->reread_blocks, (unsigned long long)c->reread_stopped);
	heap_out_printf(o, ", \"examples\": [");
	for (unsigned i = 0; i < c->nexamples; i++) {
		heap_out_printf(o, "%s{\"addr\": \"0x%llx\", \"size\": %llu, \"head\": \"", i ? ", " : "",
				(unsigned long long)c->examples[i].addr,
				(unsigned long long)c->examples[i].size);
		for (unsigned k = 0; k < c->examples[i].nhead && k < sizeof(c->examples[i].head); k++)
			heap_out_printf(o, "%02x", c->examples[i].head[k]);
		heap_out_printf(o, "\"}");
	}
	heap_out_printf(o, "]");
}

static void json_roots(struct heap_out *o, const struct jma_census *c, unsigned top)
{
	heap_out_printf(o, ", \"roots\": [");
	for (size_t i = 0; i < upto(c->nroots, top); i++) {
		const struct jma_census_root *r = &c->roots[i];

		/* A shared block: how it is reached, and which block it is. */
		heap_out_printf(o, "%s{\"%s\": ", i ? ", " : "", r->shared ? "path" : "root");
		jstr(o, r->name);
		if (r->shared)
			heap_out_printf(o, ", \"addr\": \"0x%llx\", \"size\": %llu",
					(unsigned long long)r->addr, (unsigned long long)r->size);
		heap_out_printf(o, ", \"blocks\": %llu, \"bytes\": %llu}", (unsigned long long)r->blocks,
				(unsigned long long)r->bytes);
	}
	heap_out_printf(o, "], \"holders\": [");
	for (size_t i = 0; i < upto(c->nholders, top); i++) {
		const struct jma_census_holder *h = &c->holders[i];

		heap_out_printf(o, "%s{\"addr\": \"0x%llx\", \"size\": %llu, \"blocks\": %llu, "
				"\"bytes\": %llu, \"path\": ", i ? ", " : "", (unsigned long long)h->addr,
				(unsigned long long)h->size, (unsigned long long)h->blocks,
				(unsigned long long)h->bytes);
		jstr(o, h->path);
		heap_out_printf(o, "}");
	}
	heap_out_printf(o, "]");
}

static void json_census(struct heap_out *o, const struct jma_census *c,
			const struct jma_census_report_opts *ro)
{
	heap_out_printf(o, "{\"version\": ");
	jstr(o, c->version);
	heap_out_printf(o, ", \"layout\": ");
	jstr(o, c->layout);
	heap_out_printf(o, ", \"map\": \"0x%llx\", \"map_how\": ", (unsigned long long)c->map_addr);
	jstr(o, c->map_how);
	json_meta(o, ro->meta);
	heap_out_printf(o, ", \"blocks\": %llu, \"bytes\": %llu", (unsigned long long)c->live.blocks,
			(unsigned long long)c->live.bytes);
	jcount(o, "thread_cached", &c->cached);
	if (c->explicit_known)
		jcount(o, "explicit_cached", &c->explicit_cached);
	heap_out_printf(o, ", \"threads\": %u, \"thread_caches_read\": %s, \"extents\": %llu, "
			"\"slabs\": %llu", c->threads, c->threads ? "true" : "false",
			(unsigned long long)c->extents, (unsigned long long)c->slabs);
	if (ro->have_allocated)
		heap_out_printf(o, ", \"stats_allocated\": %llu", (unsigned long long)ro->allocated);
	heap_out_printf(o, ", \"stop_ns\": %llu, \"meta_ns\": %llu, \"total_ns\": %llu",
			(unsigned long long)c->stop_ns, (unsigned long long)c->meta_ns,
			(unsigned long long)c->total_ns);
	json_tables(o, c);
	if (ro->leaks)
		json_leaks(o, c);
	if (c->nroots)
		json_roots(o, c, ro->top);
	if (c->warn[0]) {
		heap_out_printf(o, ", \"warning\": ");
		jstr(o, c->warn);
	}
	heap_out_printf(o, "}\n");
}

/* A change row: its key, both sides and the difference. */
static void json_change(struct heap_out *o, const char *key, const struct jma_census_change *r)
{
	heap_out_printf(o, "{\"%s\": ", key);
	if (r->name)
		jstr(o, r->name);
	else if (!strcmp(key, "size"))
		heap_out_printf(o, "%llu", (unsigned long long)r->size);
	else
		heap_out_printf(o, "null");
	if (r->name == NULL && r->size && strcmp(key, "size"))
		heap_out_printf(o, ", \"size\": %llu", (unsigned long long)r->size);
	heap_out_printf(o, ", \"base_blocks\": %llu, \"base_bytes\": %llu, \"now_blocks\": %llu, "
			"\"now_bytes\": %llu, \"blocks\": %lld, \"bytes\": %lld}",
			(unsigned long long)r->base.blocks, (unsigned long long)r->base.bytes,
			(unsigned long long)r->now.blocks, (unsigned long long)r->now.bytes,
			(long long)(r->now.blocks - r->base.blocks), (long long)(r->now.bytes - r->base.bytes));
}

static void json_changes(struct heap_out *o, const char *name, const char *key,
			 const struct jma_census_change *v, size_t n, unsigned top)
{
	heap_out_printf(o, ", \"%s\": [", name);
	for (size_t i = 0; i < upto(n, top); i++) {
		heap_out_printf(o, "%s", i ? ", " : "");
		json_change(o, key, &v[i]);
	}
	heap_out_printf(o, "]");
}

static void json_side(struct heap_out *o, const char *name, const struct jma_census_count *k)
{
	heap_out_printf(o, ", \"%s\": {\"blocks\": %llu, \"bytes\": %llu}", name,
			(unsigned long long)k->blocks, (unsigned long long)k->bytes);
}

int jma_census_diff_json(const struct jma_census_diff *d, const struct jma_census_report_opts *ro,
			 jma_write_fn write, void *arg)
{
	struct heap_out *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return -ENOMEM;
	o->write = write;
	o->arg = arg;
	heap_out_printf(o, "{\"change\": {\"blocks\": %lld, \"bytes\": %lld}",
			(long long)(d->now.blocks - d->base.blocks), (long long)(d->now.bytes - d->base.bytes));
	json_side(o, "base", &d->base);
	json_side(o, "now", &d->now);
	json_changes(o, "sizes", "size", d->sizes, d->nsizes, ro->top);
	if (d->ntypes)
		json_changes(o, "types", "type", d->types, d->ntypes, ro->top);
	if (d->nroots)
		json_changes(o, "roots", "root", d->roots, d->nroots, ro->top);
	if (d->nholders)
		json_changes(o, "holders", "path", d->holders, d->nholders, ro->top);
	if (d->blocks) {
		json_side(o, "born", &d->born);
		json_side(o, "died", &d->died);
		json_changes(o, "born_types", "type", d->born_types, d->nborn_types, ro->top);
		json_changes(o, "born_owners", "owner", d->born_owners, d->nborn_owners, ro->top);
		json_changes(o, "died_types", "type", d->died_types, d->ndied_types, ro->top);
		json_changes(o, "died_owners", "owner", d->died_owners, d->ndied_owners, ro->top);
	}
	if (d->warn[0]) {
		heap_out_printf(o, ", \"warning\": ");
		jstr(o, d->warn);
	}
	heap_out_printf(o, "}\n");
	err = heap_out_flush(o);
	free(o);
	return err;
}

/* --- rows ---------------------------------------------------------------------- */

const char *jma_census_row_label(const struct jma_census_row *r, char *buf, size_t len)
{
	if (r->name)
		return r->name;
	if (!r->untyped)
		snprintf(buf, len, "size class %llu", (unsigned long long)r->size);
	else if (r->size)
		snprintf(buf, len, "(no vtable) %llu bytes", (unsigned long long)r->size);
	else
		snprintf(buf, len, "(no vtable)");
	return buf;
}

/* Is holder @h also an entry of the roots table (a block several roots reach)? */
static int holder_is_root(const struct jma_census *c, const struct jma_census_holder *h)
{
	for (size_t i = 0; i < c->nroots; i++)
		if (c->roots[i].shared && c->roots[i].addr == h->addr &&
		    !strcmp(c->roots[i].name ? c->roots[i].name : "", h->path ? h->path : ""))
			return 1;
	return 0;
}

int jma_census_rows(const struct jma_census *c, enum jma_census_by by, struct jma_census_row **out,
		    size_t *n)
{
	size_t cap = by == JMA_CENSUS_BY_SIZE ? c->nsizes : by == JMA_CENSUS_BY_OWNER ?
		     c->nroots + c->nholders : c->ntypes + c->nuntyped;
	struct jma_census_row *r = calloc(cap + 1, sizeof(*r));

	*n = 0;
	if (!r)
		return -ENOMEM;
	if (by == JMA_CENSUS_BY_SIZE) {
		for (size_t i = 0; i < c->nsizes; i++)
			r[(*n)++] = (struct jma_census_row){ .size = c->sizes[i].size,
							     .k = { c->sizes[i].blocks, c->sizes[i].bytes } };
	} else if (by == JMA_CENSUS_BY_OWNER) {
		/* The top of the dominator tree, then the holders it does not list
		 * already (a row's name is unique). */
		for (size_t i = 0; i < c->nroots; i++)
			r[(*n)++] = (struct jma_census_row){ .name = c->roots[i].name,
							     .k = { c->roots[i].blocks, c->roots[i].bytes } };
		for (size_t i = 0; i < c->nholders; i++)
			if (!holder_is_root(c, &c->holders[i]))
				r[(*n)++] = (struct jma_census_row){ .name = c->holders[i].path,
								     .k = { c->holders[i].blocks,
									    c->holders[i].bytes } };
	} else {
		for (size_t i = 1; i < c->ntypes; i++)
			r[(*n)++] = (struct jma_census_row){ .name = c->types[i].name,
							     .k = { c->types[i].blocks, c->types[i].bytes } };
		/* Untyped blocks by usable size, as the census counted them. */
		for (size_t i = 0; i < c->nuntyped; i++)
			r[(*n)++] = (struct jma_census_row){ .size = c->untyped[i].size, .untyped = 1,
							     .k = { c->untyped[i].blocks, c->untyped[i].bytes } };
		if (!c->nuntyped && c->ntypes && c->types[0].blocks)
			r[(*n)++] = (struct jma_census_row){ .untyped = 1,
							     .k = { c->types[0].blocks, c->types[0].bytes } };
	}
	*out = r;
	return 0;
}

/* --- pprof -------------------------------------------------------------------- */

/* One sample: a leaf (a type, untyped blocks of a size, a size class) and
 * its owner, as labels. */
struct cell {
	const char *leaf;	/* NULL: by @size */
	uint64_t size;
	int untyped;		/* leaf NULL: "(no vtable) [N bytes]", else "size class N" */
	const char *owner;	/* NULL: none */
	int64_t blocks, bytes;
};

enum rows { R_SIZES, R_TYPES, R_LIST, R_OWNERS };	/* each tells more than the one before */

static enum rows rows_of(const struct jma_census *c)
{
	if (c->blocks && c->ntypes && c->owners)
		return R_OWNERS;
	if (c->blocks && c->ntypes)
		return R_LIST;
	return c->ntypes ? R_TYPES : R_SIZES;
}

struct cells {
	struct cell *v;
	size_t n, cap;
};

static int cmp_cell(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	int c = strcmp(x->leaf ? x->leaf : "", y->leaf ? y->leaf : "");

	if (c)
		return c;
	if (x->size != y->size)
		return (x->size > y->size) - (x->size < y->size);
	if (x->untyped != y->untyped)
		return x->untyped - y->untyped;
	return strcmp(x->owner ? x->owner : "", y->owner ? y->owner : "");
}

static void cell_sum(void *into, const void *from)
{
	struct cell *x = into;
	const struct cell *y = from;

	x->blocks += y->blocks;
	x->bytes += y->bytes;
}

static int cell_add(struct cells *cs, struct cell x)
{
	if (cen_fold_room(&cs->v, &cs->n, &cs->cap, sizeof(*cs->v), cmp_cell, cell_sum))
		return -ENOMEM;
	cs->v[cs->n++] = x;
	return 0;
}

/* @c's rows at the level @r, each counted @sign times. */
static int cells_of(const struct jma_census *c, enum rows r, int sign, struct cells *cs)
{
	struct jma_census_block b;
	int err = 0;

	if (r == R_SIZES) {
		for (size_t i = 0; i < c->nsizes && !err; i++)
			err = cell_add(cs, (struct cell){ NULL, c->sizes[i].size, 0, NULL,
							  sign * (int64_t)c->sizes[i].blocks,
							  sign * (int64_t)c->sizes[i].bytes });
		return err;
	}
	if (r == R_TYPES) {
		struct jma_census_row *v;
		size_t n;

		if ((err = jma_census_rows(c, JMA_CENSUS_BY_TYPE, &v, &n)))
			return err;
		for (size_t i = 0; i < n && !err; i++)
			err = cell_add(cs, (struct cell){ v[i].name, v[i].size, v[i].untyped, NULL,
							  sign * (int64_t)v[i].k.blocks,
							  sign * (int64_t)v[i].k.bytes });
		free(v);
		return err;
	}
	for (struct jma_census_cursor k = { 0 }; !err && jma_census_next(c, &k, &b);) {
		int typed = b.type && b.type < c->ntypes;

		err = cell_add(cs, (struct cell){ typed ? c->types[b.type].name : NULL,
						  typed ? 0 : b.size, !typed,
						  r == R_OWNERS ? jma_census_owner_name(c, b.owner) : NULL,
						  sign, sign * (int64_t)b.size });
	}
	return err;
}

static const char *cell_label(const struct cell *x, char *buf, size_t len)
{
	struct jma_census_row r = { .name = x->leaf, .size = x->size, .untyped = x->untyped };

	return jma_census_row_label(&r, buf, len);
}

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Everything the message points to. */
struct build {
	Profile p;
	ValueType vt[3], *vtp[2];
	Sample *s, **sp;
	uint64_t *locid;
	int64_t *val;
	Function *fn, **fnp;
	Location *loc, **locp;
	Line *line, **linep;
	uint32_t *fn_of;	/* per string id: function id, 0 none yet */
	struct heap_strtab str;
};

static void build_free(struct build *b)
{
	free(b->s);
	free(b->sp);
	free(b->locid);
	free(b->val);
	free(b->fn);
	free(b->fnp);
	free(b->loc);
	free(b->locp);
	free(b->line);
	free(b->linep);
	free(b->fn_of);
	heap_strtab_free(&b->str);
}

/* The location (one per function) for the label with string id @id. */
static uint64_t loc_of(struct build *b, uint32_t id)
{
	size_t k;

	if (b->fn_of[id])
		return b->fn_of[id];
	k = b->p.n_function++;
	perftools__profiles__function__init(&b->fn[k]);
	b->fn[k].id = k + 1;
	b->fn[k].name = b->fn[k].system_name = id;
	b->fnp[k] = &b->fn[k];
	perftools__profiles__line__init(&b->line[k]);
	b->line[k].function_id = k + 1;
	b->linep[k] = &b->line[k];
	perftools__profiles__location__init(&b->loc[k]);
	b->loc[k].id = k + 1;
	b->loc[k].line = &b->linep[k];
	b->loc[k].n_line = 1;
	b->locp[k] = &b->loc[k];
	b->p.n_location = b->p.n_function;
	return b->fn_of[id] = (uint32_t)(k + 1);
}

static int build(struct build *b, const struct cells *cs, double time)
{
	static const char *const names[] = { "inuse_objects", "count", "inuse_space", "bytes", "space" };
	uint32_t id[5], *leaf = NULL, *owner = NULL;
	size_t n = 0;
	char buf[64];
	int err = -ENOMEM;

	if (heap_strtab_init(&b->str))
		return -ENOMEM;
	for (int i = 0; i < 5; i++)
		if ((id[i] = heap_str(&b->str, names[i])) == UINT32_MAX)
			return -ENOMEM;
	b->s = calloc(cs->n + 1, sizeof(*b->s));
	b->sp = calloc(cs->n + 1, sizeof(*b->sp));
	b->locid = calloc(2 * cs->n + 1, sizeof(*b->locid));
	b->val = calloc(2 * cs->n + 1, sizeof(*b->val));
	leaf = calloc(cs->n + 1, sizeof(*leaf));
	owner = calloc(cs->n + 1, sizeof(*owner));
	if (!b->s || !b->sp || !b->locid || !b->val || !leaf || !owner)
		goto out;
	/* Every label interned first: then the string table is whole. */
	for (size_t i = 0; i < cs->n; i++) {
		if ((leaf[i] = heap_str(&b->str, cell_label(&cs->v[i], buf, sizeof(buf)))) == UINT32_MAX)
			goto out;
		if (cs->v[i].owner && (owner[i] = heap_str(&b->str, cs->v[i].owner)) == UINT32_MAX)
			goto out;
	}
	b->fn_of = calloc(b->str.n + 1, sizeof(*b->fn_of));
	b->fn = calloc(b->str.n + 1, sizeof(*b->fn));
	b->fnp = calloc(b->str.n + 1, sizeof(*b->fnp));
	b->loc = calloc(b->str.n + 1, sizeof(*b->loc));
	b->locp = calloc(b->str.n + 1, sizeof(*b->locp));
	b->line = calloc(b->str.n + 1, sizeof(*b->line));
	b->linep = calloc(b->str.n + 1, sizeof(*b->linep));
	if (!b->fn_of || !b->fn || !b->fnp || !b->loc || !b->locp || !b->line || !b->linep)
		goto out;
	for (size_t i = 0; i < cs->n; i++) {
		Sample *s = &b->s[n];

		if (!cs->v[i].blocks && !cs->v[i].bytes)
			continue;
		perftools__profiles__sample__init(s);
		s->location_id = &b->locid[2 * n];
		s->location_id[s->n_location_id++] = loc_of(b, leaf[i]);
		if (owner[i])
			s->location_id[s->n_location_id++] = loc_of(b, owner[i]);
		s->value = &b->val[2 * n];
		s->n_value = 2;
		s->value[0] = cs->v[i].blocks;
		s->value[1] = cs->v[i].bytes;
		b->sp[n++] = s;
	}
	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->vt[i]);
		b->vt[i].type = id[2 * i];
		b->vt[i].unit = id[2 * i + 1];
		b->vtp[i] = &b->vt[i];
	}
	perftools__profiles__value_type__init(&b->vt[2]);
	b->vt[2].type = id[4];
	b->vt[2].unit = id[3];
	b->p.sample_type = b->vtp;
	b->p.n_sample_type = 2;
	b->p.period_type = &b->vt[2];
	b->p.period = 1;
	b->p.default_sample_type = id[2];
	b->p.time_nanos = (int64_t)(time * 1e9);
	b->p.sample = b->sp;
	b->p.n_sample = n;
	b->p.function = b->fnp;
	b->p.location = b->locp;
	b->p.string_table = b->str.str;
	b->p.n_string_table = b->str.n;
	err = 0;
out:
	free(leaf);
	free(owner);
	return err;
}

static int pprof(const struct jma_census *c, const struct jma_census *base,
		 const struct jma_census_report_opts *ro, struct heap_out *o)
{
	enum rows r = rows_of(c);
	struct cells cs = { 0 };
	struct build b = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	int err;

	if (base && rows_of(base) < r)
		r = rows_of(base);
	perftools__profiles__profile__init(&b.p);
	err = cells_of(c, r, 1, &cs);
	if (!err && base)
		err = cells_of(base, r, -1, &cs);
	if (!err) {
		cs.n = cen_fold(cs.v, cs.n, sizeof(*cs.v), cmp_cell, cell_sum);
		err = build(&b, &cs, ro->meta ? ro->meta->time : 0);
	}
	if (!err) {
		len = perftools__profiles__profile__get_packed_size(&b.p);
		if (!(buf = malloc(len ? len : 1)))
			err = -ENOMEM;
	}
	if (!err) {
		perftools__profiles__profile__pack(&b.p, buf);
		err = heap_gzip(buf, len, o);
	}
	free(buf);
	free(cs.v);
	build_free(&b);
	return err;
}

int jma_census_report(const struct jma_census *c, const struct jma_census *base,
		      const struct jma_census_report_opts *ro, jma_write_fn write, void *arg)
{
	struct heap_out *o;
	int err;

	if (ro->format != JMA_CENSUS_JSON && ro->format != JMA_CENSUS_PPROF)
		return -EINVAL;
	if (base && ro->format != JMA_CENSUS_PPROF)
		return -EINVAL;
	if (!(o = calloc(1, sizeof(*o))))
		return -ENOMEM;
	o->write = write;
	o->arg = arg;
	if (ro->format == JMA_CENSUS_JSON) {
		json_census(o, c, ro);
		err = 0;
	} else {
		err = pprof(c, base, ro, o);
	}
	if (!err)
		err = heap_out_flush(o);
	free(o);
	return err;
}
