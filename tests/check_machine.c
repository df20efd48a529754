/* check_machine.c -- a target's machine by ELF e_machine (attach/machine.h): the registry, and
 * the TLS placement each variant gives, with the values the census computed inline before. */
#include <check.h>
#include <elf.h>

#include "attach/machine.h"

START_TEST(test_machine_of)
{
	ck_assert_ptr_eq(att_machine_of(EM_X86_64), &att_machine_x86_64);
	ck_assert_ptr_eq(att_machine_of(EM_AARCH64), &att_machine_aarch64);
	ck_assert_ptr_null(att_machine_of(EM_RISCV));
	ck_assert_str_eq(att_machine_of(EM_AARCH64)->name, "arm64");
	/* pthread_mutex_t and the default page: a 5.3 rtree's root after 8 + 64 + 40 + 8
	 * bytes on x86_64 (0x78), 8 + 64 + 48 + 8 on arm64 (0x80). */
	ck_assert_uint_eq(att_machine_x86_64.pthread_mutex_size, 40);
	ck_assert_uint_eq(att_machine_aarch64.pthread_mutex_size, 48);
	ck_assert_uint_eq(att_machine_x86_64.lg_page_max, 12);
	ck_assert_uint_eq(att_machine_aarch64.lg_page_max, 16);
}
END_TEST

/* An executable's TLS block: x86_64 ends it at the thread pointer (the block rounded up to its
 * alignment), arm64 starts it past the 16-byte TCB, aligned. */
START_TEST(test_machine_tls_exec)
{
	const struct att_machine *x = &att_machine_x86_64, *a = &att_machine_aarch64;

	ck_assert_int_eq(att_machine_tls_exec(x, 0x1848, 64, 0x10), 0x10 - 0x1880);
	ck_assert_int_eq(att_machine_tls_exec(x, 0x1848, 1, 0), -0x1848);
	ck_assert_int_eq(att_machine_tls_exec(a, 0x1848, 64, 0x10), 64 + 0x10);
	ck_assert_int_eq(att_machine_tls_exec(a, 0x1848, 8, 0x10), 16 + 0x10);
	ck_assert_int_eq(att_machine_tls_exec(a, 0x1848, 1, 0), 16);
}
END_TEST

/* A TP-offset slot's value: below the thread pointer on x86_64, above on arm64, within 4 GiB. */
START_TEST(test_machine_tpoff)
{
	const struct att_machine *x = &att_machine_x86_64, *a = &att_machine_aarch64;

	ck_assert(att_machine_tpoff_ok(x, -0x1880));
	ck_assert(!att_machine_tpoff_ok(x, 0x10));
	ck_assert(!att_machine_tpoff_ok(x, 0));
	ck_assert(!att_machine_tpoff_ok(x, -(1LL << 32)));
	ck_assert(att_machine_tpoff_ok(a, 0x10));
	ck_assert(!att_machine_tpoff_ok(a, -0x10));
	ck_assert(!att_machine_tpoff_ok(a, 1LL << 32));
}
END_TEST

Suite *suite_machine(void)
{
	Suite *s = suite_create("machine");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_machine_of);
	tcase_add_test(tc, test_machine_tls_exec);
	tcase_add_test(tc, test_machine_tpoff);
	suite_add_tcase(s, tc);
	return s;
}
