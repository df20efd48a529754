/* allocated.c -- how many bytes a process has allocated since it started,
 * from its arenas' counts: what a heap profile is sampled from, for saying
 * why one came out empty. */
#include <errno.h>
#include <stdio.h>

#include "core/session.h"

/* The merged count of @kind ("bins", "lextents") @i, and its size if it
 * is not 0, added to the totals. */
static int add_class(jma_session *s, const char *kind, const char *size_kind, unsigned i,
		     uint64_t *bytes, uint64_t *count)
{
	char name[96];
	uint64_t n = 0;
	size_t size = 0, len = sizeof(n);
	int err;

	snprintf(name, sizeof(name), "stats.arenas.4096.%s.%u.nmalloc", kind, i);
	if ((err = jma_mallctl(s, name, &n, &len, NULL, 0)) || !n)
		return err;
	snprintf(name, sizeof(name), "arenas.%s.%u.size", size_kind, i);
	len = sizeof(size);
	if ((err = jma_mallctl(s, name, &size, &len, NULL, 0)))
		return err;
	*bytes += n * size;
	*count += n;
	return 0;
}

int jma_allocated_total(jma_session *s, uint64_t *bytes, uint64_t *count)
{
	uint32_t v = jma_jemalloc_version(s);
	unsigned nbins = 0, nlext = 0;
	size_t len = sizeof(unsigned);
	int own, err;

	*bytes = *count = 0;
	if (v && v < JMA_JEVERSION(5, 0, 0))
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "jemalloc %u.%u.%u counts large "
				"allocations by runs and chunks: no total before 5.0",
				v >> 16, (v >> 8) & 0xff, v & 0xff);
	if ((err = jma_hold_begin(s, &own)))
		return err;
	err = jma_refresh(s);
	if (!err)
		err = jma_mallctl(s, "arenas.nbins", &nbins, &len, NULL, 0);
	len = sizeof(unsigned);
	if (!err)
		err = jma_mallctl(s, "arenas.nlextents", &nlext, &len, NULL, 0);
	/* Sizes are read only for the classes used: most large ones never are. */
	for (unsigned i = 0; !err && i < nbins; i++)
		err = add_class(s, "bins", "bin", i, bytes, count);
	for (unsigned i = 0; !err && i < nlext; i++)
		err = add_class(s, "lextents", "lextent", i, bytes, count);
	return jma_hold_end(s, own, err);
}
