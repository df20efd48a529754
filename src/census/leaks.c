/* leaks.c -- chap's classes: anchored, leaked, unreferenced; jemalloc's own blocks apart.
 *
 * Anchored = reachable from a root word of the program (roots.c), found by
 * reading, from the roots on, only the blocks a pointer was found to: the
 * target's memory is the graph, nothing of it is copied (contents.c reads
 * what is pending in address order, neighbours together; any address
 * inside a block counts, as C++ pointers to a base or member do).  Then
 * jemalloc's own: what only its own roots reach (its data, each thread's
 * tsd: the thread caches' stacks, its per-thread arrays) -- never a leak.
 * The rest looks leaked; but it was read while the program ran, and a
 * pointer moved from a block not yet read into one already read hides its
 * block (Redis under LPUSH/LPOP: 2.6 % of live "leaked").  So the roots and
 * every anchored block are read again, and what they point to now is
 * anchored after all: leaked = still unreferenced by that second read.
 * Unreferenced = leaked and pointed to by no other leaked block.
 * Conservative, as every such scan: a stale word on a stack or a number
 * that looks like an address anchors a block that is gone for the program,
 * so leaks are a lower bound.
 *
 * Memory: three bits and a pending set (about a bit) per block; with --by
 * root, a number per block and per block read (8 bytes) and the graph's
 * rows on disk (cen_spill).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

struct scan {
	uint64_t *anch, *je, *refd;	/* bitmaps: anchored, jemalloc's own, referenced by a leaked block */
	struct cen_bits pending;	/* found, not yet read */
	uint64_t lo, hi;		/* where blocks are at all */
	int recheck;			/* in the second read */
	size_t nblocks;
	struct cen_graph *g;		/* with ROOTS */
	struct cen_rootref *refs;	/* with ROOTS */
	size_t nrefs, caprefs;
	int err;
};

static int bit(const uint64_t *m, size_t i)
{
	return (int)(m[i / 64] >> (i % 64) & 1);
}

static void set(uint64_t *m, size_t i)
{
	m[i / 64] |= 1ULL << (i % 64);
}

/* The block @w points into, or -1. */
static long target(struct cen *c, const struct scan *sc, uint64_t w)
{
	return w < sc->lo || w >= sc->hi ? -1 : cen_block_of(c, w);
}

static int looks_leaked(const struct scan *sc, size_t t)
{
	return !bit(sc->anch, t) && !bit(sc->je, t);
}

/* With ROOTS: block @b gets the next number and a row. */
static int number(struct scan *sc, size_t b)
{
	struct cen_graph *g = sc->g;

	if (g->m >= CEN_ROW - 1 || g->m >= sc->nblocks)
		return -E2BIG;
	g->num[b] = (uint32_t)g->m;
	g->order[g->m] = (uint32_t)b;
	return cen_spill_put(&g->rows, (uint32_t)g->m++ | CEN_ROW);
}

/* An anchored block read: what it points to is anchored too. */
static int expand(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;
	long last_t = -1;
	int err;

	if (sc->g && !off && (err = number(sc, b)))
		return err;
	/* A thread cache's stack: its stale slots name blocks handed out since. */
	if (cen_is_stack(c, b))
		return 0;
	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		/* A thread cache's stack is jemalloc's, whatever points at it
		 * (a register left over from a free()). */
		if (t < 0 || (size_t)t == b || t == last_t || cen_is_stack(c, (size_t)t))
			continue;
		last_t = t;
		if (sc->g && (err = cen_spill_put(&sc->g->rows, (uint32_t)t)))
			return err;
		if (!bit(sc->anch, (size_t)t)) {
			set(sc->anch, (size_t)t);
			cen_bits_set(&sc->pending, (size_t)t);
		}
	}
	return 0;
}

static int root_words(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw, void *arg)
{
	struct scan *sc = arg;

	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		if (t < 0 || cen_is_stack(c, (size_t)t) || (sc->recheck && !looks_leaked(sc, (size_t)t)))
			continue;
		if (!bit(sc->anch, (size_t)t)) {
			set(sc->anch, (size_t)t);
			cen_bits_set(&sc->pending, (size_t)t);
		}
		if (!sc->g)
			continue;
		if (cen_grow(&sc->refs, &sc->caprefs, sc->nrefs + 1, sizeof(*sc->refs)))
			return -ENOMEM;
		sc->refs[sc->nrefs++] = (struct cen_rootref){ at ? at + i * 8 : 0, tid, (uint32_t)t };
	}
	return 0;
}

/* What only jemalloc's own roots reach: its, not the program's. */
static int je_expand(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;

	(void)off;
	if (cen_is_stack(c, b))
		return 0;
	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		if (t >= 0 && looks_leaked(sc, (size_t)t)) {
			set(sc->je, (size_t)t);
			cen_bits_set(&sc->pending, (size_t)t);
		}
	}
	return 0;
}

static int je_root_words(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw, void *arg)
{
	struct scan *sc = arg;

	(void)tid;
	(void)at;
	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		if (t >= 0 && looks_leaked(sc, (size_t)t)) {
			set(sc->je, (size_t)t);
			cen_bits_set(&sc->pending, (size_t)t);
		}
	}
	return 0;
}

/* The second read: an anchored block pointing to one that looked leaked
 * anchors it (a row of its own for the graph). */
static int reread(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;
	int err;

	(void)off;
	if (!bit(sc->anch, b) || cen_is_stack(c, b) || (sc->g && sc->g->num[b] == CEN_UNDEF))
		return 0;
	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		if (t < 0 || (size_t)t == b || !looks_leaked(sc, (size_t)t))
			continue;
		set(sc->anch, (size_t)t);
		cen_bits_set(&sc->pending, (size_t)t);
		if (sc->g && ((err = cen_spill_put(&sc->g->rows, sc->g->num[b] | CEN_ROW)) ||
			      (err = cen_spill_put(&sc->g->rows, (uint32_t)t))))
			return err;
	}
	return 0;
}

/* A leaked block's pointers to other leaked blocks. */
static int leaked_refs(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;

	(void)off;
	for (size_t i = 0; i < nw; i++) {
		long t = target(c, sc, w[i]);
		if (t >= 0 && (size_t)t != b && looks_leaked(sc, (size_t)t))
			set(sc->refd, (size_t)t);
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
	cen_block_at(c, b, &x->addr, &x->size);
	x->type = cen_type_of(c, b);
	x->nhead = x->size < sizeof(x->head) ? (unsigned)x->size : sizeof(x->head);
	if (cen_read(c, x->addr, x->head, x->nhead))
		x->nhead = 0;
}

enum jma_census_class cen_class_of(const struct cen *c, size_t b)
{
	const uint64_t *cls = c->cls;

	if (!cls || bit(cls, 3 * b))
		return JMA_CENSUS_ANCHORED;
	if (bit(cls, 3 * b + 1))
		return JMA_CENSUS_JEMALLOC;
	return bit(cls, 3 * b + 2) ? JMA_CENSUS_LEAKED : JMA_CENSUS_UNREFERENCED;
}

/* The classes, counted; kept per block (3 bits) when a list is wanted. */
static int classify(struct cen *c, struct scan *sc)
{
	struct jma_census *o = c->out;
	int list = !!(c->o->flags & JMA_CENSUS_LIST);
	size_t b = 0;

	if (list && !(c->cls = calloc((3 * c->nblocks) / 64 + 1, 8)))
		return -ENOMEM;
	/* Run by run: a block's size is its run's. */
	for (size_t r = 0; r < c->nruns; r++)
	for (uint64_t q = 0; q < c->runs[r].npos; q++) {
		uint64_t size = c->runs[r].size;
		int anch, je, refd;

		if (!(c->ibits[c->runs[r].w0 + q / 64] >> (q % 64) & 1))
			continue;
		anch = bit(sc->anch, b);
		je = !anch && bit(sc->je, b);
		refd = bit(sc->refd, b);

		if (list) {
			if (anch)
				set(c->cls, 3 * b);
			if (je)
				set(c->cls, 3 * b + 1);
			if (refd)
				set(c->cls, 3 * b + 2);
		}
		if (anch) {
			count(&o->anchored, size);
		} else if (je) {
			count(&o->jemalloc_own, size);
		} else {
			count(&o->leaked, size);
			if (!refd) {
				count(&o->unreferenced, size);
				example(c, b);
			}
		}
		b++;
	}
	return 0;
}

/* How many blocks look leaked; with @pend, put them in the pending set. */
static size_t leaked_now(struct cen *c, struct scan *sc, int pend)
{
	size_t n = 0;

	for (size_t b = 0; b < c->nblocks; b++)
		if (looks_leaked(sc, b)) {
			if (pend)
				cen_bits_set(&sc->pending, b);
			n++;
		}
	return n;
}

static int run(struct cen *c, struct scan *sc)
{
	size_t words = c->nblocks / 64 + 1, before;
	int err;

	sc->anch = calloc(words, 8);
	sc->je = calloc(words, 8);
	sc->refd = calloc(words, 8);
	if (!sc->anch || !sc->je || !sc->refd || cen_bits_init(&sc->pending, c->nblocks))
		return -ENOMEM;
	/* The program's roots, and all they lead to. */
	if ((err = cen_roots_scan(c, root_words, sc)) ||
	    (err = cen_blocks_read(c, &sc->pending, 0, "pointers", expand, sc)))
		return err;
	/* jemalloc's own: what its roots reach that the program's do not. */
	for (size_t i = 0; i < c->nstacks; i++) {
		long t = cen_block_of(c, c->stacks[i]);
		if (t >= 0 && looks_leaked(sc, (size_t)t))
			set(sc->je, (size_t)t);
	}
	if ((err = cen_roots_jemalloc(c, je_root_words, sc)) ||
	    (err = cen_blocks_read(c, &sc->pending, 0, "jemalloc's own", je_expand, sc)))
		return err;
	/* What looks leaked after one read while the program ran: read the
	 * roots and the anchored blocks again (all blocks are read; leaked ones
	 * are few and skipped). */
	before = leaked_now(c, sc, 0);
	c->out->rechecked = before;
	if (before) {
		sc->recheck = 1;
		if ((err = cen_roots_scan(c, root_words, sc)) ||
		    (err = cen_blocks_read(c, NULL, 0, "pointers, again", reread, sc)) ||
		    (err = cen_blocks_read(c, &sc->pending, 0, "pointers, again", expand, sc)))
			return err;
		c->out->found_again = before - leaked_now(c, sc, 1);
		/* Unreferenced: leaked, and no other leaked block points to it. */
		err = cen_blocks_read(c, &sc->pending, 0, "leaked", leaked_refs, sc);
	}
	return err;
}

int cen_leaks(struct cen *c)
{
	struct scan sc = { .nblocks = c->nblocks };
	struct cen_graph g = { 0 };
	int err = 0;

	if (!c->nblocks)
		return 0;
	sc.lo = c->runs[0].base;
	sc.hi = c->runs[c->nruns - 1].base + c->runs[c->nruns - 1].npos * c->runs[c->nruns - 1].size;
	if (c->o->flags & JMA_CENSUS_ROOTS) {
		if (c->nblocks >= CEN_ROW - 1)
			return jma_fail(c->s, JMA_ERR_TARGET, -E2BIG, "census: too many blocks for --by "
					"root (%zu)", c->nblocks);
		sc.g = &g;
		/* Each block is read (numbered) at most once: no room to grow. */
		if (!(g.num = malloc(c->nblocks * sizeof(*g.num))) ||
		    !(g.order = malloc(c->nblocks * sizeof(*g.order))) || cen_spill_open(&g.rows)) {
			err = -ENOMEM;
			goto out;
		}
		memset(g.num, 0xff, c->nblocks * sizeof(*g.num));
		c->out->graph_on_disk = g.rows.fd >= 0;
	}
	err = run(c, &sc);
	cen_bits_free(&sc.pending);
	if (!err)
		err = classify(c, &sc);
	if (!err)
		jma_logf(c->s, JMA_LOG_INFO, "census: %zu blocks looked leaked after the first read, "
			 "%llu of them anchored by the second; %zu root words into blocks",
			 (size_t)c->out->rechecked, (unsigned long long)c->out->found_again, sc.nrefs);
	free(sc.anch);
	free(sc.je);
	free(sc.refd);
	sc.anch = sc.je = sc.refd = NULL;
	if (!err && sc.g)
		err = cen_dominators(c, &g, sc.refs, sc.nrefs);
out:
	if (err == -ENOMEM)
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	else if (err == -E2BIG)
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "census: too many blocks read for --by root");
	else if (err && err != -ETIMEDOUT && !jma_errmsg(c->s)[0])
		err = jma_fail(c->s, JMA_ERR_TARGET, err, "census: the leak scan: %s", strerror(-err));
	cen_bits_free(&sc.pending);
	free(sc.anch);
	free(sc.je);
	free(sc.refd);
	free(sc.refs);
	free(g.num);
	free(g.order);
	cen_spill_close(&g.rows);
	return err;
}
