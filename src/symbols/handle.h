/* handle.h -- the inside of the symbols handle, shared by the files that make it up (symbols.h):
 * symbols.c (the handle itself) below findje.c, names.c and lookup.c, open.c above them. */
#ifndef JMA_SYMBOLS_HANDLE_H
#define JMA_SYMBOLS_HANDLE_H

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbols/dwfl.h"
#include "symbols/fdes.h"
#include "symbols/symbols.h"

/* Names already looked up, by pc: dwfl_module_addrinfo scans a module's
 * whole symbol table per address, and the threads of a process mostly share
 * their frames (a thousand workers in the same wait). */
#define NAME_CACHE	4096
struct named {
	uint64_t pc;		/* 0: empty */
	uint64_t off;
	const char *name, *module, *file;	/* owned by libdwfl */
	int line, with_line;
};

struct fde_table {
	Dwfl_Module *mod;
	struct jma_fdes f;
};

struct jma_syms {
	struct named *names;	/* NAME_CACHE entries, allocated on first use */
	struct fde_table *fdes;	/* per module, loaded on first need (fde_name) */
	size_t nfdes;
	char **fde_names;	/* names made for stripped functions, owned */
	size_t nfde_names;
	struct sym_dnames *dnames;	/* C++ names demangled, made on first need */
	int no_demangle;	/* syms_set_demangle(sy, 0) */
	pid_t pid;
	struct sym_dwfl *sd;	/* libdwfl, made on first need (syms_enter) */
	int debuginfod;		/* jma_syms_opts.debuginfod */
	char *code_maps;	/* the maps lines libdwfl reports modules from */
	int cached;		/* jemalloc found by the cache, libdwfl not loaded for it */
	struct jma_range *waits;	/* pthread_cond_*wait code, sorted (syms_find_cond_waits) */
	size_t nwaits;
	int waits_known;
	uint64_t message;	/* <prefix>malloc_message (syms_malloc_message) */
	int message_known;
	uint64_t restorer;	/* the rt_sigreturn trampoline (syms_restorer) */
	int restorer_known;
	struct att_map *maps;
	size_t nmaps;
	struct jma_copy *copies;
	size_t ncopies;
	size_t chosen;
};

/* symbols.c: the file name of path @p. */
const char *syms_base_name(const char *p);
/* symbols.c: report the modules of the maps read at open to a new libdwfl.
 * -errno (-EIO: libdwfl's own error). */
int syms_report_modules(struct jma_syms *sy);
/* symbols.c: @sy's libdwfl, made on first need (the modules of the maps read
 * at open), entered as the thread's current set-up (*@prev: the one before,
 * for sym_dwfl_leave).  NULL when it cannot be made (not tried again). */
Dwfl *syms_enter(struct jma_syms *sy, struct sym_dwfl **prev);

/* findje.c: find the jemalloc copies among @dwfl's modules (may be NULL)
 * into @sy and choose one, as @o restricts (@pid names the process).
 * Errors as syms_open. */
int syms_find_jemalloc(struct jma_syms *sy, Dwfl *dwfl, pid_t pid, const struct jma_syms_opts *o,
		       char *msg, size_t len);
/* lookup.c: where the pthread_cond_*wait functions are, found once. */
int syms_find_cond_waits(struct jma_syms *sy);

#endif
