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
	snprintf(t->what, sizeof(t->what), "%s", o && o->what ? o->what : "site");
	t->o.what = NULL;	/* the caller's string need not outlive this call */
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

#define FNV_BASIS 14695981039346656037ULL

/* FNV-1a of @n bytes at @p, continuing from @x. */
static uint64_t fnv1a(uint64_t x, const void *p, size_t n)
{
	for (const unsigned char *c = p; n--; c++) {
		x ^= *c;
		x *= 1099511628211ULL;
	}
	return x;
}

/* FNV-1a over the stack's addresses (little-endian bytes): the same stack
 * has the same id in every snapshot of the process (and of a saved track). */
static uint64_t stack_id(const jma_heap *h, const struct heap_stack *s)
{
	uint64_t x = FNV_BASIS;

	for (uint32_t i = 0; i < s->npc; i++) {
		uint64_t a = h->pcs[s->pc + i];
		unsigned char b[8];

		for (int k = 0; k < 8; k++)
			b[k] = (unsigned char)(a >> (8 * k));
		x = fnv1a(x, b, sizeof(b));
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

int jma_track_add_counts(jma_track *t, const struct jma_track_count *v, size_t n,
			 const struct jma_track_meta *m)
{
	int err = 0;

	t->exact = 1;
	track_begin(t, m, 0, 0);
	for (size_t i = 0; i < n; i++) {
		struct track_point p = { .live_bytes = v[i].bytes, .live_objs = v[i].objs,
					 .samples = (uint64_t)v[i].objs };
		const char *name = v[i].name ? v[i].name : "?";
		long si;

		if ((si = track_site(t, fnv1a(FNV_BASIS, name, strlen(name)))) < 0) {
			err = track_fail(t, -ENOMEM, "out of memory");
			break;
		}
		if (!t->sites[si].name && track_site_name(t, (size_t)si, &name, 1, NULL)) {
			err = track_fail(t, -ENOMEM, "out of memory");
			break;
		}
		track_add_point(t, (size_t)si, &p);
	}
	/* The snapshot counts even when a row failed: the rest are whole. */
	track_end(t);
	return err;
}
