/* ctltable.c -- types of jemalloc's mallctl names, 3.x through dev, by version.
 *
 * "#" stands for one numeric component (arena, bin or size-class index).
 * Read from jemalloc's src/ctl.c (CTL_RO_*_GEN, READ(..., type)) of 3.6.0,
 * 4.5.0, 5.0.1, 5.2.1, 5.3.0 and dev; names absent from a given version
 * simply return ENOENT there.  A name whose type changed between versions has
 * a row in `versioned` for the versions before the change.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jemattach/value.h>

#include "jemalloc/ctltable.h"

#define R JMA_ACC_R
#define W JMA_ACC_W
#define RW (JMA_ACC_R | JMA_ACC_W)

#define V JMA_JEVERSION

struct ctl_type {
	const char *pattern;
	enum jma_type type;
	unsigned access;
};

/* Names whose type changed: the rows for the versions before the change. */
static const struct ctl_versioned {
	const char *pattern;
	enum jma_type type;
	unsigned access;
	uint32_t since, until;	/* [since, until): the versions this row is for */
} versioned[] = {
	/* 3.x: size_t and bool where later versions have unsigned and strings. */
	{ "opt.narenas", JMA_T_SIZE, R, 0, V(4, 0, 0) },
	{ "opt.junk", JMA_T_BOOL, R, 0, V(4, 0, 0) },
	{ "arenas.nlruns", JMA_T_SIZE, R, 0, V(4, 0, 0) },
	/* 4.x: opt.thp was a bool ("thp:false"); 5.1 made it a mode name. */
	{ "opt.thp", JMA_T_BOOL, R, V(4, 0, 0), V(5, 0, 0) },
	/* Before 5.0, a pointer to the live counter, not its value. */
	{ "stats.cactive", JMA_T_SIZEP, R, 0, V(5, 0, 0) },
};

/* Every name, with the type the newest version that has it gives it. */
static const struct ctl_type table[] = {
	{ "version", JMA_T_STRING, R },
	{ "epoch", JMA_T_U64, RW },
	{ "background_thread", JMA_T_BOOL, RW },
	{ "max_background_threads", JMA_T_SIZE, RW },
	{ "thread.tcache.enabled", JMA_T_BOOL, RW },
	{ "thread.tcache.flush", JMA_T_VOID, 0 },
	{ "thread.arena", JMA_T_UNSIGNED, RW },
	{ "thread.allocated", JMA_T_U64, R },
	{ "thread.deallocated", JMA_T_U64, R },
	{ "thread.idle", JMA_T_VOID, 0 },
	{ "thread.prof.name", JMA_T_STRING, RW },
	{ "thread.prof.active", JMA_T_BOOL, RW },
	{ "config.cache_oblivious", JMA_T_BOOL, R },
	{ "config.debug", JMA_T_BOOL, R },
	{ "config.fill", JMA_T_BOOL, R },
	{ "config.lazy_lock", JMA_T_BOOL, R },
	{ "config.malloc_conf", JMA_T_STRING, R },
	{ "config.opt_safety_checks", JMA_T_BOOL, R },
	{ "config.prof", JMA_T_BOOL, R },
	{ "config.prof_libgcc", JMA_T_BOOL, R },
	{ "config.prof_libunwind", JMA_T_BOOL, R },
	{ "config.stats", JMA_T_BOOL, R },
	{ "config.utrace", JMA_T_BOOL, R },
	{ "config.xmalloc", JMA_T_BOOL, R },
	{ "config.tcache", JMA_T_BOOL, R },
	{ "config.tls", JMA_T_BOOL, R },
	{ "config.munmap", JMA_T_BOOL, R },
	{ "config.dss", JMA_T_BOOL, R },
	{ "config.mremap", JMA_T_BOOL, R },
	{ "config.valgrind", JMA_T_BOOL, R },
	{ "opt.abort", JMA_T_BOOL, R },
	{ "opt.abort_conf", JMA_T_BOOL, R },
	{ "opt.cache_oblivious", JMA_T_BOOL, R },
	{ "opt.confirm_conf", JMA_T_BOOL, R },
	{ "opt.hpa", JMA_T_BOOL, R },
	{ "opt.hpa_slab_max_alloc", JMA_T_SIZE, R },
	{ "opt.hpa_hugification_threshold", JMA_T_SIZE, R },
	{ "opt.hpa_sec_nshards", JMA_T_SIZE, R },
	{ "opt.hpa_sec_max_alloc", JMA_T_SIZE, R },
	{ "opt.hpa_sec_max_bytes", JMA_T_SIZE, R },
	{ "opt.metadata_thp", JMA_T_STRING, R },
	{ "opt.retain", JMA_T_BOOL, R },
	{ "opt.dss", JMA_T_STRING, R },
	{ "opt.narenas", JMA_T_UNSIGNED, R },
	{ "opt.percpu_arena", JMA_T_STRING, R },
	{ "opt.oversize_threshold", JMA_T_SIZE, R },
	{ "opt.background_thread", JMA_T_BOOL, R },
	{ "opt.max_background_threads", JMA_T_SIZE, R },
	{ "opt.dirty_decay_ms", JMA_T_SSIZE, R },
	{ "opt.muzzy_decay_ms", JMA_T_SSIZE, R },
	{ "opt.lg_dirty_mult", JMA_T_SSIZE, R },
	{ "opt.decay_time", JMA_T_SSIZE, R },
	{ "opt.purge", JMA_T_STRING, R },
	{ "opt.lg_chunk", JMA_T_SIZE, R },
	{ "opt.stats_print", JMA_T_BOOL, R },
	{ "opt.stats_print_opts", JMA_T_STRING, R },
	{ "opt.stats_interval", JMA_T_U64, R },
	{ "opt.stats_interval_opts", JMA_T_STRING, R },
	{ "opt.junk", JMA_T_STRING, R },
	{ "opt.zero", JMA_T_BOOL, R },
	{ "opt.utrace", JMA_T_BOOL, R },
	{ "opt.xmalloc", JMA_T_BOOL, R },
	{ "opt.experimental_infallible_new", JMA_T_BOOL, R },
	{ "opt.tcache", JMA_T_BOOL, R },
	{ "opt.tcache_max", JMA_T_SIZE, R },
	{ "opt.lg_tcache_max", JMA_T_SSIZE, R },
	{ "opt.thp", JMA_T_STRING, R },
	{ "opt.lg_extent_max_active_fit", JMA_T_SIZE, R },
	{ "opt.prof", JMA_T_BOOL, R },
	{ "opt.prof_prefix", JMA_T_STRING, R },
	{ "opt.prof_active", JMA_T_BOOL, R },
	{ "opt.prof_thread_active_init", JMA_T_BOOL, R },
	{ "opt.lg_prof_sample", JMA_T_SIZE, R },
	{ "opt.lg_prof_interval", JMA_T_SSIZE, R },
	{ "opt.prof_gdump", JMA_T_BOOL, R },
	{ "opt.prof_final", JMA_T_BOOL, R },
	{ "opt.prof_leak", JMA_T_BOOL, R },
	{ "opt.prof_leak_error", JMA_T_BOOL, R },
	{ "opt.prof_accum", JMA_T_BOOL, R },
	{ "opt.prof_recent_alloc_max", JMA_T_SSIZE, R },
	{ "opt.prof_stats", JMA_T_BOOL, R },
	{ "opt.prof_sys_thread_name", JMA_T_BOOL, R },
	{ "opt.prof_time_resolution", JMA_T_STRING, R },
	{ "opt.lg_san_uaf_align", JMA_T_SSIZE, R },
	{ "opt.zero_realloc", JMA_T_STRING, R },
	{ "opt.quarantine", JMA_T_SIZE, R },
	{ "opt.redzone", JMA_T_BOOL, R },
	{ "opt.valgrind", JMA_T_BOOL, R },
	{ "tcache.create", JMA_T_UNSIGNED, R },
	{ "tcache.flush", JMA_T_UNSIGNED, W },
	{ "tcache.destroy", JMA_T_UNSIGNED, W },
	{ "arena.#.initialized", JMA_T_BOOL, R },
	{ "arena.#.decay", JMA_T_VOID, 0 },
	{ "arena.#.purge", JMA_T_VOID, 0 },
	{ "arena.#.reset", JMA_T_VOID, 0 },
	{ "arena.#.destroy", JMA_T_VOID, 0 },
	{ "arena.#.dss", JMA_T_STRING, RW },
	{ "arena.#.lg_dirty_mult", JMA_T_SSIZE, RW },
	{ "arena.#.decay_time", JMA_T_SSIZE, RW },
	{ "arena.#.dirty_decay_ms", JMA_T_SSIZE, RW },
	{ "arena.#.muzzy_decay_ms", JMA_T_SSIZE, RW },
	{ "arena.#.retain_grow_limit", JMA_T_SIZE, RW },
	{ "arenas.narenas", JMA_T_UNSIGNED, R },
	{ "arenas.initialized", JMA_T_UNKNOWN, R },
	{ "arenas.dirty_decay_ms", JMA_T_SSIZE, RW },
	{ "arenas.muzzy_decay_ms", JMA_T_SSIZE, RW },
	{ "arenas.lg_dirty_mult", JMA_T_SSIZE, RW },
	{ "arenas.decay_time", JMA_T_SSIZE, RW },
	{ "arenas.quantum", JMA_T_SIZE, R },
	{ "arenas.page", JMA_T_SIZE, R },
	{ "arenas.hugepage", JMA_T_SIZE, R },
	{ "arenas.chunksize", JMA_T_SIZE, R },
	{ "arenas.tcache_max", JMA_T_SIZE, R },
	{ "arenas.nbins", JMA_T_UNSIGNED, R },
	{ "arenas.nhbins", JMA_T_UNSIGNED, R },
	{ "arenas.bin.#.size", JMA_T_SIZE, R },
	{ "arenas.bin.#.nregs", JMA_T_U32, R },
	{ "arenas.bin.#.slab_size", JMA_T_SIZE, R },
	{ "arenas.bin.#.run_size", JMA_T_SIZE, R },
	{ "arenas.bin.#.nshards", JMA_T_U32, R },
	{ "arenas.nlextents", JMA_T_UNSIGNED, R },
	{ "arenas.lextent.#.size", JMA_T_SIZE, R },
	{ "arenas.nlruns", JMA_T_UNSIGNED, R },
	{ "arenas.lrun.#.size", JMA_T_SIZE, R },
	{ "arenas.nhchunks", JMA_T_UNSIGNED, R },
	{ "arenas.hchunk.#.size", JMA_T_SIZE, R },
	{ "arenas.create", JMA_T_UNSIGNED, R },
	{ "arenas.extend", JMA_T_UNSIGNED, R },
	{ "arenas.lookup", JMA_T_UNSIGNED, R },
	{ "prof.thread_active_init", JMA_T_BOOL, RW },
	{ "prof.active", JMA_T_BOOL, RW },
	{ "prof.dump", JMA_T_STRING, W },
	{ "prof.gdump", JMA_T_BOOL, RW },
	{ "prof.prefix", JMA_T_STRING, W },
	{ "prof.reset", JMA_T_SIZE, W },
	{ "prof.interval", JMA_T_U64, R },
	{ "prof.lg_sample", JMA_T_SIZE, R },
	{ "prof.log_start", JMA_T_STRING, W },
	{ "prof.log_stop", JMA_T_VOID, 0 },
	{ "prof.recent_alloc_max", JMA_T_SSIZE, RW },
	{ "stats.allocated", JMA_T_SIZE, R },
	{ "stats.active", JMA_T_SIZE, R },
	{ "stats.metadata", JMA_T_SIZE, R },
	{ "stats.metadata_thp", JMA_T_SIZE, R },
	{ "stats.resident", JMA_T_SIZE, R },
	{ "stats.mapped", JMA_T_SIZE, R },
	{ "stats.retained", JMA_T_SIZE, R },
	{ "stats.cactive", JMA_T_UNKNOWN, R },
	{ "stats.zero_reallocs", JMA_T_SIZE, R },
	{ "stats.background_thread.num_threads", JMA_T_SIZE, R },
	{ "stats.background_thread.num_runs", JMA_T_U64, R },
	{ "stats.background_thread.run_interval", JMA_T_U64, R },
	{ "stats.mutexes.*.max_num_thds", JMA_T_U32, R },
	{ "stats.mutexes.*.*", JMA_T_U64, R },
	{ "stats.mutexes.reset", JMA_T_VOID, 0 },
	{ "stats.chunks.current", JMA_T_SIZE, R },
	{ "stats.chunks.total", JMA_T_U64, R },
	{ "stats.chunks.high", JMA_T_SIZE, R },
	{ "stats.huge.allocated", JMA_T_SIZE, R },
	{ "stats.huge.nmalloc", JMA_T_U64, R },
	{ "stats.huge.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.nthreads", JMA_T_UNSIGNED, R },
	{ "stats.arenas.#.uptime", JMA_T_U64, R },
	{ "stats.arenas.#.dss", JMA_T_STRING, R },
	{ "stats.arenas.#.lg_dirty_mult", JMA_T_SSIZE, R },
	{ "stats.arenas.#.decay_time", JMA_T_SSIZE, R },
	{ "stats.arenas.#.dirty_decay_ms", JMA_T_SSIZE, R },
	{ "stats.arenas.#.muzzy_decay_ms", JMA_T_SSIZE, R },
	{ "stats.arenas.#.pactive", JMA_T_SIZE, R },
	{ "stats.arenas.#.pdirty", JMA_T_SIZE, R },
	{ "stats.arenas.#.pmuzzy", JMA_T_SIZE, R },
	{ "stats.arenas.#.mapped", JMA_T_SIZE, R },
	{ "stats.arenas.#.retained", JMA_T_SIZE, R },
	{ "stats.arenas.#.extent_avail", JMA_T_SIZE, R },
	{ "stats.arenas.#.base", JMA_T_SIZE, R },
	{ "stats.arenas.#.internal", JMA_T_SIZE, R },
	{ "stats.arenas.#.metadata_thp", JMA_T_SIZE, R },
	{ "stats.arenas.#.metadata.mapped", JMA_T_SIZE, R },
	{ "stats.arenas.#.metadata.allocated", JMA_T_SIZE, R },
	{ "stats.arenas.#.metadata", JMA_T_SIZE, R },
	{ "stats.arenas.#.tcache_bytes", JMA_T_SIZE, R },
	{ "stats.arenas.#.tcache_stashed_bytes", JMA_T_SIZE, R },
	{ "stats.arenas.#.resident", JMA_T_SIZE, R },
	{ "stats.arenas.#.abandoned_vm", JMA_T_SIZE, R },
	{ "stats.arenas.#.dirty_npurge", JMA_T_U64, R },
	{ "stats.arenas.#.dirty_nmadvise", JMA_T_U64, R },
	{ "stats.arenas.#.dirty_purged", JMA_T_U64, R },
	{ "stats.arenas.#.muzzy_npurge", JMA_T_U64, R },
	{ "stats.arenas.#.muzzy_nmadvise", JMA_T_U64, R },
	{ "stats.arenas.#.muzzy_purged", JMA_T_U64, R },
	{ "stats.arenas.#.npurge", JMA_T_U64, R },
	{ "stats.arenas.#.nmadvise", JMA_T_U64, R },
	{ "stats.arenas.#.purged", JMA_T_U64, R },
	{ "stats.arenas.#.small.allocated", JMA_T_SIZE, R },
	{ "stats.arenas.#.small.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.small.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.small.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.small.nfills", JMA_T_U64, R },
	{ "stats.arenas.#.small.nflushes", JMA_T_U64, R },
	{ "stats.arenas.#.large.allocated", JMA_T_SIZE, R },
	{ "stats.arenas.#.large.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.large.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.large.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.large.nfills", JMA_T_U64, R },
	{ "stats.arenas.#.large.nflushes", JMA_T_U64, R },
	{ "stats.arenas.#.huge.allocated", JMA_T_SIZE, R },
	{ "stats.arenas.#.huge.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.huge.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.huge.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.curregs", JMA_T_SIZE, R },
	{ "stats.arenas.#.bins.#.nfills", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nflushes", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nslabs", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nreslabs", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.curslabs", JMA_T_SIZE, R },
	{ "stats.arenas.#.bins.#.nonfull_slabs", JMA_T_SIZE, R },
	{ "stats.arenas.#.bins.#.nruns", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.nreruns", JMA_T_U64, R },
	{ "stats.arenas.#.bins.#.curruns", JMA_T_SIZE, R },
	{ "stats.arenas.#.bins.#.mutex.max_num_thds", JMA_T_U32, R },
	{ "stats.arenas.#.bins.#.mutex.*", JMA_T_U64, R },
	{ "stats.arenas.#.lextents.#.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.lextents.#.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.lextents.#.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.lextents.#.curlextents", JMA_T_SIZE, R },
	{ "stats.arenas.#.lruns.#.nmalloc", JMA_T_U64, R },
	{ "stats.arenas.#.lruns.#.ndalloc", JMA_T_U64, R },
	{ "stats.arenas.#.lruns.#.nrequests", JMA_T_U64, R },
	{ "stats.arenas.#.lruns.#.curruns", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.ndirty", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.nmuzzy", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.nretained", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.dirty_bytes", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.muzzy_bytes", JMA_T_SIZE, R },
	{ "stats.arenas.#.extents.#.retained_bytes", JMA_T_SIZE, R },
	{ "stats.arenas.#.mutexes.*.max_num_thds", JMA_T_U32, R },
	{ "stats.arenas.#.mutexes.*.*", JMA_T_U64, R },
	{ "stats.arenas.#.hpa_shard.*", JMA_T_UNKNOWN, R },
	{ "experimental.hooks.install", JMA_T_UNKNOWN, RW },
};

/* "#" matches one all-digit component, "*" any one component. */
static int match(const char *pat, const char *name)
{
	while (*pat && *name) {
		if (*pat == '#' || *pat == '*') {
			const char *end = name;
			while (*end && *end != '.') {
				if (*pat == '#' && (*end < '0' || *end > '9'))
					return 0;
				end++;
			}
			if (end == name)
				return 0;
			name = end;
			pat++;
			continue;
		}
		if (*pat++ != *name++)
			return 0;
	}
	return !*pat && !*name;
}

uint32_t jma_jeversion_parse(const char *version)
{
	unsigned a = 0, b = 0, c = 0;

	if (!version || sscanf(version, "%u.%u.%u", &a, &b, &c) < 2 || a > 255 || b > 255 || c > 255)
		return 0;
	return JMA_JEVERSION(a, b, c);
}

int jma_ctl_lookup_v(const char *name, uint32_t version, enum jma_type *type, unsigned *access)
{
	/* An unknown version (0) is taken to be the newest. */
	for (size_t i = 0; version && i < sizeof(versioned) / sizeof(*versioned); i++) {
		if (version >= versioned[i].since && version < versioned[i].until &&
		    match(versioned[i].pattern, name)) {
			*type = versioned[i].type;
			*access = versioned[i].access;
			return 0;
		}
	}
	/* Exact and '#' patterns are listed before '*' ones that would also match. */
	for (size_t i = 0; i < sizeof(table) / sizeof(*table); i++) {
		if (match(table[i].pattern, name)) {
			if (table[i].type == JMA_T_UNKNOWN)
				return -ENOENT;
			*type = table[i].type;
			*access = table[i].access;
			return 0;
		}
	}
	return -ENOENT;
}

int jma_ctl_lookup(const char *name, enum jma_type *type, unsigned *access)
{
	return jma_ctl_lookup_v(name, 0, type, access);
}

int ctl_is_versioned(const char *name)
{
	for (size_t i = 0; i < sizeof(versioned) / sizeof(*versioned); i++)
		if (match(versioned[i].pattern, name))
			return 1;
	return 0;
}

/* When names appeared or went away, for messages that say so instead of
 * "no such name". */
static const struct ctl_span {
	const char *pattern;
	uint32_t since, until;	/* 0: open */
} spans[] = {
	{ "stats.cactive", 0, V(5, 0, 0) },
	{ "stats.resident", V(4, 0, 0), 0 },
	{ "stats.metadata", V(4, 0, 0), 0 },
	{ "stats.retained", V(4, 2, 0), 0 },
	{ "stats.arenas.#.pmuzzy", V(5, 0, 0), 0 },
	{ "stats.arenas.#.resident", V(5, 0, 0), 0 },
	{ "arena.#.decay", V(4, 0, 0), 0 },
	{ "arena.#.initialized", V(5, 0, 0), 0 },
	{ "arena.#.reset", V(4, 0, 0), 0 },
	{ "arena.#.destroy", V(5, 0, 0), 0 },
	{ "arenas.create", V(5, 0, 0), 0 },
	{ "arenas.extend", 0, V(5, 0, 0) },
	{ "arenas.decay_time", V(4, 0, 0), V(5, 0, 0) },
	{ "arenas.lg_dirty_mult", 0, V(5, 0, 0) },
	{ "arenas.dirty_decay_ms", V(5, 0, 0), 0 },
	{ "arenas.muzzy_decay_ms", V(5, 0, 0), 0 },
	{ "background_thread", V(5, 0, 0), 0 },
	{ "prof.reset", V(4, 0, 0), 0 },
	{ "prof.gdump", V(4, 0, 0), 0 },
	{ "prof.lg_sample", V(4, 0, 0), 0 },
	{ "prof.thread_active_init", V(4, 0, 0), 0 },
	{ "prof.prefix", V(5, 3, 0), 0 },
	{ "prof.log_start", V(5, 2, 0), 0 },
	{ "thread.idle", V(5, 3, 0), 0 },
};

int ctl_span_find(const char *name, uint32_t *since, uint32_t *until)
{
	for (size_t i = 0; i < sizeof(spans) / sizeof(*spans); i++)
		if (match(spans[i].pattern, name)) {
			*since = spans[i].since;
			*until = spans[i].until;
			return 1;
		}
	return 0;
}
