/* cmd_sample.c -- `prof sample SECONDS`: a heap profile of a process started
 * without prof:true, by uprobes and eBPF (src/sampler), written as jemalloc's
 * heap_v2 so that analyze and --base work on it unchanged.
 *
 * Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends the window early: the profile of the
 * samples so far is still written, as when the target exits or the cost
 * passes --max-overhead.
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
	[JMA_SAMPLER_OVERHEAD] = "ended early: the probes' cost passed --max-overhead",
	[JMA_SAMPLER_EXITED] = "the process exited",
	[JMA_SAMPLER_EXECED] = "the process executed another program (its probes went with it)",
};

void cli_sample_summary(const struct jma_sampler_result *r, const struct jma_sampler_opts *o)
{
	char a[32], b[32];

	if (ends[r->end])
		fprintf(stderr, "jemattach: %s after %.1f s; the profile holds the samples so far\n",
			ends[r->end], r->seconds);
	fprintf(stderr, "jemattach: %.1f s, %u probes: ", r->seconds, r->nprobes);
	if (r->counted)
		fprintf(stderr, "%llu hits, ", (unsigned long long)r->hits);
	fprintf(stderr, "%llu samples (%llu lost), %s allocated", (unsigned long long)r->samples,
		(unsigned long long)r->lost, cli_bytes(r->alloc_bytes, a, sizeof(a)));
	if (!o->alloc_only)
		fprintf(stderr, ", %s of it still in use", cli_bytes(r->inuse_bytes, b, sizeof(b)));
	if (r->by_counter)
		fprintf(stderr, "\njemattach: %u allocation functions probed on their slow path; each "
			"of jemalloc's thread events stands for the bytes it counted since the last", r->nslow);
	else if (o->slow_paths && r->nslow)
		fprintf(stderr, "\njemattach: %u allocation functions probed on their slow path: small "
			"allocations are counted only when they leave jemalloc's fast path", r->nslow);
	else if (o->slow_paths)
		fprintf(stderr, "\njemattach: no slow path found in this jemalloc's malloc (3.x, 4.x, "
			"5.0): every entry probed");
	if (r->counted)
		fprintf(stderr, "\njemattach: cost to the process: ~%.3f s of its %.3f s CPU (%.1f%%; "
			"%.1f us a hit, %.1f ms in BPF)\n",
			(double)r->hits * r->hit_us / 1e6 + (double)r->bpf_ns / 1e9, r->target_cpu,
			r->overhead * 100, r->hit_us, (double)r->bpf_ns / 1e6);
	else
		fprintf(stderr, "\njemattach: probe hits not counted (the kernel's BPF statistics need "
			"CAP_SYS_ADMIN): the cost was neither shown nor limited\n");
	if (r->samples && r->unwound_short * 10 > r->samples)
		fprintf(stderr, "jemattach: %llu of %llu stacks have fewer than 4 frames (no unwind "
			"information for some code?)\n", (unsigned long long)r->unwound_short,
			(unsigned long long)r->samples);
	if (r->untracked)
		fprintf(stderr, "jemattach: %llu sampled pointers were not followed (table full): "
			"counted as freed\n", (unsigned long long)r->untracked);
}

/* Run the sampler as @o says and write its profile to @out ("-": stdout). */
/* The output is opened (its path checked, outfile.c) before the window, so
 * that a refused path costs no window; written and renamed into place after. */
static int run_and_save(struct cli *c, const struct jma_sampler_opts *o, const char *out)
{
	struct cli_stop_saved sv;
	struct jma_sampler_result r;
	struct cli_out f;
	int err, rc = EXIT_OK;

	if ((err = cli_out_open(out, true, &f)))
		return cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", out,
				 cli_out_strerror(err));
	cli_stop_catch(&sv, false);
	fprintf(stderr, "jemattach: sampling process %d for %g s (1 in 2^%u bytes on average%s)",
		(int)c->pid, o->seconds, o->lg_sample ? o->lg_sample : 19,
		o->alloc_only ? ", allocations only" : "");
	if (o->settle > 0)
		fprintf(stderr, ", then following frees for %g s", o->settle);
	fprintf(stderr, "\n");
	err = jma_sampler_run(c->s, o, &r);
	cli_stop_release(&sv);
	if (err) {
		cli_out_close(&f, false);
		return cli_fail_session(c);
	}
	cli_sample_summary(&r, o);
	err = fwrite(r.profile, 1, r.len, f.f) == r.len ? 0 : -EIO;
	err = cli_out_close(&f, !err) ?: err;
	if (err)
		rc = cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", out,
			       cli_out_strerror(err));
	else if (strcmp(out, "-"))
		printf("%s (%zu bytes)\n", cli_esc(out), r.len);
	jma_sampler_result_free(&r);
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
	struct jma_sampler_opts o = { .max_overhead = 0.05, .stop = &cli_stop };
	const char *out = NULL;
	unsigned top = 20;
	char name[256];
	int opt, rc, an = 0;
	long long lg;
	double v;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:", sample_opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'A': o.alloc_only = 1; break;
		case 'S': o.slow_paths = 1; break;
		case 'a': an = 1; break;
		case 'l':
			if ((rc = cli_arg_int(c, "prof", "--lg-sample", optarg, 0, 40, &lg)))
				return rc;
			o.lg_sample = (unsigned)lg;
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
	rc = run_and_save(c, &o, out);
	if (rc == EXIT_OK && an) {
		fflush(stdout);
		rc = prof_analyze(c, out, top, o.alloc_only ? JMA_HEAP_ALLOC_SPACE : JMA_HEAP_INUSE_SPACE);
	}
	return rc;
}

int cli_parse_percent(struct cli *c, const char *arg, double *v)
{
	return cli_arg_num(c, "prof", "--max-overhead", arg, 0, 100, v);
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

int cli_sample_window(struct cli *c, double secs, const char *path, unsigned top, double budget)
{
	struct jma_sampler_opts o = { .seconds = secs, .settle = secs, .max_overhead = budget,
				      .lg_sample = cli_sample_lg(c), .stop = &cli_stop };
	int rc = run_and_save(c, &o, path);

	if (rc == EXIT_OK) {
		printf("\nallocation sites that grew during the window (sampled by uprobes; in use %g s "
		       "after it):\n", secs);
		fflush(stdout);
		rc = prof_analyze(c, path, top, JMA_HEAP_INUSE_SPACE);
	}
	return rc;
}
