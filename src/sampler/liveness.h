/* liveness.h -- which sampled blocks are still allocated, read from jemalloc's own metadata. */
#ifndef JMA_SAMPLER_LIVENESS_H
#define JMA_SAMPLER_LIVENESS_H

#include <stddef.h>
#include <stdint.h>

#include <jemattach/session.h>

#include "sampler/profile.h"

/* Every block @p holds as in use (its pointer known, its free not seen) is
 * looked up in a census of the process's heap (jma_census_run: every
 * thread stopped while jemalloc's metadata is read): one not allocated for
 * the program any more (free, or in a thread cache), or now a block too
 * small for it, is marked freed.  *@checked and *@live count them.  -errno
 * with the reason in @why when the census cannot run (3.x, 4.x, an unknown
 * layout): nothing is changed then. */
int smp_liveness_check(jma_session *s, struct smp_profile *p, uint64_t *checked, uint64_t *live,
		       char *why, size_t len);

#endif
