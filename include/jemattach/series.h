/* jemattach/series.h -- memory over time: samples, series files and their reports.
 *
 *   struct jma_sample smp;
 *   jma_sample(s, JMA_SAMPLE_ARENAS, 0, &smp);  one short attachment, all reads inside
 *   jma_series_write(f, JMA_SERIES_JSONL, &smp);
 *   jma_sample_clear(&smp);
 *
 *   struct jma_series ser;
 *   jma_series_load("watch.jsonl", &ser, err, sizeof(err));
 *   jma_report_abs(&ser, JMA_M_ACTIVE, 200 << 20, 0, UINT_MAX, &rows, &n);
 *   jma_series_free(&ser);
 *
 * All byte counts are bytes: jemalloc's page counts (pactive, pdirty,
 * pmuzzy) are multiplied by arenas.page when sampled.
 */
#ifndef JEMATTACH_SERIES_H
#define JEMATTACH_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jemattach/session.h>
#include <jemattach/api.h>

JMA_API_BEGIN

/* One initialized arena (stats.arenas.<index>.*). */
struct jma_arena_sample {
	unsigned index;
	uint64_t nthreads;		/* threads bound to the arena */
	uint64_t active, dirty, muzzy;	/* pactive, pdirty, pmuzzy x page */
	uint64_t mapped, retained, resident;
	uint64_t small_allocated, large_allocated;
};

struct jma_sample {
	double time;		/* Unix time, seconds; 0 when the source had none */
	unsigned iter;		/* as recorded; reports number samples by position instead */
	pid_t pid;
	char comm[64];
	uint64_t hold_ns;	/* how long the target thread was held; 0 if unknown */
	uint64_t page;
	/* stats.*; dirty and muzzy are the merged arenas' pdirty/pmuzzy x page */
	uint64_t allocated, active, metadata, resident, mapped, retained, dirty, muzzy;
	size_t narenas;		/* entries in arenas, by ascending index */
	struct jma_arena_sample *arenas;	/* malloc'ed; NULL when not sampled */
};

#define JMA_SAMPLE_ARENAS 0x1	/* also read every initialized arena */

/* Refresh the epoch and read one sample, inside one attachment: the caller's
 * if it is attached (then hold_ns covers only the reads), else one made and
 * ended here (hold_ns covers attach to detach).  Names this jemalloc lacks
 * (older versions) read as 0.  @out is cleared first; free it with
 * jma_sample_clear. */
int jma_sample(jma_session *s, unsigned flags, unsigned iter, struct jma_sample *out)
	JMA_MUST_CHECK;
void jma_sample_clear(struct jma_sample *smp);

enum jma_series_fmt {
	JMA_SERIES_JSONL,	/* one JSON object per line; what report reads */
	JMA_SERIES_CSV,		/* one row per sample ("all") and per arena, bytes */
	JMA_SERIES_PROM,	/* Prometheus text exposition of one sample */
};

/* "jsonl", "csv", "prom" -> format; -EINVAL otherwise. */
int jma_series_fmt_parse(const char *name, enum jma_series_fmt *fmt);
/* What a file starts with (the CSV header line; nothing for the others). */
int jma_series_write_header(FILE *f, enum jma_series_fmt fmt) JMA_MUST_CHECK;
/* Append @smp.  Returns 0 or -EIO; complete lines are written or none. */
int jma_series_write(FILE *f, enum jma_series_fmt fmt, const struct jma_sample *smp)
	JMA_MUST_CHECK;

/* A loaded series: samples in file order; position i is iteration i. */
struct jma_series {
	size_t n;
	struct jma_sample *v;
};

/* Read a file of JSON documents, one sample each: the records `watch` writes
 * (JSON lines) or concatenated malloc_stats_print JSON documents ("stats
 * --json", a server's own stats logging).  Returns 0; or -errno with a
 * one-line reason in @err: -ENOENT etc. from opening, -EINVAL for bad content
 * (no sample, not JSON, neither kind of document). */
int jma_series_load(const char *path, struct jma_series *out, char *err, size_t errlen)
	JMA_MUST_CHECK;
/* Same from memory (@len bytes of @buf). */
int jma_series_parse(const char *buf, size_t len, struct jma_series *out, char *err,
		     size_t errlen) JMA_MUST_CHECK;
void jma_series_free(struct jma_series *ser);

/* What a report looks at, per arena and in total. */
enum jma_metric {
	JMA_M_ALLOCATED,	/* small + large allocated; the seed's "total" */
	JMA_M_ACTIVE,
	JMA_M_MAPPED,
	JMA_M_DIRTY,
	JMA_M_MUZZY,
	JMA_M_RETAINED,
	JMA_M_RESIDENT,
	JMA_M_COUNT
};

/* Names: allocated (alias total), active, mapped, dirty, muzzy, retained,
 * resident.  -EINVAL when unknown. */
int jma_metric_parse(const char *name, enum jma_metric *m);
const char *jma_metric_name(enum jma_metric m);

/* Arena number used for the process-wide values (stats.*) in report rows. */
#define JMA_ARENA_ALL (-1)

/* The value of @m for arena @arena (JMA_ARENA_ALL: the whole process) in
 * @smp; -ENOENT when that arena is not in the sample. */
int jma_sample_metric(const struct jma_sample *smp, int arena, enum jma_metric m, uint64_t *v);

/* Sizes for people: "512 B", "1.5 KiB", "200.0 MiB", "-3.25 GiB". */
void jma_format_size(int64_t bytes, char *buf, size_t len);
/* "200M", "1G", "1.5GiB", "4096B"; a bare number is MiB, as in the seed's
 * tools.  -EINVAL on bad input, -ERANGE beyond 2^63. */
int jma_parse_size(const char *text, uint64_t *bytes);

/* abs: each arena's greatest value of @m over iterations [from, to], if it
 * reaches @threshold; sorted by value, greatest first; ties by arena. */
struct jma_abs_row {
	int arena;		/* JMA_ARENA_ALL for the whole process */
	unsigned iter;		/* first iteration with that value */
	uint64_t value;
};

/* del: changes of @m between consecutive iterations i-1 -> i, from < i <= to,
 * whose absolute value reaches @threshold; greatest magnitude first.  An arena
 * missing from a sample counts as 0 there (it did not exist yet). */
struct jma_del_row {
	int arena;
	unsigned iter;		/* the later iteration; the change is from iter-1 */
	uint64_t before, after;
	int64_t change;
};

/* eff: active / mapped per arena and iteration, for the arenas whose mapped
 * reaches @threshold somewhere in [from, to].  ratio[i * narenas + a] is for
 * iteration from + i and arenas[a]; NaN where the arena is absent or maps
 * nothing. */
struct jma_eff {
	size_t narenas, niters;
	unsigned from;
	int *arenas;		/* JMA_ARENA_ALL first, then ascending */
	double *ratio;
};

/* Iterations: @to is inclusive and clamped to the last sample; @from > the
 * last sample or @from > @to is -ERANGE.  Rows are malloc'ed (free()); -ENOMEM. */
int jma_report_abs(const struct jma_series *ser, enum jma_metric m, uint64_t threshold,
		   unsigned from, unsigned to, struct jma_abs_row **rows, size_t *n) JMA_MUST_CHECK;
int jma_report_del(const struct jma_series *ser, enum jma_metric m, uint64_t threshold,
		   unsigned from, unsigned to, struct jma_del_row **rows, size_t *n) JMA_MUST_CHECK;
int jma_report_eff(const struct jma_series *ser, uint64_t threshold, unsigned from, unsigned to,
		   struct jma_eff *out) JMA_MUST_CHECK;
void jma_eff_free(struct jma_eff *e);

/* An SVG line chart of @m over iterations [from, to]: the whole process and
 * the (up to 8) arenas with the greatest values.  @title is escaped. */
int jma_report_svg(FILE *f, const struct jma_series *ser, enum jma_metric m, unsigned from,
		   unsigned to, const char *title) JMA_MUST_CHECK;

JMA_API_END

#endif
