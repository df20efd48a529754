/* contents.c -- the blocks' bytes, read extent by extent while the threads run.
 *
 * A slab is read in one piece (at most a few pages), so a million small
 * blocks cost a few thousand reads; a large block in pieces of CHUNK bytes,
 * so that a multi-GiB block needs no multi-GiB buffer.  The threads run
 * meanwhile: a block freed since holds whatever it holds (the counts come
 * from the metadata, read stopped).
 */
#include <errno.h>
#include <stdlib.h>

#include "census/census.h"

#define CHUNK	(1024 * 1024)

int cen_blocks_read(struct cen *c, uint64_t max, const char *phase, cen_block_fn fn, void *arg)
{
	uint64_t *buf = malloc(CHUNK);
	int err = 0;

	if (!buf)
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	for (size_t x = 0; x < c->next && !err; x++) {
		const struct cen_extent *e = &c->ext[x];

		if (cen_timed_out(c)) {
			err = jma_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out reading "
				       "blocks (%s: %zu of %zu extents)", phase, x, c->next);
			break;
		}
		cen_progress(c, phase, x, c->next);
		if (e->slab && e->size <= CHUNK) {
			if (cen_read(c, e->base, buf, e->size))
				continue;
			for (uint32_t k = 0; k < e->nblocks && !err; k++) {
				size_t b = e->first + k;
				uint64_t at = c->baddr[b] - e->base, len = c->bsize[b];
				if (max && len > max)
					len = max;
				err = fn(c, b, buf + at / 8, len / 8, 0, arg);
			}
			continue;
		}
		for (uint32_t k = 0; k < e->nblocks && !err; k++) {
			size_t b = e->first + k;
			uint64_t span = cen_block_span(c, b), len = max && span > max ? max : span;

			for (uint64_t off = 0; off < len && !err; off += CHUNK) {
				uint64_t n = len - off < CHUNK ? len - off : CHUNK;
				if (cen_read(c, c->baddr[b] + off, buf, n))
					break;
				err = fn(c, b, buf, n / 8, off, arg);
			}
		}
	}
	cen_progress(c, phase, c->next, c->next);
	free(buf);
	return err;
}
