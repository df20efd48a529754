/* track.c -- per-site memory over a series of heap profiles: the sites, the
 * snapshots, and naming each new site once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"
#include "series/track.h"

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

jma_track *jma_track_new(const struct jma_track_opts *o)
{
	jma_track *t = calloc(1, sizeof(*t));

	if (t && o)
		t->o = *o;
	if (t)
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
	free(t->slot);
	free(t);
}

size_t jma_track_nsnapshots(const jma_track *t)
{
	return t->nsnaps;
}

void track_id_str(uint64_t id, char buf[17])
{
	snprintf(buf, 17, "%016llx", (unsigned long long)id);
}

static int rehash(jma_track *t)
{
	size_t n = t->nslot ? t->nslot * 2 : 1024;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsites; i++) {
		size_t k = t->sites[i].id & (n - 1);
		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->nslot = n;
	return 0;
}

long track_site(jma_track *t, uint64_t id)
{
	size_t k;

	if ((t->nsites + 1) * 2 > t->nslot && rehash(t))
		return -ENOMEM;
	for (k = id & (t->nslot - 1); t->slot[k]; k = (k + 1) & (t->nslot - 1))
		if (t->sites[t->slot[k] - 1].id == id)
			return (long)t->slot[k] - 1;
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
	t->slot[k] = (uint32_t)t->nsites + 1;
	return (long)t->nsites++;
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

int track_site_name(jma_track *t, size_t i, const char *const *frames, size_t n,
		    const char *module)
{
	struct track_site *s = &t->sites[i];
	const char *f0 = n ? frames[0] : "?";

	s->frames = calloc(n ? n : 1, sizeof(*s->frames));
	s->name = strndup(f0, strcspn(f0, " "));
	s->caller = n > 1 ? strndup(frames[1], strcspn(frames[1], " ")) : NULL;
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

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Name the sites of @mh (a profile of only new stacks) from its view. */
static int name_view(jma_track *t, struct heap_view *v)
{
	jma_heap *h = v->h;
	char **fr = NULL;
	int err = 0;

	for (size_t k = 0; k < v->nstacks && !err; k++) {
		const struct heap_vstack *vs = &v->stacks[k];
		long si = track_site(t, stack_id(h, &h->stacks[vs->stack]));
		const char *module = NULL;
		size_t n;

		if (si < 0 || (err = heap_view_frames(v, vs, &n)))
			return si < 0 ? (int)si : err;
		if (t->sites[si].name)
			continue;
		fr = calloc(n ? n : 1, sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		for (size_t j = 0; j < n && !err; j++) {
			const struct heap_frame *f = &v->fr[j];
			int32_t m = h->locs[v->fr_loc[j]].module;
			const char *mod = m >= 0 ? base_name(h->str.str[h->modules[m].path]) : NULL;
			char line[64] = "";

			if (f->file)
				snprintf(line, sizeof(line), " (%s:%d)", base_name(h->str.str[f->file]),
					 f->line);
			if (asprintf(&fr[j], "%s%s%s%s%s", h->str.str[f->func], line,
				     mod ? " [" : "", mod ? mod : "", mod ? "]" : "") < 0) {
				fr[j] = NULL;
				err = -ENOMEM;
			}
			if (j == 0 && m >= 0)
				module = h->str.str[h->modules[m].path];
		}
		if (!err)
			err = track_site_name(t, (size_t)si, (const char *const *)fr, n, module);
		for (size_t j = 0; j < n; j++)
			free(fr[j]);
		free(fr);
	}
	return err;
}

/* Symbolize only the stacks of @h listed in @which: a small profile of just
 * those (callers +1 again: the parser takes them back off) with @h's maps. */
static int name_new(jma_track *t, const jma_heap *h, const char *buf, size_t len,
		    const size_t *which, size_t n)
{
	static const char tag[] = "\nMAPPED_LIBRARIES:\n";
	const char *maps = memmem(buf, len, tag, sizeof(tag) - 1);
	struct jma_heap_report_opts ro = { .format = JMA_HEAP_TEXT, .fold = t->o.fold };
	struct jma_heap_symopts so = { .pid = t->o.pid, .log = t->o.log, .log_arg = t->o.log_arg };
	struct heap_view v = { 0 };
	jma_heap *mh = NULL;
	char *text = NULL, msg[512];
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	int err;

	if (!f)
		return -ENOMEM;
	fputs("heap_v2/1\n  t*: 0: 0 [0: 0]\n", f);
	for (size_t k = 0; k < n; k++) {
		const struct heap_stack *s = &h->stacks[which[k]];
		fputc('@', f);
		for (uint32_t i = 0; i < s->npc; i++)
			fprintf(f, " 0x%llx", (unsigned long long)(h->pcs[s->pc + i] + (i ? 1 : 0)));
		fputs("\n  t*: 1: 1 [0: 0]\n", f);
	}
	if (maps)
		fwrite(maps, 1, len - (size_t)(maps - buf), f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	err = jma_heap_parse(text, tlen, "new sites", &mh, msg, sizeof(msg));
	free(text);
	if (err)
		return track_fail(t, err, "%s", msg);
	err = jma_heap_symbolize(mh, &so);
	if (!err)
		err = heap_view_build(mh, &ro, &v);
	if (!err) {
		err = name_view(t, &v);
		heap_view_free(&v);
	} else {
		track_fail(t, err, "naming sites: %s", jma_heap_errmsg(mh));
	}
	jma_heap_free(mh);
	return err;
}

int jma_track_add(jma_track *t, const char *buf, size_t len, const char *name,
		  const struct jma_track_meta *m)
{
	jma_heap *h = NULL;
	size_t *fresh = NULL, nfresh = 0, from;
	char msg[512];
	int err = jma_heap_parse(buf, len, name, &h, msg, sizeof(msg));

	if (err)
		return track_fail(t, err, "%s", msg);
	fresh = calloc(h->nstacks ? h->nstacks : 1, sizeof(*fresh));
	if (!fresh) {
		jma_heap_free(h);
		return track_fail(t, -ENOMEM, "%s: out of memory", name);
	}
	track_begin(t, m, h->period, h->has_alloc);
	from = t->nsites;
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
		if (!t->sites[si].name)
			fresh[nfresh++] = i;
		track_add_point(t, (size_t)si, &p);
	}
	if (!err && nfresh)
		err = name_new(t, h, buf, len, fresh, nfresh);
	/* A stack the view dropped (all of it allocator code) keeps no frames. */
	for (size_t i = from; i < t->nsites && !err; i++) {
		static const char *const unknown[] = { "(allocator)" };
		if (!t->sites[i].name && (err = track_site_name(t, i, unknown, 1, NULL)))
			track_fail(t, err, "%s: out of memory", name);
	}
	/* The snapshot counts even when naming failed: its numbers are whole. */
	track_end(t);
	free(fresh);
	jma_heap_free(h);
	return err;
}
