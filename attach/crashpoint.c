/* crashpoint.c -- test-only crashes at engine steps (see crashpoint.h): built
 * into the test build of the tool only (Makefile, HOOK_OBJS). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "crashpoint.h"

void att_crashpoint(const char *step)
{
	const char *want = getenv("JEMATTACH_TEST_CRASH_AT");
	size_t n = strlen(step);

	if (!want || strncmp(want, step, n))
		return;
	if (!want[n]) {
		/* Default action even if someone installed a handler: a real crash. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	} else if (!strcmp(want + n, ":int")) {
		/* A Ctrl-C at this instant: it goes where any SIGINT goes (defer.h). */
		raise(SIGINT);
	}
}
