/* ranges.h -- sorted sets of address ranges: jemalloc's code, the condition waits. */
#ifndef JMA_SYMBOLS_RANGES_H
#define JMA_SYMBOLS_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct jma_range {
	uint64_t lo, hi;	/* [lo, hi) */
};

/* Append [@lo, @hi) (at least one byte) to *@v of *@n entries, *@cap
 * allocated.  0 or -ENOMEM. */
int syms_ranges_add(struct jma_range **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi);

/* Sort @v[0..*n) and join ranges that overlap or lie at most @gap bytes
 * apart; *@n becomes the new count. */
void syms_ranges_merge(struct jma_range *v, size_t *n, uint64_t gap);

/* Does sorted, disjoint @v[0..n) hold @pc? */
int syms_ranges_has(const struct jma_range *v, size_t n, uint64_t pc);

#endif
