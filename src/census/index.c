/* index.c -- which live block an address falls in: binary search of the blocks by address. */
#include "census/census.h"

uint64_t cen_block_span(const struct cen *c, size_t b)
{
	return c->bsize[b] + (c->ch ? cen_chunks_slack(c, c->bsize[b]) : 0);
}

long cen_block_of(const struct cen *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < c->baddr[mid])
			hi = mid;
		else if (addr - c->baddr[mid] >= cen_block_span(c, mid))
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}
