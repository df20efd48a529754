/* check_mallctl.c -- what mallctl's errors say (src/jemalloc/mallctl.c):
 * pure logic; the calls themselves need a process (tests/integration). */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <jemattach.h>

START_TEST(test_mallctl_strerror_names_the_errno)
{
	static const struct { int err; const char *start; } cases[] = {
		{ EINVAL, "EINVAL: " }, { EPERM, "EPERM: " }, { EAGAIN, "EAGAIN: " },
		{ EFAULT, "EFAULT: " }, { EBUSY, "EBUSY: " }, { EFBIG, "EFBIG: " },
		{ ENOENT, "ENOENT: " },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *m = jma_mallctl_strerror("opt.narenas", cases[i].err);

		ck_assert_msg(!strncmp(m, cases[i].start, strlen(cases[i].start)), "%d: %s",
			      cases[i].err, m);
		/* Negated, as library calls return it: the same words. */
		ck_assert_str_eq(jma_mallctl_strerror("opt.narenas", -cases[i].err), m);
	}
	/* Others: the C library's words. */
	ck_assert_str_eq(jma_mallctl_strerror("epoch", ENOMEM), strerror(ENOMEM));
	ck_assert_str_eq(jma_mallctl_strerror("epoch", -EIO), strerror(EIO));
}
END_TEST

/* The same errno means different things for different names. */
START_TEST(test_mallctl_strerror_depends_on_the_name)
{
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("prof.active", ENOENT), "profiling"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("thread.prof.name", ENOENT), "profiling"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("opt.prof", ENOENT), "no such mallctl name"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("profx", ENOENT), "no such mallctl name"));
	ck_assert_ptr_nonnull(strstr(jma_mallctl_strerror("prof.dump", EFAULT), "the dump failed"));
	ck_assert_ptr_null(strstr(jma_mallctl_strerror("prof.reset", EFAULT), "dump"));
	ck_assert_ptr_null(strstr(jma_mallctl_strerror("", ENOENT), "profiling"));
}
END_TEST

Suite *suite_mallctl(void)
{
	Suite *s = suite_create("mallctl");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_mallctl_strerror_names_the_errno);
	tcase_add_test(tc, test_mallctl_strerror_depends_on_the_name);
	suite_add_tcase(s, tc);
	return s;
}
