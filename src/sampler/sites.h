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
	int slowable;		/* jemalloc 5 tail-calls a slow path with the same first argument */
	uint64_t slow;		/* that slow path (smp_sites_slow), 0 none */
	int skip_slow;		/* another site probes the same slow path */
	int frees;		/* a free function (its pointer argument is SMP_OLD_ARG) */
	int core;		/* malloc, calloc, realloc, free: what bursts always probe */
	uint64_t cookie;	/* SMP_COOKIE without track and site */
};

/* The public entry points of jemalloc copy @sy (its prefix; the C++
 * operators where jemalloc itself defines them), one per address.
 * -ENOENT with a message when not even malloc is found. */
int smp_sites_find(struct jma_syms *sy, struct smp_site **out, size_t *n, char *msg, size_t len);
void smp_sites_free(struct smp_site *v, size_t n);

/* jemalloc 5: the slow path each site of @v jumps to when the thread cache
 * misses (or is full), the size is large or a thread event is due, into its
 * .slow, found in the entry's code in process @pid (no symbols needed; each
 * logged to @log).  Entries without one (3.x, 4.x, calloc...) have none.
 * Returns how many have one, or -ENOMEM. */
int smp_sites_slow(struct jma_syms *sy, pid_t pid, struct smp_site *v, size_t n, jma_session *log);

/* The sites of @v[0..n) the bursts probe, as a mask of their indexes: of
 * the allocation entries and of the free entries apart, the most hit
 * (@hits, by index) until @keep of each's hits are covered, the C library's
 * four (a tenth of a second of every call may miss one a program uses all
 * the time), and realloc-like ones hit at all (a block they move while
 * unprobed would read as in use at the end).  Placing and
 * removing a probe write-locks the address space of every process that maps
 * the library (the kernel's register_for_each_vma), which a loaded machine
 * makes slow: a burst of fewer probes starts and ends sooner.  All of them
 * when nothing was hit. */
uint64_t smp_sites_hot(const struct smp_site *v, size_t n, const uint64_t *hits, double keep);

/* The allocation entries of @v[0..n) the program hardly calls: at most
 * @share of the allocation entries' @hits each (none when nothing was hit).
 * Probed all the time, they cost next to nothing, and their samples stand
 * for themselves: in a burst, one stands for all the bytes the bursts did
 * not see (a thousand times its own), which makes a rare large block --
 * Redis's dict table, by calloc -- a lottery that swamps the profile. */
uint64_t smp_sites_cold(const struct smp_site *v, size_t n, const uint64_t *hits, double share);

#endif
