/* chunkalive.c -- whether a block of jemalloc 3.6 or 4.5 is allocated now (leaks.c's second
 * look at the blocks the first found leaked), read as chunks.c reads a chunk, for one page.
 */
#include <errno.h>
#include <string.h>

#include "census/chunks.h"

/* 4.x: chunks_rtree's value for @key (rtree_get's path from the key's
 * start level), read now; -EFAULT when the tree cannot be read. */
static int rtree_get(struct cen *c, uint64_t key, uint64_t *val)
{
	const struct cen_chunks *k = c->ch;
	uint64_t w[13], node;
	uint32_t height, start[4];
	unsigned level;

	/* {alloc, dalloc, height, start_level[4], levels[4] {subtree, bits, cumbits}} */
	if (cen_read(c, k->rtree, w, sizeof(w)))
		return -EFAULT;
	height = (uint32_t)w[2];
	start[0] = (uint32_t)(w[2] >> 32);
	start[1] = (uint32_t)w[3];
	start[2] = (uint32_t)(w[3] >> 32);
	start[3] = (uint32_t)w[4];
	if (!height || height > CHK_RTREE_LEVELS)
		return -EFAULT;
	level = key ? start[(63 - __builtin_clzll(key)) >> 4] : height - 1;
	if (level >= height)
		return -EFAULT;
	node = w[5 + 2 * level];
	for (; level < height; level++) {
		unsigned bits = (unsigned)w[6 + 2 * level], cum = (unsigned)(w[6 + 2 * level] >> 32);

		if (!cen_ptr_ok(node)) {	/* empty, or RTREE_NODE_INITIALIZING */
			*val = 0;
			return 0;
		}
		if (!bits || bits > 16 || cum > 64 || cum < bits ||
		    cen_read(c, node + 8 * ((key >> (64 - cum)) & ((1ULL << bits) - 1)), &node, 8))
			return -EFAULT;
	}
	*val = node;
	return 0;
}

/* 3.6: is there a huge allocation at @addr in the huge tree now? */
static int huge_at(struct cen *c, uint64_t addr)
{
	const struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	uint64_t nil = k->huge + 8, node, a;

	if (cen_read(c, k->huge, &node, 8))
		return -EFAULT;
	for (unsigned depth = 0; node != nil && depth < CHK_RB_DEPTH; depth++) {
		if (!cen_ptr_ok(node) || cen_read(c, node + L->node_addr, &a, 8))
			return -EFAULT;
		if (a == addr)
			return 1;
		if (cen_read(c, node + (addr < a ? L->node_left : L->node_right), &node, 8))
			return -EFAULT;
		node &= ~1ULL;	/* the colour bit */
	}
	return 0;
}

int cen_chunks_alive(struct cen *c, uint64_t addr)
{
	struct cen_chunks *k = c->ch;
	const struct chk_layout *L = k->L;
	const struct chk_bin *b;
	uint64_t chunk = addr & ~(k->chunksize - 1), p = (addr - chunk) / CHK_PAGE, v, bits, p0, run, i, w;
	unsigned binind;
	int err;

	/* Which kind of chunk: an arena's, or a huge allocation's first. */
	if (L->major == 4) {
		if ((err = rtree_get(c, chunk, &v)))
			return err;
		if (!v)
			return 0;
		if (v != chunk)	/* a huge allocation's node: its address */
			return cen_read(c, v + L->node_addr, &w, 8) ? -EFAULT : w == addr;
	} else if (addr == chunk) {	/* an arena chunk starts with its header */
		return huge_at(c, addr);
	} else if (cen_read(c, chunk, &v, 8)) {
		return -EFAULT;
	} else if (!chk_is_arena(k, v)) {
		return 0;	/* no arena chunk there now */
	}
	/* Its page's map entry: a large run starting there, or a small run
	 * whose region there the bitmap says is not free. */
	if (p < k->map_bias)
		return 0;	/* the header */
	if (cen_read(c, chunk + L->map_off + (p - k->map_bias) * L->map_size + L->map_bits, &bits, 8))
		return -EFAULT;
	if (!(bits & CHK_MAP_ALLOC))
		return 0;
	if (bits & CHK_MAP_LARGE)
		return !(addr % CHK_PAGE) && (bits & ~((1ULL << L->runind_shift) - 1)) != 0;
	binind = (unsigned)(bits >> L->binind_shift) & CHK_BININD_INVALID;
	if (binind >= k->nbins || (bits >> L->runind_shift) > p - k->map_bias)
		return 0;
	b = &k->bins[binind];
	p0 = p - (bits >> L->runind_shift);
	run = chunk + p0 * CHK_PAGE;
	if (addr < run + b->reg0 || (addr - run - b->reg0) % b->reg_interval)
		return 0;
	i = (addr - run - b->reg0) / b->reg_interval;
	if (i >= b->nregs)
		return 0;
	/* 1 = free: 4.x's bitmap in the run's misc entry, 3.6's in its header. */
	if (cen_read(c, (L->misc_size ? chunk + k->misc_off + (p0 - k->map_bias) * L->misc_size +
			 L->misc_run + 8 : run + b->bitmap) + 8 * (i / 64), &w, 8))
		return -EFAULT;
	return !(w >> (i % 64) & 1);
}
