/* grow.c -- arrays that double as they fill, for the parser, the symbol tables and tracks. */
#include <errno.h>
#include <stdlib.h>

#include "heap/heap.h"

int heap_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}
