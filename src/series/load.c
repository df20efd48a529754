/* load.c -- reading a series: watch's JSON lines or concatenated malloc_stats_print JSON documents. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "series/series.h"

/* Larger inputs are not a stats log anyone meant to give us. */
#define FILE_MAX ((size_t)4 << 30)

struct loader {
	char *err;
	size_t errlen;
	size_t doc;		/* 1-based, for messages */
};

static int bad(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(l->err, l->errlen, "document %zu: ", l->doc);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < l->errlen)
		vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The byte count at @path ("a.b") under @o; absent is 0 (an older jemalloc,
 * or stats printed without that section), anything but a non-negative
 * integer is an error. */
static int get_u64(struct loader *l, json_t *o, const char *path, uint64_t *v)
{
	char key[64];
	const char *dot = strchr(path, '.');
	json_t *x;

	if (dot) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		x = json_object_get(o, key);
		if (!x) {
			*v = 0;
			return 0;
		}
		return json_is_object(x) ? get_u64(l, x, dot + 1, v)
					 : bad(l, "\"%s\" is not an object", key);
	}
	x = json_object_get(o, path);
	*v = 0;
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return bad(l, "\"%s\" is not a byte count", path);
	*v = (uint64_t)json_integer_value(x);
	return 0;
}

static int cmp_arena(const void *a, const void *b)
{
	const struct jma_arena_sample *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* One arena object, field names by @stats_names (jemalloc's) or watch's. */
static int load_arena(struct loader *l, json_t *o, int stats_names, uint64_t page,
		      struct jma_arena_sample *a)
{
	for (const struct series_field *f = series_arena; f->key; f++) {
		int err = get_u64(l, o, stats_names ? f->stats : f->key, series_at(a, f));

		if (err)
			return err;
		if (f->pages) {
			if (*series_at(a, f) && !page)
				return bad(l, "arena %u: \"%s\" is in pages but the page size is "
					   "missing", a->index, f->key);
			*series_at(a, f) *= page;
		}
	}
	return 0;
}

static int index_of(const char *key, unsigned *idx)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)key[0]))
		return -1;
	v = strtoul(key, &end, 10);
	if (*end || v >= 4096)
		return -1;
	*idx = (unsigned)v;
	return 0;
}

/* {"jemalloc": {"arenas": {"page"}, "stats": {...}, "stats.arenas": {"merged",
 * "0", "1", ...}}} as malloc_stats_print("J") writes it. */
static int from_stats(struct loader *l, json_t *jem, struct jma_sample *smp)
{
	json_t *st = json_object_get(jem, "stats"), *sa = json_object_get(jem, "stats.arenas");
	json_t *merged, *v;
	const char *key;
	int err;

	if (!json_is_object(st))
		return bad(l, "malloc_stats_print JSON without \"stats\" (printed without "
			   "the general section?)");
	err = get_u64(l, jem, "arenas.page", &smp->page);
	for (const struct series_field *f = series_global; f->key && !err; f++)
		if (f->stats)
			err = get_u64(l, st, f->stats, series_at(smp, f));
	if (err || !json_is_object(sa))
		return err;
	merged = json_object_get(sa, "merged");
	if (merged && (err = get_u64(l, merged, "pdirty", &smp->dirty)) == 0)
		err = get_u64(l, merged, "pmuzzy", &smp->muzzy);
	if (err)
		return err;
	if ((smp->dirty || smp->muzzy) && !smp->page)
		return bad(l, "pages counted but \"arenas\".\"page\" is missing");
	smp->dirty *= smp->page;
	smp->muzzy *= smp->page;
	smp->arenas = calloc(json_object_size(sa) + 1, sizeof(*smp->arenas));
	if (!smp->arenas)
		return -ENOMEM;
	json_object_foreach(sa, key, v) {
		struct jma_arena_sample *a = &smp->arenas[smp->narenas];

		if (index_of(key, &a->index))
			continue;	/* "merged", "destroyed" */
		if (!json_is_object(v))
			return bad(l, "arena \"%s\" is not an object", key);
		if ((err = load_arena(l, v, 1, smp->page, a)))
			return err;
		smp->narenas++;
	}
	qsort(smp->arenas, smp->narenas, sizeof(*smp->arenas), cmp_arena);
	return 0;
}

/* A record as series.c writes it. */
static int from_record(struct loader *l, json_t *o, struct jma_sample *smp)
{
	json_t *arr = json_object_get(o, "arenas"), *x;
	uint64_t v;
	size_t i;
	int err;

	x = json_object_get(o, "time");
	if (x && !json_is_number(x))
		return bad(l, "\"time\" is not a number");
	smp->time = x ? json_number_value(x) : 0;
	if ((err = get_u64(l, o, "iter", &v)))
		return err;
	smp->iter = (unsigned)v;
	if ((err = get_u64(l, o, "pid", &v)))
		return err;
	smp->pid = (pid_t)v;
	x = json_object_get(o, "comm");
	if (json_is_string(x))
		snprintf(smp->comm, sizeof(smp->comm), "%s", json_string_value(x));
	if ((err = get_u64(l, o, "hold_ns", &smp->hold_ns)) || (err = get_u64(l, o, "page", &smp->page)))
		return err;
	for (const struct series_field *f = series_global; f->key; f++)
		if ((err = get_u64(l, o, f->key, series_at(smp, f))))
			return err;
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return bad(l, "\"arenas\" is not an array");
	smp->arenas = calloc(json_array_size(arr) + 1, sizeof(*smp->arenas));
	if (!smp->arenas)
		return -ENOMEM;
	json_array_foreach(arr, i, x) {
		struct jma_arena_sample *a = &smp->arenas[smp->narenas];

		if (!json_is_object(x) || !json_is_integer(json_object_get(x, "arena")))
			return bad(l, "arenas[%zu] has no \"arena\" number", i);
		if ((err = get_u64(l, x, "arena", &v)))
			return err;
		a->index = (unsigned)v;
		if ((err = load_arena(l, x, 0, smp->page, a)))
			return err;
		smp->narenas++;
	}
	qsort(smp->arenas, smp->narenas, sizeof(*smp->arenas), cmp_arena);
	return 0;
}

static int add_doc(struct loader *l, json_t *doc, struct jma_series *out)
{
	struct jma_sample *v, *smp;
	json_t *jem = json_object_get(doc, "jemalloc");
	int err;

	if (!json_is_object(doc))
		return bad(l, "not a JSON object");
	if (!jem && !json_object_get(doc, "allocated"))
		return bad(l, "neither a watch record nor malloc_stats_print JSON "
			   "(no \"jemalloc\" or \"allocated\")");
	v = realloc(out->v, (out->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->v = v;
	smp = &v[out->n];
	memset(smp, 0, sizeof(*smp));
	smp->iter = (unsigned)out->n;
	err = jem ? (json_is_object(jem) ? from_stats(l, jem, smp) : bad(l, "\"jemalloc\" is not "
									 "an object"))
		  : from_record(l, doc, smp);
	if (err) {
		jma_sample_clear(smp);
		return err;
	}
	out->n++;
	return 0;
}

int jma_series_parse(const char *buf, size_t len, struct jma_series *out, char *err, size_t errlen)
{
	struct loader l = { .err = err, .errlen = errlen };
	size_t off = 0, line = 1;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	while (!rc) {
		json_error_t je;
		json_t *doc;

		while (off < len && isspace((unsigned char)buf[off]))
			line += buf[off++] == '\n';
		if (off == len)
			break;
		l.doc++;
		/* Without the EOF check jansson stops after one value and reports
		 * in je.position how far it read: the next document starts there. */
		doc = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
		if (!doc) {
			rc = bad(&l, "line %zu: %s", line + (size_t)je.line - 1, je.text);
			break;
		}
		rc = add_doc(&l, doc, out);
		json_decref(doc);
		for (size_t i = off; i < off + (size_t)je.position && i < len; i++)
			line += buf[i] == '\n';
		off += (size_t)je.position;
	}
	if (!rc && !out->n) {
		snprintf(err, errlen, "no samples in it");
		rc = -EINVAL;
	}
	if (rc)
		jma_series_free(out);
	return rc;
}

int jma_series_load(const char *path, struct jma_series *out, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;
	struct stat st;
	size_t got = 0;
	char *buf;

	memset(out, 0, sizeof(*out));
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > FILE_MAX) {
		snprintf(err, errlen, "not a regular file of at most 4 GiB");
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s", strerror(-rc));
		}
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!rc)
		rc = jma_series_parse(buf, got, out, err, errlen);
	free(buf);
	return rc;
}

void jma_series_free(struct jma_series *ser)
{
	for (size_t i = 0; i < ser->n; i++)
		jma_sample_clear(&ser->v[i]);
	free(ser->v);
	ser->v = NULL;
	ser->n = 0;
}
