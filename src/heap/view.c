/* view.c -- one report's view of a profile: allocator frames folded
 * away, --focus/--ignore applied, values of the chosen sample summed into
 * sites (flat: the site allocated itself; cum: anywhere under it), as jeprof
 * does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sized.h"
#include "heap/heap.h"

enum { RE_FOCUS, RE_IGNORE, RE_FOLD };

static int val_index(enum jma_heap_sample s)
{
	switch (s) {
	case JMA_HEAP_INUSE_OBJECTS: return HEAP_CUR_OBJS;
	case JMA_HEAP_ALLOC_SPACE: return HEAP_ACC_BYTES;
	case JMA_HEAP_ALLOC_OBJECTS: return HEAP_ACC_OBJS;
	default: return HEAP_CUR_BYTES;
	}
}

static int need_frames(struct heap_view *v, size_t n)
{
	struct heap_frame *f;
	uint32_t *l;

	if (n <= v->fr_cap)
		return 0;
	n = n < 256 ? 256 : n * 2;
	f = realloc(v->fr, n * sizeof(*f));
	if (f)
		v->fr = f;
	l = realloc(v->fr_loc, n * sizeof(*l));
	if (l)
		v->fr_loc = l;
	if (!f || !l)
		return -ENOMEM;
	v->fr_cap = n;
	return 0;
}

/* The frames of addresses [@from, @to) of stack @s. */
static int frames_of(struct heap_view *v, const struct heap_stack *s, uint32_t from, uint32_t to,
		     size_t *n)
{
	jma_heap *h = v->h;

	*n = 0;
	for (uint32_t i = from; i < to; i++) {
		uint32_t li = h->pc_loc[s->pc + i];
		const struct heap_loc *l = &h->locs[li];
		uint32_t k = l->nframe ? l->nframe : 1;

		if (need_frames(v, *n + k))
			return -ENOMEM;
		if (!l->nframe) {
			struct heap_frame hex = { .func = heap_loc_hexname(h, l) };
			if (hex.func == UINT32_MAX)
				return -ENOMEM;
			hex.dfunc = hex.func;
			v->fr[*n] = hex;
		} else {
			memcpy(&v->fr[*n], &h->frames[l->frame], k * sizeof(*v->fr));
		}
		for (uint32_t j = 0; j < k; j++)
			v->fr_loc[*n + j] = li;
		*n += k;
	}
	return 0;
}

int heap_view_frames(struct heap_view *v, const struct heap_vstack *vs, size_t *n)
{
	const struct heap_stack *s = &v->h->stacks[vs->stack];

	return frames_of(v, s, vs->fold, s->npc, n);
}

/* Whether a frame's name matches: mangled or demangled, so that the rules
 * of --list-folds (written against symbol tables) and a user's regex
 * ("^shop::Order::") both work. */
static int any_match(struct heap_view *v, int re, size_t n)
{
	const struct heap_strtab *t = &v->h->str;

	for (size_t i = 0; i < n; i++)
		if (!regexec(&v->re[re], t->str[v->fr[i].func], 0, NULL, 0) ||
		    (v->fr[i].dfunc != v->fr[i].func &&
		     !regexec(&v->re[re], t->str[v->fr[i].dfunc], 0, NULL, 0)))
			return 1;
	return 0;
}

/* Fold point: one past the rootmost allocator address.  Everything before it
 * (toward the leaf) is the allocator's own business, as in jeprof. */
static int fold_point(struct heap_view *v, const struct heap_stack *s, uint32_t *fold)
{
	jma_heap *h = v->h;

	*fold = 0;
	for (uint32_t i = s->npc; i-- > 0;) {
		uint32_t li = h->pc_loc[s->pc + i];
		int alloc = h->locs[li].alloc;

		/* A location's frames are the same in every stack: match them once. */
		if (!alloc && v->has_re[RE_FOLD]) {
			if (v->fold_match[li] < 0) {
				size_t n;
				if (frames_of(v, s, i, i + 1, &n))
					return -ENOMEM;
				v->fold_match[li] = (signed char)any_match(v, RE_FOLD, n);
			}
			alloc = v->fold_match[li];
		}
		if (alloc) {
			*fold = i + 1;
			return 0;
		}
	}
	return 0;
}

uint32_t heap_view_func(const struct heap_view *v, const struct heap_frame *f)
{
	return v->o->no_demangle ? f->func : f->dfunc;
}

uint32_t heap_view_label_as(struct heap_view *v, const struct heap_frame *f, uint32_t func)
{
	jma_heap *h = v->h;
	const char *file, *slash;
	char buf[8192];

	if (!v->o->lines || !f->file)
		return func;
	file = h->str.str[f->file];
	slash = strrchr(file, '/');
	snprintf(buf, sizeof(buf), "%s %s:%d", h->str.str[func], slash ? slash + 1 : file, f->line);
	return heap_str(&h->str, buf);
}

uint32_t heap_view_label(struct heap_view *v, const struct heap_frame *f)
{
	return heap_view_label_as(v, f, heap_view_func(v, f));
}

static int compile(struct heap_view *v, int which, const char *re, const char *what)
{
	int rc;

	if (!re)
		return 0;
	rc = regcomp(&v->re[which], re, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char e[128];
		regerror(rc, &v->re[which], e, sizeof(e));
		return heap_fail(v->h, -EINVAL, "the %s pattern \"%s\" is not a valid regular "
				 "expression: %s", what, re, e);
	}
	v->has_re[which] = 1;
	return 0;
}

/* The fold regex: the default rules, then the caller's --fold. */
static int compile_folds(struct heap_view *v)
{
	size_t n = 0, len = 1;
	const struct jma_heap_fold *r = v->o->no_default_folds ? NULL : jma_heap_default_folds(&n);
	char *re;
	int err;

	if (!n)
		return compile(v, RE_FOLD, v->o->fold, "fold");
	if (v->o->fold) {
		/* The caller's own, alone first: its errors must name it. */
		err = compile(v, RE_FOLD, v->o->fold, "fold");
		if (err)
			return err;
		regfree(&v->re[RE_FOLD]);
		v->has_re[RE_FOLD] = 0;
		len += strlen(v->o->fold) + 3;
	}
	for (size_t i = 0; i < n; i++)
		len += strlen(r[i].re) + 3;
	re = malloc(len);
	if (!re)
		return heap_fail(v->h, -ENOMEM, "out of memory");
	*re = '\0';
	for (size_t i = 0; i < n; i++)
		strcat(strcat(strcat(re, i ? "|(" : "("), r[i].re), ")");
	if (v->o->fold)
		strcat(strcat(strcat(re, "|("), v->o->fold), ")");
	err = compile(v, RE_FOLD, re, "fold");
	free(re);
	return err;
}

static int cmp_site(const void *a, const void *b, void *arg)
{
	const struct heap_vsite *x = a, *y = b;
	const jma_heap *h = arg;

	if (x->flat != y->flat)
		return x->flat < y->flat ? 1 : -1;
	if (x->cum != y->cum)
		return x->cum < y->cum ? 1 : -1;
	return strcmp(h->str.str[x->label], h->str.str[y->label]);
}

struct sitemap {
	int32_t *of_label;	/* site index by label id, -1 none */
	size_t n;
	size_t *seen;		/* per site: 1 + the last stack counted in cum */
	size_t cap;
};

static int add_to_site(struct heap_view *v, struct sitemap *m, const struct heap_frame *f,
		       const struct heap_loc *l, size_t stack, double value, int leaf)
{
	uint32_t label = heap_view_label(v, f);
	int32_t si;

	if (label == UINT32_MAX)
		return -ENOMEM;
	if (label >= m->n) {
		size_t nn = v->h->str.n * 2;
		int32_t *t = realloc(m->of_label, nn * sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = m->n; i < nn; i++)
			t[i] = -1;
		m->of_label = t;
		m->n = nn;
	}
	si = m->of_label[label];
	if (si < 0) {
		if (v->nsites == m->cap) {
			size_t nc = m->cap ? m->cap * 2 : 256;
			struct heap_vsite *s = realloc(v->sites, nc * sizeof(*s));
			size_t *seen;
			if (s)
				v->sites = s;
			seen = s ? realloc(m->seen, nc * sizeof(*seen)) : NULL;
			if (!seen)
				return -ENOMEM;
			m->seen = seen;
			m->cap = nc;
		}
		si = (int32_t)v->nsites++;
		memset(&v->sites[si], 0, sizeof(v->sites[si]));
		v->sites[si].label = label;
		v->sites[si].fr = *f;
		v->sites[si].module = l->module;
		v->sites[si].named = l->named;
		m->seen[si] = 0;
		m->of_label[label] = si;
	}
	if (leaf) {
		v->sites[si].flat += value;
		if (l->named != HEAP_NAMED_SYMBOL)
			v->unnamed += value;
	}
	/* Recursion puts a function on a stack twice; cum counts the stack once. */
	if (m->seen[si] != stack + 1) {
		v->sites[si].cum += value;
		m->seen[si] = stack + 1;
	}
	return 0;
}

static int keep_stack(struct heap_view *v, struct sitemap *m, size_t i, int vi)
{
	jma_heap *h = v->h;
	const struct heap_stack *s = &h->stacks[i];
	struct heap_vstack vs = { .stack = i, .value = s->val[vi] };
	int any = 0, err;
	size_t n;

	for (int k = 0; k < HEAP_NVAL; k++)
		any |= s->val[k] != 0;
	if (v->o->format == JMA_HEAP_PPROF ? !any : vs.value == 0)
		return 0;
	err = fold_point(v, s, &vs.fold);
	if (!err)
		err = heap_view_frames(v, &vs, &n);
	if (err)
		return err;
	if (v->has_re[RE_FOCUS] && !any_match(v, RE_FOCUS, n))
		return 0;
	if (v->has_re[RE_IGNORE] && any_match(v, RE_IGNORE, n))
		return 0;
	v->stacks[v->nstacks++] = vs;
	v->total += vs.value;
	for (size_t k = 0; k < n; k++) {
		/* heap_view_label may grow the string table: copy the frame first. */
		struct heap_frame f = v->fr[k];
		err = add_to_site(v, m, &f, &h->locs[v->fr_loc[k]], v->nstacks, vs.value, k == 0);
		if (err)
			return err;
	}
	return 0;
}

int heap_view_build(jma_heap *h, const struct jma_heap_report_opts *o, struct heap_view *v)
{
	struct sitemap m = { 0 };
	int vi = val_index(o->sample), err;

	memset(v, 0, sizeof(*v));
	v->h = h;
	v->o = o;
	if ((vi == HEAP_ACC_OBJS || vi == HEAP_ACC_BYTES) && !h->has_alloc)
		return heap_fail(h, -ENODATA, "the profile has no %s counts: the process must run "
				 "with MALLOC_CONF=prof_accum:true", jma_heap_sample_name(o->sample));
	err = compile(v, RE_FOCUS, o->focus, "focus");
	if (!err)
		err = compile(v, RE_IGNORE, o->ignore, "ignore");
	if (!err)
		err = compile_folds(v);
	if (err)
		goto fail;
	v->stacks = malloc((h->nstacks ? h->nstacks : 1) * sizeof(*v->stacks));
	v->fold_match = malloc(h->nlocs ? h->nlocs : 1);
	if (!v->stacks || !v->fold_match)
		goto oom;
	memset(v->fold_match, -1, h->nlocs);
	for (size_t i = 0; i < h->nstacks; i++)
		if (keep_stack(v, &m, i, vi))
			goto oom;
	if (v->nsites)
		qsort_r(v->sites, v->nsites, sizeof(*v->sites), cmp_site, h);
	free(m.of_label);
	free(m.seen);
	return 0;
oom:
	err = heap_fail(h, -ENOMEM, "out of memory");
fail:
	free(m.of_label);
	free(m.seen);
	heap_view_free(v);
	return err;
}

void heap_view_free(struct heap_view *v)
{
	for (int i = 0; i < 3; i++)
		if (v->has_re[i])
			regfree(&v->re[i]);
	free(v->stacks);
	free(v->fold_match);
	free(v->sites);
	free(v->fr);
	free(v->fr_loc);
	memset(v, 0, sizeof(*v));
}

int jma_heap_sites(jma_heap *h, const struct jma_heap_report_opts *opts, struct jma_heap_site **sites,
		   size_t *nsites, double *total)
{
	struct jma_heap_report_opts in, *o = &in;
	struct heap_view v;
	size_t n;
	int err;

	*sites = NULL;
	*nsites = 0;
	if ((err = SIZED_IN(opts, &in)))
		return heap_fail(h, err, "sites: its options' sz is not that of a "
				 "struct jma_heap_report_opts this library knows");
	if ((err = heap_view_build(h, o, &v)))
		return err;
	n = o->top && o->top < v.nsites ? o->top : v.nsites;
	*total = v.total;
	*sites = calloc(n ? n : 1, sizeof(**sites));
	if (!*sites) {
		heap_view_free(&v);
		return heap_fail(h, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct heap_vsite *s = &v.sites[i];
		struct jma_heap_site *d = &(*sites)[i];
		d->name = h->str.str[s->label];
		d->function = h->str.str[s->fr.func];
		d->demangled = h->str.str[s->fr.dfunc];
		d->file = s->fr.file ? h->str.str[s->fr.file] : NULL;
		d->line = s->fr.line;
		d->module = s->module >= 0 ? h->str.str[h->modules[s->module].path] : NULL;
		d->build_id = s->module >= 0 && h->modules[s->module].build_id
				      ? h->str.str[h->modules[s->module].build_id] : NULL;
		d->named = (enum jma_heap_named)s->named;
		d->flat = s->flat;
		d->cum = s->cum;
	}
	*nsites = n;
	heap_view_free(&v);
	return 0;
}
