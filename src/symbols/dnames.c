/* dnames.c -- demangled names kept by their mangled form.
 *
 * Open addressing on the mangled string; only "_Z" names are stored (the
 * others are their own display form), so the table holds at most the C++
 * functions a session named, and is freed with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/dnames.h"

struct dname {
	char *mangled;		/* NULL: empty slot */
	char *demangled;	/* NULL: not demangled (malformed): shown as it is */
};

struct sym_dnames {
	struct dname *slot;
	size_t nslot, n;
};

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

struct sym_dnames *sym_dnames_new(void)
{
	return calloc(1, sizeof(struct sym_dnames));
}

void sym_dnames_free(struct sym_dnames *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nslot; i++) {
		free(d->slot[i].mangled);
		free(d->slot[i].demangled);
	}
	free(d->slot);
	free(d);
}

static int grow(struct sym_dnames *d)
{
	size_t n = d->nslot ? d->nslot * 2 : 256;
	struct dname *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < d->nslot; i++) {
		size_t k;

		if (!d->slot[i].mangled)
			continue;
		for (k = hash(d->slot[i].mangled) & (n - 1); s[k].mangled; k = (k + 1) & (n - 1))
			;
		s[k] = d->slot[i];
	}
	free(d->slot);
	d->slot = s;
	d->nslot = n;
	return 0;
}

const char *sym_dnames_get(struct sym_dnames *d, const char *name)
{
	struct dname *e;
	size_t k;

	if (!d || !name || strncmp(name, "_Z", 2))
		return name;
	if ((d->n + 1) * 2 > d->nslot && grow(d))
		return name;
	for (k = hash(name) & (d->nslot - 1); d->slot[k].mangled; k = (k + 1) & (d->nslot - 1))
		if (!strcmp(d->slot[k].mangled, name))
			return d->slot[k].demangled ? d->slot[k].demangled : name;
	e = &d->slot[k];
	if (!(e->mangled = strdup(name)))
		return name;
	e->demangled = sym_demangle(name);
	d->n++;
	return e->demangled ? e->demangled : name;
}
