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
 */
#include <errno.h>
#include <microhttpd.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The target runs without heap profiling (opt.prof or config.prof false)? */
static int no_prof(const struct op_result *dump)
{
	return dump->rc == -ENOTSUP && dump->kind == JMA_ERR_MISSING;
}

/* A sampler window of @seconds on @t into @out; 0, or -errno with the reply
 * made (@why: why there was no profile to dump). */
static int sample(struct serve_ctx *sc, struct target *t, int allocs, unsigned seconds,
		  const char *why, struct reply *r, struct op_result *out)
{
	struct op_arg a = { .kind = OP_SAMPLER, .pid = t->pid, .opt = &sc->cfg->opt,
			    .seconds = seconds, .alloc_only = allocs,
			    .max_overhead = sc->cfg->max_overhead, .cancel = &sc->closing };
	int busy, full;

	memset(out, 0, sizeof(*out));
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
	if (!busy && !full) {
		t->sampling = 1;
		sc->samplers++;
	}
	pthread_mutex_unlock(&sc->fmu);
	pthread_mutex_unlock(&t->mu);
	if (busy || full) {
		reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, "process %d (%s): %s: try again when it "
			    "ends", (int)t->pid, t->comm, busy ? "a sampler window runs on it already"
			    : "as many sampler windows as this server runs at once are running");
		r->retry_after = (int)(seconds ? seconds : PPROF_SAMPLER_DEFAULT_S);
		return -EBUSY;
	}
	if (!seconds)
		a.seconds = PPROF_SAMPLER_DEFAULT_S;
	op_run(sc->cfg, &a, out);
	pthread_mutex_lock(&t->mu);
	pthread_mutex_lock(&sc->fmu);
	t->sampling = 0;
	sc->samplers--;
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

void pprof_heap(struct serve_ctx *sc, struct target *t, int allocs, int debug, unsigned seconds,
		struct reply *r)
{
	const struct serve_cfg *cfg = sc->cfg;
	struct op_result d1 = { 0 }, d2 = { 0 }, rep;
	struct op_arg a = { .kind = OP_REPORT, .pid = t->pid,
			    .format = debug ? JMA_HEAP_TEXT : JMA_HEAP_PPROF,
			    .sample = allocs ? JMA_HEAP_ALLOC_SPACE : JMA_HEAP_INUSE_SPACE,
			    .need_alloc = allocs };
	double now = jma_clock_s(CLOCK_MONOTONIC);
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
		if (sample(sc, t, allocs, seconds, why, r, &d1))
			goto out;
	} else if (seconds) {
		sleep_s(seconds);
		now = jma_clock_s(CLOCK_MONOTONIC);
		if (cache_wait(sc, t, OP_DUMP, now, now + cfg->timeout, &d2)) {
			reply_failed(r, t, "the second heap profile", &d2);
			goto out;
		}
		a.base = d1.data;
		a.base_len = d1.len;
	}
	a.heap = d2.data ? d2.data : d1.data;
	a.heap_len = d2.data ? d2.len : d1.len;
	a.why = unprofiled ? r->note : d2.data ? d2.msg : d1.msg;
	sem_take(&sc->report_sem);
	op_run(cfg, &a, &rep);
	sem_give(&sc->report_sem);
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
		rep.data = NULL;
	}
	op_result_clear(&rep);
out:
	op_result_clear(&d1);
	op_result_clear(&d2);
}
