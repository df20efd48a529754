/* pprof.c -- /debug/pprof/heap and /allocs, as Go's net/http/pprof serves them.
 *
 * A fresh heap profile (prof.dump, shared and kept --min-interval like every
 * answer) is named from the live process and encoded by the library's pprof
 * writer (src/heap/pprof.c: gzip'd profile.proto with Function and Line
 * records, so `go tool pprof` never asks for /debug/pprof/symbol).
 * ?debug=1 is the text `analyze` prints; ?seconds=N the change over N seconds
 * (two dumps, the first subtracted, as `prof window`).  The naming runs in a
 * child too: it parses the target's own ELF files.
 *
 * A process started without opt.prof has no profile to dump: then the
 * sampler (src/sampler, `prof sample`) watches its allocations by uprobes for
 * ?seconds=N (default PPROF_SAMPLER_DEFAULT_S, as Go's CPU profile; at most
 * PPROF_SAMPLER_MAX_S), which stops nothing but costs the target a trap per
 * probed call: one window per target at a time, PPROF_SAMPLERS_MAX in all,
 * never shared or kept (each is its own time span).  Such a profile holds what
 * was allocated in the window and is still in use at its end (/allocs: all
 * that was allocated in it).
 *
 * Who may start a window: the operator's --allow-sampler, or a client that
 * authenticated (--web-config's users); anyone else is refused (403).  A
 * default server let any local user slow any process by a loop of requests:
 * --max-overhead ends each window after 0.5 s and the next began at once
 * (another user's malloc rate fell from 34.8 to 15.2 M/s for as long as the
 * loop ran).  And however allowed, a process's windows take at most
 * --max-duty of its time: after a window of N s, none other on it for
 * N x (1/duty - 1) s (429 with Retry-After meanwhile).
 *
 * A report (naming and encoding a profile, in a child) is shared too: the
 * requests that want the same one -- the same dumps, format and counts --
 * wait for one child and share its answer, so 16 requests for a large
 * profile cost one report and hold one copy.
 */
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

/* Sleep @s seconds, or less when the server stops; 1 when it does. */
static int sleep_s(struct serve_ctx *sc, double s)
{
	double end = jma_clock_s(CLOCK_MONOTONIC) + s;

	while (!atomic_load(&sc->closing)) {
		double left = end - jma_clock_s(CLOCK_MONOTONIC);
		struct timespec ts = { 0, 250 * 1000 * 1000 };

		if (left <= 0)
			return 0;
		if (left < 0.25)
			ts.tv_nsec = (long)(left * 1e9);
		nanosleep(&ts, NULL);
	}
	return 1;
}

/* The target runs without heap profiling (opt.prof or config.prof false)? */
static int no_prof(const struct op_result *dump)
{
	return dump->rc == -ENOTSUP && dump->kind == JMA_ERR_MISSING;
}

/* A sampler window of @seconds on @t into @out; 0, or -errno with the reply
 * made (@why: why there was no profile to dump). */
static int sample(struct serve_ctx *sc, struct target *t, int allocs, unsigned seconds,
		  const char *why, const struct asker *who, struct reply *r, struct op_result *out)
{
	struct op_arg a = { .kind = OP_SAMPLER, .pid = t->pid, .uid = t->uid, .opt = &sc->cfg->opt,
			    .seconds = seconds, .alloc_only = allocs,
			    .max_overhead = sc->cfg->max_overhead };
	double now = jma_clock_s(CLOCK_MONOTONIC), next;
	int busy, full, early;

	memset(out, 0, sizeof(*out));
	if (!sc->cfg->allow_sampler && !who->authenticated) {
		reply_error(r, MHD_HTTP_FORBIDDEN, "process %d (%s) runs without heap profiling (%s): "
			    "its profile would be a sampler window, which slows the process while it "
			    "runs; this server starts none for an unauthenticated client (the operator "
			    "allows them with --allow-sampler, or basic auth in --web-config)",
			    (int)t->pid, t->comm, why);
		return -EPERM;
	}
	if (seconds > PPROF_SAMPLER_MAX_S) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "process %d runs without heap profiling: its "
			    "profile is a sampler window of ?seconds=1..%d (default %d), not %u",
			    (int)t->pid, PPROF_SAMPLER_MAX_S, PPROF_SAMPLER_DEFAULT_S, seconds);
		return -EINVAL;
	}
	pthread_mutex_lock(&t->mu);
	pthread_mutex_lock(&sc->fmu);
	busy = t->sampling;
	full = sc->samplers >= PPROF_SAMPLERS_MAX;
	next = t->next_window;
	early = now < next;
	if (!busy && !full && !early) {
		t->sampling = 1;
		sc->samplers++;
	}
	pthread_mutex_unlock(&sc->fmu);
	pthread_mutex_unlock(&t->mu);
	if (early) {
		reply_error(r, MHD_HTTP_TOO_MANY_REQUESTS, "process %d (%s): its budget (--max-duty "
			    "%g%%) allows its next sampler window in %.0f s", (int)t->pid, t->comm,
			    sc->cfg->max_duty * 100, ceil(next - now));
		r->retry_after = (int)ceil(next - now);
		return -EAGAIN;
	}
	if (busy || full) {
		reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "process %d (%s): %s: try again when it "
			    "ends", (int)t->pid, t->comm, busy ? "a sampler window runs on it already"
			    : "as many sampler windows as this server runs at once are running");
		r->retry_after = (int)(seconds ? seconds : PPROF_SAMPLER_DEFAULT_S);
		return -EBUSY;
	}
	if (!seconds)
		a.seconds = PPROF_SAMPLER_DEFAULT_S;
	op_run(sc, &a, out);
	pthread_mutex_lock(&t->mu);
	pthread_mutex_lock(&sc->fmu);
	t->sampling = 0;
	sc->samplers--;
	/* The probes were in for at most the child's whole time. */
	t->next_window = cache_next_ok(sc, out->started + out->secs, out->secs);
	pthread_mutex_unlock(&sc->fmu);
	pthread_mutex_unlock(&t->mu);
	if (out->rc) {
		char what[600];

		snprintf(what, sizeof(what), "no heap profile (%s), and the sampler cannot run", why);
		reply_failed(r, t, what, out);
		return out->rc;
	}
	snprintf(r->note, sizeof(r->note), "%s", out->msg);
	return 0;
}

/* The report entry for this key, or a free one made for it (caller holds
 * t->mu); NULL when every entry is in use for another.  *@mine: made here. */
static struct report_flight *report_slot(struct target *t, const struct op_arg *a,
					 uint64_t heap_seq, uint64_t base_seq, int *mine)
{
	struct report_flight *free_rf = NULL;

	*mine = 0;
	for (int i = 0; i < REPORTS_KEPT; i++) {
		struct report_flight *rf = &t->rep[i];

		if (rf->used && rf->heap_seq == heap_seq && rf->base_seq == base_seq &&
		    rf->format == (int)a->format && rf->sample == (int)a->sample &&
		    rf->need_alloc == a->need_alloc)
			return rf;
		if (!rf->running && (!free_rf || !rf->used))
			free_rf = rf;
	}
	if (free_rf) {
		op_result_clear(&free_rf->res);
		*free_rf = (struct report_flight){ .used = 1, .running = 1, .heap_seq = heap_seq,
						   .base_seq = base_seq, .format = (int)a->format,
						   .sample = (int)a->sample, .need_alloc = a->need_alloc };
		*mine = 1;
	}
	return free_rf;
}

/* The report of @a into @out; made once for all the requests that want the
 * same (@heap_seq, @base_seq: the dumps it is made of; 0: a sampler
 * window's, never shared). */
static void report(struct serve_ctx *sc, struct target *t, const struct op_arg *a,
		   uint64_t heap_seq, uint64_t base_seq, struct op_result *out)
{
	struct report_flight *rf = NULL;
	int mine = 0;

	if (heap_seq) {
		pthread_mutex_lock(&t->mu);
		rf = report_slot(t, a, heap_seq, base_seq, &mine);
		while (rf && !mine && rf->running && !atomic_load(&sc->closing))
			cache_nap(&t->cv, &t->mu, 0);
		if (rf && !mine && !rf->running && rf->used && rf->heap_seq == heap_seq &&
		    rf->base_seq == base_seq) {
			op_result_share(out, &rf->res);
			pthread_mutex_unlock(&t->mu);
			return;
		}
		if (!mine)
			rf = NULL;	/* evicted meanwhile, or the server stops: a report of its own */
		pthread_mutex_unlock(&t->mu);
	}
	if (slots_take(sc, &sc->report_slots, t->uid)) {
		memset(out, 0, sizeof(*out));
		out->rc = -ECANCELED;
		out->kind = JMA_ERR_UNSAFE;
		snprintf(out->msg, sizeof(out->msg), "the server stops");
	} else {
		op_run(sc, a, out);
		slots_give(&sc->report_slots, t->uid);
	}
	if (rf) {
		pthread_mutex_lock(&t->mu);
		op_result_share(&rf->res, out);
		rf->running = 0;
		if (out->rc)
			rf->used = 0;	/* a failure is not shared on: the next may do better */
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
	}
}

void pprof_heap(struct serve_ctx *sc, struct target *t, int allocs, int debug, unsigned seconds,
		const struct asker *who, struct reply *r)
{
	const struct serve_cfg *cfg = sc->cfg;
	struct op_result d1 = { 0 }, d2 = { 0 }, rep;
	struct op_arg a = { .kind = OP_REPORT, .pid = t->pid, .uid = t->uid,
			    .format = debug ? JMA_HEAP_TEXT : JMA_HEAP_PPROF,
			    .sample = allocs ? JMA_HEAP_ALLOC_SPACE : JMA_HEAP_INUSE_SPACE,
			    .need_alloc = allocs };
	double now = jma_clock_s(CLOCK_MONOTONIC);
	uint64_t heap_seq = 0, base_seq = 0;
	char why[512] = "";
	int unprofiled;

	/* Known from a scrape (opt.prof never changes): no attach to learn it again. */
	pthread_mutex_lock(&t->mu);
	unprofiled = t->have_fixed && t->fixed.opt_prof == 0;
	pthread_mutex_unlock(&t->mu);
	if (unprofiled)
		snprintf(why, sizeof(why), "opt.prof is false");
	else if (cache_wait(sc, t, OP_DUMP, now - cfg->min_interval, now + cfg->timeout, &d1)) {
		if (!no_prof(&d1)) {
			reply_failed(r, t, "a heap profile", &d1);
			goto out;
		}
		/* The reason, without its advice for the command line. */
		snprintf(why, sizeof(why), "%.*s", (int)strcspn(d1.msg, ";"), d1.msg);
		op_result_clear(&d1);
		unprofiled = 1;
	}
	if (unprofiled) {
		if (sample(sc, t, allocs, seconds, why, who, r, &d1))
			goto out;
	} else if (seconds) {
		if (sleep_s(sc, seconds)) {
			reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "the server stops");
			goto out;
		}
		now = jma_clock_s(CLOCK_MONOTONIC);
		if (cache_wait(sc, t, OP_DUMP, now, now + cfg->timeout, &d2)) {
			reply_failed(r, t, "the second heap profile", &d2);
			goto out;
		}
		if (d2.seq == d1.seq) {
			/* The budget kept the first: there is no change to show. */
			pthread_mutex_lock(&t->mu);
			d2.retry_at = t->next_attach[BUDGET_OF(OP_DUMP)];
			pthread_mutex_unlock(&t->mu);
			d2.rc = -EAGAIN;
			d2.kind = OP_ERR_BUDGET;
			snprintf(d2.msg, sizeof(d2.msg), "the process's budget (--max-duty %g%%) allows "
				 "no second dump yet", cfg->max_duty * 100);
			reply_failed(r, t, "the second heap profile", &d2);
			goto out;
		}
		a.base = d1.data;
		a.base_len = d1.len;
		base_seq = d1.seq;
	}
	a.heap = d2.data ? d2.data : d1.data;
	a.heap_len = d2.data ? d2.len : d1.len;
	a.why = unprofiled ? r->note : d2.data ? d2.msg : d1.msg;
	heap_seq = unprofiled ? 0 : d2.data ? d2.seq : d1.seq;
	report(sc, t, &a, heap_seq, base_seq, &rep);
	if (rep.rc) {
		reply_failed(r, t, "the profile's report", &rep);
	} else {
		/* An empty one says why (its pprof comment too: ops.c). */
		if (rep.msg[0])
			snprintf(r->note, sizeof(r->note), "%s", rep.msg);
		r->status = 200;
		r->type = debug ? "text/plain; charset=utf-8" : "application/octet-stream";
		r->filename = debug ? NULL : allocs ? "allocs" : "heap";
		r->body = rep.data;
		r->len = rep.len;
		r->blob = rep.blob;
		rep.blob = NULL;
		rep.data = NULL;
	}
	op_result_clear(&rep);
out:
	op_result_clear(&d1);
	op_result_clear(&d2);
}
