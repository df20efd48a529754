/* main.c -- jemattach: option parsing, command dispatch, exit codes. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const struct cli_cmd cli_commands[] = {
	{ "info", 1, 0, cmd_info, "info [--json]",
	  "jemalloc version, where it was found, profiling state, thread to use" },
	{ "get", 1, 0, cmd_get, "get [--json] NAME...",
	  "read mallctl values (stats.* refresh the epoch first)" },
	{ "set", 1, 0, cmd_set, "set [--type TYPE] NAME VALUE",
	  "write a mallctl value; prints old -> new when readable" },
	{ "stats", 1, 0, cmd_stats, "stats [--json] [--opts LETTERS] [-o FILE]",
	  "the full malloc_stats_print report, captured here (not on the target's stderr)" },
	{ "prof", 1, 0, cmd_prof, "prof status [--json]\nprof on|off\n"
	  "prof dump [-o FILE|-] [--analyze [--top N]]\nprof reset [LG_SAMPLE]\nprof gdump on|off\n"
	  "prof window SECONDS [-o DIR] [--top N]\n"
	  "prof track [-i SEC] [--churn SIZE] [-n COUNT] [-o FILE] [--format text|jsonl] [--top N] "
	  "[--svg OUT.svg] [--fold REGEX]",
	  "heap-profiling control (needs MALLOC_CONF=prof:true at the target's start)" },
	{ "purge", 1, 0, cmd_purge, "purge [ARENA|all]",
	  "purge unused dirty pages now (arena.<i>.purge); shows resident/retained before -> after" },
	{ "decay", 1, 0, cmd_decay, "decay [ARENA|all]",
	  "run decay-based purging now (arena.<i>.decay); shows the effect" },
	{ "threads", 1, JMA_F_ANY_PROCESS, cmd_threads, "threads [--json] [--frames N]",
	  "every thread: state, system call, symbolized stack; jemalloc frames marked" },
	{ "watch", 1, 0, cmd_watch,
	  "watch [-i SEC] [-n COUNT] [-o FILE] [--format jsonl|csv|prom] [--arenas]",
	  "record memory stats every SEC seconds (default 10) until Ctrl-C" },
	{ "report", 0, 0, cmd_report,
	  "report abs|del|eff SERIES [-t SIZE] [--from I] [--to J] [-m METRIC] [--svg OUT]\n"
	  "report sites TRACK.jsonl|DIR [--top N] [--svg OUT]",
	  "per-arena peaks, changes or active/mapped of a watch series or stats JSON log" },
	{ "analyze", 0, 0, cmd_analyze,
	  "analyze PROFILE [--base PROFILE] [--top N] [--format text|json|collapsed|pprof] "
	  "[-o FILE] [--lines] [--pid PID] [...]",
	  "which code holds the memory in a heap profile (jeprof's columns, JSON, "
	  "flame-graph stacks, pprof)" },
	{ NULL, 0, 0, NULL, NULL, NULL },
};

static const char *prog = "jemattach";

int cli_error(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
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

static const struct cli_cmd *find_cmd(const char *name)
{
	for (const struct cli_cmd *k = cli_commands; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

int cli_usage(const struct cli *c, const char *cmd, const char *fmt, ...)
{
	const struct cli_cmd *k = find_cmd(cmd);
	va_list ap;

	(void)c;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (const char *p = k ? k->synopsis : ""; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "usage: %s %s%.*s\n", prog, k->live ? "PID " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
	return EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] PID COMMAND [ARGS]\n"
		"       %s COMMAND [ARGS]        (commands that need no process)\n"
		"\n"
		"Attach to a running jemalloc process, run jemalloc's control API inside it,\n"
		"and leave it exactly as it was.  Only one thread is stopped, for about a\n"
		"millisecond; no code is injected.\n"
		"\n"
		"Commands:\n", prog, prog);
	for (const struct cli_cmd *k = cli_commands; k->name; k++) {
		/* A synopsis may list several forms, one per line. */
		for (const char *p = k->synopsis; *p;) {
			size_t n = strcspn(p, "\n");
			fprintf(f, "  %s%.*s\n", k->live ? "PID " : "", (int)n, p);
			p += n + (p[n] == '\n');
		}
		fprintf(f, "        %s\n", k->help);
	}
	fprintf(f,
		"\n"
		"Options (before PID):\n"
		"  -t, --timeout SEC   longest one in-target call may take (default 10)\n"
		"  -p, --prefix PFX    jemalloc symbol prefix (default: detect; e.g. je_, _rjem_)\n"
		"  -m, --module PATH   jemalloc copy to use when the process has several\n"
		"  -T, --thread TID    borrow this thread (refused if inside jemalloc)\n"
		"  -f, --force         with --thread: use it even if inside jemalloc (dangerous)\n"
		"      --freeze        stop every thread while attached, for a consistent snapshot\n"
		"                      (refused if a thread is inside jemalloc)\n"
		"  -v, --verbose       say what is done (twice: debug)\n"
		"      --gdb-script    print the path of the gdb command library and exit\n"
		"  -h, --help          this help\n"
		"  -V, --version       version\n"
		"\n"
		"Exit codes:\n"
		"  0  success\n"
		"  1  the operation failed in the target (mallctl error, named and explained)\n"
		"  2  usage error\n"
		"  3  cannot attach (no such process, permission, already traced, zombie,\n"
		"     kernel thread, jemattach itself)\n"
		"  4  the target lacks what is needed (no jemalloc, stripped static jemalloc,\n"
		"     feature compiled out or disabled)\n"
		"  5  timed out or refused as unsafe (the target was restored)\n");
}

static void log_stderr(void *arg, int level, const char *msg)
{
	static const char *const lv[] = { "error", "warning", "info", "debug" };

	(void)arg;
	fprintf(stderr, "%s: %s: %s\n", prog, lv[level & 3], msg);
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v <= 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int gdb_script(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	/* In a source tree (build/, build/asan/), then installed. */
	static const char *const rel[] = { "/../gdb/jemalloc.gdb", "/../../gdb/jemalloc.gdb",
					   "/../share/jemattach/jemalloc.gdb" };

	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
			char real[PATH_MAX];
			snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
			if (realpath(path, real)) {
				puts(real);
				return EXIT_OK;
			}
		}
	}
	snprintf(path, sizeof(path), "%s/jemalloc.gdb", JMA_DATADIR);
	if (access(path, R_OK) == 0) {
		puts(path);
		return EXIT_OK;
	}
	return cli_error(EXIT_MISSING, "the gdb command library (jemalloc.gdb) is not installed");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "module", required_argument, NULL, 'm' },
		{ "thread", required_argument, NULL, 'T' },
		{ "force", no_argument, NULL, 'f' },
		{ "freeze", no_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "gdb-script", no_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli c = { .prog = prog };
	const struct cli_cmd *k;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "+t:p:m:T:fvhV", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 't':
			errno = 0;
			c.opt.timeout = strtod(optarg, &end);
			if (errno || *end || !(c.opt.timeout > 0) || c.opt.timeout > 86400)
				return cli_error(EXIT_USAGE, "invalid --timeout \"%s\": seconds, > 0",
						 optarg);
			break;
		case 'p':
			c.opt.prefix = optarg;
			break;
		case 'm':
			c.opt.module = optarg;
			break;
		case 'T':
			if (parse_pid(optarg, &c.opt.thread))
				return cli_error(EXIT_USAGE, "invalid --thread \"%s\"", optarg);
			break;
		case 'f':
			c.opt.flags |= JMA_F_FORCE;
			break;
		case 'F':
			c.opt.flags |= JMA_F_FREEZE;
			break;
		case 'v':
			c.verbose++;
			break;
		case 'G':
			return gdb_script();
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("jemattach %s\n", JMA_VERSION);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if ((c.opt.flags & JMA_F_FORCE) && !c.opt.thread)
		return cli_error(EXIT_USAGE, "--force needs --thread TID");
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	c.opt.log = log_stderr;
	c.opt.log_level = c.verbose >= 2 ? JMA_LOG_DEBUG : c.verbose ? JMA_LOG_INFO : JMA_LOG_WARN;

	k = find_cmd(argv[optind]);
	if (k && !k->live) {
		argc -= optind;
		argv += optind;
		/* 0, not 1: GNU getopt must start afresh, forgetting the "+" (stop
		 * at the first non-option) of the global scan, so that command
		 * options may follow their arguments. */
		optind = 0;
		return k->run(&c, argc, argv);
	}
	if (parse_pid(argv[optind], &c.pid))
		return cli_error(EXIT_USAGE, "\"%s\" is neither a PID nor a command (try --help)",
				 argv[optind]);
	if (optind + 1 >= argc)
		return cli_error(EXIT_USAGE, "missing COMMAND after PID (try --help)");
	k = find_cmd(argv[optind + 1]);
	if (!k || !k->live)
		return cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", argv[optind + 1]);
	/* Never fetch debuginfo over the network while a target may be stopped
	 * (libdw asks debuginfod servers whenever this is set; Debian sets it in
	 * login shells). */
	unsetenv("DEBUGINFOD_URLS");
	c.opt.flags |= k->open_flags;
	c.s = jma_new(&c.opt);
	if (!c.s)
		return cli_error(EXIT_TARGET, "out of memory");
	if (jma_open(c.s, c.pid)) {
		rc = cli_fail_session(&c);
	} else {
		argc -= optind + 1;
		argv += optind + 1;
		optind = 0;
		rc = k->run(&c, argc, argv);
	}
	jma_free(c.s);
	if (fflush(stdout) || ferror(stdout))
		return rc ? rc : cli_error(EXIT_TARGET, "writing output: %s", strerror(errno));
	return rc;
}
