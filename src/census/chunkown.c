/* chunkown.c -- the blocks jemalloc 3.6 and 4.5 allocate for themselves, found from their static data.
 *
 * 5.x keeps its own tables in base memory, outside every block; 4.x
 * allocates some from arena 0 like any block: the first mallctl makes
 * ctl's per-arena statistics (ctl_stats.arenas, each arena's large and huge
 * tables: 28 KiB, 9 x 896 and 9 x 4 KiB with 8 arenas), prof its hash
 * tables.  Only jemalloc's own static data points at them (roots.c leaves a
 * separate libjemalloc's out: its metadata would anchor everything), so they
 * would read as leaks.  A block whose start a word of that data names, and
 * a block whose start such a block names, is jemalloc's own: it joins the
 * thread caches' blocks (cen_stack_add): jemalloc's class, never a leak,
 * and named so by --by type (leaks.c would find them from jemalloc's roots
 * too; --by type and --blocks have only this).  In an executable
 * jemalloc's data is the program's: its words are roots, nothing to do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/chunks.h"

#define OWN_MAX		4096		/* blocks taken, at most */
#define OWN_BYTES	(16ULL << 20)	/* of their contents read, at most */
#define PIECE		(256 * 1024)

/* Each word of @w naming a block's start marks that block (queued once);
 * 4.x lists a large block at its run's first page, the block starts in
 * that page (its slack). */
static void take(struct cen *c, const uint64_t *w, size_t nw, uint64_t *seen, uint32_t *queue,
		 size_t *nq)
{
	for (size_t i = 0; i < nw && *nq < OWN_MAX; i++) {
		long b = cen_ptr_ok(w[i]) ? cen_block_of(&c->ix, w[i]) : -1;
		const struct cen_run *r;
		uint64_t k;

		if (b < 0 || (seen[b / 64] >> (b % 64) & 1))
			continue;
		r = cen_block_pos(&c->ix, (size_t)b, &k);
		if (w[i] - (r->base + k * r->size) >= (r->slack ? r->slack : 1))
			continue;
		seen[b / 64] |= 1ULL << (b % 64);
		queue[(*nq)++] = (uint32_t)b;
	}
}

int cen_chunks_own(struct cen *c)
{
	uint64_t *seen;
	uint32_t *queue;
	uint64_t *buf, read = 0;
	size_t nq = 0;
	int err = 0;

	if (!c->keep || !c->ix.nblocks || !c->je_path || syms_jemalloc(c->s->syms)->is_static)
		return 0;
	seen = calloc(c->ix.nblocks / 64 + 1, 8);
	queue = malloc(OWN_MAX * sizeof(*queue));
	buf = malloc(PIECE);
	if (!seen || !queue || !buf) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct att_map *m = &c->maps[i];

		for (uint64_t a = m->start; cen_je_data(c, i, 1) && a < m->end && read < OWN_BYTES; a += PIECE) {
			uint64_t n = m->end - a < PIECE ? m->end - a : PIECE;

			read += n;
			if (!cen_read(c, a, buf, n))
				take(c, buf, n / 8, seen, queue, &nq);
		}
	}
	for (size_t h = 0; h < nq && read < OWN_BYTES; h++) {
		uint64_t span = cen_block_span(&c->ix, queue[h]), n = span < PIECE ? span : PIECE;

		read += n;
		if (!cen_read(c, cen_block_addr(&c->ix, queue[h]), buf, n))
			take(c, buf, n / 8, seen, queue, &nq);
	}
	for (size_t h = 0; h < nq && !err; h++)
		err = cen_stack_add(c, cen_block_addr(&c->ix, queue[h]));
out:
	free(seen);
	free(queue);
	free(buf);
	return err ? sess_fail(c->s, JMA_ERR_TARGET, err, "out of memory") : 0;
}
