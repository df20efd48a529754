/* count.c -- what goes into the result as the census goes: a block or an extent
 * counted (live or thread-cached, by size class) and, when blocks are kept,
 * into the index, as walk.c finds them in 5.x's extents and chunkblocks.c in
 * 3.6's and 4.5's runs; and what the output should say of the census's own
 * limits (cen_warn).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "census/census.h"

void cen_warn(struct cen *c, const char *fmt, ...)
{
	char *w = c->out->warn;
	size_t used = strlen(w);
	va_list ap;

	if (used && used + 2 < sizeof(c->out->warn)) {
		memcpy(w + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(w + used, sizeof(c->out->warn) - used, fmt, ap);
	va_end(ap);
}

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
