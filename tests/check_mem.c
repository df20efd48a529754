/* check_mem.c -- reading many pieces of a process's memory at once, an unmapped one among them. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/clock.h"
#include "attach/mem.h"

START_TEST(test_mem_read_pieces_skips_the_unmapped_one)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char out[4][64];
	struct att_piece p[4];

	ck_assert_ptr_ne(m, MAP_FAILED);
	memset(m, 'a', (size_t)pg);
	memset(m + 2 * pg, 'c', (size_t)pg);
	ck_assert_int_eq(munmap(m + pg, (size_t)pg), 0);
	memset(out, 0, sizeof(out));
	/* In order: readable, unmapped (the read stops there), readable, and
	 * one running into the hole from below (partly readable: failed). */
	p[0] = (struct att_piece){ (uintptr_t)m, out[0], 64, 0 };
	p[1] = (struct att_piece){ (uintptr_t)(m + pg + 8), out[1], 64, 1 };
	p[2] = (struct att_piece){ (uintptr_t)(m + 2 * pg), out[2], 64, 0 };
	p[3] = (struct att_piece){ (uintptr_t)(m + pg - 32), out[3], 64, 1 };
	ck_assert_int_eq(att_mem_read_pieces(getpid(), p, 4), 0);
	ck_assert_int_eq(p[0].ok, 1);
	ck_assert_int_eq(p[1].ok, 0);
	ck_assert_int_eq(p[2].ok, 1);
	ck_assert_int_eq(p[3].ok, 0);
	ck_assert_int_eq(out[0][63], 'a');
	ck_assert_int_eq(out[2][0], 'c');
	munmap(m, (size_t)pg);
	munmap(m + 2 * pg, (size_t)pg);
}
END_TEST

/* A page of a child registered with a userfaultfd that never serves it: a
 * read of it waits for ever (killably; no other signal ends it).  The
 * helper is given up on at the timeout, and the next read works. */
START_TEST(test_mem_read_never_answered_is_given_up)
{
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ready[2], v = 7, got = 0;
	int64_t t0;
	pid_t c;
	char x = 0;

	ck_assert_ptr_ne(page, MAP_FAILED);
	ck_assert_int_eq(pipe(ready), 0);
	c = fork();
	if (c == 0) {
		int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register r = { .range = { (uintptr_t)page, 4096 },
					     .mode = UFFDIO_REGISTER_MODE_MISSING };

		x = fd >= 0 && !ioctl(fd, UFFDIO_API, &api) && !ioctl(fd, UFFDIO_REGISTER, &r) ? 'R' : 'E';
		if (write(ready[1], &x, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	ck_assert_int_eq(read(ready[0], &x, 1), 1);
	if (x != 'R') {		/* not privileged enough for a userfaultfd of kernel faults */
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		return;
	}
	att_mem_set_timeout(300);
	t0 = att_now_ns();
	ck_assert_int_eq(att_mem_read(c, (uintptr_t)page, &got, sizeof(got)), -ETIMEDOUT);
	ck_assert_int_lt(att_now_ns() - t0, 3000000000LL);
	ck_assert_ptr_nonnull(strstr(att_mem_why(), "did not end within 300 ms"));
	/* The mapping is not tried again; the rest of the process still is. */
	ck_assert_int_eq(att_mem_read(c, (uintptr_t)page, &got, sizeof(got)), -ETIMEDOUT);
	ck_assert_int_eq(att_mem_read(c, (uintptr_t)&v, &got, sizeof(got)), 0);
	ck_assert_int_eq(got, 7);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	att_mem_set_timeout(10000);
	munmap(page, 4096);
}
END_TEST

Suite *suite_mem(void)
{
	Suite *s = suite_create("mem");
	TCase *t = tcase_create("pieces");

	tcase_add_test(t, test_mem_read_pieces_skips_the_unmapped_one);
	tcase_add_test(t, test_mem_read_never_answered_is_given_up);
	suite_add_tcase(s, t);
	return s;
}
