/* cmd_shell.c -- `jemattach PID shell`: many commands, one session.
 *
 * Reads one command a line (get/set/stats/prof/purge/decay/info/threads...,
 * exactly as after "jemattach PID") from standard input or a file, and runs
 * each in the session opened once: jemalloc's symbols are found once, and
 * every command pays only its own stop and calls.  A failing command prints
 * its error and the shell goes on; the exit code is that of the last command
 * that failed (0 if none did).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_WORDS	64

/* Split @line into words in place: blanks separate, '...' and "..." quote,
 * '#' starts a comment.  Returns the count, or -1 when over MAX_WORDS or a
 * quote is not closed. */
static int split(char *line, char **w)
{
	int n = 0;
	char *r = line, *o = line;

	for (;;) {
		while (isspace((unsigned char)*r))
			r++;
		if (!*r || *r == '#')
			return n;
		if (n == MAX_WORDS)
			return -1;
		w[n++] = o;
		while (*r && !isspace((unsigned char)*r)) {
			if (*r == '\'' || *r == '"') {
				char q = *r++;
				while (*r && *r != q)
					*o++ = *r++;
				if (*r++ != q)
					return -1;
			} else {
				*o++ = *r++;
			}
		}
		if (*r)
			r++;
		*o++ = '\0';
	}
}

int cmd_shell(struct cli *c, int argc, char **argv)
{
	FILE *in = stdin;
	char *line = NULL, *w[MAX_WORDS + 1];
	size_t cap = 0;
	int rc = EXIT_OK, tty;

	if (argc > 2)
		return cli_usage(c, "shell", "too many arguments");
	if (argc == 2 && strcmp(argv[1], "-") && !(in = fopen(argv[1], "r")))
		return cli_error(EXIT_USAGE, "cannot read \"%s\"", argv[1]);
	tty = in == stdin && isatty(STDIN_FILENO);
	for (;;) {
		const struct cli_cmd *k;
		int n, r;

		if (tty) {
			printf("jemattach %d> ", (int)c->pid);
			fflush(stdout);
		}
		if (getline(&line, &cap, in) < 0)
			break;
		n = split(line, w);
		if (n == 0)
			continue;
		if (n < 0) {
			rc = cli_error(EXIT_USAGE, "unclosed quote or too many words");
			continue;
		}
		if (!strcmp(w[0], "quit") || !strcmp(w[0], "exit"))
			break;
		k = cli_find_live(w[0]);
		if (k && k->run == cmd_shell)
			k = NULL;
		if (!k) {
			rc = cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", w[0]);
			continue;
		}
		w[n] = NULL;
		optind = 0;	/* each command parses its options afresh */
		r = k->run(c, n, w);
		fflush(stdout);
		if (r)
			rc = r;
		/* Another process may have its PID now: the session is over. */
		if (jma_exited(c->s)) {
			rc = r == EXIT_ATTACH ? r : cli_error(EXIT_ATTACH, "process %d exited",
							      (int)c->pid);
			break;
		}
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return rc;
}
