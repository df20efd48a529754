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
	} else if (!strncmp(want + n, ":int", 4) && (!want[n + 4] || want[n + 4] == ':')) {
		/* A Ctrl-C at this instant (or at the Nth pass of the step, with
		 * ":int:N", so a test can reach every call of a command): it goes
		 * where any SIGINT goes (defer.h). */
		static unsigned long passes;
		unsigned long nth = want[n + 4] ? strtoul(want + n + 5, NULL, 10) : 1;

		if (!want[n + 4] || ++passes == nth)
			raise(SIGINT);
	}
}
