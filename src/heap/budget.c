/* budget.c -- the memory a profile's analysis may take: a profile is hostile
 * input, so its work is bounded by its size (heap.h: HEAP_MEM_*, HEAP_COST_*). */
#include <errno.h>

#include "heap/heap.h"

size_t heap_mem_max(size_t len)
{
	/* The text itself is held while it is parsed: one of the multiples. */
	return len * (HEAP_MEM_PER_BYTE - 1) + HEAP_MEM_BASE;
}

int heap_mem_check(const jma_heap *h, size_t npcs, size_t nstacks, size_t nlocs, size_t *need)
{
	/* No overflow: each count is below the profile's size, at most 1 GiB. */
	*need = npcs * HEAP_COST_PC + nstacks * HEAP_COST_STACK + nlocs * HEAP_COST_LOC;
	return *need > h->mem_max ? -E2BIG : 0;
}
