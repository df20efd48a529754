/* copy.h -- one copy of jemalloc found in a process: where its code is and
 * the functions the jemalloc layer calls (found by symbols/symbols.h). */
#ifndef JMA_CORE_COPY_H
#define JMA_CORE_COPY_H

#include <stddef.h>
#include <stdint.h>

struct jma_range;

/* One copy of jemalloc found in the process. */
struct jma_copy {
	char *path;		/* module file as the target maps it */
	char *prefix;		/* public symbol prefix: "", "je_", "_rjem_", ... */
	int is_static;		/* inside a larger object (executable or other library) */
	char conf_env[48];	/* environment variable it reads options from */
	uint64_t fn_mallctl, fn_stats_print;	/* 0: unknown (a stripped copy) */
	uint64_t base;		/* its module's start: where a stripped copy is */
	struct jma_range *code;	/* jemalloc's own code, sorted */
	size_t ncode;
};

#endif
