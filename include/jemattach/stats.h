/* jemattach/stats.h -- malloc_stats_print, captured through an emulated callback. */
#ifndef JEMATTACH_STATS_H
#define JEMATTACH_STATS_H

#include <stddef.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

/* Receives each chunk jemalloc writes; non-zero stops delivery (the remote
 * call still runs to its end) and becomes the return value of the print. */
typedef int (*jma_write_fn)(void *arg, const char *buf, size_t len);

/* Run malloc_stats_print(write_cb, NULL, @opts) in the target; the output
 * never reaches the target's stderr.  @opts: jemalloc's letters (J g m d a b l
 * x e h), validated; NULL or "" for all. */
int jma_stats_print(jma_session *s, const char *opts, jma_write_fn write, void *arg)
	JMA_MUST_CHECK;

/* Validate option letters; returns 0 or -EINVAL. */
int jma_stats_opts_valid(const char *opts);

JMA_API_END

#endif
