/* jemattach/census.h -- every live block of the heap, by size, by C++ type, and what leaked.
 *
 *   struct jma_census *c;
 *   jma_census_run(s, &opts, &c);   read jemalloc's own map of active extents
 *   ... c->sizes, c->types, c->roots ...
 *   with JMA_CENSUS_LIST, every block:
 *   for (struct jma_census_cursor k = { 0 }; jma_census_next(c, &k, &b);) ...
 *   jma_census_free(c);
 *
 * Nothing runs in the target: jemalloc's metadata (its map of extents, slab
 * bitmaps, thread caches) is read with every thread stopped and none inside
 * jemalloc (retried as --freeze does), then the threads go on and block
 * contents (for types and leaks) are read live.  On a core (jma_open_core)
 * the same reads come from the dump.  jemalloc 5.0 and later (extents), 3.6 and
 * 4.5 (chunks and runs, x86_64; 3.6 with symbols); others fail with -ENOTSUP
 * (JMA_ERR_MISSING).
 */
#ifndef JEMATTACH_CENSUS_H
#define JEMATTACH_CENSUS_H

#include <stdint.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

#define JMA_CENSUS_LIST		0x1	/* keep every block in the result (jma_census_next) */
#define JMA_CENSUS_TYPES	0x2	/* type blocks by their vtable (reads every block's first word) */
#define JMA_CENSUS_LEAKS	0x4	/* classify anchored / leaked / unreferenced (reads every block) */
#define JMA_CENSUS_ROOTS	0x8	/* what each global and each thread's stack retains */

struct jma_census;
struct jma_census_blocks;

struct jma_census_block {
	uint64_t addr;		/* 4.x: a large block's run's first page (where in it the
				 * block starts is recorded nowhere) */
	uint64_t size;		/* usable size */
	uint32_t type;		/* index into types; 0 = no vtable */
	uint32_t owner;		/* with ROOTS, who retains it (JMA_CENSUS_OWNER_*); else _NONE */
	uint8_t cls;		/* enum jma_census_class (with JMA_CENSUS_LEAKS) */
};

/* A block's owner: the top of the dominator tree it falls under, as the
 * result's tables name it.  i < nroots: roots[i] (a root, or a block several
 * roots reach), when it is under none of the holders; nroots + h: under
 * holders[h] (the holder itself included); or one of these: */
#define JMA_CENSUS_OWNER_OTHER	0xfffffffdU	/* a root past the roots table's end */
#define JMA_CENSUS_OWNER_SHARED	0xfffffffeU	/* a block several roots reach, not in the table */
#define JMA_CENSUS_OWNER_NONE	0xffffffffU	/* no root of the program reaches it, or not known */

struct jma_census_opts {
	unsigned flags;		/* JMA_CENSUS_* */
	/* Called now and then during long phases (NULL: never): @phase names
	 * it, @done of @total units. */
	void (*progress)(void *arg, const char *phase, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Leak classes (chap's, and jemalloc's own). */
enum jma_census_class {
	JMA_CENSUS_ANCHORED = 0,	/* reachable from static data, a stack or a register */
	JMA_CENSUS_LEAKED = 1,		/* not anchored, but pointed to by another leaked block */
	JMA_CENSUS_UNREFERENCED = 2,	/* not anchored and pointed to by no leaked block */
	/* (The "leaked" count covers both of the last two, as chap's does.) */
	JMA_CENSUS_JEMALLOC = 3,	/* jemalloc's own (thread-cache stacks, its per-thread
					 * arrays): reached only from its data and tsd */
};

struct jma_census_size {
	uint64_t size;		/* the size class (a large block's own usable size in dev) */
	uint64_t blocks, bytes;
};

struct jma_census_type {
	char *name;		/* demangled type name; [0] is "" (untyped) */
	uint64_t blocks, bytes;
};

/* The top of the dominator tree: a root, or a block several roots reach. */
struct jma_census_root {
	char *name;		/* a root: "symbol (module)", "MODULE+0xOFF (SECTION, no symbol)"
				 * or "thread TID (stack, registers)"; a shared block: how it is
				 * reached, "ROOT -> 0xaddr (size) -> ..." */
	uint64_t blocks, bytes;	/* retained: what is reachable only through it */
	int shared;		/* a block (addr, size, type), not a root */
	uint64_t addr, size;
	uint32_t type;
};

/* A block that retains much (the top of the dominator tree, as MAT lists them). */
struct jma_census_holder {
	uint64_t addr, size;
	uint32_t type;
	uint64_t blocks, bytes;	/* retained */
	char *path;		/* how it is reached: "ROOT -> 0xaddr (size) -> ..." ending at it */
};

struct jma_census_count {
	uint64_t blocks, bytes;
};

/* An unreferenced block, to look at: its first bytes as read (live). */
struct jma_census_example {
	uint64_t addr, size;
	uint32_t type;
	unsigned char head[16];
	unsigned nhead;
};
#define JMA_CENSUS_EXAMPLES 8

struct jma_census {
	char version[80];	/* jemalloc's version string, as its library holds it */
	char layout[32];	/* the per-version table row used */
	char map_how[160];	/* how the map of extents was found */
	uint64_t map_addr;
	struct jma_census_count live;		/* live for the program */
	struct jma_census_count cached;		/* in thread caches: allocated for jemalloc */
	struct jma_census_count explicit_cached;/* ... of which in tcache.create caches */
	int explicit_known;	/* the tcache.create array was found (needs symbols) */
	uint64_t extents, slabs;	/* 3.x/4.x: runs and huge allocations, small runs */
	unsigned threads;	/* thread caches read */
	uint64_t stop_ns;	/* how long every thread stayed stopped (0 on a core) */
	uint64_t meta_ns;	/* the metadata read (inside the stop) */
	uint64_t total_ns;
	uint64_t mem_bytes;	/* peak memory the census itself held for its tables */
	struct jma_census_size *sizes;	/* by size, ascending; only sizes with blocks */
	size_t nsizes;
	struct jma_census_type *types;	/* with JMA_CENSUS_TYPES, by bytes descending after [0] */
	size_t ntypes;
	struct jma_census_size *untyped;	/* with TYPES: blocks without a vtable, by size */
	size_t nuntyped;
	struct jma_census_count anchored, leaked, unreferenced;	/* with LEAKS */
	struct jma_census_count jemalloc_own;	/* reached only by jemalloc's data: never leaked */
	uint64_t rechecked;	/* blocks unreferenced after a first read of the contents */
	struct jma_census_count gone;	/* ... of which freed since (checked with every thread
					 * stopped again, and once more after) */
	uint64_t confirmed;	/* blocks so checked (at most 100000, within the timeout) */
	uint64_t confirm_stop_ns;	/* how long that second stop held every thread */
	uint64_t found_again;	/* ... of which found in use: written to since, or pointed to
				 * when the roots and every block there was at that stop were
				 * read again (pointers moved while the program ran, holders
				 * allocated since), and what those lead to */
	uint64_t reread_blocks;	/* the blocks there were at that stop, all read */
	uint64_t reread_stopped;	/* bytes copied during that stop for the second read (a
					 * heap of at most 128 MiB: then of one moment), 0: read live */
	struct jma_census_example examples[JMA_CENSUS_EXAMPLES];	/* unreferenced ones */
	unsigned nexamples;
	struct jma_census_root *roots;	/* with ROOTS: the top of the dominator tree (every root,
					 * and the largest shared blocks), by retained bytes */
	size_t nroots;
	struct jma_census_holder *holders;	/* with ROOTS: the blocks at the top of the */
	size_t nholders;			/* tree by retained bytes, descending */
	int graph_on_disk;	/* ROOTS: the pointer graph went to a temporary file */
	int dominators_unsettled;	/* ROOTS: the iteration stopped before it settled */
	/* With LIST, or read from a snapshot saved with its addresses: every live
	 * block, kept in about 9 bytes each (an index of about a bit, its type,
	 * class and with ROOTS its owner); NULL otherwise.  jma_census_next. */
	struct jma_census_blocks *blocks;
	size_t nlisted;		/* ... how many */
	int owners;		/* ... each with its owner (LIST with ROOTS) */
	char warn[512];		/* something partial the caller should say, "" if none */
};

int jma_census_run(jma_session *s, const struct jma_census_opts *o, struct jma_census **out)
	JMA_MUST_CHECK;
void jma_census_free(struct jma_census *c);

/* Where jma_census_next is in a census's blocks: zeroed before the first. */
struct jma_census_cursor {
	size_t n;		/* the number of the block it gives next, 0 .. nlisted */
	size_t run;		/* (private) */
	uint64_t pos;
};
/* The next block of @c (by address) into @b: 1, or 0 past the last (or
 * without blocks). */
int jma_census_next(const struct jma_census *c, struct jma_census_cursor *k,
		    struct jma_census_block *b);

JMA_API_END

#endif
