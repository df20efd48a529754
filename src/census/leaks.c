/* leaks.c -- chap's classes: anchored, leaked, unreferenced; the pointer graph they come from.
 *
 * One pass over every block's words (contents.c, threads running) finds the
 * block each word points into -- any address inside a block counts, as C++
 * pointers to a base or member do -- and keeps those edges as compressed
 * rows (blocks come in address order, so row b is filled before row b+1).
 * Then: anchored = reachable from a root word (roots.c); leaked = live and
 * not anchored; unreferenced = leaked and pointed to by no other leaked
 * block.  Conservative, like every such scan: a stale word on a stack or a
 * number that looks like an address anchors a block that is gone for the
 * program, so leaks are a lower bound.  Memory: 4 bytes per edge, 13 per
 * block, plus for --by root 4 per block and 16 per root reference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

struct scan {
	struct cen_graph g;
	size_t last;		/* rows filled up to here */
	uint64_t lo, hi;	/* where blocks are at all */
	uint8_t *mark;		/* 1 anchored, 2 referenced by a leaked block, 4 jemalloc's own */
	uint32_t *stack;
	size_t nstack;
	uint32_t *parent;	/* with ROOTS: how each block was reached */
	struct cen_rootref *refs;	/* with ROOTS */
	size_t nrefs, caprefs;
	int want_refs;
};

static int push_edge(struct scan *sc, uint32_t t)
{
	if (cen_grow(&sc->g.to, &sc->g.cap, sc->g.nedges + 1, sizeof(*sc->g.to)))
		return -ENOMEM;
	sc->g.to[sc->g.nedges++] = t;
	return 0;
}

static int edges_of(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;
	long last_t = -1;

	(void)off;
	while (sc->last <= b)
		sc->g.off[sc->last++] = sc->g.nedges;
	/* A thread cache's stack: its stale slots name blocks handed out since. */
	if (sc->mark[b] & 4)
		return 0;
	for (size_t i = 0; i < nw; i++) {
		long t;
		if (w[i] < sc->lo || w[i] >= sc->hi || (t = cen_block_of(c, w[i])) < 0 ||
		    (size_t)t == b || t == last_t)
			continue;
		last_t = t;
		if (push_edge(sc, (uint32_t)t))
			return -ENOMEM;
	}
	return 0;
}

static int anchor(struct cen *c, struct scan *sc, long t, uint32_t from)
{
	(void)c;
	if (sc->mark[t] & 1)
		return 0;
	sc->mark[t] |= 1;
	if (sc->parent)
		sc->parent[t] = from;
	sc->stack[sc->nstack++] = (uint32_t)t;
	return 0;
}

static int root_words(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw, void *arg)
{
	struct scan *sc = arg;

	for (size_t i = 0; i < nw; i++) {
		long t;
		if (w[i] < sc->lo || w[i] >= sc->hi || (t = cen_block_of(c, w[i])) < 0)
			continue;
		anchor(c, sc, t, UINT32_MAX);
		if (!sc->want_refs)
			continue;
		if (cen_grow(&sc->refs, &sc->caprefs, sc->nrefs + 1, sizeof(*sc->refs)))
			return -ENOMEM;
		sc->refs[sc->nrefs++] = (struct cen_rootref){ at ? at + i * 8 : 0, tid, (uint32_t)t };
	}
	return 0;
}

static void count(struct jma_census_count *k, uint64_t size)
{
	k->blocks++;
	k->bytes += size;
}

static void example(struct cen *c, size_t b)
{
	struct jma_census *o = c->out;
	struct jma_census_example *x;

	if (o->nexamples >= JMA_CENSUS_EXAMPLES)
		return;
	x = &o->examples[o->nexamples++];
	x->addr = c->baddr[b];
	x->size = c->bsize[b];
	x->type = c->btype ? c->btype[b] : 0;
	x->nhead = c->bsize[b] < sizeof(x->head) ? (unsigned)c->bsize[b] : sizeof(x->head);
	if (cen_read(c, x->addr, x->head, x->nhead))
		x->nhead = 0;
}

int cen_leaks(struct cen *c)
{
	struct scan sc = { .want_refs = !!(c->o->flags & JMA_CENSUS_ROOTS) };
	struct jma_census *o = c->out;
	size_t n = c->nblocks;
	int err;

	if (!n)
		return 0;
	if (n > UINT32_MAX)
		return jma_fail(c->s, JMA_ERR_TARGET, -E2BIG, "census: too many blocks for a leak scan");
	sc.lo = c->baddr[0];
	sc.hi = c->baddr[n - 1] + c->bsize[n - 1];
	sc.g.off = malloc((n + 1) * sizeof(*sc.g.off));
	sc.mark = calloc(n, 1);
	sc.stack = malloc(n * sizeof(*sc.stack));
	if (sc.want_refs)
		sc.parent = malloc(n * sizeof(*sc.parent));
	if (!sc.g.off || !sc.mark || !sc.stack || (sc.want_refs && !sc.parent)) {
		err = jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c->nstacks; i++) {
		long t = cen_block_of(c, c->stacks[i]);
		if (t >= 0)
			sc.mark[t] |= 4;
	}
	err = cen_blocks_read(c, 0, "pointers", edges_of, &sc);
	while (!err && sc.last <= n)
		sc.g.off[sc.last++] = sc.g.nedges;
	if (!err)
		err = cen_roots_scan(c, root_words, &sc);
	if (err == -ENOMEM)
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	if (err)
		goto out;
	o->edges = sc.g.nedges;
	/* Breadth first, so that parent[] gives short paths; each block is
	 * queued once (its anchored bit set first): bounded by n. */
	for (size_t h = 0; h < sc.nstack; h++) {
		uint32_t b = sc.stack[h];
		for (uint64_t e = sc.g.off[b]; e < sc.g.off[b + 1]; e++)
			anchor(c, &sc, sc.g.to[e], b);
	}
	for (size_t b = 0; b < n; b++)
		if (!(sc.mark[b] & 1))
			for (uint64_t e = sc.g.off[b]; e < sc.g.off[b + 1]; e++)
				sc.mark[sc.g.to[e]] |= 2;
	c->bcls = malloc(n);
	if (!c->bcls) {
		err = jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t b = 0; b < n; b++) {
		if (sc.mark[b] & 1) {
			c->bcls[b] = JMA_CENSUS_ANCHORED;
			count(&o->anchored, c->bsize[b]);
			continue;
		}
		count(&o->leaked, c->bsize[b]);
		c->bcls[b] = JMA_CENSUS_LEAKED;
		if (!(sc.mark[b] & 2)) {
			c->bcls[b] = JMA_CENSUS_UNREFERENCED;
			count(&o->unreferenced, c->bsize[b]);
			example(c, b);
		}
	}
	jma_logf(c->s, JMA_LOG_INFO, "census: %llu pointers between blocks, %zu root words into "
		 "blocks", (unsigned long long)sc.g.nedges, sc.nrefs);
	if (sc.want_refs)
		err = cen_dominators(c, &sc.g, sc.refs, sc.nrefs, sc.parent);
out:
	free(sc.g.off);
	free(sc.g.to);
	free(sc.mark);
	free(sc.stack);
	free(sc.parent);
	free(sc.refs);
	return err;
}
