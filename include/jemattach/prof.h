/* jemattach/prof.h -- heap-profiling control from outside the process. */
#ifndef JEMATTACH_PROF_H
#define JEMATTACH_PROF_H

#include <stdbool.h>
#include <stddef.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

/* 0 when heap profiling can be used; otherwise -ENOTSUP with kind
 * JMA_ERR_MISSING and a message saying why and how to fix it ("built without
 * --enable-prof" vs "opt.prof is false; restart with <PREFIX>MALLOC_CONF=..."). */
int jma_prof_check(jma_session *s) JMA_MUST_CHECK;

/* Set prof.active; *was gets the previous state (may be NULL). */
int jma_prof_set_active(jma_session *s, bool on, bool *was) JMA_MUST_CHECK;

/* Have the target write a heap profile (prof.dump) into a writable directory
 * of its own filesystem view -- the directory of opt.prof_prefix if it has
 * one, else /tmp, /var/tmp or /dev/shm -- then read it back through
 * /proc/PID/root and remove it.  *buf (malloc'ed, NUL-terminated) and *len
 * receive the profile.  -EROFS (kind JMA_ERR_TARGET) when the target has no
 * writable directory. */
int jma_prof_dump(jma_session *s, char **buf, size_t *len) JMA_MUST_CHECK;

/* prof.reset: forget all samples; with @lg_sample, also set the sample
 * period to 2^lg_sample bytes. */
int jma_prof_reset(jma_session *s, const size_t *lg_sample) JMA_MUST_CHECK;

JMA_API_END

#endif
