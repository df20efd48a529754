/* check_heap_fuzz.c -- replays the fuzzing corpus (tests/fuzz/corpus) through
 * the libFuzzer harness, so every input that once found a bug or new code
 * stays tested in `make check` (and under ASan+UBSan there). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/heap_fuzz.c"
#include "tutil.h"

#define CORPUS "tests/fuzz/corpus"

START_TEST(test_heap_fuzz_corpus)
{
	ck_assert_int_ge(tu_replay_corpus(CORPUS, LLVMFuzzerTestOneInput), 4);
}
END_TEST

Suite *suite_heap_fuzz(void)
{
	Suite *s = suite_create("heap_fuzz");
	TCase *tc = tcase_create("corpus");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_heap_fuzz_corpus);
	suite_add_tcase(s, tc);
	return s;
}
