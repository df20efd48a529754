/* dominators.c -- what holds the heap: the dominator tree of the anchored blocks, as MAT computes it.
 *
 * Nodes: one start node, one per root source (a global by its symbol, a
 * thread's stack and registers) below it, and the blocks the leak scan read
 * (leaks.c), numbered in the order they were read: a block is read only
 * after a pointer to it was found, so whatever dominates a block has a
 * smaller number -- what Cooper, Harvey and Kennedy's intersection needs ("A
 * Simple, Fast Dominance Algorithm").  Their iteration is run over the
 * edges as they come from the graph's rows on disk, front to back: each
 * edge u -> v moves v's dominator to the nearest common one of u and it, in
 * rounds until nothing moves (ITER_MAX at most, said otherwise).  A block is
 * retained by the node that dominates it.
 *
 * What answers first is the top of the tree (MAT's dominator tree view):
 * each root, and each block that several roots reach (nothing but the
 * start dominates it) -- on Redis the keyspace's array, reached from the
 * `server` global and a thread's stack, retains 99 % of the heap, and a
 * table of roots alone showed under 1 % (issue 42).  Then the blocks under
 * those that retain most, with how each is reached.
 *
 * With a list, each block's owner: the holder or entry of the roots table
 * naming the top it falls under (4 bytes a block, kept with the list).
 *
 * Memory: 4 bytes per node for the dominators (then for the top each block
 * falls under), 4 per block read for its block; 24 per block at the top of
 * the tree (28 with a list); the edges stay on disk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "census/census.h"

#define ITER_MAX	100
#define HOLDERS		20	/* blocks listed as retaining most */
#define TOP_MAX		1000	/* entries of the top of the tree kept in the result */
#define PATHS		(HOLDERS + 20)	/* paths looked for */
#define PATH_MAX_HOPS	6
#define PATH_LEN	1024
#define NAME_LEN	256
#define NAMED_MAX	100000	/* static root words named by symbol */

struct dom {
	struct cen *c;
	struct cen_graph *g;
	size_t S, N;		/* sources (numbers 1..S), all nodes (start = 0) */
	uint32_t *idom;		/* then: the top each block falls under */
	uint32_t *src;		/* per root reference: its source's number */
	struct cen_rootref *r;
	size_t nr;
	uint32_t cur;		/* the row being read */
	int changed;
	/* The top of the tree: blocks only a source or the start dominates. */
	uint32_t *tnode, *tsrc;
	uint64_t *tbytes, *tblocks;
	size_t T, capT;
	/* Paths: nodes whose smallest-numbered predecessor is looked for. */
	uint32_t want[PATHS * PATH_MAX_HOPS], best[PATHS * PATH_MAX_HOPS];
	size_t nwant;
};

static uint32_t logical(const struct dom *d, uint32_t number)
{
	return number + (uint32_t)d->S + 1;
}

/* Each reference's source, by name, into @names (id 0 ""; source s is id
 * s): static words by symbol (libdwfl) up to NAMED_MAX of them, then by
 * module only, so that a huge static array of pointers stays linear. */
static int sources(struct dom *d, struct heap_strtab *names)
{
	struct cen *c = d->c;
	char buf[NAME_LEN];
	size_t named = 0;

	for (size_t i = 0; i < d->nr; i++) {
		const struct cen_rootref *r = &d->r[i];
		uint32_t id;

		if (r->tid) {
			snprintf(buf, sizeof(buf), "thread %d (stack, registers)", (int)r->tid);
		} else if (named++ < NAMED_MAX) {
			cen_root_name(c, r->at, buf, sizeof(buf));
		} else {
			const struct att_map *m = att_maps_find(c->maps, c->nmaps, r->at);
			const char *p = m && m->path ? m->path : "?", *b = strrchr(p, '/');
			snprintf(buf, sizeof(buf), "static data of %s", b ? b + 1 : p);
		}
		if ((id = heap_str(names, buf)) == UINT32_MAX)
			return -ENOMEM;
		d->src[i] = id;
	}
	d->S = names->n - 1;
	return 0;
}

/* Rows' targets from block to node numbers, in place. */
static int translate(void *arg, uint32_t *w, size_t n)
{
	struct dom *d = arg;

	for (size_t i = 0; i < n; i++)
		if (!(w[i] & CEN_ROW))
			w[i] = d->g->num[w[i]] == CEN_UNDEF ? CEN_UNDEF : logical(d, d->g->num[w[i]]);
	return 0;
}

static uint32_t intersect(const struct dom *d, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (a > b)
			a = d->idom[a];
		while (b > a)
			b = d->idom[b];
	}
	return a;
}

static void push(struct dom *d, uint32_t u, uint32_t v)
{
	uint32_t nd;

	if (v == CEN_UNDEF || d->idom[u] == CEN_UNDEF || u == v)
		return;
	/* A dominator is numbered before what it dominates: a node's first
	 * candidate is a predecessor numbered before it (the one it was found
	 * from always is), so that every chain of candidates descends. */
	if (d->idom[v] == CEN_UNDEF && u > v)
		return;
	nd = d->idom[v] == CEN_UNDEF ? u : intersect(d, u, d->idom[v]);
	if (nd != d->idom[v]) {
		d->idom[v] = nd;
		d->changed = 1;
	}
}

static int round_rows(void *arg, uint32_t *w, size_t n)
{
	struct dom *d = arg;

	for (size_t i = 0; i < n; i++) {
		if (w[i] & CEN_ROW)
			d->cur = logical(d, w[i] & ~CEN_ROW);
		else
			push(d, d->cur, w[i]);
	}
	return 0;
}

static int solve(struct dom *d, unsigned *rounds)
{
	struct cen *c = d->c;
	int err;

	d->idom[0] = 0;
	for (size_t s = 1; s <= d->S; s++)
		d->idom[s] = 0;
	for (size_t v = d->S + 1; v < d->N; v++)
		d->idom[v] = CEN_UNDEF;
	for (*rounds = 0; *rounds < ITER_MAX; (*rounds)++) {
		if (cen_timed_out(c))
			return -ETIMEDOUT;
		cen_progress(c, "dominators", *rounds, *rounds + 1);
		d->changed = 0;
		for (size_t i = 0; i < d->nr; i++)
			push(d, d->src[i], d->r[i].block);
		if ((err = cen_spill_each(&d->g->rows, 0, round_rows, d)))
			return err;
		if (!d->changed)
			return 0;
	}
	c->out->dominators_unsettled = 1;
	return 0;
}

/* The top of the tree each block falls under (idom rewritten in place, in
 * number order: a block's dominator is numbered before it), and what each
 * top retains. */
static int tops(struct dom *d)
{
	struct cen *c = d->c;

	for (size_t v = d->S + 1; v < d->N; v++) {
		uint32_t p = d->idom[v];

		if (p == CEN_UNDEF) {
			continue;
		} else if (p <= d->S) {
			size_t cap = d->capT, cap2 = d->capT, cap3 = d->capT;
			if (cen_grow(&d->tnode, &cap, d->T + 1, sizeof(*d->tnode)) ||
			    cen_grow(&d->tsrc, &cap2, d->T + 1, sizeof(*d->tsrc)) ||
			    cen_grow(&d->tbytes, &cap3, d->T + 1, sizeof(*d->tbytes)) ||
			    cen_grow(&d->tblocks, &d->capT, d->T + 1, sizeof(*d->tblocks)))
				return -ENOMEM;
			d->tnode[d->T] = (uint32_t)v;
			d->tsrc[d->T] = p;
			d->tbytes[d->T] = d->tblocks[d->T] = 0;
			d->idom[v] = (uint32_t)d->T++;
		} else {
			d->idom[v] = d->idom[p];
		}
	}
	for (size_t v = d->S + 1; v < d->N; v++) {
		uint32_t t = d->idom[v];
		if (t == CEN_UNDEF)
			continue;
		d->tbytes[t] += cen_block_size(&c->ix, d->g->order[v - d->S - 1]);
		d->tblocks[t]++;
	}
	return 0;
}

/* Smallest-numbered predecessors of the nodes in d->want (sources first:
 * their numbers are the smallest). */
static int want_of(const struct dom *d, uint32_t v)
{
	for (size_t i = 0; i < d->nwant; i++)
		if (d->want[i] == v)
			return (int)i;
	return -1;
}

static int pred_rows(void *arg, uint32_t *w, size_t n)
{
	struct dom *d = arg;

	for (size_t i = 0; i < n; i++) {
		int k;
		if (w[i] & CEN_ROW)
			d->cur = logical(d, w[i] & ~CEN_ROW);
		else if ((k = want_of(d, w[i])) >= 0 && d->cur < d->best[k] && d->cur < w[i])
			d->best[k] = d->cur;
	}
	return 0;
}

/* "ROOT -> 0xaddr (size) -> ... -> 0xaddr (size)" for each of @nv nodes @v
 * (how each is reached), into @out (strdup'ed). */
static int paths(struct dom *d, const uint32_t *v, size_t nv, char *const *names, char **out)
{
	uint32_t chain[PATHS][PATH_MAX_HOPS];
	size_t len[PATHS];
	int err = 0;

	nv = nv < PATHS ? nv : PATHS;
	for (size_t k = 0; k < nv; k++) {
		chain[k][0] = v[k];
		len[k] = 1;
	}
	for (unsigned hop = 1; hop < PATH_MAX_HOPS && !err; hop++) {
		d->nwant = 0;
		for (size_t k = 0; k < nv; k++)
			if (len[k] == hop && chain[k][hop - 1] > d->S) {
				d->want[d->nwant] = chain[k][hop - 1];
				d->best[d->nwant++] = CEN_UNDEF;
			}
		if (!d->nwant)
			break;
		for (size_t i = 0; i < d->nr; i++) {
			int k = want_of(d, d->r[i].block);
			if (k >= 0 && d->src[i] < d->best[k])
				d->best[k] = d->src[i];
		}
		err = cen_spill_each(&d->g->rows, 0, pred_rows, d);
		for (size_t k = 0; k < nv && !err; k++) {
			int i;
			if (len[k] == hop && (i = want_of(d, chain[k][hop - 1])) >= 0 &&
			    d->best[i] != CEN_UNDEF)
				chain[k][len[k]++] = d->best[i];
		}
	}
	for (size_t k = 0; k < nv && !err; k++) {
		char buf[PATH_LEN];
		size_t used, n = len[k];
		uint32_t first = chain[k][n - 1];

		used = (size_t)snprintf(buf, sizeof(buf), "%s", first <= d->S ? names[first] : "...");
		for (size_t i = first <= d->S ? n - 1 : n; i-- > 0 && used < sizeof(buf);) {
			uint64_t a, s;
			cen_block_at(&d->c->ix, d->g->order[chain[k][i] - d->S - 1], &a, &s);
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, " -> 0x%llx (%llu)",
						 (unsigned long long)a, (unsigned long long)s);
		}
		if (!(out[k] = strdup(buf)))
			err = -ENOMEM;
	}
	return err;
}

/* Tops by bytes retained, descending. */
static int cmp_top(const void *a, const void *b, void *arg)
{
	const struct dom *d = arg;
	uint64_t x = d->tbytes[*(const uint32_t *)a], y = d->tbytes[*(const uint32_t *)b];
	return (x < y) - (x > y);
}

/* Root indexes, by retained bytes descending, then name (qsort_r's argument: the roots). */
static int cmp_root(const void *a, const void *b, void *arg)
{
	const struct jma_census_root *r = arg, *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/* o->roots sorted and cut to TOP_MAX; @where[i]: entry i's place now
 * (JMA_CENSUS_OWNER_OTHER: cut). */
static int sort_roots(struct jma_census *o, uint32_t *where)
{
	size_t n = o->nroots;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	struct jma_census_root *v = malloc((n ? n : 1) * sizeof(*v));

	if (!order || !v) {
		free(order);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_root, o->roots);
	for (size_t k = 0; k < n; k++) {
		v[k] = o->roots[order[k]];
		where[order[k]] = k < TOP_MAX ? (uint32_t)k : JMA_CENSUS_OWNER_OTHER;
	}
	free(o->roots);
	o->roots = v;
	free(order);
	while (o->nroots > TOP_MAX)
		free(o->roots[--o->nroots].name);
	return 0;
}

/* With LIST: each block's owner (census.h), from the top it falls under
 * (idom, after tops()): the holder that top is, else the entry of the
 * roots table it is or is under.  @tentry: per top, its own entry of the
 * table (a shared block listed), CEN_UNDEF if none; @where: sort_roots'. */
static int owners(struct dom *d, const uint32_t *byret, size_t nh, const uint32_t *tentry,
		  const uint32_t *where)
{
	struct cen *c = d->c;
	struct jma_census *o = c->out;
	uint32_t *towner = d->tsrc;	/* rewritten in place: the sources are not needed after */

	if (!(c->owner = malloc((c->ix.nblocks ? c->ix.nblocks : 1) * sizeof(*c->owner))))
		return -ENOMEM;
	memset(c->owner, 0xff, c->ix.nblocks * sizeof(*c->owner));	/* JMA_CENSUS_OWNER_NONE */
	/* A shared block past the table's end is still one several roots reach. */
	for (size_t t = 0; t < d->T; t++)
		towner[t] = towner[t] ? where[towner[t] - 1] :
			    tentry[t] != CEN_UNDEF && where[tentry[t]] != JMA_CENSUS_OWNER_OTHER ?
			    where[tentry[t]] : JMA_CENSUS_OWNER_SHARED;
	for (size_t i = 0; i < nh; i++)
		towner[byret[i]] = (uint32_t)(o->nroots + i);
	for (size_t v = d->S + 1; v < d->N; v++)
		if (d->idom[v] != CEN_UNDEF)
			c->owner[d->g->order[v - d->S - 1]] = towner[d->idom[v]];
	return 0;
}

/* The result: the top of the tree (sources and shared blocks), the holders. */
static int report(struct dom *d, struct heap_strtab *names)
{
	struct cen *c = d->c;
	struct jma_census *o = c->out;
	uint32_t *byret = malloc((d->T ? d->T : 1) * sizeof(*byret)), pv[PATHS];
	uint64_t *sbytes = calloc(d->S + 1, sizeof(*sbytes)), *sblocks = calloc(d->S + 1, sizeof(*sblocks));
	uint32_t *where = malloc((d->S + PATHS + 1) * sizeof(*where)), *tentry = NULL;
	int list = !!(c->o->flags & JMA_CENSUS_LIST);
	char *pathv[PATHS] = { 0 };
	size_t np = 0, nshared = 0, nh;
	int err = 0;

	if (list && (tentry = malloc((d->T ? d->T : 1) * sizeof(*tentry))))
		memset(tentry, 0xff, d->T * sizeof(*tentry));	/* CEN_UNDEF */
	if (!byret || !sbytes || !sblocks || !where || (list && !tentry)) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < d->T; t++) {
		byret[t] = (uint32_t)t;
		sbytes[d->tsrc[t]] += d->tbytes[t];
		sblocks[d->tsrc[t]] += d->tblocks[t];
	}
	qsort_r(byret, d->T, sizeof(*byret), cmp_top, d);
	/* Paths: the holders, and the first shared blocks of the top. */
	nh = d->T < HOLDERS ? d->T : HOLDERS;
	for (size_t i = 0; i < nh; i++)
		pv[np++] = d->tnode[byret[i]];
	for (size_t i = 0; i < d->T && np < PATHS; i++)
		if (!d->tsrc[byret[i]] && i >= nh)
			pv[np++] = d->tnode[byret[i]];
	if ((err = paths(d, pv, np, names->str, pathv)))
		goto out;
	o->holders = calloc(nh ? nh : 1, sizeof(*o->holders));
	o->roots = calloc(d->S + np + 1, sizeof(*o->roots));
	if (!o->holders || !o->roots) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nh; i++) {
		struct jma_census_holder *h = &o->holders[o->nholders++];
		uint32_t t = byret[i];
		size_t b = d->g->order[d->tnode[t] - d->S - 1];

		cen_block_at(&c->ix, b, &h->addr, &h->size);
		h->type = cen_type_of(c, b);
		h->bytes = d->tbytes[t];
		h->blocks = d->tblocks[t];
		h->path = pathv[i];
		pathv[i] = NULL;
	}
	/* The top: every source, and the shared blocks a path was found for
	 * (the largest: byret's order). */
	for (size_t s = 1; s <= d->S; s++) {
		struct jma_census_root *r = &o->roots[o->nroots++];
		r->name = names->str[s];
		names->str[s] = NULL;
		r->bytes = sbytes[s];
		r->blocks = sblocks[s];
	}
	for (size_t k = 0; k < np; k++) {
		uint32_t t = d->idom[pv[k]];
		struct jma_census_root *r;
		size_t b;

		if (d->tsrc[t])
			continue;
		if (tentry)
			tentry[t] = (uint32_t)o->nroots;
		r = &o->roots[o->nroots++];
		b = d->g->order[pv[k] - d->S - 1];
		cen_block_at(&c->ix, b, &r->addr, &r->size);
		r->type = cen_type_of(c, b);
		r->shared = 1;
		r->bytes = d->tbytes[t];
		r->blocks = d->tblocks[t];
		if (!(r->name = pathv[k] ? pathv[k] : strdup(o->holders[k].path))) {
			err = -ENOMEM;
			goto out;
		}
		pathv[k] = NULL;
		nshared++;
	}
	if ((err = sort_roots(o, where)))
		goto out;
	if (list && (err = owners(d, byret, nh, tentry, where)))
		goto out;
	sess_logf(c->s, JMA_LOG_INFO, "census: the top of the dominator tree: %zu roots, %zu blocks "
		 "several roots share (%zu listed)", d->S, d->T, nshared);
out:
	for (size_t i = 0; i < np; i++)
		free(pathv[i]);
	free(byret);
	free(sbytes);
	free(sblocks);
	free(where);
	free(tentry);
	return err;
}

int cen_dominators(struct cen *c, struct cen_graph *g, struct cen_rootref *r, size_t nr)
{
	struct dom d = { .c = c, .g = g, .r = r, .nr = nr };
	struct heap_strtab names;
	int64_t t0 = att_now_ns(), t1;
	unsigned rounds = 0;
	int err = heap_strtab_init(&names);

	d.src = malloc((nr ? nr : 1) * sizeof(*d.src));
	if (err || !d.src) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = sources(&d, &names)))
		goto out;
	if (g->m + d.S + 1 >= CEN_ROW) {
		err = -E2BIG;
		goto out;
	}
	d.N = d.S + 1 + g->m;
	if ((err = cen_spill_each(&g->rows, 1, translate, &d)))
		goto out;
	/* The references' blocks as nodes too; then the numbers per block go. */
	for (size_t i = 0; i < nr; i++)
		r[i].block = g->num[r[i].block] == CEN_UNDEF ? CEN_UNDEF : logical(&d, g->num[r[i].block]);
	free(g->num);
	g->num = NULL;
	if (!(d.idom = malloc(d.N * sizeof(*d.idom)))) {
		err = -ENOMEM;
		goto out;
	}
	err = solve(&d, &rounds);
	t1 = att_now_ns();
	if (!err)
		err = tops(&d);
	if (!err)
		err = report(&d, &names);
	sess_logf(c->s, JMA_LOG_INFO, "census: dominators of %zu nodes (%zu roots): %u rounds over %llu "
		 "words of graph in %.1f ms, retained sizes in %.1f ms", d.N, d.S, rounds,
		 (unsigned long long)g->rows.n, (double)(t1 - t0) / 1e6, (double)(att_now_ns() - t1) / 1e6);
out:
	if (err == -ETIMEDOUT)
		err = sess_fail(c->s, JMA_ERR_UNSAFE, err, "census: timed out computing dominators");
	heap_strtab_free(&names);
	free(d.src);
	free(d.idom);
	free(d.tnode);
	free(d.tsrc);
	free(d.tbytes);
	free(d.tblocks);
	return err;
}
