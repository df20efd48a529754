/* check_demangle.c -- C++ names as users read them: sym_dnames and the heap
 * string table's demangled ids (pure logic, no target). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "symbols/demangle.h"
#include "symbols/dnames.h"

START_TEST(test_demangle_names)
{
	struct sym_dnames *d = sym_dnames_new();
	const char *a, *b, *c = "keep_big";

	ck_assert_ptr_nonnull(d);
	a = sym_dnames_get(d, "_ZN9AllocatorILb0EE7reallocEPvmmm");
	ck_assert_str_eq(a, "Allocator<false>::realloc(void*, unsigned long, unsigned long, unsigned long)");
	/* Kept: the same pointer the second time, not demangled again. */
	b = sym_dnames_get(d, "_ZN9AllocatorILb0EE7reallocEPvmmm");
	ck_assert_ptr_eq(a, b);
	ck_assert_str_eq(sym_dnames_get(d, "_ZN4shop5Order3addEi"), "shop::Order::add(int)");
	/* C names, malformed names and bare type codes stay as they are. */
	ck_assert_ptr_eq(sym_dnames_get(d, c), c);
	ck_assert_str_eq(sym_dnames_get(d, "_Zgarbage"), "_Zgarbage");
	ck_assert_str_eq(sym_dnames_get(d, "i"), "i");
	ck_assert_ptr_null(sym_dnames_get(d, NULL));
	sym_dnames_free(d);
}
END_TEST

/* Many names: the table grows and keeps every one. */
START_TEST(test_demangle_many)
{
	struct sym_dnames *d = sym_dnames_new();
	char name[32], m[64], want[64];

	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		snprintf(m, sizeof(m), "_Z%zu%sv", strlen(name), name);
		snprintf(want, sizeof(want), "%s()", name);
		ck_assert_str_eq(sym_dnames_get(d, m), want);
	}
	ck_assert_str_eq(sym_dnames_get(d, "_Z3fn5v"), "fn5()");
	sym_dnames_free(d);
}
END_TEST

START_TEST(test_demangle_strtab)
{
	struct heap_strtab t;
	uint32_t m, c, dm;

	ck_assert_int_eq(heap_strtab_init(&t), 0);
	m = heap_str(&t, "_ZN4shop5Order3addEi");
	c = heap_str(&t, "keep_big");
	dm = heap_str_demangled(&t, m);
	ck_assert_uint_ne(dm, m);
	ck_assert_str_eq(t.str[dm], "shop::Order::add(int)");
	ck_assert_uint_eq(heap_str_demangled(&t, m), dm);
	ck_assert_uint_eq(heap_str_demangled(&t, c), c);
	/* The demangled form is its own display form. */
	ck_assert_uint_eq(heap_str_demangled(&t, dm), dm);
	ck_assert_uint_eq(heap_str_demangled(&t, 100000), UINT32_MAX);
	heap_strtab_free(&t);
}
END_TEST

Suite *suite_demangle(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("logic");

	tcase_add_test(tc, test_demangle_names);
	tcase_add_test(tc, test_demangle_many);
	tcase_add_test(tc, test_demangle_strtab);
	suite_add_tcase(s, tc);
	return s;
}
