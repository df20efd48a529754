/* check_mem.c -- reading many pieces of a process's memory at once, an unmapped one among them. */
#include <check.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

Suite *suite_mem(void)
{
	Suite *s = suite_create("mem");
	TCase *t = tcase_create("pieces");

	tcase_add_test(t, test_mem_read_pieces_skips_the_unmapped_one);
	suite_add_tcase(s, t);
	return s;
}
