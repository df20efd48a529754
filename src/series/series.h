/* series.h -- the fields of a sample, shared by the writers and the loader. */
#ifndef JMA_SERIES_PRIV_H
#define JMA_SERIES_PRIV_H

#include <stddef.h>

#include <jemattach.h>

/* One uint64_t member of struct jma_sample (global) or jma_arena_sample. */
struct series_field {
	const char *key;	/* JSON-lines key; jemalloc's own name where it has one */
	const char *col;	/* CSV column and Prometheus name part */
	const char *stats;	/* path in malloc_stats_print JSON; NULL: derived */
	size_t off;
	int pages;		/* recorded in pages (key), held in bytes */
	const char *help;
};

/* NULL-terminated. */
extern const struct series_field series_global[];
extern const struct series_field series_arena[];

static inline uint64_t *series_at(const void *base, const struct series_field *f)
{
	return (uint64_t *)((char *)base + f->off);
}

#endif
