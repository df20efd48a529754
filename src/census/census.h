/* census.h -- the census's private state, shared by the files of src/census/.
 *
 * One struct cen per run: what layout.c learned about the jemalloc build, the
 * stopped threads (target.c), the thread-cached blocks (tcache.c), the
 * extents and blocks the map walk found (walk.c), then types (types.c) and
 * leaks (leaks.c) read from the blocks' contents.  Every address read from
 * the target is checked (cen_ptr_ok) before it is followed, and every loop
 * over target data has a bound of its own.
 */
#ifndef JMA_CENSUS_CENSUS_H
#define JMA_CENSUS_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#include <jemattach/census.h>

#include "attach/arch.h"
#include "attach/procfs.h"
#include "heap/heap.h"	/* heap_strtab: names interned (types, roots) */
#include "core/session.h"
#include "symbols/symbols.h"

/* The granule of mem.c's read cache, and the lowest address followed: the
 * smallest page of any target (jemalloc's own page is the build's). */
#define CEN_PAGE	4096ULL
/* Size classes: szind is 8 bits in every 5.x (LG_CEIL(SC_NSIZES)): 232
 * classes with 16-byte quanta, 235 with Redis's 8-byte ones. */
#define CEN_NSIZES_MAX	256
/* User space of the hosts read: x86_64's ends at 2^47 (2^56 with 5-level
 * paging, not followed), arm64's at 2^48. */
#define CEN_VADDR_MAX	(1ULL << 48)
#define CEN_BITMAP_OFF	0x40	/* edata_t's slab bitmap (e_slab_data), every 5.x */

/* What layout.c reads of jemalloc's ELF file. */
struct cen_elf {
	unsigned machine;		/* e_machine */
	uint64_t tls_memsz, tls_align;
	uint64_t tpoff_slot[4];		/* TP-offset GOT slots (unrelocated) */
	int64_t tpoff_addend[4];
	size_t ntpoff;
	char version[80];
};

/* What a jemalloc build is, each fact read from the library itself
 * (layout.c, sizes.c, findmap.c): configure's choices move every offset the
 * census uses, and a build cannot be told by the size of its thread data
 * (a 57-bit build's is a 48-bit one's). */
struct cen_build {
	unsigned major, minor, patch;	/* the version string ("5.3.0-0-g0": Redis's) */
	unsigned machine;		/* ELF e_machine */
	unsigned lg_quantum;		/* LG_QUANTUM: 4, Redis's 3 (sz_index2size_tab) */
	unsigned lg_page;		/* LG_PAGE: 12, 14, 16 (sz_pind2sz_tab[0]) */
	unsigned lg_vaddr;		/* LG_VADDR: 48, or 57 (the map's root) */
	uint64_t tls_size;		/* its module's PT_TLS memsz: sizeof(tsd_t) in a library */
};

/* The facts the census reads by, derived from a cen_build (layout.c: one
 * derivation per family of releases). */
struct cen_layout {
	char name[64];		/* "5.3", "5.3 (8-byte quantum, 57-bit, 64 KiB pages)" */
	unsigned major, minor;
	unsigned sh_slab, sh_state, w_state, sh_szind, sh_nfree;	/* edata e_bits */
	uint64_t root_off;	/* rtree root within the map: after rtree_t's base and mutex */
	uint64_t edata_low;	/* low bits of a leaf word that are not the edata pointer */
	int leaf_state;		/* 5.3+: the leaf holds the extent state */
	uint64_t tls_size;	/* sizeof(tsd_t) */
	uint64_t tcache_off;	/* tsd.tcache */
	uint64_t slow_off;	/* 5.3+: tsd.tcache_slow, where tcache.tcache_slow points */
	uint64_t rtree_ctx_off;	/* tsd.rtree_ctx */
	int bins53;		/* 5.3+ cache_bin_t (stack_head, low_bits_empty) */
	unsigned nbins;		/* 5.3+: TCACHE_NBINS_MAX */
	uint64_t large_off;	/* 5.0-5.2: tcache.bins_large */
	uint64_t desc_off;	/* 5.1, 5.2: tcache.cache_bin_array_descriptor */
	int large_by_size;	/* dev: a large block's usable size is its extent's size - pad */
	unsigned machine;	/* the ELF e_machine of the build (EM_X86_64, EM_AARCH64) */
	unsigned lg_page;
};

/* What follows from the build's LG_PAGE, LG_VADDR and LG_QUANTUM
 * (cen_geometry), as jemalloc's rtree.h and sc.c derive it: the radix
 * tree's levels (RTREE_NSB = LG_VADDR - LG_PAGE key bits over 2 levels up
 * to 36 of them, 3 beyond: 18 + 18 with 4 KiB pages and 48 bits, 15 + 15 +
 * 15 with 57), its leaf entries (one word when the 64 - LG_VADDR high bits
 * hold szind, else {edata, metadata}: RTREE_LEAF_COMPACT), the size classes
 * (SC_NBINS: those under four pages) and a slab's most regions (its
 * bitmap's bits: SC_LG_SLAB_MAXREGS = LG_PAGE - 3). */
struct cen_geom {
	uint64_t page;
	unsigned lg_page, lg_vaddr;
	unsigned height;		/* 2 or 3 */
	unsigned bits[3];		/* key bits per level, the root's first */
	unsigned shift[3];		/* level l's index: (key >> shift[l]) & (2^bits[l] - 1) */
	int compact;			/* a leaf entry is one word (else two) */
	unsigned nsizes;		/* SC_NSIZES */
	unsigned nbins;			/* SC_NBINS */
	unsigned nregs_max;
};

/* The map's leaves: the address of its first page, where it is. */
struct cen_leafref {
	uint64_t key, addr;
};

/* A leaf entry decoded. */
struct cen_entry {
	uint64_t edata;
	unsigned szind;
	int slab;
	int state;		/* 5.3+: the extent's state as the leaf has it; 0 before */
};

struct cen_thread {
	pid_t tid;
	struct arch_gpregs regs;
};

/* An active extent as the walk copied it (stopped). */
struct cen_raw {
	uint64_t e_bits, e_addr, base, size;
	uint64_t bits;		/* slabs: its bitmap (1 = free) at cen.bits[bits] */
	uint16_t szind;
	uint8_t slab;
};

struct cen_extent {
	uint64_t base, size;	/* the extent's pages */
	uint32_t first;		/* its first block in cen.blocks */
	uint32_t nblocks;
	uint16_t szind;
	uint8_t slab;
};

struct cen {
	jma_session *s;
	struct jma_census *out;
	const struct jma_census_opts *o;
	const struct cen_layout *L;	/* &lay once derived */
	struct cen_layout lay;
	struct cen_build b;
	struct cen_geom g;		/* from b (cen_geometry) */
	uint64_t sizes[CEN_NSIZES_MAX];	/* sz_index2size, g.nsizes of them */
	uint64_t large_pad;
	uint64_t map;			/* the emap/rtree; root at map + L->root_off */
	uint64_t tpoff;			/* tsd = fs_base + tpoff */
	int have_tpoff;
	char tsd_how[64];		/* how tpoff was found */
	uint64_t tls_block, tls_align;	/* an executable's TLS block (tsd.c), 0: a library's */
	uint64_t tcaches, tcaches_past;	/* symbols, 0 when unknown */
	const char *je_path;		/* jemalloc's module file, as the maps name it */
	char *je_path_buf;		/* its copy (the maps are read again at the stop) */
	struct att_map *maps;
	size_t nmaps;
	struct cen_thread *th;
	size_t nth;
	uint64_t *cached;		/* thread-cached blocks, sorted */
	size_t ncached, capcached;
	/* Where each thread cache keeps its stacks of cached pointers: a block
	 * jemalloc allocated for itself, never a root of anything (tcache.c). */
	uint64_t *stacks;
	size_t nstacks, capstacks;
	struct cen_raw *raw;
	size_t nraw, capraw;
	uint64_t *bits;			/* the copied slabs' bitmaps, words */
	size_t nbits, capbits;
	uint64_t walk_end;		/* end of the last extent the walk took */
	uint64_t *wbuf;			/* the walk's root, leaf and sorted-root buffers */
	int defer_map;			/* the map is to be found once the threads are stopped */
	struct cen_extent *ext;
	size_t next, capext;
	uint64_t *baddr, *bsize;	/* live blocks, by address (when kept) */
	size_t nblocks, capblocks;
	int keep;			/* keep blocks and extents (types, leaks, lists) */
	struct jma_census_size bysz[CEN_NSIZES_MAX];
	uint64_t bad_words, bad_nfree, stray_cached;	/* inconsistencies seen */
	/* Memory an extent covers that the core does not hold (gcore leaves
	 * out MADV_DONTDUMP mappings: counted from the metadata), and blocks
	 * whose contents could not all be read (PROT_NONE, or not held). */
	uint64_t unheld_extents, unheld_bytes;
	uint64_t unread_blocks, unread_bytes;
	struct cen_leafref *leaves;	/* the walk's, made room for before the stop */
	size_t nleaves, capleaves;
	uint32_t *btype;		/* types.c: per block, index into out->types */
	uint8_t *bcls;			/* leaks.c: per block, enum jma_census_class */
	int64_t start_ns, deadline_ns;
	int forced;			/* stopped with a thread inside jemalloc (--force) */
	int64_t last_progress_ns;
	/* mem.c: metadata pages read so far (edata come 32 to a page). */
	uint64_t *ctag;
	unsigned char *cpage;
	uint64_t reads, misses;		/* cen_read calls; pages read into the cache */
};

/* layout.c: c->g from c->b (cen_layout_derive does it). */
void cen_geometry(struct cen *c);
/* c->lay (and c->L, c->g) from c->b by its family's rules; -ENOTSUP (message
 * set) for a release no family covers. */
int cen_layout_derive(struct cen *c);
/* layout.c: find the build's facts (version, size classes, TLS offset,
 * symbols) and derive the layout; -ENOTSUP for 3.x/4.x and builds not
 * understood, message in the session naming the cause. */
int cen_layout_find(struct cen *c);
/* tsd.c: tpoff from the ELF's GOT slot or tsd_tls's symbol (running). */
void cen_tpoff_find(struct cen *c, const struct cen_elf *f, uint64_t bias);
/* Threads stopped: tpoff found in an executable's TLS block when nothing
 * else said it. */
int cen_tsd_settle(struct cen *c);
/* sizes.c: sc.c's size classes for @lg_quantum (8- or 16-byte quanta) into
 * @sizes: their number; *@nbins the small ones with @lg_page (may be NULL). */
unsigned cen_sizes_compute(unsigned lg_quantum, unsigned lg_page, uint64_t sizes[CEN_NSIZES_MAX],
			   unsigned *nbins);
/* Is the table at @tab jemalloc's sz_index2size_tab?  0 yes (c->b.lg_quantum
 * set from it), 1 not a size table, -ENOTSUP (message set) another
 * configuration's. */
int cen_sizes_check(struct cen *c, uint64_t tab);
/* The build's quantum and page (c->b) from its tables (by symbol, else by
 * their contents in jemalloc's data); -errno, message set. */
int cen_sizes_read(struct cen *c);
/* findmap.c: is c->maps[@i] jemalloc's data (@writable: only writable
 * mappings; else any readable non-code one), its .bss included? */
int cen_je_data(const struct cen *c, size_t i, int writable);
/* Leaf entry @j of the leaf read into @leaf: 0 when empty. */
int cen_leaf_entry(const struct cen *c, const uint64_t *leaf, unsigned j, struct cen_entry *e);
/* Words a leaf takes (2^leaf bits entries of one or two words); words of
 * the walk's buffer (root, a node, a leaf); leaves a map may have. */
size_t cen_leaf_words(const struct cen *c);
size_t cen_map_words(const struct cen *c);
size_t cen_map_leaves_max(const struct cen *c);
/* The map's leaves, in address order, into c->leaves (room made by
 * cen_walk_prepare); a child named twice (forged) is left out and counted
 * in bad_words.  -EFAULT when the root cannot be read. */
int cen_map_leafrefs(struct cen *c);
/* findmap.c: targets of `lea disp32(%rip)` in @code (at @pc), deduplicated. */
size_t cen_rip_leas(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out, size_t max);
/* The same for arm64: targets of adrp + add pairs; with @got, the slots adrp
 * + ldr pairs load from. */
size_t cen_adrp_refs(const unsigned char *code, size_t len, uint64_t pc, int got, uint64_t *out,
		     size_t max);
/* findmap.c: the map of active extents (by symbol, else decoded from
 * malloc_usable_size), its root validated. */
int cen_map_find(struct cen *c);
/* The same from a thread's lookup cache (tsd.rtree_ctx: {leafkey, leaf}
 * pairs), the leaf pointer looked for in jemalloc's writable data: needs
 * the threads' registers (after cen_stop). */
int cen_map_from_tsd(struct cen *c);
int cen_root_valid(struct cen *c, uint64_t map);
/* target.c: stop every thread (none inside jemalloc; retried) and read
 * their registers / let them go.  On a core: the dumped threads. */
int cen_stop(struct cen *c, void **token);
void cen_go(struct cen *c, void *token);
/* tcache.c: every thread's cache and tcache.create's, into c->cached. */
int cen_tcache_read(struct cen *c);
/* 0: @addr is in no cache, 1: in a thread's, 2: in a tcache.create one. */
int cen_is_cached(const struct cen *c, uint64_t addr);
/* The first cached address >= @addr (its index; ncached if none). */
size_t cen_cached_from(const struct cen *c, uint64_t addr);
/* walk.c: the map walk, stopped: active extents copied into c->raw; then,
 * running: their blocks (live or thread-cached), counted and kept. */
int cen_walk(struct cen *c);
int cen_expand(struct cen *c);
/* The first of c->maps ending past @addr (nmaps if none). */
size_t cen_maps_after(const struct cen *c, uint64_t addr);
/* Before the stop: the walk's buffers allocated and touched. */
int cen_walk_prepare(struct cen *c);
/* index.c: the live block holding @addr (its index), or -1. */
long cen_block_of(const struct cen *c, uint64_t addr);
/* contents.c: call @fn for every kept block with its words, read extent
 * by extent: a slab whole, a large block's first @max bytes (all when 0) in
 * pieces of at most a MiB (@off: where the piece starts in the block).  A
 * block that cannot be read is skipped. */
typedef int (*cen_block_fn)(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off,
			    void *arg);
int cen_blocks_read(struct cen *c, uint64_t max, const char *phase, cen_block_fn fn, void *arg);
/* types.c, leaks.c: from block contents, threads running. */
int cen_types(struct cen *c);
int cen_leaks(struct cen *c);

/* roots.c: where the program's own pointers live -- static data (its
 * modules' writable segments, jemalloc's own excluded), each thread's stack
 * and registers.  @fn gets their words a piece at a time: @tid is 0 for
 * static data, @at the address of w[0] (0 for registers). */
typedef int (*cen_words_fn)(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw,
			    void *arg);
int cen_roots_scan(struct cen *c, cen_words_fn fn, void *arg);
/* The name of static-data word @at: "symbol (module)" or "module+0xoff". */
void cen_root_name(struct cen *c, uint64_t at, char *buf, size_t len);

/* The pointer graph (leaks.c): block -> blocks, compressed rows. */
struct cen_graph {
	uint64_t *off;		/* nblocks + 1 */
	uint32_t *to;
	size_t nedges, cap;
};
/* A root word pointing into a block. */
struct cen_rootref {
	uint64_t at;		/* the word's address (static data), 0 for a thread */
	pid_t tid;		/* the thread (stack or registers), 0 for static data */
	uint32_t block;
};
/* dominators.c: what each root source retains (--by root) into c->out->roots,
 * and the blocks retaining most into c->out->holders; @parent[b] is the block
 * through which b was first reached from a root (UINT32_MAX: a root itself). */
int cen_dominators(struct cen *c, const struct cen_graph *g, const struct cen_rootref *r, size_t nr,
		   const uint32_t *parent);

/* mem.c: make room for @need elements of @each bytes in the array at
 * *(void **)@p of capacity *@cap (doubling); -ENOMEM. */
int cen_grow(void *p, size_t *cap, size_t need, size_t each);
int cen_ptr_ok(uint64_t p);
int cen_read(struct cen *c, uint64_t addr, void *buf, size_t len);
/* Forget the pages kept by cen_read (the threads ran since). */
void cen_cache_flush(struct cen *c);
void cen_cache_free(struct cen *c);
/* The cache's memory, allocated and touched (before a stop); -ENOMEM. */
int cen_cache_prepare(struct cen *c);
int cen_timed_out(struct cen *c);
/* Half of the time to the deadline gone by? */
int cen_half_timed_out(struct cen *c);
void cen_progress(struct cen *c, const char *phase, uint64_t done, uint64_t total);

#endif
