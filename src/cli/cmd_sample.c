/* cmd_sample.c -- `prof sample SECONDS`: a heap profile of a process started
 * without prof:true, by uprobes and eBPF (src/sampler), written as jemalloc's
 * heap_v2 so that analyze and --base work on it unchanged; and the sampler's
 * path of `prof window`.
 *
 * Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends the window early: the profile of the
 * samples so far is still written, as when the target exits.  What the run
 * did (its cost, what the guard gave up to stay within --max-overhead, the
 * frees read from jemalloc's metadata) is said on stderr, and an empty or
 * thin profile is explained in those terms (empty.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "esc.h"

static const char *const ends[] = {
	[JMA_SAMPLER_TIME] = NULL,
	[JMA_SAMPLER_STOPPED] = "interrupted",
	[JMA_SAMPLER_OVERHEAD] = "ended early: the probes' cost stayed past --max-overhead with "
				 "nothing left to give up",
	[JMA_SAMPLER_EXITED] = "the process exited",
	[JMA_SAMPLER_EXECED] = "the process executed another program (its probes went with it)",
};

unsigned cli_sample_lg_used(const struct jma_sampler_result *r)
{
	return r->lg_sample > r->shift ? r->lg_sample - r->shift : 0;
}

void cli_sample_story(const struct jma_sampler_result *r, const struct jma_sampler_opts *o, FILE *f,
		      const char *lead)
{
	char a[32];

	if (r->full_rate > 0)
		fprintf(f, "%severy call probed for %.1f s cost %.1f%% of a CPU, past the budget "
			"(%.1f%% then)", lead, r->every_call, r->full_rate * 100, r->full_allowed * 100);
	else if (o->slow_paths)
		fprintf(f, "%s--slow-paths", lead);
	if (r->full_rate > 0 || o->slow_paths) {
		if (r->bursts)
			fprintf(f, ": allocations then probed in %u bursts (%.2f s, %.1f%% of the time), "
				"sampled at 1 in 2^%u bytes, each sample standing for %.0f (by %s)",
				r->bursts, r->burst_s, r->seconds - r->every_call > 0 ?
				r->burst_s * 100 / (r->seconds - r->every_call) : 0, cli_sample_lg_used(r),
				r->scale, r->by_counter ? "jemalloc's byte counter" : "time");
		else if (r->full_rate > 0 && r->settled <= 0)
			fputs(": no burst of allocation probes in the time left", f);
		if (r->bursts && r->slowed >= 0)
			fprintf(f, "; the process's progress (its allocations, by jemalloc's counter) "
				"was %.1f%% slower than between bursts", r->slowed * 100);
		if (r->frees_dropped && o->settle > 0 && r->full_rate > 0 && !r->bursts)
			fputs(": frees no longer probed at every call", f);
		fputc('\n', f);
	}
	if (r->base_dropped)
		fprintf(f, "%sjemalloc's slow paths were not probed any more either (they alone "
			"passed the budget)\n", lead);
	if (r->checked)
		fprintf(f, "%sthe frees of %llu sampled blocks were not all seen: read in jemalloc's "
			"metadata at the end, %llu are still allocated (a block freed and given "
			"out again reads as in use)\n", lead, (unsigned long long)r->checked,
			(unsigned long long)r->still_live);
	else if (r->check_err[0] && r->live)
		fprintf(f, "%sthe frees of %llu sampled blocks (%s) were not all seen, and jemalloc's "
			"metadata could not be read (%s): counted as in use\n", lead,
			(unsigned long long)r->live, cli_bytes(r->inuse_bytes, a, sizeof(a)),
			cli_esc(r->check_err));
}

void cli_sample_summary(const struct jma_sampler_result *r, const struct jma_sampler_opts *o)
{
	char a[32], b[32];

	if (ends[r->end])
		fprintf(stderr, "jemattach: %s after %.1f s; the profile holds the samples so far\n",
			ends[r->end], r->seconds + r->settled);
	fprintf(stderr, "jemattach: %.1f s, %u probes: ", r->seconds, r->nprobes);
	if (r->counted)
		fprintf(stderr, "%llu hits, ", (unsigned long long)r->hits);
	fprintf(stderr, "%llu samples (%llu lost), %s allocated", (unsigned long long)r->samples,
		(unsigned long long)r->lost, cli_bytes(r->alloc_bytes, a, sizeof(a)));
	if (!o->alloc_only)
		fprintf(stderr, ", %s of it still in use", cli_bytes(r->inuse_bytes, b, sizeof(b)));
	if (r->settled > 0)
		fprintf(stderr, " %.1f s after", r->settled);
	fputc('\n', stderr);
	if (r->counted)
		fprintf(stderr, "jemattach: cost to the process: ~%.3f s of its %.3f s CPU (%.1f%%), "
			"%.1f ms a second of the window (%.1f%% of one CPU; budget %.1f%%); %.1f us "
			"a hit, %.1f ms in BPF\n", r->cost, r->target_cpu, r->overhead * 100,
			r->cost_rate * 1000, r->cost_rate * 100, r->allowed * 100, r->hit_us,
			(double)r->bpf_ns / 1e6);
	else
		fprintf(stderr, "jemattach: probe hits not counted (the kernel's BPF statistics need "
			"CAP_SYS_ADMIN): the cost was neither shown nor limited\n");
	cli_sample_story(r, o, stderr, "jemattach: ");
	if (r->samples && r->unwound_short * 10 > r->samples)
		fprintf(stderr, "jemattach: %llu of %llu stacks have fewer than 4 frames (no unwind "
			"information for some code?)\n", (unsigned long long)r->unwound_short,
			(unsigned long long)r->samples);
	if (r->untracked)
		fprintf(stderr, "jemattach: %llu sampled pointers were not followed (table full): "
			"counted as freed\n", (unsigned long long)r->untracked);
}

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

	memset(r, 0, sizeof(*r));
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
	struct jma_sampler_opts o = { .max_overhead = CLI_BUDGET_DEFAULT / 100.0, .stop = &cli_stop };
	struct jma_sampler_result r;
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
	struct jma_sampler_opts o = { .seconds = secs, .settle = secs, .max_overhead = budget,
				      .lg_sample = lg, .lg_nominal = cli_sample_lg(c),
				      .stop = &cli_stop };
	struct jma_sampler_result r;
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
