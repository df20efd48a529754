/* check_session.c -- the session handle (src/core/session.c): options, errors, logging,
 * the attach pairing, over the fake backend. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#include "fake_backend.h"

#define V JMA_JEVERSION

struct logged {
	int n;
	int level[8];
	char msg[8][160];
};

static void on_log(void *arg, int level, const char *msg)
{
	struct logged *l = arg;

	if (l->n < 8) {
		l->level[l->n] = level;
		snprintf(l->msg[l->n], sizeof(l->msg[0]), "%s", msg);
	}
	l->n++;
}

START_TEST(test_session_options_are_copied)
{
	char prefix[8] = "je_", module[32] = "/usr/lib/libjemalloc.so.2", dir[16] = "/tmp/cache";
	struct jma_options o = { .sz = sizeof(o), .timeout = 2.5, .prefix = prefix, .module = module,
				 .cache_dir = dir, .flags = JMA_F_FORCE };
	jma_session *s = jma_new(&o);

	ck_assert_ptr_nonnull(s);
	/* The caller's strings may go away: the session keeps copies. */
	memset(prefix, 'x', sizeof(prefix) - 1);
	memset(module, 'x', sizeof(module) - 1);
	memset(dir, 'x', sizeof(dir) - 1);
	ck_assert_str_eq(s->opt.prefix, "je_");
	ck_assert_str_eq(s->opt.module, "/usr/lib/libjemalloc.so.2");
	ck_assert_str_eq(s->opt.cache_dir, "/tmp/cache");
	ck_assert_uint_eq(s->opt.flags, JMA_F_FORCE);
	ck_assert_int_eq(sess_timeout_ms(s), 2500);
	jma_free(s);

	/* No options: defaults, no strings. */
	s = jma_new(NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(s->opt.prefix);
	ck_assert_ptr_null(s->opt.module);
	ck_assert_int_eq(sess_timeout_ms(s), 10000);
	ck_assert_int_eq(jma_errkind(s), JMA_OK);
	ck_assert_str_eq(jma_errmsg(s), "");
	jma_free(s);
	jma_free(NULL);
}
END_TEST

START_TEST(test_session_timeout_bounds)
{
	static const struct { double t; int ms; } c[] = {
		{ 0, 10000 }, { -3, 10000 }, { 0.001, 1 }, { 1.5, 1500 }, { 86400, 86400000 },
		{ 1e12, 86400000 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		JMA_OPTS(jma_options, o, .timeout = c[i].t);
		jma_session *s = jma_new(&o);

		ck_assert_msg(sess_timeout_ms(s) == c[i].ms, "timeout %g: %d ms", c[i].t, sess_timeout_ms(s));
		jma_free(s);
	}
}
END_TEST

/* The options as programs built against other headers pass them: an older
 * one's shorter struct reads with the newer fields zero; a newer one's is
 * taken while what this library does not know is zero, refused (E2BIG)
 * otherwise; a sz that cannot be one is refused (EINVAL). */
START_TEST(test_session_options_grow)
{
	struct {
		struct jma_options o;
		unsigned char newer[16];
	} big = { .o = { .sz = sizeof(big), .timeout = 3 } };
	struct jma_options o = { .sz = offsetof(struct jma_options, thread), .timeout = 2,
				 .flags = JMA_F_FORCE };
	jma_session *s = jma_new(&o);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sess_timeout_ms(s), 2000);
	ck_assert_uint_eq(s->opt.flags, 0);	/* past the older program's sz */
	jma_free(s);
	s = jma_new(&big.o);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(sess_timeout_ms(s), 3000);
	jma_free(s);
	big.newer[5] = 1;
	errno = 0;
	ck_assert_ptr_null(jma_new(&big.o));
	ck_assert_int_eq(errno, E2BIG);
	o.sz = 0;
	errno = 0;
	ck_assert_ptr_null(jma_new(&o));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_session_fail_records)
{
	jma_session *s = jma_new(NULL);
	char big[6000];

	ck_assert_int_eq(sess_fail(s, JMA_ERR_TARGET, EIO, "reading %s: %d", "x", 7), -EIO);
	ck_assert_str_eq(jma_errmsg(s), "reading x: 7");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_TARGET);
	/* Negative or positive errno: the same negative return. */
	ck_assert_int_eq(sess_fail(s, JMA_ERR_USAGE, -EINVAL, "bad"), -EINVAL);
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_USAGE);
	/* A long message is cut to the buffer, NUL-terminated. */
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(sess_fail(s, JMA_ERR_TARGET, -E2BIG, "%s", big), -E2BIG);
	ck_assert_uint_eq(strlen(jma_errmsg(s)), sizeof(s->err) - 1);
	jma_free(s);
}
END_TEST

START_TEST(test_session_kind_of_engine_errors)
{
	ck_assert_int_eq(sess_kind_of(-ETIMEDOUT), JMA_ERR_UNSAFE);
	ck_assert_int_eq(sess_kind_of(-EINTR), JMA_ERR_UNSAFE);
	ck_assert_int_eq(sess_kind_of(-EPERM), JMA_ERR_ATTACH);
	ck_assert_int_eq(sess_kind_of(-EBUSY), JMA_ERR_ATTACH);
	ck_assert_int_eq(sess_kind_of(-EFAULT), JMA_ERR_TARGET);
	ck_assert_int_eq(sess_kind_of(-ESRCH), JMA_ERR_TARGET);
}
END_TEST

/* The callback gets what its level lets through, errors included at DEBUG. */
START_TEST(test_session_log_levels)
{
	for (int lvl = JMA_LOG_ERR; lvl <= JMA_LOG_DEBUG; lvl++) {
		struct logged l = { 0 };
		JMA_OPTS(jma_options, o, .log = on_log, .log_arg = &l, .log_level = lvl);
		jma_session *s = jma_new(&o);

		sess_logf(s, JMA_LOG_ERR, "e %d", 1);
		sess_logf(s, JMA_LOG_WARN, "w");
		sess_logf(s, JMA_LOG_INFO, "i");
		sess_logf(s, JMA_LOG_DEBUG, "d");
		ck_assert_int_eq(l.n, lvl + 1);
		ck_assert_str_eq(l.msg[0], "e 1");
		for (int i = 0; i < l.n; i++)
			ck_assert_int_eq(l.level[i], i);
		(void)sess_fail(s, JMA_ERR_TARGET, -EIO, "it broke");
		ck_assert_int_eq(l.n, lvl == JMA_LOG_DEBUG ? 5 : lvl + 1);
		if (lvl == JMA_LOG_DEBUG)
			ck_assert_str_eq(l.msg[4], "error: it broke");
		jma_free(s);
	}
	/* No callback: silent, whatever the level. */
	JMA_OPTS(jma_options, o, .log_level = JMA_LOG_DEBUG);
	jma_session *s = jma_new(&o);
	sess_logf(s, JMA_LOG_ERR, "nobody hears this");
	jma_free(s);
}
END_TEST

/* Before a backend: every operation says so instead of touching anything. */
START_TEST(test_session_not_open)
{
	jma_session *s = jma_new(NULL);
	struct jma_target_info info = { .sz = sizeof(info) };
	struct jma_value v;

	ck_assert_int_eq(jma_attach(s), -EINVAL);
	ck_assert_str_eq(jma_errmsg(s), "session not open");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_USAGE);
	ck_assert_int_eq(jma_target_info(s, &info), -EINVAL);
	ck_assert_int_eq(jma_get(s, "version", &v), -EINVAL);
	ck_assert_int_eq(jma_detach(s), 0);
	ck_assert_int_eq(jma_attached(s), 0);
	jma_free(s);
}
END_TEST

static int never_write(jma_session *s, const char *path, void *arg)
{
	(void)s;
	(void)path;
	(void)arg;
	ck_abort_msg("a dump ran unattached");
	return 0;
}

START_TEST(test_session_open_backend)
{
	struct fake_je *je, *je2;
	jma_session *s = jma_new(NULL);
	struct jma_target_info info = { .sz = sizeof(info) };
	struct jma_bcall c = { .fn = FAKE_FN_MALLCTL, .nargs = 5 };
	uint64_t ret;
	char *buf;
	size_t len;

	ck_assert_int_eq(fake_open(s, V(5, 3, 0), &je), 0);
	ck_assert_int_eq(jma_target_info(s, &info), 0);
	ck_assert_str_eq(info.module, "/fake/libjemalloc.so.2");
	ck_assert_str_eq(info.prefix, "");
	ck_assert_str_eq(info.conf_env, "MALLOC_CONF");
	ck_assert_int_eq(info.tid, 0);
	/* What the fake does not describe reads as none. */
	ck_assert_str_eq(info.comm, "");
	ck_assert_uint_eq(jma_held_ns(s), 0);
	ck_assert_int_eq(sess_call_tid(s), 0);
	/* Once only; the second backend is freed (ASan would see a leak). */
	ck_assert_int_eq(fake_open(s, V(5, 3, 0), &je2), -EALREADY);
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_USAGE);
	/* Calls need an attachment. */
	ck_assert_int_eq(sess_call(s, &c, &ret), -EINVAL);
	ck_assert_str_eq(jma_errmsg(s), "not attached");
	ck_assert_uint_eq(je->calls, 0);
	/* So do dumps. */
	ck_assert_int_eq(sess_dump(s, NULL, "dump.heap", 1024, never_write, NULL, &buf, &len),
			 -EINVAL);
	ck_assert_str_eq(jma_errmsg(s), "not attached");
	jma_free(s);
}
END_TEST

/* One begin per attachment, one end per begin. */
START_TEST(test_session_attach_pairing)
{
	struct fake_je *je;
	jma_session *s = jma_new(NULL);
	int own;

	ck_assert_int_eq(fake_open(s, V(5, 3, 0), &je), 0);
	ck_assert_int_eq(jma_attach(s), 0);
	ck_assert_int_eq(jma_attach(s), 0);
	ck_assert_int_eq(jma_attached(s), 1);
	ck_assert_uint_eq(je->begins, 1);
	/* Inside an attachment, the hold bracket leaves it alone. */
	ck_assert_int_eq(jma_hold_begin(s, &own), 0);
	ck_assert_int_eq(own, 0);
	ck_assert_int_eq(jma_hold_end(s, own, -EIO), -EIO);
	ck_assert_uint_eq(je->ends, 0);
	ck_assert_int_eq(jma_detach(s), 0);
	ck_assert_int_eq(jma_detach(s), 0);
	ck_assert_uint_eq(je->ends, 1);
	jma_free(s);
}
END_TEST

/* jma_hold_end keeps the operation's error and message, unless giving the
 * target back failed: that error wins, the operation's message after its
 * own. */
START_TEST(test_session_hold_end_errors)
{
	struct fake_je *je;
	jma_session *s = jma_new(NULL);
	int own;

	ck_assert_int_eq(fake_open(s, V(5, 3, 0), &je), 0);
	ck_assert_int_eq(jma_hold_begin(s, &own), 0);
	ck_assert_int_eq(own, 1);
	(void)sess_fail(s, JMA_ERR_TARGET, -ENOENT, "the operation's own error");
	ck_assert_int_eq(jma_hold_end(s, own, -ENOENT), -ENOENT);
	ck_assert_str_eq(jma_errmsg(s), "the operation's own error");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_TARGET);
	ck_assert_uint_eq(je->ends, 1);
	/* Whatever the end wrote meanwhile. */
	je->end_note = true;
	ck_assert_int_eq(jma_hold_begin(s, &own), 0);
	(void)sess_fail_hint(s, JMA_HINT_RETRY, JMA_ERR_TARGET, -EIO, "the next operation's error");
	ck_assert_int_eq(jma_hold_end(s, own, -EIO), -EIO);
	ck_assert_str_eq(jma_errmsg(s), "the next operation's error");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_TARGET);
	ck_assert_uint_eq(jma_errhints(s), JMA_HINT_RETRY);
	je->end_note = false;

	je->fail_end = -ESRCH;
	ck_assert_int_eq(jma_hold_begin(s, &own), 0);
	(void)sess_fail(s, JMA_ERR_TARGET, -ENOENT, "the operation's own error");
	ck_assert_int_eq(jma_hold_end(s, own, -ENOENT), -ESRCH);
	ck_assert_str_eq(jma_errmsg(s), "fake: cannot end: No such process\n"
			 "  before that: the operation's own error");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_UNSAFE);
	ck_assert_int_eq(jma_attached(s), 0);
	/* No error before: the end's message alone. */
	ck_assert_int_eq(jma_hold_begin(s, &own), 0);
	ck_assert_int_eq(jma_hold_end(s, own, 0), -ESRCH);
	ck_assert_str_eq(jma_errmsg(s), "fake: cannot end: No such process");
	jma_free(s);
}
END_TEST

/* A hold that could not begin has nothing to end: the begin's error. */
START_TEST(test_session_hold_begin_fails)
{
	struct fake_je *je;
	jma_session *s = jma_new(NULL);
	int own = 1;

	ck_assert_int_eq(jma_hold_begin(s, &own), -EINVAL);
	ck_assert_int_eq(own, 0);
	ck_assert_str_eq(jma_errmsg(s), "session not open");
	ck_assert_int_eq(fake_open(s, V(5, 3, 0), &je), 0);
	je->fail_begin = -EPERM;
	ck_assert_int_eq(jma_hold_begin(s, &own), -EPERM);
	ck_assert_int_eq(own, 0);
	ck_assert_int_eq(jma_hold_end(s, own, -EPERM), -EPERM);
	ck_assert_str_eq(jma_errmsg(s), "fake: cannot begin: Operation not permitted");
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_ATTACH);
	ck_assert_uint_eq(je->ends, 0);
	jma_free(s);
}
END_TEST

Suite *suite_session(void)
{
	Suite *s = suite_create("session");
	TCase *pure = tcase_create("pure"), *fake = tcase_create("fake");

	tcase_add_test(pure, test_session_options_are_copied);
	tcase_add_test(pure, test_session_timeout_bounds);
	tcase_add_test(pure, test_session_options_grow);
	tcase_add_test(pure, test_session_fail_records);
	tcase_add_test(pure, test_session_kind_of_engine_errors);
	tcase_add_test(pure, test_session_log_levels);
	tcase_add_test(pure, test_session_not_open);
	suite_add_tcase(s, pure);
	tcase_add_test(fake, test_session_open_backend);
	tcase_add_test(fake, test_session_attach_pairing);
	tcase_add_test(fake, test_session_hold_end_errors);
	tcase_add_test(fake, test_session_hold_begin_fails);
	suite_add_tcase(s, fake);
	return s;
}
