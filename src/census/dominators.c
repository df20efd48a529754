/* dominators.c -- what each global and each thread retains: the dominator tree of the heap, as MAT.
 *
 * Nodes: the blocks, one node per root source (a global by its symbol, a
 * thread's stack and registers) and one start node above them all.  A block
 * is retained by a source when every path from the start to it passes
 * through that source.  Immediate dominators by Cooper, Harvey and Kennedy's
 * iteration over reverse postorder ("A Simple, Fast Dominance Algorithm"),
 * bounded to ITER_MAX rounds; retained sizes summed up the tree; each
 * block's owner (the root or listed holder retaining it).  Memory: 4 bytes
 * per edge for the predecessors, about 20 per node, 4 per block kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "census/census.h"

#define ITER_MAX	64
#define HOLDERS		20	/* blocks listed as retaining most */
#define PATH_MAX_HOPS	6
#define PATH_LEN	1024
#define NAME_LEN	256
#define NAMED_MAX	100000	/* static root words named by symbol */
#define UNDEF		UINT32_MAX

struct dom {
	size_t n, nsrc, N;	/* blocks, sources, all nodes (start = N - 1) */
	const struct cen_graph *g;
	uint64_t *soff;		/* sources' successor rows */
	uint32_t *sto;
	uint32_t *po, *order, *idom;
	size_t nreach;
	uint64_t *poff;		/* predecessors */
	uint32_t *pto;
};

/* Successor @k of node @v, or UNDEF past the last. */
static uint32_t succ(const struct dom *d, size_t v, uint64_t k)
{
	if (v < d->n)
		return d->g->off[v] + k < d->g->off[v + 1] ? d->g->to[d->g->off[v] + k] : UNDEF;
	if (v < d->n + d->nsrc) {
		size_t s = v - d->n;
		return d->soff[s] + k < d->soff[s + 1] ? d->sto[d->soff[s] + k] : UNDEF;
	}
	return k < d->nsrc ? (uint32_t)(d->n + k) : UNDEF;
}

/* Reverse postorder from the start node, by an explicit stack. */
static int number(struct dom *d)
{
	uint32_t *st = malloc(d->N * sizeof(*st));
	uint64_t *it = malloc(d->N * sizeof(*it));
	uint32_t *post = malloc(d->N * sizeof(*post));
	size_t sp = 0, np = 0;

	if (!st || !it || !post) {
		free(st);
		free(it);
		free(post);
		return -ENOMEM;
	}
	for (size_t v = 0; v < d->N; v++)
		d->po[v] = UNDEF;
	st[sp] = (uint32_t)(d->N - 1);
	it[sp++] = 0;
	d->po[d->N - 1] = 0;	/* seen */
	while (sp) {
		uint32_t v = st[sp - 1], w = succ(d, v, it[sp - 1]++);

		if (w == UNDEF) {
			post[np++] = v;
			sp--;
		} else if (d->po[w] == UNDEF) {
			d->po[w] = 0;
			st[sp] = w;
			it[sp++] = 0;
		}
	}
	d->nreach = np;
	for (size_t i = 0; i < np; i++) {
		d->order[i] = post[np - 1 - i];
		d->po[d->order[i]] = (uint32_t)i;
	}
	free(st);
	free(it);
	free(post);
	return 0;
}

static int preds(struct dom *d)
{
	uint64_t *fill;

	d->poff = calloc(d->N + 1, sizeof(*d->poff));
	if (!d->poff)
		return -ENOMEM;
	for (size_t v = 0; v < d->N; v++)
		if (d->po[v] != UNDEF)
			for (uint64_t k = 0, w; (w = succ(d, v, k)) != UNDEF; k++)
				d->poff[w + 1]++;
	for (size_t v = 0; v < d->N; v++)
		d->poff[v + 1] += d->poff[v];
	d->pto = malloc((d->poff[d->N] ? d->poff[d->N] : 1) * sizeof(*d->pto));
	fill = malloc(d->N * sizeof(*fill));
	if (!d->pto || !fill) {
		free(fill);
		return -ENOMEM;
	}
	memcpy(fill, d->poff, d->N * sizeof(*fill));
	for (size_t v = 0; v < d->N; v++)
		if (d->po[v] != UNDEF)
			for (uint64_t k = 0, w; (w = succ(d, v, k)) != UNDEF; k++)
				d->pto[fill[w]++] = (uint32_t)v;
	free(fill);
	return 0;
}

static uint32_t intersect(const struct dom *d, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (d->po[a] > d->po[b])
			a = d->idom[a];
		while (d->po[b] > d->po[a])
			b = d->idom[b];
	}
	return a;
}

static int solve(struct cen *c, struct dom *d)
{
	int changed = 1;

	for (size_t v = 0; v < d->N; v++)
		d->idom[v] = UNDEF;
	d->idom[d->N - 1] = (uint32_t)(d->N - 1);
	for (int round = 0; changed && round < ITER_MAX; round++) {
		changed = 0;
		if (cen_timed_out(c))
			return -ETIMEDOUT;
		for (size_t i = 1; i < d->nreach; i++) {
			uint32_t v = d->order[i], nd = UNDEF;

			for (uint64_t e = d->poff[v]; e < d->poff[v + 1]; e++) {
				uint32_t p = d->pto[e];
				if (d->idom[p] == UNDEF)
					continue;
				nd = nd == UNDEF ? p : intersect(d, p, nd);
			}
			if (nd != UNDEF && d->idom[v] != nd) {
				d->idom[v] = nd;
				changed = 1;
			}
		}
	}
	return 0;
}

/* Root indexes, by retained bytes descending then name (qsort_r's argument: the roots). */
static int cmp_root(const void *a, const void *b, void *arg)
{
	const struct jma_census_root *r = arg, *x = &r[*(const uint32_t *)a], *y = &r[*(const uint32_t *)b];
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/* Sort o->roots; *@where gets, per source, its place in the sorted table. */
static int sort_roots(struct jma_census *o, uint32_t **where)
{
	uint32_t *order = malloc((o->nroots ? o->nroots : 1) * sizeof(*order));
	struct jma_census_root *v = malloc((o->nroots ? o->nroots : 1) * sizeof(*v));

	*where = malloc((o->nroots ? o->nroots : 1) * sizeof(**where));
	if (!order || !v || !*where) {
		free(order);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->nroots; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, o->nroots, sizeof(*order), cmp_root, o->roots);
	for (size_t k = 0; k < o->nroots; k++) {
		v[k] = o->roots[order[k]];
		(*where)[order[k]] = (uint32_t)k;
	}
	free(o->roots);
	o->roots = v;
	free(order);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Each block's owner (census.h): the block at the top of its dominator
 * chain -- the last one before a root source or the start -- is its holder;
 * a listed holder names it, else the source above it does.  Reverse
 * postorder puts a block's immediate dominator first, once the iteration
 * converged; were it cut short, a block whose dominator is not done yet
 * stands for itself. */
static int owners(struct cen *c, const struct dom *d, const uint32_t *best, size_t nb,
		  const uint32_t *where)
{
	struct jma_census *o = c->out;
	uint32_t *top = malloc((d->n ? d->n : 1) * sizeof(*top));
	uint32_t listed[HOLDERS][2];	/* {block, its index in holders}, by block */

	o->owner = malloc((d->n ? d->n : 1) * sizeof(*o->owner));
	if (!top || !o->owner) {
		free(top);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nb; k++) {
		listed[k][0] = best[k];
		listed[k][1] = (uint32_t)k;
	}
	qsort(listed, nb, sizeof(listed[0]), cmp_u32);
	for (size_t v = 0; v < d->n; v++)
		top[v] = UNDEF;
	for (size_t i = 1; i < d->nreach; i++) {
		uint32_t v = d->order[i], p;

		if (v >= d->n || (p = d->idom[v]) == UNDEF)
			continue;
		top[v] = p >= d->n || top[p] == UNDEF ? v : top[p];
	}
	for (size_t v = 0; v < d->n; v++) {
		uint32_t h = top[v], s;
		const uint32_t (*l)[2];

		o->owner[v] = JMA_CENSUS_OWNER_NONE;
		if (h == UNDEF)
			continue;
		if ((l = bsearch(&h, listed, nb, sizeof(listed[0]), cmp_u32))) {
			o->owner[v] = (uint32_t)o->nroots + (*l)[1];
			continue;
		}
		s = d->idom[h];
		o->owner[v] = s >= d->n && s < d->n + d->nsrc ? where[s - d->n] : JMA_CENSUS_OWNER_SHARED;
	}
	free(top);
	return 0;
}

/* Each reference's source, by name, into @names (whose id 0 is "": source s
 * is id s + 1); src[i] for refs[i].  Static
 * words are named by symbol (libdwfl) up to NAMED_MAX of them, then by module
 * only: a program with a huge static array of pointers stays linear. */
static int sources(struct cen *c, const struct cen_rootref *r, size_t nr, struct heap_strtab *names,
		   uint32_t *src)
{
	char buf[NAME_LEN];
	size_t named = 0;

	for (size_t i = 0; i < nr; i++) {
		uint32_t id;

		if (r[i].tid) {
			snprintf(buf, sizeof(buf), "thread %d (stack, registers)", (int)r[i].tid);
		} else if (named++ < NAMED_MAX) {
			cen_root_name(c, r[i].at, buf, sizeof(buf));
		} else {
			const struct att_map *m = att_maps_find(c->maps, c->nmaps, r[i].at);
			const char *p = m && m->path ? m->path : "?", *b = strrchr(p, '/');
			snprintf(buf, sizeof(buf), "static data of %s", b ? b + 1 : p);
		}
		if ((id = heap_str(names, buf)) == UINT32_MAX)
			return -ENOMEM;
		src[i] = id - 1;	/* id 0 is the table's "" */
	}
	return 0;
}

/* "ROOT -> 0xaddr (size) -> ... -> 0xaddr (size)": how block @v is reached. */
static char *path_of(struct cen *c, uint32_t v, const uint32_t *parent, const struct cen_rootref *r,
		     size_t nr, const uint32_t *src, char *const *names)
{
	uint32_t hop[PATH_MAX_HOPS];
	size_t nh = 0, used = 0;
	char buf[PATH_LEN];
	const char *root = "?";

	for (uint32_t b = v; nh < PATH_MAX_HOPS; b = parent[b]) {
		hop[nh++] = b;
		if (parent[b] == UINT32_MAX)
			break;
	}
	if (parent[hop[nh - 1]] == UINT32_MAX)
		for (size_t i = 0; i < nr; i++)
			if (r[i].block == hop[nh - 1]) {
				root = names[src[i]];
				break;
			}
	used = (size_t)snprintf(buf, sizeof(buf), "%s", parent[hop[nh - 1]] == UINT32_MAX ? root : "...");
	for (size_t i = nh; i-- > 0 && used < sizeof(buf);)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, " -> 0x%llx (%llu)",
					 (unsigned long long)c->baddr[hop[i]],
					 (unsigned long long)c->bsize[hop[i]]);
	return strdup(buf);
}

/* The HOLDERS blocks retaining most of those no single block dominates. */
static int holders(struct cen *c, const struct dom *d, const uint64_t *ret, const uint64_t *cnt,
		   const uint32_t *parent, const struct cen_rootref *r, size_t nr, const uint32_t *src,
		   char *const *names, uint32_t best[HOLDERS], size_t *nbest)
{
	size_t nb = 0;
	struct jma_census *o = c->out;

	for (size_t v = 0; v < d->n; v++) {
		size_t k;
		if (d->po[v] == UNDEF || d->idom[v] == UNDEF || d->idom[v] < d->n || c->bsize[v] == 0)
			continue;
		if (nb == HOLDERS && ret[v] <= ret[best[nb - 1]])
			continue;
		k = nb < HOLDERS ? nb++ : nb - 1;
		while (k > 0 && ret[best[k - 1]] < ret[v]) {
			best[k] = best[k - 1];
			k--;
		}
		best[k] = (uint32_t)v;
	}
	*nbest = nb;
	o->holders = calloc(nb ? nb : 1, sizeof(*o->holders));
	if (!o->holders)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++) {
		struct jma_census_holder *h = &o->holders[o->nholders];
		uint32_t v = best[i];

		h->addr = c->baddr[v];
		h->size = c->bsize[v];
		h->type = c->btype ? c->btype[v] : 0;
		h->bytes = ret[v];
		h->blocks = cnt[v];
		if (!(h->path = path_of(c, v, parent, r, nr, src, names)))
			return -ENOMEM;
		o->nholders++;
	}
	return 0;
}

int cen_dominators(struct cen *c, const struct cen_graph *g, const struct cen_rootref *r, size_t nr,
		   const uint32_t *parent)
{
	struct dom d = { .n = c->nblocks, .g = g };
	uint32_t *src = malloc((nr ? nr : 1) * sizeof(*src));
	uint64_t *ret = NULL, *cnt = NULL;
	uint32_t best[HOLDERS], *where = NULL;
	size_t nbest = 0;
	struct heap_strtab names;
	struct jma_census *o = c->out;
	int err = heap_strtab_init(&names) || !src ? -ENOMEM : sources(c, r, nr, &names, src);

	if (err)
		goto out;
	d.nsrc = names.n - 1;
	d.N = d.n + d.nsrc + 1;
	d.soff = calloc(d.nsrc + 1, sizeof(*d.soff));
	d.sto = malloc((nr ? nr : 1) * sizeof(*d.sto));
	d.po = malloc(d.N * sizeof(*d.po));
	d.order = malloc(d.N * sizeof(*d.order));
	d.idom = malloc(d.N * sizeof(*d.idom));
	ret = calloc(d.N, sizeof(*ret));
	cnt = calloc(d.N, sizeof(*cnt));
	if (!d.soff || !d.sto || !d.po || !d.order || !d.idom || !ret || !cnt) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++)
		d.soff[src[i] + 1]++;
	for (size_t s = 0; s < d.nsrc; s++)
		d.soff[s + 1] += d.soff[s];
	{
		uint64_t *fill = malloc((d.nsrc + 1) * sizeof(*fill));
		if (!fill) {
			err = -ENOMEM;
			goto out;
		}
		memcpy(fill, d.soff, (d.nsrc + 1) * sizeof(*fill));
		for (size_t i = 0; i < nr; i++)
			d.sto[fill[src[i]]++] = r[i].block;
		free(fill);
	}
	{
		int64_t t0 = att_now_ns(), t1, t2;
		if ((err = number(&d)))
			goto out;
		t1 = att_now_ns();
		if ((err = preds(&d)))
			goto out;
		t2 = att_now_ns();
		if ((err = solve(c, &d)))
			goto out;
		jma_logf(c->s, JMA_LOG_INFO, "census: dominators of %zu nodes: order %.1f ms, "
			 "predecessors %.1f ms, solved in %.1f ms (%zu root sources)", d.nreach,
			 (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
			 (double)(att_now_ns() - t2) / 1e6, d.nsrc);
	}
	for (size_t v = 0; v < d.n; v++) {
		ret[v] = c->bsize[v];
		cnt[v] = 1;
	}
	for (size_t i = d.nreach; i-- > 1;) {
		uint32_t v = d.order[i], p = d.idom[v];
		if (p == UNDEF)
			continue;
		ret[p] += ret[v];
		cnt[p] += cnt[v];
	}
	o->roots = calloc(d.nsrc ? d.nsrc : 1, sizeof(*o->roots));
	if (!o->roots) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = holders(c, &d, ret, cnt, parent, r, nr, src, names.str + 1, best, &nbest)))
		goto out;
	for (size_t s = 0; s < d.nsrc; s++) {
		o->roots[s].name = names.str[s + 1];
		names.str[s + 1] = NULL;
		o->roots[s].bytes = ret[d.n + s];
		o->roots[s].blocks = cnt[d.n + s];
	}
	o->nroots = d.nsrc;
	if (!(err = sort_roots(o, &where)) &&
	    (c->o->flags & (JMA_CENSUS_LIST | JMA_CENSUS_TYPES | JMA_CENSUS_LEAKS)))
		err = owners(c, &d, best, nbest, where);
out:
	if (err == -ENOMEM)
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	else if (err == -ETIMEDOUT)
		err = jma_fail(c->s, JMA_ERR_UNSAFE, err, "census: timed out computing dominators");
	heap_strtab_free(&names);
	free(src);
	free(d.soff);
	free(d.sto);
	free(d.po);
	free(d.order);
	free(d.idom);
	free(d.poff);
	free(d.pto);
	free(ret);
	free(cnt);
	free(where);
	return err;
}
