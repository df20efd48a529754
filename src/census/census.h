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
#include "attach/machine.h"
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
	char version[80];
};

/* What a jemalloc build is, each fact read from the library itself
 * (layout.c, sizes.c, findmap.c): configure's choices move every offset the
 * census uses, and a build cannot be told by the size of its thread data
 * (a 57-bit build's is a 48-bit one's). */
struct cen_build {
	unsigned major, minor, patch;	/* the version string ("5.3.0-0-g0": Redis's) */
	const struct att_machine *mach;	/* its ELF e_machine's (attach/machine.h) */
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
	const struct att_machine *mach;	/* the build's machine */
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

struct cen_typing;

/* mem.c: what was copied of the target while it was stopped, read from
 * there (leaks.c's second look, on a small heap). */
struct cen_snap_range {
	uint64_t at, len, off;
};
struct cen_snap {
	struct cen_snap_range *r;
	size_t n, cap;
	unsigned char *data;
	size_t used, max;
	int sealed;		/* reads served from it */
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

/* A stretch of equal blocks (index.c): positions of @size bytes from @base,
 * a bit each at c->ibits[w0...] (1 = a live block there).  @slack: a block
 * alone whose bytes may start anywhere in the @slack bytes after @base. */
struct cen_run {
	uint64_t base, size;
	uint64_t w0;
	uint32_t npos;
	uint32_t slack;
};

/* The blocks (index.c), numbered 0.. in address order. */
struct cen_index {
	struct cen_run *runs;
	size_t nruns, capruns;
	uint64_t *ibits;
	uint32_t *irank;		/* live blocks before each word of ibits */
	size_t nwords, capwords;
	size_t nblocks;
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
	uint64_t extent_bytes;		/* the extents' sizes, summed (cen_expand) */
	uint64_t *wbuf;			/* the walk's root, leaf and sorted-root buffers */
	int defer_map;			/* the map is to be found once the threads are stopped */
	struct cen_index ix;		/* the live blocks, numbered by address (when kept) */
	int keep;			/* keep blocks (types, leaks, lists) */
	struct jma_census_size bysz[CEN_NSIZES_MAX];
	uint64_t bad_words, bad_nfree, stray_cached;	/* inconsistencies seen */
	uint64_t bad_bins;		/* thread-cache bins not believed (tcache.c) */
	/* Memory an extent covers that the target does not let be read: not
	 * held by a core (gcore leaves out MADV_DONTDUMP mappings: counted
	 * from the metadata) or PROT_NONE in a process; and blocks whose
	 * contents could not all be read (contents.c). */
	uint64_t unheld_extents, unheld_bytes;
	uint64_t unread_blocks, unread_bytes;
	struct cen_leafref *leaves;	/* the walk's, made room for before the stop */
	size_t nleaves, capleaves;
	struct cen_typing *typing;	/* types.c: what the pass learnt */
	uint32_t *btype;		/* types.c, with LIST: per block, index into out->types */
	uint64_t *cls;			/* leaks.c, with LIST: per block its class, 2 bits */
	uint32_t *owner;		/* dominators.c, with LIST: per block its owner */
	uint32_t *stack_ids;		/* the blocks of c->stacks, sorted (cen_stacks_index) */
	size_t nstack_ids;
	int64_t start_ns, deadline_ns;
	int forced;			/* stopped with a thread inside jemalloc (--force) */
	int64_t cpu_ns;			/* our CPU time in the stop */
	int64_t last_progress_ns;
	/* mem.c: metadata pages read so far (edata come 32 to a page). */
	uint64_t *ctag;
	unsigned char *cpage;
	uint64_t reads, misses;		/* cen_read calls; pages read into the cache */
	struct cen_snap snap;
	/* jemalloc before extents (3.6, 4.5: chunks, runs, huge allocations),
	 * NULL for 5.x: walk.c, tcache.c and roots.c hand its phases to
	 * chunks.c, chunktcache.c and tls.c (layout.c chooses). */
	struct cen_chunks *ch;
	uint64_t quarantined, quarantined_bytes;	/* 3.x/4.x: of the cached blocks */
};

/* layout.c: c->g from c->b (cen_layout_derive does it). */
void cen_geometry(struct cen *c);
/* c->lay (and c->L, c->g) from c->b by its family's rules; -ENOTSUP (message
 * set) for a release no family covers. */
int cen_layout_derive(struct cen *c);
/* layout.c: find the build's facts (version, size classes, TLS offset,
 * symbols) and derive the layout (3.6 and 4.5: chk_layout_find's);
 * -ENOTSUP for builds not understood, message in the session naming the
 * cause. */
int cen_layout_find(struct cen *c);
/* tls.c: where each thread's copy of one of jemalloc's TLS variables is. */
struct cen_tls {
	int how;		/* CEN_TLS_*: 0 = not found */
	int in_block;		/* TP: placed by the executable's TLS block (no slot) */
	int64_t tpoff;		/* TP: the variable is at the thread pointer + tpoff */
	uint64_t modid_slot;	/* DTV: the GOT slot holding the module's id (relocated) */
	uint64_t off;		/* DTV: the variable is at dtv[modid] + off */
	uint64_t var;		/* the variable's offset in the module's block */
};
#define CEN_TLS_TP	1	/* initial-exec (a GOT slot) or local-exec (an executable) */
#define CEN_TLS_DTV	2	/* global-dynamic: through the thread's dynamic thread vector */
#define CEN_TLS_ANY	UINT64_MAX	/* the module's one variable, its offset unknown (stripped) */
/* The place of the TLS variable at @off in jemalloc's TLS block; -ENOENT
 * when neither a GOT slot nor (in an executable) the block says. */
int cen_tls_find(struct cen *c, uint64_t off, struct cen_tls *t);
/* The size of jemalloc's module TLS block (PT_TLS), 0 if none. */
uint64_t cen_tls_memsz(struct cen *c);
/* Jemalloc linked into the program (local-exec): where byte @off of the
 * executable's TLS block is from the thread pointer; -ENOENT if it is not. */
int cen_tls_exec(struct cen *c, uint64_t off, int64_t *tpoff);
/* Its address in the thread with registers @r: 0, or 1 when the thread has
 * no copy yet (a dynamic TLS block never touched), -EFAULT when unreadable. */
int cen_tls_addr(struct cen *c, const struct cen_tls *t, const struct arch_gpregs *r, uint64_t *addr);
/* tsd.c: tpoff, 5.x's tsd from the thread pointer, by tls.c (running). */
void cen_tsd_find(struct cen *c);
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
/* mem.c: is c->maps[@i] jemalloc's data (@writable: only writable
 * mappings; else any readable non-code one), its .bss included? */
int cen_je_data(const struct cen *c, size_t i, int writable);
/* Leaf entry @j of the leaf read into @leaf: 0 when empty. */
int cen_leaf_entry(const struct cen *c, const uint64_t *leaf, unsigned j, struct cen_entry *e);
/* Words a leaf takes (2^leaf bits entries of one or two words); words of
 * the walk's buffer (root, a node, a leaf); leaves a map may have. */
size_t cen_leaf_words(const struct cen *c);
size_t cen_map_words(const struct cen *c);
size_t cen_map_leaves_max(const struct cen *c);
/* The entry for the page of @addr, as a walk would read it: 1, 0 when
 * there is none (no extent), -EFAULT when a level cannot be read. */
int cen_map_entry(struct cen *c, uint64_t addr, struct cen_entry *e);
/* The map's leaves, in address order, into c->leaves (room made by
 * cen_walk_prepare); a child named twice (forged) is left out and counted
 * in bad_words.  -EFAULT when the root cannot be read. */
int cen_map_leafrefs(struct cen *c);
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
/* tcache.c: every thread's cache and tcache.create's, into c->cached
 * (threads stopped; bounded by the deadline), then sorted (threads running). */
int cen_tcache_read(struct cen *c);
/* stacks.c: c->cached sorted (threads running). */
void cen_tcache_sort(struct cen *c);
/* stacks.c: the bins' stacks claimed by one cen_tcache_read (tcache.c, and
 * 3.x/4.x's chunktcache.c), copied at its end.  A stack of @n items at @at is
 * believed only if it fits its capacity @max and one readable mapping;
 * CEN_STACK_EXPLICIT: tcache.create's; CEN_STACK_RING: a quarantine's
 * {pointer, usable size} pairs. */
#define CEN_STACK_EXPLICIT	1
#define CEN_STACK_RING		2
/* A bin's stack as its tcache claims it: @n items at @at (CEN_STACK_*). */
struct bin_stack {
	uint64_t at;
	uint32_t n;
	uint32_t flags;
};
struct cen_stacks {
	struct bin_stack *v;
	size_t n, cap;
	uint64_t rejected;	/* bins not believed (capacity, mapping, overlap) */
};
int cen_stack_claim(struct cen *c, struct cen_stacks *st, uint64_t at, uint64_t n, uint64_t max,
		    unsigned flags);
/* The stacks of @st into c->cached (sorted later: cen_tcache_sort), but
 * none that overlaps another; those counted in st->rejected. */
int cen_stacks_copy(struct cen *c, struct cen_stacks *st);
/* @p is in a block of jemalloc's own (a cache's stacks, its tables):
 * jemalloc's class, never a root nor a leak (cen_stacks_index). */
int cen_stack_add(struct cen *c, uint64_t p);
/* 0: @addr is in no cache, 1: in a thread's, 2: in a tcache.create one. */
int cen_is_cached(const struct cen *c, uint64_t addr);
/* The first cached address >= @addr (its index; ncached if none). */
size_t cen_cached_from(const struct cen *c, uint64_t addr);
/* walk.c: the map walk, stopped: active extents copied into c->raw; then,
 * running: their blocks (live or thread-cached), counted and kept (3.x/4.x:
 * chunks.c's, here as there: cen_walk_prepare, cen_walk, cen_expand,
 * cen_alive, cen_extent_at and cen_walk_free hand them over). */
int cen_walk(struct cen *c);
int cen_expand(struct cen *c);
/* count.c: a block at @addr of @usize (@how: cen_is_cached's answer), counted by
 * size class @szind (CEN_NSIZES_MAX: by the caller), @slack as cen_index_add's;
 * an extent of @size bytes (for chunks.c). */
int cen_add_block(struct cen *c, unsigned szind, uint64_t addr, uint64_t usize, uint32_t slack,
		  int how);
/* count.c: @fmt appended to the result's warning, "; " between. */
void cen_warn(struct cen *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cen_add_extent(struct cen *c, uint64_t size, int slab);
/* The last walk's extents (runs and huge allocations): @i's pages into
 * *@base and *@size; 0 past the last. */
int cen_extent_at(const struct cen *c, size_t i, uint64_t *base, uint64_t *size);
/* The walk's copies freed once counted (their memory goes before the
 * contents are read). */
void cen_walk_free(struct cen *c);
/* Is the block at @addr allocated now, as jemalloc's map and the slab's
 * bitmap say (threads stopped)?  1 yes, 0 no (freed, its extent gone),
 * -EFAULT unreadable.  A thread cache may still hold it (cen_is_cached). */
int cen_alive(struct cen *c, uint64_t addr);
/* The first of c->maps ending past @addr (nmaps if none). */
size_t cen_maps_after(const struct cen *c, uint64_t addr);
/* Before a stop: the walk's buffers allocated and touched (again if they were). */
int cen_walk_prepare(struct cen *c);
/* index.c: block @addr of @size bytes, the next in address order, numbered
 * ix->nblocks; its bytes anywhere in [@addr, @addr + @slack + @size) (0 but
 * for 4.x's large blocks); -ENOMEM, -E2BIG past UINT32_MAX - 2 blocks. */
int cen_index_add(struct cen_index *ix, uint64_t addr, uint64_t size, uint32_t slack);
void cen_index_free(struct cen_index *ix);
size_t cen_index_bytes(const struct cen_index *ix);
/* The live block holding @addr (its number), or -1. */
long cen_block_of(const struct cen_index *ix, uint64_t addr);
/* Block @b's run, and its position there into *@k. */
const struct cen_run *cen_block_pos(const struct cen_index *ix, size_t b, uint64_t *k);
/* Block @b's address and size. */
void cen_block_at(const struct cen_index *ix, size_t b, uint64_t *addr, uint64_t *size);
uint64_t cen_block_addr(const struct cen_index *ix, size_t b);
uint64_t cen_block_size(const struct cen_index *ix, size_t b);
/* Where its bytes may be, from its address: its size and slack. */
uint64_t cen_block_span(const struct cen_index *ix, size_t b);
/* The end of the last block's span (0: no block). */
uint64_t cen_index_end(const struct cen_index *ix);
/* blocks.c: a census's blocks kept in its result (LIST, a snapshot's
 * addresses): the index and, per block, its type, class and owner. */
struct jma_census_blocks {
	struct cen_index ix;
	uint32_t *type;			/* NULL: every block untyped */
	uint64_t *cls;			/* 2 bits a block; NULL: every block anchored */
	uint32_t *owner;		/* NULL: no owner known */
	uint64_t end;			/* where the last block ends (cen_blocks_add) */
	size_t room;			/* blocks cen_blocks_reserve made room for */
};
/* The run's blocks, types, classes and owners moved into c->out (at its end). */
int cen_blocks_keep(struct cen *c);
/* Room for @n blocks (with owners when @owners) in @c's kept blocks, made
 * now; then cen_blocks_add appends each, in address order without overlap
 * (-EINVAL otherwise; -ENOMEM, -E2BIG past @n or the index's bound). */
int cen_blocks_reserve(struct jma_census *c, size_t n, int owners);
int cen_blocks_add(struct jma_census *c, const struct jma_census_block *b);
size_t cen_blocks_bytes(const struct jma_census_blocks *k);
void cen_blocks_free(struct jma_census_blocks *k);
/* 2-bit classes, per block. */
unsigned cen_cls_get(const uint64_t *cls, size_t b);
void cen_cls_set(uint64_t *cls, size_t b, unsigned v);

/* bits.c: a set of block numbers, with the next member found fast. */
#define CEN_BITS_LEVELS	7	/* 64^6 > 2^32 blocks */
struct cen_bits {
	uint64_t *lv[CEN_BITS_LEVELS];
	size_t nw[CEN_BITS_LEVELS];	/* words of each level */
	unsigned nlv;
	size_t n;
};
int cen_bits_init(struct cen_bits *s, size_t n);
void cen_bits_free(struct cen_bits *s);
size_t cen_bits_bytes(const struct cen_bits *s);
void cen_bits_set(struct cen_bits *s, size_t i);
void cen_bits_clear(struct cen_bits *s, size_t i);
int cen_bits_test(const struct cen_bits *s, size_t i);
/* The first member >= @i, SIZE_MAX if none. */
size_t cen_bits_next(const struct cen_bits *s, size_t i);

/* contents.c: call @fn for the blocks of @ix in @sel (all when NULL), in address
 * order, with their words: neighbours read together, a large block's first
 * @max bytes (all when 0) in pieces of at most a MiB (@off: where the piece
 * starts in the block; a piece the target has no page of is not read, and
 * given as no words when it starts the block).  Each block is taken out of
 * @sel before @fn sees it, and blocks @fn puts in @sel are read too: the
 * call returns once @sel is empty (those ahead in the same sweep, those
 * behind in the next, neighbours still read together).  A block that
 * cannot be read is skipped. */
typedef int (*cen_block_fn)(struct cen *c, size_t b, const uint64_t *w, size_t nw, uint64_t off,
			    void *arg);
int cen_blocks_read(struct cen *c, const struct cen_index *ix, struct cen_bits *sel, uint64_t max,
		    const char *phase, cen_block_fn fn, void *arg);
/* tcache.c: the blocks holding thread caches' stacks, once blocks are
 * numbered; is block @b one? */
int cen_stacks_index(struct cen *c);
int cen_is_stack(const struct cen *c, size_t b);
/* chunks.c, chunklayout.c, chunktcache.c, chunkown.c: jemalloc 3.6 and 4.5.
 * The row for @major.@minor and the library's tables (sets c->ch); the
 * walk's phases (through walk.c's); once the first expansion is done, the
 * result's own parts (by size, notes, jemalloc's own blocks). */
int chk_layout_find(struct cen *c, unsigned major, unsigned minor);
int cen_chunks_prepare(struct cen *c);
int cen_chunks_walk(struct cen *c);
int cen_chunks_expand(struct cen *c);
int cen_chunks_alive(struct cen *c, uint64_t addr);
int cen_chunks_run_at(const struct cen *c, size_t i, uint64_t *base, uint64_t *size);
void cen_chunks_walk_free(struct cen *c);
int cen_chunks_result(struct cen *c);
void cen_chunks_free(struct cen *c);
/* chunktcache.c: thread @t's cache and quarantine; a tcache_t at @tc; into @st. */
int chk_thread_cache(struct cen *c, struct cen_stacks *st, size_t t);
int chk_read_tcache(struct cen *c, struct cen_stacks *st, uint64_t tc, int explicit_cache);
/* chunktcache.c: thread @t's copy of jemalloc's TLS block, [*lo, *hi); 0 when unknown. */
int chk_tls_range(struct cen *c, size_t t, uint64_t *lo, uint64_t *hi);
/* types.c, leaks.c: from block contents, threads running. */
int cen_types(struct cen *c);
int cen_leaks(struct cen *c);
/* types.c: block @b's type (its first word read again unless kept; 0 none). */
uint32_t cen_type_of(struct cen *c, size_t b);
/* The result's types (c->out->types, untyped), sorted; *@where[old index]
 * = the new one (malloc'ed, NULL without types). */
int cen_types_finish(struct cen *c, uint32_t **where);
void cen_types_free(struct cen *c);

/* roots.c: where the program's own pointers live -- static data (its
 * modules' writable segments, jemalloc's own excluded), each thread's stack
 * (less jemalloc's TLS, its tsd) and registers.  @fn gets their words a piece at a time: @tid is 0 for
 * static data, @at the address of w[0] (0 for registers). */
typedef int (*cen_words_fn)(struct cen *c, pid_t tid, uint64_t at, const uint64_t *w, size_t nw,
			    void *arg);
int cen_roots_scan(struct cen *c, cen_words_fn fn, void *arg);
/* jemalloc's own roots: its module's data (a library of its own), each
 * thread's tsd -- left out of the program's. */
int cen_roots_jemalloc(struct cen *c, cen_words_fn fn, void *arg);
/* The name of static-data word @at: "symbol (module)", or without one
 * "module+0xVADDR (SECTION, no symbol)" (its address in the module's file). */
void cen_root_name(struct cen *c, uint64_t at, char *buf, size_t len);

/* spill.c: an append-only stream of 32-bit words, on disk (an unnamed file
 * in $TMPDIR or /var/tmp), in memory where no such file can be made. */
struct cen_spill {
	int fd;			/* -1: in memory */
	uint32_t *buf;		/* words not yet written */
	size_t nbuf;
	uint32_t *mem;		/* without a file */
	size_t capmem;
	uint64_t n;		/* words written */
};
int cen_spill_open(struct cen_spill *sp);
void cen_spill_close(struct cen_spill *sp);
int cen_spill_put(struct cen_spill *sp, uint32_t w);
/* @fn gets the words front to back, a buffer at a time; with @rewrite, what
 * it changed in the buffer is written back. */
int cen_spill_each(struct cen_spill *sp, int rewrite, int (*fn)(void *arg, uint32_t *w, size_t n),
		   void *arg);
uint64_t cen_spill_memory(const struct cen_spill *sp);

/* The pointer graph of the anchored blocks (leaks.c, for dominators.c):
 * each block read gets a number in the order it was read (a block is read
 * only after a pointer to it was found in one read before it), and a row
 * in @rows: its number | CEN_ROW, then the blocks its words point into.  A
 * pointer found by the second read (to a block that looked leaked) makes a
 * row of one target, after. */
#define CEN_ROW		0x80000000u
#define CEN_UNDEF	UINT32_MAX
struct cen_graph {
	struct cen_spill rows;
	uint32_t *num;		/* per block: its number, CEN_UNDEF if not read */
	uint32_t *order;	/* per number: the block */
	size_t m;		/* numbers given */
};
/* A root word pointing into a block. */
struct cen_rootref {
	uint64_t at;		/* the word's address (static data), 0 for a thread */
	pid_t tid;		/* the thread (stack or registers), 0 for static data */
	uint32_t block;
};
/* dominators.c: what holds the heap (--by root): the top of the dominator
 * tree (each root, and each block several roots share) into c->out->roots,
 * the blocks heading the most retained into c->out->holders.  Frees
 * @g->num as soon as it can. */
int cen_dominators(struct cen *c, struct cen_graph *g, struct cen_rootref *r, size_t nr);

/* mem.c: make room for @need elements of @each bytes in the array at
 * *(void **)@p of capacity *@cap (doubling); -ENOMEM. */
int cen_grow(void *p, size_t *cap, size_t need, size_t each);
/* Sort the @n elements of @each bytes at @v and fold those @cmp finds equal
 * into the first of them (@add); how many are left. */
size_t cen_fold(void *v, size_t n, size_t each, int (*cmp)(const void *, const void *),
		void (*add)(void *into, const void *from));
/* Room for one more element in the array at *(void **)@p (*@n used of
 * *@cap): a full array of CEN_FOLD_MANY or more is folded first and grows
 * only if that leaves it more than half full -- millions of counted items
 * take about as many as there are distinct ones; -ENOMEM. */
#define CEN_FOLD_MANY	(1 << 16)
int cen_fold_room(void *p, size_t *n, size_t *cap, size_t each,
		  int (*cmp)(const void *, const void *), void (*add)(void *into, const void *from));
int cen_ptr_ok(uint64_t p);
int cen_read(struct cen *c, uint64_t addr, void *buf, size_t len);
/* Copy [@at, @at + @len) into the snapshot: from @src, or read now (an
 * unreadable range is left out); -E2BIG past snap.max bytes.  Sealed, the
 * snapshot serves the reads inside it; freed, they go to the target again. */
int cen_snap_add(struct cen *c, uint64_t at, const void *src, uint64_t len);
/* Room for @bytes in @nranges, made and touched now (not in a stop, where
 * cen_snap_add does not grow it). */
int cen_snap_prepare(struct cen *c, uint64_t bytes, size_t nranges);
void cen_snap_seal(struct cen *c);
void cen_snap_free(struct cen *c);
/* Forget the pages kept by cen_read (the threads ran since). */
void cen_cache_flush(struct cen *c);
void cen_cache_free(struct cen *c);
/* The cache's memory, allocated and touched (before a stop); -ENOMEM. */
int cen_cache_prepare(struct cen *c);
/* Fault in the @len bytes at @p now (a byte written each page), not in a stop. */
void cen_touch(void *p, size_t len);
int cen_timed_out(struct cen *c);
/* The target's resident and swapped memory now, in bytes (/proc/PID/status:
 * the zero page and what was never written do not count); 0 on a core or
 * when unknown. */
uint64_t cen_resident(struct cen *c);
/* Half of the time to the deadline gone by? */
int cen_half_timed_out(struct cen *c);
void cen_progress(struct cen *c, const char *phase, uint64_t done, uint64_t total);

#endif
