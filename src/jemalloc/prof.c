/* prof.c -- heap-profiling control: availability, prof.active, dumps, reset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/session.h"

/* Profiles of large processes run to tens of MB; more than this is not a
 * heap profile jemalloc wrote. */
#define DUMP_MAX (1024UL * 1024 * 1024)
#define DUMP_FILE "dump.heap"

static int get_bool(jma_session *s, const char *name, bool *out)
{
	struct jma_value v;
	int err = jma_get(s, name, &v);

	if (!err)
		*out = v.b;
	return err;
}

int jma_prof_check(jma_session *s)
{
	const struct jma_copy *c = s->je;
	bool on = false;
	int err = get_bool(s, "config.prof", &on);

	/* ENOENT from the target: a jemalloc without that name, so without prof. */
	if (err && !(err == -ENOENT && s->kind == JMA_ERR_TARGET))
		return err;
	if (err || !on)
		return sess_fail_hint(s, JMA_HINT_SAMPLE, JMA_ERR_MISSING, -ENOTSUP, "jemalloc in %s "
				     "was built without --enable-prof: heap profiling is not available",
				     c->path);
	err = get_bool(s, "opt.prof", &on);
	if (err && !(err == -ENOENT && s->kind == JMA_ERR_TARGET))
		return err;
	if (err || !on)
		return sess_fail_hint(s, JMA_HINT_SAMPLE, JMA_ERR_MISSING, -ENOTSUP, "opt.prof is false; "
				     "profiling can only be enabled at start: restart with "
				     "%s=prof:true,prof_active:false", c->conf_env);
	return 0;
}

/* jemalloc 5.2.x: a thread that allocated while prof.active was false keeps a
 * sampling state that never samples again once it is true (upstream issues
 * 1605 and 2231, fixed in 5.3.0).  Resetting that per-thread state would need
 * each thread's own tsd, so say so instead of pretending. */
static void warn_stale_threads(jma_session *s)
{
	uint32_t v = jma_jemalloc_version(s);

	if (v >= JMA_JEVERSION(5, 2, 0) && v < JMA_JEVERSION(5, 3, 0))
		sess_logf(s, JMA_LOG_WARN, "jemalloc %u.%u.%u does not sample threads that allocated "
			 "while prof.active was false (upstream issues 1605, 2231; fixed in 5.3.0): "
			 "their sites will be missing; start with prof_active:true to profile them",
			 v >> 16, (v >> 8) & 0xff, v & 0xff);
}

int jma_prof_set_active(jma_session *s, bool on, bool *was)
{
	struct jma_value in = { .type = JMA_T_BOOL, .b = on }, old;
	int here, err = jma_hold_begin(s, &here);

	if (!err)
		err = jma_prof_check(s);
	if (!err)
		err = jma_set(s, "prof.active", &in, &old);
	if (!err && was)
		*was = old.b;
	if (!err && on)
		warn_stale_threads(s);
	return jma_hold_end(s, here, err);
}

/* The directory part of opt.prof_prefix ("/var/tmp/jeprof" -> "/var/tmp").
 * Without it (a jemalloc without the name) the dump goes to /tmp's kind; a
 * read that ended the attachment (a Ctrl-C, a timeout) is the dump's error. */
static int prefix_dir(jma_session *s, char *out, size_t len)
{
	struct jma_value v;
	char *slash;
	int err = jma_get(s, "opt.prof_prefix", &v);

	out[0] = '\0';
	if (err || !v.str)
		return s->attached ? 0 : err;
	slash = strrchr(v.str, '/');
	if (v.str[0] == '/' && slash) {
		*slash = '\0';
		snprintf(out, len, "%s", v.str[0] ? v.str : "/");
	}
	jma_value_clear(&v);
	return 0;
}

static int write_dump(jma_session *s, const char *path, void *arg)
{
	struct jma_value v = { .type = JMA_T_STRING, .str = (char *)path };

	(void)arg;
	return jma_set(s, "prof.dump", &v, NULL);
}

/* Where the file goes and how it is read back is the backend's (dump in
 * core/backend.h): the live engine has the target write into a private
 * directory of its own, beside opt.prof_prefix when it can. */
int jma_prof_dump(jma_session *s, char **buf, size_t *len)
{
	char pref[512];
	int here, err;

	*buf = NULL;
	*len = 0;
	err = jma_hold_begin(s, &here);
	if (err)
		return err;
	err = jma_prof_check(s);
	if (!err)
		err = prefix_dir(s, pref, sizeof(pref));
	if (!err)
		err = sess_dump(s, pref[0] ? pref : NULL, DUMP_FILE, DUMP_MAX, write_dump, NULL,
			       buf, len);
	return jma_hold_end(s, here, err);
}

int jma_prof_reset(jma_session *s, const size_t *lg_sample)
{
	int here, err = jma_hold_begin(s, &here);

	if (!err)
		err = jma_prof_check(s);
	if (!err)
		err = jma_mallctl(s, "prof.reset", NULL, NULL, lg_sample,
				  lg_sample ? sizeof(*lg_sample) : 0);
	return jma_hold_end(s, here, err);
}
