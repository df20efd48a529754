/* mallctl.c -- mallctl run inside the target, typed reads and writes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "process/session.h"

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

/* mallctl(name, old, oldlen, new, newlen) in the attached thread.  @rnew is
 * a remote address already holding the new value (or 0).  On return *oldlenp
 * is what jemalloc set, and up to that many bytes are copied to @oldp, also on
 * EINVAL (the size-probe case).  Returns 0, or mallctl's errno negated with
 * kind JMA_ERR_TARGET, or an engine error. */
static int remote_mallctl(jma_session *s, const char *name, void *oldp, size_t *oldlenp,
			  uint64_t rnew, size_t newlen)
{
	struct jma_bcall c = { .fn = jma_syms_jemalloc(s->syms)->fn_mallctl, .nargs = 5 };
	uint64_t rname, rold = 0, roldlen = 0, ret;
	size_t cap = oldlenp ? *oldlenp : 0, got;
	int err;

	if (!valid_name(name))
		return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "invalid mallctl name \"%.64s\"", name);
	rname = jma_scratch(s, name, strlen(name) + 1, 1);
	if (!rname)
		return -ENOSPC;
	if (oldp) {
		if (cap > OLD_MAX)
			return jma_fail(s, JMA_ERR_USAGE, -EINVAL, "old value buffer too large");
		rold = jma_scratch(s, NULL, cap, 16);
		roldlen = rold ? jma_scratch(s, &cap, sizeof(cap), 8) : 0;
		if (!roldlen)
			return -ENOSPC;
	}
	c.args[0] = rname;
	c.args[1] = rold;
	c.args[2] = roldlen;
	c.args[3] = rnew;
	c.args[4] = newlen;
	err = jma_call(s, &c, &ret);
	if (err)
		return err;
	if (oldp) {
		err = jma_read(s, roldlen, &got, sizeof(got));
		if (!err) {
			*oldlenp = got < cap ? got : cap;
			err = jma_read(s, rold, oldp, *oldlenp);
		}
		if (err)
			return jma_fail(s, JMA_ERR_TARGET, err, "reading the result of mallctl(\"%s\"): %s",
					name, strerror(-err));
	}
	if ((int)ret)
		return jma_fail(s, JMA_ERR_TARGET, (int)ret, "mallctl(\"%s\"): %s", name,
				jma_mallctl_strerror(name, (int)ret));
	return 0;
}

int jma_mallctl(jma_session *s, const char *name, void *oldp, size_t *oldlenp, const void *newp,
		size_t newlen)
{
	int here, err = jma_auto_begin(s, &here);
	uint64_t rnew = 0;

	if (err)
		return err;
	if (newp && !(rnew = jma_scratch(s, newp, newlen, 16)))
		err = -ENOSPC;
	if (!err)
		err = remote_mallctl(s, name, oldp, oldlenp, rnew, newp ? newlen : 0);
	return jma_auto_end(s, here, err);
}

int jma_refresh(jma_session *s)
{
	uint64_t one = 1;
	int err = jma_mallctl(s, "epoch", NULL, NULL, &one, sizeof(one));

	if (!err && s->attached)
		s->epoch_fresh = 1;
	return err;
}

/* Does @addr point at a printable NUL-terminated string in the target? */
static int looks_like_string(jma_session *s, uint64_t addr)
{
	char *str;
	int trunc, ok = 0;

	if (addr < 4096 || jma_read_str(s, addr, 256, &str, &trunc))
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

/* Probe an unknown, readable name: a read with a too-large buffer fails with
 * EINVAL and sets *oldlenp to the real size (jemalloc's READ() semantics). */
static int probe_type(jma_session *s, const char *name, enum jma_type *type)
{
	unsigned char buf[16];
	size_t len = sizeof(buf);
	int err = remote_mallctl(s, name, buf, &len, 0, 0);
	uint64_t v;

	if (err == -EINVAL && len < sizeof(buf))
		err = 0;
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
		return jma_fail(s, JMA_ERR_TARGET, -ENOTSUP, "mallctl(\"%s\"): values of %zu bytes "
				"are not supported", name, len);
	}
}

int jma_ctl_type(jma_session *s, const char *name, enum jma_type *type, unsigned *access)
{
	int here, err;

	if (jma_ctl_lookup(name, type, access) == 0)
		return 0;
	err = jma_auto_begin(s, &here);
	if (!err)
		err = probe_type(s, name, type);
	*access = JMA_ACC_R;
	return jma_auto_end(s, here, err);
}

static int read_typed(jma_session *s, const char *name, enum jma_type type, struct jma_value *out)
{
	unsigned char buf[16];
	size_t want = type == JMA_T_STRING ? sizeof(uint64_t) : jma_type_size(type), len = want;
	int err = remote_mallctl(s, name, buf, &len, 0, 0);

	if (err)
		return err;
	if (len != want)
		return jma_fail(s, JMA_ERR_TARGET, -EINVAL, "mallctl(\"%s\"): got %zu bytes, expected %zu",
				name, len, want);
	if (type == JMA_T_STRING) {
		uint64_t p;
		int trunc;

		memcpy(&p, buf, sizeof(p));
		memset(out, 0, sizeof(*out));
		out->type = JMA_T_STRING;
		if (!p)
			return 0;
		err = jma_read_str(s, p, STR_MAX, &out->str, &trunc);
		if (err)
			return jma_fail(s, JMA_ERR_TARGET, err, "mallctl(\"%s\"): reading its string at "
					"0x%llx: %s", name, (unsigned long long)p, strerror(-err));
		return 0;
	}
	return jma_value_from_bytes(type, buf, len, out);
}

int jma_get(jma_session *s, const char *name, struct jma_value *out)
{
	enum jma_type type;
	unsigned access;
	int here, err;

	memset(out, 0, sizeof(*out));
	err = jma_auto_begin(s, &here);
	if (err)
		return err;
	if (!strncmp(name, "stats.", 6) && !s->epoch_fresh)
		err = jma_refresh(s);
	if (!err)
		err = jma_ctl_type(s, name, &type, &access);
	if (!err && (type == JMA_T_VOID || !(access & JMA_ACC_R)))
		err = jma_fail(s, JMA_ERR_TARGET, -EPERM, "mallctl(\"%s\"): not readable (%s)", name,
			       type == JMA_T_VOID ? "an action" : "write-only");
	if (!err)
		err = read_typed(s, name, type, out);
	return jma_auto_end(s, here, err);
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
		if (in->str && !(p = jma_scratch(s, in->str, strlen(in->str) + 1, 1)))
			return -ENOSPC;
		*addr = jma_scratch(s, &p, sizeof(p), 8);
		*len = sizeof(p);
	} else {
		*len = jma_type_size(in->type);
		*addr = jma_scratch(s, &in->b, *len, 16);
	}
	return *addr ? 0 : -ENOSPC;
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
	err = jma_auto_begin(s, &here);
	if (err)
		return err;
	if (jma_ctl_lookup(name, &type, &access)) {
		/* Unknown to the table: trust the caller's type, learn readability. */
		type = in->type;
		access = JMA_ACC_R | JMA_ACC_W;
	}
	if (type != in->type) {
		err = jma_fail(s, JMA_ERR_USAGE, -EINVAL, "%s is a %s, not a %s", name,
			       jma_type_name(type), jma_type_name(in->type));
		goto out;
	}
	if ((err = place_value(s, in, &rnew, &newlen)))
		goto out;
	if (old && (access & JMA_ACC_R) && type != JMA_T_VOID) {
		unsigned char buf[16];
		size_t len = type == JMA_T_STRING ? sizeof(uint64_t) : jma_type_size(type);

		err = remote_mallctl(s, name, buf, &len, rnew, newlen);
		if (err == -EPERM && jma_ctl_lookup(name, &type, &access)) {
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
			if (p && jma_read_str(s, p, STR_MAX, &old->str, &trunc))
				old->type = JMA_T_UNKNOWN;
		} else if (!err) {
			jma_value_from_bytes(type, buf, len, old);
		}
	} else {
		err = remote_mallctl(s, name, NULL, NULL, rnew, newlen);
	}
out:
	return jma_auto_end(s, here, err);
}
