/* check_stacks.c -- which frame of a stack may hold a jemalloc lock (pure logic). */
#include <check.h>

#include "process/stacks.h"

#define F(name, je) { .pc = 1, .func = name, .in_jemalloc = je }

START_TEST(test_stacks_lock_holder)
{
	/* jemalloc's background thread: a condition wait below its frames. */
	const struct jma_frame bg[] = { F("__futex_abstimed_wait_common", 0),
					F("pthread_cond_timedwait", 0), F(NULL, 1),
					F("start_thread", 0) };
	/* prof.dump blocked opening its file. */
	const struct jma_frame dump[] = { F("creat", 0), F(NULL, 1), F(NULL, 1), F("dumper", 0) };
	/* Waiting for a jemalloc mutex (it may hold another). */
	const struct jma_frame wait[] = { F("__lll_lock_wait", 0), F("pthread_mutex_lock", 0),
					  F("malloc_mutex_lock_slow", 1), F("main", 0) };
	/* Nothing of jemalloc's. */
	const struct jma_frame idle[] = { F("read", 0), F("main", 0) };
	/* A condition wait of the application's, in a write_cb called by
	 * jemalloc: jemalloc's frames are below it, it may hold a lock. */
	const struct jma_frame cb[] = { F("write", 0), F("app_write_cb", 0), F(NULL, 1),
					F("pthread_cond_wait", 0) };

	ck_assert_int_eq(jma_frames_lock_holder(bg, 4), -1);
	ck_assert_int_eq(jma_frames_lock_holder(dump, 4), 1);
	ck_assert_int_eq(jma_frames_lock_holder(wait, 4), 2);
	ck_assert_int_eq(jma_frames_lock_holder(idle, 2), -1);
	ck_assert_int_eq(jma_frames_lock_holder(cb, 4), 2);
	ck_assert_int_eq(jma_frames_lock_holder(dump, 0), -1);
}
END_TEST

Suite *suite_stacks(void)
{
	Suite *s = suite_create("stacks");
	TCase *t = tcase_create("logic");

	tcase_add_test(t, test_stacks_lock_holder);
	suite_add_tcase(s, t);
	return s;
}
