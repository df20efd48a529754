/* cmd_track.c -- "prof track": per-site memory over time (pmem's log, from
 * outside), ranked at its end as "report sites" ranks a saved one (cmd_report.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "core/clock.h"

struct track_args {
	double interval;
	uint64_t churn;		/* 0: time only */
	unsigned long count;	/* 0: until Ctrl-C */
	const char *out, *svg, *fold;
	int no_default_folds, no_demangle;
	enum jma_track_format fmt;
	unsigned top;
	bool sampler;		/* --sampler, or jemalloc's profiler is off */
	double budget;		/* the sampler's --max-overhead, percent */
};

static const struct option track_opts[] = {
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
	{ "sampler", no_argument, NULL, 'S' },
	{ "max-overhead", required_argument, NULL, 'm' },
	{ 0 },
};

static int parse_track(struct cli *c, int argc, char **argv, struct track_args *a)
{
	long long n;
	regex_t re;
	int opt, f, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "i:n:o:", track_opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (cli_parse_num(optarg, 0.05, 86400, &a->interval))
				return cli_usage(c, "prof", "invalid -i \"%s\": seconds, 0.05 or more",
						 optarg);
			break;
		case 'c':
			if (jma_parse_size(optarg, &a->churn) || !a->churn)
				return cli_usage(c, "prof", "invalid --churn \"%s\": a size such as 64M, "
						 "512K (a bare number is MiB)", optarg);
			break;
		case 'n':
			if ((rc = cli_arg_int(c, "prof", "-n", optarg, 1, LLONG_MAX, &n)))
				return rc;
			a->count = (unsigned long)n;
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
			if ((rc = prof_parse_top(c, optarg, &a->top)))
				return rc;
			break;
		case 'S': a->sampler = true; break;
		case 'm':
			if ((rc = cli_parse_percent(c, optarg, &a->budget)))
				return rc;
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
	struct jma_track_meta m = { .time = jma_clock_s(CLOCK_REALTIME) };
	double t0 = jma_clock_s(CLOCK_MONOTONIC);
	char *buf = NULL, name[64];
	size_t len = 0;
	int own, err = jma_hold_begin(c->s, &own);

	if (!err && !(err = read_allocated(c->s, &m.allocated)))
		err = jma_prof_dump(c->s, &buf, &len);
	err = jma_hold_end(c->s, own, err);
	m.hold_ns = (uint64_t)((jma_clock_s(CLOCK_MONOTONIC) - t0) * 1e9);
	if (err) {
		free(buf);
		/* Ctrl-C while attaching or before a call: the normal end of a
		 * track; that snapshot is not taken, the log ends before it. */
		if (cli_stop && err == -EINTR)
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
	double end = jma_clock_s(CLOCK_MONOTONIC) + a->interval;

	while (!cli_stop) {
		struct timespec step = { 0, 100000000 };
		double left = end - jma_clock_s(CLOCK_MONOTONIC);
		uint64_t v = 0;

		if (left <= 0)
			return EXIT_OK;
		if (left < 0.1)
			step.tv_nsec = (long)(left * 1e9);
		nanosleep(&step, NULL);
		if (a->churn && !cli_stop) {
			int own, err = jma_hold_begin(c->s, &own);
			if (!err)
				err = read_allocated(c->s, &v);
			err = jma_hold_end(c->s, own, err);
			if (err == -EINTR && cli_stop)
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

/* prof.active on for the track, @was what it was.  Read before it is set: a
 * Ctrl-C inside the set gives the call up, left to finish on its own, and
 * prof.active may then be true or not; known to have been false, the end of
 * the track puts it back.  A Ctrl-C before the set changed nothing: @was
 * true, nothing to put back.  (The profiler is there: cli_sampler_instead
 * checked.) */
static int activate(struct cli *c, bool *was)
{
	struct jma_value v;
	int own, err = jma_hold_begin(c->s, &own);

	*was = true;
	if (!err && !(err = jma_get(c->s, "prof.active", &v)))
		*was = v.b;
	if (!err && !*was)
		err = jma_prof_set_active(c->s, true, NULL);
	err = jma_hold_end(c->s, own, err);
	return !err || (err == -EINTR && cli_stop) ? EXIT_OK : cli_fail_session(c);
}

/* One track in progress: where its snapshots go. */
struct track_run {
	struct cli *c;
	const struct track_args *a;
	jma_track *t;
	FILE *out;
	unsigned long k;	/* snapshots written */
	int rc;
};

/* jemalloc's profiler: prof.active on for the track (and back after), a
 * dump every interval or --churn. */
static int profiler_track(struct track_run *r)
{
	struct cli *c = r->c;
	const struct track_args *a = r->a;
	uint64_t allocated = 0;
	bool was = false;
	int rc = EXIT_OK;

	if ((rc = activate(c, &was)))
		return rc;
	if (!was)
		fprintf(stderr, "jemattach: prof.active turned on for the track\n");
	while (!cli_stop && (!a->count || r->k < a->count)) {
		/* An error, or Ctrl-C took the snapshot's place. */
		if ((rc = snapshot(c, r->t, r->k, &allocated)) || jma_track_nsnapshots(r->t) == r->k)
			break;
		if (jma_track_write_last(r->t, a->fmt, r->out)) {
			rc = cli_error(EXIT_TARGET, "%s", jma_track_errmsg(r->t));
			break;
		}
		if (++r->k == a->count || (rc = wait_next(c, a, allocated)))
			break;
	}
	if (!was && !jma_exited(c->s) && restore_inactive(c)) {
		rc = cli_fail_session(c);
		fprintf(stderr, "jemattach: prof.active is still true: jemattach %d prof off\n",
			(int)c->pid);
	} else if (!was) {
		fprintf(stderr, "jemattach: prof.active restored to false\n");
	}
	return rc;
}

/* The sampler's profile so far: the next snapshot; non-zero ends the track. */
static int sampled(void *arg, const char *profile, size_t len)
{
	struct track_run *r = arg;
	struct jma_track_meta m = { .time = jma_clock_s(CLOCK_REALTIME) };
	char name[64];

	snprintf(name, sizeof(name), "snapshot %lu", r->k);
	if (jma_track_add(r->t, profile, len, name, &m) ||
	    jma_track_write_last(r->t, r->a->fmt, r->out)) {
		r->rc = cli_error(EXIT_TARGET, "%s", jma_track_errmsg(r->t));
		return 1;
	}
	return ++r->k == r->a->count;
}

/* The sampler (uprobes, nothing written into the process): what was
 * allocated since the track began and is still in use, every interval. */
static int sampler_track(struct track_run *r)
{
	const struct track_args *a = r->a;
	struct jma_sampler_opts o = {
		.sz = sizeof(o),
		.seconds = a->count ? (double)a->count * a->interval + 1 : 1e9,
		.lg_nominal = cli_sample_lg(r->c), .max_overhead = a->budget / 100,
		.stop = &cli_stop, .snapshot_every = a->interval, .snapshot = sampled,
		.snapshot_arg = r,
	};
	struct jma_sampler_result res = { .sz = sizeof(res) };

	if (a->churn)
		return cli_usage(r->c, "prof", "--churn needs jemalloc's profiler (prof:true): the "
				 "sampler takes a snapshot every -i SEC");
	fprintf(stderr, "jemattach: sampling process %d (1 in 2^%u bytes on average to start with), "
		"a snapshot every %g s\n", (int)r->c->pid, jma_sampler_lg_start(&o), a->interval);
	if (jma_sampler_run(r->c->s, &o, &res))
		return r->rc ? r->rc : cli_fail_session(r->c);
	/* -n COUNT snapshots taken: the track's normal end, no interruption. */
	if (a->count && r->k == a->count)
		res.end = JMA_SAMPLER_TIME;
	cli_sample_summary(&res, &o);
	jma_sampler_result_free(&res);
	return r->rc;
}

int cmd_prof_track(struct cli *c, int argc, char **argv)
{
	struct track_args a = { .interval = 10, .fmt = JMA_TRACK_TEXT, .top = 10,
				.budget = CLI_BUDGET_DEFAULT,
				.no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE) };
	struct cli_out o = { .f = stdout, .dirfd = -1 };
	struct track_run r = { .c = c, .a = &a, .out = stdout };
	struct cli_stop_saved sv;
	int err, rc = parse_track(c, argc, argv, &a);

	if (rc || (rc = cli_sampler_instead(c, "prof track", &a.sampler)))
		return rc;
	if (a.out && (rc = cli_out_open(a.out, false, &o)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", a.out, cli_out_strerror(rc));
	r.out = o.f;
	r.t = jma_track_new(&(struct jma_track_opts){ .sz = sizeof(struct jma_track_opts),
						     .pid = c->pid, .fold = a.fold,
						     .no_default_folds = a.no_default_folds,
						     .no_demangle = a.no_demangle });
	if (!r.t) {
		rc = cli_error(EXIT_TARGET, "out of memory");
	} else {
		/* A closed output pipe is a write error that ends the track
		 * with prof.active restored, not a death that leaves it on. */
		cli_stop_catch(&sv, true);
		rc = a.sampler ? sampler_track(&r) : profiler_track(&r);
		cli_stop_release(&sv);
		if (cli_stop)
			fprintf(stderr, "jemattach: stopped by signal %d after %lu snapshots\n",
				(int)cli_stop, r.k);
		/* The ranking follows a text log; it goes to stderr when JSON
		 * lines fill stdout. */
		if (rc == EXIT_OK)
			rc = cli_sites_ranking(r.t, a.top, a.svg, "live bytes per allocation site",
					       r.out == stdout && a.fmt == JMA_TRACK_JSONL ? stderr : stdout);
	}
	if (r.out != stdout && (err = cli_out_close(&o, true)) && rc == EXIT_OK)
		rc = cli_error(EXIT_TARGET, "writing %s: %s", a.out, strerror(-err));
	jma_track_free(r.t);
	return rc;
}
