/* empty.c -- after a heap report with nothing in it: why (one sample per
 * so many bytes allocated, against what the process allocated) and what to
 * do, so that "Total: 0.0 MB" is not the whole answer.  jemalloc's own
 * profiles are explained with its profiler's knobs (prof.active, prof
 * reset, prof_accum); the sampler's with its own (samples, rate, what the
 * guard gave up, --lg-sample, the window, --max-overhead). */
#include <stdio.h>

#include "cli.h"

/* log2 of the sample period; 0 when it is not a power of two. */
static unsigned lg_of(uint64_t p)
{
	unsigned lg = 0;

	if (!p || (p & (p - 1)))
		return 0;
	while (p >>= 1)
		lg++;
	return lg;
}

static int alloc_sample(const struct jma_heap_report_opts *o)
{
	return o->sample == JMA_HEAP_ALLOC_SPACE || o->sample == JMA_HEAP_ALLOC_OBJECTS;
}

int cli_heap_empty(jma_heap *h, const struct jma_heap_report_opts *o)
{
	struct jma_heap_info in;

	jma_heap_info(h, &in);
	return !in.is_diff && !(alloc_sample(o) ? in.samples_alloc : in.samples);
}

void cli_hint_empty(struct cli *c, jma_heap *h, const struct jma_heap_report_opts *o,
		    const char *lead)
{
	struct jma_heap_info in;
	int alloc = alloc_sample(o);
	unsigned lg;
	uint64_t bytes, count;
	char a[32], b[32], pid[24] = "PID";

	jma_heap_info(h, &in);
	lg = lg_of(in.period);
	if (lead)
		fprintf(stderr, "jemattach: %s\n", lead);
	else
		fprintf(stderr, "jemattach: the profile is empty: %s\n",
			alloc ? "no allocation was sampled since profiling started"
			      : "no sampled allocation is live");
	if (!alloc && !in.is_diff && in.samples_alloc)
		fprintf(stderr, "  %llu allocations were sampled since profiling started, all freed "
			"since: analyze --alloc-space counts them\n",
			(unsigned long long)in.samples_alloc);
	if (lg)
		fprintf(stderr, "  jemalloc records one allocation per %s allocated, on average "
			"(prof.lg_sample %u)\n", cli_bytes(in.period, a, sizeof(a)), lg);
	if (c && c->s && c->pid) {
		struct jma_value v;
		/* One hold for both reads (without it, each read attaches itself). */
		int own, err = jma_hold_begin(c->s, &own);

		snprintf(pid, sizeof(pid), "%d", (int)c->pid);
		if (jma_get(c->s, "prof.active", &v) == 0 && v.type == JMA_T_BOOL && !v.b)
			fprintf(stderr, "  profiling is not active (prof.active false): nothing is "
				"sampled until `jemattach %s prof on`\n", pid);
		if (jma_allocated_total(c->s, &bytes, &count) == 0) {
			fprintf(stderr, "  since it started, its arenas handed out %s in %llu blocks "
				"(to the program or its thread caches)", cli_bytes(bytes, b, sizeof(b)),
				(unsigned long long)count);
			if (lg)
				fprintf(stderr, ": %.1f sample periods", (double)bytes / (double)in.period);
			fputs("\n", stderr);
		}
		if (!err && jma_hold_end(c->s, own, 0))
			cli_fail_session(c);
	}
	fputs("  to see more:", stderr);
	/* 32 times the samples (and their cost), not below one per KiB. */
	if (lg > 10)
		fprintf(stderr, " `jemattach %s prof reset %u` (a sample per %s; clears the samples "
			"so far),", pid, lg > 15 ? lg - 5 : 10,
			cli_bytes(1ULL << (lg > 15 ? lg - 5 : 10), a, sizeof(a)));
	fputs(" a longer window or a busier time", stderr);
	if (!in.has_alloc)
		fputs(", or MALLOC_CONF=prof_accum:true at start (then analyze --alloc-space counts "
		      "what was allocated and freed)", stderr);
	fputs("\n", stderr);
}

/* A sampler's profile: what it took, at what rate, what the guard did. */
void cli_hint_sampled(struct cli *c, const struct cli_sampled *sm, jma_heap *h,
		      const struct jma_heap_report_opts *o)
{
	const struct jma_sampler_result *r = sm->r;
	int alloc = alloc_sample(o);
	uint64_t kept = alloc ? r->samples : r->live;
	unsigned lg = cli_sample_lg_used(r), finer = lg > 15 ? lg - 5 : lg > 10 ? 10 : lg;
	char a[32], b[32];

	(void)c;
	(void)h;
	if (kept >= CLI_THIN)
		return;
	if (!r->samples)
		fprintf(stderr, "jemattach: the profile is empty: the sampler took no sample\n");
	else if (!kept)
		fprintf(stderr, "jemattach: the profile is empty: none of the %llu samples the "
			"sampler took is still in use\n", (unsigned long long)r->samples);
	else if (alloc)
		fprintf(stderr, "jemattach: the profile is thin: the sampler took %llu samples\n",
			(unsigned long long)r->samples);
	else
		fprintf(stderr, "jemattach: the profile is thin: %llu of the %llu samples the sampler "
			"took are still in use\n", (unsigned long long)kept,
			(unsigned long long)r->samples);
	fprintf(stderr, "  it samples one allocation per %s the process allocates, on average "
		"(2^%u); in the %.1f s it sampled, ", cli_bytes(1ULL << lg, a, sizeof(a)), lg,
		r->seconds);
	if (r->samples)
		fprintf(stderr, "about %s were allocated (%.1f sample periods)\n",
			cli_bytes(r->alloc_bytes, b, sizeof(b)), (double)r->alloc_bytes / (double)(1ULL << lg));
	else
		fprintf(stderr, "its probes were hit %llu times\n", (unsigned long long)r->hits);
	if (r->end != JMA_SAMPLER_TIME)
		fprintf(stderr, "  the window ended early, after %.1f s\n", r->seconds + r->settled);
	cli_sample_story(r, sm->o, stderr, "  ");
	fputs("  to see more:", stderr);
	if (finer < lg)
		fprintf(stderr, " --lg-sample %u (a sample per %s: %u times as many),", finer,
			cli_bytes(1ULL << finer, a, sizeof(a)), 1u << (lg - finer));
	fputs(" a longer window", stderr);
	if (r->full_rate > 0 && sm->o->max_overhead > 0)
		fprintf(stderr, ", or more room for the probes than --max-overhead %g (the process "
			"paid %.1f%% of a CPU for them)", sm->o->max_overhead * 100, r->cost_rate * 100);
	fputs("\n", stderr);
}
