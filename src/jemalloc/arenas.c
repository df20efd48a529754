/* arenas.c -- arenas across jemalloc versions: the all-arenas index, which exist, purge/decay. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/session.h"

#define ARENAS_ALL 4096	/* MALLCTL_ARENAS_ALL, 5.0 and later */

int jma_arena_all(jma_session *s, unsigned *idx)
{
	size_t len = sizeof(*idx);

	if (jma_jemalloc_version(s) >= JMA_JEVERSION(5, 0, 0)) {
		*idx = ARENAS_ALL;
		return 0;
	}
	/* 3.x and 4.x merge the arenas at index narenas. */
	return jma_mallctl(s, "arenas.narenas", idx, &len, NULL, 0);
}

int jma_arenas_initialized(jma_session *s, bool *init, unsigned n)
{
	char name[64];
	size_t len;
	int err;

	if (jma_jemalloc_version(s) < JMA_JEVERSION(5, 0, 0)) {
		len = n * sizeof(*init);
		return jma_mallctl(s, "arenas.initialized", init, &len, NULL, 0);
	}
	for (unsigned i = 0; i < n; i++) {
		len = sizeof(*init);
		snprintf(name, sizeof(name), "arena.%u.initialized", i);
		err = jma_mallctl(s, name, &init[i], &len, NULL, 0);
		if (err == -ENOENT)
			init[i] = false;
		else if (err)
			return err;
	}
	return 0;
}

int jma_arena_act(jma_session *s, unsigned idx, const char *action)
{
	uint32_t v = jma_jemalloc_version(s);
	char name[64];

	if (!strcmp(action, "decay") && v && v < JMA_JEVERSION(4, 0, 0))
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "decay: jemalloc %u.%u.%u has no "
				"arena.<i>.decay (added in 4.0); purge releases all dirty pages",
				v >> 16, (v >> 8) & 0xff, v & 0xff);
	snprintf(name, sizeof(name), "arena.%u.%s", idx, action);
	return jma_mallctl(s, name, NULL, NULL, NULL, 0);
}
