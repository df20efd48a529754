/* cmd_core.c -- `jemattach core CORE [EXECUTABLE] COMMAND`: a command run on
 * jemalloc emulated over a core file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "cli.h"

/* core [--sysroot DIR] CORE [EXECUTABLE] COMMAND [ARGS] */
int cmd_core(struct cli *c, int argc, char **argv)
{
	const char *sysroot = NULL, *core, *exe = NULL, *why;
	const struct cli_cmd *k;
	int i = 1, rc;

	if (i < argc && !strcmp(argv[i], "--sysroot")) {
		if (i + 1 >= argc)
			return cli_usage(c, "core", "--sysroot needs a directory");
		sysroot = argv[i + 1];
		i += 2;
	}
	if (i + 1 >= argc)
		return cli_usage(c, "core", "need CORE and a COMMAND");
	core = argv[i++];
	if (!cli_find_live(argv[i]))
		exe = argv[i++];
	if (i >= argc || !(k = cli_find_live(argv[i])))
		return cli_usage(c, "core", "need a COMMAND after CORE [EXECUTABLE]");
	if ((why = cli_emulate_refuses(k, argc - i, argv + i, 1)))
		return cli_error(EXIT_USAGE, "core: %s: %s", k->name, why);
	c->s = jma_new(&c->opt);
	if (!c->s)
		return cli_error(EXIT_TARGET, "out of memory");
	if (jma_open_core(c->s, core, exe, sysroot)) {
		rc = cli_fail_session(c);
	} else {
		optind = 0;
		rc = k->run(c, argc - i, argv + i);
	}
	jma_free(c->s);
	c->s = NULL;
	if (fflush(stdout) || ferror(stdout))
		return rc ? rc : cli_error(EXIT_TARGET, "writing output: %s", strerror(errno));
	return rc;
}
