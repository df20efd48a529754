/* cli.h -- the jemattach command line: shared state and the command table. */
#ifndef JMA_CLI_H
#define JMA_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include <jemattach.h>

#include "cli/esc.h"

/* Exit codes; the same list is in --help, README.md and doc/jemattach.1. */
enum {
	EXIT_OK = 0,
	EXIT_TARGET = 1,	/* the operation failed in the target */
	EXIT_USAGE = 2,
	EXIT_ATTACH = 3,	/* cannot attach */
	EXIT_MISSING = 4,	/* the target lacks what is needed */
	EXIT_UNSAFE = 5,	/* timed out or refused as unsafe; target restored */
};

struct cli {
	const char *prog;
	struct jma_options opt;
	pid_t pid;
	jma_session *s;		/* opened on pid before a live command runs */
	int verbose;
	int emulate;		/* --emulate: run jemalloc's code on a copy (emulate.c) */
	uint64_t exec_mark;	/* jma_exec_mark(pid) at the start, 0 unknown */
};

/* What a command is, for the checks made before it runs (main.c, open.c). */
#define CLI_PID		0x01	/* needs PID: "jemattach PID name ..." */
#define CLI_WRITES	0x02	/* changes the process: refused where jemalloc runs on a copy */
#define CLI_UNTIL_STOP	0x04	/* runs until stopped: one process, not several in turn */
#define CLI_STDIN	0x08	/* reads its commands from stdin once: one process */
#define CLI_LIVE_ONLY	0x10	/* needs the live process (its threads, time): not a core file */
#define CLI_RUNS_NOTHING 0x20	/* reads the memory itself, runs nothing: --emulate is needless */

/* A subcommand (argv[1]) whose properties add to its command's. */
struct cli_sub {
	const char *name;
	unsigned props;
};

struct cli_cmd {
	const char *name;
	unsigned props;		/* CLI_* */
	unsigned open_flags;	/* JMA_F_* the session is opened with */
	int (*run)(struct cli *c, int argc, char **argv);	/* argv[0] = name */
	const char *synopsis;
	const char *help;
	const char *options;	/* more for `COMMAND --help`, one option a line; may be NULL */
	const struct cli_sub *subs;	/* ended by a NULL name; may be NULL */
};

/* The commands, ended by a NULL name (commands.c). */
extern const struct cli_cmd cli_commands[];

/* usage.c: the program's name in messages; a command by name (NULL: none);
 * the same only if it runs on a process; its synopsis, one line per form,
 * each prefixed with @lead (and "PID " for live commands). */
extern const char *const cli_prog;
const struct cli_cmd *cli_find(const char *name);
const struct cli_cmd *cli_find_live(const char *name);
/* The properties of @k run with @argv (argv[0] = its name): its own, and
 * those of the subcommand argv[1] names; *@sub (may be NULL) gets that
 * subcommand, NULL when none has properties of its own. */
unsigned cli_props(const struct cli_cmd *k, int argc, char **argv, const struct cli_sub **sub);
void cli_print_synopsis(FILE *f, const struct cli_cmd *k, const char *lead);
/* The session's last error with its hints (jma_errhints) worded as the
 * options that would change it, at the end of its first line; malloc'd
 * (NULL: out of memory). */
char *cli_errmsg(jma_session *s);
/* Print "jemattach: <msg>" for the session's last error, with its hints;
 * return its exit code. */
int cli_fail_session(struct cli *c);
/* Print "jemattach: <fmt>" and return @code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* open.c: open c->s on c->pid for command @k, emulated with --emulate; why
 * command @k cannot run emulated (@core: on a core file), or NULL. */
int cli_open(struct cli *c, const struct cli_cmd *k, int argc, char **argv);
const char *cli_emulate_refuses(const struct cli_cmd *k, int argc, char **argv, int core);

/* Usage error for a command: prints its synopsis, returns EXIT_USAGE. */
int cli_usage(const struct cli *c, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* On stderr, when 1% or more of the report of @h under @o sits in functions
 * without a symbol: how much, in which modules, how to get names (unnamed.c). */
void cli_hint_unnamed(jma_heap *h, const struct jma_heap_report_opts *o);
/* jma_heap_report_file with the text escaped (esc.h): names are the target's. */
int cli_heap_report(jma_heap *h, const struct jma_heap_report_opts *o, FILE *f);

/* empty.c: whether the report of @h under @o is empty for want of samples
 * (none of o->sample's kind in the profile; a --base difference never is);
 * then on stderr: @lead (NULL: "the profile is empty: ..."), the sample
 * period, what the process allocated (read through c->s when it is open on
 * a process; @c may be NULL offline), and what to do. */
int cli_heap_empty(jma_heap *h, const struct jma_heap_report_opts *o);
void cli_hint_empty(struct cli *c, jma_heap *h, const struct jma_heap_report_opts *o,
		    const char *lead);
/* The same for a profile the sampler made: empty, or thin (fewer than
 * CLI_THIN samples of o->sample's kind), said in the sampler's terms (its
 * samples and rate, what the process allocated, what the guard did, what to
 * change); nothing when it is neither. */
#define CLI_THIN	10
struct cli_sampled;
void cli_hint_sampled(struct cli *c, const struct cli_sampled *sm, jma_heap *h,
		      const struct jma_heap_report_opts *o);

/* num.c: the whole of @s as a decimal integer (or a number: 0.5, 1e3) in
 * [@lo, @hi] into *@v: 0, or -1 (empty, not a number, trailing text, out of
 * range; *@v untouched).  cli_arg_*: the same, failing with the usage error
 * `invalid WHAT "S"` of command @cmd (EXIT_USAGE). */
int cli_parse_int(const char *s, long long lo, long long hi, long long *v);
int cli_parse_num(const char *s, double lo, double hi, double *v);
int cli_arg_int(struct cli *c, const char *cmd, const char *what, const char *s, long long lo,
		long long hi, long long *v);
int cli_arg_num(struct cli *c, const char *cmd, const char *what, const char *s, double lo,
		double hi, double *v);

/* stop.c: SIGINT, SIGTERM and SIGHUP set cli_stop to their number (cleared
 * here first), @ignore_pipe SIGPIPE ignored (a closed pipe is then a write
 * error); cli_stop_release puts back the handlers @sv saved. */
extern volatile sig_atomic_t cli_stop;
struct cli_stop_saved {
	struct sigaction old[4];
	bool pipe;
};
void cli_stop_catch(struct cli_stop_saved *sv, bool ignore_pipe);
void cli_stop_release(const struct cli_stop_saved *sv);

/* "1.5 KiB": binary units with one decimal (units.c). */
const char *cli_bytes(unsigned long long n, char *buf, size_t len);

/* Our own output files (outfile.c, doc/safety.md): "-" is stdout; no
 * symlink of another user is followed in any component; the file's
 * directory must be root's or ours and writable by no other user unless
 * sticky (else -EPERM); a FIFO or device (root's or ours) is written into,
 * never waited for; a regular file is replaced by renameat() of an O_EXCL
 * sibling: at close with @atomic, at once without. */
struct cli_out {
	FILE *f;
	int dirfd;		/* the directory checked, -1 none */
	char name[256];		/* the file's name in it */
	char tmp[64];		/* the sibling renamed over @name at close, "" none */
};
int cli_out_open(const char *path, bool atomic, struct cli_out *o);
/* Close; with @ok the atomic file replaces the old one, else it is removed. */
int cli_out_close(struct cli_out *o, bool ok);
/* Directory @path for our files, checked as cli_out_open checks a file's:
 * made 0755 when missing, an existing one must be root's or ours alone.
 * @fresh: @path is a prefix, the directory made is @path.XXXXXXXX (random,
 * never one that exists).  Its name into @out; *@made when made here. */
int cli_out_mkdir(const char *path, bool fresh, char *out, size_t len, bool *made);
/* Remove the file (or with @dir, the empty directory) @path our output
 * made, found by the same walk. */
void cli_out_remove(const char *path, bool dir);
/* The message for @err, a cli_out_* call's last result. */
const char *cli_out_strerror(int err);
/* A jma_write_fn into the FILE * @arg: 0, or -EIO. */
int cli_write_file(void *arg, const char *buf, size_t len);

/* JSON output helpers (json.c). */
void cli_json_string(FILE *f, const char *s);
void cli_json_value(FILE *f, const struct jma_value *v);
/* `, "NAME": VALUE` for each name; null where !have[i]. */
void cli_json_values(FILE *f, const char *const *names, const struct jma_value *v, const int *have,
		     size_t n);

/* Commands, one file each. */
int cmd_info(struct cli *c, int argc, char **argv);
int cmd_get(struct cli *c, int argc, char **argv);
int cmd_set(struct cli *c, int argc, char **argv);
int cmd_stats(struct cli *c, int argc, char **argv);
int cmd_prof(struct cli *c, int argc, char **argv);
int cmd_purge(struct cli *c, int argc, char **argv);
int cmd_decay(struct cli *c, int argc, char **argv);
int cmd_threads(struct cli *c, int argc, char **argv);
int cmd_analyze(struct cli *c, int argc, char **argv);
int cmd_core(struct cli *c, int argc, char **argv);
int cmd_watch(struct cli *c, int argc, char **argv);
int cmd_shell(struct cli *c, int argc, char **argv);
int cmd_report(struct cli *c, int argc, char **argv);
int cmd_census(struct cli *c, int argc, char **argv);
/* profile.c, for the prof subcommands: write a profile ("-": stdout;
 * -errno), the first free jeprof.<pid>.<n>.heap, load one (@buf of @len, or
 * the file @path; minus @base when not NULL) symbolized from the live
 * target, analyze it (@sample: enum jma_heap_sample), parse --top. */
int prof_save(const char *path, const char *buf, size_t len);
void prof_default_name(pid_t pid, char *out, size_t len);
int prof_load(struct cli *c, const char *path, const char *buf, size_t len, const char *base,
	      jma_heap **out);
int prof_analyze(struct cli *c, const char *path, unsigned top, int sample);
/* A sampler's run, whose profile an empty or thin report is explained by. */
struct cli_sampled {
	const struct jma_sampler_result *r;
	const struct jma_sampler_opts *o;
};
int prof_analyze_sampled(struct cli *c, const char *path, unsigned top, int sample,
			 const struct cli_sampled *sm);
int prof_analyze_buf(struct cli *c, const char *path, const char *buf, size_t len, unsigned top,
		     int sample, const struct cli_sampled *sm);
int prof_parse_top(struct cli *c, const char *arg, unsigned *top);
/* cmd_sample.c: "prof sample"; "prof window --sampler": sample for @secs
 * (at 2^@lg bytes, 0 automatic), follow frees for @secs more, write @path
 * and report what is in use, within the budget @budget (0..1, see
 * jma_sampler_opts); --max-overhead's PCT (0..100, default
 * CLI_BUDGET_DEFAULT); --lg-sample's N. */
#define CLI_BUDGET_DEFAULT	5
int cmd_prof_sample(struct cli *c, int argc, char **argv);
int cli_sample_window(struct cli *c, double secs, const char *path, unsigned top, double budget,
		      unsigned lg);
int cli_parse_percent(struct cli *c, const char *arg, double *v);
int cli_parse_lg(struct cli *c, const char *arg, unsigned *lg);
/* For prof window and track (@what): *@sampler set, with a line on stderr,
 * when jemalloc's own profiler is off (opt.prof false, or not built in);
 * another error of the check is the command's. */
int cli_sampler_instead(struct cli *c, const char *what, bool *sampler);
/* The target's opt.lg_prof_sample for the sampler (0: the default). */
unsigned cli_sample_lg(struct cli *c);
/* sampled.c: the summary of a sampler run on stderr; what the guard did,
 * lines starting with @lead; the finest rate a run sampled at (2^N bytes). */
void cli_sample_summary(const struct jma_sampler_result *r, const struct jma_sampler_opts *o);
void cli_sample_story(const struct jma_sampler_result *r, const struct jma_sampler_opts *o, FILE *f,
		      const char *lead);
unsigned cli_sample_lg_used(const struct jma_sampler_result *r);
int cmd_serve(struct cli *c, int argc, char **argv);
/* The directory of our own executable into @dir (files we ship are found
 * beside it in a build tree); 0, or -1 when /proc cannot say. */
int cli_exe_dir(char *dir, size_t len);
/* cmd_track.c: "prof track". */
int cmd_prof_track(struct cli *c, int argc, char **argv);
/* cmd_report.c: the ranking "report sites" prints of track @t's sites (@top
 * of them; 0: all) on @rank through the escaping stream, then its chart
 * titled @title into @svg when not NULL; what prof track and census --every
 * print at their end. */
int cli_sites_ranking(jma_track *t, unsigned top, const char *svg, const char *title, FILE *rank);

#endif
