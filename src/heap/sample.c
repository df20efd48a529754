/* sample.c -- a parsed profile's values and addresses: un-sampling as
 * jeprof does, subtraction of a base, the index of distinct addresses and the
 * modules they fall in.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"

int heap_fail(jma_heap *h, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

const char *jma_heap_errmsg(const jma_heap *h)
{
	return h->err;
}

void jma_heap_free(jma_heap *h)
{
	if (!h)
		return;
	free(h->stacks);
	free(h->pcs);
	free(h->maps.v);
	free(h->locs);
	free(h->pc_loc);
	free(h->frames);
	free(h->modules);
	heap_strtab_free(&h->str);
	free(h);
}

void jma_heap_info(const jma_heap *h, struct jma_heap_info *info)
{
	info->version = h->version;
	info->period = h->period;
	info->nstacks = h->nstacks;
	info->nmaps = h->maps.n;
	info->has_alloc = h->has_alloc;
	info->is_diff = h->is_diff;
	info->symbolized = h->symbolized;
	info->samples = info->samples_alloc = 0;
	for (size_t i = 0; i < h->nstacks; i++) {
		info->samples += h->stacks[i].raw[HEAP_CUR_OBJS];
		info->samples_alloc += h->stacks[i].raw[HEAP_ACC_OBJS];
	}
}

/* jemalloc samples an allocation of size z with probability 1 - exp(-z/P):
 * a stack's n objects of mean size s/n stand for n/(1 - exp(-(s/n)/P)).
 * jemalloc 5.3 writes counts chosen so that this (jeprof's) formula gives its
 * own unbiased estimate, so the same formula serves every version. */
static void unsample_pair(uint64_t period, uint64_t n, uint64_t s, double *vn, double *vs)
{
	double scale = 1.0;

	/* With no bytes the ratio is 0 and the scale infinite: nothing to scale. */
	if (period && n && s)
		scale = 1.0 / -expm1(-(((double)s / (double)n) / (double)period));
	*vn = (double)n * scale;
	*vs = (double)s * scale;
}

void heap_unsample(jma_heap *h)
{
	for (size_t i = 0; i < h->nstacks; i++) {
		struct heap_stack *s = &h->stacks[i];
		unsample_pair(h->period, s->raw[HEAP_CUR_OBJS], s->raw[HEAP_CUR_BYTES],
			      &s->val[HEAP_CUR_OBJS], &s->val[HEAP_CUR_BYTES]);
		unsample_pair(h->period, s->raw[HEAP_ACC_OBJS], s->raw[HEAP_ACC_BYTES],
			      &s->val[HEAP_ACC_OBJS], &s->val[HEAP_ACC_BYTES]);
	}
}

/* Sort @n addresses with an LSD radix sort, 16 bits a pass (a profile has
 * ~10^5 of them: qsort's comparator calls were a fifth of analyze's time).
 * @tmp has room for @n. */
static void sort_u64(uint64_t *v, uint64_t *tmp, size_t n)
{
	static size_t count[1 << 16];

	for (int shift = 0; shift < 64; shift += 16) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(v[i] >> shift) & 0xffff]++;
		/* A digit every address shares needs no pass. */
		if (n && count[(v[0] >> shift) & 0xffff] == n)
			continue;
		for (size_t d = 0; d < 1 << 16; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i] >> shift) & 0xffff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
}

/* The index of @x in the sorted, distinct @v[0..n); it is there. */
static size_t find_u64(const uint64_t *v, size_t n, uint64_t x)
{
	size_t a = 0, b = n;

	while (b - a > 1) {
		size_t m = a + (b - a) / 2;
		if (v[m] <= x)
			a = m;
		else
			b = m;
	}
	return a;
}

int heap_index(jma_heap *h)
{
	uint64_t *addr = malloc((h->npcs ? h->npcs : 1) * sizeof(*addr));
	uint32_t *pc_loc = malloc((h->npcs ? h->npcs : 1) * sizeof(*pc_loc));
	uint64_t *tmp = malloc((h->npcs ? h->npcs : 1) * sizeof(*tmp));
	struct heap_loc *locs;
	size_t n = 0, need;

	if (!addr || !pc_loc || !tmp)
		goto oom;
	if (h->npcs)
		memcpy(addr, h->pcs, h->npcs * sizeof(*addr));
	sort_u64(addr, tmp, h->npcs);
	free(tmp);
	tmp = NULL;
	for (size_t i = 0; i < h->npcs; i++)
		if (!n || addr[n - 1] != addr[i])
			addr[n++] = addr[i];
	/* The distinct addresses are known: checked before their tables are made. */
	h->ndistinct = n;
	if (heap_mem_check(h, h->npcs, h->nstacks, n, &need)) {
		free(addr);
		free(pc_loc);
		return -E2BIG;
	}
	locs = calloc(n ? n : 1, sizeof(*locs));
	if (!locs)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		locs[i].addr = addr[i];
		locs[i].module = -1;
	}
	for (size_t i = 0; i < h->npcs; i++)
		pc_loc[i] = (uint32_t)find_u64(addr, n, h->pcs[i]);
	free(addr);
	free(h->locs);
	free(h->pc_loc);
	h->locs = locs;
	h->nlocs = n;
	h->pc_loc = pc_loc;
	h->nframes = 0;
	h->symbolized = 0;
	return heap_modules_build(h, &h->maps);
oom:
	free(addr);
	free(pc_loc);
	free(tmp);
	return -ENOMEM;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

int heap_modules_build(jma_heap *h, const struct heap_maps *m)
{
	struct heap_module *mods = calloc(m->n ? m->n : 1, sizeof(*mods));
	size_t n = 0;

	if (!mods)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct heap_map *p = &m->v[i];
		struct heap_module *last = n ? &mods[n - 1] : NULL;

		if (!p->path || h->str.str[p->path][0] != '/')
			continue;
		/* A file's segments (and the gaps ld.so leaves between them) follow each other. */
		if (last && last->path == p->path && p->start >= last->hi) {
			last->hi = p->end;
			continue;
		}
		mods[n].path = p->path;
		mods[n].lo = p->start;
		mods[n].hi = p->end;
		mods[n].offset = p->offset;
		mods[n].first_end = p->end;
		mods[n].inode = p->inode;
		mods[n].is_jemalloc = !strncmp(base_name(h->str.str[p->path]), "libjemalloc", 11);
		n++;
	}
	free(h->modules);
	h->modules = mods;
	h->nmodules = n;
	/* Locations follow their modules. */
	for (size_t i = 0, k = 0; i < h->nlocs; i++) {
		struct heap_loc *l = &h->locs[i];
		l->module = -1;
		l->alloc = 0;
		/* Both lists are sorted by address: one merge pass. */
		while (k < n && mods[k].hi <= l->addr)
			k++;
		if (k < n && mods[k].lo <= l->addr) {
			l->module = (int32_t)k;
			l->alloc = mods[k].is_jemalloc;
		}
	}
	return 0;
}

uint32_t heap_loc_hexname(jma_heap *h, const struct heap_loc *l)
{
	char buf[PATH_MAX + 64];

	if (l->module >= 0) {
		const struct heap_module *m = &h->modules[l->module];
		snprintf(buf, sizeof(buf), "%s+0x%llx", base_name(h->str.str[m->path]),
			 (unsigned long long)(l->addr - m->lo + m->offset));
	} else {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)l->addr);
	}
	return heap_str(&h->str, buf);
}

static int cmp_pcs(const uint64_t *p, uint32_t np, const uint64_t *q, uint32_t nq)
{
	for (uint32_t i = 0; i < np && i < nq; i++)
		if (p[i] != q[i])
			return p[i] < q[i] ? -1 : 1;
	return (np > nq) - (np < nq);
}

/* Stacks compare by their address lists. */
static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct heap_stack *x = a, *y = b;
	const jma_heap *h = arg;

	return cmp_pcs(&h->pcs[x->pc], x->npc, &h->pcs[y->pc], y->npc);
}

struct cmp_ctx {
	const jma_heap *a, *b;
	const struct heap_stack *key;
};

/* The base stack ctx->key (addresses in ctx->b) against a stack of ctx->a. */
static int cmp_key(const void *key, const void *elem)
{
	const struct cmp_ctx *c = key;
	const struct heap_stack *y = elem;

	return cmp_pcs(&c->b->pcs[c->key->pc], c->key->npc, &c->a->pcs[y->pc], y->npc);
}

int jma_heap_subtract(jma_heap *h, const jma_heap *base)
{
	size_t nown = h->nstacks;
	struct cmp_ctx ctx = { .a = h, .b = base };

	struct heap_stack *ns;
	uint64_t *np;
	int err;

	/* Room for every base stack up front: those not in @h are appended. */
	ns = realloc(h->stacks, (h->nstacks + base->nstacks + 1) * sizeof(*ns));
	if (ns)
		h->stacks = ns;
	np = realloc(h->pcs, (h->npcs + base->npcs + 1) * sizeof(*np));
	if (np)
		h->pcs = np;
	if (!ns || !np)
		return heap_fail(h, -ENOMEM, "out of memory");
	qsort_r(h->stacks, h->nstacks, sizeof(*h->stacks), cmp_stack, h);
	for (size_t i = 0; i < base->nstacks; i++) {
		const struct heap_stack *b = &base->stacks[i];
		struct heap_stack *hit;

		ctx.key = b;
		hit = bsearch(&ctx, h->stacks, nown, sizeof(*h->stacks), cmp_key);
		if (!hit) {
			hit = &h->stacks[h->nstacks++];
			memset(hit, 0, sizeof(*hit));
			hit->pc = h->npcs;
			hit->npc = b->npc;
			if (b->npc)
				memcpy(&h->pcs[h->npcs], &base->pcs[b->pc], b->npc * sizeof(*h->pcs));
			h->npcs += b->npc;
		}
		for (int k = 0; k < HEAP_NVAL; k++)
			hit->val[k] -= b->val[k];
	}
	h->stacks_cap = h->nstacks;
	h->pcs_cap = h->npcs;
	h->is_diff = 1;
	h->has_alloc = h->has_alloc && base->has_alloc;
	h->mem_max += base->mem_max;
	err = heap_index(h);
	if (err == -E2BIG)
		return heap_fail(h, err, "the difference needs more memory than its profiles allow");
	if (err)
		return heap_fail(h, -ENOMEM, "out of memory");
	return 0;
}
