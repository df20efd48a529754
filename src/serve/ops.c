/* ops.c -- the operations a child runs on a target, and how the server asks for them.
 *
 * Each opens its own session (jemalloc is found again: with the cache
 * directory that is a few file reads) and leaves the target as found; every
 * attaching one reports how long the thread was held (a census: how long
 * every thread was stopped).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "serve/serve.h"

/* Largest payload taken from a child: a heap profile of a large server. */
#define OP_MAX_BYTES (256u << 20)

struct buf {
	char *p;
	size_t len, cap;
	int err;
};

static int buf_add(void *arg, const char *s, size_t len)
{
	struct buf *b = arg;

	if (b->err)
		return b->err;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *p;

		while (cap < b->len + len + 1)
			cap *= 2;
		if (cap > OP_MAX_BYTES || !(p = realloc(b->p, cap)))
			return b->err = -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

/* @b as @r's payload when @rc is 0; else @b freed and @rc returned. */
static int buf_answer(struct buf *b, int rc, struct op_result *r)
{
	if (rc) {
		free(b->p);
		return rc;
	}
	r->data = b->p;
	r->len = b->len;
	return 0;
}

static void from_session(jma_session *s, int rc, struct op_result *r)
{
	r->rc = rc;
	r->kind = rc ? (int)jma_errkind(s) : JMA_OK;
	if (rc && r->kind == JMA_OK)
		r->kind = JMA_ERR_TARGET;
	if (rc)
		snprintf(r->msg, sizeof(r->msg), "%s", jma_errmsg(s));
}

static int get_bool(jma_session *s, const char *name)
{
	struct jma_value v;
	int b;

	if (jma_get(s, name, &v))
		return -1;
	b = v.type == JMA_T_BOOL ? v.b : -1;
	jma_value_clear(&v);
	return b;
}

/* stats.*, version and profiling state in one attachment. */
static int sample(jma_session *s, const struct op_arg *a, struct op_result *r)
{
	struct op_sample os = { 0 };
	struct jma_value v;
	struct buf b = { 0 };
	int own, rc = jma_hold_begin(s, &own);

	if (rc)
		return rc;
	r->attached = 1;
	/* Each read is a call the target's thread waits through: what cannot
	 * change is read once per process. */
	if (a->fixed) {
		memcpy(os.version, a->fixed->version, sizeof(os.version));
		os.config_prof = a->fixed->config_prof;
		os.opt_prof = a->fixed->opt_prof;
	} else {
		if (jma_get(s, "version", &v) == 0) {
			snprintf(os.version, sizeof(os.version), "%s", v.str ? v.str : "");
			jma_value_clear(&v);
		}
		os.config_prof = get_bool(s, "config.prof");
		os.opt_prof = os.config_prof == 1 ? get_bool(s, "opt.prof") : 0;
	}
	os.prof_active = os.opt_prof == 1 ? get_bool(s, "prof.active") : 0;
	rc = jma_sample(s, a->sample_flags, 0, &os.smp);
	rc = jma_hold_end(s, own, rc);
	if (rc) {
		jma_sample_clear(&os.smp);
		return rc;
	}
	buf_add(&b, (const char *)&os, sizeof(os));
	if (os.smp.narenas)
		buf_add(&b, (const char *)os.smp.arenas, os.smp.narenas * sizeof(*os.smp.arenas));
	jma_sample_clear(&os.smp);
	return buf_answer(&b, b.err, r);
}

static int probe(jma_session *s, struct op_result *r)
{
	struct jma_target_info ti = { .sz = sizeof(ti) };
	struct op_probe p = { 0 };
	int rc = jma_target_info(s, &ti);

	if (rc)
		return rc;
	snprintf(p.module, sizeof(p.module), "%s", ti.module ? ti.module : "");
	snprintf(p.prefix, sizeof(p.prefix), "%s", ti.prefix ? ti.prefix : "");
	p.is_static = ti.is_static;
	if (!(r->data = malloc(sizeof(p))))
		return -ENOMEM;
	memcpy(r->data, &p, sizeof(p));
	r->len = sizeof(p);
	return 0;
}

/* The dump and prof.active in one attachment: its hold is what the budget
 * is charged (jma_held_ns is the last attachment's; a read of prof.active
 * attached apart was charged a millisecond for a dump of seconds). */
static int dump(jma_session *s, struct op_result *r)
{
	int own, rc = jma_hold_begin(s, &own);

	if (rc)
		return rc;
	r->attached = 1;
	rc = jma_prof_dump(s, &r->data, &r->len);
	/* What an empty dump then says (report()). */
	if (!rc && get_bool(s, "prof.active") == 0)
		snprintf(r->msg, sizeof(r->msg), "prof.active is false: jemalloc samples nothing until "
			 "it is set (POST /prof?pid=N&action=on with --allow-control, or jemattach PID "
			 "prof on)");
	return jma_hold_end(s, own, rc);
}

static int stats(jma_session *s, struct op_result *r)
{
	struct buf b = { 0 };
	int rc;

	r->attached = 1;
	rc = jma_stats_print(s, "J", buf_add, &b);
	return buf_answer(&b, rc ? rc : b.err, r);
}

/* Every live block, sent back as a census snapshot (tables, no addresses);
 * held_ns is how long the census stopped the threads. */
static int census(jma_session *s, const struct op_arg *a, struct op_result *r)
{
	struct jma_census_opts o = { .sz = sizeof(o), .flags = a->census_flags };
	struct jma_census_meta m = { .pid = a->pid, .exec_mark = jma_exec_mark(a->pid),
				     .time = jma_clock_s(CLOCK_REALTIME), .flags = a->census_flags };
	struct buf b = { 0 };
	struct jma_census *c;
	int rc = jma_census_run(s, &o, &c);

	if (rc)
		return rc;
	r->attached = 1;
	r->held_ns = c->stop_ns;
	rc = jma_census_save(c, &m, 0, buf_add, &b);
	jma_census_free(c);
	return buf_answer(&b, rc, r);
}

static int control(jma_session *s, enum op_kind k, struct op_result *r)
{
	bool was = false;
	int rc = jma_prof_check(s);

	r->attached = 1;
	if (rc)
		return rc;
	if (k == OP_PROF_RESET) {
		rc = jma_prof_reset(s, NULL);
		if (!rc)
			snprintf(r->msg, sizeof(r->msg), "prof.reset: samples cleared");
		return rc;
	}
	rc = jma_prof_set_active(s, k == OP_PROF_ON, &was);
	if (!rc)
		snprintf(r->msg, sizeof(r->msg), "prof.active: %s -> %s", was ? "true" : "false",
			 k == OP_PROF_ON ? "true" : "false");
	return rc;
}

/* A heap profile by the sampler's window (src/sampler): uprobes, nothing
 * stopped; a cancellation (the server stops) ends the window with the
 * samples so far.  The note says how the profile was made. */
static int sampled(jma_session *s, const struct op_arg *a, struct op_result *r)
{
	static const char *const ends[] = {
		[JMA_SAMPLER_TIME] = "", [JMA_SAMPLER_STOPPED] = "; ended early: the server stops",
		[JMA_SAMPLER_OVERHEAD] = "; ended early: past --max-overhead with nothing left to give up",
		[JMA_SAMPLER_EXITED] = "; the process exited",
		[JMA_SAMPLER_EXECED] = "; the process executed another program",
	};
	struct jma_sampler_opts o = { .sz = sizeof(o), .seconds = a->seconds, .alloc_only = a->alloc_only,
				      .max_overhead = a->max_overhead, .stop = &child_cancelled };
	struct jma_sampler_result res = { .sz = sizeof(res) };
	int rc;

	rc = jma_sampler_run(s, &o, &res);
	if (rc)
		return rc;
	snprintf(r->msg, sizeof(r->msg), "sampled by uprobes (the process runs without heap profiling): "
		 "%.1f s of a %g s window, %llu samples (%llu lost)%s%s", res.seconds, a->seconds,
		 (unsigned long long)res.samples, (unsigned long long)res.lost, ends[res.end],
		 res.bursts ? "; in bursts, within --max-overhead" : "");
	r->data = res.profile;
	r->len = res.len;
	res.profile = NULL;
	jma_sampler_result_free(&res);
	return 0;
}

/* A heap profile (minus a base) named from the live process and reported;
 * no attach. */
static void report(const struct op_arg *a, struct op_result *r)
{
	struct jma_heap_symopts so = { .sz = sizeof(so), .pid = a->pid };
	struct jma_heap_report_opts ro = { .sz = sizeof(ro), .format = a->format, .sample = a->sample, .top = a->top };
	jma_heap *h = NULL, *base = NULL;
	struct buf b = { 0 };
	int rc;

	rc = jma_heap_parse(a->heap, a->heap_len, "profile", &h, r->msg, sizeof(r->msg));
	if (!rc && a->base)
		rc = jma_heap_parse(a->base, a->base_len, "base", &base, r->msg, sizeof(r->msg));
	if (!rc && a->need_alloc) {
		struct jma_heap_info hi;

		jma_heap_info(h, &hi);
		if (!hi.has_alloc) {
			rc = -ENOTSUP;
			snprintf(r->msg, sizeof(r->msg), "the profile has no allocation counts since "
				 "start: they need opt.prof_accum (restart with "
				 "MALLOC_CONF=prof:true,prof_accum:true)");
		}
	}
	if (!rc && base && (rc = jma_heap_subtract(h, base)))
		snprintf(r->msg, sizeof(r->msg), "%s", jma_heap_errmsg(h));
	if (!rc && (rc = jma_heap_symbolize(h, &so)))
		snprintf(r->msg, sizeof(r->msg), "%s", jma_heap_errmsg(h));
	if (!rc) {
		struct jma_heap_info hi;
		int alloc = a->sample == JMA_HEAP_ALLOC_SPACE || a->sample == JMA_HEAP_ALLOC_OBJECTS;

		/* Empty for want of samples: why, in the profile and the reply. */
		jma_heap_info(h, &hi);
		if (!hi.is_diff && !(alloc ? hi.samples_alloc : hi.samples)) {
			snprintf(r->msg, sizeof(r->msg), "the profile is empty: %s", a->why && a->why[0] ?
				 a->why : "no allocation it sampled is live");
			ro.comment = r->msg;
		}
	}
	if (!rc && (rc = jma_heap_report(h, &ro, buf_add, &b)))
		snprintf(r->msg, sizeof(r->msg), "%s", b.err ? "the report is too large"
			 : jma_heap_errmsg(h));
	jma_heap_free(base);
	jma_heap_free(h);
	r->rc = rc;
	r->kind = rc == -ENOTSUP ? JMA_ERR_MISSING : rc ? JMA_ERR_TARGET : JMA_OK;
	if (rc) {
		free(b.p);
		return;
	}
	r->data = b.p;
	r->len = b.len;
}

/* The child's log: straight to fd 2.  Not the caller's callback: it writes
 * through stdio, whose stream lock another of the server's threads may have
 * held at the fork -- and a child stuck on it could be holding a target's thread. */
static void raw_log(void *arg, int level, const char *msg)
{
	static const char *const lv[] = { "error", "warning", "info", "debug" };
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), "jemattach: serve: process %d: %s: %s\n",
		     (int)(intptr_t)arg, lv[level & 3], msg);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

/* --- an operation's argument, as bytes to its child ------------------------ */

/* The op_arg and its options flat, then what their pointers point to, in
 * this order; a length of UINT64_MAX is a NULL pointer. */
enum { W_HEAP, W_BASE, W_WHY, W_PREFIX, W_MODULE, W_CACHE_DIR, W_N };
struct op_wire {
	struct op_arg a;
	struct jma_options opt;
	struct op_sample fixed;
	uint64_t len[W_N];
};

/* Piece @i of @w: @n bytes at @p (NULL: none), as @iov[i + 1]. */
static void piece(struct op_wire *w, struct iovec *iov, int i, const void *p, size_t n)
{
	w->len[i] = p ? n : UINT64_MAX;
	iov[i + 1] = (struct iovec){ (void *)p, p ? n : 0 };
}

static size_t str_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* @w (filled here) and what @a's pointers point to, as @iov[W_N + 1]
 * for child_run: nothing copied (a profile to report may be 256 MiB). */
static void op_pack(const struct op_arg *a, struct op_wire *w, struct iovec *iov)
{
	static const struct jma_options none;
	const struct jma_options *opt = a->opt ? a->opt : &none;

	memset(w, 0, sizeof(*w));
	w->a = *a;
	w->opt = *opt;
	if (a->fixed)
		w->fixed = *a->fixed;
	iov[0] = (struct iovec){ w, sizeof(*w) };
	piece(w, iov, W_HEAP, a->heap, a->heap_len);
	piece(w, iov, W_BASE, a->base, a->base_len);
	piece(w, iov, W_WHY, a->why, str_size(a->why));
	piece(w, iov, W_PREFIX, opt->prefix, str_size(opt->prefix));
	piece(w, iov, W_MODULE, opt->module, str_size(opt->module));
	piece(w, iov, W_CACHE_DIR, opt->cache_dir, str_size(opt->cache_dir));
}

/* In the child: @w's pointers set into the bytes after it; -EINVAL when
 * they do not add up. */
static int op_unpack(struct op_wire *w, size_t len)
{
	const char *at = (const char *)(w + 1), *end = (const char *)w + len;
	const void *p[W_N];

	if (len < sizeof(*w))
		return -EINVAL;
	for (int i = 0; i < W_N; i++) {
		p[i] = NULL;
		if (w->len[i] == UINT64_MAX)
			continue;
		if (w->len[i] > (uint64_t)(end - at))
			return -EINVAL;
		p[i] = at;
		at += w->len[i];
	}
	w->a.heap = p[W_HEAP];
	w->a.base = p[W_BASE];
	w->a.why = p[W_WHY];
	w->opt.prefix = p[W_PREFIX];
	w->opt.module = p[W_MODULE];
	w->opt.cache_dir = p[W_CACHE_DIR];
	w->a.opt = &w->opt;
	if (w->a.fixed)
		w->a.fixed = &w->fixed;
	return 0;
}

/* The child's side. */
static void op_child(const void *arg, size_t len, struct op_result *r)
{
	struct op_wire *w = (struct op_wire *)arg;
	const struct op_arg *a = &w->a;
	struct jma_options opt;
	jma_session *s;
	int rc;

	if (op_unpack(w, len)) {
		r->rc = -EINVAL;
		r->kind = JMA_ERR_TARGET;
		snprintf(r->msg, sizeof(r->msg), "the worker's argument is cut short");
		return;
	}
	if (a->kind == OP_REPORT) {
		report(a, r);
		return;
	}
	opt = *a->opt;
	if (opt.log) {
		opt.log = raw_log;
		opt.log_arg = (void *)(intptr_t)a->pid;
	}
	s = jma_new(&opt);
	if (!s) {
		r->rc = -ENOMEM;
		r->kind = JMA_ERR_TARGET;
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return;
	}
	rc = jma_open(s, a->pid);
	if (!rc) {
		switch (a->kind) {
		case OP_PROBE:
			rc = probe(s, r);
			break;
		case OP_SAMPLE:
			rc = sample(s, a, r);
			break;
		case OP_DUMP:
			rc = dump(s, r);
			break;
		case OP_STATS:
			rc = stats(s, r);
			break;
		case OP_SAMPLER:
			rc = sampled(s, a, r);
			break;
		case OP_CENSUS:
			rc = census(s, a, r);
			break;
		default:
			rc = control(s, a->kind, r);
			break;
		}
	}
	/* A census says itself how long it stopped the threads. */
	if (r->attached && !r->held_ns)
		r->held_ns = jma_held_ns(s);
	from_session(s, rc, r);
	if (rc == -ENOMEM && !r->msg[0])
		snprintf(r->msg, sizeof(r->msg), "out of memory");
	jma_free(s);
}

int op_run(struct serve_ctx *sc, const struct op_arg *a, struct op_result *r)
{
	/* The library bounds each call by opt.timeout; a dump or stats run
	 * makes a few.  Beyond this the child is stuck outside any call. */
	const struct serve_cfg *cfg = sc->cfg;
	struct child_opts o = { .hard_limit = 4 * (cfg->opt.timeout > 0 ? cfg->opt.timeout : 10) + 30,
				.max = OP_MAX_BYTES, .cancellable = a->kind == OP_SAMPLER,
				.stop = &sc->closing, .target = a->pid, .owner = a->uid };
	char why[sizeof(r->msg)];
	struct iovec iov[W_N + 1];
	struct op_wire w;

	if (a->kind == OP_SAMPLER)
		o.hard_limit += a->seconds;
	if (child_refused(a->pid, a->uid, why, sizeof(why))) {
		memset(r, 0, sizeof(*r));
		r->rc = -EBUSY;
		r->kind = JMA_ERR_UNSAFE;
		r->started = jma_clock_s(CLOCK_MONOTONIC);
		memcpy(r->msg, why, sizeof(r->msg));
		return r->rc;
	}
	op_pack(a, &w, iov);
	return child_run(op_child, iov, W_N + 1, &o, r);
}

int op_sample_decode(const struct op_result *r, struct op_sample *out)
{
	if (r->rc || !r->data || r->len < sizeof(*out))
		return -EINVAL;
	memcpy(out, r->data, sizeof(*out));
	if ((r->len - sizeof(*out)) / sizeof(struct jma_arena_sample) != out->smp.narenas ||
	    (r->len - sizeof(*out)) % sizeof(struct jma_arena_sample))
		return -EINVAL;
	out->smp.arenas = out->smp.narenas ? (struct jma_arena_sample *)(r->data + sizeof(*out))
					   : NULL;
	return 0;
}

const char *op_kind_reason(int kind, int rc)
{
	if (rc == -ETIMEDOUT)
		return "timeout";
	switch (kind) {
	case OP_ERR_BUDGET:
		return "budget";
	case JMA_OK:
		return "";
	case JMA_ERR_USAGE:
		return "usage";
	case JMA_ERR_ATTACH:
		return "attach";
	case JMA_ERR_MISSING:
		return "missing";
	case JMA_ERR_UNSAFE:
		return "unsafe";
	default:
		return "target";
	}
}
