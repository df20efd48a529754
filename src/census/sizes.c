/* sizes.c -- jemalloc's size classes (sc.c's algorithm) for 16-byte quanta and 4 KiB pages.
 *
 * One tiny class (8), the pseudo-group 16 32 48 64, then groups of four
 * spaced a quarter of their base apart: 80 96 112 128, 160 ... -- 232
 * classes, the last group one short.  The same in every 5.x release with
 * that configuration (Redis's bundled copy uses 8-byte quanta: another table).
 */
#include "census/census.h"

void cen_sizes_compute(uint64_t sizes[CEN_NSIZES])
{
	static const uint64_t first[] = { 8, 16, 32, 48, 64 };

	for (unsigned i = 0; i < CEN_NSIZES; i++) {
		unsigned g = (i - 5) / 4, k = (i - 5) % 4 + 1;

		sizes[i] = i < 5 ? first[i] : (1ULL << (6 + g)) + k * (1ULL << (6 + g - 2));
	}
}
