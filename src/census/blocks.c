/* blocks.c -- a census's blocks kept in its result, and read back in address order (jma_census_next).
 *
 * What a run with JMA_CENSUS_LIST held for its blocks at its end -- the
 * index (index.c: about a bit a block), each block's type (4 bytes), class
 * (2 bits) and with ROOTS its owner (4 bytes) -- is handed over to the
 * result rather than freed: nothing is copied, the run's peak is the same.
 * A snapshot read back with its addresses (snapshot.c) is built the same
 * way, block by block, each checked to follow the one before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

unsigned cen_cls_get(const uint64_t *cls, size_t b)
{
	return cls ? (unsigned)(cls[b / 32] >> (2 * (b % 32)) & 3) : JMA_CENSUS_ANCHORED;
}

void cen_cls_set(uint64_t *cls, size_t b, unsigned v)
{
	cls[b / 32] = (cls[b / 32] & ~(3ULL << (2 * (b % 32)))) | (uint64_t)(v & 3) << (2 * (b % 32));
}

int cen_blocks_keep(struct cen *c)
{
	struct jma_census_blocks *k = calloc(1, sizeof(*k));
	struct jma_census *o = c->out;

	if (!k)
		return -ENOMEM;
	k->ix = c->ix;
	k->type = c->btype;
	k->cls = c->cls;
	k->owner = c->owner;
	memset(&c->ix, 0, sizeof(c->ix));
	c->btype = NULL;
	c->cls = NULL;
	c->owner = NULL;
	o->blocks = k;
	o->nlisted = k->ix.nblocks;
	o->owners = k->owner != NULL;
	return 0;
}

int cen_blocks_reserve(struct jma_census *c, size_t n, int owners)
{
	struct jma_census_blocks *k = calloc(1, sizeof(*k));

	if (!k || !(k->type = calloc(n ? n : 1, sizeof(*k->type))) ||
	    !(k->cls = calloc(n / 32 + 1, sizeof(*k->cls))) ||
	    (owners && !(k->owner = calloc(n ? n : 1, sizeof(*k->owner))))) {
		cen_blocks_free(k);
		return -ENOMEM;
	}
	k->room = n;
	c->blocks = k;
	c->nlisted = 0;
	c->owners = owners;
	return 0;
}

int cen_blocks_add(struct jma_census *c, const struct jma_census_block *b)
{
	struct jma_census_blocks *k = c->blocks;
	size_t n = c->nlisted;
	int err;

	if (!k || !k->type)
		return -EINVAL;
	if (n >= k->room)
		return -E2BIG;
	if (!b->size || b->addr + b->size < b->addr || (n && b->addr < k->end) ||
	    b->cls > JMA_CENSUS_JEMALLOC)
		return -EINVAL;
	if ((err = cen_index_add(&k->ix, b->addr, b->size, 0)))
		return err;
	k->type[n] = b->type;
	cen_cls_set(k->cls, n, b->cls);
	if (k->owner)
		k->owner[n] = b->owner;
	k->end = b->addr + b->size;
	c->nlisted = n + 1;
	return 0;
}

size_t cen_blocks_bytes(const struct jma_census_blocks *k)
{
	size_t n = k->ix.nblocks;

	return cen_index_bytes(&k->ix) + (k->type ? 4 * n : 0) + (k->owner ? 4 * n : 0) +
	       (k->cls ? n / 4 + 8 : 0);
}

void cen_blocks_free(struct jma_census_blocks *k)
{
	if (!k)
		return;
	cen_index_free(&k->ix);
	free(k->type);
	free(k->cls);
	free(k->owner);
	free(k);
}

int jma_census_next(const struct jma_census *c, struct jma_census_cursor *cur,
		    struct jma_census_block *b)
{
	const struct jma_census_blocks *k = c->blocks;
	const struct cen_index *ix;

	if (!k || cur->n >= c->nlisted)
		return 0;
	ix = &k->ix;
	for (; cur->run < ix->nruns; cur->run++, cur->pos = 0) {
		const struct cen_run *r = &ix->runs[cur->run];

		while (cur->pos < r->npos) {
			uint64_t bits = ix->ibits[r->w0 + cur->pos / 64] >> (cur->pos % 64);
			size_t i = cur->n;

			if (!bits) {	/* the rest of the word is free positions */
				cur->pos += 64 - cur->pos % 64;
				continue;
			}
			cur->pos += (uint64_t)__builtin_ctzll(bits);
			b->addr = r->base + cur->pos * r->size;
			b->size = r->size;
			b->type = k->type ? k->type[i] : 0;
			b->cls = (uint8_t)cen_cls_get(k->cls, i);
			b->owner = k->owner ? k->owner[i] : JMA_CENSUS_OWNER_NONE;
			cur->pos++;
			cur->n++;
			return 1;
		}
	}
	return 0;
}
