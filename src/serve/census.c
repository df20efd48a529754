/* census.c -- /debug/census?pid=N: a census of the process (JSON, or pprof with ?format=pprof),
 * and with --census-metrics N the top N types' gauges in /metrics.
 *
 * A census stops every thread of the target while jemalloc's metadata is
 * copied (milliseconds; a few hundred for a heap of many GiB on a loaded
 * machine) and then reads every block's first word (its type) in a child,
 * costing the target nothing more.  So it is budgeted like the sampler's
 * windows: one at a time per target (as every operation), at most
 * CENSUS_MAX at once in the server (one user's processes half of them, as
 * attach slots are shared), within the target's budget (--max-duty, on the
 * clock of everything but scrapes: what its threads stayed stopped is
 * charged), and each answer kept --census-interval seconds (default 60) for
 * every request and scrape meanwhile.  The child
 * (ops.c) sends the census back as a snapshot (census_diff.h), which the
 * server reads with the snapshot's bounds and writes in the format asked for.
 * With --census-owners it also finds what each root retains (every block's
 * words read: seconds of the child's CPU per GiB, no longer stop).
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

/* --- in the server ------------------------------------------------------------ */

static int to_stream(void *arg, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, arg) == len ? 0 : -EIO;
}

void census_reply(struct serve_ctx *sc, struct target *t, int pprof, double deadline,
		  struct reply *r)
{
	double now = jma_clock_s(CLOCK_MONOTONIC);
	struct jma_census_report_opts ro = { .sz = sizeof(ro),
					     .format = pprof ? JMA_CENSUS_PPROF : JMA_CENSUS_JSON };
	struct jma_census_meta m;
	struct jma_census *c = NULL;
	struct op_result res;
	char msg[300], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (cache_wait(sc, t, OP_CENSUS, now - sc->cfg->census_interval, deadline, &res)) {
		reply_failed(r, t, "a census", &res);
		goto out;
	}
	if (jma_census_parse(res.data, res.len, &c, &m, msg, sizeof(msg))) {
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "process %d: the census's answer: %s",
			    (int)t->pid, msg);
		goto out;
	}
	ro.meta = &m;
	ro.top = pprof ? 0 : 20;
	if (!(f = open_memstream(&buf, &len))) {
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		goto out;
	}
	err = jma_census_report(c, NULL, &ro, to_stream, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(buf);
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "the census's report: %s", strerror(-err));
		goto out;
	}
	r->status = MHD_HTTP_OK;
	r->type = pprof ? "application/octet-stream" : "application/json";
	r->filename = pprof ? "census" : NULL;
	r->body = buf;
	r->len = len;
	snprintf(r->note, sizeof(r->note), "census of %.1f s ago; threads stopped %.1f ms",
		 jma_clock_s(CLOCK_MONOTONIC) - res.started, (double)c->stop_ns / 1e6);
out:
	jma_census_free(c);
	op_result_clear(&res);
}

/* --- /metrics ------------------------------------------------------------------ */

static int cmp_bytes(const void *a, const void *b)
{
	const struct jma_census_row *x = a, *y = b;

	return (x->k.bytes < y->k.bytes) - (x->k.bytes > y->k.bytes);
}

/* One target's gauges from its last census answer, if any (none waited for). */
static void target_census(struct serve_ctx *sc, struct target *t, struct jma_census **c,
			  double *age)
{
	struct op_result res = { 0 };
	struct jma_census_meta m;
	char msg[200];
	int have;

	pthread_mutex_lock(&t->mu);
	have = t->fl[OP_CENSUS].kept && !t->fl[OP_CENSUS].res.rc;
	if (have)
		op_result_share(&res, &t->fl[OP_CENSUS].res);
	pthread_mutex_unlock(&t->mu);
	/* Fresh enough or not, the next one is on its way (never waited for here). */
	cache_start(sc, t, OP_CENSUS, jma_clock_s(CLOCK_MONOTONIC) - sc->cfg->census_interval);
	if (have && !jma_census_parse(res.data, res.len, c, &m, msg, sizeof(msg)))
		*age = jma_clock_s(CLOCK_MONOTONIC) - res.started;
	op_result_clear(&res);
}

void census_metrics(struct serve_ctx *sc, struct target **v, size_t n, FILE *f)
{
	struct jma_census **c = calloc(n ? n : 1, sizeof(*c));
	double *age = calloc(n ? n : 1, sizeof(*age));
	unsigned top = sc->cfg->census_metrics;
	char buf[64];

	if (!c || !age) {
		free(c);
		free(age);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i]->state == T_JEMALLOC)
			target_census(sc, v[i], &c[i], &age[i]);
	metrics_family(f, "jemalloc_census_type_bytes",
		       "Bytes of live blocks of a C++ type (by vtable; \"(no vtable) N bytes\": the rest, "
		       "by size), the largest --census-metrics types, from the last census.");
	for (size_t i = 0; i < n; i++) {
		struct jma_census_row *rows;
		size_t nr;

		if (!c[i] || jma_census_rows(c[i], JMA_CENSUS_BY_TYPE, &rows, &nr))
			continue;
		qsort(rows, nr, sizeof(*rows), cmp_bytes);
		for (size_t k = 0; k < nr && k < top; k++) {
			fputs("jemalloc_census_type_bytes", f);
			metrics_labels(f, v[i]);
			fputs(",cxx_type=\"", f);
			metrics_label(f, jma_census_row_label(&rows[k], buf, sizeof(buf)));
			fprintf(f, "\"} %llu\n", (unsigned long long)rows[k].k.bytes);
		}
		free(rows);
	}
	metrics_family(f, "jemalloc_census_live_bytes", "Bytes of live blocks, from the last census.");
	for (size_t i = 0; i < n; i++)
		if (c[i]) {
			fputs("jemalloc_census_live_bytes", f);
			metrics_labels(f, v[i]);
			fprintf(f, "} %llu\n", (unsigned long long)c[i]->live.bytes);
		}
	metrics_family(f, "jemattach_census_stop_seconds",
		       "How long the last census kept every thread of the target stopped.");
	for (size_t i = 0; i < n; i++)
		if (c[i]) {
			fputs("jemattach_census_stop_seconds", f);
			metrics_labels(f, v[i]);
			fprintf(f, "} %.9g\n", (double)c[i]->stop_ns / 1e9);
		}
	metrics_family(f, "jemattach_census_age_seconds", "Age of the census the gauges come from.");
	for (size_t i = 0; i < n; i++)
		if (c[i]) {
			fputs("jemattach_census_age_seconds", f);
			metrics_labels(f, v[i]);
			fprintf(f, "} %.9g\n", age[i]);
		}
	for (size_t i = 0; i < n; i++)
		jma_census_free(c[i]);
	free(c);
	free(age);
}
