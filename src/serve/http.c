/* http.c -- a request's way through libmicrohttpd: its parameters checked, who may
 * do what, routing (routes.c), the reply sent.
 *
 * A request body (no route takes one: it is dropped) within BODY_MAX, else
 * the connection is closed; every query parameter is checked against what
 * its route takes: unknown, repeated or malformed ones are a 400 naming them.
 * The connections' limits and deadlines are conns.c's, the daemon's
 * server.c's.
 *
 * What a client may start.  Anyone who reaches the port: answers that are
 * kept and shared (/metrics, /stats, /debug/census, a dump of a process
 * started with prof:true), each process within its budget (--max-duty,
 * cache.c).  With --allow-sampler or authentication: sampler windows
 * (pprof.c).  With --allow-control, and authentication or a local client
 * whose user owns the process (or is root): POST /prof (routes.c).  A local
 * user could otherwise switch profiling in every other user's processes.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

#define BODY_MAX	4096

/* --- parameters ---------------------------------------------------------- */

static enum MHD_Result collect(void *arg, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct req *q = arg;

	(void)kind;
	if (q->bad)
		return MHD_NO;
	if (q->np == REQ_PARAMS) {
		q->bad = 1;
		snprintf(q->why, sizeof(q->why), "too many query parameters (at most %d)", REQ_PARAMS);
		return MHD_NO;
	}
	if (strlen(key) >= sizeof(q->key[0]) || (value && strlen(value) >= REQ_PARAM_LEN)) {
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

enum MHD_Result http_handle(void *cls, struct MHD_Connection *c, const char *url,
			   const char *method, const char *version, const char *upload,
			   size_t *upload_size, void **con_cls)
{
	struct serve_ctx *sc = cls;
	struct req *q = *con_cls;
	struct reply r = { 0 };
	const struct route *rt;
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
	if (!(rt = route_find(url))) {
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
void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode code)
{
	struct req *q = *con_cls;

	(void)c, (void)code;
	if (q)
		conns_phase(cls, q->conn, CONN_RECEIVING);
	free(q);
	*con_cls = NULL;
}
