/* ctltable.c -- types of jemalloc's mallctl names, 3.x through 5.3.
 *
 * "#" stands for one numeric component (arena, bin or size-class index).
 * Read from jemalloc's src/ctl.c (CTL_RO_*_GEN, READ(..., type)) for 5.3 and
 * its 3.x/4.x/5.0-5.2 predecessors; names absent from a given version simply
 * return ENOENT there.
 */
#include <errno.h>
#include <string.h>

#include <jemattach/value.h>

#define R JMA_ACC_R
#define W JMA_ACC_W
#define RW (JMA_ACC_R | JMA_ACC_W)

static const struct ctl_type {
	const char *pattern;
	enum jma_type type;
	unsigned access;
} table[] = {
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

int jma_ctl_lookup(const char *name, enum jma_type *type, unsigned *access)
{
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
