/* check_execcheck.c -- the exec mark on a real child: the same program keeps
 * it, a new program (the child exec()s) does not, read the short way (16
 * bytes where auxv said) and the long way (auxv again). */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
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
	uint64_t mark = jma_exec_mark_at(c, &w);

	ck_assert_uint_ne(mark, 0);
	ck_assert_uint_ne(w.rnd_at, 0);
	ck_assert_uint_ne(w.vdso, 0);
	ck_assert_uint_eq(jma_exec_mark(c), mark);
	ck_assert_int_eq(jma_exec_same(c, mark, &w, "", 0), 0);
	ck_assert_int_eq(jma_exec_same(c, mark, NULL, "", 0), 0);
	ck_assert_int_eq(write(go, "x", 1), 1);
	/* Until /proc shows the new program (its auxv changes with it). */
	for (int i = 0; i < 500 && jma_exec_mark(c) == mark; i++)
		nanosleep(&ms10, NULL);
	ck_assert_uint_ne(jma_exec_mark(c), mark);
	ck_assert_int_eq(jma_exec_same(c, mark, &w, "", 0), -ENOEXEC);
	ck_assert_int_eq(jma_exec_same(c, mark, NULL, "", 0), -ENOEXEC);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	close(go);
}
END_TEST

Suite *suite_execcheck(void)
{
	Suite *s = suite_create("execcheck");
	TCase *t = tcase_create("mark");

	tcase_add_test(t, test_exec_mark_changes_at_exec);
	suite_add_tcase(s, t);
	return s;
}
