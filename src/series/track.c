/* track.c -- per-site memory over a series of heap profiles: new tracks, the
 * snapshots and their running statistics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "series/track_priv.h"

jma_track *jma_track_new(const struct jma_track_opts *o)
{
	jma_track *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (o)
		t->o = *o;
	t->hstride = 1;
	return t;
}

void jma_track_free(jma_track *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nsites; i++) {
		for (size_t j = 0; j < t->sites[i].nframes; j++)
			free(t->sites[i].frames[j]);
		free(t->sites[i].frames);
		free(t->sites[i].name);
		free(t->sites[i].caller);
		free(t->sites[i].module);
		free(t->sites[i].hist);
	}
	free(t->sites);
	track_map_free(&t->site_ix);
	track_sym_free(t);
	free(t);
}

size_t jma_track_nsnapshots(const jma_track *t)
{
	return t->nsnaps;
}

void track_begin(jma_track *t, const struct jma_track_meta *m, uint64_t period, int accum)
{
	for (size_t i = 0; i < t->nsites; i++) {
		t->sites[i].prev = t->sites[i].cur;
		memset(&t->sites[i].cur, 0, sizeof(t->sites[i].cur));
	}
	if (!t->nsnaps)
		t->meta0 = *m;
	t->meta = *m;
	t->period = period;
	t->accum = accum;
	t->nsnaps++;
}

void track_add_point(jma_track *t, size_t i, const struct track_point *p)
{
	struct track_point *c = &t->sites[i].cur;

	c->live_bytes += p->live_bytes;
	c->live_objs += p->live_objs;
	c->acc_bytes += p->acc_bytes;
	c->acc_objs += p->acc_objs;
	c->samples += p->samples;
	c->present = 1;
}

/* alloc/free of @p from its counts and the snapshot before, @q. */
static void derive(const jma_track *t, struct track_point *p, const struct track_point *q)
{
	if (t->accum && p->present) {
		p->alloc_bytes = p->acc_bytes;
		p->alloc_objs = p->acc_objs;
	} else if (t->accum) {
		/* Gone from the profile: nothing more allocated, all freed. */
		p->alloc_bytes = q->alloc_bytes;
		p->alloc_objs = q->alloc_objs;
	} else {
		/* Without accumulated counts only growth of live memory is
		 * seen: a lower bound of what was allocated. */
		p->alloc_bytes = q->alloc_bytes + (p->live_bytes > q->live_bytes ?
						   p->live_bytes - q->live_bytes : 0);
		p->alloc_objs = q->alloc_objs + (p->live_objs > q->live_objs ?
						 p->live_objs - q->live_objs : 0);
	}
	p->free_bytes = p->alloc_bytes > p->live_bytes ? p->alloc_bytes - p->live_bytes : 0;
	p->free_objs = p->alloc_objs > p->live_objs ? p->alloc_objs - p->live_objs : 0;
}

/* A full history keeps every other point and doubles its stride. */
static void hist_halve(jma_track *t)
{
	for (size_t i = 0; i < t->nsites; i++)
		for (size_t j = 0; j < TRACK_HIST / 2; j++)
			t->sites[i].hist[j] = t->sites[i].hist[2 * j];
	t->hlen = TRACK_HIST / 2;
	t->hstride *= 2;
}

void track_end(jma_track *t)
{
	size_t k = t->nsnaps - 1;
	double x = t->meta.time - t->meta0.time;
	int keep = k % t->hstride == 0;

	if (keep && t->hlen == TRACK_HIST) {
		hist_halve(t);
		keep = k % t->hstride == 0;
	}
	t->n += 1;
	t->sx += x;
	t->sxx += x * x;
	for (size_t i = 0; i < t->nsites; i++) {
		struct track_site *s = &t->sites[i];
		double y = s->cur.live_bytes, o = s->cur.live_objs;

		derive(t, &s->cur, &s->prev);
		if (k == 0)
			s->at0 = s->cur;
		s->grew += k > 0 && y > s->prev.live_bytes;
		s->sy += y;
		s->sxy += x * y;
		s->syy += y * y;
		s->oy += o;
		s->oxy += x * o;
		if (keep)
			s->hist[t->hlen] = (float)y;
	}
	t->hlen += keep;
}

/* FNV-1a over the stack's addresses: the same stack has the same id in
 * every snapshot of the process (and of a saved track). */
static uint64_t stack_id(const jma_heap *h, const struct heap_stack *s)
{
	uint64_t x = 14695981039346656037ULL;

	for (uint32_t i = 0; i < s->npc; i++) {
		uint64_t a = h->pcs[s->pc + i];
		for (int b = 0; b < 8; b++) {
			x ^= (a >> (8 * b)) & 0xff;
			x *= 1099511628211ULL;
		}
	}
	return x;
}

int jma_track_add(jma_track *t, const char *buf, size_t len, const char *name,
		  const struct jma_track_meta *m)
{
	jma_heap *h = NULL;
	size_t *fresh = NULL, *fsite = NULL, nfresh = 0;
	char msg[512];
	int err = jma_heap_parse(buf, len, name, &h, msg, sizeof(msg));

	if (err)
		return track_fail(t, err, "%s", msg);
	fresh = calloc(h->nstacks ? h->nstacks : 1, sizeof(*fresh));
	fsite = calloc(h->nstacks ? h->nstacks : 1, sizeof(*fsite));
	if (!fresh || !fsite) {
		free(fresh);
		free(fsite);
		jma_heap_free(h);
		return track_fail(t, -ENOMEM, "%s: out of memory", name);
	}
	track_begin(t, m, h->period, h->has_alloc);
	for (size_t i = 0; i < h->nstacks; i++) {
		const struct heap_stack *s = &h->stacks[i];
		struct track_point p = {
			.live_objs = s->val[HEAP_CUR_OBJS], .live_bytes = s->val[HEAP_CUR_BYTES],
			.acc_objs = s->val[HEAP_ACC_OBJS], .acc_bytes = s->val[HEAP_ACC_BYTES],
			.samples = s->raw[HEAP_CUR_OBJS],
		};
		long si = track_site(t, stack_id(h, s));

		if (si < 0) {
			err = track_fail(t, -ENOMEM, "%s: out of memory", name);
			break;
		}
		if (!t->sites[si].name) {
			fsite[nfresh] = (size_t)si;
			fresh[nfresh++] = i;
		}
		track_add_point(t, (size_t)si, &p);
	}
	if (!err && nfresh)
		err = track_name_sites(t, h, buf, len, fresh, fsite, nfresh);
	/* The snapshot counts even when naming failed: its numbers are whole. */
	track_end(t);
	free(fsite);
	free(fresh);
	jma_heap_free(h);
	return err;
}
