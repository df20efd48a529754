/* series.c -- one sample of a process's memory, and writing samples as JSON lines, CSV or Prometheus text. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "series/series.h"
#include "core/clock.h"
#include "core/session.h"

#define G(m) offsetof(struct jma_sample, m)
#define A(m) offsetof(struct jma_arena_sample, m)

const struct series_field series_global[] = {
	{ "allocated", "allocated", "allocated", G(allocated), 0,
	  "stats.allocated: bytes in objects the application holds" },
	{ "active", "active", "active", G(active), 0, "stats.active: bytes in active pages" },
	{ "metadata", "metadata", "metadata", G(metadata), 0,
	  "stats.metadata: bytes of allocator metadata" },
	{ "resident", "resident", "resident", G(resident), 0,
	  "stats.resident: bytes in physically resident pages the allocator maps" },
	{ "mapped", "mapped", "mapped", G(mapped), 0,
	  "stats.mapped: bytes in extents mapped by the allocator" },
	{ "retained", "retained", "retained", G(retained), 0,
	  "stats.retained: bytes retained (virtual memory kept, not returned to the OS)" },
	{ "dirty", "dirty", NULL, G(dirty), 0,
	  "all arenas' pdirty x page: unused dirty pages not yet purged" },
	{ "muzzy", "muzzy", NULL, G(muzzy), 0,
	  "all arenas' pmuzzy x page: pages purged lazily, may still be resident" },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct series_field series_arena[] = {
	{ "pactive", "active", "pactive", A(active), 1, "arena active pages x page" },
	{ "pdirty", "dirty", "pdirty", A(dirty), 1, "arena dirty pages x page" },
	{ "pmuzzy", "muzzy", "pmuzzy", A(muzzy), 1, "arena muzzy pages x page" },
	{ "mapped", "mapped", "mapped", A(mapped), 0, "bytes the arena maps" },
	{ "retained", "retained", "retained", A(retained), 0, "bytes the arena retains" },
	{ "resident", "resident", "resident", A(resident), 0, "arena resident bytes" },
	{ "small_allocated", "small_allocated", "small.allocated", A(small_allocated), 0,
	  "bytes in small objects held by the application" },
	{ "large_allocated", "large_allocated", "large.allocated", A(large_allocated), 0,
	  "bytes in large objects held by the application" },
	{ "nthreads", "nthreads", "nthreads", A(nthreads), 0, "threads bound to the arena" },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

/* Read one scalar of @size bytes.  A name this jemalloc lacks (ENOENT: an
 * older version) reads as 0 so one sample format serves 3.x to 5.x. */
static int rd(jma_session *s, const char *name, void *v, size_t size)
{
	size_t len = size;
	int err = jma_mallctl(s, name, v, &len, NULL, 0);

	if (err == -ENOENT && (jma_errkind(s) == JMA_ERR_TARGET || jma_errkind(s) == JMA_ERR_MISSING)) {
		memset(v, 0, size);
		return 0;
	}
	if (!err && len != size)
		return -EPROTO;
	return err;
}

static int rd_size(jma_session *s, const char *name, uint64_t *v)
{
	size_t z;
	int err = rd(s, name, &z, sizeof(z));

	*v = z;
	return err;
}

static int rd_arena(jma_session *s, unsigned i, const char *what, uint64_t *v)
{
	char name[96];

	snprintf(name, sizeof(name), "stats.arenas.%u.%s", i, what);
	if (!strcmp(what, "nthreads")) {
		unsigned u;
		int err = rd(s, name, &u, sizeof(u));
		*v = u;
		return err;
	}
	return rd_size(s, name, v);
}

static int read_arenas(jma_session *s, struct jma_sample *out)
{
	unsigned narenas;
	bool *init;
	int err = rd(s, "arenas.narenas", &narenas, sizeof(narenas));

	if (err)
		return err;
	out->arenas = calloc(narenas ? narenas : 1, sizeof(*out->arenas));
	init = calloc(narenas ? narenas : 1, sizeof(*init));
	/* Uninitialized arenas have no stats. */
	err = !out->arenas || !init ? -ENOMEM : jma_arenas_initialized(s, init, narenas);
	for (unsigned i = 0; i < narenas && !err; i++) {
		struct jma_arena_sample *a = &out->arenas[out->narenas];

		if (!init[i])
			continue;
		a->index = i;
		for (const struct series_field *f = series_arena; f->key && !err; f++)
			err = rd_arena(s, i, f->stats, series_at(a, f));
		for (const struct series_field *f = series_arena; f->key; f++)
			if (f->pages)
				*series_at(a, f) *= out->page;
		out->narenas++;
	}
	free(init);
	return err;
}

/* Everything read while attached; @out->page is known. */
static int read_all(jma_session *s, unsigned flags, struct jma_sample *out)
{
	int err = jma_refresh(s);
	unsigned all = 0;
	char name[64];

	for (const struct series_field *f = series_global; f->key && !err; f++) {
		if (!f->stats)
			continue;
		snprintf(name, sizeof(name), "stats.%s", f->stats);
		err = rd_size(s, name, series_at(out, f));
	}
	/* The merged arena: 4096 from 5.0, narenas before. */
	if (!err)
		err = jma_arena_all(s, &all);
	if (!err) {
		snprintf(name, sizeof(name), "stats.arenas.%u.pdirty", all);
		err = rd_size(s, name, &out->dirty);
	}
	if (!err) {
		snprintf(name, sizeof(name), "stats.arenas.%u.pmuzzy", all);
		err = rd_size(s, name, &out->muzzy);
	}
	out->dirty *= out->page;
	out->muzzy *= out->page;
	if (!err && (flags & JMA_SAMPLE_ARENAS))
		err = read_arenas(s, out);
	return err;
}

int jma_sample(jma_session *s, unsigned flags, unsigned iter, struct jma_sample *out)
{
	struct jma_target_info info = { .sz = sizeof(info) };
	int own, err;
	uint64_t t0;

	memset(out, 0, sizeof(*out));
	out->iter = iter;
	err = jma_target_info(s, &info);
	if (err)
		return err;
	out->pid = info.pid;
	snprintf(out->comm, sizeof(out->comm), "%s", info.comm);
	out->time = jma_clock_s(CLOCK_REALTIME);
	t0 = (uint64_t)jma_clock_ns(CLOCK_MONOTONIC);
	if ((err = jma_hold_begin(s, &own)))
		return err;
	err = jma_page_size(s, &out->page);
	if (!err)
		err = read_all(s, flags, out);
	err = jma_hold_end(s, own, err);
	/* Attached here: the thread's own stop (jma_held_ns).  Attached by the
	 * caller: the time our reads took, the part of the hold that is ours. */
	out->hold_ns = own ? jma_held_ns(s) : (uint64_t)jma_clock_ns(CLOCK_MONOTONIC) - t0;
	if (err == -EPROTO)
		err = sess_fail(s, JMA_ERR_TARGET, err, "a stats value had an unexpected size");
	if (err)
		jma_sample_clear(out);
	return err;
}

void jma_sample_clear(struct jma_sample *smp)
{
	free(smp->arenas);
	smp->arenas = NULL;
	smp->narenas = 0;
}

int jma_series_fmt_parse(const char *name, enum jma_series_fmt *fmt)
{
	static const char *const names[] = { "jsonl", "csv", "prom" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(name, names[i])) {
			*fmt = (enum jma_series_fmt)i;
			return 0;
		}
	return -EINVAL;
}

static int put_u64(json_t *o, const char *key, uint64_t v)
{
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

static int write_jsonl(FILE *f, const struct jma_sample *smp)
{
	json_t *o = json_object(), *arr = json_array();
	int bad = !o || !arr;
	char *text;

	bad |= json_object_set_new(o, "time", json_real(smp->time));
	bad |= put_u64(o, "iter", smp->iter);
	bad |= put_u64(o, "pid", (uint64_t)smp->pid);
	/* json_stringn, not json_string: the CLI defines a json_string of its own. */
	bad |= json_object_set_new(o, "comm", json_stringn(smp->comm, strlen(smp->comm)));
	bad |= put_u64(o, "hold_ns", smp->hold_ns);
	bad |= put_u64(o, "page", smp->page);
	for (const struct series_field *g = series_global; g->key; g++)
		bad |= put_u64(o, g->key, *series_at(smp, g));
	for (size_t i = 0; i < smp->narenas && !bad; i++) {
		const struct jma_arena_sample *a = &smp->arenas[i];
		json_t *ao = json_object();

		bad |= !ao || put_u64(ao, "arena", a->index);
		for (const struct series_field *af = series_arena; af->key && !bad; af++)
			bad |= put_u64(ao, af->key, *series_at(a, af) / (af->pages ? smp->page : 1));
		bad |= json_array_append_new(arr, ao);
	}
	if (smp->arenas) {
		bad |= json_object_set_new(o, "arenas", arr);
		arr = NULL;
	}
	/* 17 digits keep the microseconds of a Unix time. */
	text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(arr);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	fprintf(f, "%s\n", text);
	free(text);
	return 0;
}

static void csv_cell(FILE *f, int skip, uint64_t v)
{
	if (skip)
		fputc(',', f);
	else
		fprintf(f, ",%llu", (unsigned long long)v);
}

static int write_csv_header(FILE *f)
{
	fputs("time,iter,arena,hold_ns", f);
	for (const struct series_field *g = series_global; g->key; g++)
		fprintf(f, ",%s", g->col);
	fputs(",small_allocated,large_allocated,nthreads\n", f);
	return 0;
}

/* One "all" row with the process-wide values, then one row per arena in
 * the same columns: allocated = small + large, no metadata of its own. */
static int write_csv(FILE *f, const struct jma_sample *smp)
{
	fprintf(f, "%.6f,%u,all,%llu", smp->time, smp->iter, (unsigned long long)smp->hold_ns);
	for (const struct series_field *g = series_global; g->key; g++)
		csv_cell(f, 0, *series_at(smp, g));
	fputs(",,,\n", f);
	for (size_t i = 0; i < smp->narenas; i++) {
		const struct jma_arena_sample *a = &smp->arenas[i];

		fprintf(f, "%.6f,%u,%u,", smp->time, smp->iter, a->index);
		for (const struct series_field *g = series_global; g->key; g++) {
			const struct series_field *af = series_arena;

			while (af->key && strcmp(af->col, g->col))
				af++;
			if (!strcmp(g->col, "allocated"))
				csv_cell(f, 0, a->small_allocated + a->large_allocated);
			else
				csv_cell(f, !af->key, af->key ? *series_at(a, af) : 0);
		}
		fprintf(f, ",%llu,%llu,%llu\n", (unsigned long long)a->small_allocated,
			(unsigned long long)a->large_allocated, (unsigned long long)a->nthreads);
	}
	return 0;
}

/* Label values escape backslash, double quote and newline. */
static void prom_labels(FILE *f, const struct jma_sample *smp, long arena)
{
	fprintf(f, "{pid=\"%d\",comm=\"", (int)smp->pid);
	for (const char *p = smp->comm; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
	if (arena >= 0)
		fprintf(f, ",arena=\"%ld\"", arena);
	fputc('}', f);
}

static void prom_family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* The text exposition format; node_exporter's textfile collector rejects
 * samples with timestamps, so the sample time is a gauge of its own. */
static int write_prom(FILE *f, const struct jma_sample *smp)
{
	char name[96];

	for (const struct series_field *g = series_global; g->key; g++) {
		snprintf(name, sizeof(name), "jemalloc_%s_bytes", g->col);
		prom_family(f, name, g->help);
		fputs(name, f);
		prom_labels(f, smp, -1);
		fprintf(f, " %llu\n", (unsigned long long)*series_at(smp, g));
	}
	for (const struct series_field *af = series_arena; af->key && smp->narenas; af++) {
		int count = !strcmp(af->col, "nthreads");

		snprintf(name, sizeof(name), "jemalloc_arena_%s%s", count ? "threads" : af->col,
			 count ? "" : "_bytes");
		prom_family(f, name, af->help);
		for (size_t i = 0; i < smp->narenas; i++) {
			fputs(name, f);
			prom_labels(f, smp, smp->arenas[i].index);
			fprintf(f, " %llu\n", (unsigned long long)*series_at(&smp->arenas[i], af));
		}
	}
	prom_family(f, "jemattach_sample_hold_seconds", "how long jemattach held a target thread");
	fputs("jemattach_sample_hold_seconds", f);
	prom_labels(f, smp, -1);
	fprintf(f, " %.6f\n", (double)smp->hold_ns / 1e9);
	prom_family(f, "jemattach_sample_time_seconds", "Unix time of the sample");
	fputs("jemattach_sample_time_seconds", f);
	prom_labels(f, smp, -1);
	fprintf(f, " %.3f\n", smp->time);
	return 0;
}

/* Each record is built in memory and written with one fwrite, so a reader
 * (or an interruption) sees whole lines. */
static int emit(FILE *f, enum jma_series_fmt fmt, const struct jma_sample *smp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -ENOMEM;
	if (!smp)
		err = fmt == JMA_SERIES_CSV ? write_csv_header(m) : 0;
	else if (fmt == JMA_SERIES_JSONL)
		err = write_jsonl(m, smp);
	else if (fmt == JMA_SERIES_CSV)
		err = write_csv(m, smp);
	else
		err = write_prom(m, smp);
	if (fclose(m))
		err = err ? err : -ENOMEM;
	if (!err && len && (fwrite(buf, 1, len, f) != len || fflush(f)))
		err = -EIO;
	free(buf);
	return err;
}

int jma_series_write_header(FILE *f, enum jma_series_fmt fmt)
{
	return emit(f, fmt, NULL);
}

int jma_series_write(FILE *f, enum jma_series_fmt fmt, const struct jma_sample *smp)
{
	return emit(f, fmt, smp);
}
