/* check_mallctl.c -- typed mallctl over the fake backend (src/jemalloc/mallctl.c, prof.c, stats.c):
 * the version model, size probes, typed values, what errors say.  The calls
 * run in tests/fake_backend.c's emulated jemalloc of each version; a live
 * process is tests/integration's. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#include "fake_backend.h"

#define V JMA_JEVERSION

START_TEST(test_mallctl_strerror_names_the_errno)
{
	static const struct { int err; const char *start; } cases[] = {
		{ EINVAL, "EINVAL: " }, { EPERM, "EPERM: " }, { EAGAIN, "EAGAIN: " },
		{ EFAULT, "EFAULT: " }, { EBUSY, "EBUSY: " }, { EFBIG, "EFBIG: " },
		{ ENOENT, "ENOENT: " },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *m = jma_mallctl_strerror("opt.narenas", cases[i].err);

		ck_assert_msg(!strncmp(m, cases[i].start, strlen(cases[i].start)), "%d: %s",
			      cases[i].err, m);
		/* Negated, as library calls return it: the same words. */
		ck_assert_str_eq(jma_mallctl_strerror("opt.narenas", -cases[i].err), m);
	}
	/* Others: the C library's words. */
	ck_assert_str_eq(jma_mallctl_strerror("epoch", ENOMEM), strerror(ENOMEM));
	ck_assert_str_eq(jma_mallctl_strerror("epoch", -EIO), strerror(EIO));
}
END_TEST

/* The same errno means different things for different names. */
START_TEST(test_mallctl_strerror_depends_on_the_name)
{
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("prof.active", ENOENT), "profiling"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("thread.prof.name", ENOENT), "profiling"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("opt.prof", ENOENT), "no such mallctl name"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("profx", ENOENT), "no such mallctl name"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("prof.dump", EFAULT), "the dump failed"));
	ck_assert_ptr_null(strstr(jma_mallctl_strerror("prof.reset", EFAULT), "dump"));
	ck_assert_ptr_null(strstr(jma_mallctl_strerror("", ENOENT), "profiling"));
}
END_TEST

static const uint32_t versions[] = { V(3, 6, 0), V(4, 5, 0), V(5, 0, 1), V(5, 2, 1), V(5, 3, 0) };
#define NVERSIONS (sizeof(versions) / sizeof(*versions))

/* A session over a fake jemalloc of @v. */
static jma_session *fake_session(uint32_t v, struct fake_je **je)
{
	jma_session *s = jma_new(NULL);

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(fake_open(s, v, je) == 0, "fake_open: %s", jma_errmsg(s));
	return s;
}

/* @err and a message holding @words, of kind @kind. */
#define ck_fails(s, call, err, kind, words)                                                      \
	do {                                                                                     \
		int _e = (call);                                                                 \
		ck_assert_msg(_e == (err), "%s: %d (%s), expected %d", #call, _e,                \
			      jma_errmsg(s), (err));                                             \
		ck_assert_int_eq(jma_errkind(s), (kind));                                        \
		ck_assert_msg(strstr(jma_errmsg(s), (words)), "\"%s\" lacks \"%s\"",           \
			      jma_errmsg(s), (words));                                           \
	} while (0)

START_TEST(test_mallctl_version_read_once)
{
	for (size_t i = 0; i < NVERSIONS; i++) {
		struct fake_je *je;
		jma_session *s = fake_session(versions[i], &je);
		struct jma_value v;
		unsigned n;
		char start[16];

		ck_assert_uint_eq(jma_jemalloc_version(s), versions[i]);
		n = je->mallctls;
		ck_assert_uint_eq(jma_jemalloc_version(s), versions[i]);
		ck_assert_uint_eq(je->mallctls, n);
		ck_assert_int_eq(jma_get(s, "version", &v), 0);
		ck_assert_int_eq(v.type, JMA_T_STRING);
		snprintf(start, sizeof(start), "%u.%u.%u-", versions[i] >> 16, (versions[i] >> 8) & 0xff,
			 versions[i] & 0xff);
		ck_assert_msg(!strncmp(v.str, start, strlen(start)), "%s", v.str);
		jma_value_clear(&v);
		/* Every call was inside a begin..end pair, each ended. */
		ck_assert_uint_eq(je->begins, je->ends);
		ck_assert_int_eq(jma_attached(s), 0);
		jma_free(s);
	}
}
END_TEST

/* Names whose type changed read with the type of the target's version. */
START_TEST(test_mallctl_types_follow_the_version)
{
	for (size_t i = 0; i < NVERSIONS; i++) {
		struct fake_je *je;
		jma_session *s = fake_session(versions[i], &je);
		int v3 = versions[i] < V(4, 0, 0), v4 = !v3 && versions[i] < V(5, 0, 0);
		struct jma_value v;
		uint64_t page;

		ck_assert_msg(jma_get(s, "opt.narenas", &v) == 0, "%x: %s", versions[i], jma_errmsg(s));
		ck_assert_int_eq(v.type, v3 ? JMA_T_SIZE : JMA_T_UNSIGNED);
		ck_assert_uint_eq(v3 ? v.z : v.u, 8);
		ck_assert_msg(jma_get(s, "opt.junk", &v) == 0, "%x: %s", versions[i], jma_errmsg(s));
		ck_assert_int_eq(v.type, v3 ? JMA_T_BOOL : JMA_T_STRING);
		if (v3)
			ck_assert(!v.b);
		else
			ck_assert_str_eq(v.str, "false");
		jma_value_clear(&v);
		/* Before 5.0 a pointer to the live counter, read through. */
		if (v3 || v4) {
			ck_assert_msg(jma_get(s, "stats.cactive", &v) == 0, "%s", jma_errmsg(s));
			ck_assert_int_eq(v.type, JMA_T_SIZE);
			ck_assert_uint_eq(v.z, 2 << 20);
		} else {
			ck_fails(s, jma_get(s, "stats.cactive", &v), -ENOENT, JMA_ERR_MISSING,
				 "(removed in 5.0.0)");
		}
		ck_assert_int_eq(jma_page_size(s, &page), 0);
		ck_assert_uint_eq(page, 4096);
		jma_free(s);
	}
}
END_TEST

/* stats.* are refreshed by one epoch write per attachment. */
START_TEST(test_mallctl_stats_refresh_once_per_attachment)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(5, 3, 0), &je);
	struct jma_value v;

	ck_assert_int_eq(jma_attach(s), 0);
	ck_assert_int_eq(jma_get(s, "stats.allocated", &v), 0);
	ck_assert_uint_eq(v.z, 1234567);
	ck_assert_int_eq(jma_get(s, "stats.resident", &v), 0);
	ck_assert_uint_eq(je->epoch, 1);
	ck_assert_int_eq(jma_detach(s), 0);
	ck_assert_int_eq(jma_get(s, "stats.allocated", &v), 0);
	ck_assert_int_eq(jma_get(s, "stats.allocated", &v), 0);
	ck_assert_uint_eq(je->epoch, 3);
	ck_assert_uint_eq(je->begins, 3);
	ck_assert_uint_eq(je->ends, 3);
	jma_free(s);
}
END_TEST

/* Names no table knows are typed by their size: 5.3 says the size in one
 * EINVAL, earlier versions need the exact size tried. */
START_TEST(test_mallctl_probe_size)
{
	static const struct { const char *name; enum jma_type type; unsigned calls_52, calls_53; } c[] = {
		{ "fake.u64", JMA_T_U64, 1, 1 },  { "fake.u32", JMA_T_UNSIGNED, 2, 1 },
		{ "fake.bool", JMA_T_BOOL, 3, 1 }, { "fake.str", JMA_T_STRING, 1, 1 },
		{ "fake.text", JMA_T_U64, 1, 1 },
	};

	for (int newer = 0; newer < 2; newer++) {
		struct fake_je *je;
		jma_session *s = fake_session(newer ? V(5, 3, 0) : V(5, 2, 1), &je);

		for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
			enum jma_type t;
			unsigned acc, n = je->mallctls;

			ck_assert_msg(jma_ctl_type(s, c[i].name, &t, &acc) == 0, "%s: %s", c[i].name,
				      jma_errmsg(s));
			ck_assert_msg(t == c[i].type, "%s in %s: type %d", c[i].name,
				      newer ? "5.3" : "5.2", t);
			ck_assert_uint_eq(acc, JMA_ACC_R);
			ck_assert_uint_eq(je->mallctls - n, newer ? c[i].calls_53 : c[i].calls_52);
		}
		/* A 16-byte value is no scalar. */
		ck_fails(s, jma_get(s, "fake.wide", &(struct jma_value){ 0 }), -ENOTSUP,
			 JMA_ERR_TARGET, "is not a bool or a 4- or 8-byte number");
		/* What to do is a hint; the message names no program's option. */
		ck_assert_uint_eq(jma_errhints(s), JMA_HINT_TYPE);
		ck_assert_ptr_null(strstr(jma_errmsg(s), "--"));
		jma_free(s);
	}
}
END_TEST

START_TEST(test_mallctl_probed_values)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(4, 5, 0), &je);
	struct jma_value v;

	ck_assert_int_eq(jma_get(s, "fake.u32", &v), 0);
	ck_assert_int_eq(v.type, JMA_T_UNSIGNED);
	ck_assert_uint_eq(v.u, 77);
	ck_assert_int_eq(jma_get(s, "fake.bool", &v), 0);
	ck_assert(v.b);
	ck_assert_int_eq(jma_get(s, "fake.str", &v), 0);
	ck_assert_str_eq(v.str, "/var/tmp/jeprof");
	jma_value_clear(&v);
	/* Read as a given type: the size must match, or the target says EINVAL. */
	ck_assert_int_eq(jma_get_as(s, "fake.u64", JMA_T_U64, &v), 0);
	ck_assert_uint_eq(v.u64, 1ULL << 40);
	ck_fails(s, jma_get_as(s, "fake.u64", JMA_T_UNSIGNED, &v), -EINVAL, JMA_ERR_TARGET,
		 "EINVAL");
	/* A target that says success with fewer bytes than the type's. */
	ck_fails(s, jma_get_as(s, "fake.short", JMA_T_U64, &v), -EINVAL, JMA_ERR_TARGET,
		 "got 4 bytes, expected 8");
	jma_free(s);
}
END_TEST

/* Raw mallctl with a larger buffer: the bytes of the value and, from 5.3,
 * its size; before, the length given back. */
START_TEST(test_mallctl_raw_size_mismatch)
{
	for (int newer = 0; newer < 2; newer++) {
		struct fake_je *je;
		jma_session *s = fake_session(newer ? V(5, 3, 0) : V(5, 2, 1), &je);
		uint64_t buf[2] = { 0, 0 };
		size_t len = sizeof(buf);

		ck_fails(s, jma_mallctl(s, "arenas.page", buf, &len, NULL, 0), -EINVAL, JMA_ERR_TARGET,
			 "does not match the name's type");
		ck_assert_uint_eq(buf[0], 4096);
		ck_assert_uint_eq(len, newer ? 8 : 16);
		len = 8;
		ck_assert_int_eq(jma_mallctl(s, "arenas.page", buf, &len, NULL, 0), 0);
		jma_free(s);
	}
}
END_TEST

START_TEST(test_mallctl_errors_say_why)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(4, 5, 0), &je);
	struct jma_value v, on = { .type = JMA_T_BOOL, .b = true };
	unsigned n;

	ck_fails(s, jma_get(s, "no.such.name", &v), -ENOENT, JMA_ERR_TARGET, "no such mallctl name");
	ck_assert_str_eq(je->last_name, "no.such.name");
	/* The version is why. */
	ck_fails(s, jma_get(s, "background_thread", &v), -ENOENT, JMA_ERR_MISSING,
		 "background_thread is not in jemalloc 4.5.0 (added in 5.0.0)");
	ck_fails(s, jma_get(s, "arenas.dirty_decay_ms", &v), -ENOENT, JMA_ERR_MISSING,
		 "(added in 5.0.0)");
	/* Refused before the target is asked. */
	n = je->calls;
	ck_fails(s, jma_get(s, "bad name", &v), -EINVAL, JMA_ERR_USAGE, "invalid mallctl name");
	ck_fails(s, jma_set(s, "opt.narenas", &on, NULL), -EINVAL, JMA_ERR_USAGE,
		 "opt.narenas is a unsigned, not a bool");
	ck_fails(s, jma_get(s, "arena.0.purge", &v), -EPERM, JMA_ERR_TARGET, "an action");
	ck_fails(s, jma_get(s, "prof.dump", &v), -EPERM, JMA_ERR_TARGET, "write-only");
	ck_assert_uint_eq(je->calls - n, 0);
	/* The target refuses. */
	ck_fails(s, jma_set(s, "arenas.page", &(struct jma_value){ .type = JMA_T_SIZE, .z = 1 }, NULL),
		 -EPERM, JMA_ERR_TARGET, "EPERM: not allowed");
	jma_free(s);

	s = fake_session(V(3, 6, 0), &je);
	ck_fails(s, jma_prof_reset(s, NULL), -ENOENT, JMA_ERR_MISSING,
		 "prof.reset is not in jemalloc 3.6.0 (added in 4.0.0)");
	jma_free(s);
}
END_TEST

/* Writes, with the old value where the name is readable. */
START_TEST(test_mallctl_set_typed)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(5, 2, 1), &je);
	struct jma_value on = { .type = JMA_T_BOOL, .b = true }, old;
	struct jma_value ms = { .type = JMA_T_SSIZE, .sz = 2500 };
	struct jma_value wo = { .type = JMA_T_U64, .u64 = 0x1122334455667788ULL };

	ck_assert_int_eq(jma_set(s, "background_thread", &on, &old), 0);
	ck_assert_int_eq(old.type, JMA_T_BOOL);
	ck_assert(!old.b);
	ck_assert(je->background_thread);
	ck_assert_int_eq(jma_set(s, "background_thread", &on, &old), 0);
	ck_assert(old.b);
	ck_assert_int_eq(jma_set(s, "arenas.dirty_decay_ms", &ms, &old), 0);
	ck_assert_int_eq(old.sz, 10);
	ck_assert_int_eq(je->decay_time, 2500);
	ms.sz = -5;
	ck_fails(s, jma_set(s, "arenas.dirty_decay_ms", &ms, NULL), -EFAULT, JMA_ERR_TARGET,
		 "EFAULT: the operation failed inside jemalloc");
	/* Unknown to the table and write-only: the read is refused, the value
	 * placed again (the first call released it) and written alone. */
	ck_assert_msg(jma_set(s, "fake.wo", &wo, &old) == 0, "%s", jma_errmsg(s));
	ck_assert_uint_eq(je->wo, wo.u64);
	ck_assert_int_eq(old.type, JMA_T_UNKNOWN);
	jma_free(s);
}
END_TEST

/* 4.x takes decay times only when purging by decay: said so. */
START_TEST(test_mallctl_decay_time_4x)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(4, 5, 0), &je);
	struct jma_value t = { .type = JMA_T_SSIZE, .sz = 5 };

	ck_fails(s, jma_set(s, "arenas.decay_time", &t, NULL), -ENOTSUP, JMA_ERR_MISSING,
		 "purges by \"ratio\" (opt.purge)");
	ck_assert_int_eq(je->decay_time, 10);
	je->opt_purge = "decay";
	ck_assert_int_eq(jma_set(s, "arenas.decay_time", &t, NULL), 0);
	ck_assert_int_eq(je->decay_time, 5);
	t.sz = -7;
	ck_fails(s, jma_set(s, "arenas.decay_time", &t, NULL), -EFAULT, JMA_ERR_TARGET,
		 "jemalloc refused the value");
	jma_free(s);
}
END_TEST

/* prof.active through the library, in each version, and its gates. */
START_TEST(test_mallctl_prof_active)
{
	for (size_t i = 0; i < NVERSIONS; i++) {
		struct fake_je *je;
		jma_session *s = fake_session(versions[i], &je);
		bool was = true;

		ck_assert_msg(jma_prof_set_active(s, true, &was) == 0, "%s", jma_errmsg(s));
		ck_assert(!was);
		ck_assert(je->prof_active);
		ck_assert_int_eq(jma_prof_set_active(s, false, &was), 0);
		ck_assert(was);
		ck_assert(!je->prof_active);
		je->opt_prof = false;
		ck_fails(s, jma_prof_set_active(s, true, NULL), -ENOTSUP, JMA_ERR_MISSING,
			 "restart with MALLOC_CONF=prof:true,prof_active:false");
		ck_assert_uint_eq(jma_errhints(s), JMA_HINT_SAMPLE);
		je->config_prof = false;
		ck_fails(s, jma_prof_set_active(s, true, NULL), -ENOTSUP, JMA_ERR_MISSING,
			 "built without --enable-prof");
		ck_assert_uint_eq(jma_errhints(s), JMA_HINT_SAMPLE);
		/* A later error with nothing to suggest has no hint left over. */
		ck_fails(s, jma_get(s, "no.such.name", &(struct jma_value){ 0 }), -ENOENT,
			 JMA_ERR_TARGET, "no.such.name");
		ck_assert_uint_eq(jma_errhints(s), 0);
		ck_assert(!je->prof_active);
		jma_free(s);
	}
}
END_TEST

/* The target's own errno for prof.* when profiling is off at start: 5.3
 * says ENOENT, earlier versions EFAULT from the dump; prof.active writes
 * before it reads. */
START_TEST(test_mallctl_prof_off_errnos)
{
	for (int newer = 0; newer < 2; newer++) {
		struct fake_je *je;
		jma_session *s = fake_session(newer ? V(5, 3, 0) : V(5, 2, 1), &je);
		struct jma_value path = { .type = JMA_T_STRING, .str = "/tmp/x.heap" };
		bool on = true, old = true;
		uint64_t wide;
		size_t len = 1;

		je->opt_prof = false;
		if (newer) {
			ck_fails(s, jma_set(s, "prof.dump", &path, NULL), -ENOENT, JMA_ERR_TARGET,
				 "profiling is not available");
			ck_fails(s, jma_mallctl(s, "prof.active", &old, &len, &on, 1), -ENOENT,
				 JMA_ERR_TARGET, "profiling is not available");
			ck_assert(!je->prof_active);
		} else {
			ck_fails(s, jma_set(s, "prof.dump", &path, NULL), -EFAULT, JMA_ERR_TARGET,
				 "the dump failed");
			ck_assert_int_eq(jma_mallctl(s, "prof.active", &old, &len, &on, 1), 0);
			ck_assert(!old);
			ck_assert(je->prof_active);
		}
		ck_assert_uint_eq(je->ndumps, 0);
		/* Written, then the old value refused for its size: the write stays. */
		je->opt_prof = true;
		je->prof_active = false;
		len = sizeof(wide);
		ck_fails(s, jma_mallctl(s, "prof.active", &wide, &len, &on, 1), -EINVAL,
			 JMA_ERR_TARGET, "EINVAL");
		ck_assert(je->prof_active);
		jma_free(s);
	}
}
END_TEST

/* Dumps: the name given reaches the target; with an engine that keeps the
 * file (as the emulator does) it is read back from there. */
START_TEST(test_mallctl_prof_dump)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(5, 3, 0), &je);
	struct jma_value path = { .type = JMA_T_STRING, .str = "/tmp/jm.1.heap" }, old;
	size_t lg = 12;
	char *buf;
	size_t len;

	ck_assert_int_eq(jma_set(s, "prof.dump", &path, &old), 0);
	ck_assert_str_eq(je->dumped, "/tmp/jm.1.heap");
	ck_assert_int_eq(old.type, JMA_T_UNKNOWN);
	ck_assert_msg(jma_prof_dump(s, &buf, &len) == 0, "%s", jma_errmsg(s));
	ck_assert_uint_eq(je->ndumps, 2);
	ck_assert_str_eq(je->dumped, "dump.heap");	/* the name the backend's dump gave */
	ck_assert_uint_eq(len, strlen(buf));
	ck_assert(!strncmp(buf, "heap_v2/", 8));
	free(buf);
	ck_assert_int_eq(jma_prof_reset(s, &lg), 0);
	ck_assert_uint_eq(je->reset_lg_sample, 12);
	ck_assert_int_eq(jma_prof_reset(s, NULL), 0);
	ck_assert_uint_eq(je->nresets, 2);
	ck_assert_uint_eq(je->reset_lg_sample, 0);
	je->opt_prof = false;
	ck_fails(s, jma_prof_dump(s, &buf, &len), -ENOTSUP, JMA_ERR_MISSING, "opt.prof is false");
	ck_assert_ptr_null(buf);
	jma_free(s);
}
END_TEST

struct text {
	char buf[512];
	size_t len;
	unsigned pieces;
};

static int collect(void *arg, const char *s, size_t len)
{
	struct text *t = arg;

	ck_assert_uint_lt(t->len + len, sizeof(t->buf));
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->pieces++;
	return 0;
}

START_TEST(test_mallctl_stats_print)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(5, 3, 0), &je);
	struct text t = { .len = 0 };

	ck_assert_int_eq(jma_stats_print(s, "gJ", collect, &t), 0);
	ck_assert_str_eq(je->stats_opts, "gJ");
	ck_assert_uint_eq(t.pieces, 1);
	ck_assert(!strncmp(t.buf, "{\n\"jemalloc\"", 12));
	t = (struct text){ .len = 0 };
	ck_assert_int_eq(jma_stats_print(s, NULL, collect, &t), 0);
	ck_assert_str_eq(je->stats_opts, "");
	ck_assert_uint_eq(t.pieces, 3);
	ck_assert_ptr_nonnull(strstr(t.buf, "Allocated: 1234567\n--- End jemalloc statistics ---\n"));
	ck_assert_uint_eq(je->stderr_prints, 0);
	ck_fails(s, jma_stats_print(s, "gZ", collect, &t), -EINVAL, JMA_ERR_USAGE,
		 "invalid stats options");
	jma_free(s);

	/* No JSON before 4.3: refused without calling malloc_stats_print. */
	s = fake_session(V(3, 6, 0), &je);
	ck_fails(s, jma_stats_print(s, "J", collect, &t), -ENOTSUP, JMA_ERR_MISSING,
		 "prints no JSON statistics (added in 4.3.0)");
	ck_assert_str_eq(je->last_name, "version");
	ck_assert_str_eq(je->stats_opts, "");
	jma_free(s);
}
END_TEST

/* The engine's failures: reported with their kind, and whatever began is ended. */
START_TEST(test_mallctl_engine_failures)
{
	struct fake_je *je;
	jma_session *s = fake_session(V(5, 3, 0), &je);
	struct jma_value v;

	je->fail_begin = -EPERM;
	ck_fails(s, jma_get(s, "arenas.narenas", &v), -EPERM, JMA_ERR_ATTACH, "cannot begin");
	ck_assert_uint_eq(je->calls, 0);
	ck_assert_uint_eq(je->ends, 0);
	je->fail_begin = 0;
	je->fail_call = -ETIMEDOUT;
	ck_fails(s, jma_get(s, "arenas.narenas", &v), -ETIMEDOUT, JMA_ERR_UNSAFE, "the call failed");
	ck_assert_uint_eq(je->begins, 2);
	ck_assert_uint_eq(je->ends, 1);
	ck_assert_int_eq(jma_attached(s), 0);
	/* An explicit attachment spans several operations. */
	je->fail_call = 0;
	ck_assert_int_eq(jma_attach(s), 0);
	ck_assert_int_eq(jma_get(s, "arenas.narenas", &v), 0);
	ck_assert_uint_eq(v.u, 8);
	ck_assert_int_eq(jma_get(s, "opt.prof", &v), 0);
	ck_assert_uint_eq(je->begins, 3);
	ck_assert_int_eq(jma_detach(s), 0);
	ck_assert_uint_eq(je->ends, 2);
	jma_free(s);
}
END_TEST

Suite *suite_mallctl(void)
{
	Suite *s = suite_create("mallctl");
	TCase *tc = tcase_create("pure"), *fake = tcase_create("fake");

	tcase_add_test(tc, test_mallctl_strerror_names_the_errno);
	tcase_add_test(tc, test_mallctl_strerror_depends_on_the_name);
	suite_add_tcase(s, tc);
	tcase_add_test(fake, test_mallctl_version_read_once);
	tcase_add_test(fake, test_mallctl_types_follow_the_version);
	tcase_add_test(fake, test_mallctl_stats_refresh_once_per_attachment);
	tcase_add_test(fake, test_mallctl_probe_size);
	tcase_add_test(fake, test_mallctl_probed_values);
	tcase_add_test(fake, test_mallctl_raw_size_mismatch);
	tcase_add_test(fake, test_mallctl_errors_say_why);
	tcase_add_test(fake, test_mallctl_set_typed);
	tcase_add_test(fake, test_mallctl_decay_time_4x);
	tcase_add_test(fake, test_mallctl_prof_active);
	tcase_add_test(fake, test_mallctl_prof_off_errnos);
	tcase_add_test(fake, test_mallctl_prof_dump);
	tcase_add_test(fake, test_mallctl_stats_print);
	tcase_add_test(fake, test_mallctl_engine_failures);
	suite_add_tcase(s, fake);
	return s;
}
