/* contents.c -- the blocks' bytes, read run by run while the threads run.
 *
 * Neighbouring small blocks of a run (index.c: a slab's regions, and the
 * slabs of the class that follow) are read together, up to WINDOW bytes a
 * read, so a million small blocks cost a few thousand reads; a large block
 * alone, in pieces of CHUNK bytes, so that a multi-GiB block needs no
 * multi-GiB buffer.  A piece of an anonymous mapping none of whose pages
 * the target has (never written: /proc/PID/pagemap) holds only zeros and is
 * not read: what a pass reads is bounded by the memory the target really
 * has, whatever size its metadata claims (a fake 64 GiB extent cost 12-20 s
 * of reading, issue 41).  The threads run meanwhile: a block freed since
 * holds whatever it holds (the counts come from the metadata, read stopped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "census/census.h"

#define CHUNK	(1024 * 1024)
#define WINDOW	(256 * 1024)
#define PAGEMAP_MIN	(64 * 1024)	/* pieces this large are checked first */
#define BUDGET_SLACK	(64ULL << 20)	/* read beyond the target's resident memory */

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
	uint64_t budget, done;	/* bytes this pass may read (0: no bound), has read */
	const char *phase;
};

/* Read @n bytes at @addr into the buffer, within the pass's budget. */
static int take(struct pass *p, uint64_t addr, uint64_t n)
{
	if (p->budget && n > p->budget - p->done)
		return jma_fail(p->c->s, JMA_ERR_TARGET, -E2BIG, "census: the blocks claim more memory "
				"than process %d has: reading them (%s) went past its resident and "
				"swapped memory (%.1f MiB) and %d MiB more; not read further",
				(int)p->c->s->pid, p->phase, (double)(p->budget - BUDGET_SLACK) / 1048576,
				(int)(BUDGET_SLACK >> 20));
	p->done += n;
	return cen_read(p->c, addr, p->buf, n) ? 1 : 0;
}

/* May [addr, addr + len) hold anything but zeros?  No only when it lies in
 * an anonymous mapping and pagemap says none of its pages is present or
 * swapped out. */
static int maybe_data(struct pass *p, uint64_t addr, uint64_t len)
{
	uint64_t ent[CHUNK / 4096], first = addr / (uint64_t)p->host_page;
	uint64_t last = (addr + len - 1) / (uint64_t)p->host_page, n = last - first + 1;
	const struct att_map *m = att_maps_find(p->c->maps, p->c->nmaps, addr);

	if (p->pagemap < 0 || !m || (m->path && strcmp(m->path, "[heap]")) || n > sizeof(ent) / 8 ||
	    pread(p->pagemap, ent, n * 8, (off_t)(first * 8)) != (ssize_t)(n * 8))
		return 1;
	for (uint64_t i = 0; i < n; i++)
		if (ent[i] >> 62)	/* bit 63 present, 62 swapped */
			return 1;
	return 0;
}

/* Block @b (@addr, @size), read alone, in pieces. */
static int one_block(struct pass *p, size_t b, uint64_t addr, uint64_t size)
{
	uint64_t len = p->max && size > p->max ? p->max : size;
	int err = 0;

	for (uint64_t off = 0; off < len && !err; off += CHUNK) {
		uint64_t n = len - off < CHUNK ? len - off : CHUNK;
		if (n >= PAGEMAP_MIN && !maybe_data(p, addr + off, n)) {
			/* Zeros: nothing to see but that the block starts with one. */
			if (!off)
				err = p->fn(p->c, b, p->buf, 0, 0, p->arg);
			continue;
		}
		if ((err = take(p, addr + off, n)) < 0)
			break;
		if (err)
			break;	/* unreadable (unmapped since): skipped */
		err = p->fn(p->c, b, p->buf, n / 8, off, p->arg);
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
	size_t nb = 0, id = b;
	int err = 0;

	/* A large block alone (only @max bytes of it, or its pages with data);
	 * slabs' regions together. */
	if (r->size > c->sizes[c->g.nbins - 1] || r->size > WINDOW / 2) {
		*next_b = b + 1;
		if (p->sel)
			cen_bits_clear(p->sel, b);
		return one_block(p, b, lo, r->size);
	}
	/* Positions from k on with a block, while they fit the window. */
	for (uint64_t q = k; q < r->npos; q++) {
		if (!(ix->ibits[r->w0 + q / 64] >> (q % 64) & 1))
			continue;
		if (r->base + (q + 1) * r->size - lo > WINDOW)
			break;
		if (selected(p, id)) {
			p->pos[nb] = (uint32_t)q;
			p->ids[nb++] = (uint32_t)id;
			hi = r->base + (q + 1) * r->size;
		}
		id++;
	}
	*next_b = id;
	for (size_t i = 0; i < nb; i++)
		if (p->sel)
			cen_bits_clear(p->sel, p->ids[i]);
	if ((err = take(p, lo, hi - lo)) < 0)
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
		return jma_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
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
			err = jma_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out reading "
				       "blocks (%s: %zu of %zu blocks)", phase, b, ix->nblocks);
			break;
		}
		cen_progress(c, phase, b, ix->nblocks);
		r = cen_block_pos(ix, b, &k);
		err = window(&p, r, b, k, &next);
		b = sel ? cen_bits_next(sel, next) : next;
	}
	cen_progress(c, phase, ix->nblocks, ix->nblocks);
	if (p.pagemap >= 0)
		close(p.pagemap);
	free(p.buf);
	free(p.pos);
	free(p.ids);
	return err;
}
