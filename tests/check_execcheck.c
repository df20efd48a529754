/* check_execcheck.c -- the exec mark on a real child: the same program keeps
 * it, a new program (the child exec()s) does not, read the short way (16
 * bytes where auxv said) and the long way (auxv again); zeroed AT_RANDOM
 * bytes count as a change; a process's identity ends when it exits. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jemattach/session.h"
#include "process/execcheck.h"

/* A child that waits for a byte on a pipe, then executes sleep. */
static pid_t child_then_exec(int *go)
{
	int p[2];
	pid_t c;

	ck_assert_int_eq(pipe(p), 0);
	c = fork();
	if (c == 0) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) == 1)
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(1);
	}
	ck_assert_int_gt(c, 0);
	close(p[0]);
	*go = p[1];
	return c;
}

START_TEST(test_exec_mark_changes_at_exec)
{
	struct jma_exec_where w;
	struct timespec ms10 = { 0, 10000000 };
	int go;
	pid_t c = child_then_exec(&go);
	uint64_t mark = proc_exec_mark_at(c, &w);

	ck_assert_uint_ne(mark, 0);
	ck_assert_uint_ne(w.rnd_at, 0);
	ck_assert_uint_ne(w.vdso, 0);
	ck_assert_uint_eq(jma_exec_mark(c), mark);
	ck_assert_int_eq(proc_exec_same(c, mark, &w), 0);
	ck_assert_int_eq(proc_exec_same(c, mark, NULL), 0);
	ck_assert_int_eq(write(go, "x", 1), 1);
	/* Until /proc shows the new program (its auxv changes with it). */
	for (int i = 0; i < 500 && jma_exec_mark(c) == mark; i++)
		nanosleep(&ms10, NULL);
	ck_assert_uint_ne(jma_exec_mark(c), mark);
	ck_assert_int_eq(proc_exec_same(c, mark, &w), -ENOEXEC);
	ck_assert_int_eq(proc_exec_same(c, mark, NULL), -ENOEXEC);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	close(go);
}
END_TEST

/* A child whose AT_RANDOM bytes are zeros (a hostile program's doing): its
 * mark is 0, and a mark of 0 never matches, then or now. */
START_TEST(test_exec_mark_zeroed_random_is_a_change)
{
	struct jma_exec_where w;
	struct timespec ms10 = { 0, 10000000 };
	int p[2];
	pid_t c;
	uint64_t mark;

	ck_assert_int_eq(pipe(p), 0);
	c = fork();
	if (c == 0) {
		memset((void *)getauxval(AT_RANDOM), 0, 16);
		ck_assert_int_eq(write(p[1], "z", 1), 1);
		pause();
		_exit(0);
	}
	{
		char b;

		ck_assert_int_eq(read(p[0], &b, 1), 1);
	}
	mark = proc_exec_mark_at(c, &w);
	ck_assert_uint_eq(mark, 0);
	ck_assert_uint_ne(w.rnd_at, 0);
	ck_assert_int_eq(proc_exec_same(c, mark, &w), -ENOEXEC);
	ck_assert_int_eq(proc_exec_same(c, mark, NULL), -ENOEXEC);
	ck_assert_int_eq(proc_exec_same(c, proc_exec_mark_at(getpid(), NULL), &w), -ENOEXEC);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	/* Gone: said so. */
	for (int i = 0; i < 100 && !kill(c, 0); i++)
		nanosleep(&ms10, NULL);
	ck_assert_int_eq(proc_exec_same(c, 1, &w), -ESRCH);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* The identity of a process: the same while it runs, changed once it has
 * exited (a zombie already, for the pidfd) -- by pidfd, and by start time
 * where there is no pidfd. */
START_TEST(test_exec_ident_ends_with_the_process)
{
	struct jma_exec_ident id, by_time;
	struct timespec ms10 = { 0, 10000000 };
	pid_t c = fork();

	if (c == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(sess_exec_ident_take(c, &id), 0);
	ck_assert_int_ge(id.pidfd, 0);
	ck_assert_uint_ne(id.start, 0);
	by_time = (struct jma_exec_ident){ .pidfd = -1, .start = id.start };
	ck_assert_int_eq(sess_exec_ident_same(c, &id), 0);
	ck_assert_int_eq(sess_exec_ident_same(c, &by_time), 0);
	/* Another process (started before: not in the same clock tick) is not
	 * this one. */
	ck_assert_int_eq(sess_exec_ident_same(1, &by_time), -ESRCH);
	kill(c, SIGKILL);
	for (int i = 0; i < 100 && !sess_exec_ident_same(c, &id); i++)
		nanosleep(&ms10, NULL);
	ck_assert_int_eq(sess_exec_ident_same(c, &id), -ESRCH);	/* a zombie */
	waitpid(c, NULL, 0);
	ck_assert_int_eq(sess_exec_ident_same(c, &id), -ESRCH);
	ck_assert_int_eq(sess_exec_ident_same(c, &by_time), -ESRCH);
	sess_exec_ident_release(&id);
	ck_assert_int_eq(id.pidfd, -1);
	ck_assert_int_eq(sess_exec_ident_take(c, &id), -ESRCH);
}
END_TEST

Suite *suite_execcheck(void)
{
	Suite *s = suite_create("execcheck");
	TCase *t = tcase_create("mark");

	tcase_add_test(t, test_exec_mark_changes_at_exec);
	tcase_add_test(t, test_exec_mark_zeroed_random_is_a_change);
	tcase_add_test(t, test_exec_ident_ends_with_the_process);
	suite_add_tcase(s, t);
	return s;
}
