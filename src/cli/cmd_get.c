/* cmd_get.c -- "get" and "set": typed mallctl reads and writes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The values read, in the order asked; names that failed are left out here
 * and listed under "errors" (JSON) or on stderr (text). */
static void print_values(char **names, const struct jma_value *v, char **errs, int n, int json)
{
	int first = 1, nerr = 0;

	if (json)
		putchar('{');
	for (int i = 0; i < n; i++) {
		char buf[4200];

		if (errs[i]) {
			nerr++;
			continue;
		}
		if (json) {
			printf("%s", first ? "" : ", ");
			cli_json_string(stdout, names[i]);
			printf(": ");
			cli_json_value(stdout, &v[i]);
		} else {
			jma_value_format(&v[i], buf, sizeof(buf));
			if (n == 1)
				printf("%s\n", cli_esc(buf));
			else
				printf("%s %s\n", cli_esc(names[i]), cli_esc(buf));
		}
		first = 0;
	}
	if (json && nerr) {
		printf("%s\"errors\": {", first ? "" : ", ");
		first = 1;
		for (int i = 0; i < n; i++) {
			if (!errs[i])
				continue;
			printf("%s", first ? "" : ", ");
			cli_json_string(stdout, names[i]);
			printf(": ");
			cli_json_string(stdout, errs[i]);
			first = 0;
		}
		putchar('}');
	}
	if (json)
		printf("}\n");
	for (int i = 0; i < n; i++)
		if (errs[i])
			cli_error(EXIT_TARGET, "%s", errs[i]);
}

/* Why reading (or, @set, writing) @name is not a plain read or write of the
 * process's state, or NULL.  These are refused unless --force: a get that
 * creates an arena each time, or resets one under the application's feet, and
 * thread.* names that act on whichever thread jemattach borrowed. */
static const char *action_reason(const char *name, int set)
{
	const char *dot = strrchr(name, '.');

	if (!strncmp(name, "thread.", 7))
		return "thread.* names act on and report the calling thread: here the one "
		       "jemattach borrows for the call, not the process";
	if (set)
		return NULL;
	if (!strcmp(name, "arenas.create") || !strncmp(name, "tcache.", 7))
		return "reading it creates (or flushes) something in the target each time";
	if (!strncmp(name, "arena.", 6) && dot &&
	    (!strcmp(dot, ".reset") || !strcmp(dot, ".destroy") || !strcmp(dot, ".purge") ||
	     !strcmp(dot, ".decay")))
		return "it is an action on the arena's memory, not a value (purge and decay: "
		       "jemattach purge, jemattach decay)";
	return NULL;
}

/* The refusal for @name unless --force; EXIT_OK when it may go on. */
static int refuse_action(const struct cli *c, const char *cmd, const char *name)
{
	const char *why = action_reason(name, !strcmp(cmd, "set"));

	if (!why || (c->opt.flags & JMA_F_FORCE))
		return EXIT_OK;
	return cli_error(EXIT_USAGE, "%s %s refused: %s (--force to do it anyway)", cmd, name, why);
}

/* Read the @n @names as @as in one attachment (the thread is held once,
 * briefly) into @v; a name that fails in the target (unknown, not readable)
 * gets its message in @errs and does not hide the others; anything worse
 * (the attachment lost, a timeout) stops.  *@got: how many were tried;
 * *@whole when all were and the thread was let go.  Returns the first
 * failed name's exit code, or the session's. */
static int read_all(struct cli *c, char **names, int n, enum jma_type as, struct jma_value *v,
		    char **errs, int *got, bool *whole)
{
	int own, err = 0, rc = EXIT_OK;

	*got = 0;
	*whole = false;
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	for (*got = 0; *got < n; (*got)++) {
		if (!(err = jma_get_as(c->s, names[*got], as, &v[*got])))
			continue;
		if (!jma_attached(c->s) || (jma_errkind(c->s) != JMA_ERR_TARGET &&
					    jma_errkind(c->s) != JMA_ERR_USAGE &&
					    jma_errkind(c->s) != JMA_ERR_MISSING))
			break;
		if (!rc)
			rc = (int)jma_errkind(c->s);
		errs[*got] = cli_errmsg(c->s);
		if (!errs[*got])
			break;
		err = 0;
	}
	/* The thread let go before anything is said. */
	if (jma_hold_end(c->s, own, err))
		return cli_fail_session(c);
	*whole = true;
	return rc;
}

int cmd_get(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
						   { "type", required_argument, NULL, 't' },
						   { 0 } };
	enum jma_type as = JMA_T_UNKNOWN;
	struct jma_value *v;
	char **errs;
	int json = 0, opt, n, rc = EXIT_OK, got = 0;
	bool whole;

	while ((opt = getopt_long(argc, argv, "jt:", longopts, NULL)) != -1) {
		if (opt == 'j') {
			json = 1;
		} else if (opt == 't') {
			as = jma_type_from_name(optarg);
			if (as == JMA_T_UNKNOWN || as == JMA_T_VOID)
				return cli_usage(c, "get", "invalid type \"%s\": bool, unsigned, "
						 "size_t, ssize_t, uint64_t, uint32_t, string, \"size_t *\"",
						 optarg);
		} else {
			return cli_usage(c, "get", "invalid option");
		}
	}
	n = argc - optind;
	if (n < 1)
		return cli_usage(c, "get", "missing NAME");
	for (int i = optind; i < argc; i++)
		if ((rc = refuse_action(c, "get", argv[i])))
			return rc;
	v = calloc((size_t)n, sizeof(*v));
	errs = calloc((size_t)n, sizeof(*errs));
	if (!v || !errs) {
		free(v);
		free(errs);
		return cli_error(EXIT_TARGET, "out of memory");
	}
	rc = read_all(c, argv + optind, n, as, v, errs, &got, &whole);
	if (whole)
		print_values(argv + optind, v, errs, n, json);
	for (int i = 0; i < got; i++)
		if (!errs[i])
			jma_value_clear(&v[i]);
	for (int i = 0; i < n; i++)
		free(errs[i]);
	free(errs);
	free(v);
	return rc;
}

/* The type of @name, found from the target (attached); on failure the
 * exit code of the error it printed. */
static int probe_type(struct cli *c, const char *name, enum jma_type *type)
{
	unsigned access = 0;

	if (!jma_ctl_type(c->s, name, type, &access))
		return EXIT_OK;
	/* Not readable, so not probeable: the user must say. */
	if (jma_errkind(c->s) == JMA_ERR_TARGET && jma_attached(c->s))
		return cli_error(EXIT_USAGE, "cannot tell the type of %s (%s); give --type", name,
				 jma_errmsg(c->s));
	return cli_fail_session(c);
}

int cmd_set(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = { { "type", required_argument, NULL, 'y' }, { 0 } };
	enum jma_type type = JMA_T_UNKNOWN;
	struct jma_value in = { .type = JMA_T_UNKNOWN }, old = { .type = JMA_T_UNKNOWN };
	const char *name, *text;
	char a[4200], b[4200];
	int opt, err, own, rc = EXIT_OK;

	/* "+": options only before NAME, so that VALUE may be negative (-1). */
	while ((opt = getopt_long(argc, argv, "+y:", longopts, NULL)) != -1) {
		if (opt != 'y')
			return cli_usage(c, "set", "invalid option");
		type = jma_type_from_name(optarg);
		if (type == JMA_T_UNKNOWN || type == JMA_T_VOID)
			return cli_usage(c, "set", "unknown --type \"%s\" (bool, unsigned, uint32_t, "
					 "size_t, ssize_t, uint64_t, string)", optarg);
	}
	if (argc - optind != 2)
		return cli_usage(c, "set", "need NAME and VALUE");
	name = argv[optind];
	text = argv[optind + 1];
	if ((rc = refuse_action(c, "set", name)))
		return rc;
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	if (type == JMA_T_UNKNOWN)
		rc = probe_type(c, name, &type);
	if (!rc && (err = jma_value_parse(type, text, &in)))
		rc = cli_error(EXIT_USAGE, "invalid %s value \"%s\" for %s%s", jma_type_name(type),
			       text, name, err == -ERANGE ? ": out of range" : "");
	if (!rc && jma_set(c->s, name, &in, &old))
		rc = cli_fail_session(c);
	if (jma_hold_end(c->s, own, 0))
		rc = cli_fail_session(c);
	if (rc == EXIT_OK) {
		jma_value_format(&in, b, sizeof(b));
		if (old.type != JMA_T_UNKNOWN) {
			jma_value_format(&old, a, sizeof(a));
			printf("%s -> %s\n", cli_esc(a), cli_esc(b));
		} else {
			printf("%s <- %s\n", cli_esc(name), cli_esc(b));
		}
	}
	jma_value_clear(&in);
	jma_value_clear(&old);
	return rc;
}
