/* check_procfs.c -- parsing /proc/PID/maps and finding an address in it (pure logic),
 * a live thread's state from /proc/PID/task/TID/stat, a sleeper's system call and context
 * switches, and the auxiliary vector. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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
	ck_assert_uint_eq(m[3].dev, 0x10300000002ULL);
	ck_assert_str_eq(m[4].path, "[stack]");
	ck_assert_uint_eq(m[5].start, 0xffffffffff600000ULL);
	att_maps_free(m, n);
}
END_TEST

/* Cut or garbled lines are skipped, the last line needs no newline. */
START_TEST(test_procfs_maps_parse_damaged)
{
	static const char text[] =
		"\n"
		"1000-\n"
		"1000-2000 r-xp\n"
		"1000-2000 r-xp 0 fd:01\n"
		"1000-2000 r-xp zz fd:01 7 /x\n"
		"-2000 r-xp 0 fd:01 7 /x\n"
		"1000-2000 r-xp 0 fd:01 7 /lib/a.so\n"
		"2000-3000 rw-p 1000 fd:01 7";
	struct att_map *m;
	size_t n;

	ck_assert_int_eq(att_maps_parse(text, &m, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(m[0].path, "/lib/a.so");
	ck_assert_uint_eq(m[1].start, 0x2000);
	ck_assert_uint_eq(m[1].offset, 0x1000);
	ck_assert_uint_eq(m[1].inode, 7);
	ck_assert_ptr_null(m[1].path);
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

/* Ours is what the loader says; a child's vDSO moves when it execs (ASLR);
 * a process that is gone has none. */
START_TEST(test_procfs_auxv)
{
	static const uint64_t types[2] = { AT_SYSINFO_EHDR, AT_RANDOM };
	int fds[2];
	pid_t child;
	uint64_t v[2], before, after;
	char c;

	att_proc_auxv(getpid(), types, v, 2);
	ck_assert_uint_eq(v[0], getauxval(AT_SYSINFO_EHDR));
	ck_assert_uint_eq(v[1], getauxval(AT_RANDOM));
	ck_assert_int_eq(pipe(fds), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (!child) {
		close(fds[1]);
		/* Waits for the parent's mark, then becomes another program. */
		if (read(fds[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(1);
	}
	close(fds[0]);
	att_proc_auxv(child, types, &before, 1);
	ck_assert_uint_eq(before, getauxval(AT_SYSINFO_EHDR));
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	after = before;
	/* Mid-exec the auxv reads as nothing (0): wait past that too, up to 10 s
	 * (1 s was too short once under a load average of 8). */
	for (int i = 0; i < 5000 && (after == before || after == 0); i++) {
		usleep(2000);
		att_proc_auxv(child, types, &after, 1);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fds[1]);
	ck_assert_uint_ne(after, 0);
	ck_assert_uint_ne(after, before);
	att_proc_auxv(child, types, v, 2);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 0);
}
END_TEST

/* The system call libc's pause() makes: arm64 has no pause, it is ppoll. */
#ifdef SYS_pause
#define PAUSE_NR	SYS_pause
#else
#define PAUSE_NR	SYS_ppoll
#endif

/* A child asleep in pause(): its system call, where it entered it, and its
 * context switches, which do not move while it sleeps. */
START_TEST(test_procfs_sleeper_syscall_and_switches)
{
	struct att_status a, b;
	struct timespec ms20 = { 0, 20000000 };
	uint64_t sp = 0, pc = 0, sp2, pc2;
	pid_t c = fork();
	long nr = -2;

	if (c == 0) {
		for (;;)
			pause();
	}
	ck_assert_int_gt(c, 0);
	for (int i = 0; i < 200 && nr != PAUSE_NR; i++) {
		nanosleep(&ms20, NULL);
		nr = att_proc_syscall_at(c, c, &sp, &pc);
	}
	ck_assert_int_eq(nr, PAUSE_NR);
	ck_assert_uint_ne(sp, 0);
	ck_assert_uint_ne(pc, 0);
	ck_assert_int_eq(att_proc_status(c, c, &a), 0);
	nanosleep(&ms20, NULL);
	ck_assert_int_eq(att_proc_syscall_at(c, c, &sp2, &pc2), PAUSE_NR);
	ck_assert_int_eq(att_proc_status(c, c, &b), 0);
	ck_assert_uint_eq(sp2, sp);
	ck_assert_uint_eq(pc2, pc);
	ck_assert_uint_eq(b.ctxsw, a.ctxsw);
	ck_assert_uint_gt(a.ctxsw, 0);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	ck_assert_int_eq(att_proc_syscall_at(c, c, &sp, &pc), -2);
}
END_TEST

/* Threads that record their tid and sleep until told to go. */
#define MANY		300
static pthread_mutex_t many_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t many_cv = PTHREAD_COND_INITIALIZER;
static int many_go;
static pid_t many_tid[MANY];
static int many_ready;

static void *many_body(void *arg)
{
	pthread_mutex_lock(&many_mu);
	many_tid[(intptr_t)arg] = (pid_t)syscall(SYS_gettid);
	many_ready++;
	pthread_cond_broadcast(&many_cv);
	while (!many_go)
		pthread_cond_wait(&many_cv, &many_mu);
	pthread_mutex_unlock(&many_mu);
	return NULL;
}

static int listed(const pid_t *tids, size_t n, pid_t t)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == t)
			return 1;
	return 0;
}

/* More threads than one 2 KiB getdents64 holds (about 80 entries): every one
 * is listed, sorted by tid.  The main thread is listed too, though not
 * necessarily first: after pids wrap (pid_max is 32768 here) a thread's tid
 * can be below its process's, which is how CI once caught this test. */
START_TEST(test_procfs_tasks_many)
{
	pthread_t th[MANY];
	pid_t *tids;
	size_t n;

	for (intptr_t i = 0; i < MANY; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, many_body, (void *)i), 0);
	pthread_mutex_lock(&many_mu);
	while (many_ready < MANY)
		pthread_cond_wait(&many_cv, &many_mu);
	pthread_mutex_unlock(&many_mu);
	ck_assert_int_eq(att_proc_tasks(getpid(), &tids, &n), 0);
	ck_assert_uint_ge(n, MANY + 1);
	for (size_t i = 1; i < n; i++)
		ck_assert_int_lt(tids[i - 1], tids[i]);
	ck_assert_msg(listed(tids, n, getpid()), "main thread %d not listed", (int)getpid());
	for (int i = 0; i < MANY; i++)
		ck_assert_msg(listed(tids, n, many_tid[i]), "tid %d of thread %d not listed",
			      (int)many_tid[i], i);
	free(tids);
	pthread_mutex_lock(&many_mu);
	many_go = 1;
	pthread_cond_broadcast(&many_cv);
	pthread_mutex_unlock(&many_mu);
	for (int i = 0; i < MANY; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(att_proc_tasks(999999999, &tids, &n), -ESRCH);
}
END_TEST

/* A maps file many pages long, read a page at a time: every mapping made
 * here is in what att_proc_maps returns. */
START_TEST(test_procfs_maps_many_pages)
{
	enum { NMAP = 400 };
	long pg = sysconf(_SC_PAGESIZE);
	char *base = mmap(NULL, (size_t)pg * NMAP * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct att_map *m;
	char *text;
	size_t n, len;

	ck_assert_ptr_ne(base, MAP_FAILED);
	/* Every other page readable: 400 separate mappings, ~20 KiB of text. */
	for (int i = 0; i < NMAP; i++)
		ck_assert_int_eq(mprotect(base + (size_t)pg * 2 * i, (size_t)pg, PROT_READ), 0);
	ck_assert_int_eq(att_proc_read("/proc/self/maps", &text, &len), 0);
	ck_assert_uint_gt(len, 4 * 4096);
	ck_assert_uint_eq(strlen(text), len);
	free(text);
	ck_assert_int_eq(att_proc_maps(getpid(), &m, &n), 0);
	for (int i = 0; i < NMAP; i++) {
		const struct att_map *x = att_maps_find(m, n, (uint64_t)(uintptr_t)(base + (size_t)pg * 2 * i));

		ck_assert_ptr_nonnull(x);
		ck_assert_uint_eq(x->start, (uint64_t)(uintptr_t)(base + (size_t)pg * 2 * i));
		ck_assert_uint_eq(x->end - x->start, (uint64_t)pg);
		ck_assert_str_eq(x->perms, "r--p");
	}
	att_maps_free(m, n);
	munmap(base, (size_t)pg * NMAP * 2);
}
END_TEST

START_TEST(test_procfs_maps_run)
{
	static const char text[] =
		"1000-2000 r--p 00000000 fd:01 7 /lib/a.so\n"
		"2000-3000 r-xp 00001000 fd:01 7 /lib/a.so\n"
		"3000-4000 rw-p 00002000 fd:01 7 /lib/a.so\n"
		"4000-5000 r--p 00000000 fd:01 7 /lib/a.so\n"
		"5000-6000 rw-p 00000000 00:00 0 \n"
		"6000-7000 r--p 00000000 fd:01 7 /lib/a.so\n"
		"7000-8000 r-xp 00001000 fd:01 9 /lib/a.so\n";
	/* Mapping i's run is [first, last]: the file mapped again from offset
	 * 0, even right after the loader's run (3), and another file at that
	 * path (6: other inode) are runs of their own. */
	static const size_t want[][3] = { { 1, 0, 2 }, { 2, 0, 2 }, { 3, 3, 3 }, { 4, 4, 4 },
					  { 5, 5, 5 }, { 6, 6, 6 } };
	struct att_map *m;
	size_t n, first, last;

	ck_assert_int_eq(att_maps_parse(text, &m, &n), 0);
	ck_assert_uint_eq(n, 7);
	ck_assert_uint_eq(m[6].dev, 0xfd00000001ULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		att_maps_run(m, n, want[i][0], &first, &last);
		ck_assert_uint_eq(first, want[i][1]);
		ck_assert_uint_eq(last, want[i][2]);
	}
	att_maps_free(m, n);
}
END_TEST

Suite *suite_procfs(void)
{
	Suite *s = suite_create("procfs");
	TCase *t = tcase_create("parse");

	/* Live children (an exec awaited up to 10 s, 300 threads): a loaded
	 * machine is slow, not wrong. */
	tcase_set_timeout(t, 30);
	tcase_add_test(t, test_procfs_maps_parse);
	tcase_add_test(t, test_procfs_maps_parse_damaged);
	tcase_add_test(t, test_procfs_maps_find);
	tcase_add_test(t, test_procfs_maps_run);
	tcase_add_test(t, test_procfs_stat_of_self);
	tcase_add_test(t, test_procfs_auxv);
	tcase_add_test(t, test_procfs_sleeper_syscall_and_switches);
	tcase_add_test(t, test_procfs_tasks_many);
	tcase_add_test(t, test_procfs_maps_many_pages);
	suite_add_tcase(s, t);
	return s;
}
