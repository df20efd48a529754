/* check_heap_fuzz.c -- replays the fuzzing corpus (tests/fuzz/corpus) through
 * the libFuzzer harness, so every input that once found a bug or new code
 * stays tested in `make check` (and under ASan+UBSan there). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/heap_fuzz.c"

#define CORPUS "tests/fuzz/corpus"

START_TEST(test_heap_fuzz_corpus)
{
	DIR *d = opendir(CORPUS);
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d != NULL, "cannot open %s (run from the top of the tree)", CORPUS);
	while ((e = readdir(d))) {
		char path[512];
		unsigned char *buf;
		FILE *f;
		long len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
		f = fopen(path, "rb");
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
		len = ftell(f);
		rewind(f);
		buf = malloc((size_t)len + 1);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 4);
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
