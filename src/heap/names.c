/* names.c -- the names of sample types and output formats, as options and outputs spell them. */
#include <errno.h>
#include <string.h>

#include "heap/heap.h"

static const char *const sample_names[] = { "inuse_space", "inuse_objects", "alloc_space",
					    "alloc_objects" };
static const char *const format_names[] = { "text", "json", "collapsed", "pprof" };

static int index_of(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -EINVAL;
}

const char *jma_heap_sample_name(enum jma_heap_sample s)
{
	return (unsigned)s < 4 ? sample_names[s] : "?";
}

int jma_heap_sample_from_name(const char *s)
{
	return index_of(sample_names, 4, s);
}

const char *jma_heap_format_name(enum jma_heap_format f)
{
	return (unsigned)f < 4 ? format_names[f] : "?";
}

int jma_heap_format_from_name(const char *s)
{
	return index_of(format_names, 4, s);
}
