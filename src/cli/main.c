/* main.c -- jemattach: option parsing, command dispatch, exit codes. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

const struct cli_cmd cli_commands[] = {
	{ "info", 1, 0, cmd_info, "info [--json]",
	  "jemalloc version, where it was found, profiling state, thread to use", NULL },
	{ "get", 1, 0, cmd_get, "get [--json] NAME...",
	  "read mallctl values (stats.* refresh the epoch first)", NULL },
	{ "set", 1, 0, cmd_set, "set [--type TYPE] NAME VALUE",
	  "write a mallctl value; prints old -> new when readable", NULL },
	{ "stats", 1, 0, cmd_stats, "stats [--json] [--opts LETTERS] [-o FILE]",
	  "the full malloc_stats_print report, captured here (not on the target's stderr)", NULL },
	{ "prof", 1, 0, cmd_prof, "prof status [--json]\nprof on|off\n"
	  "prof dump [-o FILE|-] [--analyze [--top N]]\nprof reset [LG_SAMPLE]\nprof gdump on|off\n"
	  "prof window SECONDS [-o DIR] [--top N]",
	  "heap-profiling control (needs MALLOC_CONF=prof:true at the target's start)", NULL },
	{ "purge", 1, 0, cmd_purge, "purge [ARENA|all]",
	  "purge unused dirty pages now (arena.<i>.purge); shows resident/retained before -> after", NULL },
	{ "decay", 1, 0, cmd_decay, "decay [ARENA|all]",
	  "run decay-based purging now (arena.<i>.decay); shows the effect", NULL },
	{ "threads", 1, JMA_F_ANY_PROCESS, cmd_threads, "threads [--json] [--frames N]",
	  "every thread: state, system call, symbolized stack; jemalloc frames marked", NULL },
	{ "watch", 1, 0, cmd_watch,
	  "watch [-i SEC] [-n COUNT] [-o FILE] [--format jsonl|csv|prom] [--arenas]",
	  "record memory stats every SEC seconds (default 10) until Ctrl-C or the process exits "
	  "(exit 0; 1 if fewer than COUNT samples)", NULL },
	{ "report", 0, 0, cmd_report,
	  "report abs|del|eff SERIES [-t SIZE] [--from I] [--to J] [-m METRIC] [--svg OUT]",
	  "per-arena peaks, changes or active/mapped of a watch series or stats JSON log "
	  "(threshold: 5% of the process's peak unless -t)", NULL },
	{ "analyze", 0, 0, cmd_analyze,
	  "analyze PROFILE [--base PROFILE] [--top N] [--format text|json|collapsed|pprof] "
	  "[-o FILE] [--lines] [--pid PID] [...]\nanalyze --list-folds",
	  "which code holds the memory in a heap profile (jeprof's columns, JSON, "
	  "flame-graph stacks, pprof)",
	  "  --inuse-space|--inuse-objects|--alloc-space|--alloc-objects   what to count\n"
	  "  --lines             a site is function + file:line (and the DWARF of separate\n"
	  "                      debuginfo files is read: their inlined frames)\n"
	  "  --focus RE, --ignore RE   keep / drop stacks with a frame matching RE\n"
	  "  --fold RE           fold these wrappers away too, like malloc\n"
	  "  --no-default-folds  do not fold the well-known wrappers --list-folds shows\n"
	  "  --debuginfo-path P  where separate debuginfo is (DIR/.build-id/xx/rest.debug)\n"
	  "  --debuginfod        allow fetching debuginfo from $DEBUGINFOD_URLS (network)\n"
	  "  -o -                standard output\n" },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL },
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
	struct timespec settle = { 0, 50000000 };
	unsigned long long now = c->exec_mark ? cli_exec_mark(c->pid) : 0;

	/* Read in the middle of an exec (no [vdso] line yet), the new program
	 * may not have loaded jemalloc yet, or the maps read may be the old
	 * program's: look again a moment later before calling it missing or unsafe. */
	if (c->exec_mark && (!now || now == c->exec_mark) &&
	    (k == JMA_ERR_MISSING || k == JMA_ERR_UNSAFE)) {
		nanosleep(&settle, NULL);
		now = cli_exec_mark(c->pid);
	}
	/* Gone meanwhile: that, not the symptom, is the error. */
	if ((k == JMA_ERR_MISSING || k == JMA_ERR_UNSAFE) && c->exec_mark && !now &&
	    kill(c->pid, 0) && errno == ESRCH)
		return cli_error(EXIT_ATTACH, "process %d exited", (int)c->pid);
	/* The program changed under us: that, not the symptom, is the error. */
	if (now && now != c->exec_mark)
		return cli_error(EXIT_ATTACH, "process %d executed a new program during the session",
				 (int)c->pid);
	return cli_error(k == JMA_OK ? EXIT_TARGET : (int)k, "%s", jma_errmsg(c->s));
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (const struct cli_cmd *k = cli_commands; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* A command's synopsis, one line per form, each line prefixed with @lead
 * (and "PID " for live commands). */
static void print_synopsis(FILE *f, const struct cli_cmd *k, const char *lead)
{
	for (const char *p = k->synopsis; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "%s%s%.*s\n", lead, k->live ? "PID " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
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
	if (k) {
		char lead[64];
		snprintf(lead, sizeof(lead), "usage: %s ", prog);
		print_synopsis(stderr, k, lead);
	}
	return EXIT_USAGE;
}

/* `jemattach help COMMAND`, `jemattach [PID] COMMAND --help`: touches no process. */
static int command_help(const struct cli_cmd *k)
{
	char lead[64];

	snprintf(lead, sizeof(lead), "usage: %s ", prog);
	print_synopsis(stdout, k, lead);
	printf("\n%s.\n", k->help);
	if (k->options)
		printf("\nOptions:\n%s", k->options);
	if (k->live)
		printf("\nSeveral PIDs run the command on each in turn, every output line prefixed\n"
		       "with \"PID: \"; the exit code is the highest of theirs.\n");
	printf("\nExit codes and global options: %s --help; details: man jemattach.\n", prog);
	return EXIT_OK;
}

/* Why command @k with @argv cannot run on several processes, or NULL: watch
 * runs until stopped, and one output file cannot hold several processes. */
static const char *one_pid_only(const struct cli_cmd *k, int argc, char **argv)
{
	if (!strcmp(k->name, "watch"))
		return "watch runs until stopped: one watch per process";
	for (int i = 0; i < argc && strcmp(argv[i], "--"); i++) {
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
		"Commands:\n", prog, prog, prog);
	for (const struct cli_cmd *k = cli_commands; k->name; k++) {
		/* A synopsis may list several forms, one per line. */
		print_synopsis(f, k, "  ");
		fprintf(f, "        %s\n", k->help);
	}
	fprintf(f,
		"\n"
		"Options (before PID):\n"
		"  -t, --timeout SEC   longest one in-target call may take (default 10)\n"
		"  -p, --prefix PFX    jemalloc symbol prefix (default: detect; e.g. je_, _rjem_)\n"
		"  -m, --module PATH   jemalloc copy to use when the process has several\n"
		"  -T, --thread TID    borrow this thread (refused if inside jemalloc)\n"
		"  -f, --force         do what is refused as unsafe (dangerous): with --thread, use\n"
		"                      it even if inside jemalloc; call a target with less than\n"
		"                      512 KiB left under its memory cgroup limit; get names\n"
		"                      that act (arenas.create, arena.N.reset|destroy, thread.*)\n"
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

/* Open c->pid and run live command @k; @argv[0] is the command's name. */
static int run_live(struct cli *c, const struct cli_cmd *k, int argc, char **argv)
{
	int rc;

	c->s = jma_new(&c->opt);
	if (!c->s)
		return cli_error(EXIT_TARGET, "out of memory");
	/* No [vdso] line only in the middle of an exec: a moment later there is one. */
	for (int i = 0; i < 20 && !(c->exec_mark = cli_exec_mark(c->pid)) && !kill(c->pid, 0); i++)
		usleep(1000);
	if (jma_open(c->s, c->pid)) {
		rc = cli_fail_session(c);
	} else {
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
	const char *why;
	int opt, rc, npids;

	while ((opt = getopt_long(argc, argv, "+t:p:m:T:fvhV", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 't':
			errno = 0;
			c.opt.timeout = strtod(optarg, &end);
			if (errno || *end || !(c.opt.timeout >= 0.001) || c.opt.timeout > 86400)
				return cli_error(EXIT_USAGE, "invalid --timeout \"%s\": seconds, from "
						 "0.001 to 86400",
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
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	c.opt.log = log_stderr;
	c.opt.log_level = c.verbose >= 2 ? JMA_LOG_DEBUG : c.verbose ? JMA_LOG_INFO : JMA_LOG_WARN;

	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 >= argc) {
			usage(stdout);
			return EXIT_OK;
		}
		k = find_cmd(argv[optind + 1]);
		if (!k)
			return cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", argv[optind + 1]);
		return command_help(k);
	}
	k = find_cmd(argv[optind]);
	if (k && wants_help(argc - optind - 1, argv + optind + 1))
		return command_help(k);
	if (k && !k->live) {
		argc -= optind;
		argv += optind;
		/* 0, not 1: GNU getopt must start afresh, forgetting the "+" (stop
		 * at the first non-option) of the global scan, so that command
		 * options may follow their arguments. */
		optind = 0;
		return k->run(&c, argc, argv);
	}
	if (k)
		return cli_error(EXIT_USAGE, "%s needs a process: %s PID %s ... (try %s help %s)",
				 k->name, prog, k->name, prog, k->name);
	/* PID [PID...] COMMAND */
	for (npids = 0; optind + npids < argc && !parse_pid(argv[optind + npids], &c.pid); npids++)
		;
	if (!npids)
		return cli_error(EXIT_USAGE, "\"%s\" is neither a PID nor a command (try --help)",
				 argv[optind]);
	if (optind + npids >= argc)
		return cli_error(EXIT_USAGE, "missing COMMAND after PID (try --help)");
	k = find_cmd(argv[optind + npids]);
	if (!k || !k->live)
		return cli_error(EXIT_USAGE, "unknown command \"%s\" (try --help)", argv[optind + npids]);
	if (wants_help(argc - optind - npids - 1, argv + optind + npids + 1))
		return command_help(k);
	/* Never fetch debuginfo over the network while a target may be stopped
	 * (libdw asks debuginfod servers whenever this is set; Debian sets it in
	 * login shells). */
	unsetenv("DEBUGINFOD_URLS");
	c.opt.flags |= k->open_flags;
	if (npids == 1)
		return run_live(&c, k, argc - optind - 1, argv + optind + 1);
	why = one_pid_only(k, argc - optind - npids - 1, argv + optind + npids + 1);
	if (why)
		return cli_error(EXIT_USAGE, "%s", why);
	rc = EXIT_OK;
	for (int i = 0; i < npids; i++) {
		int r;

		parse_pid(argv[optind + i], &c.pid);
		r = run_prefixed(&c, k, argc - optind - npids, argv + optind + npids);
		if (r > rc)
			rc = r;
	}
	return rc;
}

