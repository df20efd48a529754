/* cache.c -- one attach per target at a time; answers shared and kept; each
 * target's budget; attach slots shared fairly between users.
 *
 * Per target and kind (sample, dump, stats) a "flight": the first request
 * that finds no answer fresh enough starts a thread that runs the operation
 * in a child; every request meanwhile waits for that same answer, each until
 * its own deadline, and shares its payload (a blob: one copy however many
 * wait).  A target that does not answer (a lock held, a refusal that takes
 * long) costs its own flight thread, never another target's: the request
 * gives up at its deadline with a "timeout" answer and the flight's late
 * answer serves the next one.  Per target, children run one at a time
 * (t->busy); across targets, at most max_attaches at once, of which one
 * user's processes hold at most half (slots_take).
 *
 * The budget (--max-duty, default 5%): whatever serve does to a process
 * takes at most that share of its time, over time and not per request.  An
 * operation that held its thread H seconds is followed by no other attach
 * for H x (1/duty - 1) seconds (cache_next_ok); meanwhile the answers kept
 * are served, whatever their age (their age is in /metrics), and a request
 * that needs one that is not kept is told when to come back (429).  A scrape
 * holds a thread about a millisecond (19 ms of budget); a 128 MB heap dump,
 * seconds.  Scrapes run on a clock of their own (BUDGET_OF), so that a costly
 * dump does not freeze a process's metrics for half a minute; sampler windows
 * have one too (pprof.c).  Each clock keeps to the duty: the scrapes' share
 * is tiny, and windows need the operator's consent.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

/* The census flags of the server's censuses. */
static unsigned census_flags(const struct serve_cfg *cfg)
{
	return JMA_CENSUS_TYPES | (cfg->census_owners ? JMA_CENSUS_ROOTS : 0);
}

/* --- attach slots, shared fairly between users -------------------------------- */

void slots_init(struct serve_slots *s, unsigned n)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	serve_cond_init(&s->cv);
	s->n = s->left = n ? n : 1;
	s->per_uid = s->n / 2 ? s->n / 2 : 1;
}

/* @uid's entry (caller holds s->mu); NULL when it holds no slot. */
static unsigned *held_by(struct serve_slots *s, uid_t uid)
{
	for (unsigned i = 0; i < s->nu; i++)
		if (s->u[i].uid == uid)
			return &s->u[i].held;
	return NULL;
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

void cache_nap(pthread_cond_t *cv, pthread_mutex_t *mu, double until)
{
	double now = jma_clock_s(CLOCK_MONOTONIC);
	struct timespec ts = abs_time(until > 0 && until < now + 0.25 ? until : now + 0.25);

	pthread_cond_timedwait(cv, mu, &ts);
}

int slots_take(struct serve_ctx *sc, struct serve_slots *s, uid_t uid)
{
	unsigned *h;

	pthread_mutex_lock(&s->mu);
	while (!s->left || ((h = held_by(s, uid)) && *h >= s->per_uid)) {
		if (atomic_load(&sc->closing)) {
			pthread_mutex_unlock(&s->mu);
			return -ECANCELED;
		}
		cache_nap(&s->cv, &s->mu, 0);
	}
	s->left--;
	if ((h = held_by(s, uid)))
		(*h)++;
	else
		s->u[s->nu++] = (typeof(s->u[0])){ uid, 1 };	/* nu < n: each holds one */
	pthread_mutex_unlock(&s->mu);
	return 0;
}

void slots_give(struct serve_slots *s, uid_t uid)
{
	pthread_mutex_lock(&s->mu);
	for (unsigned i = 0; i < s->nu; i++)
		if (s->u[i].uid == uid && !--s->u[i].held)
			s->u[i] = s->u[--s->nu];
	s->left++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* --- the budget ------------------------------------------------------------ */

double cache_cost(const struct op_result *r)
{
	return r->killed ? r->secs : (double)r->held_ns / 1e9;
}

double cache_next_ok(const struct serve_ctx *sc, double end, double cost)
{
	double duty = sc->cfg->max_duty;

	return duty >= 1 || duty <= 0 ? end : end + cost * (1 / duty - 1);
}

/* --- one child per target ---------------------------------------------------- */

/* Hold @t for one child of ours (caller holds t->mu); 0, -ETIMEDOUT past
 * @deadline (0: none), -ECANCELED once the server stops. */
static int take_target(struct serve_ctx *sc, struct target *t, double deadline)
{
	while (t->busy) {
		if (atomic_load(&sc->closing))
			return -ECANCELED;
		if (deadline > 0 && jma_clock_s(CLOCK_MONOTONIC) >= deadline)
			return -ETIMEDOUT;
		cache_nap(&t->cv, &t->mu, deadline);
	}
	t->busy = 1;
	return 0;
}

/* @r, an operation of @kind, done on @t (caller holds t->mu): free it,
 * count it, charge its cost. */
static void give_target(struct serve_ctx *sc, struct target *t, enum op_kind kind,
			const struct op_result *r)
{
	double next = cache_next_ok(sc, r->started + r->secs, cache_cost(r));
	double *clock = &t->next_attach[BUDGET_OF(kind)];

	t->busy = 0;
	if (r->attached)
		t->attaches++;
	if (next > *clock)
		*clock = next;
	pthread_cond_broadcast(&t->cv);
}

/* The reports made of the dumps kept (caller holds t->mu). */
static void drop_reports(struct target *t, int all)
{
	for (int i = 0; i < REPORTS_KEPT; i++) {
		struct report_flight *rf = &t->rep[i];

		if (rf->used && !rf->running && (all || rf->heap_seq != t->fl[OP_DUMP].seq ||
						   !t->fl[OP_DUMP].kept)) {
			op_result_clear(&rf->res);
			memset(rf, 0, sizeof(*rf));
		}
	}
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
	struct op_arg a = { .kind = j->kind, .pid = t->pid, .uid = t->uid, .opt = &sc->cfg->opt,
			    .sample_flags = sc->cfg->arenas ? JMA_SAMPLE_ARENAS : 0,
			    .census_flags = census_flags(sc->cfg) };
	struct op_result r = { 0 };
	struct op_sample fixed, got;
	int err, took, census_slot = 0;

	pthread_mutex_lock(&t->mu);
	/* The budget: no attach before its time (the requests meanwhile get
	 * what is kept, or are told when to come back) -- waited for before the
	 * target is taken, so that a scrape is not held up by a dump's wait. */
	for (;;) {
		double *clock = &t->next_attach[BUDGET_OF(j->kind)];

		while (jma_clock_s(CLOCK_MONOTONIC) < *clock && !atomic_load(&sc->closing))
			cache_nap(&t->cv, &t->mu, *clock);
		err = atomic_load(&sc->closing) ? -ECANCELED : take_target(sc, t, 0);
		took = !err;
		if (err || jma_clock_s(CLOCK_MONOTONIC) >= *clock)
			break;
		t->busy = 0;	/* another operation charged the clock meanwhile */
		pthread_cond_broadcast(&t->cv);
	}
	if (t->have_fixed) {
		fixed = t->fixed;
		a.fixed = &fixed;
	}
	pthread_mutex_unlock(&t->mu);
	/* A census stops every thread and takes memory: CENSUS_MAX at once (a
	 * slot taken before the attach slot, so that waiting for it holds none). */
	if (!err && j->kind == OP_CENSUS && !(err = slots_take(sc, &sc->census_slots, t->uid)))
		census_slot = 1;
	if (!err && !(err = slots_take(sc, &sc->attach_slots, t->uid))) {
		op_run(sc, &a, &r);
		slots_give(&sc->attach_slots, t->uid);
	}
	if (census_slot)
		slots_give(&sc->census_slots, t->uid);
	if (err) {
		r.rc = err;
		r.kind = JMA_ERR_UNSAFE;
		r.started = jma_clock_s(CLOCK_MONOTONIC);
		snprintf(r.msg, sizeof(r.msg), "the server stops");
	}

	pthread_mutex_lock(&t->mu);
	if (took)
		give_target(sc, t, j->kind, &r);
	if (j->kind == OP_SAMPLE && !t->have_fixed && op_sample_decode(&r, &got) == 0 &&
	    got.config_prof >= 0 && got.opt_prof >= 0) {
		t->fixed = got;
		t->fixed.smp.arenas = NULL;	/* points into r, which goes */
		t->fixed.smp.narenas = 0;
		t->have_fixed = 1;
	}
	op_result_clear(&t->fl[j->kind].res);
	t->fl[j->kind].res = r;
	t->fl[j->kind].res.seq = ++t->fl[j->kind].seq;
	t->fl[j->kind].kept = 1;
	t->fl[j->kind].running = 0;
	if (j->kind == OP_DUMP)
		drop_reports(t, 0);
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

/* Caller holds t->mu. */
static int fresh_enough(const struct target *t, enum op_kind kind, double fresh)
{
	const struct flight *f = &t->fl[kind];

	return f->kept && (f->res.started >= fresh ||
			   jma_clock_s(CLOCK_MONOTONIC) < t->next_attach[BUDGET_OF(kind)]);
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
	if (!fresh_enough(t, kind, fresh))
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

/* The budget allows no attach before @at: a result saying when (caller holds t->mu). */
static void over_budget(struct serve_ctx *sc, struct op_result *out, double at)
{
	memset(out, 0, sizeof(*out));
	out->rc = -EAGAIN;
	out->kind = OP_ERR_BUDGET;
	out->retry_at = at;
	snprintf(out->msg, sizeof(out->msg), "the process's budget (--max-duty %g%%) allows its "
		 "next attach in %.1f s", sc->cfg->max_duty * 100, at - jma_clock_s(CLOCK_MONOTONIC));
}

int cache_wait(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh,
	       double deadline, struct op_result *out)
{
	struct flight *f = &t->fl[kind];
	double t0 = jma_clock_s(CLOCK_MONOTONIC);
	int err = 0;

	pthread_mutex_lock(&t->mu);
	while (!fresh_enough(t, kind, fresh)) {
		if (t->next_attach[BUDGET_OF(kind)] > deadline) {
			over_budget(sc, out, t->next_attach[BUDGET_OF(kind)]);
			pthread_mutex_unlock(&t->mu);
			return out->rc;
		}
		if (!f->running && (err = start_locked(sc, t, kind)))
			break;
		if (atomic_load(&sc->closing) || jma_clock_s(CLOCK_MONOTONIC) >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		cache_nap(&t->cv, &t->mu, deadline);
	}
	if (!err)
		op_result_share(out, &f->res);
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
	err = take_target(sc, t, deadline);
	pthread_mutex_unlock(&t->mu);
	if (err) {
		timed_out(out, jma_clock_s(CLOCK_MONOTONIC) - t0, 0);
		snprintf(out->msg, sizeof(out->msg), "the target stayed busy with another operation "
			 "for %.1f s", jma_clock_s(CLOCK_MONOTONIC) - t0);
		return out->rc;
	}
	if ((err = slots_take(sc, &sc->attach_slots, t->uid))) {
		memset(out, 0, sizeof(*out));
		out->rc = err;
		out->kind = JMA_ERR_UNSAFE;
		snprintf(out->msg, sizeof(out->msg), "the server stops");
	} else {
		op_run(sc, a, out);
		slots_give(&sc->attach_slots, t->uid);
	}
	pthread_mutex_lock(&t->mu);
	give_target(sc, t, a->kind, out);
	/* What was kept describes the process before the change. */
	for (int k = 0; k < OP_NCACHED; k++)
		if (!t->fl[k].running && t->fl[k].kept) {
			op_result_clear(&t->fl[k].res);
			t->fl[k].kept = 0;
		}
	drop_reports(t, 1);
	pthread_mutex_unlock(&t->mu);
	return out->rc;
}

void cache_trim(struct serve_ctx *sc, struct target *t)
{
	double now = jma_clock_s(CLOCK_MONOTONIC);

	/* Not the samples: small, and /metrics shows the last one's age.  A
	 * census is kept its own interval (it is asked for again only then). */
	for (int k = OP_DUMP; k < OP_NCACHED; k++) {
		struct flight *f = &t->fl[k];
		double keep = k == OP_CENSUS ? sc->cfg->census_interval : sc->cfg->min_interval;

		if (f->kept && !f->running && now >= f->res.started + keep &&
		    now >= t->next_attach[BUDGET_OF(k)]) {
			op_result_clear(&f->res);
			f->kept = 0;
		}
	}
	drop_reports(t, 0);
}
