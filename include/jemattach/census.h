/* jemattach/census.h -- every live block of the heap, by size, by C++ type, and what leaked.
 *
 *   struct jma_census *c;
 *   jma_census_run(s, &opts, &c);   read jemalloc's own map of active extents
 *   ... c->sizes, c->types, c->list ...
 *   jma_census_free(c);
 *
 * Nothing runs in the target: jemalloc's metadata (its map of extents, slab
 * bitmaps, thread caches) is read with every thread stopped and none inside
 * jemalloc (retried as --freeze does), then the threads go on and block
 * contents (for types and leaks) are read live.  On a core (jma_open_core)
 * the same reads come from the dump.  jemalloc 5.0 and later; 3.x/4.x fail
 * with -ENOTSUP (JMA_ERR_MISSING).
 */
#ifndef JEMATTACH_CENSUS_H
#define JEMATTACH_CENSUS_H

#include <stdint.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

#define JMA_CENSUS_LIST		0x1	/* keep every block in c->list */
#define JMA_CENSUS_TYPES	0x2	/* type blocks by their vtable (reads every block's first word) */
#define JMA_CENSUS_LEAKS	0x4	/* classify anchored / leaked / unreferenced (reads every block) */
#define JMA_CENSUS_ROOTS	0x8	/* what each global and each thread's stack retains */

struct jma_census_opts {
	unsigned flags;		/* JMA_CENSUS_* */
	/* Called now and then during long phases (NULL: never): @phase names
	 * it, @done of @total units. */
	void (*progress)(void *arg, const char *phase, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Leak classes (chap's). */
enum jma_census_class {
	JMA_CENSUS_ANCHORED = 0,	/* reachable from static data, a stack or a register */
	JMA_CENSUS_LEAKED = 1,		/* not anchored, but pointed to by another leaked block */
	JMA_CENSUS_UNREFERENCED = 2,	/* not anchored and pointed to by no leaked block */
	/* (The "leaked" count covers both of the last two, as chap's does.) */
};

struct jma_census_block {
	uint64_t addr;
	uint64_t size;		/* usable size */
	uint32_t type;		/* index into types; 0 = no vtable */
	uint8_t cls;		/* enum jma_census_class (with JMA_CENSUS_LEAKS) */
};

struct jma_census_size {
	uint64_t size;		/* the size class (a large block's own usable size in dev) */
	uint64_t blocks, bytes;
};

struct jma_census_type {
	char *name;		/* demangled type name; [0] is "" (untyped) */
	uint64_t blocks, bytes;
};

struct jma_census_root {
	char *name;		/* "symbol (module)", "static data of MODULE (no symbol)" or
				 * "thread TID (stack, registers)" */
	uint64_t blocks, bytes;	/* retained: what is reachable only through it */
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

#define JMA_CENSUS_OWNER_SHARED	0xfffffffeU
#define JMA_CENSUS_OWNER_NONE	0xffffffffU

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
	uint64_t extents, slabs;
	unsigned threads;	/* thread caches read */
	uint64_t stop_ns;	/* how long every thread stayed stopped (0 on a core) */
	uint64_t meta_ns;	/* the metadata read (inside the stop) */
	uint64_t total_ns;
	uint64_t mem_bytes;	/* peak memory the census itself held for its tables */
	struct jma_census_size *sizes;	/* by size, ascending; only sizes with blocks */
	size_t nsizes;
	struct jma_census_type *types;	/* with JMA_CENSUS_TYPES, by bytes descending after [0] */
	size_t ntypes;
	struct jma_census_block *list;	/* with LIST, TYPES, LEAKS or ROOTS: by address */
	size_t nlist;
	struct jma_census_count anchored, leaked, unreferenced;	/* with LEAKS */
	struct jma_census_example examples[JMA_CENSUS_EXAMPLES];	/* unreferenced ones */
	unsigned nexamples;
	uint64_t edges;		/* block-to-block pointers found (LEAKS, ROOTS) */
	struct jma_census_root *roots;	/* with ROOTS: by retained bytes, descending */
	size_t nroots;
	struct jma_census_holder *holders;	/* with ROOTS: the blocks no one root retains, */
	size_t nholders;			/* by retained bytes, descending */
	/* With ROOTS and a list, per block of list: who retains it (its owner).  i < nroots:
	 * roots[i], outside every listed holder's subtree; nroots + h: holders[h]'s
	 * subtree (the holder included); JMA_CENSUS_OWNER_SHARED: several roots
	 * together (no one of them alone); JMA_CENSUS_OWNER_NONE: no root (leaked). */
	uint32_t *owner;
	char warn[512];		/* something partial the caller should say, "" if none */
};

int jma_census_run(jma_session *s, const struct jma_census_opts *o, struct jma_census **out)
	JMA_MUST_CHECK;
void jma_census_free(struct jma_census *c);

JMA_API_END

#endif
