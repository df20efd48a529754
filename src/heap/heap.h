/* heap.h -- the private side of jma_heap, shared by the src/heap_*.c modules.
 *
 *   parse.c           text -> stacks, counts, mappings
 *   sample.c          un-sampling, base subtraction, the address index
 *   sym.c             modules, files and debuginfo with libdwfl
 *   modsym.c          addresses -> frames from per-module tables
 *   folds.c           which frames are the allocator's
 *   view.c            one report's view: folding, filters, sites
 *   report.c          output plumbing and the format dispatcher
 *   text.c, json.c, collapsed.c, pprof.c: the formats
 *   strtab.c          interned strings (ids double as pprof's string table)
 */
#ifndef JMA_HEAP_PRIV_H
#define JMA_HEAP_PRIV_H

#include <stdarg.h>
#include <stddef.h>
#include <regex.h>
#include <stdint.h>

#include <jemattach/heap.h>

/* Interned strings: id 0 is "", ids are dense and stable. */
struct heap_strtab {
	char **str;
	size_t n, cap;
	uint32_t *slot;		/* open addressing: id + 1, 0 = empty */
	size_t nslot;
	uint32_t *dem;		/* by id: 1 + the id of its demangled form; 0 not known yet */
	size_t ndem;
};
/* The id of @s (added when new); UINT32_MAX when out of memory. */
uint32_t heap_str(struct heap_strtab *t, const char *s);
/* The id of string @id as users read it: a C++ name demangled (once per
 * name), anything else @id itself; UINT32_MAX when out of memory. */
uint32_t heap_str_demangled(struct heap_strtab *t, uint32_t id);
int heap_strtab_init(struct heap_strtab *t);
void heap_strtab_free(struct heap_strtab *t);

enum { HEAP_CUR_OBJS, HEAP_CUR_BYTES, HEAP_ACC_OBJS, HEAP_ACC_BYTES, HEAP_NVAL };

struct heap_stack {
	size_t pc;		/* first address in jma_heap.pcs (leaf first) */
	uint32_t npc;
	uint64_t raw[HEAP_NVAL];	/* as sampled (the "t*" line) */
	double val[HEAP_NVAL];		/* un-sampled; after a subtraction, the difference */
};

/* One line of MAPPED_LIBRARIES (or of /proc/PID/maps). */
struct heap_map {
	uint64_t start, end, offset, inode;
	char perms[5];
	uint32_t path;		/* strtab id; 0 for anonymous */
};

struct heap_maps {
	struct heap_map *v;
	size_t n, cap;
};

/* A symbolized frame; a location has one per inlining level, innermost first. */
struct heap_frame {
	uint32_t func, file;	/* strtab ids (file 0: unknown) */
	uint32_t dfunc;		/* func demangled (C++), else func: what reports print */
	int line;
};

/* How a location got its name. */
enum heap_named {
	HEAP_NAMED_NONE,	/* "module+0xoff" or "0xaddr" */
	HEAP_NAMED_BOUNDARY,	/* "module!fn_0xSTART": a function found by its FDE only */
	HEAP_NAMED_SYMBOL,	/* an ELF symbol or DWARF */
};

/* A distinct address of the profile, as used for symbolization (callers -1). */
struct heap_loc {
	uint64_t addr;
	uint32_t frame, nframe;	/* into jma_heap.frames; nframe 0: unnamed */
	int32_t module;		/* into jma_heap.modules; -1: none */
	uint32_t symbol;	/* the ELF symbol holding it (strtab id, 0: none) */
	int alloc;		/* allocator code: folded away with what is under it */
	enum heap_named named;
};

/* A mapped file that addresses fall in. */
struct heap_module {
	uint32_t path;		/* strtab id */
	uint64_t lo, hi, offset;
	uint64_t first_end;	/* end of its first mapping: names the /proc/PID/map_files entry */
	uint64_t inode;
	uint64_t bias;		/* file address = addr - bias (set when symbolized) */
	uint32_t build_id;	/* strtab id of the hex build-id, 0 if unknown */
	int has_dwarf;
	int is_jemalloc;
};

struct jma_heap {
	int version;
	uint64_t period;
	int has_alloc, is_diff, symbolized;

	struct heap_stack *stacks;
	size_t nstacks, stacks_cap;
	uint64_t *pcs;		/* every stack's addresses; callers already -1 */
	size_t npcs, pcs_cap;
	struct heap_maps maps;	/* the profile's MAPPED_LIBRARIES */

	/* Built by heap_index: one loc per distinct address, sorted by address,
	 * and for each pcs[i] the index of its loc. */
	struct heap_loc *locs;
	size_t nlocs;
	uint32_t *pc_loc;
	struct heap_frame *frames;
	size_t nframes, frames_cap;
	struct heap_module *modules;
	size_t nmodules;

	struct heap_strtab str;
	size_t mem_max;		/* the work allowed for this profile (heap_mem_check) */
	size_t ndistinct;	/* distinct addresses, counted by heap_index */
	char err[512];
};

/* A profile is hostile input: the memory its analysis takes is bounded by
 * its size.  What it takes grows with its addresses, stacks and distinct
 * addresses (each array of the pipeline, counted at its peak, below); one
 * needing more than HEAP_MEM_PER_BYTE times its size plus HEAP_MEM_BASE is
 * refused before the work.  jemalloc writes every address as 0x and 12 or
 * more hex digits: a real profile needs a fraction of this. */
#define HEAP_MEM_PER_BYTE	8
#define HEAP_MEM_BASE		(64ULL << 20)
#define HEAP_COST_PC		40	/* pcs (with growth), heap_index's three arrays, pc_loc */
#define HEAP_COST_STACK		160	/* heap_stack (with growth), the view's stack, its frames */
#define HEAP_COST_LOC		320	/* heap_loc, its frames, hex or symbol names, a view site */
/* The memory allowed for a profile of @len bytes. */
size_t heap_mem_max(size_t len);
/* 0, or -E2BIG when @npcs addresses in @nstacks stacks, @nlocs of them
 * distinct, would take more than h->mem_max: *@need gets the estimate. */
int heap_mem_check(const jma_heap *h, size_t npcs, size_t nstacks, size_t nlocs, size_t *need);

/* Record an error: returns -|err|. */
int heap_fail(jma_heap *h, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Un-sample every stack from raw into val. */
void heap_unsample(jma_heap *h);
/* (Re)build locs and pc_loc, dropping any symbolization.  -E2BIG (nothing
 * changed) when the distinct addresses would pass h->mem_max. */
int heap_index(jma_heap *h);
/* Parse lines of /proc/PID/maps syntax from @text (@len bytes) into @m
 * (paths interned in h->str); messages name @name and the line. */
int heap_parse_maps(jma_heap *h, struct heap_maps *m, const char *text, size_t len,
		    const char *name, char *msg, size_t msglen);
/* Replace h->modules with the file-backed mappings of @m, grouped by file. */
int heap_modules_build(jma_heap *h, const struct heap_maps *m);
/* The name of a location that has no frames, "module+0xoff" or "0xaddr", as
 * a strtab id (UINT32_MAX: out of memory). */
uint32_t heap_loc_hexname(jma_heap *h, const struct heap_loc *l);

/* Whether @name is an allocator entry point (malloc and its family, operator
 * new, Rust's allocator shims, the dynamic linker's own, prefixed copies). */
int heap_is_alloc_fn(const char *name);

/* One report's view of a profile. */
struct heap_vstack {
	size_t stack;		/* into h->stacks */
	uint32_t fold;		/* first address kept: allocator frames before it are folded */
	double value;		/* the chosen sample's value */
};

struct heap_vsite {
	uint32_t label;		/* strtab id of the row's name */
	struct heap_frame fr;	/* first frame seen with that name */
	int32_t module;
	enum heap_named named;
	double flat, cum;
};

struct heap_view {
	jma_heap *h;
	const struct jma_heap_report_opts *o;
	double total;
	double unnamed;		/* flat at sites without a symbol (named by FDE, or hex) */
	struct heap_vstack *stacks;	/* kept by focus/ignore, value != 0 (any value for pprof) */
	size_t nstacks;
	struct heap_vsite *sites;	/* all of them, largest flat first */
	size_t nsites;
	/* heap_view_frames' answer: frames and the location of each. */
	struct heap_frame *fr;
	uint32_t *fr_loc;
	size_t fr_cap;
	signed char *fold_match;	/* per location: its frames match the fold regex; -1 unknown */
	regex_t re[3];		/* focus, ignore, fold */
	int has_re[3];
};

int heap_view_build(jma_heap *h, const struct jma_heap_report_opts *o, struct heap_view *v);
void heap_view_free(struct heap_view *v);
/* The frames of @vs after folding, leaf first and innermost first, into
 * v->fr and v->fr_loc (valid until the next call); *n their number. */
int heap_view_frames(struct heap_view *v, const struct heap_vstack *vs, size_t *n);
/* The label of frame @f under the view's options ("func" or "func file:line";
 * func demangled unless no_demangle). */
uint32_t heap_view_label(struct heap_view *v, const struct heap_frame *f);
/* The same with @func (a strtab id: f->func or f->dfunc) as the function. */
uint32_t heap_view_label_as(struct heap_view *v, const struct heap_frame *f, uint32_t func);
/* The function of @f that reports print: f->dfunc, or f->func with no_demangle. */
uint32_t heap_view_func(const struct heap_view *v, const struct heap_frame *f);

/* Buffered output to a jma_write_fn; errors stick and are returned by flush. */
struct heap_out {
	jma_write_fn write;
	void *arg;
	int err;
	size_t len;
	char buf[1 << 16];
};
void heap_out_write(struct heap_out *o, const void *p, size_t n);
void heap_out_printf(struct heap_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int heap_out_flush(struct heap_out *o);

/* The formats; each returns 0 or -errno with h->err set. */
int heap_text(struct heap_view *v, struct heap_out *out);
int heap_json(struct heap_view *v, struct heap_out *out);
int heap_collapsed(struct heap_view *v, struct heap_out *out);
int heap_pprof(struct heap_view *v, struct heap_out *out);
/* readfile.c: the regular file @path, read whole into *@out (malloc'ed) and
 * *@len, at most @max bytes; -errno with "PATH: why" in @msg (a FIFO or
 * device: -EINVAL unread; too large: -EFBIG). */
int heap_read_file(const char *path, uint64_t max, char **out, size_t *len, char *msg,
		   size_t msglen);
/* gzip @len bytes of @data into @o (pprof reads its profiles gzip'd); -ENOMEM, -EIO. */
int heap_gzip(const uint8_t *data, size_t len, struct heap_out *o);

/* Make room for @need elements of @elem bytes in *@arr, whose capacity is
 * *@cap (doubling it); -ENOMEM leaves both as they were. */
int heap_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
