/* contents.c -- the blocks' bytes, read run by run while the threads run.
 *
 * Neighbouring small blocks of a run (index.c: a slab's regions, and the
 * slabs of the class that follow) are read together, up to WINDOW bytes a
 * read, so a million small blocks cost a few thousand reads; a large block
 * alone, in pieces of CHUNK bytes, so that a multi-GiB block needs no
 * multi-GiB buffer.  Pages of an anonymous mapping that the target has not
 * (never written: neither present nor swapped out, says /proc/PID/pagemap)
 * hold only zeros and are not read, and what a pass reads of the others is
 * bounded by the memory the target has (its resident and swapped memory,
 * and 64 MiB more), whatever size its metadata claims: a fake extent of 64
 * GiB cost 12-20 s of reading (issue 41); now a refusal in a fraction of a
 * second.  The threads run meanwhile: a block freed since
 * holds whatever it holds (the counts come from the metadata, read stopped).
 *
 * Memory that cannot be read -- a page the program made PROT_NONE inside a
 * block (an extent may span several mappings: walk.c), memory a core does
 * not hold -- is skipped, no read tried where no mapping lets one, the rest
 * of its block read a page at a time; the blocks it touched are counted
 * (c->unread_blocks: pointers there were not seen).  A window of a slab
 * that fails in one read is read block by block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "census/census.h"

#define CHUNK	(1024 * 1024)
#define WINDOW	(256 * 1024)
#define GAP	4096	/* bytes between blocks wanted that a read spans */
#define BUDGET_SLACK	(64ULL << 20)	/* read beyond the target's resident memory */
#define PFN_MASK	((1ULL << 55) - 1)

struct pass {
	struct cen *c;
	const struct cen_index *ix;
	struct cen_bits *sel;
	uint64_t max;
	cen_block_fn fn;
	void *arg;
	uint64_t *buf;
	uint32_t *pos, *ids;	/* a window's blocks: their positions and numbers */
	int pagemap;		/* /proc/PID/pagemap, -1 when not open */
	long host_page;
	uint64_t zero_pfn, hzero_pfn;	/* the zero page's frame, the huge zero page's first (0: unknown) */
	uint64_t budget, done;	/* bytes this pass may read (0: no bound), has read */
	const char *phase;
	int missed;		/* the block being read had bytes that could not be */
	uint64_t unread_blocks, unread_bytes;	/* ... how many did, this pass */
};

/* Read @n bytes at @addr into the buffer, @count bytes (of the blocks
 * wanted there, in pages with data) against the pass's budget: 0 done, 1
 * unreadable, -E2BIG. */
static int take(struct pass *p, uint64_t addr, uint64_t n, uint64_t count)
{
	if (p->budget && count > p->budget - p->done)
		return sess_fail(p->c->s, JMA_ERR_TARGET, -E2BIG, "census: the blocks claim more memory "
				"than process %d has: reading them (%s) went past its resident and "
				"swapped memory (%.1f MiB) and %d MiB more; not read further",
				(int)p->c->s->pid, p->phase, (double)(p->budget - BUDGET_SLACK) / 1048576,
				(int)(BUDGET_SLACK >> 20));
	p->done += count;
	return cen_read(p->c, addr, p->buf, n) ? 1 : 0;
}

/* Which pages of [addr, addr + len) may hold anything but zeros: has[i]
 * for page i from addr's; 0 only when the range is in an anonymous mapping
 * and pagemap says the page is neither present nor swapped out (never
 * written).  The number of pages. */
static uint64_t pages_with_data(struct pass *p, uint64_t addr, uint64_t len, uint8_t *has)
{
	uint64_t ent[CHUNK / 4096 + 1], ps = (uint64_t)p->host_page, first = addr / ps;
	uint64_t n = (addr + len - 1) / ps - first + 1;
	const struct att_map *m = att_maps_find(p->c->maps, p->c->nmaps, addr);
	int known = p->pagemap >= 0 && m && (!m->path || !strcmp(m->path, "[heap]")) &&
		    n <= sizeof(ent) / 8 && pread(p->pagemap, ent, n * 8, (off_t)(first * 8)) == (ssize_t)(n * 8);

	for (uint64_t i = 0; i < n && i <= CHUNK / 4096; i++) {
		uint64_t pfn = ent[i] & PFN_MASK;
		/* Bit 63 present, 62 swapped; a page read but never written maps
		 * the zero page (not the target's memory: not in its RSS). */
		has[i] = !known || ((ent[i] >> 62) &&
				    !((ent[i] >> 63) && pfn && (pfn == p->zero_pfn ||
						       (p->hzero_pfn && pfn - p->hzero_pfn < 512))));
	}
	return n;
}

/* The frame of the page at @a in this process (0: unknown). */
static uint64_t own_pfn(const void *a, long ps)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (pread(fd, &e, 8, (off_t)((uintptr_t)a / (uintptr_t)ps * 8)) != 8)
			e = 0;
		close(fd);
	}
	return e >> 63 ? e & PFN_MASK : 0;
}

/* Learn the zero page's frame and the huge zero page's from pages of our
 * own read and never written (frames are shown to root only: else 0). */
static void learn_zero(struct pass *p)
{
	const size_t huge = 2 << 20;
	char *m = mmap(NULL, 2 * huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile const char *a, *h;

	if (m == MAP_FAILED)
		return;
	h = (const char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
	a = h == m ? m + huge : m;
	madvise((void *)(uintptr_t)a, (size_t)p->host_page, MADV_NOHUGEPAGE);
	madvise((void *)(uintptr_t)h, huge, MADV_HUGEPAGE);
	(void)*a;
	(void)*h;
	p->zero_pfn = own_pfn((const void *)a, p->host_page);
	p->hzero_pfn = own_pfn((const void *)h, p->host_page);
	if (p->hzero_pfn == p->zero_pfn)
		p->hzero_pfn = 0;	/* no huge zero page here */
	munmap(m, 2 * huge);
}

/* [at, end) of block @b (at @addr), one read of which failed: what no
 * mapping holds (a core's holes) or none lets be read (PROT_NONE: a page
 * the program protected) skipped without a read, the rest read a page at a
 * time; the block noted as not read whole. */
static int by_page(struct pass *p, size_t b, uint64_t addr, uint64_t at, uint64_t end)
{
	const struct cen *c = p->c;
	int err = 0, r;

	while (at < end && !err) {
		size_t i = cen_maps_after(c, at);
		uint64_t next = (at | (CEN_PAGE - 1)) + 1, len;

		if (i == c->nmaps || c->maps[i].start >= end) {
			p->missed = 1;
			break;
		}
		if (c->maps[i].start > at || c->maps[i].perms[0] != 'r') {
			p->missed = 1;
			at = c->maps[i].start > at ? c->maps[i].start : c->maps[i].end;
			continue;
		}
		len = (next < end ? next : end) - at;
		if ((r = take(p, at, len, len)) < 0)
			return r;
		if (r)
			p->missed = 1;
		else
			err = p->fn(p->c, b, p->buf, len / 8, at - addr, p->arg);
		at += len;
	}
	return err;
}

/* The piece [off, off + n) of block @b at @addr: its pages with data, a
 * read each run of them (the rest is zeros: no pointer, no type). */
static int piece(struct pass *p, size_t b, uint64_t addr, uint64_t off, uint64_t n)
{
	uint8_t has[CHUNK / 4096 + 1] = { 0 };
	uint64_t ps = (uint64_t)p->host_page, at = addr + off, np;
	int err = 0, r;

	if (n < ps || p->pagemap < 0 || ps < 4096) {
		if ((r = take(p, at, n, n)))
			return r < 0 ? r : by_page(p, b, addr, at, at + n);
		return p->fn(p->c, b, p->buf, n / 8, off, p->arg);
	}
	np = pages_with_data(p, at, n, has);
	/* The block's first word, even when it is a zero. */
	if (!off && !has[0])
		err = p->fn(p->c, b, p->buf, 0, 0, p->arg);
	for (uint64_t i = 0; i < np && !err;) {
		uint64_t j = i, lo, hi;
		if (!has[i]) {
			i++;
			continue;
		}
		while (j < np && has[j])
			j++;
		lo = (at / ps + i) * ps > at ? (at / ps + i) * ps : at;
		hi = (at / ps + j) * ps < at + n ? (at / ps + j) * ps : at + n;
		if ((r = take(p, lo, hi - lo, hi - lo)) < 0)
			return r;
		err = r ? by_page(p, b, addr, lo, hi) :
		      p->fn(p->c, b, p->buf, (hi - lo) / 8, off + (lo - at), p->arg);
		i = j;
	}
	return err;
}

/* Block @b (@addr, @size), read alone, in pieces. */
static int one_block(struct pass *p, size_t b, uint64_t addr, uint64_t size)
{
	uint64_t len = p->max && size > p->max ? p->max : size;
	int err = 0;

	p->missed = 0;
	for (uint64_t off = 0; off < len && !err; off += CHUNK)
		err = piece(p, b, addr, off, len - off < CHUNK ? len - off : CHUNK);
	if (p->missed) {
		p->unread_blocks++;
		p->unread_bytes += size;
	}
	return err;
}

static int selected(const struct pass *p, size_t b)
{
	return !p->sel || cen_bits_test(p->sel, b);
}

/* From block @b (position @k of run @r, selected), the selected blocks of
 * the run within WINDOW bytes, read at once; the number of the first block
 * not looked at into *@next_b.  A run's blocks are numbered in order. */
static int window(struct pass *p, const struct cen_run *r, size_t b, uint64_t k, size_t *next_b)
{
	const struct cen_index *ix = p->ix;
	const struct cen *c = p->c;
	uint64_t lo = r->base + k * r->size, hi = lo, len = p->max && r->size > p->max ? p->max : r->size;
	uint64_t count;
	uint8_t has[CHUNK / 4096 + 1] = { 0 };
	size_t nb = 0, id = b;
	int err = 0;

	/* A large block alone (only @max bytes of it, or its pages with data),
	 * and one with slack (4.x: all its span); slabs' regions together --
	 * but for a page or more each, when only @max bytes of each are
	 * wanted: a 64 KiB-page build's 112 KiB regions are slabs' (types read
	 * 8 bytes of each, not the 250 MiB the fixture's span holds). */
	if (r->size > c->sizes[c->g.nbins - 1] || r->size > WINDOW / 2 || r->slack ||
	    (p->max && r->size > p->max && r->size >= 4096)) {
		*next_b = b + 1;
		if (p->sel)
			cen_bits_clear(p->sel, b);
		return one_block(p, b, lo, r->size + r->slack);
	}
	/* Positions from k on with a block, while they fit the window and the
	 * selected ones are no more than GAP bytes apart (each read is of
	 * blocks wanted, not of a slab for one of them).  The look stops GAP
	 * bytes past the last one wanted: a chain followed a block at a time
	 * (leaks.c) would else look at a window's every position for each
	 * block (5461 of 48 bytes: 5.6M chained blocks took 164 s, not 2). */
	for (uint64_t q = k; q < r->npos; q++) {
		uint64_t at = r->base + q * r->size;

		if (at + r->size - lo > WINDOW || (nb && at - hi > GAP))
			break;
		if (!(ix->ibits[r->w0 + q / 64] >> (q % 64) & 1))
			continue;
		if (selected(p, id)) {
			p->pos[nb] = (uint32_t)q;
			p->ids[nb++] = (uint32_t)id;
			hi = at + r->size;
		}
		id++;
	}
	*next_b = id;
	for (size_t i = 0; i < nb; i++)
		if (p->sel)
			cen_bits_clear(p->sel, p->ids[i]);
	/* The blocks' bytes count against the budget (each block is read once
	 * a pass), unless none of their pages has data (regions allocated and
	 * never written): then each is a zero word, not read. */
	count = nb * r->size;
	if (hi - lo >= (uint64_t)p->host_page && p->pagemap >= 0 && p->host_page >= 4096) {
		uint64_t np = pages_with_data(p, lo, hi - lo, has), with = 0;
		for (uint64_t i = 0; i < np; i++)
			with += has[i];
		if (!with) {
			for (size_t i = 0; i < nb && !err; i++)
				err = p->fn(p->c, p->ids[i], p->buf, 0, 0, p->arg);
			return err;
		}
	}
	if ((err = take(p, lo, hi - lo, count)) < 0)
		return err;
	if (err) {
		/* A gap between two slabs of the run that is not mapped: each alone. */
		err = 0;
		for (size_t i = 0; i < nb && !err; i++)
			err = one_block(p, p->ids[i], r->base + p->pos[i] * r->size, r->size);
		return err;
	}
	for (size_t i = 0; i < nb && !err; i++)
		err = p->fn(p->c, p->ids[i], p->buf + (p->pos[i] - k) * r->size / 8, len / 8, 0, p->arg);
	return err;
}

int cen_blocks_read(struct cen *c, const struct cen_index *ix, struct cen_bits *sel, uint64_t max,
		    const char *phase, cen_block_fn fn, void *arg)
{
	struct pass p = { .c = c, .ix = ix, .sel = sel, .max = max, .fn = fn, .arg = arg,
			  .buf = malloc(CHUNK), .pos = malloc(WINDOW / 2), .ids = malloc(WINDOW / 2),
			  .pagemap = -1, .host_page = sysconf(_SC_PAGESIZE), .phase = phase };
	size_t b = sel ? cen_bits_next(sel, 0) : 0;
	int err = 0;

	if (!p.buf || !p.pos || !p.ids) {
		free(p.buf);
		free(p.pos);
		free(p.ids);
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	/* Each block is read once a pass: more than the target has is a lie
	 * (a fake extent of 64 GiB cost 12-20 s of reading, issue 41). */
	p.budget = cen_resident(c);
	if (p.budget)
		p.budget += BUDGET_SLACK;
	if (!c->s->offline && p.host_page > 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)c->s->pid);
		p.pagemap = open(path, O_RDONLY | O_CLOEXEC);
		if (p.pagemap >= 0)
			learn_zero(&p);
	}
	for (;;) {
		const struct cen_run *r;
		size_t next;
		uint64_t k;

		/* With a set: again from the start while it holds blocks. */
		if (b >= ix->nblocks && sel)
			b = cen_bits_next(sel, 0);
		if (b >= ix->nblocks || err)
			break;
		if (cen_timed_out(c)) {
			err = sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out reading "
				       "blocks (%s: %zu of %zu blocks)", phase, b, ix->nblocks);
			break;
		}
		cen_progress(c, phase, b, ix->nblocks);
		r = cen_block_pos(ix, b, &k);
		err = window(&p, r, b, k, &next);
		b = sel ? cen_bits_next(sel, next) : next;
	}
	cen_progress(c, phase, ix->nblocks, ix->nblocks);
	/* Passes read other blocks (all of them, or what pointers lead to):
	 * the most one missed, not their sum. */
	if (p.unread_blocks > c->unread_blocks) {
		c->unread_blocks = p.unread_blocks;
		c->unread_bytes = p.unread_bytes;
	}
	if (p.pagemap >= 0)
		close(p.pagemap);
	free(p.buf);
	free(p.pos);
	free(p.ids);
	return err;
}
