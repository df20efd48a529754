/* mallctl.c -- mallctl run inside the target, typed reads and writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jemalloc/ctltable.h"
#include "core/session.h"

/* Longest string value we copy out of the target. */
#define STR_MAX 4096
/* Largest raw old value: enough for any scalar and small arrays. */
#define OLD_MAX 4096

const char *jma_mallctl_strerror(const char *name, int err)
{
	int prof = !strncmp(name, "prof.", 5) || !strncmp(name, "thread.prof.", 12);

	switch (err < 0 ? -err : err) {
	case ENOENT:
		return prof ? "ENOENT: profiling is not available (jemalloc built without "
			      "--enable-prof, or opt.prof is false), or no such name"
			    : "ENOENT: no such mallctl name in this jemalloc (unknown name, or not "
			      "supported by this version or build)";
	case EINVAL:
		return "EINVAL: invalid value, or value size does not match the name's type";
	case EPERM:
		return "EPERM: not allowed: the name is read-only, write-only, or an action";
	case EAGAIN:
		return "EAGAIN: jemalloc could not allocate memory for the operation";
	case EFAULT:
		return !strcmp(name, "prof.dump")
			       ? "EFAULT: the dump failed (file could not be created or written, "
				 "or profiling is off in jemalloc <= 5.2)"
			       : "EFAULT: the operation failed inside jemalloc";
	case EBUSY:
		return "EBUSY: the resource is busy";
	case EFBIG:
		return "EFBIG: value too large";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 255 || name[0] == '.' || name[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '.'))
			return 0;
	return 1;
}

#define VER_FMT "%u.%u.%u"
#define VER_ARGS(v) (v) >> 16, ((v) >> 8) & 0xff, (v) & 0xff

/* ENOENT for @name: say when the target's version is why (kind
 * JMA_ERR_MISSING), else the usual words. */
static int not_in_version(jma_session *s, const char *name)
{
	uint32_t since, until, v;

	if (strcmp(name, "version") && ctl_span_find(name, &since, &until) &&
	    (v = jma_jemalloc_version(s)) != 0) {
		if (since && v < since)
			return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "%s is not in jemalloc " VER_FMT
					" (added in " VER_FMT ")", name, VER_ARGS(v), VER_ARGS(since));
		if (until && v >= until)
			return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "%s is not in jemalloc " VER_FMT
					" (removed in " VER_FMT ")", name, VER_ARGS(v), VER_ARGS(until));
	}
	return sess_fail(s, JMA_ERR_TARGET, -ENOENT, "mallctl(\"%s\"): %s", name,
			jma_mallctl_strerror(name, ENOENT));
}

/* mallctl(name, old, oldlen, new, newlen) in the attached thread.  @rnew is
 * a remote address already holding the new value (or 0).  On return *oldlenp
 * is what jemalloc set, and up to that many bytes are copied to @oldp, also on
 * EINVAL (the size-probe case).  Returns 0, or mallctl's errno negated with
 * kind JMA_ERR_TARGET, or an engine error. */
static int remote_mallctl(jma_session *s, const char *name, void *oldp, size_t *oldlenp,
			  uint64_t rnew, size_t newlen)
{
	struct jma_bcall c = { .fn = s->je->fn_mallctl, .nargs = 5 };
	uint64_t rname, rold = 0, roldlen = 0, ret;
	size_t cap = oldlenp ? *oldlenp : 0, got;
	int err;

	if (!valid_name(name))
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "invalid mallctl name \"%.64s\"", name);
	rname = sess_scratch(s, name, strlen(name) + 1, 1);
	if (!rname)
		return -ENOSPC;
	if (oldp) {
		if (cap > OLD_MAX)
			return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "old value buffer too large");
		rold = sess_scratch(s, NULL, cap, 16);
		roldlen = rold ? sess_scratch(s, &cap, sizeof(cap), 8) : 0;
		if (!roldlen)
			return -ENOSPC;
	}
	c.args[0] = rname;
	c.args[1] = rold;
	c.args[2] = roldlen;
	c.args[3] = rnew;
	c.args[4] = newlen;
	err = sess_call(s, &c, &ret);
	if (err)
		return err;
	if (oldp) {
		err = sess_read(s, roldlen, &got, sizeof(got));
		if (!err) {
			*oldlenp = got < cap ? got : cap;
			err = sess_read(s, rold, oldp, *oldlenp);
		}
		if (err)
			return sess_fail(s, JMA_ERR_TARGET, err, "reading the result of mallctl(\"%s\"): %s",
					name, strerror(-err));
	}
	if ((int)ret == ENOENT)
		return not_in_version(s, name);
	if ((int)ret)
		return sess_fail(s, JMA_ERR_TARGET, (int)ret, "mallctl(\"%s\"): %s", name,
				jma_mallctl_strerror(name, (int)ret));
	return 0;
}

int jma_mallctl(jma_session *s, const char *name, void *oldp, size_t *oldlenp, const void *newp,
		size_t newlen)
{
	int here, err = jma_hold_begin(s, &here);
	uint64_t rnew = 0;

	if (err)
		return err;
	if (newp && !(rnew = sess_scratch(s, newp, newlen, 16)))
		err = -ENOSPC;
	if (!err)
		err = remote_mallctl(s, name, oldp, oldlenp, rnew, newp ? newlen : 0);
	return jma_hold_end(s, here, err);
}

int jma_refresh(jma_session *s)
{
	uint64_t one = 1;
	int err = jma_mallctl(s, "epoch", NULL, NULL, &one, sizeof(one));

	if (!err && s->attached)
		s->epoch_fresh = 1;
	return err;
}

static int read_typed(jma_session *s, const char *name, enum jma_type type, struct jma_value *out);

/* Does @addr point at a printable NUL-terminated string in the target? */
static int looks_like_string(jma_session *s, uint64_t addr)
{
	char *str;
	int trunc, ok = 0;

	if (addr < 4096 || sess_read_str(s, addr, 256, &str, &trunc))
		return 0;
	if (!trunc && str[0]) {
		ok = 1;
		for (const char *p = str; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				ok = 0;
	}
	free(str);
	return ok;
}

/* Probe an unknown, readable name by reading it with each scalar size.  On a
 * size mismatch every version fails with EINVAL and no side effect; 5.3 and
 * later also set *oldlenp to the real size, earlier ones leave it alone, so
 * only an exact size succeeds there. */
static int probe_size(jma_session *s, const char *name, unsigned char buf[8], size_t *size)
{
	static const size_t sizes[] = { 8, 4, 1 };
	int err = -EINVAL;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		size_t len = sizes[i];

		err = remote_mallctl(s, name, buf, &len, 0, 0);
		if (!err || (err == -EINVAL && len < sizes[i])) {
			*size = len;
			return 0;
		}
		if (err != -EINVAL || s->kind != JMA_ERR_TARGET)
			return err;
	}
	return sess_fail_hint(s, JMA_HINT_TYPE, JMA_ERR_TARGET, -ENOTSUP, "mallctl(\"%s\"): its value "
			     "is not a bool or a 4- or 8-byte number", name);
}

static int probe_type(jma_session *s, const char *name, enum jma_type *type)
{
	unsigned char buf[8];
	size_t len = 0;
	int err = probe_size(s, name, buf, &len);
	uint64_t v;

	if (err)
		return err;
	switch (len) {
	case 1: *type = JMA_T_BOOL; return 0;
	case 4: *type = JMA_T_UNSIGNED; return 0;
	case 8:
		memcpy(&v, buf, 8);
		*type = looks_like_string(s, v) ? JMA_T_STRING : JMA_T_U64;
		return 0;
	default:
		return sess_fail(s, JMA_ERR_TARGET, -ENOTSUP, "mallctl(\"%s\"): values of %zu bytes "
				"are not supported", name, len);
	}
}

uint32_t jma_jemalloc_version(jma_session *s)
{
	struct jma_value v;
	int here;

	if (s->jever || jma_hold_begin(s, &here))
		return s->jever;
	if (read_typed(s, "version", JMA_T_STRING, &v) == 0) {
		s->jever = jma_jeversion_parse(v.str);
		jma_value_clear(&v);
	}
	if (jma_hold_end(s, here, 0))
		return 0;
	return s->jever;
}

int jma_page_size(jma_session *s, uint64_t *page)
{
	size_t v, len = sizeof(v);
	int err = s->page ? 0 : jma_mallctl(s, "arenas.page", &v, &len, NULL, 0);

	if (!err && !s->page)
		s->page = len == sizeof(v) ? v : 0;
	if (!err && !s->page)
		err = sess_fail(s, JMA_ERR_TARGET, -EPROTO, "arenas.page had an unexpected size");
	*page = s->page;
	return err;
}

/* The table's answer for @name in the target's version; the version is read
 * from the target only for the few names whose type changed. */
static int lookup(jma_session *s, const char *name, enum jma_type *type, unsigned *access)
{
	return jma_ctl_lookup_v(name, ctl_is_versioned(name) ? jma_jemalloc_version(s) : 0, type,
				access);
}

int jma_ctl_type(jma_session *s, const char *name, enum jma_type *type, unsigned *access)
{
	int here, err;

	if (lookup(s, name, type, access) == 0)
		return 0;
	err = jma_hold_begin(s, &here);
	if (!err)
		err = probe_type(s, name, type);
	*access = JMA_ACC_R;
	return jma_hold_end(s, here, err);
}

static int read_typed(jma_session *s, const char *name, enum jma_type type, struct jma_value *out)
{
	unsigned char buf[16];
	size_t want = type == JMA_T_STRING ? sizeof(uint64_t) : jma_type_size(type), len = want;
	uint64_t p;
	int err = remote_mallctl(s, name, buf, &len, 0, 0);

	if (err)
		return err;
	if (len != want)
		return sess_fail(s, JMA_ERR_TARGET, -EINVAL, "mallctl(\"%s\"): got %zu bytes, expected %zu",
				name, len, want);
	if (type == JMA_T_SIZEP) {
		size_t z;

		memcpy(&p, buf, sizeof(p));
		err = sess_read(s, p, &z, sizeof(z));
		if (err)
			return sess_fail(s, JMA_ERR_TARGET, err, "mallctl(\"%s\"): reading the counter "
					"at 0x%llx: %s", name, (unsigned long long)p, strerror(-err));
		return jma_value_from_bytes(JMA_T_SIZE, &z, sizeof(z), out);
	}
	if (type == JMA_T_STRING) {
		int trunc;

		memcpy(&p, buf, sizeof(p));
		memset(out, 0, sizeof(*out));
		out->type = JMA_T_STRING;
		if (!p)
			return 0;
		err = sess_read_str(s, p, STR_MAX, &out->str, &trunc);
		if (err)
			return sess_fail(s, JMA_ERR_TARGET, err, "mallctl(\"%s\"): reading its string at "
					"0x%llx: %s", name, (unsigned long long)p, strerror(-err));
		return 0;
	}
	return jma_value_from_bytes(type, buf, len, out);
}

int jma_get(jma_session *s, const char *name, struct jma_value *out)
{
	return jma_get_as(s, name, JMA_T_UNKNOWN, out);
}

int jma_get_as(jma_session *s, const char *name, enum jma_type as, struct jma_value *out)
{
	enum jma_type type = as;
	unsigned access = JMA_ACC_R;
	int here, err;

	memset(out, 0, sizeof(*out));
	err = jma_hold_begin(s, &here);
	if (err)
		return err;
	if (!strncmp(name, "stats.", 6) && !s->epoch_fresh)
		err = jma_refresh(s);
	if (!err && as == JMA_T_UNKNOWN)
		err = jma_ctl_type(s, name, &type, &access);
	if (!err && (type == JMA_T_VOID || !(access & JMA_ACC_R)))
		err = sess_fail(s, JMA_ERR_TARGET, -EPERM, "mallctl(\"%s\"): not readable (%s)", name,
			       type == JMA_T_VOID ? "an action" : "write-only");
	if (!err)
		err = read_typed(s, name, type, out);
	return jma_hold_end(s, here, err);
}

/* Place @in in target memory: scalars as bytes, strings as a pointer to a
 * copy.  Returns the remote address of the value and its length. */
static int place_value(jma_session *s, const struct jma_value *in, uint64_t *addr, size_t *len)
{
	uint64_t p = 0;

	if (in->type == JMA_T_VOID) {
		*addr = 0;
		*len = 0;
		return 0;
	}
	if (in->type == JMA_T_STRING) {
		if (in->str && !(p = sess_scratch(s, in->str, strlen(in->str) + 1, 1)))
			return -ENOSPC;
		*addr = sess_scratch(s, &p, sizeof(p), 8);
		*len = sizeof(p);
	} else {
		*len = jma_type_size(in->type);
		*addr = sess_scratch(s, &in->b, *len, 16);
	}
	return *addr ? 0 : -ENOSPC;
}

/* 4.x refuses decay times unless it purges by decay (opt.purge "decay"). */
static int explain_decay_time(jma_session *s, const char *name)
{
	struct jma_value purge;
	int err = read_typed(s, "opt.purge", JMA_T_STRING, &purge);

	if (!err && purge.str && strcmp(purge.str, "decay")) {
		err = sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "%s: this jemalloc purges by \"%s\" "
			       "(opt.purge); decay times apply only with purge:decay, set at start "
			       "(MALLOC_CONF=purge:decay)", name, purge.str);
		jma_value_clear(&purge);
		return err;
	}
	jma_value_clear(&purge);
	return sess_fail(s, JMA_ERR_TARGET, -EFAULT, "mallctl(\"%s\"): EFAULT: jemalloc refused "
			"the value (-1, or seconds within its limits)", name);
}

int jma_set(jma_session *s, const char *name, const struct jma_value *in, struct jma_value *old)
{
	enum jma_type type;
	unsigned access;
	uint64_t rnew;
	size_t newlen;
	int here, err;

	if (old)
		memset(old, 0, sizeof(*old));
	err = jma_hold_begin(s, &here);
	if (err)
		return err;
	if (lookup(s, name, &type, &access)) {
		/* Unknown to the table: trust the caller's type, learn readability. */
		type = in->type;
		access = JMA_ACC_R | JMA_ACC_W;
	}
	if (type != in->type) {
		err = sess_fail(s, JMA_ERR_USAGE, -EINVAL, "%s is a %s, not a %s", name,
			       jma_type_name(type), jma_type_name(in->type));
		goto out;
	}
	if ((err = place_value(s, in, &rnew, &newlen)))
		goto out;
	if (old && (access & JMA_ACC_R) && type != JMA_T_VOID) {
		unsigned char buf[16];
		size_t len = type == JMA_T_STRING ? sizeof(uint64_t) : jma_type_size(type);

		err = remote_mallctl(s, name, buf, &len, rnew, newlen);
		if (err == -EPERM && lookup(s, name, &type, &access)) {
			/* Write-only after all: write without reading.  The scratch
			 * area was reset by the call, so place the value again. */
			err = place_value(s, in, &rnew, &newlen);
			if (!err)
				err = remote_mallctl(s, name, NULL, NULL, rnew, newlen);
		} else if (!err && type == JMA_T_STRING) {
			uint64_t p;
			int trunc;
			memcpy(&p, buf, sizeof(p));
			old->type = JMA_T_STRING;
			if (p && sess_read_str(s, p, STR_MAX, &old->str, &trunc))
				old->type = JMA_T_UNKNOWN;
		} else if (!err) {
			jma_value_from_bytes(type, buf, len, old);
		}
	} else {
		err = remote_mallctl(s, name, NULL, NULL, rnew, newlen);
	}
	if (err == -EFAULT && strstr(name, "decay_time"))
		err = explain_decay_time(s, name);
out:
	return jma_hold_end(s, here, err);
}
