/* track_base.c -- what every part of a track stands on: its error, the
 * uint64 index maps, and finding, creating and naming sites.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "series/track_priv.h"

int track_fail(jma_track *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

const char *jma_track_errmsg(const jma_track *t)
{
	return t->err;
}

void track_id_str(uint64_t id, char buf[17])
{
	snprintf(buf, 17, "%016llx", (unsigned long long)id);
}

static int map_grow(struct track_map *m)
{
	size_t n = m->nslot ? m->nslot * 2 : 1024;
	uint64_t *key = calloc(n, sizeof(*key));
	uint32_t *val = calloc(n, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nslot; i++) {
		size_t k;
		if (!m->val[i])
			continue;
		for (k = m->key[i] & (n - 1); val[k]; k = (k + 1) & (n - 1))
			;
		key[k] = m->key[i];
		val[k] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->nslot = n;
	return 0;
}

long track_map_get(const struct track_map *m, uint64_t key)
{
	if (!m->nslot)
		return -1;
	for (size_t k = key & (m->nslot - 1); m->val[k]; k = (k + 1) & (m->nslot - 1))
		if (m->key[k] == key)
			return (long)m->val[k] - 1;
	return -1;
}

int track_map_put(struct track_map *m, uint64_t key, uint32_t idx)
{
	size_t k;

	if ((m->n + 1) * 2 > m->nslot && map_grow(m))
		return -ENOMEM;
	for (k = key & (m->nslot - 1); m->val[k]; k = (k + 1) & (m->nslot - 1))
		;
	m->key[k] = key;
	m->val[k] = idx + 1;
	m->n++;
	return 0;
}

void track_map_free(struct track_map *m)
{
	free(m->key);
	free(m->val);
}

long track_site(jma_track *t, uint64_t id)
{
	long i = track_map_get(&t->site_ix, id);

	if (i >= 0)
		return i;
	if (t->nsites == t->sites_cap) {
		size_t n = t->sites_cap ? t->sites_cap * 2 : 256;
		struct track_site *v = realloc(t->sites, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->sites = v;
		t->sites_cap = n;
	}
	memset(&t->sites[t->nsites], 0, sizeof(*t->sites));
	/* Zeros: it held nothing in the snapshots before. */
	t->sites[t->nsites].hist = calloc(TRACK_HIST, sizeof(float));
	if (!t->sites[t->nsites].hist)
		return -ENOMEM;
	t->sites[t->nsites].id = id;
	t->sites[t->nsites].first = t->nsnaps ? t->nsnaps - 1 : 0;
	if (track_map_put(&t->site_ix, id, (uint32_t)t->nsites)) {
		free(t->sites[t->nsites].hist);
		return -ENOMEM;
	}
	return (long)t->nsites++;
}

/* The last " X" (two bytes) starting before @n in @s; NULL when none. */
static const char *strrstr_n(const char *s, size_t n, const char *two)
{
	for (size_t i = n; i-- > 1;)
		if (s[i - 1] == two[0] && s[i] == two[1])
			return s + i - 1;
	return NULL;
}

/* Whether [@p, @end) is "file:LINE". */
static int is_file_line(const char *p, const char *end)
{
	const char *colon = NULL;

	for (const char *q = p; q < end; q++)
		if (*q == ':')
			colon = q;
	if (!colon || colon == p || colon + 1 == end)
		return 0;
	for (const char *q = colon + 1; q < end; q++)
		if (*q < '0' || *q > '9')
			return 0;
	return 1;
}

/* The function of a frame "function (file:line) [module]", read from its
 * end: a demangled C++ name has spaces and parentheses of its own
 * ("Allocator<false>::realloc(void*, unsigned long)"). */
static char *frame_function(const char *f)
{
	size_t n = strlen(f);
	const char *p;

	if (n && f[n - 1] == ']' && (p = strrstr_n(f, n, " [")))
		n = (size_t)(p - f);
	if (n && f[n - 1] == ')' && (p = strrstr_n(f, n, " (")) && is_file_line(p + 2, f + n - 1))
		n = (size_t)(p - f);
	return strndup(f, n);
}

int track_site_name(jma_track *t, size_t i, const char *const *frames, size_t n,
		    const char *module)
{
	struct track_site *s = &t->sites[i];
	const char *f0 = n ? frames[0] : "?";

	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	s->name = frame_function(f0);
	s->caller = n > 1 ? frame_function(frames[1]) : NULL;
	s->module = module ? strdup(module) : NULL;
	if (!s->frames || !s->name || (module && !s->module) || (n > 1 && !s->caller))
		return -ENOMEM;
	for (size_t j = 0; j < n; j++) {
		if (!(s->frames[j] = strdup(frames[j])))
			return -ENOMEM;
		s->nframes = j + 1;
	}
	return 0;
}
