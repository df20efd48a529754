/* cmd_sample.c -- `prof sample SECONDS`: a heap profile of a process started
 * without prof:true, by uprobes and eBPF (src/sampler), written as jemalloc's
 * heap_v2 so that analyze and --base work on it unchanged; and the sampler's
 * path of `prof window`.
 *
 * Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends the window early: the profile of the
 * samples so far is still written, as when the target exits.  What the run
 * did (its cost, what the guard gave up to stay within --max-overhead, the
 * frees read from jemalloc's metadata) is said on stderr (sampled.c), and an
 * empty or thin profile is explained in those terms (empty.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "esc.h"

/* Run the sampler as @o says and write its profile to @out ("-": stdout),
 * *@r its result (to free).  The output is opened (its path checked,
 * outfile.c) before the window, so that a refused path costs no window;
 * written and renamed into place after. */
static int run_and_save(struct cli *c, const struct jma_sampler_opts *o, const char *out,
			struct jma_sampler_result *r)
{
	struct cli_stop_saved sv;
	struct cli_out f;
	int err, rc = EXIT_OK;

	*r = (struct jma_sampler_result){ .sz = sizeof(*r) };
	if ((err = cli_out_open(out, true, &f)))
		return cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", out,
				 cli_out_strerror(err));
	cli_stop_catch(&sv, false);
	fprintf(stderr, "jemattach: sampling process %d for %g s (", (int)c->pid, o->seconds);
	if (o->lg_sample)
		fprintf(stderr, "1 in 2^%u bytes on average", o->lg_sample);
	else
		fprintf(stderr, "1 in 2^%u bytes on average to start with, up to 2^%u as samples "
			"come faster", jma_sampler_lg_start(o), o->lg_nominal ? o->lg_nominal : 19);
	fprintf(stderr, "%s)", o->alloc_only ? ", allocations only" : "");
	if (o->settle > 0)
		fprintf(stderr, ", then following frees for %g s", o->settle);
	fprintf(stderr, "\n");
	err = jma_sampler_run(c->s, o, r);
	cli_stop_release(&sv);
	if (err) {
		cli_out_close(&f, false);
		return cli_fail_session(c);
	}
	cli_sample_summary(r, o);
	err = fwrite(r->profile, 1, r->len, f.f) == r->len ? 0 : -EIO;
	err = cli_out_close(&f, !err) ?: err;
	if (err)
		rc = cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", out,
			       cli_out_strerror(err));
	else if (strcmp(out, "-"))
		printf("%s (%zu bytes)\n", cli_esc(out), r->len);
	return rc;
}

static const struct option sample_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "lg-sample", required_argument, NULL, 'l' },
	{ "alloc-only", no_argument, NULL, 'A' },
	{ "slow-paths", no_argument, NULL, 'S' },
	{ "analyze", no_argument, NULL, 'a' },
	{ "top", required_argument, NULL, 'n' },
	{ "max-overhead", required_argument, NULL, 'm' },
	{ 0 },
};

int cmd_prof_sample(struct cli *c, int argc, char **argv)
{
	struct jma_sampler_opts o = { .sz = sizeof(o), .max_overhead = CLI_BUDGET_DEFAULT / 100.0, .stop = &cli_stop };
	struct jma_sampler_result r = { .sz = sizeof(r) };
	struct cli_sampled sm = { &r, &o };
	const char *out = NULL;
	unsigned top = 20;
	char name[256];
	int opt, rc, an = 0;
	double v;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:", sample_opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'A': o.alloc_only = 1; break;
		case 'S': o.slow_paths = 1; break;
		case 'a': an = 1; break;
		case 'l':
			if ((rc = cli_parse_lg(c, optarg, &o.lg_sample)))
				return rc;
			break;
		case 'm':
			if ((rc = cli_parse_percent(c, optarg, &v)))
				return rc;
			o.max_overhead = v / 100;
			break;
		case 'n':
			if ((rc = prof_parse_top(c, optarg, &top)))
				return rc;
			break;
		default: return cli_usage(c, "prof", "invalid option to prof sample");
		}
	}
	if (argc - optind != 1)
		return cli_usage(c, "prof", "prof sample needs SECONDS");
	if ((rc = cli_arg_num(c, "prof", "SECONDS", argv[optind], 0, 86400, &o.seconds)) ||
	    !(o.seconds > 0))
		return rc ? rc : cli_usage(c, "prof", "invalid SECONDS \"%s\"", argv[optind]);
	if (an && out && !strcmp(out, "-"))
		return cli_usage(c, "prof", "--analyze needs the profile in a file, not -o -");
	if (!out) {
		prof_default_name(c->pid, name, sizeof(name));
		out = name;
	}
	rc = run_and_save(c, &o, out, &r);
	if (rc == EXIT_OK && an) {
		fflush(stdout);
		rc = prof_analyze_sampled(c, out, top, o.alloc_only ? JMA_HEAP_ALLOC_SPACE
								  : JMA_HEAP_INUSE_SPACE, &sm);
	}
	jma_sampler_result_free(&r);
	return rc;
}

int cli_parse_percent(struct cli *c, const char *arg, double *v)
{
	return cli_arg_num(c, "prof", "--max-overhead", arg, 0, 100, v);
}

int cli_parse_lg(struct cli *c, const char *arg, unsigned *lg)
{
	long long v;
	int rc = cli_arg_int(c, "prof", "--lg-sample", arg, 0, 40, &v);

	if (!rc)
		*lg = (unsigned)v;
	return rc;
}

/* The target's configured sample period, opt.lg_prof_sample, so that the
 * sampler's figures and jemalloc's own compare (0: jemalloc's default). */
unsigned cli_sample_lg(struct cli *c)
{
	struct jma_value v;

	if (jma_get(c->s, "opt.lg_prof_sample", &v) || v.type != JMA_T_SIZE || v.z > 40)
		return 0;
	return (unsigned)v.z;
}

int cli_sampler_instead(struct cli *c, const char *what, bool *sampler)
{
	if (*sampler || !jma_prof_check(c->s))
		return EXIT_OK;
	if (jma_errkind(c->s) != JMA_ERR_MISSING)
		return cli_fail_session(c);
	*sampler = true;
	fprintf(stderr, "jemattach: jemalloc's profiler is off in process %d (opt.prof false): "
		"%s uses the sampler (uprobes and eBPF) instead\n", (int)c->pid, what);
	return EXIT_OK;
}

int cli_sample_window(struct cli *c, double secs, const char *path, unsigned top, double budget,
		      unsigned lg)
{
	struct jma_sampler_opts o = { .sz = sizeof(o), .seconds = secs, .settle = secs, .max_overhead = budget,
				      .lg_sample = lg, .lg_nominal = cli_sample_lg(c),
				      .stop = &cli_stop };
	struct jma_sampler_result r = { .sz = sizeof(r) };
	struct cli_sampled sm = { &r, &o };
	int rc = run_and_save(c, &o, path, &r);

	if (rc == EXIT_OK) {
		printf("\nallocation sites that grew during the window (sampled by uprobes for %.1f s%s; "
		       "in use %.1f s after it):\n", r.seconds, r.end != JMA_SAMPLER_TIME ?
		       ", ended early" : "", r.settled);
		fflush(stdout);
		rc = prof_analyze_sampled(c, path, top, JMA_HEAP_INUSE_SPACE, &sm);
	}
	jma_sampler_result_free(&r);
	return rc;
}
