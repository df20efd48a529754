/* mem.c -- reading the target for the census: bounds, a page cache for metadata, time and progress.
 *
 * Small reads (an edata, a slab's bitmap, a bin, a tsd field) go through a
 * direct-mapped cache of CACHE_SLOTS 4 KiB granules (8 MiB; a larger page is
 * read a granule at a time): edata sit 32 to a granule (3 with 64 KiB
 * pages, their bitmaps longer), so the walk costs one system call per
 * granule instead of one per extent.  Reads larger
 * than a page (leaves, the root, slab contents) go straight to the backend.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "census/census.h"

#define CACHE_SLOTS	2048
#define CACHE_MAXLEN	1024	/* a 64 KiB-page slab's bitmap */

int cen_grow(void *pp, size_t *cap, size_t need, size_t each)
{
	void **p = pp, *m;
	size_t cap2;

	if (need <= *cap)
		return 0;
	cap2 = *cap ? *cap * 2 : 4096;
	while (cap2 < need)
		cap2 *= 2;
	m = realloc(*p, cap2 * each);
	if (!m)
		return -ENOMEM;
	*p = m;
	*cap = cap2;
	return 0;
}

size_t cen_fold(void *v, size_t n, size_t each, int (*cmp)(const void *, const void *),
		void (*add)(void *into, const void *from))
{
	char *p = v;
	size_t k = 0;

	if (n)	/* (qsort of nothing: no array) */
		qsort(v, n, each, cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp(p + (k - 1) * each, p + i * each))
			add(p + (k - 1) * each, p + i * each);
		else if (k++ != i)
			memcpy(p + (k - 1) * each, p + i * each, each);
	}
	return k;
}

int cen_fold_room(void *pp, size_t *n, size_t *cap, size_t each,
		  int (*cmp)(const void *, const void *), void (*add)(void *into, const void *from))
{
	void **p = pp, *m;
	size_t cap2 = *cap ? *cap * 2 : 256;

	if (*n < *cap)
		return 0;
	if (*cap >= CEN_FOLD_MANY) {
		*n = cen_fold(*p, *n, each, cmp, add);
		if (*n <= *cap / 2)
			return 0;
	}
	if (!(m = realloc(*p, cap2 * each)))
		return -ENOMEM;
	*p = m;
	*cap = cap2;
	return 0;
}

int cen_ptr_ok(uint64_t p)
{
	return p >= CEN_PAGE && p < CEN_VADDR_MAX;
}

void cen_cache_flush(struct cen *c)
{
	if (c->ctag)
		memset(c->ctag, 0, CACHE_SLOTS * sizeof(*c->ctag));
}

int cen_cache_prepare(struct cen *c)
{
	if (c->ctag)
		return 0;
	c->ctag = calloc(CACHE_SLOTS, sizeof(*c->ctag));
	c->cpage = calloc(CACHE_SLOTS, CEN_PAGE);
	if (!c->ctag || !c->cpage) {
		cen_cache_free(c);
		return -ENOMEM;
	}
	/* calloc's fresh pages are mapped lazily: touch them now. */
	cen_touch(c->cpage, CACHE_SLOTS * CEN_PAGE);
	return 0;
}

void cen_touch(void *p, size_t len)
{
	volatile unsigned char *b = p;

	/* A write each page: the compiler may turn a memset of zeros after
	 * an allocation into calloc, which maps nothing. */
	for (size_t i = 0; i < len; i += CEN_PAGE)
		b[i] = b[i];
	if (len)
		b[len - 1] = b[len - 1];
}

void cen_cache_free(struct cen *c)
{
	free(c->ctag);
	free(c->cpage);
	c->ctag = NULL;
	c->cpage = NULL;
}

/* The snapshot's range holding [addr, addr + len), or NULL. */
static const struct cen_snap_range *snap_find(const struct cen_snap *sn, uint64_t addr, size_t len)
{
	size_t lo = 0, hi = sn->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sn->r[mid].at <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - sn->r[lo - 1].at + len > sn->r[lo - 1].len)
		return NULL;
	return &sn->r[lo - 1];
}

int cen_snap_prepare(struct cen *c, uint64_t bytes, size_t nranges)
{
	struct cen_snap *sn = &c->snap;

	cen_snap_free(c);
	if (!(sn->data = malloc(bytes ? bytes : 1)) || !(sn->r = malloc(nranges * sizeof(*sn->r)))) {
		cen_snap_free(c);
		return -ENOMEM;
	}
	cen_touch(sn->data, bytes);
	cen_touch(sn->r, nranges * sizeof(*sn->r));
	sn->max = bytes;
	sn->cap = nranges;
	return 0;
}

int cen_snap_add(struct cen *c, uint64_t at, const void *src, uint64_t len)
{
	struct cen_snap *sn = &c->snap;
	int err;

	if (len > sn->max - sn->used || sn->n == sn->cap)
		return -E2BIG;
	if (src)
		memcpy(sn->data + sn->used, src, len);
	else if ((err = sess_read(c->s, at, sn->data + sn->used, len)))
		return err == -ENOMEM ? err : 0;	/* unreadable: not in it (read live, later) */
	sn->r[sn->n++] = (struct cen_snap_range){ at, len, sn->used };
	sn->used += len;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cen_snap_range *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

void cen_snap_seal(struct cen *c)
{
	if (!c->snap.n)
		return;
	qsort(c->snap.r, c->snap.n, sizeof(*c->snap.r), cmp_range);
	c->snap.sealed = 1;
}

void cen_snap_free(struct cen *c)
{
	free(c->snap.r);
	free(c->snap.data);
	memset(&c->snap, 0, sizeof(c->snap));
}

int cen_read(struct cen *c, uint64_t addr, void *buf, size_t len)
{
	uint64_t page = addr & ~(CEN_PAGE - 1);
	const struct cen_snap_range *sr;
	size_t slot;
	int err;

	if (!cen_ptr_ok(addr) || len > CEN_VADDR_MAX - addr)
		return -EFAULT;
	c->reads++;
	if (c->snap.sealed && (sr = snap_find(&c->snap, addr, len))) {
		memcpy(buf, c->snap.data + sr->off + (addr - sr->at), len);
		return 0;
	}
	if (len > CACHE_MAXLEN || (addr + len - 1) / CEN_PAGE != addr / CEN_PAGE)
		return sess_read(c->s, addr, buf, len);
	if (!c->ctag && cen_cache_prepare(c))
		return sess_read(c->s, addr, buf, len);
	slot = (size_t)(page / CEN_PAGE) % CACHE_SLOTS;
	/* Tag = page | 1: page 0 is never read, so 0 means empty. */
	if (c->ctag[slot] != (page | 1)) {
		c->misses++;
		err = sess_read(c->s, page, c->cpage + slot * CEN_PAGE, CEN_PAGE);
		if (err)
			return sess_read(c->s, addr, buf, len);	/* a page partly mapped */
		c->ctag[slot] = page | 1;
	}
	memcpy(buf, c->cpage + slot * CEN_PAGE + (addr - page), len);
	return 0;
}

uint64_t cen_resident(struct cen *c)
{
	char path[64], *text = NULL, *l;
	size_t len;
	uint64_t kb = 0;

	if (c->s->offline)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)c->s->pid);
	if (att_proc_read(path, &text, &len))
		return 0;
	for (l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long v;
		if (sscanf(l, "VmRSS: %llu kB", &v) == 1 || sscanf(l, "VmSwap: %llu kB", &v) == 1)
			kb += v;
	}
	free(text);
	return kb * 1024;
}

int cen_timed_out(struct cen *c)
{
	return c->deadline_ns && att_now_ns() > c->deadline_ns;
}

int cen_half_timed_out(struct cen *c)
{
	return !c->deadline_ns || att_now_ns() > c->start_ns + (c->deadline_ns - c->start_ns) / 2;
}

void cen_progress(struct cen *c, const char *phase, uint64_t done, uint64_t total)
{
	int64_t now;

	if (!c->o || !c->o->progress)
		return;
	now = att_now_ns();
	if (done < total && now - c->last_progress_ns < 200000000)
		return;
	c->last_progress_ns = now;
	c->o->progress(c->o->progress_arg, phase, done, total);
}

int cen_je_data(const struct cen *c, size_t i, int writable)
{
	const struct att_map *m = &c->maps[i], *prev = i ? &c->maps[i - 1] : NULL;
	const char *path = m->path;

	if (m->perms[0] != 'r' || m->perms[2] == 'x' || (writable && m->perms[1] != 'w'))
		return 0;
	/* The .bss past the file's last page: anonymous (a core's list names
	 * it ""), right after it. */
	if ((!path || !*path) && prev && prev->end == m->start && prev->path && prev->perms[1] == 'w')
		path = prev->path;
	return path && c->je_path && !strcmp(path, c->je_path);
}
