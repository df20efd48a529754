/* crashpoint.c -- test-only crashes at engine steps (see crashpoint.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoint.h"

void att_crashpoint(const char *step)
{
	const char *want = getenv("JEMATTACH_TEST_CRASH_AT");

	if (want && !strcmp(want, step)) {
		/* Default action even if someone installed a handler: a real crash. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
}
