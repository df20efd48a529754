/* main.c -- jemattach: option parsing, command dispatch, exit codes. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* `jemattach help COMMAND`, `jemattach [PID] COMMAND --help`: touches no process. */
static int command_help(const struct cli_cmd *k)
{
	char lead[64];

	snprintf(lead, sizeof(lead), "usage: %s ", cli_prog);
	cli_print_synopsis(stdout, k, lead);
	printf("\n%s.\n", k->help);
	if (k->options)
		printf("\nOptions:\n%s", k->options);
	if (k->props & CLI_PID)
		printf("\nSeveral PIDs run the command on each in turn, every output line prefixed\n"
		       "with \"PID: \"; the exit code is the highest of theirs.\n");
	printf("\nExit codes and global options: %s --help; details: man jemattach.\n", cli_prog);
	return EXIT_OK;
}

/* Why command @k with @argv (argv[0]: its name) cannot run on several
 * processes, into @buf, or NULL: a command that runs until stopped or reads
 * stdin, and one output file cannot hold several processes. */
static const char *one_pid_only(const struct cli_cmd *k, int argc, char **argv, char *buf,
				size_t len)
{
	const struct cli_sub *sub;
	unsigned props = cli_props(k, argc, argv, &sub);
	const char *noun = sub ? sub->name : k->name;

	if (props & CLI_UNTIL_STOP) {
		snprintf(buf, len, "%s%s%s runs until stopped: one %s per process", k->name,
			 sub ? " " : "", sub ? sub->name : "", noun);
		return buf;
	}
	if (props & CLI_STDIN) {
		snprintf(buf, len, "%s reads its commands once: one PID", k->name);
		return buf;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output"))
			v = i + 1 < argc ? argv[i + 1] : "";
		else if (!strncmp(argv[i], "--output=", 9))
			v = argv[i] + 9;
		else if (!strncmp(argv[i], "-o", 2))
			v = argv[i] + 2;
		if (v && strcmp(v, "-"))
			return "-o names one file: give one PID (or -o -)";
	}
	return NULL;
}

/* Whether @argv (a command's arguments) asks for help: --help or -h before "--". */
static int wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

static void usage_options(FILE *f);

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] PID [PID...] COMMAND [ARGS]\n"
		"       %s COMMAND [ARGS]        (commands that need no process)\n"
		"       %s help COMMAND          (or COMMAND --help: never touches a process)\n"
		"\n"
		"Attach to a running jemalloc process, run jemalloc's control API inside it,\n"
		"and leave it exactly as it was.  Only one thread is stopped, for about a\n"
		"millisecond; no code is injected.\n"
		"\n"
		"Commands:\n", cli_prog, cli_prog, cli_prog);
	for (const struct cli_cmd *k = cli_commands; k->name; k++) {
		/* A synopsis may list several forms, one per line. */
		cli_print_synopsis(f, k, "  ");
		fprintf(f, "        %s\n", k->help);
	}
	usage_options(f);
}

/* The global options and the exit codes, for usage(). */
static void usage_options(FILE *f)
{
	fprintf(f,
		"\n"
		"Options (before PID):\n"
		"  -t, --timeout SEC   longest one in-target call may take without progress\n"
		"                      (stats output restarts it; default 10)\n"
		"  -p, --prefix PFX    jemalloc symbol prefix (default: detect; e.g. je_, _rjem_)\n"
		"  -m, --module PATH   jemalloc copy to use when the process has several\n"
		"  -T, --thread TID    borrow this thread (refused if inside jemalloc or the\n"
		"                      dynamic loader, or not on a known stack)\n"
		"  -f, --force         do what is refused as unsafe (dangerous): with --thread, use\n"
		"                      it even if inside jemalloc; call a target with less than\n"
		"                      512 KiB left under its memory cgroup limit; call while a\n"
		"                      thread stays asleep inside jemalloc holding a lock (the\n"
		"                      call waits for it); get names that act (arenas.create,\n"
		"                      arena.N.reset|destroy, thread.*); use the fallback call\n"
		"                      engine (a thread in restart_syscall, no rt_sigreturn\n"
		"                      trampoline or perf breakpoint): if jemattach then dies\n"
		"                      during a call, the target dies too\n"
		"      --freeze        stop every thread while attached, for a consistent snapshot\n"
		"                      (refused if a thread may hold a jemalloc lock)\n"
		"      --emulate       run jemalloc's code in an emulator on a copy of the process's\n"
		"                      memory: works while jemalloc is deadlocked; read-only\n"
		"      --no-cache      search the program's files for jemalloc every time, and keep\n"
		"                      nothing in $XDG_CACHE_HOME/jemattach (by default what was\n"
		"                      found is kept there, by the build-ids of the process's code)\n"
		"      --no-demangle   print C++ function names as the symbol tables spell them\n"
		"                      (_ZN4shop5Order3addEi), not shop::Order::add(int)\n"
		"  -v, --verbose       say what is done, how long the thread was held (twice: debug)\n"
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
		"  5  timed out or refused as unsafe (a thread stays asleep inside jemalloc\n"
		"     where it may hold a lock: refused before anything stops; no thread safe\n"
		"     to use, as in a program still running its constructors; only the\n"
		"     fallback call engine could be used, without --force; the target was\n"
		"     restored, or a call waiting inside jemalloc was left to finish and\n"
		"     restore the thread by itself)\n");
}

static void log_stderr(void *arg, int level, const char *msg)
{
	static const char *const lv[] = { "error", "warning", "info", "debug" };

	(void)arg;
	fprintf(stderr, "%s: %s: %s\n", cli_prog, lv[level & 3], cli_esc_lines(msg));
}

static int parse_pid(const char *s, pid_t *pid)
{
	long long v;

	if (cli_parse_int(s, 1, INT_MAX, &v))
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int gdb_script(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	/* In a source tree (build/, build/asan/), then installed. */
	static const char *const rel[] = { "/../gdb/jemalloc.gdb", "/../../gdb/jemalloc.gdb",
					   "/../share/jemattach/jemalloc.gdb" };

	if (!cli_exe_dir(exe, sizeof(exe))) {
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

/* Open c->pid and run live command @k; @argv[0] is the command's name. */
static int run_live(struct cli *c, const struct cli_cmd *k, int argc, char **argv)
{
	int rc;

	c->s = jma_new(&c->opt);
	if (!c->s)
		return cli_error(EXIT_TARGET, "out of memory");
	/* No vDSO only in the middle of an exec: a moment later there is one. */
	for (int i = 0; i < 20 && !(c->exec_mark = jma_exec_mark(c->pid)) && !kill(c->pid, 0); i++)
		usleep(1000);
	rc = cli_open(c, k, argc, argv);
	if (!rc) {
		optind = 0;
		rc = k->run(c, argc, argv);
	}
	jma_free(c->s);
	c->s = NULL;
	if (fflush(stdout) || ferror(stdout))
		return rc ? rc : cli_error(EXIT_TARGET, "writing output: %s", strerror(errno));
	return rc;
}

/* Copy what arrives on @fd to @to, each line prefixed with "PID: ".  @line
 * keeps a partial line between calls; returns 0 at end of file. */
static int relay(int fd, FILE *to, pid_t pid, char *line, size_t *len, size_t cap)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return 1;
	for (ssize_t i = 0; i < n; i++) {
		if (*len < cap - 1)
			line[(*len)++] = buf[i];
		if (buf[i] == '\n') {
			fprintf(to, "%d: %.*s", (int)pid, (int)*len, line);
			*len = 0;
		}
	}
	if (n <= 0 && *len) {
		fprintf(to, "%d: %.*s\n", (int)pid, (int)*len, line);
		*len = 0;
	}
	fflush(to);
	return n > 0;
}

/* Run live command @k on c->pid in a child whose output comes back here
 * prefixed with the PID: one process at a time, so each target is left as
 * found before the next is touched. */
static int run_prefixed(struct cli *c, const struct cli_cmd *k, int argc, char **argv)
{
	int out[2], err[2], status;
	struct { int fd; FILE *to; char line[8192]; size_t len; int open; } s[2];
	pid_t child;

	fflush(stdout);
	fflush(stderr);
	if (pipe2(out, O_CLOEXEC))
		return cli_error(EXIT_TARGET, "pipe: %s", strerror(errno));
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return cli_error(EXIT_TARGET, "pipe: %s", strerror(errno));
	}
	child = fork();
	if (child == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		_exit(run_live(c, k, argc, argv));
	}
	close(out[1]);
	close(err[1]);
	if (child < 0) {
		close(out[0]);
		close(err[0]);
		return cli_error(EXIT_TARGET, "fork: %s", strerror(errno));
	}
	s[0].fd = out[0], s[0].to = stdout, s[0].len = 0, s[0].open = 1;
	s[1].fd = err[0], s[1].to = stderr, s[1].len = 0, s[1].open = 1;
	while (s[0].open || s[1].open) {
		struct pollfd p[2] = { { s[0].open ? s[0].fd : -1, POLLIN, 0 },
				       { s[1].open ? s[1].fd : -1, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (p[i].revents)
				s[i].open = relay(s[i].fd, s[i].to, c->pid, s[i].line, &s[i].len,
						  sizeof(s[i].line));
	}
	close(out[0]);
	close(err[0]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return cli_error(EXIT_TARGET, "waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_TARGET;
}

/* $XDG_CACHE_HOME/jemattach, else ~/.cache/jemattach (the XDG base
 * directories: a relative value is ignored); NULL when neither is known. */
static const char *cache_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/jemattach", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/jemattach", home);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* The global options before PID or COMMAND into @c; -1 to go on (argv[optind]
 * is then the first operand), else the exit code (--help, --version, errors). */
static int parse_globals(struct cli *c, int argc, char **argv, int *no_cache)
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
		{ "emulate", no_argument, NULL, 'E' },
		{ "no-cache", no_argument, NULL, 'C' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "+t:p:m:T:fvhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			if (cli_parse_num(optarg, 0.001, 86400, &c->opt.timeout))
				return cli_error(EXIT_USAGE, "invalid --timeout \"%s\": seconds, from "
						 "0.001 to 86400", optarg);
			break;
		case 'p': c->opt.prefix = optarg; break;
		case 'm': c->opt.module = optarg; break;
		case 'T':
			if (parse_pid(optarg, &c->opt.thread))
				return cli_error(EXIT_USAGE, "invalid --thread \"%s\"", optarg);
			break;
		case 'f': c->opt.flags |= JMA_F_FORCE; break;
		case 'F': c->opt.flags |= JMA_F_FREEZE; break;
		case 'E': c->emulate = 1; break;
		case 'C': *no_cache = 1; break;
		case 'D': c->opt.flags |= JMA_F_NO_DEMANGLE; break;
		case 'v': c->verbose++; break;
		case 'G': return gdb_script();
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("jemattach %s\n", JMA_VERSION_STRING);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help'.\n", cli_prog);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/* `help [COMMAND]`, and a command that needs no process (argv[0]: its
 * name); -1 when argv[0] is neither (a PID, or a live command). */
static int run_offline(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *k;

	if (!strcmp(argv[0], "help")) {
		if (argc < 2) {
			usage(stdout);
			return EXIT_OK;
		}
		if (!(k = cli_find(argv[1])))
			return cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", argv[1]);
		return command_help(k);
	}
	k = cli_find(argv[0]);
	if (k && wants_help(argc - 1, argv + 1))
		return command_help(k);
	if (k && !(k->props & CLI_PID)) {
		/* 0, not 1: GNU getopt must start afresh, forgetting the "+" (stop
		 * at the first non-option) of the global scan, so that command
		 * options may follow their arguments. */
		optind = 0;
		return k->run(c, argc, argv);
	}
	if (k)
		return cli_error(EXIT_USAGE, "%s needs a process: %s PID %s ... (try %s help %s)",
				 k->name, cli_prog, k->name, cli_prog, k->name);
	return -1;
}

/* PID [PID...] COMMAND [ARGS]: the command on each process in turn. */
static int run_pids(struct cli *c, int argc, char **argv)
{
	const struct cli_cmd *k;
	const char *why;
	char buf[256];
	int npids, rc = EXIT_OK;

	for (npids = 0; npids < argc && !parse_pid(argv[npids], &c->pid); npids++)
		;
	if (!npids)
		return cli_error(EXIT_USAGE, "\"%s\" is neither a PID nor a command (try --help)",
				 argv[0]);
	if (npids >= argc)
		return cli_error(EXIT_USAGE, "missing COMMAND after PID (try --help)");
	k = cli_find(strcmp(argv[npids], "-") ? argv[npids] : "shell");
	if (!k || !(k->props & CLI_PID))
		return cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", argv[npids]);
	if (wants_help(argc - npids - 1, argv + npids + 1))
		return command_help(k);
	c->opt.flags |= k->open_flags;
	if (npids == 1)
		return run_live(c, k, argc - 1, argv + 1);
	if ((why = one_pid_only(k, argc - npids, argv + npids, buf, sizeof(buf))))
		return cli_error(EXIT_USAGE, "%s", why);
	for (int i = 0; i < npids; i++) {
		int r;

		parse_pid(argv[i], &c->pid);
		r = run_prefixed(c, k, argc - npids, argv + npids);
		if (r > rc)
			rc = r;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct cli c = { .prog = cli_prog, .opt.sz = sizeof(c.opt) };
	char cache[4096];
	int rc, no_cache = 0;

	if ((rc = parse_globals(&c, argc, argv, &no_cache)) >= 0)
		return rc;
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!no_cache)
		c.opt.cache_dir = cache_dir(cache, sizeof(cache));
	c.opt.log = log_stderr;
	c.opt.log_level = c.verbose >= 2 ? JMA_LOG_DEBUG : c.verbose ? JMA_LOG_INFO : JMA_LOG_WARN;
	argc -= optind;
	argv += optind;
	if ((rc = run_offline(&c, argc, argv)) >= 0)
		return rc;
	return run_pids(&c, argc, argv);
}
