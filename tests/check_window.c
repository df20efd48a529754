/* check_window.c -- jma_prof_window (src/jemalloc/window.c) over the fake
 * backend: the steps in order, two dumps, and prof.active back to what it
 * was however the window ends (completed, stopped before or during it). */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <jemattach.h>

#include "fake_backend.h"

#define V JMA_JEVERSION

struct steps {
	enum jma_prof_window_step seen[8];
	bool was[8];
	unsigned n;
	volatile sig_atomic_t *stop_at_active;	/* set when ACTIVE is reported */
};

static void on_step(void *arg, enum jma_prof_window_step k, bool was)
{
	struct steps *st = arg;

	if (st->n < 8) {
		st->seen[st->n] = k;
		st->was[st->n++] = was;
	}
	if (k == JMA_PROF_WINDOW_ACTIVE && st->stop_at_active)
		*st->stop_at_active = SIGINT;
}

static jma_session *fake_session(struct fake_je **je)
{
	jma_session *s = jma_new(NULL);

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(fake_open(s, V(5, 3, 0), je) == 0, "fake_open: %s", jma_errmsg(s));
	(*je)->opt_prof = (*je)->config_prof = true;
	return s;
}

START_TEST(test_window_steps_dumps_and_restores)
{
	static const enum jma_prof_window_step order[] = {
		JMA_PROF_WINDOW_BASE, JMA_PROF_WINDOW_ACTIVE, JMA_PROF_WINDOW_SETTLE,
		JMA_PROF_WINDOW_RESTORED,
	};
	struct steps st = { .n = 0 };
	struct jma_prof_window_opts o = { .sz = sizeof(o), .seconds = 0.05, .step = on_step, .arg = &st };
	struct jma_prof_window w = { .sz = sizeof(w) };
	struct fake_je *je;
	jma_session *s = fake_session(&je);

	for (int was = 0; was < 2; was++) {
		je->prof_active = was;
		je->ndumps = 0;
		st.n = 0;
		ck_assert_msg(jma_prof_window(s, &o, &w) == 0, "%s", jma_errmsg(s));
		ck_assert_uint_eq(je->ndumps, 2);
		ck_assert(!strncmp(w.base, "heap_v2/", 8) && !strncmp(w.final, "heap_v2/", 8));
		ck_assert_uint_eq(w.base_len, strlen(w.base));
		ck_assert_int_eq(w.was, was);
		ck_assert_int_eq(je->prof_active, was);
		ck_assert_uint_eq(st.n, 4);
		for (unsigned i = 0; i < 4; i++)
			ck_assert_int_eq(st.seen[i], order[i]);
		ck_assert_int_eq(st.was[3], was);
		jma_prof_window_free(&w);
		ck_assert_ptr_null(w.base);
	}
	jma_free(s);
}
END_TEST

/* Stopped while active: -EINTR, no profiles, prof.active back to false. */
START_TEST(test_window_stopped_restores)
{
	volatile sig_atomic_t stop = 0;
	struct steps st = { .stop_at_active = &stop };
	struct jma_prof_window_opts o = { .sz = sizeof(o), .seconds = 30, .stop = &stop, .step = on_step, .arg = &st };
	struct jma_prof_window w = { .sz = sizeof(w) };
	struct fake_je *je;
	jma_session *s = fake_session(&je);

	ck_assert_int_eq(jma_prof_window(s, &o, &w), -EINTR);
	ck_assert_ptr_null(w.base);
	ck_assert_ptr_null(w.final);
	ck_assert(!je->prof_active);
	ck_assert_uint_eq(je->ndumps, 1);
	ck_assert_uint_eq(st.n, 3);
	ck_assert_int_eq(st.seen[2], JMA_PROF_WINDOW_RESTORED);
	/* Stopped before: the base dump only, prof.active never set. */
	stop = SIGTERM;
	st.n = 0;
	je->ndumps = 0;
	ck_assert_int_eq(jma_prof_window(s, &o, &w), -EINTR);
	ck_assert_uint_eq(je->ndumps, 1);
	ck_assert_uint_eq(st.n, 1);
	jma_free(s);
}
END_TEST

/* Without opt.prof: the library's prof:true message, nothing dumped. */
START_TEST(test_window_without_prof_fails_first)
{
	struct jma_prof_window_opts o = { .sz = sizeof(o), .seconds = 0.05 };
	struct jma_prof_window w = { .sz = sizeof(w) };
	struct fake_je *je;
	jma_session *s = fake_session(&je);

	je->opt_prof = false;
	ck_assert_int_eq(jma_prof_window(s, &o, &w), -ENOTSUP);
	ck_assert_int_eq(jma_errkind(s), JMA_ERR_MISSING);
	ck_assert_ptr_nonnull(strstr(jma_errmsg(s), "opt.prof is false"));
	ck_assert_uint_eq(je->ndumps, 0);
	o.seconds = 0;
	ck_assert_int_eq(jma_prof_window(s, &o, &w), -EINVAL);
	jma_free(s);
}
END_TEST

Suite *suite_window(void)
{
	Suite *s = suite_create("window");
	TCase *tc = tcase_create("fake");

	tcase_add_test(tc, test_window_steps_dumps_and_restores);
	tcase_add_test(tc, test_window_stopped_restores);
	tcase_add_test(tc, test_window_without_prof_fails_first);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
