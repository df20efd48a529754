/* routes.c -- what each path answers: /metrics, /targets, /stats, /debug/pprof/heap and
 * /allocs, /debug/census, POST /prof, /-/healthy and the index page; the table of routes.
 *
 * A route is a handler and a row of routes[] (its path, method and the query
 * keys it takes): http.c checks the method and the keys before it runs the
 * handler, which fills a reply.  A handler waits for targets at most
 * --timeout (or Prometheus's X-Prometheus-Scrape-Timeout-Seconds less a
 * margin); the work itself runs in children (serve.h).
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

#define SECONDS_MAX	600

static void reply_stream(struct reply *r, char *buf, size_t len, const char *type)
{
	r->status = MHD_HTTP_OK;
	r->type = type;
	r->body = buf;
	r->len = len;
}

/* --- parameters ---------------------------------------------------------- */

static const char *param(const struct req *q, const char *key)
{
	for (size_t i = 0; i < q->np; i++)
		if (!strcmp(q->key[i], key))
			return q->val[i];
	return NULL;
}

/* A decimal number in [lo, hi], digits only; -1 when not. */
static long number(const char *s, long lo, long hi)
{
	long v = 0;

	if (!s || !*s || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v >= lo && v <= hi ? v : -1;
}

/* The target named by ?pid=, or a reply saying why not. */
static struct target *target_of(struct serve_ctx *sc, struct req *q, struct reply *r)
{
	const char *s = param(q, "pid");
	long pid = number(s, 1, 4194304);
	struct target *t;
	char why[512];
	int err;

	if (!s) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "?pid=PID is needed (see /targets)");
		return NULL;
	}
	if (pid < 0) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid pid \"%s\": a process ID", s);
		return NULL;
	}
	err = targets_get(sc, (pid_t)pid, &t, why, sizeof(why));
	if (err == -EACCES)
		reply_error(r, MHD_HTTP_FORBIDDEN, "process %ld is not among the targets this "
			    "server may serve (--target)", pid);
	else if (err == -ESRCH)
		reply_error(r, MHD_HTTP_NOT_FOUND, "no process %ld", pid);
	else if (err)
		reply_error(r, MHD_HTTP_NOT_FOUND, "process %ld: %s", pid, why);
	return err ? NULL : t;
}

/* How long a handler may wait for targets: --timeout, or less when
 * Prometheus says how long it waits itself. */
static double deadline_of(struct serve_ctx *sc, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "X-Prometheus-Scrape-Timeout-Seconds");
	double limit = sc->cfg->timeout;

	if (h) {
		char *end;
		double v = strtod(h, &end);

		if (end != h && v > 0 && v - 0.5 < limit)
			limit = v - 0.5 > 0.2 ? v - 0.5 : 0.2;
	}
	return jma_clock_s(CLOCK_MONOTONIC) + limit;
}

/* --- routes --------------------------------------------------------------- */

static void do_metrics(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		       struct reply *r)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	int om = accept && strstr(accept, "application/openmetrics-text");
	double deadline = deadline_of(sc, c), fresh = jma_clock_s(CLOCK_MONOTONIC) - sc->cfg->min_interval;
	struct op_result *res;
	struct target **v;
	size_t n, len = 0;
	char *buf = NULL;
	FILE *f;

	(void)q;
	v = targets_list(sc, &n);
	res = calloc(n ? n : 1, sizeof(*res));
	if (!v || !res) {
		free(res);
		targets_put_all(sc, v, v ? n : 0);
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return;
	}
	/* All at once: one slow target costs its own wait, not the others'. */
	for (size_t i = 0; i < n; i++)
		if (v[i]->state == T_JEMALLOC)
			cache_start(sc, v[i], OP_SAMPLE, fresh);
	for (size_t i = 0; i < n; i++)
		if (v[i]->state == T_JEMALLOC)
			cache_wait(sc, v[i], OP_SAMPLE, fresh, deadline, &res[i]);
	f = open_memstream(&buf, &len);
	if (!f || metrics_render(sc, v, res, n, om, f) || fclose(f)) {
		if (f)
			fclose(f);
		free(buf);
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	} else {
		reply_stream(r, buf, len, om ? "application/openmetrics-text; version=1.0.0; "
			     "charset=utf-8" : "text/plain; version=0.0.4; charset=utf-8");
	}
	for (size_t i = 0; i < n; i++)
		op_result_clear(&res[i]);
	free(res);
	targets_put_all(sc, v, n);
}

static void do_targets(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		       struct reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)c, (void)q;
	if (!f || targets_json(sc, f) || fclose(f)) {
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return;
	}
	reply_stream(r, buf, len, "application/json");
}

static void do_stats(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		     struct reply *r)
{
	struct target *t = target_of(sc, q, r);
	struct op_result res;
	double now = jma_clock_s(CLOCK_MONOTONIC);

	if (!t)
		return;
	if (cache_wait(sc, t, OP_STATS, now - sc->cfg->min_interval, deadline_of(sc, c), &res)) {
		reply_failed(r, t, "malloc_stats_print", &res);
	} else {
		reply_stream(r, res.data, res.len, "application/json");
		r->blob = res.blob;	/* shared: the reply takes this request's reference */
		res.blob = NULL;
		res.data = NULL;
	}
	op_result_clear(&res);
	target_put(sc, t);
}

static void heap(struct serve_ctx *sc, struct req *q, struct reply *r, int allocs)
{
	const char *d = param(q, "debug"), *s = param(q, "seconds"), *gc = param(q, "gc");
	long debug = d ? number(d, 0, 1) : 0, secs = s ? number(s, 1, SECONDS_MAX) : 0;
	struct target *t;

	if (debug < 0 || secs < 0 || (gc && number(gc, 0, 1) < 0)) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid %s: debug=0|1, seconds=1..%d, gc=0|1",
			    debug < 0 ? "debug" : secs < 0 ? "seconds" : "gc", SECONDS_MAX);
		return;
	}
	if (!(t = target_of(sc, q, r)))
		return;
	pprof_heap(sc, t, allocs, (int)debug, (unsigned)secs, &q->who, r);
	target_put(sc, t);
}

static void do_heap(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		    struct reply *r)
{
	(void)c;
	heap(sc, q, r, 0);
}

static void do_allocs(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		      struct reply *r)
{
	(void)c;
	heap(sc, q, r, 1);
}

static void do_census(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		      struct reply *r)
{
	const char *fmt = param(q, "format");
	struct target *t;

	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "pprof")) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "invalid format: json or pprof");
		return;
	}
	if (!(t = target_of(sc, q, r)))
		return;
	census_reply(sc, t, fmt && !strcmp(fmt, "pprof"), deadline_of(sc, c), r);
	target_put(sc, t);
}

static void do_prof(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		    struct reply *r)
{
	static const char *const names[] = { "on", "off", "reset" };
	static const enum op_kind kinds[] = { OP_PROF_ON, OP_PROF_OFF, OP_PROF_RESET };
	const char *action = param(q, "action");
	struct op_arg a = { .opt = &sc->cfg->opt };
	struct op_result res;
	struct target *t;
	size_t i;

	if (!sc->cfg->allow_control) {
		reply_error(r, MHD_HTTP_FORBIDDEN, "control is off: start serve with "
			    "--allow-control to allow POST /prof");
		return;
	}
	for (i = 0; action && i < 3 && strcmp(action, names[i]); i++)
		;
	if (!action || i == 3) {
		reply_error(r, MHD_HTTP_BAD_REQUEST, "?action=on|off|reset is needed");
		return;
	}
	if (!(t = target_of(sc, q, r)))
		return;
	/* An authenticated client; else a local user, on its own processes. */
	if (!q->who.authenticated &&
	    !(q->who.peer && q->who.peer->local &&
	      (q->who.peer->uid == 0 || target_owned_by(t->pid, q->who.peer->uid)))) {
		reply_error(r, MHD_HTTP_FORBIDDEN, "process %d: control needs an authenticated "
			    "client (--web-config), or a local one whose user owns the process; "
			    "this client is %s", (int)t->pid, q->who.peer ? q->who.peer->name
			    : "unknown");
		target_put(sc, t);
		return;
	}
	a.kind = kinds[i];
	a.pid = t->pid;
	a.uid = t->uid;
	if (cache_run(sc, t, &a, deadline_of(sc, c), &res)) {
		reply_failed(r, t, names[i], &res);
	} else {
		char *body = NULL;
		int n = asprintf(&body, "%s\n", res.msg);

		if (n < 0)
			reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		else
			reply_stream(r, body, (size_t)n, "text/plain; charset=utf-8");
	}
	op_result_clear(&res);
	target_put(sc, t);
}

static void do_healthy(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		       struct reply *r)
{
	(void)sc, (void)c, (void)q;
	reply_stream(r, strdup("OK\n"), 3, "text/plain; charset=utf-8");
}

static void html(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '"')
			fputs("&quot;", f);
		else
			fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', f);
	}
}

static void do_index(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q,
		     struct reply *r)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&buf, &len);
	struct target **v;

	(void)c, (void)q;
	if (!f) {
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return;
	}
	fputs("<!DOCTYPE html>\n<html><head><title>jemattach serve</title></head><body>\n"
	      "<h1>jemattach serve</h1>\n<p><a href=\"/metrics\">/metrics</a> &middot; "
	      "<a href=\"/targets\">/targets</a> &middot; <a href=\"/-/healthy\">/-/healthy</a></p>\n"
	      "<table>\n<tr><th>pid</th><th>comm</th><th>unit</th><th></th></tr>\n", f);
	v = targets_list(sc, &n);
	for (size_t i = 0; v && i < n; i++) {
		if (v[i]->state != T_JEMALLOC)
			continue;
		fprintf(f, "<tr><td>%d</td><td>", (int)v[i]->pid);
		html(f, v[i]->comm);
		fputs("</td><td>", f);
		html(f, v[i]->unit);
		fprintf(f, "</td><td><a href=\"/stats?pid=%d\">stats</a> "
			"<a href=\"/debug/pprof/heap?pid=%d&amp;debug=1\">heap</a> "
			"<a href=\"/debug/pprof/heap?pid=%d\">heap.pb.gz</a> "
			"<a href=\"/debug/census?pid=%d\">census</a></td></tr>\n",
			(int)v[i]->pid, (int)v[i]->pid, (int)v[i]->pid, (int)v[i]->pid);
	}
	targets_put_all(sc, v, v ? n : 0);
	fputs("</table>\n</body></html>\n", f);
	if (fclose(f)) {
		free(buf);
		reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return;
	}
	reply_stream(r, buf, len, "text/html; charset=utf-8");
}

static const struct route routes[] = {
	{ "/", "GET", "", do_index },
	{ "/metrics", "GET", "", do_metrics },
	{ "/targets", "GET", "", do_targets },
	{ "/stats", "GET", "pid", do_stats },
	{ "/debug/pprof/heap", "GET", "pid debug seconds gc", do_heap },
	{ "/debug/pprof/allocs", "GET", "pid debug seconds gc", do_allocs },
	{ "/debug/census", "GET", "pid format", do_census },
	{ "/prof", "POST", "pid action", do_prof },
	{ "/-/healthy", "GET", "", do_healthy },
};

const struct route *route_find(const char *url)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(*routes); i++)
		if (!strcmp(url, routes[i].path))
			return &routes[i];
	return NULL;
}
