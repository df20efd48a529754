/* check_defer.c -- our own termination signals held back (attach/defer.c):
 * a block for a change in the target's view outlives the held threads inside it. */
#include <check.h>
#include <signal.h>

#include "attach/defer.h"

static volatile sig_atomic_t got;

static void on_int(int sig)
{
	(void)sig;
	got++;
}

static struct sigaction old_int;

static void setup(void)
{
	struct sigaction sa = { .sa_handler = on_int };

	got = 0;
	sigaction(SIGINT, &sa, &old_int);
}

static void teardown(void)
{
	sigaction(SIGINT, &old_int, NULL);
}

static int int_blocked(void)
{
	sigset_t now;

	pthread_sigmask(SIG_SETMASK, NULL, &now);
	return sigismember(&now, SIGINT);
}

/* A thread given back inside a block must not let the signal through: the
 * private directory it came before is not removed yet.  (The first version
 * restored, at the thread's leave, the mask saved at its enter.) */
START_TEST(test_pending_signal_waits_for_the_block)
{
	att_defer_block();
	ck_assert(!att_defer_active());
	att_defer_enter();
	ck_assert(att_defer_active());
	raise(SIGINT);
	ck_assert_int_eq(att_defer_pending(), SIGINT);
	att_defer_leave();
	ck_assert(!att_defer_active());
	ck_assert_int_eq(got, 0);
	ck_assert(int_blocked());
	att_defer_unblock();
	ck_assert_int_eq(got, 1);
	ck_assert(!int_blocked());
}
END_TEST

/* Taken by a wait for the held thread (it cut the call short), the signal is
 * raised again once, at the end of the block. */
START_TEST(test_signal_taken_by_a_wait_comes_back_once)
{
	att_defer_block();
	att_defer_enter();
	raise(SIGINT);
	ck_assert_int_eq(att_defer_wait(1000000000), SIGINT);
	att_defer_leave();
	ck_assert_int_eq(got, 0);
	ck_assert_int_eq(att_defer_pending(), SIGINT);
	att_defer_unblock();
	ck_assert_int_eq(got, 1);
	/* A thread held after the block starts afresh. */
	att_defer_enter();
	ck_assert_int_eq(att_defer_pending(), 0);
	att_defer_leave();
	ck_assert_int_eq(got, 1);
}
END_TEST

Suite *suite_defer(void)
{
	Suite *s = suite_create("defer");
	TCase *tc = tcase_create("nesting");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pending_signal_waits_for_the_block);
	tcase_add_test(tc, test_signal_taken_by_a_wait_comes_back_once);
	suite_add_tcase(s, tc);
	return s;
}
