/* cache.c -- one attach per target at a time; concurrent requests share one answer.
 *
 * Per target and kind (sample, dump, stats) a "flight": the first request
 * that finds no answer fresh enough starts a thread that runs the operation
 * in a child; every request meanwhile waits for that same answer, each until
 * its own deadline.  A target that does not answer (a lock held, a refusal
 * that takes long) costs its own flight thread, never another target's: the
 * request gives up at its deadline with a "timeout" answer and the flight's
 * late answer serves the next one.  Per target, children run one at a time
 * (t->busy); across targets, at most max_attaches at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

void sem_init_n(struct serve_sem *s, unsigned n)
{
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->left = n ? n : 1;
}

void sem_take(struct serve_sem *s)
{
	pthread_mutex_lock(&s->mu);
	while (!s->left)
		pthread_cond_wait(&s->cv, &s->mu);
	s->left--;
	pthread_mutex_unlock(&s->mu);
}

void sem_give(struct serve_sem *s)
{
	pthread_mutex_lock(&s->mu);
	s->left++;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static struct timespec abs_time(double deadline)
{
	/* @deadline is monotonic; the condition variables use CLOCK_MONOTONIC too. */
	struct timespec ts;

	if (deadline < 0)
		deadline = 0;
	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_sec++, ts.tv_nsec -= 1000000000L;
	return ts;
}

/* Hold @t for one child of ours (caller holds t->mu); 0 or -ETIMEDOUT. */
static int take_target(struct target *t, double deadline)
{
	while (t->busy) {
		struct timespec ts = abs_time(deadline);

		if (deadline > 0 && pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT)
			return -ETIMEDOUT;
		if (deadline <= 0)
			pthread_cond_wait(&t->cv, &t->mu);
	}
	t->busy = 1;
	return 0;
}

static void give_target(struct target *t, const struct op_result *r)
{
	t->busy = 0;
	if (r->attached)
		t->attaches++;
	pthread_cond_broadcast(&t->cv);
}

struct flight_job {
	struct serve_ctx *sc;
	struct target *t;
	enum op_kind kind;
};

static void *flight_main(void *arg)
{
	struct flight_job *j = arg;
	struct serve_ctx *sc = j->sc;
	struct target *t = j->t;
	struct op_arg a = { .kind = j->kind, .pid = t->pid, .opt = &sc->cfg->opt,
			    .sample_flags = sc->cfg->arenas ? JMA_SAMPLE_ARENAS : 0,
			    .census_flags = census_flags(sc->cfg) };
	struct op_result r;
	struct op_sample fixed, got;

	pthread_mutex_lock(&t->mu);
	take_target(t, 0);
	if (t->have_fixed) {
		fixed = t->fixed;
		a.fixed = &fixed;
	}
	pthread_mutex_unlock(&t->mu);
	/* A census stops every thread and takes memory: CENSUS_MAX at once. */
	if (j->kind == OP_CENSUS)
		sem_take(&sc->census_sem);
	sem_take(&sc->attach_sem);
	op_run(sc->cfg, &a, &r);
	sem_give(&sc->attach_sem);
	if (j->kind == OP_CENSUS)
		sem_give(&sc->census_sem);

	pthread_mutex_lock(&t->mu);
	give_target(t, &r);
	if (j->kind == OP_SAMPLE && !t->have_fixed && op_sample_decode(&r, &got) == 0 &&
	    got.config_prof >= 0 && got.opt_prof >= 0) {
		t->fixed = got;
		t->fixed.smp.arenas = NULL;	/* points into r, which goes */
		t->fixed.smp.narenas = 0;
		t->have_fixed = 1;
	}
	op_result_clear(&t->fl[j->kind].res);
	t->fl[j->kind].res = r;
	t->fl[j->kind].seq++;
	t->fl[j->kind].running = 0;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);

	target_put(sc, t);
	free(j);
	pthread_mutex_lock(&sc->fmu);
	sc->inflight--;
	pthread_cond_broadcast(&sc->fcv);
	pthread_mutex_unlock(&sc->fmu);
	return NULL;
}

static int fresh_enough(const struct flight *f, double fresh)
{
	return f->seq && f->res.started >= fresh;
}

/* Caller holds t->mu.  0, or -errno when no thread could be started. */
static int start_locked(struct serve_ctx *sc, struct target *t, enum op_kind kind)
{
	struct flight_job *j;
	pthread_attr_t at;
	pthread_t th;
	int err;

	if (t->fl[kind].running)
		return 0;
	j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct flight_job){ sc, t, kind };
	pthread_mutex_lock(&sc->mu);
	t->refs++;
	pthread_mutex_unlock(&sc->mu);
	pthread_mutex_lock(&sc->fmu);
	sc->inflight++;
	pthread_mutex_unlock(&sc->fmu);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* The child forked from this thread runs the library on this stack:
	 * as large as a command line's main thread has (virtual until used). */
	pthread_attr_setstacksize(&at, 8 << 20);
	err = pthread_create(&th, &at, flight_main, j);
	pthread_attr_destroy(&at);
	if (err) {
		free(j);
		target_put(sc, t);
		pthread_mutex_lock(&sc->fmu);
		sc->inflight--;
		pthread_mutex_unlock(&sc->fmu);
		return -err;
	}
	t->fl[kind].running = 1;
	return 0;
}

void cache_start(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh)
{
	pthread_mutex_lock(&t->mu);
	if (!fresh_enough(&t->fl[kind], fresh))
		start_locked(sc, t, kind);
	pthread_mutex_unlock(&t->mu);
}

static void timed_out(struct op_result *out, double waited, int running)
{
	memset(out, 0, sizeof(*out));
	out->rc = -ETIMEDOUT;
	out->kind = JMA_ERR_UNSAFE;
	snprintf(out->msg, sizeof(out->msg), "no answer within %.1f s%s", waited,
		 running ? " (the operation goes on; its answer will serve the next request)" : "");
}

int cache_wait(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh,
	       double deadline, struct op_result *out)
{
	struct flight *f = &t->fl[kind];
	double t0 = jma_clock_s(CLOCK_MONOTONIC);
	int err = 0;

	pthread_mutex_lock(&t->mu);
	while (!fresh_enough(f, fresh)) {
		struct timespec ts = abs_time(deadline);

		if (!f->running && (err = start_locked(sc, t, kind)))
			break;
		if (pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT &&
		    !fresh_enough(f, fresh)) {
			err = -ETIMEDOUT;
			break;
		}
	}
	if (!err)
		op_result_copy(out, &f->res);
	else if (err == -ETIMEDOUT)
		timed_out(out, jma_clock_s(CLOCK_MONOTONIC) - t0, f->running);
	pthread_mutex_unlock(&t->mu);
	if (err && err != -ETIMEDOUT) {
		memset(out, 0, sizeof(*out));
		out->rc = err;
		out->kind = JMA_ERR_TARGET;
		snprintf(out->msg, sizeof(out->msg), "cannot start a worker thread: %s", strerror(-err));
	}
	return out->rc;
}

int cache_run(struct serve_ctx *sc, struct target *t, const struct op_arg *a, double deadline,
	      struct op_result *out)
{
	double t0 = jma_clock_s(CLOCK_MONOTONIC);
	int err;

	pthread_mutex_lock(&t->mu);
	err = take_target(t, deadline);
	pthread_mutex_unlock(&t->mu);
	if (err) {
		timed_out(out, jma_clock_s(CLOCK_MONOTONIC) - t0, 0);
		snprintf(out->msg, sizeof(out->msg), "the target stayed busy with another operation "
			 "for %.1f s", jma_clock_s(CLOCK_MONOTONIC) - t0);
		return out->rc;
	}
	sem_take(&sc->attach_sem);
	op_run(sc->cfg, a, out);
	sem_give(&sc->attach_sem);
	pthread_mutex_lock(&t->mu);
	give_target(t, out);
	pthread_mutex_unlock(&t->mu);
	return out->rc;
}

unsigned cache_inflight(struct serve_ctx *sc)
{
	unsigned n;

	pthread_mutex_lock(&sc->fmu);
	n = sc->inflight;
	pthread_mutex_unlock(&sc->fmu);
	return n;
}
