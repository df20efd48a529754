/* check_census_fuzz.c -- replays the census snapshot corpus (tests/fuzz/census_corpus)
 * through the libFuzzer harness, in `make check` and under ASan+UBSan there. */
#include <check.h>

/* The heap harness defines the same entry point in this runner. */
#define LLVMFuzzerTestOneInput census_fuzz_one
#include "fuzz/census_fuzz.c"
#include "tutil.h"

START_TEST(test_census_fuzz_corpus)
{
	ck_assert_int_ge(tu_replay_corpus("tests/fuzz/census_corpus", census_fuzz_one), 3);
}
END_TEST

Suite *suite_census_fuzz(void)
{
	Suite *s = suite_create("census_fuzz");
	TCase *tc = tcase_create("corpus");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_census_fuzz_corpus);
	suite_add_tcase(s, tc);
	return s;
}
