/* symbols.h -- finding jemalloc in a process, and naming its code: the symbol service's handle.
 *
 * Over one libdwfl set-up (dwfl.h): module files opened as the process sees
 * them (view.h), separate debuginfo by one policy (debuginfo.h).  Its files:
 * symbols.c (the handle: maps, libdwfl, close), findje.c (jemalloc's copies),
 * names.c (naming code), lookup.c (symbols by name), open.c (making one). */
#ifndef JMA_SYMBOLS_H
#define JMA_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/procfs.h"
#include "core/copy.h"
#include "symbols/ranges.h"

struct jma_syms;

/* What a search found, as a cache keeps it (process/symcache.h). */
struct jma_found {
	struct jma_copy copy;		/* the one copy of jemalloc */
	struct jma_range *waits;	/* the pthread_cond_*wait functions, sorted */
	size_t nwaits;
	uint64_t message;		/* <prefix>malloc_message, 0 when there is none */
	uint64_t restorer;		/* the rt_sigreturn trampoline in code, 0: none */
};

/* A place that keeps what syms_open finds, by the process's code files. */
struct jma_syms_cache {
	/* 0 with @f filled (its path, prefix, code and waits malloc'ed), or
	 * -ENOENT when nothing is kept for the process with @maps. */
	int (*load)(void *arg, pid_t pid, const struct att_map *maps, size_t n,
		    struct jma_found *f);
	/* Keep @f; a failure is only a slower next start. */
	void (*save)(void *arg, pid_t pid, const struct att_map *maps, size_t n,
		     const struct jma_found *f);
	void *arg;
};

struct jma_syms_opts {
	const char *prefix;	/* the public symbol prefix wanted; NULL: any */
	const char *module;	/* the copy in this module (path or file name); NULL: any */
	int allow_none;		/* a process without jemalloc is fine (symbolization only) */
	int debuginfod;		/* may ask debuginfod servers for debuginfo (network, dwfl.h) */
	const struct jma_syms_cache *cache;	/* NULL: none */
	int stripped_ok;	/* a static copy stripped of every symbol is taken, its
				 * functions unknown (fn_* 0, no code ranges) */
};

/* Report the modules of @pid (its files opened as it sees them, view.h) and
 * find every jemalloc copy, as @o (NULL: the defaults) restricts.  A process
 * whose code files the cache knows takes its one copy from there, without
 * opening them, and a new one is kept there.
 * On failure returns -errno with a message in @msg: -ENOENT no jemalloc,
 * -ENOEXEC jemalloc present but stripped, -EEXIST several copies (listed),
 * -ENOTSUP a copy without malloc_stats_print. */
int syms_open(pid_t pid, const struct jma_syms_opts *o, struct jma_syms **out, char *msg,
		  size_t len);
void syms_close(struct jma_syms *sy);

/* Was jemalloc found in the cache? */
int syms_cached(const struct jma_syms *sy);
/* Load now what naming code needs (after a cached open it is loaded on first
 * need), so that it is not loaded while threads are stopped. */
void syms_prepare(struct jma_syms *sy);

/* The snapshot of /proc/PID/maps taken by syms_open (one read per
 * session: a mapping made since is not in it). */
const struct att_map *syms_maps(const struct jma_syms *sy, size_t *n);
/* Take a new snapshot (each later command of a session). */
int syms_refresh_maps(struct jma_syms *sy);

/* The jemalloc copy in use, NULL when there is none (allow_none). */
const struct jma_copy *syms_jemalloc(const struct jma_syms *sy);

/* Is @pc in jemalloc's own code? */
int syms_in_jemalloc(const struct jma_syms *sy, uint64_t pc);

/* Is @pc inside a pthread_cond_*wait function?  By the exported symbols of
 * the modules' own files (.dynsym), which span what those functions inline:
 * no symbol table or debuginfo is loaded.  Found once per session, and kept
 * in the cache with jemalloc: a cached command does not load libdwfl for it. */
int syms_in_cond_wait(struct jma_syms *sy, uint64_t pc);

/* Where @addr is in its module's file: the address there (*@vaddr, as nm
 * and readelf show it) and its section's name ("" if none is known);
 * -ENOENT when no module holds it. */
int syms_section(struct jma_syms *sy, uint64_t addr, uint64_t *vaddr, char *sec, size_t len);
/* "symbol+0xoff (module)" or "0xaddr (module)" or "0xaddr"; the symbol
 * demangled as syms_demangled does. */
void syms_describe(struct jma_syms *sy, uint64_t pc, char *buf, size_t len);

/* Symbol name at @pc (NULL if none) and its offset; @file/@line get the source
 * position when debuginfo has it (*line 0 otherwise). */
const char *syms_name(struct jma_syms *sy, uint64_t pc, uint64_t *off, const char **module,
			  const char **file, int *line);

/* @name (a symbol of syms_name) as users read it: a C++ name demangled
 * (once per name, kept until syms_close), anything else as it is; @name
 * itself after syms_set_demangle(@sy, 0).  NULL gives NULL. */
const char *syms_demangled(struct jma_syms *sy, const char *name);
/* Whether syms_demangled and syms_describe demangle (the default). */
void syms_set_demangle(struct jma_syms *sy, int on);

/* Find jemalloc among the modules already reported to @d (a core file's:
 * the emulator's; @pid names it in messages), which the result owns from
 * now on (freed on failure).  @o as syms_open (its cache unused);
 * errors as syms_open. */
struct sym_dwfl;
int syms_from_core(struct sym_dwfl *d, pid_t pid, const struct jma_syms_opts *o,
		       struct jma_syms **out, char *msg, size_t len);

/* Symbols that know only the jemalloc copy @c (copied), for a backend that
 * runs no jemalloc code (tests' fake one): the maps of @pid are read when
 * @pid > 0, and what else is asked for is found there on need.  Errors as
 * syms_open. */
int syms_given(pid_t pid, const struct jma_copy *c, struct jma_syms **out, char *msg, size_t len);

/* The ELF file of the module holding jemalloc and its load bias (for the
 * emulator's relocations), NULL when unavailable. */
struct Elf *syms_jemalloc_elf(struct jma_syms *sy, uint64_t *bias);

/* A symbol of jemalloc's own module named @name, je_@name (jemalloc's
 * private namespace) or NS_je_@name (--with-private-namespace=NS_, as
 * tikv-jemalloc-sys builds it), from its symbol table or separate debuginfo, else its
 * dynamic symbols: 1 with its address (for STT_TLS: its offset in the
 * module's TLS block) and size, 0 when there is none (stripped). */
int syms_jemalloc_sym(struct jma_syms *sy, const char *name, uint64_t *addr, uint64_t *size,
			  int *is_tls);

/* Address of jemalloc's <prefix>malloc_message variable, 0 if none: where
 * several modules define it, the copy outside jemalloc (an executable's copy
 * relocation of a library variable is the one in use).  Found once per
 * session by every module's symbol table (3-4 ms on Redis, debuginfo looked
 * for), and kept in the cache with jemalloc. */
uint64_t syms_malloc_message(struct jma_syms *sy);

/* Address of function @name (the full symbol name: prefix included) in
 * jemalloc's own code, 0 if none, and its size (@size may be NULL): the
 * entry points the sampler probes.  Reads the symbol tables of the modules
 * (libdwfl loaded if not yet). */
uint64_t syms_func(struct jma_syms *sy, const char *name, uint64_t *size);

/* The run-time start of the function whose frame description covers @pc
 * (stripped code included), or -ENOENT. */
int syms_func_start(struct jma_syms *sy, uint64_t pc, uint64_t *start);

/* Address of the process's rt_sigreturn trampoline, 0 if none
 * (att_restorer_find): searched once per session before a thread stops (up
 * to a megabyte of code read), and kept in the cache with jemalloc; a kept
 * address is used only where its bytes still are. */
uint64_t syms_restorer(struct jma_syms *sy);

#endif
