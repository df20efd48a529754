/* track_sym.c -- naming the sites of a track: each distinct address is
 * symbolized once, the first time a stack holding it appears (a track of
 * hours does not look the same addresses up again), and a site's frames are
 * put together from the cache with the allocator folded away, as analyze does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "series/track_priv.h"

void track_sym_free(jma_track *t)
{
	for (size_t i = 0; i < t->nafr; i++)
		free(t->afr[i]);
	for (size_t i = 0; i < t->nmods; i++)
		free(t->mods[i]);
	free(t->afr);
	free(t->mods);
	free(t->addrs);
	track_map_free(&t->addr_ix);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The index of module @path in t->mods, added when new (a process has few). */
static int32_t module_of(jma_track *t, const char *path)
{
	char **v;

	for (size_t i = 0; i < t->nmods; i++)
		if (!strcmp(t->mods[i], path))
			return (int32_t)i;
	v = realloc(t->mods, (t->nmods + 1) * sizeof(*v));
	if (!v)
		return -1;
	t->mods = v;
	if (!(v[t->nmods] = strdup(path)))
		return -1;
	return (int32_t)t->nmods++;
}

static int add_frame(jma_track *t, const char *func, const char *file, int line, int32_t mod)
{
	char where[64] = "";
	const char *m = mod >= 0 ? base_name(t->mods[mod]) : NULL;

	if (heap_grow((void **)&t->afr, &t->afr_cap, t->nafr + 1, sizeof(*t->afr)))
		return -ENOMEM;
	if (file)
		snprintf(where, sizeof(where), " (%s:%d)", base_name(file), line);
	if (asprintf(&t->afr[t->nafr], "%s%s%s%s%s", func, where, m ? " [" : "", m ? m : "",
		     m ? "]" : "") < 0)
		return -ENOMEM;
	t->nafr++;
	return 0;
}

/* Cache location @l of the symbolized @mh under its address; @alloc: it
 * is folded away (allocator code, a default fold rule or --fold). */
static int cache_loc(jma_track *t, jma_heap *mh, const struct heap_loc *l, int alloc)
{
	struct track_addr a = { .frame = (uint32_t)t->nafr, .module = -1, .alloc = alloc };
	int err = 0;

	if (l->module >= 0 && (a.module = module_of(t, mh->str.str[mh->modules[l->module].path])) < 0)
		return -ENOMEM;
	if (!l->nframe) {
		uint32_t hex = heap_loc_hexname(mh, l);
		if (hex == UINT32_MAX)
			return -ENOMEM;
		err = add_frame(t, mh->str.str[hex], NULL, 0, a.module);
		a.nframe = 1;
	}
	for (uint32_t j = 0; j < l->nframe && !err; j++) {
		const struct heap_frame *f = &mh->frames[l->frame + j];
		const char *fn = mh->str.str[t->o.no_demangle ? f->func : f->dfunc];
		err = add_frame(t, fn, f->file ? mh->str.str[f->file] : NULL, f->line, a.module);
		a.nframe++;
	}
	if (err || heap_grow((void **)&t->addrs, &t->addrs_cap, t->naddrs + 1, sizeof(*t->addrs)) ||
	    track_map_put(&t->addr_ix, l->addr, (uint32_t)t->naddrs))
		return -ENOMEM;
	t->addrs[t->naddrs++] = a;
	return 0;
}

/* Symbolize @addrs (@n, none cached yet): a profile of one-address stacks
 * (leaves: the parser leaves them as they are) with the maps of @buf. */
static int symbolize(jma_track *t, const uint64_t *addrs, size_t n, const char *buf, size_t len)
{
	static const char tag[] = "\nMAPPED_LIBRARIES:\n";
	const char *maps = memmem(buf, len, tag, sizeof(tag) - 1);
	struct jma_heap_symopts so = { .sz = sizeof(so), .pid = t->o.pid, .log = t->o.log, .log_arg = t->o.log_arg };
	struct jma_heap_report_opts ro = { .sz = sizeof(ro), .format = JMA_HEAP_TEXT, .fold = t->o.fold,
					   .no_default_folds = t->o.no_default_folds };
	struct heap_view v = { 0 };
	char *alloc;
	jma_heap *mh = NULL;
	char *text = NULL, msg[512];
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	int err;

	if (!f)
		return -ENOMEM;
	fputs("heap_v2/1\n  t*: 0: 0 [0: 0]\n", f);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "@ 0x%llx\n  t*: 1: 1 [0: 0]\n", (unsigned long long)addrs[k]);
	if (maps)
		fwrite(maps, 1, len - (size_t)(maps - buf), f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	err = jma_heap_parse(text, tlen, "new addresses", &mh, msg, sizeof(msg));
	free(text);
	if (err)
		return track_fail(t, err, "%s", msg);
	if ((err = jma_heap_symbolize(mh, &so)) || (err = heap_view_build(mh, &ro, &v))) {
		track_fail(t, err, "naming sites: %s", jma_heap_errmsg(mh));
		jma_heap_free(mh);
		return err;
	}
	/* The view folds as analyze does: a one-address stack it folds is
	 * allocator code. */
	alloc = calloc(mh->nlocs ? mh->nlocs : 1, 1);
	if (!alloc)
		err = -ENOMEM;
	for (size_t k = 0; alloc && k < v.nstacks; k++)
		alloc[mh->pc_loc[mh->stacks[v.stacks[k].stack].pc]] = v.stacks[k].fold > 0;
	for (size_t i = 0; i < mh->nlocs && !err; i++)
		err = cache_loc(t, mh, &mh->locs[i], alloc[i]);
	if (err)
		track_fail(t, err, "naming sites: out of memory");
	free(alloc);
	heap_view_free(&v);
	jma_heap_free(mh);
	return err;
}

/* Site @si's frames from the cache: after the rootmost allocator address. */
static int name_site(jma_track *t, size_t si, const jma_heap *h, const struct heap_stack *s)
{
	const char **fr = NULL;
	uint32_t fold = 0;
	size_t n = 0, cap = 0;
	int32_t module = -1;
	int err = 0;

	for (uint32_t i = s->npc; i-- > 0;) {
		long a = track_map_get(&t->addr_ix, h->pcs[s->pc + i]);
		if (a >= 0 && t->addrs[a].alloc) {
			fold = i + 1;
			break;
		}
	}
	for (uint32_t i = fold; i < s->npc && !err; i++) {
		long a = track_map_get(&t->addr_ix, h->pcs[s->pc + i]);
		const struct track_addr *ad;

		if (a < 0)
			continue;
		ad = &t->addrs[a];
		if (!n)
			module = ad->module;
		err = heap_grow((void **)&fr, &cap, n + ad->nframe, sizeof(*fr));
		for (uint32_t j = 0; j < ad->nframe && !err; j++)
			fr[n++] = t->afr[ad->frame + j];
	}
	if (!err && !n) {
		static const char *const unknown[] = { "(allocator)" };
		err = track_site_name(t, si, unknown, 1, NULL);
	} else if (!err) {
		err = track_site_name(t, si, fr, n, module >= 0 ? t->mods[module] : NULL);
	}
	free(fr);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int track_name_sites(jma_track *t, const struct jma_heap *h, const char *buf, size_t len,
		     const size_t *which, const size_t *site, size_t n)
{
	uint64_t *todo = NULL;
	size_t ntodo = 0, cap = 0, u = 0;
	int err = 0;

	for (size_t k = 0; k < n && !err; k++) {
		const struct heap_stack *s = &h->stacks[which[k]];
		for (uint32_t i = 0; i < s->npc && !err; i++) {
			uint64_t a = h->pcs[s->pc + i];
			if (track_map_get(&t->addr_ix, a) >= 0)
				continue;
			if (!(err = heap_grow((void **)&todo, &cap, ntodo + 1, sizeof(*todo))))
				todo[ntodo++] = a;
		}
	}
	if (!err && ntodo) {
		qsort(todo, ntodo, sizeof(*todo), cmp_u64);
		for (size_t i = 0; i < ntodo; i++)
			if (!u || todo[u - 1] != todo[i])
				todo[u++] = todo[i];
		err = symbolize(t, todo, u, buf, len);
	}
	free(todo);
	if (err == -ENOMEM)
		track_fail(t, err, "naming sites: out of memory");
	for (size_t k = 0; k < n && !err; k++)
		if ((err = name_site(t, site[k], h, &h->stacks[which[k]])))
			track_fail(t, err, "naming sites: out of memory");
	return err;
}
