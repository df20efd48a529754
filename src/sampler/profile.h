/* profile.h -- the sampler's samples, by stack, and the heap_v2 profile made of them. */
#ifndef JMA_SAMPLER_PROFILE_H
#define JMA_SAMPLER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define SMP_MAX_FRAMES	128
#define SMP_MAX_RECORDS	(1u << 22)	/* samples kept: 24 bytes each, 96 MiB at most */

struct smp_profile;

struct smp_profile *smp_profile_new(uint64_t period);
void smp_profile_free(struct smp_profile *p);

/* Sample @id (the BPF side's sequence number): @size bytes allocated at the
 * stack @pcs[0..n) (innermost first), sampled at a mean of period >> @shift
 * bytes; @exact: by an entry probed all the time (no burst's scale).
 * -E2BIG past SMP_MAX_RECORDS (the sample is dropped), -ENOMEM. */
int smp_profile_add(struct smp_profile *p, uint64_t id, uint64_t size, unsigned shift, int exact,
		    const uint64_t *pcs, int n);
/* Sample @id's pointer @ptr came back (non-zero): in use until smp_profile_freed. */
void smp_profile_returned(struct smp_profile *p, uint64_t id, uint64_t ptr);
void smp_profile_freed(struct smp_profile *p, uint64_t id);

/* Samples from @first_id on were taken in bursts (but the exact ones), each
 * standing for @scale times what its own rate makes it (the bytes allocated
 * in the window over those the bursts saw). */
void smp_profile_scale(struct smp_profile *p, uint64_t first_id, double scale);

/* The samples in use whose free was not seen: their ids, pointers, sizes
 * (*@v malloc'ed, @n of them).  -ENOMEM. */
struct smp_unfreed {
	uint64_t id, ptr, size;
};
int smp_profile_unfreed(const struct smp_profile *p, struct smp_unfreed **v, size_t *n);

/* @n exponential quantiles of mean @period into @t: a threshold drawn at
 * random among them, counted down by the bytes a thread allocates, makes
 * Poisson sampling by bytes as jemalloc's own (which draws from a geometric
 * distribution of the same mean); BPF has no floating point to draw one. */
void smp_expo_fill(volatile uint64_t *t, size_t n, uint64_t period);

/* The unbiased estimate of bytes sampled @size at a time: jeprof's
 * s / (1 - exp(-s / period)), the inverse of the chance to be sampled. */
double smp_unbias(uint64_t size, uint64_t period);

/* Estimated (unbiased) bytes allocated, and still in use; @live samples in use. */
void smp_profile_totals(const struct smp_profile *p, double *alloc, double *inuse, uint64_t *live);

/* The heap_v2 text: in use = returned and not freed; allocated = every
 * sample.  @maps is the target's /proc/PID/maps text (MAPPED_LIBRARIES).
 * The header's period is the finest a sample was taken at; a line's counts
 * are chosen so that jeprof's unbiasing of them gives the estimate of its
 * samples (their rates and scales), rounded with the remainder carried
 * along the stack. */
int smp_profile_write(const struct smp_profile *p, const char *maps, char **out, size_t *len);

#endif
