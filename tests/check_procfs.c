/* check_procfs.c -- parsing /proc/PID/maps and finding an address in it (pure logic),
 * and a live thread's state and its process's layout identity from
 * /proc/PID/task/TID/stat. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/procfs.h"

static const char maps_text[] =
	"55d0a1a00000-55d0a1a02000 r--p 00000000 fd:01 1234567                    /usr/bin/prog\n"
	"55d0a1a02000-55d0a1a08000 r-xp 00002000 fd:01 1234567                    /usr/bin/prog\n"
	"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
	"not a mapping line\n"
	"7f0000100000-7f0000200000 r-xp 00010000 103:02 42 /tmp/lib with space.so (deleted)\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

START_TEST(test_procfs_maps_parse)
{
	struct att_map *m;
	size_t n;

	ck_assert_int_eq(att_maps_parse(maps_text, &m, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(m[1].start, 0x55d0a1a02000ULL);
	ck_assert_uint_eq(m[1].end, 0x55d0a1a08000ULL);
	ck_assert_str_eq(m[1].perms, "r-xp");
	ck_assert_uint_eq(m[1].offset, 0x2000);
	ck_assert_uint_eq(m[1].inode, 1234567);
	ck_assert_str_eq(m[1].path, "/usr/bin/prog");
	ck_assert_ptr_null(m[2].path);
	ck_assert_str_eq(m[3].path, "/tmp/lib with space.so (deleted)");
	ck_assert_uint_eq(m[3].offset, 0x10000);
	ck_assert_str_eq(m[4].path, "[stack]");
	ck_assert_uint_eq(m[5].start, 0xffffffffff600000ULL);
	att_maps_free(m, n);
}
END_TEST

START_TEST(test_procfs_maps_find)
{
	struct att_map *m;
	size_t n;

	ck_assert_int_eq(att_maps_parse(maps_text, &m, &n), 0);
	ck_assert_ptr_eq(att_maps_find(m, n, 0x55d0a1a00000ULL), &m[0]);
	ck_assert_ptr_eq(att_maps_find(m, n, 0x55d0a1a07fffULL), &m[1]);
	ck_assert_ptr_null(att_maps_find(m, n, 0x55d0a1a08000ULL));	/* end is exclusive */
	ck_assert_ptr_eq(att_maps_find(m, n, 0x7f0000150000ULL), &m[3]);
	ck_assert_ptr_null(att_maps_find(m, n, 0x7f0000050000ULL));	/* a hole */
	ck_assert_ptr_eq(att_maps_find(m, n, 0x7ffc00000008ULL), &m[4]);
	ck_assert_ptr_eq(att_maps_find(m, n, 0xffffffffff600010ULL), &m[5]);
	ck_assert_ptr_null(att_maps_find(m, n, 0x1000));
	ck_assert_ptr_null(att_maps_find(m, 0, 0x55d0a1a00000ULL));
	att_maps_free(m, n);
}
END_TEST

/* Our own main thread, as /proc tells it: running (it is reading the file). */
START_TEST(test_procfs_stat_of_self)
{
	char state, comm[64];

	ck_assert_int_eq(att_proc_stat(getpid(), getpid(), &state, comm, sizeof(comm)), 0);
	ck_assert_int_eq(state, 'R');
	ck_assert_int_gt((int)strlen(comm), 0);
	ck_assert_int_lt(att_proc_stat(getpid(), 1, &state, comm, sizeof(comm)), 0);
}
END_TEST

/* The layout identity is read (code bounds set), and an execve changes it: a
 * child forked from us has ours until it runs another program. */
START_TEST(test_procfs_mm_id_changes_on_exec)
{
	struct att_mm_id self, child;
	char self_exe[256] = "", child_exe[256], path[64];
	int go[2], i;
	pid_t pid;

	ck_assert_int_eq(att_proc_mm_id(getpid(), &self), 0);
	ck_assert_uint_gt(self.v[0], 0);
	ck_assert_uint_gt(self.v[1], self.v[0]);
	ck_assert_int_eq(att_proc_mm_id(getpid(), &child), 0);
	ck_assert_mem_eq(&self, &child, sizeof(self));
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	ck_assert_int_eq(att_proc_mm_id(pid, &child), 0);
	ck_assert_mem_eq(&self, &child, sizeof(self));
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	close(go[1]);
	/* Until the exec has happened: /proc/PID/exe names another program. */
	ck_assert_int_gt(readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1), 0);
	/* The array was zeroed: the name is terminated. */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (i = 0; i < 5000; i++) {
		ssize_t n = readlink(path, child_exe, sizeof(child_exe) - 1);

		if (n > 0 && (size_t)n == strlen(self_exe) && !memcmp(child_exe, self_exe, (size_t)n))
			usleep(1000);
		else
			break;
	}
	ck_assert_int_lt(i, 5000);
	ck_assert_int_eq(att_proc_mm_id(pid, &child), 0);
	ck_assert_int_ne(memcmp(&self, &child, sizeof(self)), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ck_assert_int_lt(att_proc_mm_id(pid, &child), 0);
}
END_TEST

Suite *suite_procfs(void)
{
	Suite *s = suite_create("procfs");
	TCase *t = tcase_create("parse");

	tcase_add_test(t, test_procfs_maps_parse);
	tcase_add_test(t, test_procfs_maps_find);
	tcase_add_test(t, test_procfs_stat_of_self);
	tcase_add_test(t, test_procfs_mm_id_changes_on_exec);
	suite_add_tcase(s, t);
	return s;
}
