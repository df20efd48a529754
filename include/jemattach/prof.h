/* jemattach/prof.h -- heap-profiling control from outside the process. */
#ifndef JEMATTACH_PROF_H
#define JEMATTACH_PROF_H

#include <signal.h>
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

/* A window: what the process allocated in @seconds and still holds after as
 * long again.  The steps, each reported to @step when set: a base dump;
 * prof.active set (@was: what it was); after @seconds, prof.active cleared
 * so that short-lived objects sampled in the window can be freed; after as
 * long again, the final dump; prof.active back to @was.  *@stop set
 * asynchronously (a signal handler) ends the window at once: -EINTR, no
 * profiles.  prof.active is restored whatever happens; a failed restore is
 * the error returned. */
enum jma_prof_window_step {
	JMA_PROF_WINDOW_BASE,		/* taking the base dump */
	JMA_PROF_WINDOW_ACTIVE,		/* prof.active set for the window */
	JMA_PROF_WINDOW_SETTLE,		/* prof.active cleared: waiting as long again */
	JMA_PROF_WINDOW_RESTORED,	/* prof.active back to what it was */
};
struct jma_prof_window_opts {
	size_t sz;		/* sizeof(struct jma_prof_window_opts) as the caller was built (JMA_OPTS) */
	double seconds;
	volatile sig_atomic_t *stop;	/* may be NULL */
	void (*step)(void *arg, enum jma_prof_window_step step, bool was);	/* may be NULL */
	void *arg;
};
/* base/final: heap_v2 profiles (malloc'ed, NUL-terminated; free both with
 * jma_prof_window_free). */
struct jma_prof_window {
	size_t sz;		/* sizeof(struct jma_prof_window) as the caller was built (JMA_OPTS) */
	char *base, *final;
	size_t base_len, final_len;
	bool was;			/* prof.active before the window */
};
int jma_prof_window(jma_session *s, const struct jma_prof_window_opts *o, struct jma_prof_window *w)
	JMA_MUST_CHECK;
void jma_prof_window_free(struct jma_prof_window *w);

JMA_API_END

#endif
