/* runner.c -- runs every Check suite (tests/check_*.c) in one runner, one summary. */
#include <check.h>
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(all_suites) / sizeof(*all_suites); i++)
		srunner_add_suite(sr, all_suites[i]());
	/* Fork mode stays on (the default): a crashing tracee cannot take the runner down. */
	srunner_run_all(sr, getenv("CK_VERBOSITY") ? CK_ENV : CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
