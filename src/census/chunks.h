/* chunks.h -- the census of jemalloc before extents (3.6, 4.5): chunks, runs, huge allocations.
 *
 * Private to chunklayout.c (the per-version facts, which row applies, the
 * library's own tables), chunks.c (the chunks found, their page maps walked
 * stopped, blocks counted running), chunktcache.c (thread caches, tcaches,
 * quarantine), with tls.c (census.h: where a thread's copy of a TLS variable is).
 *
 * A chunk (4 MiB in 3.6, 2 MiB in 4.x by default) is either an arena chunk --
 * a header with one page-map entry per page after the header's map_bias pages,
 * then runs: small runs of one bin's regions with a bitmap (1 = free), large
 * runs of one block -- or the start of a huge allocation (whole chunks).
 */
#ifndef JMA_CENSUS_CHUNKS_H
#define JMA_CENSUS_CHUNKS_H

#include <stdint.h>

#include "attach/mem.h"
#include "census/census.h"

#define CHK_NBINS_MAX	40	/* NBINS: 28 in 3.6, 36 in 4.x (16-byte quantum, 4 KiB pages) */

/* The facts of one family of builds, by offsetof against the configured
 * trees (x86_64, 4 KiB pages, default configure, and as
 * scripts/build-jemalloc.sh builds: --enable-prof). */
struct chk_layout {
	const char *name;
	unsigned major, minor;
	unsigned em;			/* the machine its offsets were measured on (EM_*) */
	int prof;			/* 3.6: prof adds a word to each page-map entry */
	/* The chunk header: page-map entries from map_off, map_size bytes each,
	 * the page's bits at map_bits in its entry; 4.x keeps each run's
	 * metadata apart, misc_size bytes a page from map_misc_offset, the
	 * run (binind, nfree, bitmap) at misc_run in it. */
	uint64_t map_off, map_size, map_bits, misc_size, misc_run;
	unsigned binind_shift, runind_shift;
	int size_shift;			/* a run's size: (bits & ~mask) >> size_shift */
	/* arena_t: its bins (3.6's small runs point to theirs), its stats.mapped */
	uint64_t bins_off, bin_size, arena_mapped;
	/* arena_bin_info_t */
	uint64_t bi_size, bi_reg_interval, bi_run_size, bi_nregs, bi_bitmap, bi_reg0;
	unsigned nbins, maxregs;	/* NBINS, RUN_MAXREGS */
	/* tcache_t, tcache_bin_t; avail_below: 4.x keeps avail[-ncached..-1] */
	uint64_t tc_tbins, tbin_size, tbin_ncached, tbin_avail;
	int avail_below;
	/* TLS: the tcache and quarantine pointers, at these offsets in these variables */
	const char *tls_tcache, *tls_quarantine;
	uint64_t tcache_in, quarantine_in, arenas_tdata_in;
	/* extent_node_t: 4.x en_arena, en_addr, en_size, en_achunk; 3.6 addr,
	 * size and link_ad (the huge tree's links) */
	uint64_t node_addr, node_size, node_achunk, node_left, node_right;
	/* 4.x rtree_t: height, levels[] {subtree, bits, cumbits} */
	uint64_t rt_height, rt_levels;
	uint64_t tsd_size;	/* 4.x: sizeof(tsd_t), the library's whole TLS block */
};

/* A run (or a huge allocation) as the walk copied it, stopped. */
struct chk_run {
	uint64_t base, size;	/* its pages */
	uint64_t usize;		/* large, huge: the block's usable size */
	uint64_t bits;		/* small: its bitmap's first word in cen.bits */
	uint32_t nfree;		/* small: the run's own count */
	uint16_t binind;
	uint8_t kind;		/* CHK_SMALL, CHK_LARGE, CHK_HUGE */
};
#define CHK_SMALL	1
#define CHK_LARGE	2
#define CHK_HUGE	3

struct chk_bin {
	uint64_t reg_size, reg_interval, run_size, reg0, bitmap;
	uint32_t nregs;
};

struct cen_chunks {
	const struct chk_layout *L;
	uint64_t chunksize, npages, map_bias, misc_off;
	unsigned nbins;
	struct chk_bin bins[CHK_NBINS_MAX];
	const char *bins_how;		/* "arena_bin_info" or "computed" */
	uint64_t large_pad;		/* 4.x: a page (cache-oblivious), 3.6: 0 */
	uint64_t rtree;			/* 4.x: chunks_rtree */
	uint64_t huge;			/* 3.6: the huge tree */
	uint64_t *arenas;		/* 3.6: every arena, sorted */
	size_t narenas;
	struct cen_tls tls_tcache, tls_quarantine;
	uint64_t tls_memsz;		/* jemalloc's module TLS block (PT_TLS), 0 if none */
	unsigned nhbins;		/* tcache bins; 0: read from each tcache */
	int pagemap;			/* 3.6, live: /proc/PID/pagemap, or -1 */
	uint64_t *nodes;		/* 4.x: the rtree nodes read, {start, end} sorted, apart */
	size_t nnodes_seen, capnodes;
	struct chk_run *runs;
	size_t nruns, capruns;
	uint64_t walk_end;		/* the end of the last chunk taken */
	uint64_t *buf;			/* a page map, or a level of the rtree */
	size_t nbuf;
	unsigned char *misc, *hdr;	/* 4.x: a chunk's misc array; 3.6: its runs' headers */
	struct att_piece *pieces;	/* 3.6: where those headers are read from */
	size_t npieces;
	uint64_t nchunks, nhuge, nnodes;
	uint64_t counted;		/* 3.6: the arena chunks the arenas' stats.mapped count */
	uint64_t large_paged;		/* 4.x: large blocks placed at their first page */
	uint64_t promoted, promoted_extra;	/* prof samples in runs of their own */
	struct jma_census_size *bysize;	/* by usable size, ascending */
	size_t nsizes, capsizes;
};

/* chunklayout.c: the row named @name ("3.6", "3.6+prof", "4.5"; tests). */
const struct chk_layout *chk_layout_named(const char *name);
/* chunkown.c: jemalloc's own blocks (what its static data names), as
 * cen_stack_add's (jemalloc's class), once the blocks are indexed. */
int cen_chunks_own(struct cen *c);


/* What chunks.c, chunkblocks.c and chunkalive.c read alike. */
#define CHK_PAGE		4096ULL
#define CHK_MAP_ALLOC	0x1ULL
#define CHK_MAP_LARGE	0x2ULL
#define CHK_BININD_INVALID	0xffU
#define CHK_RB_DEPTH	128		/* a red-black tree of 2^64 nodes is shallower */
#define CHK_RTREE_LEVELS	4

/* The first index of the ascending @v[0..n) whose value is not below @x. */
static inline size_t chk_lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline int chk_is_arena(const struct cen_chunks *k, uint64_t a)
{
	size_t i = chk_lower(k->arenas, k->narenas, a);

	return i < k->narenas && k->arenas[i] == a;
}

#endif
