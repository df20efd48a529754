/* strtab.c -- interned strings for heap analysis.
 *
 * Function and file names repeat across thousands of frames; interning makes
 * them comparable as integers, and the dense ids serve as pprof's string
 * table as they are (id 0 is "", as profile.proto requires).  A C++ name's
 * demangled form is interned beside it, once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "symbols/demangle.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int rehash(struct heap_strtab *t, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t id = 0; id < t->n; id++) {
		size_t i = hash(t->str[id]) & (nslot - 1);
		while (slot[i])
			i = (i + 1) & (nslot - 1);
		slot[i] = (uint32_t)id + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

uint32_t heap_str(struct heap_strtab *t, const char *s)
{
	size_t i;
	char *copy;

	if (!t->nslot && rehash(t, 1024))
		return UINT32_MAX;
	for (i = hash(s) & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->str[t->slot[i] - 1], s))
			return t->slot[i] - 1;
	if (t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		char **ns = realloc(t->str, ncap * sizeof(*ns));
		if (!ns)
			return UINT32_MAX;
		t->str = ns;
		t->cap = ncap;
	}
	copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	t->str[t->n] = copy;
	t->slot[i] = (uint32_t)++t->n;
	/* Keep the table at most half full so probes stay short. */
	if (t->n * 2 > t->nslot && rehash(t, t->nslot * 2))
		return UINT32_MAX;
	return (uint32_t)t->n - 1;
}

uint32_t heap_str_demangled(struct heap_strtab *t, uint32_t id)
{
	char *d;
	uint32_t did;

	if (id < t->ndem && t->dem[id])
		return t->dem[id] - 1;
	if (id >= t->n)
		return UINT32_MAX;
	d = sym_demangle(t->str[id]);
	did = d ? heap_str(t, d) : id;
	free(d);
	if (did == UINT32_MAX)
		return UINT32_MAX;
	if (id >= t->ndem) {
		size_t n = t->n > id ? t->n * 2 : (size_t)id * 2 + 1;
		uint32_t *v = realloc(t->dem, n * sizeof(*v));
		/* No room to remember: the answer stands, found again next time. */
		if (!v)
			return did;
		memset(v + t->ndem, 0, (n - t->ndem) * sizeof(*v));
		t->dem = v;
		t->ndem = n;
	}
	t->dem[id] = did + 1;
	return did;
}

int heap_strtab_init(struct heap_strtab *t)
{
	memset(t, 0, sizeof(*t));
	return heap_str(t, "") == 0 ? 0 : -ENOMEM;
}

void heap_strtab_free(struct heap_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->slot);
	free(t->dem);
	memset(t, 0, sizeof(*t));
}
