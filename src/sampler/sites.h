/* sites.h -- which functions of the target's jemalloc the sampler probes. */
#ifndef JMA_SAMPLER_SITES_H
#define JMA_SAMPLER_SITES_H

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include <jemattach/session.h>

#include "symbols/symbols.h"

struct smp_site {
	const char *name;	/* the symbol, prefix included (owned) */
	uint64_t addr;		/* in the target */
	uint64_t size;		/* of the entry's code (its symbol), 0 unknown */
	int slowable;		/* its slow path takes the same size argument (malloc, new) */
	int slow;		/* addr is the entry's slow path (smp_sites_slow) */
	int skip;		/* another site probes the same slow path */
	int frees;		/* a free function (its pointer argument is SMP_OLD_ARG) */
	uint64_t cookie;	/* SMP_COOKIE without track and site */
};

/* The public entry points of jemalloc copy @sy (its prefix; the C++
 * operators where jemalloc itself defines them), one per address.
 * -ENOENT with a message when not even malloc is found. */
int smp_sites_find(struct jma_syms *sy, struct smp_site **out, size_t *n, char *msg, size_t len);
void smp_sites_free(struct smp_site *v, size_t n);

/* jemalloc 5: move each allocation site of @v to the slow path its entry
 * jumps to when the thread cache misses, the size is large or a thread
 * event is due, found in the entry's code in process @pid (no symbols
 * needed; each move logged to @log).  Entries without one (3.x, 4.x, calloc...) stay.  Returns how
 * many moved, or -ENOMEM. */
int smp_sites_slow(struct jma_syms *sy, pid_t pid, struct smp_site *v, size_t n, jma_session *log);

#endif
