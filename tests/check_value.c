/* check_value.c -- typed values and the mallctl type table (pure logic). */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <jemattach.h>

START_TEST(test_value_parse_bool)
{
	struct jma_value v;

	ck_assert_int_eq(jma_value_parse(JMA_T_BOOL, "true", &v), 0);
	ck_assert(v.b);
	ck_assert_int_eq(jma_value_parse(JMA_T_BOOL, "0", &v), 0);
	ck_assert(!v.b);
	ck_assert_int_eq(jma_value_parse(JMA_T_BOOL, "maybe", &v), -EINVAL);
}
END_TEST

START_TEST(test_value_parse_integers)
{
	struct jma_value v;

	ck_assert_int_eq(jma_value_parse(JMA_T_SIZE, "4K", &v), 0);
	ck_assert_uint_eq(v.z, 4096);
	ck_assert_int_eq(jma_value_parse(JMA_T_SIZE, "0x10", &v), 0);
	ck_assert_uint_eq(v.z, 16);
	ck_assert_int_eq(jma_value_parse(JMA_T_SSIZE, "-1", &v), 0);
	ck_assert_int_eq(v.sz, -1);
	ck_assert_int_eq(jma_value_parse(JMA_T_UNSIGNED, "4294967296", &v), -ERANGE);
	ck_assert_int_eq(jma_value_parse(JMA_T_UNSIGNED, "-3", &v), -EINVAL);
	ck_assert_int_eq(jma_value_parse(JMA_T_U64, "12abc", &v), -EINVAL);
	ck_assert_int_eq(jma_value_parse(JMA_T_U64, "", &v), -EINVAL);
	ck_assert_int_eq(jma_value_parse(JMA_T_SIZE, "99999999999999999999", &v), -ERANGE);
}
END_TEST

START_TEST(test_value_format_roundtrip)
{
	struct jma_value v;
	char buf[64];

	ck_assert_int_eq(jma_value_parse(JMA_T_SSIZE, "-42", &v), 0);
	jma_value_format(&v, buf, sizeof(buf));
	ck_assert_str_eq(buf, "-42");
	ck_assert_int_eq(jma_value_parse(JMA_T_STRING, "a b", &v), 0);
	jma_value_format(&v, buf, sizeof(buf));
	ck_assert_str_eq(buf, "a b");
	jma_value_clear(&v);
}
END_TEST

START_TEST(test_value_from_bytes_probe_sizes)
{
	struct jma_value v;
	unsigned char one = 1;
	unsigned four = 7;
	uint64_t eight = 1ULL << 40;

	ck_assert_int_eq(jma_value_from_bytes(JMA_T_UNKNOWN, &one, 1, &v), 0);
	ck_assert_int_eq(v.type, JMA_T_BOOL);
	ck_assert_int_eq(jma_value_from_bytes(JMA_T_UNKNOWN, &four, 4, &v), 0);
	ck_assert_uint_eq(v.u, 7);
	ck_assert_int_eq(jma_value_from_bytes(JMA_T_UNKNOWN, &eight, 8, &v), 0);
	ck_assert_uint_eq(v.u64, 1ULL << 40);
	ck_assert_int_eq(jma_value_from_bytes(JMA_T_SIZE, &four, 4, &v), -EINVAL);
}
END_TEST

START_TEST(test_ctl_table)
{
	enum jma_type t;
	unsigned a;

	ck_assert_int_eq(jma_ctl_lookup("stats.allocated", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_SIZE);
	ck_assert_int_eq(jma_ctl_lookup("stats.arenas.12.pdirty", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_SIZE);
	ck_assert_int_eq(jma_ctl_lookup("stats.arenas.x.pdirty", &t, &a), -ENOENT);
	ck_assert_int_eq(jma_ctl_lookup("arenas.narenas", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_UNSIGNED);
	ck_assert_int_eq(jma_ctl_lookup("prof.dump", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_STRING);
	ck_assert_uint_eq(a, JMA_ACC_W);
	ck_assert_int_eq(jma_ctl_lookup("opt.lg_prof_interval", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_SSIZE);
	ck_assert_int_eq(jma_ctl_lookup("stats.mutexes.ctl.max_num_thds", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_U32);
	ck_assert_int_eq(jma_ctl_lookup("stats.mutexes.ctl.num_ops", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_U64);
	ck_assert_int_eq(jma_ctl_lookup("arena.4096.purge", &t, &a), 0);
	ck_assert_int_eq(t, JMA_T_VOID);
	ck_assert_int_eq(jma_ctl_lookup("no.such.name", &t, &a), -ENOENT);
}
END_TEST

START_TEST(test_stats_opts)
{
	ck_assert_int_eq(jma_stats_opts_valid("Jgmdablxeh"), 0);
	ck_assert_int_eq(jma_stats_opts_valid(""), 0);
	ck_assert_int_eq(jma_stats_opts_valid("z"), -EINVAL);
	ck_assert_int_eq(jma_stats_opts_valid("J;"), -EINVAL);
}
END_TEST

Suite *suite_value(void)
{
	Suite *s = suite_create("value");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_value_parse_bool);
	tcase_add_test(tc, test_value_parse_integers);
	tcase_add_test(tc, test_value_format_roundtrip);
	tcase_add_test(tc, test_value_from_bytes_probe_sizes);
	tcase_add_test(tc, test_ctl_table);
	tcase_add_test(tc, test_stats_opts);
	suite_add_tcase(s, tc);
	return s;
}
