/* cmd_track.c -- "prof track": per-site memory over time (pmem's log, from
 * outside), and "report sites": the same ranking from a saved track or a
 * directory of jemalloc's own heap profiles.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static volatile sig_atomic_t track_stop;

static void on_stop(int sig)
{
	track_stop = sig;
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct track_args {
	double interval;
	uint64_t churn;		/* 0: time only */
	unsigned long count;	/* 0: until Ctrl-C */
	const char *out, *svg, *fold;
	int no_default_folds, no_demangle;
	enum jma_track_format fmt;
	unsigned top;
};

static int parse_track(struct cli *c, int argc, char **argv, struct track_args *a)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "churn", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 't' },
		{ "svg", required_argument, NULL, 's' },
		{ "fold", required_argument, NULL, 'F' },
		{ "no-default-folds", no_argument, NULL, 'D' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ 0 },
	};
	char *end;
	regex_t re;
	int opt, f;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "i:n:o:", longopts, NULL)) != -1) {
		errno = 0;
		switch (opt) {
		case 'i':
			a->interval = strtod(optarg, &end);
			if (errno || *end || !(a->interval >= 0.05) || a->interval > 86400)
				return cli_usage(c, "prof", "invalid -i \"%s\": seconds, 0.05 or more",
						 optarg);
			break;
		case 'c':
			if (jma_parse_size(optarg, &a->churn) || !a->churn)
				return cli_usage(c, "prof", "invalid --churn \"%s\": a size such as 64M, "
						 "512K (a bare number is MiB)", optarg);
			break;
		case 'n':
			a->count = strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] == '-' || !a->count)
				return cli_usage(c, "prof", "invalid -n \"%s\"", optarg);
			break;
		case 'o': a->out = optarg; break;
		case 's': a->svg = optarg; break;
		case 'F':
			/* Checked now: not at the first snapshot, with profiling on. */
			if (regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB))
				return cli_usage(c, "prof", "invalid --fold regular expression \"%s\"",
						 optarg);
			regfree(&re);
			a->fold = optarg;
			break;
		case 'D': a->no_default_folds = 1; break;
		case 'M': a->no_demangle = 1; break;
		case 'f':
			if ((f = jma_track_format_from_name(optarg)) < 0)
				return cli_usage(c, "prof", "invalid --format \"%s\": text or jsonl", optarg);
			a->fmt = (enum jma_track_format)f;
			break;
		case 't':
			a->top = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] == '-' || a->top > 100000)
				return cli_usage(c, "prof", "invalid --top \"%s\"", optarg);
			break;
		default: return cli_usage(c, "prof", "invalid option to prof track");
		}
	}
	if (optind != argc)
		return cli_usage(c, "prof", "unexpected argument \"%s\"", argv[optind]);
	return EXIT_OK;
}

static int read_allocated(jma_session *s, uint64_t *v)
{
	struct jma_value val;
	int err = jma_refresh(s);

	if (!err && !(err = jma_get(s, "stats.allocated", &val)))
		*v = val.z;
	return err;
}

/* One snapshot: stats.allocated and a heap profile in one hold of the thread. */
static int snapshot(struct cli *c, jma_track *t, unsigned long k, uint64_t *allocated)
{
	struct jma_track_meta m = { .time = now(CLOCK_REALTIME) };
	double t0 = now(CLOCK_MONOTONIC);
	char *buf = NULL, name[64];
	size_t len = 0;
	int err = jma_attach(c->s), derr;

	if (!err && !(err = read_allocated(c->s, &m.allocated)))
		err = jma_prof_dump(c->s, &buf, &len);
	derr = jma_attached(c->s) ? jma_detach(c->s) : 0;
	m.hold_ns = (uint64_t)((now(CLOCK_MONOTONIC) - t0) * 1e9);
	if (err || derr) {
		free(buf);
		/* Ctrl-C while attaching or before a call: the normal end of a
		 * track; that snapshot is not taken, the log ends before it. */
		if (track_stop && (err == -EINTR || (!err && derr == -EINTR)))
			return EXIT_OK;
		return cli_fail_session(c);
	}
	*allocated = m.allocated;
	snprintf(name, sizeof(name), "snapshot %lu", k);
	err = jma_track_add(t, buf, len, name, &m);
	free(buf);
	if (err)
		return cli_error(EXIT_TARGET, "%s", jma_track_errmsg(t));
	return EXIT_OK;
}

/* Until the interval passed, the allocated bytes moved by --churn since
 * @base, or a signal; polling stats.allocated (one short hold) every 100 ms. */
static int wait_next(struct cli *c, const struct track_args *a, uint64_t base)
{
	double end = now(CLOCK_MONOTONIC) + a->interval;

	while (!track_stop) {
		struct timespec step = { 0, 100000000 };
		double left = end - now(CLOCK_MONOTONIC);
		uint64_t v;

		if (left <= 0)
			return EXIT_OK;
		if (left < 0.1)
			step.tv_nsec = (long)(left * 1e9);
		nanosleep(&step, NULL);
		if (a->churn && !track_stop) {
			int err = jma_attach(c->s), derr;
			if (!err)
				err = read_allocated(c->s, &v);
			derr = jma_attached(c->s) ? jma_detach(c->s) : 0;
			err = err ? err : derr;
			if (err == -EINTR && track_stop)
				return EXIT_OK;	/* Ctrl-C: the normal end */
			if (err)
				return cli_fail_session(c);
			if ((v > base ? v - base : base - v) >= a->churn)
				return EXIT_OK;
		}
	}
	return EXIT_OK;
}

/* prof.active back to false; a signal arriving just then (a second
 * Ctrl-C) does not stop it: the call is tried again. */
static int restore_inactive(struct cli *c)
{
	int err = -EINTR;

	for (int i = 0; i < 3 && err == -EINTR; i++)
		err = jma_prof_set_active(c->s, false, NULL);
	return err;
}

static int finish(jma_track *t, const struct track_args *a, FILE *rank)
{
	struct cli_out o;
	FILE *esc;
	int err;

	if (!jma_track_nsnapshots(t))
		return EXIT_OK;
	/* Site names are the target's symbols: escaped (esc.h). */
	if (!(esc = cli_esc_open(rank, 0)))
		return cli_error(EXIT_TARGET, "out of memory");
	err = jma_track_write_ranking(t, a->top, esc);
	if (fclose(esc) && !err)
		err = -EIO;
	if (err)
		return cli_error(EXIT_TARGET, "%s", jma_track_errmsg(t));
	if (!a->svg)
		return EXIT_OK;
	if ((err = cli_out_open(a->svg, true, &o)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", a->svg, cli_out_strerror(err));
	err = jma_track_svg(t, a->top ? a->top : 8, "live bytes per allocation site", o.f);
	err = cli_out_close(&o, !err) ?: err;
	if (err)
		return cli_error(EXIT_TARGET, "%s: %s", a->svg, strerror(-err));
	return EXIT_OK;
}

int cmd_prof_track(struct cli *c, int argc, char **argv)
{
	struct track_args a = { .interval = 10, .fmt = JMA_TRACK_TEXT, .top = 10,
				.no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE) };
	struct sigaction sa = { .sa_handler = on_stop }, old_int, old_term, old_hup, old_pipe;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	jma_track *t = NULL;
	struct cli_out o = { .f = stdout, .dirfd = -1 };
	FILE *out = stdout;
	bool was = false, changed = false;
	unsigned long k = 0;
	uint64_t allocated = 0;
	int err, rc = parse_track(c, argc, argv, &a);

	if (rc)
		return rc;
	if (jma_prof_check(c->s))
		return cli_fail_session(c);
	if (a.out && (rc = cli_out_open(a.out, false, &o)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", a.out, cli_out_strerror(rc));
	out = o.f;
	t = jma_track_new(&(struct jma_track_opts){ .pid = c->pid, .fold = a.fold,
						   .no_default_folds = a.no_default_folds,
						   .no_demangle = a.no_demangle });
	if (!t) {
		rc = cli_error(EXIT_TARGET, "out of memory");
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	/* A closed output pipe is a write error that ends the track with
	 * prof.active restored, not a death that leaves it on. */
	sigaction(SIGPIPE, &ign, &old_pipe);
	if (jma_prof_set_active(c->s, true, &was)) {
		rc = cli_fail_session(c);
		goto restore;
	}
	changed = !was;
	if (changed)
		fprintf(stderr, "jemattach: prof.active turned on for the track\n");
	while (!track_stop && (!a.count || k < a.count)) {
		/* An error, or Ctrl-C took the snapshot's place. */
		if ((rc = snapshot(c, t, k, &allocated)) || jma_track_nsnapshots(t) == k)
			break;
		if (jma_track_write_last(t, a.fmt, out)) {
			rc = cli_error(EXIT_TARGET, "%s", jma_track_errmsg(t));
			break;
		}
		if (++k == a.count || (rc = wait_next(c, &a, allocated)))
			break;
	}
restore:
	if (changed && !jma_exited(c->s) && restore_inactive(c)) {
		rc = cli_fail_session(c);
		fprintf(stderr, "jemattach: prof.active is still true: jemattach %d prof off\n",
			(int)c->pid);
	} else if (changed) {
		fprintf(stderr, "jemattach: prof.active restored to false\n");
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (track_stop)
		fprintf(stderr, "jemattach: stopped by signal %d after %lu snapshots\n",
			(int)track_stop, k);
	/* The ranking follows a text log; it goes to stderr when JSON lines
	 * fill stdout. */
	if (rc == EXIT_OK)
		rc = finish(t, &a, out == stdout && a.fmt == JMA_TRACK_JSONL ? stderr : stdout);
out:
	if (out != stdout && (err = cli_out_close(&o, true)) && rc == EXIT_OK)
		rc = cli_error(EXIT_TARGET, "writing %s: %s", a.out, strerror(-err));
	jma_track_free(t);
	return rc;
}

int cmd_report_sites(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "svg", required_argument, NULL, 's' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ 0 },
	};
	struct track_args a = { .top = 10, .no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE) };
	jma_track *t;
	char *end;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		errno = 0;
		if (opt == 's') {
			a.svg = optarg;
		} else if (opt == 'M') {
			a.no_demangle = 1;
		} else if (opt == 't') {
			a.top = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || optarg[0] == '-' || a.top > 100000)
				return cli_usage(c, "report", "invalid --top \"%s\"", optarg);
		} else {
			return cli_usage(c, "report", "invalid option to report sites");
		}
	}
	if (argc - optind != 1)
		return cli_usage(c, "report", "report sites needs a FILE (prof track --format jsonl) "
				 "or a DIR of *.heap profiles");
	/* A saved track keeps the names it was written with. */
	t = jma_track_new(&(struct jma_track_opts){ .no_demangle = a.no_demangle });
	if (!t)
		return cli_error(EXIT_TARGET, "out of memory");
	if (jma_track_load(t, argv[optind]))
		rc = cli_error(EXIT_USAGE, "%s", jma_track_errmsg(t));
	else
		rc = finish(t, &a, stdout);
	jma_track_free(t);
	return rc;
}
