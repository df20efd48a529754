/* open.c -- opening the session for a command: in the live process, or
 * emulated on a copy of it (--emulate). */
#include <string.h>

#include "cli.h"

/* Why command @k cannot run emulated, or NULL.  Emulation changes only a
 * copy: anything meant to change the real process would silently do nothing. */
const char *cli_emulate_refuses(const struct cli_cmd *k, int argc, char **argv, int core)
{
	const struct cli_sub *sub;
	unsigned props = cli_props(k, argc, argv, &sub);

	if (core && props & CLI_LIVE_ONLY)
		return "needs a live process, not a core file";
	if (!core && props & CLI_RUNS_NOTHING)
		return "reads the process's memory itself and runs nothing in it: --emulate is not "
		       "needed (--force counts a process with a thread stuck inside jemalloc)";
	if (props & CLI_WRITES && sub)
		return "changes the process's state, but jemalloc runs on a copy of its memory here "
		       "(the subcommands that only read work)";
	if (props & CLI_WRITES)
		return "changes the process, but jemalloc runs on a copy of its memory here";
	return NULL;
}

int cli_open(struct cli *c, const struct cli_cmd *k, int argc, char **argv)
{
	const char *why = c->emulate ? cli_emulate_refuses(k, argc, argv, 0) : NULL;

	if (why)
		return cli_error(EXIT_USAGE, "%s%s%s: %s", k->name, k->subs && argc > 1 ? " " : "",
				 k->subs && argc > 1 ? argv[1] : "", why);
	if (c->emulate ? jma_open_emulated(c->s, c->pid) : jma_open(c->s, c->pid))
		return cli_fail_session(c);
	return EXIT_OK;
}
