/* contents.c -- the blocks' bytes, read extent by extent while the threads run.
 *
 * A slab is read in one piece (at most a few pages), so a million small
 * blocks cost a few thousand reads; a large block in pieces of CHUNK bytes,
 * so that a multi-GiB block needs no multi-GiB buffer.  The threads run
 * meanwhile: a block freed since holds whatever it holds (the counts come
 * from the metadata, read stopped).  Memory that cannot be read (a page
 * the program made PROT_NONE, memory a core does not hold) is skipped a
 * page at a time, the rest of its block still read, and the blocks it
 * touched counted (c->unread_blocks): a slab that fails in one piece is
 * read block by block.
 */
#include <errno.h>
#include <stdlib.h>

#include "census/census.h"

#define CHUNK	(1024 * 1024)

/* Bytes [@off, @off + @n) of block @b, what cannot be read skipped: what no
 * mapping holds (a core's holes) or no mapping lets read at once, a page
 * at a time inside a readable one; 1 when some was. */
static int read_piece(struct cen *c, size_t b, uint64_t off, uint64_t n, uint64_t *buf,
		      cen_block_fn fn, void *arg, int *err)
{
	uint64_t at = c->baddr[b] + off, end = at + n;
	int missed = 0;

	if (!cen_read(c, at, buf, n)) {
		*err = fn(c, b, buf, n / 8, off, arg);
		return 0;
	}
	while (at < end && !*err) {
		size_t i = cen_maps_after(c, at);
		uint64_t next = (at | (CEN_PAGE - 1)) + 1, len;

		if (i == c->nmaps || c->maps[i].start >= end) {
			missed = 1;
			break;
		}
		if (c->maps[i].start > at || c->maps[i].perms[0] != 'r') {
			/* Not mapped, or PROT_NONE (guard pages, reservations):
			 * not one read for any of it. */
			missed = 1;
			at = c->maps[i].start > at ? c->maps[i].start : c->maps[i].end;
			continue;
		}
		len = (next < end ? next : end) - at;
		if (cen_read(c, at, buf, len))
			missed = 1;
		else
			*err = fn(c, b, buf, len / 8, at - c->baddr[b], arg);
		at += len;
	}
	return missed;
}

/* Block @b's first @max bytes (all when 0), in pieces of at most CHUNK. */
static int read_block(struct cen *c, size_t b, uint64_t max, uint64_t *buf, cen_block_fn fn, void *arg)
{
	uint64_t len = max && c->bsize[b] > max ? max : c->bsize[b];
	int err = 0, missed = 0;

	for (uint64_t off = 0; off < len && !err; off += CHUNK)
		missed |= read_piece(c, b, off, len - off < CHUNK ? len - off : CHUNK, buf, fn, arg, &err);
	if (missed) {
		c->unread_blocks++;
		c->unread_bytes += c->bsize[b];
	}
	return err;
}

int cen_blocks_read(struct cen *c, uint64_t max, const char *phase, cen_block_fn fn, void *arg)
{
	uint64_t *buf = malloc(CHUNK);
	int err = 0;

	if (!buf)
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	c->unread_blocks = c->unread_bytes = 0;	/* each pass reads them all */
	for (size_t x = 0; x < c->next && !err; x++) {
		const struct cen_extent *e = &c->ext[x];

		if (cen_timed_out(c)) {
			err = jma_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out reading "
				       "blocks (%s: %zu of %zu extents)", phase, x, c->next);
			break;
		}
		cen_progress(c, phase, x, c->next);
		if (e->slab && e->size <= CHUNK && !cen_read(c, e->base, buf, e->size)) {
			for (uint32_t k = 0; k < e->nblocks && !err; k++) {
				size_t b = e->first + k;
				uint64_t at = c->baddr[b] - e->base, len = c->bsize[b];
				if (max && len > max)
					len = max;
				err = fn(c, b, buf + at / 8, len / 8, 0, arg);
			}
			continue;
		}
		for (uint32_t k = 0; k < e->nblocks && !err; k++)
			err = read_block(c, e->first + k, max, buf, fn, arg);
	}
	cen_progress(c, phase, c->next, c->next);
	free(buf);
	return err;
}
