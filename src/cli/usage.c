/* usage.c -- what every command shares: errors and usage messages, finding a command. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *const cli_prog = "jemattach";

int cli_error(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_fail_session(struct cli *c)
{
	enum jma_errkind k = jma_errkind(c->s);

	return cli_error(k == JMA_OK ? EXIT_TARGET : (int)k, "%s", jma_errmsg(c->s));
}

const struct cli_cmd *cli_find(const char *name)
{
	for (const struct cli_cmd *k = cli_commands; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* A command's synopsis, one line per form, each line prefixed with @lead
 * (and "PID " for live commands). */
void cli_print_synopsis(FILE *f, const struct cli_cmd *k, const char *lead)
{
	for (const char *p = k->synopsis; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "%s%s%.*s\n", lead, k->live ? "PID " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

int cli_usage(const struct cli *c, const char *cmd, const char *fmt, ...)
{
	const struct cli_cmd *k = cli_find(cmd);
	va_list ap;

	(void)c;
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (k) {
		char lead[64];
		snprintf(lead, sizeof(lead), "usage: %s ", cli_prog);
		cli_print_synopsis(stderr, k, lead);
	}
	return EXIT_USAGE;
}

/* A command that runs on a process (for shell and core, which run others). */
const struct cli_cmd *cli_find_live(const char *name)
{
	const struct cli_cmd *k = cli_find(name);

	return k && k->live ? k : NULL;
}
