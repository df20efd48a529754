/* jemattach/arenas.h -- jemalloc's arenas, the same way on every version. */
#ifndef JEMATTACH_ARENAS_H
#define JEMATTACH_ARENAS_H

#include <stdbool.h>
#include <stdint.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

/* The index that names all arenas at once (stats.arenas.<i>, arena.<i>.purge):
 * MALLCTL_ARENAS_ALL (4096) from jemalloc 5.0, arenas.narenas before. */
int jma_arena_all(jma_session *s, unsigned *idx) JMA_MUST_CHECK;

/* Which of arenas 0..@n-1 are initialized (have stats): arena.<i>.initialized
 * from 5.0, the arenas.initialized array before.  @init has @n entries. */
int jma_arenas_initialized(jma_session *s, bool *init, unsigned n) JMA_MUST_CHECK;

/* arena.<@idx>.<@action>, "purge" or "decay"; @idx may be jma_arena_all's.
 * -ENOTSUP (kind JMA_ERR_MISSING) when the version has no such action. */
int jma_arena_act(jma_session *s, unsigned idx, const char *action) JMA_MUST_CHECK;

/* Bytes (and blocks) the arenas have handed out since the process started:
 * nmalloc x size over every small bin and large size class, merged (one call
 * per class, and one per size used: about 15 ms of one thread's time).  A
 * measure of allocation volume, not an exact count: a thread cache's fill
 * counts every block it takes, and a block freed into the cache and
 * allocated again from there is not counted again.  Attaches for itself when
 * not attached.  -ENOTSUP (kind JMA_ERR_MISSING) before jemalloc 5.0. */
int jma_allocated_total(jma_session *s, uint64_t *bytes, uint64_t *count) JMA_MUST_CHECK;

JMA_API_END

#endif
