/* track_out.c -- a track written out: pmem's text log, JSON lines, the ranking. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "series/report.h"
#include "series/track_priv.h"

#define TEXT_FRAMES 16		/* backtrace lines per site in the text log */

int jma_track_format_from_name(const char *s)
{
	if (!strcmp(s, "text"))
		return JMA_TRACK_TEXT;
	if (!strcmp(s, "jsonl"))
		return JMA_TRACK_JSONL;
	return -EINVAL;
}

static int cmp_live(const void *a, const void *b, void *arg)
{
	const struct track_site *s = arg;
	double x = s[*(const size_t *)a].cur.live_bytes, y = s[*(const size_t *)b].cur.live_bytes;

	return (x < y) - (x > y);
}

static void sz(double v, char *buf, size_t len)
{
	jma_format_size((int64_t)llround(v), buf, len);
}

/* The last snapshot as pmem's log: the header, then each site that holds or
 * moved memory, largest first, with its backtrace. */
static int write_text(jma_track *t, FILE *f)
{
	size_t *order, n = 0;
	double churn = 0;
	char a[32], b[32], c[32], d[32], e[32];

	order = malloc((t->nsites ? t->nsites : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsites; i++) {
		const struct track_point *p = &t->sites[i].cur, *q = &t->sites[i].prev;
		churn += p->alloc_bytes - q->alloc_bytes;
		if (p->live_bytes != 0 || p->alloc_bytes != q->alloc_bytes ||
		    p->free_bytes != q->free_bytes)
			order[n++] = i;
	}
	qsort_r(order, n, sizeof(*order), cmp_live, t->sites);
	sz(churn, a, sizeof(a));
	/* 0 is "not known" (the sampler holds no thread and reads no stats):
	 * "-", not a zero that would read as a measurement. */
	if (t->meta.allocated)
		sz((double)t->meta.allocated, b, sizeof(b));
	else
		snprintf(b, sizeof(b), "-");
	if (t->meta.hold_ns)
		snprintf(c, sizeof(c), "%.2f ms", (double)t->meta.hold_ns / 1e6);
	else
		snprintf(c, sizeof(c), "-");
	fprintf(f, "[%zu]==== +%.2fs churn %s%s allocated %s hold %s sites %zu\n",
		t->nsnaps - 1, t->meta.time - t->meta0.time, a, t->accum ? "" : " (estimated)", b, c, n);
	for (size_t j = 0; j < n; j++) {
		const struct track_site *s = &t->sites[order[j]];
		const struct track_point *p = &s->cur, *q = &s->prev;
		char id[17];

		track_id_str(s->id, id);
		sz(p->live_bytes, a, sizeof(a));
		sz(p->alloc_bytes - q->alloc_bytes, b, sizeof(b));
		sz(p->alloc_bytes, c, sizeof(c));
		sz(p->free_bytes - q->free_bytes, d, sizeof(d));
		sz(p->free_bytes, e, sizeof(e));
		fprintf(f, "site %s live %s in %.0f objects (%llu sampled) alloc_curr %s alloc_total %s "
			"free_curr %s free_total %s%s\n", id, a, p->live_objs,
			(unsigned long long)p->samples, b, c, d, e, t->accum ? "" : " (alloc/free estimated)");
		for (size_t i = 0; i < s->nframes && i < TEXT_FRAMES; i++)
			fprintf(f, "    #%zu %s\n", i, s->frames[i]);
		if (s->nframes > TEXT_FRAMES)
			fprintf(f, "    ... %zu more frames\n", s->nframes - TEXT_FRAMES);
	}
	fputc('\n', f);
	free(order);
	return 0;
}

static json_t *site_json(const jma_track *t, const struct track_site *s)
{
	const struct track_point *p = &s->cur, *q = &s->prev;
	char id[17];
	json_t *o;

	track_id_str(s->id, id);
	o = json_pack("{s:s, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "id", id,
		      "live_bytes", p->live_bytes, "live_objs", p->live_objs,
		      "samples", (json_int_t)p->samples, "acc_bytes", p->acc_bytes,
		      "acc_objs", p->acc_objs,
		      "alloc_curr", p->alloc_bytes - q->alloc_bytes, "alloc_total", p->alloc_bytes,
		      "free_curr", p->free_bytes - q->free_bytes, "free_total", p->free_bytes,
		      "alloc_objs_total", p->alloc_objs, "free_objs_total", p->free_objs);
	if (o && s->first == t->nsnaps - 1) {
		/* A site's names go with its first appearance only. */
		json_t *fr = json_array();
		for (size_t j = 0; fr && j < s->nframes; j++)
			json_array_append_new(fr, json_string(s->frames[j]));
		json_object_set_new(o, "frames", fr);
		json_object_set_new(o, "module", s->module ? json_string(s->module) : json_null());
	}
	return o;
}

static int write_jsonl(jma_track *t, FILE *f)
{
	json_t *o, *sites;
	int err = 0;

	sites = json_array();
	/* Not known (0): null, as the text log's "-". */
	o = json_pack("{s:I, s:f, s:f, s:o, s:o, s:I, s:b, s:b, s:s, s:o}", "snapshot",
		      (json_int_t)t->nsnaps - 1,
		      "time", t->meta.time, "elapsed", t->meta.time - t->meta0.time,
		      "allocated", t->meta.allocated ? json_integer((json_int_t)t->meta.allocated) : json_null(),
		      "hold_ns", t->meta.hold_ns ? json_integer((json_int_t)t->meta.hold_ns) : json_null(),
		      "period", (json_int_t)t->period,
		      "accum", t->accum, "exact", t->exact, "what", t->what, "sites", sites);
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsites && !err; i++) {
		/* Sites gone before and still gone are left out. */
		if (!t->sites[i].cur.present && !t->sites[i].prev.present)
			continue;
		if (json_array_append_new(sites, site_json(t, &t->sites[i])))
			err = -ENOMEM;
	}
	if (!err && json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(17)))
		err = -EIO;
	if (!err)
		fputc('\n', f);
	json_decref(o);
	return err;
}

int jma_track_write_last(jma_track *t, enum jma_track_format fmt, FILE *f)
{
	int err;

	if (!t->nsnaps)
		return track_fail(t, -EINVAL, "no snapshot yet");
	err = fmt == JMA_TRACK_JSONL ? write_jsonl(t, f) : write_text(t, f);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	if (err)
		track_fail(t, err, "writing snapshot %zu: %s", t->nsnaps - 1, strerror(-err));
	return err;
}

/* Least squares of y over time from the sums: the slope and how well a
 * line fits (snapshots before a site appeared count as 0). */
static void fit(const jma_track *t, double sy, double sxy, double syy, double *slope, double *r2)
{
	double vx = t->n * t->sxx - t->sx * t->sx, vy = t->n * syy - sy * sy;
	double cxy = t->n * sxy - t->sx * sy;

	*slope = vx > 0 ? cxy / vx : 0;
	if (r2)
		*r2 = vx > 0 && vy > 0 ? fmin(1, cxy * cxy / (vx * vy)) : 0;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct jma_track_rank *x = a, *y = b;

	if (x->growing != y->growing)
		return y->growing - x->growing;
	if (x->growing && x->bytes_per_s != y->bytes_per_s)
		return (x->bytes_per_s < y->bytes_per_s) - (x->bytes_per_s > y->bytes_per_s);
	if (x->grew != y->grew)
		return (x->grew < y->grew) - (x->grew > y->grew);
	return (x->live_last < y->live_last) - (x->live_last > y->live_last);
}

int jma_track_ranking(jma_track *t, struct jma_track_rank **out, size_t *n)
{
	struct jma_track_rank *r;

	if (!t->nsnaps)
		return track_fail(t, -EINVAL, "no snapshot");
	r = calloc(t->nsites ? t->nsites : 1, sizeof(*r));
	if (!r)
		return track_fail(t, -ENOMEM, "out of memory");
	for (size_t i = 0; i < t->nsites; i++) {
		const struct track_site *s = &t->sites[i];
		struct jma_track_rank *x = &r[i];

		track_id_str(s->id, x->id);
		x->name = s->name;
		x->caller = s->caller;
		x->module = s->module;
		x->intervals = (unsigned)(t->nsnaps - 1);
		x->grew = s->grew;
		fit(t, s->sy, s->sxy, s->syy, &x->bytes_per_s, &x->r2);
		fit(t, s->oy, s->oxy, 0, &x->objs_per_s, NULL);
		x->live_first = s->at0.live_bytes;
		x->live_last = s->cur.live_bytes;
		x->samples = s->cur.samples;
		x->alloc_total = s->cur.alloc_bytes - s->at0.alloc_bytes;
		x->free_total = s->cur.free_bytes - s->at0.free_bytes;
		x->estimated = !t->accum;
		/* A leak suspect grows in two intervals of three or more, and
		 * along a line rather than by noise of the sampling. */
		x->growing = x->intervals >= 2 && x->grew * 3 >= x->intervals * 2 &&
			     x->bytes_per_s > 0 && x->r2 >= 0.6;
		if (t->exact)
			snprintf(x->confidence, sizeof(x->confidence), "exact");
		else if (x->samples < 10)
			snprintf(x->confidence, sizeof(x->confidence), "low: %llu samples",
				 (unsigned long long)x->samples);
		else
			snprintf(x->confidence, sizeof(x->confidence), "%s (+-%.0f%%)",
				 x->samples < 100 ? "medium" : "high", 100 / sqrt((double)x->samples));
	}
	qsort(r, t->nsites, sizeof(*r), cmp_rank);
	*out = r;
	*n = t->nsites;
	return 0;
}

static const char *verdict(const struct jma_track_rank *x)
{
	double big = fmax(fabs(x->live_first), fabs(x->live_last));

	if (x->growing)
		return "growing";
	if (fabs(x->live_last - x->live_first) <= 0.05 * big)
		return "flat";
	return x->live_last < x->live_first ? "shrinking" : "varying";
}

int jma_track_write_ranking(jma_track *t, unsigned top, FILE *f)
{
	struct jma_track_rank *r;
	size_t n;
	int err = jma_track_ranking(t, &r, &n);

	if (err)
		return err;
	fprintf(f, "%ss by growth: %zu snapshots over %.2f s; alloc/free %s\n", t->what, t->nsnaps,
		t->meta.time - t->meta0.time, t->accum ? "from accumulated counts (opt.prof_accum)" :
		t->exact ? "at least what the live counts moved" :
		"estimated from live growth (no opt.prof_accum)");
	fprintf(f, "%4s %-16s %-9s %7s %12s %10s %12s %12s %12s %12s  %-16s %s\n", "rank", t->what,
		"verdict", "grew", "bytes/s", "objs/s", "live_first", "live_last", "alloc", "free",
		"confidence", t->exact ? t->what : "function < caller [module]");
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct jma_track_rank *x = &r[i];
		char grew[24];

		snprintf(grew, sizeof(grew), "%u/%u", x->grew, x->intervals);
		/* No "-0" for a flat site's rounding noise. */
		double bps = fabs(x->bytes_per_s) < 0.5 ? 0 : x->bytes_per_s;
		double ops = fabs(x->objs_per_s) < 0.05 ? 0 : x->objs_per_s;
		fprintf(f, "%4zu %-16s %-9s %7s %12.0f %10.1f %12.0f %12.0f %12.0f %12.0f  %-16s %s%s%s%s%s%s\n",
			i + 1, x->id, verdict(x), grew, bps, ops, x->live_first,
			x->live_last, x->alloc_total, x->free_total, x->confidence, x->name,
			x->caller ? " < " : "", x->caller ? x->caller : "",
			x->module ? " [" : "", x->module ? x->module : "", x->module ? "]" : "");
	}
	free(r);
	return ferror(f) ? track_fail(t, -EIO, "writing the ranking") : 0;
}

struct site_chart {
	const jma_track *t;
	const size_t *site;	/* per line: index into t->sites */
};

static int site_value(const void *arg, size_t l, unsigned i, uint64_t *v)
{
	const struct site_chart *sc = arg;
	float b = sc->t->sites[sc->site[l]].hist[i];

	*v = b > 0 ? (uint64_t)llroundf(b) : 0;
	return 0;
}

int jma_track_svg(jma_track *t, unsigned top, const char *title, FILE *f)
{
	struct jma_track_rank *r;
	struct chart_line *cl = NULL;
	size_t n, *site = NULL;
	char (*labels)[96] = NULL, sub[160];
	struct site_chart sc = { .t = t };
	struct chart c = { .title = title, .subtitle = sub, .xlabel = "snapshot",
			   .xstep = (unsigned)t->hstride };
	int err = jma_track_ranking(t, &r, &n);

	if (err)
		return err;
	if (top && n > top)
		n = top;
	cl = calloc(n + 1, sizeof(*cl));
	site = calloc(n + 1, sizeof(*site));
	labels = calloc(n + 1, sizeof(*labels));
	if (!cl || !site || !labels) {
		err = track_fail(t, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t l = 0; l < n; l++) {
		uint64_t id = strtoull(r[l].id, NULL, 16);
		for (size_t i = 0; i < t->nsites; i++)
			if (t->sites[i].id == id)
				site[l] = i;
		for (size_t k = 0; k < t->hlen; k++) {
			double b = t->sites[site[l]].hist[k];
			c.top = b > (double)c.top ? (uint64_t)llround(b) : c.top;
		}
		snprintf(labels[l], sizeof(labels[l]), "%.40s %s", r[l].name, r[l].id);
		cl[l] = (struct chart_line){ labels[l], chart_color(l), 2 };
	}
	snprintf(sub, sizeof(sub), "live bytes of the top %zu %ss, %zu snapshots over %.1f s%s", n,
		 t->what, t->nsnaps, t->meta.time - t->meta0.time,
		 t->hstride > 1 ? " (every few shown)" : "");
	sc.site = site;
	c.lines = cl;
	c.nlines = n;
	c.to = t->hlen ? (unsigned)t->hlen - 1 : 0;
	c.value = site_value;
	c.arg = &sc;
	if ((err = chart_svg(f, &c)))
		track_fail(t, err, "writing the chart: %s", strerror(-err));
out:
	free(labels);
	free(site);
	free(cl);
	free(r);
	return err;
}
