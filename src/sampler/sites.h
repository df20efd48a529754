/* sites.h -- which functions of the target's jemalloc the sampler probes. */
#ifndef JMA_SAMPLER_SITES_H
#define JMA_SAMPLER_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "process/symbols.h"

struct smp_site {
	const char *name;	/* the symbol, prefix included (owned) */
	uint64_t addr;		/* in the target */
	int frees;		/* a free function (its pointer argument is SMP_OLD_ARG) */
	uint64_t cookie;	/* SMP_COOKIE without track and site */
};

/* The public entry points of jemalloc copy @sy (its prefix; the C++
 * operators where jemalloc itself defines them), one per address.
 * -ENOENT with a message when not even malloc is found. */
int smp_sites_find(struct jma_syms *sy, struct smp_site **out, size_t *n, char *msg, size_t len);
void smp_sites_free(struct smp_site *v, size_t n);

#endif
