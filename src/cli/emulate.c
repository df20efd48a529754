/* emulate.c -- opening the session: in the live process, emulated on a copy
 * of it (--emulate), or emulated on a core file (the core command). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "cli.h"

/* Why command @k cannot run emulated, or NULL.  Emulation changes only a
 * copy: anything meant to change the real process would silently do nothing. */
static const char *emulate_refuses(const struct cli_cmd *k, int argc, char **argv, int core)
{
	if (core && (!strcmp(k->name, "threads") || !strcmp(k->name, "watch")))
		return "needs a live process, not a core file";
	static const char *const prof_writes[] = { "on", "off", "reset", "gdump", "window" };

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
	const char *why = c->emulate ? emulate_refuses(k, argc, argv, 0) : NULL;

	if (why)
		return cli_error(EXIT_USAGE, "%s%s%s: %s", k->name, argc > 1 && !strcmp(k->name, "prof")
				 ? " " : "", argc > 1 && !strcmp(k->name, "prof") ? argv[1] : "", why);
	if (c->emulate ? jma_open_emulated(c->s, c->pid) : jma_open(c->s, c->pid))
		return cli_fail_session(c);
	return EXIT_OK;
}

static const struct cli_cmd *live_cmd(const char *name)
{
	for (const struct cli_cmd *k = cli_commands; k->name; k++)
		if (k->live && !strcmp(k->name, name))
			return k;
	return NULL;
}

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
	if (!live_cmd(argv[i]))
		exe = argv[i++];
	if (i >= argc || !(k = live_cmd(argv[i])))
		return cli_usage(c, "core", "need a COMMAND after CORE [EXECUTABLE]");
	if ((why = emulate_refuses(k, argc - i, argv + i, 1)))
		return cli_error(EXIT_USAGE, "core: %s: %s", k->name, why);
	unsetenv("DEBUGINFOD_URLS");
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
