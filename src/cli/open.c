/* open.c -- opening the session for a command: in the live process, or
 * emulated on a copy of it (--emulate). */
#include <string.h>

#include "cli.h"

/* Why command @k cannot run emulated, or NULL.  Emulation changes only a
 * copy: anything meant to change the real process would silently do nothing. */
const char *cli_emulate_refuses(const struct cli_cmd *k, int argc, char **argv, int core)
{
	if (core && (!strcmp(k->name, "threads") || !strcmp(k->name, "watch")))
		return "needs a live process, not a core file";
	static const char *const prof_writes[] = { "on", "off", "reset", "gdump", "window" };

	if (!core && !strcmp(k->name, "census"))
		return "reads the process's memory itself and runs nothing in it: --emulate is not "
		       "needed (--force counts a process with a thread stuck inside jemalloc)";
	if (!strcmp(k->name, "set") || !strcmp(k->name, "purge") || !strcmp(k->name, "decay"))
		return "changes the process, but jemalloc runs on a copy of its memory here";
	if (!strcmp(k->name, "prof") && argc > 1)
		for (size_t i = 0; i < sizeof(prof_writes) / sizeof(*prof_writes); i++)
			if (!strcmp(argv[1], prof_writes[i]))
				return "changes the process's profiling, but jemalloc runs on a copy of "
				       "its memory here (prof dump and prof status work)";
	return NULL;
}

int cli_open(struct cli *c, const struct cli_cmd *k, int argc, char **argv)
{
	const char *why = c->emulate ? cli_emulate_refuses(k, argc, argv, 0) : NULL;

	if (why)
		return cli_error(EXIT_USAGE, "%s%s%s: %s", k->name, argc > 1 && !strcmp(k->name, "prof")
				 ? " " : "", argc > 1 && !strcmp(k->name, "prof") ? argv[1] : "", why);
	if (c->emulate ? jma_open_emulated(c->s, c->pid) : jma_open(c->s, c->pid))
		return cli_fail_session(c);
	return EXIT_OK;
}
