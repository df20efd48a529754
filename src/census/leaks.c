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

#include "attach/clock.h"
#include "census/census.h"

#define CONFIRM_MAX	100000	/* blocks that look leaked checked again, stopped */
#define HEAD		64	/* bytes of each compared */
#define SNAP_MAX	(128ULL << 20)	/* a heap this small is copied in the second stop */
#define SNAP_CHUNK	(1024 * 1024)
#define SNAP_NS		150000000	/* the copy's share of the stop at most */

struct scan {
	uint64_t *anch, *je, *refd;	/* bitmaps: anchored, jemalloc's own, referenced by a leaked block */
	uint64_t *gone;			/* bitmap: freed or changed since it was read */
	struct cen_bits pending;	/* found, not yet read */
	uint64_t lo, hi;		/* where blocks are at all */
	uint64_t clo, chi;		/* where the blocks that look leaked are */
	int recheck;			/* in the second read */
	const struct cen_index *now;	/* ... the blocks there are then */
	struct cen *c;
	size_t nblocks;
	struct cen_graph *g;		/* with ROOTS */
	struct cen_rootref *refs;	/* with ROOTS */
	size_t nrefs, caprefs;
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
	return w < sc->lo || w >= sc->hi ? -1 : cen_block_of(&c->ix, w);
}

static int looks_leaked(const struct scan *sc, size_t t)
{
	return !bit(sc->anch, t) && !bit(sc->je, t) && !bit(sc->gone, t);
}

/* With ROOTS: block @b gets the next number and a row. */
static int number(struct scan *sc, size_t b)
{
	struct cen_graph *g = sc->g;

	if (g->m >= CEN_ROW - 1 || g->m >= sc->nblocks)
		return sess_fail(sc->c->s, JMA_ERR_TARGET, -E2BIG, "census: too many blocks read for "
				"the dominator tree");
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

/* The second read, of every block there is now (@b in sc->now): one the
 * census had and anchored, pointing to a block that looked leaked, anchors
 * it (a row of its own for the graph); one it did not have (allocated
 * since) shows it in use, by a holder the census cannot place. */
static int reread(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off, void *arg)
{
	struct scan *sc = arg;
	uint64_t addr, size, a = 0, sz = 0;
	long ob;
	int err;

	(void)off;
	cen_block_at(sc->now, b, &addr, &size);
	ob = cen_block_of(&c->ix, addr);
	if (ob >= 0)
		cen_block_at(&c->ix, (size_t)ob, &a, &sz);
	if (ob < 0 || a != addr || sz != size || bit(sc->gone, (size_t)ob)) {
		ob = -1;	/* allocated since, or in use again: in use, holder unknown */
	} else if (!bit(sc->anch, (size_t)ob) || cen_is_stack(c, (size_t)ob) ||
		   (sc->g && sc->g->num[ob] == CEN_UNDEF)) {
		return 0;	/* leaked or jemalloc's: not what anchors */
	}
	for (size_t i = 0; i < nw; i++) {
		long t;
		/* Only pointers into what looks leaked matter: most words are
		 * settled by their value alone. */
		if (w[i] < sc->clo || w[i] >= sc->chi)
			continue;
		t = target(c, sc, w[i]);
		if (t < 0 || t == ob || !looks_leaked(sc, (size_t)t))
			continue;
		/* In use: anchored, and what it leads to with it (a holder the
		 * census does not have gives the graph no edge: no root retains
		 * it). */
		set(sc->anch, (size_t)t);
		cen_bits_set(&sc->pending, (size_t)t);
		if (ob >= 0 && sc->g && ((err = cen_spill_put(&sc->g->rows, sc->g->num[ob] | CEN_ROW)) ||
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
	cen_block_at(&c->ix, b, &x->addr, &x->size);
	x->type = cen_type_of(c, b);
	x->nhead = x->size < sizeof(x->head) ? (unsigned)x->size : sizeof(x->head);
	if (cen_read(c, x->addr, x->head, x->nhead))
		x->nhead = 0;
}

/* The classes, counted; kept per block (2 bits) when a list is wanted. */
static int classify(struct cen *c, struct scan *sc)
{
	struct jma_census *o = c->out;
	int list = !!(c->o->flags & JMA_CENSUS_LIST);
	size_t b = 0;

	if (list && !(c->cls = calloc(c->ix.nblocks / 32 + 1, 8)))
		return -ENOMEM;
	/* Run by run: a block's size is its run's. */
	for (size_t r = 0; r < c->ix.nruns; r++)
	for (uint64_t q = 0; q < c->ix.runs[r].npos; q++) {
		uint64_t size = c->ix.runs[r].size;
		int anch, je, refd;

		if (!(c->ix.ibits[c->ix.runs[r].w0 + q / 64] >> (q % 64) & 1))
			continue;
		anch = bit(sc->anch, b) || bit(sc->gone, b);
		je = !anch && bit(sc->je, b);
		refd = bit(sc->refd, b);
		if (bit(sc->gone, b) && !bit(sc->anch, b))
			count(&o->gone, size);

		if (list)
			cen_cls_set(c->cls, b, anch ? JMA_CENSUS_ANCHORED : je ? JMA_CENSUS_JEMALLOC :
				    refd ? JMA_CENSUS_LEAKED : JMA_CENSUS_UNREFERENCED);
		if (anch) {
			if (!bit(sc->gone, b) || bit(sc->anch, b))
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

/* A block that looks leaked, to confirm: its first bytes' hash as read. */
struct cand {
	uint32_t b;
	uint64_t addr, hash;
};

static uint64_t head_hash(struct cen *c, uint64_t addr, uint64_t size, int *ok)
{
	unsigned char head[HEAD];
	uint64_t h = 1469598103934665603ULL, n = size < HEAD ? size : HEAD;

	*ok = !cen_read(c, addr, head, n);
	for (uint64_t i = 0; *ok && i < n; i++)
		h = (h ^ head[i]) * 1099511628211ULL;
	return h;
}

/* The census's counts, kept while a second walk of the map counts again. */
struct counts {
	struct jma_census_count live, cached, explicit_cached;
	uint64_t extents, slabs, bad_words, bad_nfree, bad_bins, unheld_extents, unheld_bytes;
	unsigned threads;
	struct jma_census_size bysz[CEN_NSIZES_MAX];
};

static void counts_save(const struct cen *c, struct counts *k)
{
	k->live = c->out->live;
	k->cached = c->out->cached;
	k->explicit_cached = c->out->explicit_cached;
	k->extents = c->out->extents;
	k->slabs = c->out->slabs;
	k->threads = c->out->threads;
	k->bad_words = c->bad_words;
	k->bad_nfree = c->bad_nfree;
	k->bad_bins = c->bad_bins;
	k->unheld_extents = c->unheld_extents;
	k->unheld_bytes = c->unheld_bytes;
	memcpy(k->bysz, c->bysz, sizeof(k->bysz));
}

static void counts_restore(struct cen *c, const struct counts *k)
{
	c->out->live = k->live;
	c->out->cached = k->cached;
	c->out->explicit_cached = k->explicit_cached;
	c->out->extents = k->extents;
	c->out->slabs = k->slabs;
	c->out->threads = k->threads;
	c->bad_words = k->bad_words;
	c->bad_nfree = k->bad_nfree;
	c->bad_bins = k->bad_bins;
	c->unheld_extents = k->unheld_extents;
	c->unheld_bytes = k->unheld_bytes;
	memcpy(c->bysz, k->bysz, sizeof(k->bysz));
}

/* How many blocks look leaked; with @pend, put them in the pending set. */
static size_t leaked_now(struct cen *c, struct scan *sc, int pend)
{
	size_t n = 0;

	for (size_t b = 0; b < c->ix.nblocks; b++)
		if (looks_leaked(sc, b)) {
			if (pend)
				cen_bits_set(&sc->pending, b);
			n++;
		}
	return n;
}

static uint64_t popcount(const uint64_t *m, size_t nblocks)
{
	uint64_t n = 0;

	for (size_t i = 0; i <= nblocks / 64; i++)
		n += (uint64_t)__builtin_popcountll(m[i]);
	return n;
}

static int count_words(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw, void *arg)
{
	(void)c;
	(void)tid;
	(void)at;
	(void)w;
	*(uint64_t *)arg += nw * 8;
	return 0;
}

/* Room for the extents of a heap of @bytes at a later stop: it may have
 * grown meanwhile (twice and 16 MiB more), but no more than twice what
 * the target really has (a fake extent is no reason to reserve) and
 * SNAP_MAX.  A copy that does not fit is not made. */
static uint64_t snap_room(struct cen *c, uint64_t bytes)
{
	uint64_t res = cen_resident(c), room;

	if (res && res < bytes)
		bytes = res;
	room = 2 * bytes + (16ULL << 20);
	return room < SNAP_MAX ? room : SNAP_MAX;
}

/* How many bytes the roots are (static data and stacks, read now). */
static uint64_t roots_bytes(struct cen *c)
{
	uint64_t n = 0;

	return cen_roots_scan(c, count_words, &n) ? 0 : n + n / 8;
}

static int snap_words(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw, void *arg)
{
	(void)tid;
	(void)arg;
	return at ? cen_snap_add(c, at, w, nw * 8) : 0;	/* registers: c->th has them */
}

/* Copy the roots and every extent the walk found, if all of it fits the
 * room made before the stop and SNAP_NS; else nothing. */
static void snapshot(struct cen *c)
{
	int64_t end = att_now_ns() + SNAP_NS;
	int err = c->snap.max ? 0 : -E2BIG;
	uint64_t base, size;

	if (!err)
		err = cen_roots_scan(c, snap_words, NULL);
	for (size_t i = 0; !err && cen_extent_at(c, i, &base, &size); i++) {
		for (uint64_t off = 0; off < size && !err; off += SNAP_CHUNK) {
			uint64_t n = size - off < SNAP_CHUNK ? size - off : SNAP_CHUNK;
			err = att_now_ns() > end || cen_timed_out(c) ? -ETIMEDOUT :
			      cen_snap_add(c, base + off, NULL, n);
		}
	}
	if (err)
		cen_snap_free(c);
	else
		c->out->reread_stopped = c->snap.used;
}

/* What looks leaked after a first read while the program ran, checked
 * again.  With every thread stopped again (as the census's own stop:
 * --timeout, 10 s by default, refused while a thread is inside jemalloc): a
 * block jemalloc now says is free (its extent, its slab's bitmap, a thread
 * cache) was freed since the stop, one whose first bytes changed is in use
 * -- nobody writes to a block nobody points to --, and the map is walked
 * again for every block there is now.  Then, the threads running, the
 * roots and all those blocks are read again: a pointer moved from a block
 * not yet read into one already read, or held by a block allocated since
 * (a list node popped and pushed again: Redis under LPUSH/LPOP), is found
 * now.  At most CONFIRM_MAX blocks are checked stopped; a stop that cannot
 * be had, or runs out of time, leaves what looks leaked unconfirmed (said). */
static int recheck(struct cen *c, struct scan *sc)
{
	struct jma_census *o = c->out;
	struct cen_index old, now = { 0 };
	struct counts k;
	struct cand *v = NULL;
	size_t n = 0, cap = 0, checked = 0;
	uint64_t stop_ns = o->stop_ns, before;
	int64_t start_ns = c->start_ns, deadline_ns = c->deadline_ns;
	void *tok = NULL;
	int err = 0, bad;

	for (size_t b = 0; b < c->ix.nblocks && n < CONFIRM_MAX && !err; b++) {
		uint64_t addr, size;
		int ok;

		if (!looks_leaked(sc, b))
			continue;
		cen_block_at(&c->ix, b, &addr, &size);
		if (cen_grow(&v, &cap, n + 1, sizeof(*v)))
			err = -ENOMEM;
		else
			v[n++] = (struct cand){ (uint32_t)b, addr, head_hash(c, addr, size, &ok) };
	}
	before = popcount(sc->anch, c->ix.nblocks);
	if (err || !n || (err = cen_walk_prepare(c)))
		goto out;
	/* Room for a copy of a small heap (its extents, its roots), made
	 * before the stop. */
	if (c->extent_bytes <= SNAP_MAX &&
	    (err = cen_snap_prepare(c, snap_room(c, c->extent_bytes) + roots_bytes(c),
				    2 * c->out->extents + SNAP_MAX / SNAP_CHUNK + 4096)))
		goto out;
	c->start_ns = att_now_ns();
	c->deadline_ns = c->start_ns + (int64_t)sess_timeout_ms(c->s) * 1000000;
	free(c->th);
	c->th = NULL;
	c->nth = 0;
	if (cen_stop(c, &tok))
		goto out;
	cen_cache_flush(c);
	counts_save(c, &k);
	c->ncached = c->nstacks = c->nraw = 0;
	bad = cen_tcache_read(c) || cen_walk(c);
	for (size_t i = 0; i < n && !bad; i++, checked++) {
		uint64_t size = cen_block_size(&c->ix, v[i].b);
		int ok, alive;

		if (i % 1024 == 1023 && cen_timed_out(c)) {
			bad = 1;
			break;
		}
		alive = cen_alive(c, v[i].addr);
		if (!alive) {
			set(sc->gone, v[i].b);
		} else if (alive > 0 && (head_hash(c, v[i].addr, size, &ok) != v[i].hash || !ok)) {
			/* Written to: in use, and so is what it points to. */
			set(sc->anch, v[i].b);
			cen_bits_set(&sc->pending, v[i].b);
		}
	}
	/* A small heap is copied whole while the threads are still stopped:
	 * its second read is then of one moment (the roots and every extent). */
	if (!bad)
		snapshot(c);
	cen_go(c, tok);
	cen_cache_flush(c);
	cen_snap_seal(c);
	o->confirm_stop_ns = o->stop_ns;
	o->stop_ns = stop_ns;
	c->start_ns = start_ns;
	c->deadline_ns = deadline_ns;
	if (bad) {
		/* Half a check is none: a freed block may be in a cache not read. */
		counts_restore(c, &k);
		memset(sc->gone, 0, (c->ix.nblocks / 64 + 1) * 8);
		goto out;
	}
	/* Thread caches hold freed blocks too (sorted now the threads run). */
	cen_tcache_sort(c);
	for (size_t i = 0; i < checked; i++)
		if (cen_is_cached(c, v[i].addr))
			set(sc->gone, v[i].b);
	o->confirmed = checked;
	/* The blocks now, into an index of their own, and all of them read. */
	old = c->ix;
	memset(&c->ix, 0, sizeof(c->ix));
	err = cen_expand(c);
	now = c->ix;
	c->ix = old;
	counts_restore(c, &k);
	cen_walk_free(c);
	if (err)
		goto out;
	sc->now = &now;
	sc->recheck = 1;
	sc->clo = UINT64_MAX;
	sc->chi = 0;
	for (size_t b = 0; b < c->ix.nblocks; b++)
		if (looks_leaked(sc, b)) {
			uint64_t a = cen_block_addr(&c->ix, b), end = a + cen_block_span(&c->ix, b);
			sc->clo = a < sc->clo ? a : sc->clo;
			sc->chi = end > sc->chi ? end : sc->chi;
		}
	if ((err = cen_roots_scan(c, root_words, sc)) ||
	    (err = cen_blocks_read(c, &now, NULL, 0, "pointers, again", reread, sc)) ||
	    (err = cen_blocks_read(c, &c->ix, &sc->pending, 0, "pointers, again", expand, sc)))
		goto out;
	o->found_again = popcount(sc->anch, c->ix.nblocks) - before;
	o->reread_blocks = now.nblocks;
	/* Freed or changed while that read went on: a leaked block stays put
	 * (read live: a torn read can only make a leak look gone). */
	c->ncached = c->nstacks = 0;
	if (!cen_tcache_read(c)) {
		cen_tcache_sort(c);
		for (size_t i = 0; i < checked; i++) {
			int ok;
			if (!looks_leaked(sc, v[i].b))
				continue;
			if (cen_is_cached(c, v[i].addr) || cen_alive(c, v[i].addr) <= 0 ||
			    head_hash(c, v[i].addr, cen_block_size(&c->ix, v[i].b), &ok) != v[i].hash || !ok)
				set(sc->gone, v[i].b);
		}
	}
	counts_restore(c, &k);
out:
	c->start_ns = start_ns;
	c->deadline_ns = deadline_ns;
	sc->now = NULL;
	cen_snap_free(c);
	cen_index_free(&now);
	free(v);
	return err;
}

static int run(struct cen *c, struct scan *sc)
{
	size_t words = c->ix.nblocks / 64 + 1, before;
	int err;

	sc->anch = calloc(words, 8);
	sc->je = calloc(words, 8);
	sc->refd = calloc(words, 8);
	sc->gone = calloc(words, 8);
	if (!sc->anch || !sc->je || !sc->refd || !sc->gone || cen_bits_init(&sc->pending, c->ix.nblocks))
		return -ENOMEM;
	/* The program's roots, and all they lead to. */
	if ((err = cen_roots_scan(c, root_words, sc)) ||
	    (err = cen_blocks_read(c, &c->ix, &sc->pending, 0, "pointers", expand, sc)))
		return err;
	/* jemalloc's own: what its roots reach that the program's do not. */
	for (size_t i = 0; i < c->nstacks; i++) {
		long t = cen_block_of(&c->ix, c->stacks[i]);
		if (t >= 0 && looks_leaked(sc, (size_t)t))
			set(sc->je, (size_t)t);
	}
	if ((err = cen_roots_jemalloc(c, je_root_words, sc)) ||
	    (err = cen_blocks_read(c, &c->ix, &sc->pending, 0, "jemalloc's own", je_expand, sc)))
		return err;
	/* What looks leaked after one read while the program ran, checked
	 * again (a core does not change: one read is the truth). */
	before = leaked_now(c, sc, 0);
	c->out->rechecked = before;
	if (before && !c->s->offline && (err = recheck(c, sc)))
		return err;
	/* Unreferenced: leaked, and no other leaked block points to it. */
	if (leaked_now(c, sc, 1))
		err = cen_blocks_read(c, &c->ix, &sc->pending, 0, "leaked", leaked_refs, sc);
	return err;
}

int cen_leaks(struct cen *c)
{
	struct scan sc = { .nblocks = c->ix.nblocks, .c = c };
	struct cen_graph g = { 0 };
	int err = 0;

	if (!c->ix.nblocks)
		return 0;
	sc.lo = c->ix.runs[0].base;
	sc.hi = cen_index_end(&c->ix);
	if (c->o->flags & JMA_CENSUS_ROOTS) {
		if (c->ix.nblocks >= CEN_ROW - 1)
			return sess_fail(c->s, JMA_ERR_TARGET, -E2BIG, "census: too many blocks for the "
					"dominator tree (%zu)", c->ix.nblocks);
		sc.g = &g;
		/* Each block is read (numbered) at most once: no room to grow. */
		if (!(g.num = malloc(c->ix.nblocks * sizeof(*g.num))) ||
		    !(g.order = malloc(c->ix.nblocks * sizeof(*g.order))) || cen_spill_open(&g.rows)) {
			err = -ENOMEM;
			goto out;
		}
		memset(g.num, 0xff, c->ix.nblocks * sizeof(*g.num));
		c->out->graph_on_disk = g.rows.fd >= 0;
		if (g.rows.fd < 0)
			cen_warn(c, "the pointer graph was kept in memory (no temporary file could be "
				 "made in $TMPDIR or /var/tmp): 4 bytes more a pointer");
	}
	err = run(c, &sc);
	cen_bits_free(&sc.pending);
	if (!err)
		err = classify(c, &sc);
	if (!err)
		sess_logf(c->s, JMA_LOG_INFO, "census: %zu blocks looked leaked after the first read, "
			 "%llu of them anchored by the second; %zu root words into blocks",
			 (size_t)c->out->rechecked, (unsigned long long)c->out->found_again, sc.nrefs);
	free(sc.anch);
	free(sc.je);
	free(sc.refd);
	free(sc.gone);
	sc.anch = sc.je = sc.refd = sc.gone = NULL;
	if (!err && sc.g)
		err = cen_dominators(c, &g, sc.refs, sc.nrefs);
out:
	if (err == -ENOMEM)
		err = sess_fail(c->s, JMA_ERR_TARGET, err, "out of memory");
	cen_bits_free(&sc.pending);
	free(sc.anch);
	free(sc.je);
	free(sc.refd);
	free(sc.gone);
	free(sc.refs);
	free(g.num);
	free(g.order);
	cen_spill_close(&g.rows);
	return err;
}
