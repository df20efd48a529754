/* http.c -- the libmicrohttpd daemon: limits, authentication, routing, parameters.
 *
 * One thread per connection (libmicrohttpd's own), at most CONN_MAX
 * connections (PER_IP_MAX from one address), headers within CONN_MEM bytes,
 * a request body (no route takes one: it is dropped) within BODY_MAX, else
 * the connection is closed;
 * every query parameter is checked against what its route takes: unknown,
 * repeated or malformed ones are a 400 naming them.  A handler waits for
 * targets at most --timeout (or Prometheus's X-Prometheus-Scrape-Timeout-Seconds
 * less a margin); the work itself runs in children (serve.h).
 */
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "serve/serve.h"

#define CONN_MAX	128
#define PER_IP_MAX	64
#define CONN_MEM	(32 * 1024)
#define CONN_IDLE_S	30
#define BODY_MAX	4096
#define NPARAM		6
#define PARAM_LEN	64
#define SECONDS_MAX	600

struct req {
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
	pprof_heap(sc, t, allocs, (int)debug, (unsigned)secs, r);
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
	a.kind = kinds[i];
	a.pid = t->pid;
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

static enum MHD_Result send_reply(struct MHD_Connection *c, struct reply *r, const char *allow,
				  int auth_fail)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char hdr[300];

	if (!r->body)
		reply_error(r, r->status ? r->status : MHD_HTTP_INTERNAL_SERVER_ERROR, "no answer");
	resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
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

static int authorized(struct serve_ctx *sc, struct MHD_Connection *c)
{
	char *pass = NULL, *user;
	int ok;

	if (!sc->cfg->web.nusers)
		return 1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = user && pass && webcfg_check(sc, user, pass);
	if (pass)
		explicit_bzero(pass, strlen(pass));
	MHD_free(user);
	MHD_free(pass);
	return ok;
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
		q = calloc(1, sizeof(*q));
		if (!q)
			return MHD_NO;
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
	if (!authorized(sc, c)) {
		atomic_fetch_add(&sc->rejected, 1);
		reply_error(&r, MHD_HTTP_UNAUTHORIZED, "authentication required");
		return send_reply(c, &r, NULL, 1);
	}
	for (size_t i = 0; i < sizeof(routes) / sizeof(*routes); i++)
		if (!strcmp(url, routes[i].path))
			rt = &routes[i];
	if (!rt) {
		reply_error(&r, MHD_HTTP_NOT_FOUND, "no such path (see /)");
		return send_reply(c, &r, NULL, 0);
	}
	if (strcmp(rt->method, "GET") ? strcmp(method, rt->method) : !is_get) {
		reply_error(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "%s takes %s only", rt->path, rt->method);
		return send_reply(c, &r, strcmp(rt->method, "GET") ? rt->method : "GET, HEAD", 0);
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, q);
	if (!q->bad)
		params_allowed(q, rt->params);
	if (q->bad) {
		atomic_fetch_add(&sc->rejected, 1);
		reply_error(&r, MHD_HTTP_BAD_REQUEST, "%s", q->why);
		return send_reply(c, &r, NULL, 0);
	}
	rt->run(sc, c, q, &r);
	return send_reply(c, &r, NULL, 0);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode code)
{
	(void)cls, (void)c, (void)code;
	free(*con_cls);
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
	sem_init_n(&sc.attach_sem, cfg->max_attaches);
	sem_init_n(&sc.report_sem, 2);
	sem_init_n(&sc.census_sem, CENSUS_MAX);
	pthread_mutex_init(&sc.fmu, NULL);
	pthread_cond_init(&sc.fcv, NULL);
	pthread_mutex_init(&sc.auth.mu, NULL);

	if (cfg->addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (cfg->web.cert_pem)
		flags |= MHD_USE_TLS;
	/* First, or libmicrohttpd logs the options before it by itself. */
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, &sc };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &cfg->addr };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, CONN_MAX, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, PER_IP_MAX, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEM, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, CONN_IDLE_S, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL };
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL };
	if (cfg->web.cert_pem) {
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, cfg->web.cert_pem };
		opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->web.key_pem };
	}
	opts[k++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	/* The first scan before the first request, so /metrics starts complete. */
	targets_scan(&sc);
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &sc, MHD_OPTION_ARRAY, opts,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "jemattach: serve: cannot listen on %s (in use, no such address, "
			"or a bad TLS certificate or key)\n", cfg->listen);
		targets_fini(&sc);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 3;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	url_of(cfg, di ? di->port : 0, url, sizeof(url));
	targets_start(&sc);
	fprintf(stderr, "jemattach: serving %s (%s); %s\n", url,
		cfg->nsel ? "the processes --target chooses" : "every jemalloc process",
		cfg->web.nusers ? "basic auth" : "no authentication");

	do {
		while (sigwait(&stop, &sig))
			;
	} while (sig == SIGPIPE);
	fprintf(stderr, "jemattach: serve: stopping (signal %d)\n", sig);
	atomic_store(&sc.closing, 1);	/* sampler windows end now, with what they have */
	MHD_stop_daemon(d);
	targets_stop(&sc);
	/* Children at work finish by themselves, each target restored. */
	pthread_mutex_lock(&sc.fmu);
	while (sc.inflight)
		pthread_cond_wait(&sc.fcv, &sc.fmu);
	pthread_mutex_unlock(&sc.fmu);
	targets_fini(&sc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}
