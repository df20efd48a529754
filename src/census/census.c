/* census.c -- jma_census_run: the phases in order, and the result.
 *
 *   find()      1. layout.c, findmap.c   what this jemalloc is, where its map is
 *                                        (threads running)
 *   stopped()   2. target.c              every thread stopped, none inside jemalloc
 *               3. tcache.c, walk.c      thread caches, then the map: the metadata
 *               4. target.c              threads go on (the stop is only 2-3)
 *   counted()   5. walk.c, index.c       the blocks counted, and kept (types, leaks, lists)
 *   contents()  6. types.c, leaks.c      block contents, read live (leaks.c may stop the
 *                                        threads once more: what looks leaked, checked)
 *
 * Each phase's comment names the fields of struct cen it writes; a later
 * phase only reads them.
 *
 * jemalloc 3.6 and 4.5 go the same way with chunks.c's walk of chunks and
 * runs (walk.c hands it over) and its own table by size (cen_chunks_result).
 *
 * Memory: 112 bytes per extent copied in the stop (freed once counted),
 * about a bit per live block kept (index.c), 8 per thread-cached block, 6
 * MiB for a root and a leaf, 8 MiB of metadata page cache; --leaks adds
 * about 5 bits per block, --by root 8 bytes (the graph itself on disk).  A
 * list (LIST) keeps per block its type (4 bytes), class (2 bits) and with
 * ROOTS its owner (4 bytes) and hands them to the result with the index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sized.h"
#include "attach/clock.h"
#include "census/census.h"

/* The result's tables from the run's. */
static int finish(struct cen *c)
{
	struct jma_census *o = c->out;
	uint32_t *where;
	size_t n = 0;

	if (!c->ch) {	/* 3.x/4.x: cen_chunks_result's, by usable size */
		o->sizes = calloc(CEN_NSIZES_MAX, sizeof(*o->sizes));
		if (!o->sizes)
			return -ENOMEM;
		for (unsigned i = 0; i < c->g.nsizes; i++)
			if (c->bysz[i].blocks) {
				o->sizes[n] = c->bysz[i];
				o->sizes[n++].size = c->sizes[i];
			}
		o->nsizes = n;
	}
	if (cen_types_finish(c, &where))
		return -ENOMEM;
	if (where) {
		/* Type indexes given out before the sort. */
		for (size_t b = 0; c->btype && b < c->ix.nblocks; b++)
			c->btype[b] = where[c->btype[b]];
		for (unsigned i = 0; i < o->nexamples; i++)
			o->examples[i].type = where[o->examples[i].type];
		for (size_t i = 0; i < o->nholders; i++)
			o->holders[i].type = where[o->holders[i].type];
		for (size_t i = 0; i < o->nroots; i++)
			o->roots[i].type = where[o->roots[i].type];
		free(where);
	}
	if (c->o && (c->o->flags & JMA_CENSUS_LIST))
		return cen_blocks_keep(c);
	return 0;
}

static void cen_free(struct cen *c)
{
	cen_cache_free(c);
	if (c->s->offline)
		att_maps_free(c->maps, c->nmaps);
	free(c->je_path_buf);
	free(c->th);
	free(c->cached);
	free(c->stacks);
	free(c->stack_ids);
	free(c->raw);
	free(c->bits);
	free(c->wbuf);
	free(c->leaves);
	cen_index_free(&c->ix);
	cen_snap_free(c);
	cen_types_free(c);
	free(c->btype);
	free(c->cls);
	cen_chunks_free(c);
	free(c->owner);
}

/* This thread's CPU time: the stop's wall time on a loaded machine says
 * little about what the census itself spent. */
static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int get_maps(struct cen *c)
{
	const struct jma_backend_ops *ops = c->s->be->ops;
	char *text = NULL;
	size_t len;
	int err;

	if (!c->s->offline) {
		c->maps = (struct att_map *)syms_maps(c->s->syms, &c->nmaps);
		return 0;
	}
	err = ops->maps_text ? ops->maps_text(c->s->be, &text, &len) : -ENOTSUP;
	if (!err)
		err = att_maps_parse(text, &c->maps, &c->nmaps);
	free(text);
	if (err)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: the core's mappings: %s",
				strerror(-err));
	return 0;
}

/* What a partial or odd run should say. */
static void warnings(struct cen *c)
{
	if (!c->s->je->ncode && !c->s->offline)
		cen_warn(c, "jemalloc is stripped of its symbols in %s: where its code is is unknown, "
			 "so a thread inside it was not waited out", c->s->je->path);
	if (c->forced)
		cen_warn(c, "a thread was inside jemalloc (forced): what it was changing may be "
			 "counted wrong");
	if (c->bad_words || c->bad_nfree)
		cen_warn(c, "%llu map entries and %llu slab counts disagreed with the metadata they "
			 "name (skipped)", (unsigned long long)c->bad_words,
			 (unsigned long long)c->bad_nfree);
	if (c->unheld_extents)
		cen_warn(c, "%llu extents lie partly in memory the core does not hold (%llu bytes; "
			 "MADV_DONTDUMP): counted from jemalloc's metadata",
			 (unsigned long long)c->unheld_extents, (unsigned long long)c->unheld_bytes);
	if (c->unread_blocks)
		cen_warn(c, "%llu blocks (%llu bytes) had pages that could not be read (PROT_NONE, "
			 "or not in the core): pointers there were not seen",
			 (unsigned long long)c->unread_blocks, (unsigned long long)c->unread_bytes);
	if (c->bad_bins)
		cen_warn(c, "%llu thread-cache bins claimed more than a stack of theirs can hold "
			 "(not read)", (unsigned long long)c->bad_bins);
}

/* @err, or a timeout when --timeout ran out meanwhile: a read given up at
 * the timeout (attach/mem.c) leaves the map "not found", which is no fact
 * of the target (85-census's -t 0.001 so ended in exit 4 one run in 10). */
static int timed_out_or(struct cen *c, int err)
{
	char why[sizeof(c->s->err)];

	if (!err || err == -ENOMEM || err == -ETIMEDOUT || !cen_timed_out(c))
		return err;
	snprintf(why, sizeof(why), "%s", jma_errmsg(c->s));
	return sess_fail(c->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "census: timed out (%s)", why);
}

/* Phase 1 (threads running): the maps, what this jemalloc is and where its
 * map is.  Writes c->maps, c->b/lay/L/g/sizes, c->ch (3.6, 4.5), c->map or
 * c->defer_map. */
static int find(struct cen *c)
{
	int err = get_maps(c);

	if (!err)
		err = cen_layout_find(c);
	if (!err && !c->ch) {
		/* Not found from the code: perhaps from a thread's cache, once
		 * they are stopped (the message stays if that fails too). */
		err = cen_map_find(c);
		c->defer_map = err == -ENOENT;
		if (c->defer_map)
			err = 0;
	}
	err = timed_out_or(c, err);
	return err ? err : cen_walk_prepare(c);
}

/* Phases 2-4: every thread stopped, none inside jemalloc; the thread caches
 * and the map copied; the threads go on.  Reads what find() wrote; writes
 * c->th, c->tpoff, c->cached, c->stacks, c->raw and c->bits (or c->ch's
 * runs), out->stop_ns and meta_ns. */
static int stopped(struct cen *c)
{
	jma_session *s = c->s;
	void *tok = NULL;
	int64_t t1, cpu0;
	int err = cen_stop(c, &tok);

	if (err)
		return err;
	t1 = att_now_ns();
	cpu0 = cpu_ns();
	cen_cache_flush(c);
	if (!c->ch) {
		cen_tsd_settle(c);
		sess_logf(s, JMA_LOG_INFO, "census: thread data (tsd) %s", c->have_tpoff ?
			 c->tsd_how : "not found");
	}
	if (c->defer_map && cen_map_from_tsd(c)) {
		char why[sizeof(s->err)];
		snprintf(why, sizeof(why), "%s", jma_errmsg(s));
		err = timed_out_or(c, sess_fail(s, JMA_ERR_MISSING, -ENOENT, "%s; nor from the "
						"threads' lookup caches", why));
	}
	c->out->map_addr = c->map;
	if (!err)
		err = cen_tcache_read(c);
	if (!err)
		err = cen_walk(c);
	c->out->meta_ns = (uint64_t)(att_now_ns() - t1);
	c->cpu_ns = cpu_ns() - cpu0;
	cen_go(c, tok);
	cen_cache_flush(c);
	cen_tcache_sort(c);
	return err;
}

/* Phase 5 (running): what the stop copied, counted by size and kept as
 * blocks (c->ix) when asked; the copies freed. */
static int counted(struct cen *c)
{
	jma_session *s = c->s;
	int err = cen_expand(c);

	if (!err && c->ch)
		err = cen_chunks_result(c);
	cen_walk_free(c);
	if (!err && c->keep && cen_stacks_index(c))
		err = sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	sess_logf(s, JMA_LOG_INFO, "census: %zu threads stopped %.1f ms (metadata read %.1f ms, "
		 "%.1f ms of our CPU); %llu reads (%llu pages), %llu extents, %llu blocks", c->nth,
		 (double)c->out->stop_ns / 1e6, (double)c->out->meta_ns / 1e6, (double)c->cpu_ns / 1e6,
		 (unsigned long long)c->reads, (unsigned long long)c->misses,
		 (unsigned long long)c->out->extents,
		 (unsigned long long)(c->out->live.blocks + c->out->cached.blocks));
	return err;
}

/* Phase 6 (running): the blocks' contents, when asked: types (c->btype,
 * out->types), leaks and owners (c->cls, c->owner, out's classes and
 * roots; leaks.c may stop the threads once more).  Bounded by an explicit
 * --timeout only. */
static int contents(struct cen *c)
{
	unsigned flags = c->o->flags;
	int64_t t1;
	int err = 0;

	if (c->s->opt.timeout <= 0)
		c->deadline_ns = 0;
	if (flags & JMA_CENSUS_TYPES) {
		t1 = att_now_ns();
		err = cen_types(c);
		sess_logf(c->s, JMA_LOG_INFO, "census: types in %.1f ms", (double)(att_now_ns() - t1) / 1e6);
	}
	if (!err && (flags & (JMA_CENSUS_LEAKS | JMA_CENSUS_ROOTS))) {
		t1 = att_now_ns();
		err = cen_leaks(c);
		sess_logf(c->s, JMA_LOG_INFO, "census: leaks%s in %.1f ms", flags & JMA_CENSUS_ROOTS ?
			 " and dominators" : "", (double)(att_now_ns() - t1) / 1e6);
	}
	if (!err && finish(c))
		err = sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	return err;
}

int jma_census_run(jma_session *s, const struct jma_census_opts *opts, struct jma_census **out)
{
	static int (*const phases[])(struct cen *) = { find, stopped, counted, contents };
	struct jma_census_opts o;
	struct cen c = { .s = s, .o = &o };
	int64_t t0 = att_now_ns();
	int err, here = 0;

	*out = NULL;
	if ((err = SIZED_IN(opts, &o)))
		return sess_fail(s, JMA_ERR_USAGE, err, "census: its options' sz is not that of "
				"a struct jma_census_opts this library knows");
	if (!(c.out = calloc(1, sizeof(*c.out))))
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if (!syms_jemalloc(s->syms)) {
		free(c.out);
		return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in process %d",
				(int)s->pid);
	}
	c.keep = !!(o.flags & (JMA_CENSUS_LIST | JMA_CENSUS_TYPES | JMA_CENSUS_LEAKS | JMA_CENSUS_ROOTS));
	/* The stop is bounded by the timeout (10 s unless given); reading
	 * contents afterwards costs the target nothing and is bounded only by
	 * an explicit --timeout. */
	c.start_ns = t0;
	c.deadline_ns = t0 + (int64_t)sess_timeout_ms(s) * 1000000;
	/* A core's memory is read through the emulator's image. */
	err = s->offline ? jma_hold_begin(s, &here) : 0;
	for (size_t i = 0; !err && i < sizeof(phases) / sizeof(*phases); i++)
		err = phases[i](&c);
	if (here)
		err = jma_hold_end(s, here, err);
	warnings(&c);
	c.out->mem_bytes = cen_index_bytes(&c.ix) + c.capcached * 8 + c.capraw * sizeof(*c.raw) +
			   c.capbits * 8 + c.capleaves * sizeof(*c.leaves) +
			   (c.btype ? c.ix.nblocks * 4 : 0) +
			   (c.out->blocks ? cen_blocks_bytes(c.out->blocks) : 0) + (12ULL << 20);
	c.out->total_ns = (uint64_t)(att_now_ns() - t0);
	cen_free(&c);
	if (err) {
		jma_census_free(c.out);
		return err;
	}
	*out = c.out;
	return 0;
}

void jma_census_free(struct jma_census *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntypes; i++)
		free(c->types[i].name);
	for (size_t i = 0; i < c->nroots; i++)
		free(c->roots[i].name);
	free(c->types);
	free(c->sizes);
	free(c->untyped);
	free(c->roots);
	for (size_t i = 0; i < c->nholders; i++)
		free(c->holders[i].path);
	free(c->holders);
	cen_blocks_free(c->blocks);
	free(c);
}
