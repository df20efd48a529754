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
 * thread caches' blocks (cen_stack_add), never a leak.  In an executable
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
 * 4.x lists a large block at its run's first page, the block is in it. */
static int take(struct cen *c, const uint64_t *w, size_t nw, uint8_t *seen, uint32_t *queue,
		size_t *nq)
{
	for (size_t i = 0; i < nw && *nq < OWN_MAX; i++) {
		long b = cen_ptr_ok(w[i]) ? cen_block_of(c, w[i]) : -1;

		if (b < 0 || seen[b] || (c->baddr[b] != w[i] &&
		    w[i] - c->baddr[b] >= cen_chunks_slack(c, c->bsize[b])))
			continue;
		seen[b] = 1;
		queue[(*nq)++] = (uint32_t)b;
	}
	return 0;
}

int cen_chunks_own(struct cen *c)
{
	uint8_t *seen;
	uint32_t *queue;
	uint64_t *buf, read = 0;
	size_t nq = 0;
	int err = 0;

	if (!c->keep || !c->nblocks || !c->je_path || jma_syms_jemalloc(c->s->syms)->is_static)
		return 0;
	seen = calloc(c->nblocks, 1);
	queue = malloc(OWN_MAX * sizeof(*queue));
	buf = malloc(PIECE);
	if (!seen || !queue || !buf) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nmaps; i++) {
		const struct att_map *m = &c->maps[i];

		for (uint64_t a = m->start; chk_je_rw(c, i) && a < m->end && read < OWN_BYTES; a += PIECE) {
			uint64_t n = m->end - a < PIECE ? m->end - a : PIECE;

			read += n;
			if (!cen_read(c, a, buf, n))
				take(c, buf, n / 8, seen, queue, &nq);
		}
	}
	for (size_t h = 0; h < nq && read < OWN_BYTES; h++) {
		uint64_t span = cen_block_span(c, queue[h]), n = span < PIECE ? span : PIECE;

		read += n;
		if (!cen_read(c, c->baddr[queue[h]], buf, n))
			take(c, buf, n / 8, seen, queue, &nq);
	}
	for (size_t h = 0; h < nq && !err; h++)
		err = cen_stack_add(c, c->baddr[queue[h]]);
out:
	free(seen);
	free(queue);
	free(buf);
	return err ? jma_fail(c->s, JMA_ERR_TARGET, err, "out of memory") : 0;
}
