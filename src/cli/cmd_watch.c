/* cmd_watch.c -- "watch": sample a process's memory at an interval, as JSON lines, CSV or Prometheus text.
 *
 * Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends the watch between samples with a
 * complete file.  A signal that arrives during a sample is held back by the
 * library until the target is restored (a call in progress is never cut
 * short); the sample it interrupted is dropped, not written half.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/clock.h"

/* Tries per sample when every thread happens to be inside jemalloc. */
#define BUSY_TRIES	5
#define BUSY_PAUSE_MS	20

struct watch {
	double interval;	/* seconds */
	unsigned long count;	/* samples to write; 0: until stopped */
	const char *out;	/* NULL or "-": stdout */
	enum jma_series_fmt fmt;
	unsigned flags;		/* JMA_SAMPLE_* */
	/* what the target paid, for the summary */
	unsigned long samples;
	uint64_t hold_sum, hold_max;
};


/* Sleep until @deadline (monotonic seconds).  Returns 1 when asked to stop. */
static int pause_until(double deadline)
{
	return jma_sleep_until(deadline, 0.05, &cli_stop);
}

/* 0: sampled.  1: the target stayed busy, skip this iteration.  2: asked to
 * stop.  -1: failed, with the session's error. */
static int sample(struct cli *c, struct watch *w, unsigned iter, struct jma_sample *smp)
{
	for (int tries = 1;; tries++) {
		int err = jma_sample(c->s, w->flags, iter, smp);

		if (!err)
			return 0;
		if (cli_stop)
			return 2;
		if (err != -EAGAIN || jma_errkind(c->s) != JMA_ERR_UNSAFE)
			return -1;
		if (tries == BUSY_TRIES) {
			char *why = cli_errmsg(c->s);

			fprintf(stderr, "%s: iteration %u skipped: %s\n", c->prog, iter,
				cli_esc_lines(why ? why : jma_errmsg(c->s)));
			free(why);
			return 1;
		}
		if (pause_until(jma_clock_s(CLOCK_MONOTONIC) + BUSY_PAUSE_MS / 1000.0))
			return 2;
	}
}

/* Prometheus' textfile collector may read at any moment: write a sibling
 * file and rename it over the old one, so it sees one whole sample. */
static int replace_prom_file(const char *path, const struct jma_sample *smp)
{
	struct cli_out o;
	int err = cli_out_open(path, true, &o);

	if (err)
		return err;
	err = jma_series_write(o.f, JMA_SERIES_PROM, smp);
	return cli_out_close(&o, !err) ?: err;
}

/* Whether the process has exited (the library's pidfd says so once it is
 * a zombie), allowing an exit in progress (threads gone, not yet a zombie)
 * 200 ms to finish. */
static int target_exited(const jma_session *s)
{
	for (int i = 0; i < 20; i++) {
		struct timespec step = { 0, 10000000 };

		if (jma_exited(s))
			return 1;
		nanosleep(&step, NULL);
	}
	return 0;
}

/* The target exited during the watch: what was written is a whole series.
 * Exit 0 when watching until stopped; 1 when -n COUNT samples were asked
 * and fewer were taken. */
static int target_ended(struct cli *c, const struct watch *w)
{
	if (w->count && w->samples < w->count)
		return cli_error(EXIT_TARGET, "process %d exited after %lu of %lu samples", (int)c->pid,
				 w->samples, w->count);
	fprintf(stderr, "%s: process %d exited; %lu samples written\n", c->prog, (int)c->pid,
		w->samples);
	return EXIT_OK;
}

static int watch_loop(struct cli *c, struct watch *w)
{
	struct cli_out o = { .f = stdout };
	FILE *f = stdout;
	const char *name = w->out && strcmp(w->out, "-") ? w->out : "standard output";
	double next = jma_clock_s(CLOCK_MONOTONIC);
	int rc = EXIT_OK, err;

	if (w->fmt != JMA_SERIES_PROM && w->out && strcmp(w->out, "-")) {
		err = cli_out_open(w->out, false, &o);
		if (err)
			return cli_error(EXIT_USAGE, "cannot create %s: %s", w->out,
					 cli_out_strerror(err));
		f = o.f;
	}
	if (w->fmt != JMA_SERIES_PROM && (err = jma_series_write_header(f, w->fmt)))
		rc = cli_error(EXIT_TARGET, "writing %s: %s", name, strerror(-err));
	for (unsigned iter = 0; rc == EXIT_OK && (!w->count || w->samples < w->count); iter++) {
		struct jma_sample smp;
		int got;

		if (pause_until(next))
			break;
		next += w->interval;
		if (next < jma_clock_s(CLOCK_MONOTONIC))
			next = jma_clock_s(CLOCK_MONOTONIC);	/* fell behind (slow target): keep the pace from now */
		got = sample(c, w, iter, &smp);
		if (got < 0)
			rc = target_exited(c->s) ? target_ended(c, w) : cli_fail_session(c);
		if (got < 0 || got == 2)
			break;
		if (got == 1)
			continue;
		err = w->fmt == JMA_SERIES_PROM ? replace_prom_file(w->out, &smp)
						: jma_series_write(f, w->fmt, &smp);
		if (err)
			rc = cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", name,
				       cli_out_strerror(err));
		w->samples++;
		w->hold_sum += smp.hold_ns;
		w->hold_max = smp.hold_ns > w->hold_max ? smp.hold_ns : w->hold_max;
		jma_sample_clear(&smp);
	}
	if (f != stdout && (err = cli_out_close(&o, true)) && rc == EXIT_OK)
		rc = cli_error(EXIT_TARGET, "writing %s: %s", name, strerror(-err));
	/* For the person at the terminal: what watching cost the target. */
	if (w->samples && isatty(STDERR_FILENO))
		fprintf(stderr, "%s: %lu samples; the target thread was held %.2f ms on average, "
			"%.2f ms at most\n", c->prog, w->samples,
			(double)w->hold_sum / (double)w->samples / 1e6, (double)w->hold_max / 1e6);
	return rc;
}

static int parse_args(struct cli *c, int argc, char **argv, struct watch *w)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'F' },
		{ "arenas", no_argument, NULL, 'a' },
		{ 0 },
	};
	const char *fmt = NULL;
	long long n;
	int opt;

	while ((opt = getopt_long(argc, argv, "i:n:o:F:a", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (cli_parse_num(optarg, 0.01, 86400, &w->interval))
				return cli_usage(c, "watch", "invalid -i \"%s\": seconds, 0.01 to 86400",
						 optarg);
			break;
		case 'n':
			if (cli_parse_int(optarg, 1, LLONG_MAX, &n))
				return cli_usage(c, "watch", "invalid -n \"%s\": a count, > 0", optarg);
			w->count = (unsigned long)n;
			break;
		case 'o': w->out = optarg; break;
		case 'F': fmt = optarg; break;
		case 'a': w->flags |= JMA_SAMPLE_ARENAS; break;
		default: return cli_usage(c, "watch", "invalid option");
		}
	}
	if (optind != argc)
		return cli_usage(c, "watch", "unexpected argument \"%s\"", argv[optind]);
	if (!fmt && w->out) {
		/* The file name says what is wanted when --format does not. */
		const char *dot = strrchr(w->out, '.');
		fmt = dot && (!strcmp(dot, ".csv") || !strcmp(dot, ".prom")) ? dot + 1 : NULL;
	}
	if (fmt && jma_series_fmt_parse(fmt, &w->fmt))
		return cli_usage(c, "watch", "invalid --format \"%s\": jsonl, csv or prom", fmt);
	if (w->fmt == JMA_SERIES_PROM && (!w->out || !strcmp(w->out, "-")))
		return cli_usage(c, "watch", "--format prom needs -o FILE (the file is replaced "
				 "at each sample)");
	return EXIT_OK;
}

int cmd_watch(struct cli *c, int argc, char **argv)
{
	struct watch w = { .interval = 10, .fmt = JMA_SERIES_JSONL };
	struct cli_stop_saved sv;
	int rc = parse_args(c, argc, argv, &w);

	if (rc)
		return rc;
	cli_stop_catch(&sv, false);
	rc = watch_loop(c, &w);
	cli_stop_release(&sv);
	return rc;
}
