/* sizes.c -- jemalloc's size classes (sc.c's algorithm) for 16-byte quanta.
 *
 * One tiny class (8), the pseudo-group 16 32 48 64, then groups of four
 * spaced a quarter of their base apart: 80 96 112 128, 160 ... -- 232
 * classes, the last group one short.  The same in every 5.x release with
 * that configuration, whatever the page size (it only moves the line between
 * small and large classes: cen_geometry).  Redis's bundled copy uses 8-byte
 * quanta: another table, refused by cen_sizes_check when jemalloc's own
 * table is found.
 */
#include <errno.h>

#include "census/census.h"

void cen_sizes_compute(uint64_t sizes[CEN_NSIZES])
{
	static const uint64_t first[] = { 8, 16, 32, 48, 64 };

	for (unsigned i = 0; i < CEN_NSIZES; i++) {
		unsigned g = (i - 5) / 4, k = (i - 5) % 4 + 1;

		sizes[i] = i < 5 ? first[i] : (1ULL << (6 + g)) + k * (1ULL << (6 + g - 2));
	}
}

#define CHECKED	48	/* classes compared: past the small ones and the first large */

int cen_sizes_check(struct cen *c, uint64_t tab)
{
	uint64_t t[CHECKED];

	if (cen_read(c, tab, t, sizeof(t)) || t[0] != 8 || t[1] != 16)
		return 1;	/* not a size table */
	for (unsigned i = 0; i < CHECKED; i++)
		if (t[i] != c->sizes[i])
			return jma_fail(c->s, JMA_ERR_MISSING, -ENOTSUP, "census: this jemalloc's size "
					"classes differ from the 16-byte-quantum ones (class %u is "
					"%llu, not %llu): not supported", i, (unsigned long long)t[i],
					(unsigned long long)c->sizes[i]);
	return 0;
}
