/* check_stacks.c -- which frame of a stack may hold a jemalloc lock (pure logic). */
#include <check.h>

#include "process/stacks.h"

/* A frame: in jemalloc, in pthread_cond_*wait, or neither. */
#define JE { 1, 0 }
#define CW { 0, 1 }
#define OT { 0, 0 }

START_TEST(test_stacks_lock_holder)
{
	/* jemalloc's background thread: a condition wait below its frames. */
	const struct jma_frame_kind bg[] = { OT /* __futex_abstimed_wait_common */,
					     CW /* pthread_cond_timedwait */, JE, OT /* start_thread */ };
	/* prof.dump blocked opening its file. */
	const struct jma_frame_kind dump[] = { OT /* creat */, JE, JE, OT /* dumper */ };
	/* Waiting for a jemalloc mutex (it may hold another). */
	const struct jma_frame_kind wait[] = { OT /* __lll_lock_wait */, OT /* pthread_mutex_lock */,
					       JE /* malloc_mutex_lock_slow */, OT /* main */ };
	/* Nothing of jemalloc's. */
	const struct jma_frame_kind idle[] = { OT /* read */, OT /* main */ };
	/* A condition wait of the application's, in a write_cb called by
	 * jemalloc: jemalloc's frames are below it, it may hold a lock. */
	const struct jma_frame_kind cb[] = { OT /* write */, OT /* app_write_cb */, JE,
					     CW /* pthread_cond_wait */ };

	ck_assert_int_eq(proc_lock_holder_index(bg, 4), -1);
	ck_assert_int_eq(proc_lock_holder_index(dump, 4), 1);
	ck_assert_int_eq(proc_lock_holder_index(wait, 4), 2);
	ck_assert_int_eq(proc_lock_holder_index(idle, 2), -1);
	ck_assert_int_eq(proc_lock_holder_index(cb, 4), 2);
	ck_assert_int_eq(proc_lock_holder_index(dump, 0), -1);
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
