/* check_thread.c -- seizing and letting go of a thread that signals keep
 * waking (attach/thread.c), against a live process. */
#include <check.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "attach/call.h"
#include "tutil.h"

/* A 20 kHz timer signal on a thread asleep in read(2): most seizes meet a
 * signal-delivery stop.  The fixture counts every expiration, exactly. */
static struct tproc p;

static void setup(void)
{
	char *env[] = { "TIMER_US=50", NULL };

	tproc_start(&p, "timerfix", env);
}

static void teardown(void)
{
	ck_assert_str_eq(tproc_cmd(&p, "lost"), "0");
	tproc_stop(&p);
}

static void seize(struct att_thread *t, int i)
{
	att_thread_init(t, p.pid, p.pid);
	ck_assert_msg(att_thread_seize(t, 3000) == 0, "seize %d: %s", i, t->err);
}

/* A signal dequeued as our PTRACE_INTERRUPT came in takes its place: the
 * seize used to wait for its timeout, and the detach after it dropped the
 * signal it then stopped with. */
START_TEST(test_seize_and_release_lose_no_signal)
{
	for (int i = 0; i < 2000; i++) {
		struct att_thread t;

		seize(&t, i);
		if (i % 2)
			ck_assert_msg(att_thread_hijack(&t) == 0, "hijack %d: %s", i, t.err);
		ck_assert_msg(att_thread_release(&t) == 0, "release %d: %s", i, t.err);
	}
}
END_TEST

/* A thread let run while still traced (a call left to finish on its own)
 * is stopped again to detach it: the stop it then reports is as often a
 * signal-delivery stop, whose signal the detach must deliver. */
START_TEST(test_detach_of_a_running_thread_delivers_its_signal)
{
	for (int i = 0; i < 200; i++) {
		struct att_thread t;

		seize(&t, i);
		ck_assert_int_eq(ptrace(PTRACE_CONT, t.tid, 0, 0), 0);
		t.stopped = 0;
		usleep(200);
		ck_assert_msg(att_thread_detach(&t) == 0, "detach %d: %s", i, t.err);
	}
}
END_TEST

Suite *suite_thread(void)
{
	Suite *s = suite_create("thread");
	TCase *tc = tcase_create("signals");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_seize_and_release_lose_no_signal);
	tcase_add_test(tc, test_detach_of_a_running_thread_delivers_its_signal);
	suite_add_tcase(s, tc);
	return s;
}
