/* sampled.c -- what a sampler window did, in words: how it ended, what it
 * cost the process, what the guard gave up to stay within --max-overhead,
 * the frees read from jemalloc's metadata.  Said on stderr after `prof
 * sample` and the sampler's `prof window` (cmd_sample.c), and under an empty
 * or thin profile (empty.c).
 */
#include <stdio.h>

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
