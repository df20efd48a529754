/* window.c -- `prof window`: what a process allocated in a window and still
 * holds, by jemalloc's own profiler; prof.active set and restored here, in
 * one place, whatever happens in between. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sized.h"
#include "core/clock.h"
#include "core/session.h"

/* Sleep @secs, in steps of at most 100 ms; -EINTR as soon as *stop is set. */
static int wait_for(jma_session *s, double secs, volatile sig_atomic_t *stop)
{
	if (!jma_sleep_until(jma_clock_s(CLOCK_MONOTONIC) + secs, 0.1, stop))
		return 0;
	return sess_fail(s, JMA_ERR_UNSAFE, -EINTR, "prof window: stopped by a signal");
}

static void step(const struct jma_prof_window_opts *o, enum jma_prof_window_step k, bool was)
{
	if (o->step)
		o->step(o->arg, k, was);
}

/* prof.active back to @was; a signal arriving just then (a second Ctrl-C)
 * does not stop it: the call is tried again. */
static int restore(jma_session *s, bool was)
{
	int err = -EINTR;

	for (int i = 0; i < 3 && err == -EINTR; i++)
		err = jma_prof_set_active(s, was, NULL);
	return err;
}

void jma_prof_window_free(struct jma_prof_window *w)
{
	free(w->base);
	free(w->final);
	w->base = w->final = NULL;
	w->base_len = w->final_len = 0;
}

static int prof_window(jma_session *s, const struct jma_prof_window_opts *o, struct jma_prof_window *w)
{
	volatile sig_atomic_t *stop = o->stop;
	int err, rerr;

	memset(w, 0, sizeof(*w));
	if (!(o->seconds > 0))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "prof window: the window must be longer than 0 s");
	step(o, JMA_PROF_WINDOW_BASE, false);
	if ((err = jma_prof_dump(s, &w->base, &w->base_len)))
		goto fail;
	if (stop && *stop) {
		err = sess_fail(s, JMA_ERR_UNSAFE, -EINTR, "prof window: stopped by a signal");
		goto fail;
	}
	if ((err = jma_prof_set_active(s, true, &w->was)))
		goto fail;
	step(o, JMA_PROF_WINDOW_ACTIVE, w->was);
	/* Inactive for as long again: short-lived objects sampled in the
	 * window are freed by then, so the final dump shows what stays. */
	if (!(err = wait_for(s, o->seconds, stop)) && !(err = jma_prof_set_active(s, false, NULL))) {
		step(o, JMA_PROF_WINDOW_SETTLE, w->was);
		if (!(err = wait_for(s, o->seconds, stop)))
			err = jma_prof_dump(s, &w->final, &w->final_len);
	}
	if ((rerr = restore(s, w->was)))
		err = rerr;
	else
		step(o, JMA_PROF_WINDOW_RESTORED, w->was);
	if (!err)
		return 0;
fail:
	jma_prof_window_free(w);
	return err;
}

int jma_prof_window(jma_session *s, const struct jma_prof_window_opts *opts, struct jma_prof_window *w)
{
	struct jma_prof_window_opts o;
	struct jma_prof_window full;
	int err;

	if (sized_of(w) < offsetof(struct jma_prof_window, was) + sizeof(w->was))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "prof window: the result's sz is not set");
	if ((err = SIZED_IN(opts, &o)))
		return sess_fail(s, JMA_ERR_USAGE, err, "prof window: its options' sz is not that "
				"of a struct jma_prof_window_opts this library knows");
	err = prof_window(s, &o, &full);
	full.sz = sizeof(full);
	sized_out(w, &full, sizeof(full), 0);
	return err;
}
