/* sites.c -- which functions of the target's jemalloc the sampler probes.
 *
 * Every public entry that allocates or frees, by its symbol in jemalloc's own
 * code (the copy's prefix: "", je_, _rjem_...), and the C++ operators when
 * jemalloc's module defines them (jemalloc_cpp.cpp; unprefixed).  An entry
 * sees every call, so the byte sampling is jemalloc's own and unbiased, and
 * every free of a sampled pointer is seen; the price is a trap per call (see
 * doc/sampler.md).  jemalloc 5's slow paths (smp_sites_slow) cost a trap
 * per 64 KiB or so: the sampler probes them when it cannot afford the
 * entries (jemalloc's counter is read there; large blocks are freed there).
 * Aliases (glibc's __libc_malloc in some builds) share an address and are
 * probed once: two probes there would count each call twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/mem.h"
#include "core/session.h"
#include "sampler/events.h"
#include "sampler/sites.h"

#define SLOW_SCAN	4096	/* bytes of an entry's code searched for its slow path */

struct entry {
	const char *name;
	int prefixed;		/* takes the copy's prefix (the C API), or not (C++) */
	int frees;
	unsigned size, count, old, memptr;	/* argument numbers, 1-based */
	int slowable;		/* jemalloc 5 tail-calls a slow path with the same first argument */
	int core;		/* in every burst (sites.h) */
};

static const struct entry entries[] = {
	{ "malloc", 1, 0, 1, 0, 0, 0, 1, 1 },
	{ "calloc", 1, 0, 2, 1, 0, 0, 0, 1 },
	{ "realloc", 1, 0, 2, 0, 1, 0, 0, 1 },
	{ "posix_memalign", 1, 0, 3, 0, 0, 1, 0, 0 },
	{ "aligned_alloc", 1, 0, 2, 0, 0, 0, 0, 0 },
	{ "memalign", 1, 0, 2, 0, 0, 0, 0, 0 },
	{ "valloc", 1, 0, 1, 0, 0, 0, 0, 0 },
	{ "pvalloc", 1, 0, 1, 0, 0, 0, 0, 0 },
	{ "mallocx", 1, 0, 1, 0, 0, 0, 0, 0 },
	{ "rallocx", 1, 0, 2, 0, 1, 0, 0, 0 },
	{ "free", 1, 1, 0, 0, 1, 0, 1, 1 },
	{ "dallocx", 1, 1, 0, 0, 1, 0, 0, 0 },
	{ "sdallocx", 1, 1, 0, 0, 1, 0, 1, 0 },
	{ "free_sized", 1, 1, 0, 0, 1, 0, 0, 0 },
	{ "free_aligned_sized", 1, 1, 0, 0, 1, 0, 0, 0 },
	/* operator new / new[]: plain, nothrow, aligned, aligned nothrow. */
	{ "_Znwm", 0, 0, 1, 0, 0, 0, 1, 0 },
	{ "_Znam", 0, 0, 1, 0, 0, 0, 1, 0 },
	{ "_ZnwmRKSt9nothrow_t", 0, 0, 1, 0, 0, 0, 1, 0 },
	{ "_ZnamRKSt9nothrow_t", 0, 0, 1, 0, 0, 0, 1, 0 },
	{ "_ZnwmSt11align_val_t", 0, 0, 1, 0, 0, 0, 0, 0 },
	{ "_ZnamSt11align_val_t", 0, 0, 1, 0, 0, 0, 0, 0 },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", 0, 0, 1, 0, 0, 0, 0, 0 },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", 0, 0, 1, 0, 0, 0, 0, 0 },
	/* operator delete / delete[]: plain, sized, nothrow, aligned. */
	{ "_ZdlPv", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdaPv", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdlPvm", 0, 1, 0, 0, 1, 0, 1, 0 },
	{ "_ZdaPvm", 0, 1, 0, 0, 1, 0, 1, 0 },
	{ "_ZdlPvRKSt9nothrow_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdaPvRKSt9nothrow_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdlPvSt11align_val_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdaPvSt11align_val_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdlPvmSt11align_val_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdaPvmSt11align_val_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", 0, 1, 0, 0, 1, 0, 0, 0 },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", 0, 1, 0, 0, 1, 0, 0, 0 },
};

/* Is @t a public entry of @v[0..n)? */
static int is_entry(const struct smp_site *v, size_t n, uint64_t t)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].addr == t)
			return 1;
	return 0;
}

/* The one function outside @e's own body that its code jumps or calls to
 * with a displacement (attach/arch/ARCH/branch.c), in jemalloc's code and
 * starting there by its frame description (so never the middle of an
 * instruction), that is not
 * another public entry: jemalloc 5's slow path.  0 when there are none or
 * several (3.x and 4.x call many).  Only asked of the entries whose slow
 * path is known to take their own first argument (malloc_default, operator
 * new's fallback, free_default, sdallocx_default): an unknown function's
 * arguments would be misread. */
static uint64_t slow_path(struct jma_syms *sy, pid_t pid, const struct smp_site *v, size_t n,
			  const struct smp_site *e)
{
	unsigned char code[SLOW_SCAN];
	size_t len = e->size && e->size < sizeof(code) ? (size_t)e->size : 0;
	uint64_t found = 0;

	if (!len || att_mem_read(pid, e->addr, code, len))
		return 0;
	for (size_t i = 0; i < len; i += arch_insn_align) {
		uint64_t t, start;

		if (!arch_direct_branch(code, len, i, e->addr, &t))
			continue;
		if ((t >= e->addr && t < e->addr + e->size) || !syms_in_jemalloc(sy, t) ||
		    syms_func_start(sy, t, &start) || start != t || is_entry(v, n, t))
			continue;
		if (found && found != t)
			return 0;
		found = t;
	}
	return found;
}

int smp_sites_slow(struct jma_syms *sy, pid_t pid, struct smp_site *v, size_t n, jma_session *log)
{
	size_t moved = 0;
	uint64_t *slow = calloc(n ? n : 1, sizeof(*slow));

	if (!slow)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (v[i].slowable)
			slow[i] = slow_path(sy, pid, v, n, &v[i]);
	for (size_t i = 0; i < n; i++) {
		if (!slow[i])
			continue;
		/* Two entries sharing one slow path: probed once. */
		for (size_t j = 0; j < i; j++)
			if (slow[j] == slow[i])
				v[i].skip_slow = 1;
		sess_logf(log, JMA_LOG_INFO, "%s: its slow path at 0x%llx", v[i].name,
			 (unsigned long long)slow[i]);
		v[i].slow = slow[i];
		moved++;
	}
	free(slow);
	return (int)moved;
}

void smp_sites_free(struct smp_site *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].name);
	free(v);
}

int smp_sites_find(struct jma_syms *sy, struct smp_site **out, size_t *n, char *msg, size_t len)
{
	const struct jma_copy *c = syms_jemalloc(sy);
	const size_t max = sizeof(entries) / sizeof(*entries);
	struct smp_site *v = calloc(max, sizeof(*v));
	size_t k = 0;
	int have_malloc = 0;

	*out = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; c && i < max; i++) {
		const struct entry *e = &entries[i];
		char name[128];
		uint64_t addr;
		size_t j;

		snprintf(name, sizeof(name), "%s%s", e->prefixed ? c->prefix : "", e->name);
		if (!(addr = syms_func(sy, name, &v[k].size)))
			continue;
		for (j = 0; j < k && v[j].addr != addr; j++)
			;
		if (j < k)
			continue;
		if (!(v[k].name = strdup(name))) {
			smp_sites_free(v, k);
			return -ENOMEM;
		}
		v[k].addr = addr;
		v[k].frees = e->frees;
		v[k].cookie = SMP_COOKIE(e->size, e->count, e->old, e->memptr, 0, 0);
		v[k].slowable = e->slowable;
		v[k].core = e->core;
		have_malloc |= i == 0;
		k++;
	}
	if (!have_malloc) {
		smp_sites_free(v, k);
		snprintf(msg, len, "no %smalloc symbol in jemalloc's code: nothing to probe",
			 c ? c->prefix : "");
		return -ENOENT;
	}
	*out = v;
	*n = k;
	return 0;
}

/* The hits of @v's sites (at most 64) whose .frees is @frees, summed. */
static uint64_t hits_of(const struct smp_site *v, size_t n, const uint64_t *hits, int frees)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n && i < 64; i++)
		if (v[i].frees == frees)
			total += hits[i];
	return total;
}

/* The mask of the most hit of @v's sites whose .frees is @frees, up to @keep
 * of their hits, the core ones, and every one that gives a pointer back that
 * was hit. */
static uint64_t hot_of(const struct smp_site *v, size_t n, const uint64_t *hits, double keep, int frees)
{
	uint64_t total = hits_of(v, n, hits, frees), got = 0, mask = 0;

	n = n < 64 ? n : 64;
	if (!total) {
		for (size_t i = 0; i < n; i++)
			if (v[i].frees == frees)
				mask |= 1ull << i;
		return mask;
	}
	while ((double)got < keep * (double)total) {
		size_t best = n;

		for (size_t i = 0; i < n; i++)
			if (v[i].frees == frees && !(mask >> i & 1) && (best == n || hits[i] > hits[best]))
				best = i;
		if (best == n || !hits[best])
			break;
		mask |= 1ull << best;
		got += hits[best];
	}
	/* An allocation that frees too (realloc) moves sampled blocks: one
	 * unprobed would leave them to be read as in use (liveness.c). */
	for (size_t i = 0; i < n; i++)
		if (v[i].frees == frees && (v[i].core || (hits[i] && (v[i].cookie >> 8 & 15))))
			mask |= 1ull << i;
	return mask;
}

uint64_t smp_sites_hot(const struct smp_site *v, size_t n, const uint64_t *hits, double keep)
{
	return hot_of(v, n, hits, keep, 0) | hot_of(v, n, hits, keep, 1);
}

uint64_t smp_sites_cold(const struct smp_site *v, size_t n, const uint64_t *hits, double share)
{
	uint64_t total = hits_of(v, n, hits, 0), mask = 0;

	n = n < 64 ? n : 64;
	for (size_t i = 0; total && i < n; i++)
		if (!v[i].frees && (double)hits[i] <= share * (double)total)
			mask |= 1ull << i;
	return mask;
}
