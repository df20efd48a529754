/* count.c -- a block or an extent counted into the result (live or thread-cached,
 * by size class) and, when blocks are kept, into the index: as walk.c finds
 * them in 5.x's extents and chunkblocks.c in 3.6's and 4.5's runs.
 */
#include "census/census.h"

int cen_add_block(struct cen *c, unsigned szind, uint64_t addr, uint64_t usize, uint32_t slack,
		  int how)
{
	if (how) {
		c->out->cached.blocks++;
		c->out->cached.bytes += usize;
		if (how == 2) {
			c->out->explicit_cached.blocks++;
			c->out->explicit_cached.bytes += usize;
		}
		return 0;
	}
	c->out->live.blocks++;
	c->out->live.bytes += usize;
	if (szind < CEN_NSIZES_MAX) {	/* chunks.c counts its sizes itself */
		c->bysz[szind].blocks++;
		c->bysz[szind].bytes += usize;
	}
	if (!c->keep)
		return 0;
	return cen_index_add(&c->ix, addr, usize, slack);
}

void cen_add_extent(struct cen *c, uint64_t size, int slab)
{
	c->out->extents++;
	c->out->slabs += !!slab;
	c->extent_bytes += size;
}
