/* http.c -- the libmicrohttpd daemon: authentication, who may do what, routing.
 *
 * One thread per connection (libmicrohttpd's own), at most CONN_MAX
 * connections, CONN_PER_CLIENT from one client, each request within its
 * deadlines (conns.c), headers within CONN_MEM bytes, a request body (no
 * route takes one: it is dropped) within BODY_MAX, else the connection is
 * closed; every query parameter is checked against what its route takes:
 * unknown, repeated or malformed ones are a 400 naming them.  A handler waits
 * for targets at most --timeout (or Prometheus's
 * X-Prometheus-Scrape-Timeout-Seconds less a margin); the work itself runs in
 * children (serve.h).
 *
 * What a client may start.  Anyone who reaches the port: answers that are
 * kept and shared (/metrics, /stats, /debug/census, a dump of a process
 * started with prof:true), each process within its budget (--max-duty,
 * cache.c).  With
 * --allow-sampler or authentication: sampler windows (pprof.c).  With
 * --allow-control, and authentication or a local client whose user owns the
 * process (or is root): POST /prof.  A local user could otherwise switch
 * profiling in every other user's processes.
 *
 * SIGTERM: the server stops within STOP_S whatever its workers do: the
 * waits end, workers are killed (a sampler's window asked to end first), and
 * one that does not end (asleep in the kernel) is left behind.
 */
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "serve/serve.h"

#define CONN_MEM	(32 * 1024)
#define CONN_IDLE_S	30
#define BODY_MAX	4096
#define NPARAM		6
#define PARAM_LEN	64
#define SECONDS_MAX	600
#define STOP_S		10

struct req {
	struct conn *conn;		/* its connection (conns.c) */
	struct asker who;		/* who.peer: the connection's */
	size_t body;			/* bytes of body seen */
	int bad;			/* a parameter was refused: reason in why */
	char why[160];
	size_t np;
	char key[NPARAM][16];
	char val[NPARAM][PARAM_LEN];
};

struct route {
	const char *path;
	const char *method;		/* GET routes take HEAD too */
	const char *params;		/* allowed query keys, space-separated */
	void (*run)(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q, struct reply *r);
};

/* --- replies (reply.c has the error replies) ---------------------------- */

static void reply_stream(struct reply *r, char *buf, size_t len, const char *type)
{
	r->status = MHD_HTTP_OK;
	r->type = type;
	r->body = buf;
	r->len = len;
}

/* --- parameters ---------------------------------------------------------- */

static enum MHD_Result collect(void *arg, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct req *q = arg;

	(void)kind;
	if (q->bad)
		return MHD_NO;
	if (q->np == NPARAM) {
		q->bad = 1;
		snprintf(q->why, sizeof(q->why), "too many query parameters (at most %d)", NPARAM);
		return MHD_NO;
	}
	if (strlen(key) >= sizeof(q->key[0]) || (value && strlen(value) >= PARAM_LEN)) {
		q->bad = 1;
		snprintf(q->why, sizeof(q->why), "a query parameter or its value is too long");
		return MHD_NO;
	}
	for (size_t i = 0; i < q->np; i++)
		if (!strcmp(q->key[i], key)) {
			q->bad = 1;
			snprintf(q->why, sizeof(q->why), "query parameter \"%s\" given twice", key);
			return MHD_NO;
		}
	snprintf(q->key[q->np], sizeof(q->key[0]), "%s", key);
	snprintf(q->val[q->np], sizeof(q->val[0]), "%s", value ? value : "");
	q->np++;
	return MHD_YES;
}

static const char *param(const struct req *q, const char *key)
{
	for (size_t i = 0; i < q->np; i++)
		if (!strcmp(q->key[i], key))
			return q->val[i];
	return NULL;
}

/* @key is one of the space-separated words of @list (an empty key never is). */
static int key_in(const char *key, const char *list)
{
	size_t n = strlen(key);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, " ");

		if (n && len == n && !strncmp(p, key, n))
			return 1;
		p += len;
		p += *p == ' ';
	}
	return 0;
}

/* Every key in @q is in @allowed?  Else the reason in @q. */
static int params_allowed(struct req *q, const char *allowed)
{
	for (size_t i = 0; i < q->np; i++)
		if (!key_in(q->key[i], allowed)) {
			q->bad = 1;
			snprintf(q->why, sizeof(q->why), "unknown query parameter \"%s\"%s%s",
				 q->key[i], allowed[0] ? "; this path takes: " : " (this path takes none)",
				 allowed);
			return 0;
		}
	return 1;
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

/* --- libmicrohttpd ------------------------------------------------------- */

/* libmicrohttpd's free callback: the response's reference to its body. */
static void blob_release(void *b)
{
	blob_put(b);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply *r, const char *allow,
				  int auth_fail)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char hdr[300];

	if (!r->body)
		reply_error(r, r->status ? r->status : MHD_HTTP_INTERNAL_SERVER_ERROR, "no answer");
	if (r->blob)	/* shared: the response holds a reference */
		resp = MHD_create_response_from_buffer_with_free_callback_cls(r->len, r->body,
									  blob_release, r->blob);
	else
		resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		if (r->blob)
			blob_put(r->blob);
		else
			free(r->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r->filename) {
		snprintf(hdr, sizeof(hdr), "attachment; filename=\"%s\"", r->filename);
		MHD_add_response_header(resp, "Content-Disposition", hdr);
	}
	if (r->note[0])
		MHD_add_response_header(resp, "X-Jemattach-Profile", r->note);
	if (r->retry_after) {
		snprintf(hdr, sizeof(hdr), "%d", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, hdr);
	}
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (auth_fail)
		ret = MHD_queue_basic_auth_fail_response(c, "jemattach", resp);
	else
		ret = MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* 1 when the request may go on: no users configured, or one of them (then
 * q->who.authenticated). */
static int authorized(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q)
{
	char *pass = NULL, *user;
	int ok;

	if (!sc->cfg->web.nusers)
		return 1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = user && pass && webcfg_check(sc, user, pass);
	q->who.authenticated = ok;
	if (pass)
		explicit_bzero(pass, strlen(pass));
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

/* The answer goes: CONN_SEND_S for the client to take it. */
static enum MHD_Result respond(struct serve_ctx *sc, struct req *q, struct MHD_Connection *c,
			       struct reply *r, const char *allow, int auth_fail)
{
	conns_phase(sc, q->conn, CONN_SENDING);
	return send_reply(c, r, allow, auth_fail);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct serve_ctx *sc = cls;
	struct req *q = *con_cls;
	struct reply r = { 0 };
	const struct route *rt = NULL;
	int is_get = !strcmp(method, "GET") || !strcmp(method, "HEAD");

	(void)version, (void)upload;
	if (!q) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

		q = calloc(1, sizeof(*q));
		if (!q)
			return MHD_NO;
		q->conn = ci ? ci->socket_context : NULL;
		q->who.peer = q->conn ? &q->conn->peer : NULL;
		*con_cls = q;
		atomic_fetch_add(&sc->requests, 1);
		return MHD_YES;
	}
	if (*upload_size) {
		/* A body is read and dropped: no route takes one.  Past the
		 * bound the connection is closed rather than read on. */
		q->body += *upload_size;
		*upload_size = 0;
		return q->body > BODY_MAX ? MHD_NO : MHD_YES;
	}
	/* The request is in: the handler's time is its own (deadlines, windows). */
	conns_phase(sc, q->conn, CONN_WORKING);
	if (!authorized(sc, c, q)) {
		atomic_fetch_add(&sc->rejected, 1);
		reply_error(&r, MHD_HTTP_UNAUTHORIZED, "authentication required");
		return respond(sc, q, c, &r, NULL, 1);
	}
	for (size_t i = 0; i < sizeof(routes) / sizeof(*routes); i++)
		if (!strcmp(url, routes[i].path))
			rt = &routes[i];
	if (!rt) {
		reply_error(&r, MHD_HTTP_NOT_FOUND, "no such path (see /)");
		return respond(sc, q, c, &r, NULL, 0);
	}
	if (strcmp(rt->method, "GET") ? strcmp(method, rt->method) : !is_get) {
		reply_error(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "%s takes %s only", rt->path, rt->method);
		return respond(sc, q, c, &r, strcmp(rt->method, "GET") ? rt->method : "GET, HEAD", 0);
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, q);
	if (!q->bad)
		params_allowed(q, rt->params);
	if (q->bad) {
		atomic_fetch_add(&sc->rejected, 1);
		reply_error(&r, MHD_HTTP_BAD_REQUEST, "%s", q->why);
		return respond(sc, q, c, &r, NULL, 0);
	}
	rt->run(sc, c, q, &r);
	return respond(sc, q, c, &r, NULL, 0);
}

/* A request is done: its connection waits for the next (CONN_REQUEST_S). */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode code)
{
	struct req *q = *con_cls;

	(void)c, (void)code;
	if (q)
		conns_phase(cls, q->conn, CONN_RECEIVING);
	free(q);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve_ctx *sc = cls;

	if (sc->cfg->verbose) {
		fputs("jemattach: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

static int serve(struct serve_cfg *cfg);

/* "http://127.0.0.1:9711/" and the like. */
static void url_of(const struct serve_cfg *cfg, uint16_t port, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	const struct sockaddr_in *a4 = (const void *)&cfg->addr;
	const struct sockaddr_in6 *a6 = (const void *)&cfg->addr;
	int v6 = cfg->addr.ss_family == AF_INET6;

	inet_ntop(cfg->addr.ss_family, v6 ? (const void *)&a6->sin6_addr : (const void *)&a4->sin_addr,
		  host, sizeof(host));
	snprintf(out, len, "%s://%s%s%s:%u/", cfg->web.cert_pem ? "https" : "http", v6 ? "[" : "",
		 host, v6 ? "]" : "", (unsigned)port);
}

int serve_run(struct serve_cfg *cfg)
{
	char why[256];
	int rc;

	if (cfg->web_config && (rc = webcfg_load(cfg->web_config, &cfg->web, why, sizeof(why)))) {
		fprintf(stderr, "jemattach: --web-config: %s\n", why);
		return 2;
	}
	if (!cfg->loopback && !cfg->web.cert_pem && !cfg->insecure) {
		fprintf(stderr, "jemattach: serve: %s is not a loopback address: give TLS in "
			"--web-config (tls_server_config), or --insecure to serve plain HTTP to the "
			"network\n", cfg->listen);
		webcfg_free(&cfg->web);
		return 2;
	}
	rc = serve(cfg);
	webcfg_free(&cfg->web);
	return rc;
}

/* The stop, in a thread of its own: the main thread gives it STOP_S. */
struct stopper {
	struct serve_ctx *sc;
	struct MHD_Daemon *d;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
};

static void *stop_main(void *arg)
{
	struct stopper *st = arg;
	struct serve_ctx *sc = st->sc;

	MHD_stop_daemon(st->d);
	targets_stop(sc);
	/* Children at work are ended (the server's stop), each target restored. */
	pthread_mutex_lock(&sc->fmu);
	while (sc->inflight)
		pthread_cond_wait(&sc->fcv, &sc->fmu);
	pthread_mutex_unlock(&sc->fmu);
	conns_stop(sc);
	pthread_mutex_lock(&st->mu);
	st->done = 1;
	pthread_cond_signal(&st->cv);
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

/* End the server within STOP_S; 0 when everything ended, 1 when some of it
 * was left (then the process must exit now: its threads go with it). */
static int stop_within(struct serve_ctx *sc, struct MHD_Daemon *d)
{
	struct stopper st = { .sc = sc, .d = d };
	struct timespec ts;
	pthread_t th;
	int done;

	atomic_store(&sc->closing, 1);	/* waits end; workers are ended */
	pthread_mutex_init(&st.mu, NULL);
	serve_cond_init(&st.cv);
	if (pthread_create(&th, NULL, stop_main, &st)) {
		stop_main(&st);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += STOP_S;
	pthread_mutex_lock(&st.mu);
	while (!st.done && pthread_cond_timedwait(&st.cv, &st.mu, &ts) != ETIMEDOUT)
		;
	done = st.done;
	pthread_mutex_unlock(&st.mu);
	if (done)
		pthread_join(th, NULL);
	return !done;
}

static int serve(struct serve_cfg *cfg)
{
	struct serve_ctx sc = { .cfg = cfg };
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[16];	/* connection threads keep glibc's 8 MiB stacks: a
					 * control or report child runs the library on one */
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	sigset_t stop, old;
	char url[128];
	int sig, k = 0;

	/* Before any thread exists, so that all of them inherit it: the
	 * termination signals are taken by sigwait below, SIGPIPE by nobody. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &stop, &old);

	targets_init(&sc);
	slots_init(&sc.attach_slots, cfg->max_attaches);
	slots_init(&sc.report_slots, 2);
	slots_init(&sc.probe_slots, 4);
	slots_init(&sc.census_slots, CENSUS_MAX);
	pthread_mutex_init(&sc.fmu, NULL);
	pthread_cond_init(&sc.fcv, NULL);
	pthread_mutex_init(&sc.auth.mu, NULL);
	pthread_cond_init(&sc.auth.cv, NULL);

	if (cfg->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cfg->web.cert_pem)
		flags |= MHD_USE_TLS;
	/* First, or libmicrohttpd logs the options before it by itself. */
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, &sc };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &cfg->addr };
	/* Per client, not per address (127.0.0.2 and .3 are one local user): conns.c. */
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, CONN_MAX, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEM, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, CONN_IDLE_S, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, &sc };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)conns_notify, &sc };
	if (cfg->web.cert_pem) {
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, cfg->web.cert_pem };
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->web.key_pem };
	}
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	/* The first scan before the first request, so /metrics starts complete. */
	targets_scan(&sc);
	conns_start(&sc);
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &sc, MHD_OPTION_ARRAY, opts,
			     MHD_OPTION_END);
	if (!d) {
		conns_stop(&sc);
		fprintf(stderr, "jemattach: serve: cannot listen on %s (in use, no such address, "
			"or a bad TLS certificate or key)\n", cfg->listen);
		targets_fini(&sc);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 3;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	url_of(cfg, di ? di->port : 0, url, sizeof(url));
	targets_start(&sc);
	if (cfg->web.mixed_costs)
		fprintf(stderr, "jemattach: serve: warning: the users' bcrypt hashes differ in cost: "
			"how long a check takes tells a user of a lower cost from an unknown name "
			"(give them all one cost)\n");
	fprintf(stderr, "jemattach: serving %s (%s); %s\n", url,
		cfg->nsel ? "the processes --target chooses" : "every jemalloc process",
		cfg->web.nusers ? "basic auth" : "no authentication");

	do {
		while (sigwait(&stop, &sig))
			;
	} while (sig == SIGPIPE);
	fprintf(stderr, "jemattach: serve: stopping (signal %d)\n", sig);
	if (stop_within(&sc, d)) {
		/* A thread still waits (for a worker that does not end): the
		 * process's end ends it; workers get SIGKILL (PR_SET_PDEATHSIG). */
		fprintf(stderr, "jemattach: serve: some work did not end within %d s: left "
			"behind (%u workers stuck in the kernel)\n", STOP_S, child_reap());
		_exit(0);
	}
	targets_fini(&sc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}
