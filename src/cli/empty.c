/* empty.c -- after a heap report with nothing in it: why (one sample per
 * so many bytes allocated, against what the process allocated) and what to
 * do, so that "Total: 0.0 MB" is not the whole answer. */
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
