/* jemattach/heap.h -- jemalloc heap profiles: parse, subtract, symbolize, report.
 *
 *   char msg[512];
 *   jma_heap *h;
 *   if (jma_heap_load("x.heap", &h, msg, sizeof(msg)))    "x.heap:17: ..." in msg
 *           ...;
 *   jma_heap_symbolize(h, &(struct jma_heap_symopts){ .pid = pid });
 *   jma_heap_report_file(h, &(struct jma_heap_report_opts){ .top = 20 }, stdout);
 *   jma_heap_free(h);
 *
 * Works offline on a file and needs no jma_session.  A profile is untrusted
 * input: every field is bounded and a bad one is an error naming its line.
 * Values are un-sampled as jeprof does (ratio = (bytes/objs)/period; scale =
 * 1/(1-exp(-ratio))), so totals agree with `jeprof --text`.  Calls on a handle
 * return 0 or -errno and keep the message (jma_heap_errmsg); the library
 * never prints -- warnings (a module that cannot be read, ...) go to the log
 * callback of jma_heap_symopts.
 */
#ifndef JEMATTACH_HEAP_H
#define JEMATTACH_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jemattach/session.h>
#include <jemattach/stats.h>
#include <jemattach/api.h>

JMA_API_BEGIN

typedef struct jma_heap jma_heap;

/* Larger profiles are refused (-EFBIG) rather than read into memory. */
#define JMA_HEAP_MAX_BYTES (1024ULL * 1024 * 1024)
/* Frames one stack may have (jemalloc records at most 128). */
#define JMA_HEAP_MAX_FRAMES 1024

/* Parse @len bytes of a heap_v2 (jemalloc >= 4) or "heap profile:" (3.x)
 * profile.  @name prefixes error messages ("NAME:LINE: reason").  On failure
 * returns -EINVAL (bad or truncated input), -EFBIG or -ENOMEM, with the
 * message in @msg; *out is NULL.  @buf is not kept. */
int jma_heap_parse(const void *buf, size_t len, const char *name, jma_heap **out, char *msg,
		   size_t msglen) JMA_MUST_CHECK;
/* Read and parse the file at @path; errors as jma_heap_parse, or -errno of
 * the read ("PATH: reason"). */
int jma_heap_load(const char *path, jma_heap **out, char *msg, size_t msglen) JMA_MUST_CHECK;
void jma_heap_free(jma_heap *h);

const char *jma_heap_errmsg(const jma_heap *h);

struct jma_heap_info {
	int version;		/* 2: heap_v2 (jemalloc >= 4); 1: "heap profile:" (3.x) */
	uint64_t period;	/* mean bytes between samples; 0: not sampled */
	size_t nstacks;		/* distinct stacks */
	size_t nmaps;		/* lines of MAPPED_LIBRARIES */
	int has_alloc;		/* accumulated (alloc_*) counts present (opt.prof_accum) */
	int is_diff;		/* a base was subtracted */
	int symbolized;		/* jma_heap_symbolize succeeded */
	/* Sampled objects as the profile records them (before un-sampling;
	 * of the profile itself, a base subtracted or not): live now, and
	 * allocated since profiling started (0 without opt.prof_accum).  0
	 * live samples: the report is empty whatever the options. */
	uint64_t samples, samples_alloc;
};
void jma_heap_info(const jma_heap *h, struct jma_heap_info *info);

/* Subtract @base (un-sampled, stack by stack, as jeprof --base does): what
 * remains is the change.  Stacks only in @base become negative.  @base must
 * come from the same process (stacks are matched by address).  @h is then a
 * difference (has_alloc only if both had it) and its names are dropped:
 * subtract first, then symbolize. */
int jma_heap_subtract(jma_heap *h, const jma_heap *base) JMA_MUST_CHECK;

struct jma_heap_symopts {
	/* 0: the files named in the profile's MAPPED_LIBRARIES, on this host.
	 * A PID: that live process's mappings and files, read through
	 * /proc/PID/map_files (deleted or replaced files) and /proc/PID/root
	 * (containers) -- the process that wrote the profile, still running. */
	pid_t pid;
	/* Where separate debuginfo is looked for, in libdwfl's syntax (build-id
	 * under each absolute entry's .build-id/, .debug/, ...); NULL: libdwfl's
	 * default, which includes /usr/lib/debug. */
	const char *debuginfo_path;
	/* DWARF inside a module's own file (a -g build) always gives inlined
	 * frames and file:line.  DWARF in separate debuginfo files (-dbgsym
	 * packages; their symbol tables always name functions) is read only
	 * when this is set: it is large and compressed, and reading it was most
	 * of the time on a daemon's profile. */
	int lines;
	jma_log_fn log;		/* warnings; NULL: silent */
	void *log_arg;
	/* May ask the debuginfod servers of $DEBUGINFOD_URLS for debuginfo
	 * (network).  0: the files of this host (or of the live process) only,
	 * whatever the environment says. */
	int debuginfod;
};
/* Name every address: function (inlined frames too), source file and line,
 * module.  Addresses no module covers stay hex; a module that cannot be read
 * is a warning, not an error.  Can be called again (e.g. with a pid). */
int jma_heap_symbolize(jma_heap *h, const struct jma_heap_symopts *o) JMA_MUST_CHECK;

enum jma_heap_sample {
	JMA_HEAP_INUSE_SPACE,	/* live bytes (default) */
	JMA_HEAP_INUSE_OBJECTS,	/* live objects */
	JMA_HEAP_ALLOC_SPACE,	/* bytes allocated since start (needs opt.prof_accum) */
	JMA_HEAP_ALLOC_OBJECTS,	/* objects allocated since start (needs opt.prof_accum) */
};

enum jma_heap_format {
	JMA_HEAP_TEXT,		/* jeprof --text columns: flat flat% sum% cum cum% name */
	JMA_HEAP_JSON,		/* total, sites, and the largest stacks with their frames */
	JMA_HEAP_COLLAPSED,	/* "root;...;leaf value" for flamegraph.pl, speedscope, inferno */
	JMA_HEAP_PPROF,		/* gzipped profile.proto, for pprof */
};

struct jma_heap_report_opts {
	enum jma_heap_format format;
	enum jma_heap_sample sample;
	unsigned top;		/* sites (text/json) and stacks (json) shown; 0: all */
	int lines;		/* a site is function + file:line, not only function */
	const char *focus;	/* extended regex: keep stacks with a frame matching it */
	const char *ignore;	/* extended regex: drop stacks with a frame matching it */
	const char *fold;	/* extended regex: more allocator wrappers to fold away,
				 * like jemalloc and malloc (e.g. "^my_xmalloc$") */
	int no_default_folds;	/* do not fold the wrappers of jma_heap_default_folds */
	int no_demangle;	/* C++ names as mangled in text, collapsed stacks and sites'
				 * names (JSON and pprof carry both forms either way) */
	const char *comment;	/* pprof: a comment the profile carries (`go tool pprof
				 * -comments` shows it); NULL: none */
};

/* A default fold rule: the allocation wrappers of a well-known program,
 * folded away like malloc itself unless no_default_folds is set. */
struct jma_heap_fold {
	const char *program;	/* "Redis", "BIND (ISC)", ... */
	const char *re;		/* extended regex over function names */
};
/* The default rules; *n their number.  Static storage. */
const struct jma_heap_fold *jma_heap_default_folds(size_t *n);
/* The allocator entry points always folded, for i = 0, 1, ... until NULL;
 * *prefix is set when the string is a prefix ("je_": every je_* function). */
const char *jma_heap_alloc_fn(size_t i, int *prefix);

/* Where a site's name comes from. */
enum jma_heap_named {
	JMA_HEAP_NAMED_ADDRESS,		/* "module+0xOFF" or "0xADDR": nothing known there */
	JMA_HEAP_NAMED_BOUNDARY,	/* "module!fn_0xSTART": a function without a symbol,
					 * bounded by its .eh_frame entry (START: file address) */
	JMA_HEAP_NAMED_SYMBOL,		/* an ELF symbol (.symtab, .dynsym, MiniDebugInfo,
					 * separate debuginfo) or DWARF */
};

/* One row of the report: a function (or function + line) and what it holds. */
struct jma_heap_site {
	const char *name;	/* function, or "function file:line" with .lines; C++
				 * names demangled unless no_demangle */
	const char *function;	/* as the symbol table spells it (mangled) */
	const char *demangled;	/* function demangled (C++), else function */
	const char *file;	/* NULL when unknown */
	int line;		/* 0 when unknown */
	const char *module;	/* file of the module, NULL when unknown */
	const char *build_id;	/* the module's build-id in hex, NULL when unknown */
	enum jma_heap_named named;
	double flat;		/* held by allocations this site made itself */
	double cum;		/* held by allocations made under it */
};

/* The sites of the report, largest flat first, at most o->top; the strings
 * live as long as @h.  *total is the sum over all (filtered) stacks.  Free
 * *sites with free(). */
int jma_heap_sites(jma_heap *h, const struct jma_heap_report_opts *o, struct jma_heap_site **sites,
		   size_t *nsites, double *total) JMA_MUST_CHECK;

/* Write the report in o->format through @write (pprof is binary). */
int jma_heap_report(jma_heap *h, const struct jma_heap_report_opts *o, jma_write_fn write,
		    void *arg) JMA_MUST_CHECK;
int jma_heap_report_file(jma_heap *h, const struct jma_heap_report_opts *o, FILE *f)
	JMA_MUST_CHECK;

/* "inuse_space" ... and back (-EINVAL when unknown); "text" ... likewise. */
const char *jma_heap_sample_name(enum jma_heap_sample s);
int jma_heap_sample_from_name(const char *s);
const char *jma_heap_format_name(enum jma_heap_format f);
int jma_heap_format_from_name(const char *s);

JMA_API_END

#endif
