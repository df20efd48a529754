/* sites.c -- which functions of the target's jemalloc the sampler probes.
 *
 * Every public entry that allocates or frees, by its symbol in jemalloc's own
 * code (the copy's prefix: "", je_, _rjem_...), and the C++ operators when
 * jemalloc's module defines them (jemalloc_cpp.cpp; unprefixed).  Entries
 * are probed, not jemalloc 5's slow paths: an entry sees every call, so the
 * byte sampling is jemalloc's own and unbiased, and every free of a sampled
 * pointer is seen.  The price is a trap per call (see doc/sampler.md).
 * Aliases (glibc's __libc_malloc in some builds) share an address and are
 * probed once: two probes there would count each call twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/events.h"
#include "sampler/sites.h"

struct entry {
	const char *name;
	int prefixed;		/* takes the copy's prefix (the C API), or not (C++) */
	int frees;
	unsigned size, count, old, memptr;	/* argument numbers, 1-based */
};

static const struct entry entries[] = {
	{ "malloc", 1, 0, 1, 0, 0, 0 },
	{ "calloc", 1, 0, 2, 1, 0, 0 },
	{ "realloc", 1, 0, 2, 0, 1, 0 },
	{ "posix_memalign", 1, 0, 3, 0, 0, 1 },
	{ "aligned_alloc", 1, 0, 2, 0, 0, 0 },
	{ "memalign", 1, 0, 2, 0, 0, 0 },
	{ "valloc", 1, 0, 1, 0, 0, 0 },
	{ "pvalloc", 1, 0, 1, 0, 0, 0 },
	{ "mallocx", 1, 0, 1, 0, 0, 0 },
	{ "rallocx", 1, 0, 2, 0, 1, 0 },
	{ "free", 1, 1, 0, 0, 1, 0 },
	{ "dallocx", 1, 1, 0, 0, 1, 0 },
	{ "sdallocx", 1, 1, 0, 0, 1, 0 },
	{ "free_sized", 1, 1, 0, 0, 1, 0 },
	{ "free_aligned_sized", 1, 1, 0, 0, 1, 0 },
	/* operator new / new[]: plain, nothrow, aligned, aligned nothrow. */
	{ "_Znwm", 0, 0, 1, 0, 0, 0 },
	{ "_Znam", 0, 0, 1, 0, 0, 0 },
	{ "_ZnwmRKSt9nothrow_t", 0, 0, 1, 0, 0, 0 },
	{ "_ZnamRKSt9nothrow_t", 0, 0, 1, 0, 0, 0 },
	{ "_ZnwmSt11align_val_t", 0, 0, 1, 0, 0, 0 },
	{ "_ZnamSt11align_val_t", 0, 0, 1, 0, 0, 0 },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", 0, 0, 1, 0, 0, 0 },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", 0, 0, 1, 0, 0, 0 },
	/* operator delete / delete[]: plain, sized, nothrow, aligned. */
	{ "_ZdlPv", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPv", 0, 1, 0, 0, 1, 0 },
	{ "_ZdlPvm", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPvm", 0, 1, 0, 0, 1, 0 },
	{ "_ZdlPvRKSt9nothrow_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPvRKSt9nothrow_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdlPvSt11align_val_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPvSt11align_val_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdlPvmSt11align_val_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPvmSt11align_val_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", 0, 1, 0, 0, 1, 0 },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", 0, 1, 0, 0, 1, 0 },
};

void smp_sites_free(struct smp_site *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].name);
	free(v);
}

int smp_sites_find(struct jma_syms *sy, struct smp_site **out, size_t *n, char *msg, size_t len)
{
	const struct jma_copy *c = jma_syms_jemalloc(sy);
	const size_t max = sizeof(entries) / sizeof(*entries);
	struct smp_site *v = calloc(max, sizeof(*v));
	size_t k = 0;
	int have_malloc = 0;

	*out = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; c && i < max; i++) {
		const struct entry *e = &entries[i];
		char name[128];
		uint64_t addr;
		size_t j;

		snprintf(name, sizeof(name), "%s%s", e->prefixed ? c->prefix : "", e->name);
		if (!(addr = jma_syms_func(sy, name)))
			continue;
		for (j = 0; j < k && v[j].addr != addr; j++)
			;
		if (j < k)
			continue;
		if (!(v[k].name = strdup(name))) {
			smp_sites_free(v, k);
			return -ENOMEM;
		}
		v[k].addr = addr;
		v[k].frees = e->frees;
		v[k].cookie = SMP_COOKIE(e->size, e->count, e->old, e->memptr, 0, 0);
		have_malloc |= i == 0;
		k++;
	}
	if (!have_malloc) {
		smp_sites_free(v, k);
		snprintf(msg, len, "no %smalloc symbol in jemalloc's code: nothing to probe",
			 c ? c->prefix : "");
		return -ENOENT;
	}
	*out = v;
	*n = k;
	return 0;
}
