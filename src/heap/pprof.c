/* pprof.c -- the report as pprof's profile.proto, gzipped (pprof, and
 * the tools that read its format, expect the compression).
 *
 * Sample types are inuse_objects/count and inuse_space/bytes, plus
 * alloc_objects/alloc_space when the profile has accumulated counts; the
 * chosen one is the default.  Every file-backed module is a mapping (with its
 * build-id when known); each distinct address is a location whose lines are
 * its inlined frames, innermost first; allocator frames are folded away as in
 * the other formats.  Values are un-sampled, as the format recommends.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "heap/heap.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Everything the message points to, freed together. */
struct build {
	Profile p;
	ValueType vt[5], *vtp[4];
	Sample *samples, **samplep;
	uint64_t *loc_ids;
	int64_t *values;
	Mapping *maps, **mapp;
	Location *locs, **locp;
	Line *lines, **linep;
	Function *funcs, **funcp;
	uint32_t *loc_used;	/* per loc: its index in locs + 1, 0 unused */
	uint32_t *func_of;	/* per string id: function index + 1 */
};

static int64_t to_i64(double x)
{
	if (!(x > -9.2e18))
		return x != x ? 0 : INT64_MIN;
	if (x >= 9.2e18)
		return INT64_MAX;
	return llround(x);
}

static void build_free(struct build *b)
{
	free(b->samples);
	free(b->samplep);
	free(b->loc_ids);
	free(b->values);
	free(b->maps);
	free(b->mapp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->funcs);
	free(b->funcp);
	free(b->loc_used);
	free(b->func_of);
}

static int sample_types(struct heap_view *v, struct build *b)
{
	static const char *const names[] = { "inuse_objects", "count", "inuse_space", "bytes",
					     "alloc_objects", "count", "alloc_space", "bytes" };
	jma_heap *h = v->h;
	int n = h->has_alloc ? 4 : 2;
	uint32_t space = heap_str(&h->str, "space");
	uint32_t def = heap_str(&h->str, jma_heap_sample_name(v->o->sample));

	if (space == UINT32_MAX || def == UINT32_MAX)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		uint32_t type = heap_str(&h->str, names[2 * i]);
		uint32_t unit = heap_str(&h->str, names[2 * i + 1]);
		if (type == UINT32_MAX || unit == UINT32_MAX)
			return -ENOMEM;
		perftools__profiles__value_type__init(&b->vt[i]);
		b->vt[i].type = type;
		b->vt[i].unit = unit;
		b->vtp[i] = &b->vt[i];
	}
	/* jemalloc samples once per period of allocated bytes. */
	perftools__profiles__value_type__init(&b->vt[4]);
	b->vt[4].type = space;
	b->vt[4].unit = b->vt[1].unit;
	b->p.sample_type = b->vtp;
	b->p.n_sample_type = (size_t)n;
	b->p.period_type = &b->vt[4];
	b->p.period = h->period > INT64_MAX ? INT64_MAX : (int64_t)h->period;
	b->p.default_sample_type = def;
	return 0;
}

static int samples(struct heap_view *v, struct build *b)
{
	jma_heap *h = v->h;
	size_t nids = 0, nv = b->p.n_sample_type;
	static const int order[] = { HEAP_CUR_OBJS, HEAP_CUR_BYTES, HEAP_ACC_OBJS, HEAP_ACC_BYTES };

	for (size_t i = 0; i < v->nstacks; i++)
		nids += h->stacks[v->stacks[i].stack].npc - v->stacks[i].fold;
	b->samples = calloc(v->nstacks + 1, sizeof(*b->samples));
	b->samplep = calloc(v->nstacks + 1, sizeof(*b->samplep));
	b->loc_ids = calloc(nids + 1, sizeof(*b->loc_ids));
	b->values = calloc(v->nstacks * nv + 1, sizeof(*b->values));
	b->loc_used = calloc(h->nlocs + 1, sizeof(*b->loc_used));
	if (!b->samples || !b->samplep || !b->loc_ids || !b->values || !b->loc_used)
		return -ENOMEM;
	nids = 0;
	for (size_t i = 0; i < v->nstacks; i++) {
		const struct heap_stack *s = &h->stacks[v->stacks[i].stack];
		Sample *sm = &b->samples[i];

		perftools__profiles__sample__init(sm);
		sm->location_id = &b->loc_ids[nids];
		for (uint32_t k = v->stacks[i].fold; k < s->npc; k++) {
			uint32_t li = h->pc_loc[s->pc + k];
			b->loc_used[li] = 1;
			b->loc_ids[nids++] = li + 1;
			sm->n_location_id++;
		}
		sm->value = &b->values[i * nv];
		sm->n_value = nv;
		for (size_t k = 0; k < nv; k++)
			sm->value[k] = to_i64(s->val[order[k]]);
		b->samplep[i] = sm;
	}
	b->p.sample = b->samplep;
	b->p.n_sample = v->nstacks;
	return 0;
}

static int mappings(jma_heap *h, struct build *b)
{
	b->maps = calloc(h->nmodules + 1, sizeof(*b->maps));
	b->mapp = calloc(h->nmodules + 1, sizeof(*b->mapp));
	if (!b->maps || !b->mapp)
		return -ENOMEM;
	for (size_t i = 0; i < h->nmodules; i++) {
		const struct heap_module *m = &h->modules[i];
		Mapping *mp = &b->maps[i];

		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->memory_start = m->lo;
		mp->memory_limit = m->hi;
		mp->file_offset = m->offset;
		mp->filename = m->path;
		mp->build_id = m->build_id;
		mp->has_functions = h->symbolized;
		mp->has_filenames = mp->has_line_numbers = mp->has_inline_frames = m->has_dwarf;
		b->mapp[i] = mp;
	}
	b->p.mapping = b->mapp;
	b->p.n_mapping = h->nmodules;
	return 0;
}

/* A Function per symbol: name demangled, as `go tool pprof` prints it
 * (it demangles system_name itself only when name is empty), system_name
 * as the symbol table spells it. */
static uint64_t function_of(struct heap_view *v, struct build *b, const struct heap_frame *f)
{
	Function *fn;

	if (!b->func_of[f->func]) {
		fn = &b->funcs[b->p.n_function];
		perftools__profiles__function__init(fn);
		fn->id = b->p.n_function + 1;
		fn->name = heap_view_func(v, f);
		fn->system_name = f->func;
		fn->filename = f->file;
		b->funcp[b->p.n_function++] = fn;
		b->func_of[f->func] = (uint32_t)fn->id;
	}
	return b->func_of[f->func];
}

static int locations(struct heap_view *v, struct build *b)
{
	jma_heap *h = v->h;
	size_t nloc = 0, nline = 0;

	for (size_t i = 0; i < h->nlocs; i++)
		if (b->loc_used[i]) {
			nloc++;
			nline += h->locs[i].nframe;
		}
	b->locs = calloc(nloc + 1, sizeof(*b->locs));
	b->locp = calloc(nloc + 1, sizeof(*b->locp));
	b->lines = calloc(nline + 1, sizeof(*b->lines));
	b->linep = calloc(nline + 1, sizeof(*b->linep));
	b->funcs = calloc(nline + 1, sizeof(*b->funcs));
	b->funcp = calloc(nline + 1, sizeof(*b->funcp));
	b->func_of = calloc(h->str.n + 1, sizeof(*b->func_of));
	if (!b->locs || !b->locp || !b->lines || !b->linep || !b->funcs || !b->funcp || !b->func_of)
		return -ENOMEM;
	nloc = nline = 0;
	for (size_t i = 0; i < h->nlocs; i++) {
		const struct heap_loc *l = &h->locs[i];
		Location *lp;

		if (!b->loc_used[i])
			continue;
		lp = &b->locs[nloc];
		perftools__profiles__location__init(lp);
		lp->id = i + 1;
		lp->mapping_id = l->module >= 0 ? (uint64_t)l->module + 1 : 0;
		lp->address = l->addr;
		lp->line = &b->linep[nline];
		for (uint32_t k = 0; k < l->nframe; k++) {
			const struct heap_frame *f = &h->frames[l->frame + k];
			Line *ln = &b->lines[nline];

			perftools__profiles__line__init(ln);
			ln->function_id = function_of(v, b, f);
			ln->line = f->line;
			b->linep[nline++] = ln;
			lp->n_line++;
		}
		b->locp[nloc++] = lp;
	}
	b->p.location = b->locp;
	b->p.n_location = nloc;
	b->p.function = b->funcp;
	return 0;
}

int heap_gzip(const uint8_t *data, size_t len, struct heap_out *o)
{
	z_stream z = { 0 };
	unsigned char buf[1 << 16];
	int rc;

	/* windowBits 15 + 16: a gzip header and trailer rather than zlib's. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	do {
		size_t chunk = len > (1U << 30) ? 1U << 30 : len;
		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			rc = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			heap_out_write(o, buf, sizeof(buf) - z.avail_out);
		} while (z.avail_out == 0);
	} while (len);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

int heap_pprof(struct heap_view *v, struct heap_out *o)
{
	jma_heap *h = v->h;
	struct build b = { 0 };
	uint8_t *buf = NULL;
	int64_t comment;
	size_t len;
	int err;

	perftools__profiles__profile__init(&b.p);
	err = sample_types(v, &b);
	if (!err && v->o->comment) {
		uint32_t id = heap_str(&h->str, v->o->comment);

		if (id == UINT32_MAX)
			err = -ENOMEM;
		comment = id;
		b.p.comment = &comment;
		b.p.n_comment = 1;
	}
	if (!err)
		err = samples(v, &b);
	if (!err)
		err = mappings(h, &b);
	if (!err)
		err = locations(v, &b);
	if (!err) {
		/* Last: every string the message uses is interned by now. */
		b.p.string_table = h->str.str;
		b.p.n_string_table = h->str.n;
		len = perftools__profiles__profile__get_packed_size(&b.p);
		buf = malloc(len ? len : 1);
		if (!buf)
			err = -ENOMEM;
	}
	if (!err) {
		perftools__profiles__profile__pack(&b.p, buf);
		err = heap_gzip(buf, len, o);
	}
	free(buf);
	build_free(&b);
	return err ? heap_fail(h, err, "%s", err == -ENOMEM ? "out of memory" : "gzip failed") : 0;
}
