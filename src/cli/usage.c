/* usage.c -- what every command shares: errors and usage messages, finding a command. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cli.h"

const char *const cli_prog = "jemattach";

/* A message on stderr, "jemattach: " first: it may quote the target's
 * names and text, so control bytes are escaped (esc.h). */
static void say(const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	fprintf(stderr, "%s: %s\n", cli_prog, msg ? cli_esc_lines(msg) : "(out of memory)");
	free(msg);
}

int cli_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return code;
}

/* The library's hints (jma_errhints) in the tool's words: its options. */
static const struct {
	unsigned hint;
	const char *words;
} hint_words[] = {
	{ JMA_HINT_FORCE, "--force does it anyway" },
	{ JMA_HINT_EMULATE, "--emulate reads the numbers from a copy of the process, calling "
			    "nothing and taking no lock" },
	{ JMA_HINT_TIMEOUT, "--timeout SECONDS gives a call longer" },
	{ JMA_HINT_NO_FREEZE, "without --freeze only the borrowed thread stops" },
	{ JMA_HINT_RETRY, "try again in a moment" },
	{ JMA_HINT_MODULE, "choose one with --module PATH" },
	{ JMA_HINT_SYSROOT, "--sysroot DIR when the core comes from another machine" },
	{ JMA_HINT_TYPE, "give its type with --type" },
	{ JMA_HINT_TEXT, "use stats without --json" },
	{ JMA_HINT_LOG, "-v shows the log" },
	{ JMA_HINT_SAMPLE, "`prof sample SECONDS` samples without it: uprobes, root, no restart" },
};

char *cli_errmsg(jma_session *s)
{
	const char *msg = jma_errmsg(s);
	unsigned hints = jma_errhints(s);
	size_t cut = strcspn(msg, "\n"), len;
	const char *sep = " (";
	char *out = NULL;
	FILE *f;

	if (!hints || !(f = open_memstream(&out, &len)))
		return strdup(msg);
	/* At the end of the first line, before a colon that introduces the
	 * lines after it (a stack, the copies of jemalloc). */
	if (cut && msg[cut - 1] == ':')
		cut--;
	fwrite(msg, 1, cut, f);
	for (size_t i = 0; i < sizeof(hint_words) / sizeof(*hint_words); i++) {
		if (!(hints & hint_words[i].hint))
			continue;
		fprintf(f, "%s%s", sep, hint_words[i].words);
		sep = "; ";
	}
	fprintf(f, ")%s", msg + cut);
	if (fclose(f)) {
		free(out);
		return strdup(msg);
	}
	return out;
}

int cli_fail_session(struct cli *c)
{
	enum jma_errkind k = jma_errkind(c->s);
	struct timespec settle = { 0, 50000000 };
	uint64_t now = c->exec_mark ? jma_exec_mark(c->pid) : 0;
	/* Its PID may be another process's by now, whose mark says nothing. */
	int exited = jma_exited(c->s), rc;
	char *msg;

	/* Read in the middle of an exec (no vDSO yet), the new program
	 * may not have loaded jemalloc yet, or the maps read may be the old
	 * program's: look again a moment later before calling it missing or unsafe. */
	if (c->exec_mark && (!now || now == c->exec_mark) &&
	    (k == JMA_ERR_MISSING || k == JMA_ERR_UNSAFE)) {
		nanosleep(&settle, NULL);
		now = jma_exec_mark(c->pid);
	}
	/* Gone meanwhile: that, not the symptom, is the error. */
	if ((k == JMA_ERR_MISSING || k == JMA_ERR_UNSAFE) &&
	    (exited || (c->exec_mark && !now && kill(c->pid, 0) && errno == ESRCH)))
		return cli_error(EXIT_ATTACH, "process %d exited", (int)c->pid);
	/* The program changed under us: that, not the symptom, is the error. */
	if (now && now != c->exec_mark && !exited)
		return cli_error(EXIT_ATTACH, "process %d executed a new program during the session",
				 (int)c->pid);
	msg = cli_errmsg(c->s);
	rc = cli_error(k == JMA_OK ? EXIT_TARGET : (int)k, "%s", msg ? msg : jma_errmsg(c->s));
	free(msg);
	return rc;
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
		fprintf(f, "%s%s%.*s\n", lead, k->props & CLI_PID ? "PID " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

int cli_usage(const struct cli *c, const char *cmd, const char *fmt, ...)
{
	const struct cli_cmd *k = cli_find(cmd);
	va_list ap;

	(void)c;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
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

	return k && k->props & CLI_PID ? k : NULL;
}

unsigned cli_props(const struct cli_cmd *k, int argc, char **argv, const struct cli_sub **sub)
{
	const struct cli_sub *x = k->subs;

	while (x && x->name && !(argc > 1 && !strcmp(argv[1], x->name)))
		x++;
	if (sub)
		*sub = x && x->name ? x : NULL;
	return k->props | (x && x->name ? x->props : 0);
}

int cli_exe_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	return 0;
}
