/* metrics.c -- /metrics: Prometheus text format 0.0.4, or OpenMetrics 1.0 when asked.
 *
 * Names follow Prometheus's guide: base units (_bytes, _seconds), jemalloc_*
 * for what jemalloc says, jemattach_* for what the exporter measured, an
 * `up` per target, no generic "type" label.  Every target's series carry
 * pid, comm and unit (the last component of its cgroup path: a systemd unit,
 * a container's scope).  The two formats differ only in counters' and infos'
 * family names (OpenMetrics names the family without _total / _info), the
 * content type, and OpenMetrics' closing "# EOF".
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

enum mtype { GAUGE, COUNTER, INFO };

struct render {
	FILE *f;
	int om;
	struct target **v;
	struct op_result *res;
	struct op_sample *smp;	/* decoded, per target; ok[i] says which */
	int *ok;
	size_t n;
	int arenas;		/* --arenas */
};

/* "# HELP" and "# TYPE" for @name, the sample name. */
static void family(struct render *r, const char *name, enum mtype type, const char *help)
{
	static const char *const tn[] = { "gauge", "counter", "info" };
	size_t len = strlen(name);

	/* The text format has no info type: a gauge of value 1. */
	if (r->om && type != GAUGE)
		len -= type == COUNTER ? 6 : 5;		/* _total, _info */
	fprintf(r->f, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)len, name, help, (int)len, name,
		tn[type == INFO && !r->om ? GAUGE : type]);
}

static void labels(struct render *r, size_t i)
{
	metrics_labels(r->f, r->v[i]);
}

static void value_u(struct render *r, size_t i, const char *name, unsigned long long v)
{
	fputs(name, r->f);
	labels(r, i);
	fprintf(r->f, "} %llu\n", v);
}

static void value_d(struct render *r, size_t i, const char *name, double v)
{
	fputs(name, r->f);
	labels(r, i);
	fprintf(r->f, "} %.9g\n", v);
}

/* One process-wide jemalloc gauge, for every target that answered. */
static void stat_family(struct render *r, const char *name, size_t off, const char *help)
{
	family(r, name, GAUGE, help);
	for (size_t i = 0; i < r->n; i++)
		if (r->ok[i])
			value_u(r, i, name, *(const uint64_t *)((const char *)&r->smp[i].smp + off));
}

static void arena_family(struct render *r, const char *name, size_t off, const char *help)
{
	family(r, name, GAUGE, help);
	for (size_t i = 0; i < r->n; i++)
		for (size_t a = 0; r->ok[i] && a < r->smp[i].smp.narenas; a++) {
			const struct jma_arena_sample *as = &r->smp[i].smp.arenas[a];

			fputs(name, r->f);
			labels(r, i);
			fprintf(r->f, ",arena=\"%u\"} %llu\n", as->index,
				(unsigned long long)*(const uint64_t *)((const char *)as + off));
		}
}

#define SMP(field) offsetof(struct jma_sample, field)
#define ARN(field) offsetof(struct jma_arena_sample, field)

static void jemalloc_series(struct render *r)
{
	stat_family(r, "jemalloc_allocated_bytes", SMP(allocated),
		    "Bytes in allocations the application holds (stats.allocated).");
	stat_family(r, "jemalloc_active_bytes", SMP(active),
		    "Bytes in active pages, a multiple of the page size (stats.active).");
	stat_family(r, "jemalloc_metadata_bytes", SMP(metadata),
		    "Bytes of jemalloc's own metadata (stats.metadata).");
	stat_family(r, "jemalloc_resident_bytes", SMP(resident),
		    "Bytes in physically resident pages jemalloc maps (stats.resident).");
	stat_family(r, "jemalloc_mapped_bytes", SMP(mapped),
		    "Bytes in extents jemalloc has mapped and in use (stats.mapped).");
	stat_family(r, "jemalloc_retained_bytes", SMP(retained),
		    "Bytes of virtual memory retained for reuse, not returned (stats.retained).");
	stat_family(r, "jemalloc_dirty_bytes", SMP(dirty),
		    "Bytes in dirty pages not yet purged, all arenas.");
	stat_family(r, "jemalloc_muzzy_bytes", SMP(muzzy),
		    "Bytes in muzzy pages (purged lazily), all arenas.");

	family(r, "jemalloc_prof_enabled", GAUGE,
	       "1 when heap profiling was enabled at start (opt.prof).");
	for (size_t i = 0; i < r->n; i++)
		if (r->ok[i])
			value_u(r, i, "jemalloc_prof_enabled", r->smp[i].opt_prof == 1);
	family(r, "jemalloc_prof_active", GAUGE, "1 when heap profiling samples now (prof.active).");
	for (size_t i = 0; i < r->n; i++)
		if (r->ok[i])
			value_u(r, i, "jemalloc_prof_active", r->smp[i].prof_active == 1);
	family(r, "jemalloc_build_info", INFO,
	       "The jemalloc in the process: version, and whether built with profiling.");
	for (size_t i = 0; i < r->n; i++) {
		if (!r->ok[i])
			continue;
		fputs("jemalloc_build_info", r->f);
		labels(r, i);
		fputs(",version=\"", r->f);
		metrics_label(r->f, r->smp[i].version);
		fprintf(r->f, "\",prof=\"%s\"} 1\n", r->smp[i].config_prof == 1 ? "true" : "false");
	}
	if (!r->arenas)
		return;
	arena_family(r, "jemalloc_arena_active_bytes", ARN(active), "Bytes in active pages of the arena.");
	arena_family(r, "jemalloc_arena_dirty_bytes", ARN(dirty), "Bytes in dirty pages of the arena.");
	arena_family(r, "jemalloc_arena_muzzy_bytes", ARN(muzzy), "Bytes in muzzy pages of the arena.");
	arena_family(r, "jemalloc_arena_mapped_bytes", ARN(mapped), "Bytes mapped by the arena.");
	arena_family(r, "jemalloc_arena_retained_bytes", ARN(retained),
		     "Bytes retained by the arena for reuse.");
	arena_family(r, "jemalloc_arena_resident_bytes", ARN(resident), "Bytes resident in the arena.");
	arena_family(r, "jemalloc_arena_small_allocated_bytes", ARN(small_allocated),
		     "Bytes in small allocations of the arena.");
	arena_family(r, "jemalloc_arena_large_allocated_bytes", ARN(large_allocated),
		     "Bytes in large allocations of the arena.");
	arena_family(r, "jemalloc_arena_threads", ARN(nthreads), "Threads bound to the arena.");
}

static void exporter_series(struct serve_ctx *sc, struct render *r)
{
	family(r, "jemattach_target_up", GAUGE,
	       "1 when the last answer for the process succeeded; else see the reason.");
	for (size_t i = 0; i < r->n; i++)
		value_u(r, i, "jemattach_target_up", r->ok[i]);
	family(r, "jemattach_target_down_reason", GAUGE,
	       "1 for a process that gave no answer, with why (attach, missing, unsafe, timeout, "
	       "budget, target); the message is in /targets.");
	for (size_t i = 0; i < r->n; i++) {
		if (r->ok[i])
			continue;
		fputs("jemattach_target_down_reason", r->f);
		labels(r, i);
		fprintf(r->f, ",reason=\"%s\"} 1\n", r->v[i]->state == T_NONE ? "missing"
			: op_kind_reason(r->res[i].kind, r->res[i].rc));
	}
	family(r, "jemattach_scrape_duration_seconds", GAUGE,
	       "Wall time of the operation that read the process's answer.");
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i]->state == T_JEMALLOC)
			value_d(r, i, "jemattach_scrape_duration_seconds", r->res[i].secs);
	family(r, "jemattach_target_held_seconds", GAUGE,
	       "How long the process's borrowed thread was kept from its work for the answer.");
	for (size_t i = 0; i < r->n; i++)
		if (r->ok[i])
			value_d(r, i, "jemattach_target_held_seconds", (double)r->res[i].held_ns / 1e9);
	family(r, "jemattach_answer_age_seconds", GAUGE,
	       "Age of the answer served (answers are kept for --min-interval).");
	for (size_t i = 0; i < r->n; i++)
		if (r->ok[i])
			value_d(r, i, "jemattach_answer_age_seconds", jma_clock_s(CLOCK_MONOTONIC) - r->res[i].started);
	family(r, "jemattach_attaches_total", COUNTER,
	       "Operations that attached to the process since it was found.");
	for (size_t i = 0; i < r->n; i++) {
		unsigned long long a;

		pthread_mutex_lock(&r->v[i]->mu);
		a = r->v[i]->attaches;
		pthread_mutex_unlock(&r->v[i]->mu);
		value_u(r, i, "jemattach_attaches_total", a);
	}
	pthread_mutex_lock(&sc->mu);
	family(r, "jemattach_targets", GAUGE, "Processes served.");
	fprintf(r->f, "jemattach_targets %zu\n", r->n);
	family(r, "jemattach_discovery_duration_seconds", GAUGE,
	       "Wall time of the last scan of /proc for jemalloc processes, probes included.");
	fprintf(r->f, "jemattach_discovery_duration_seconds %.9g\n", sc->scan_secs);
	family(r, "jemattach_discovery_cpu_seconds", GAUGE,
	       "CPU time the last scan spent reading /proc (probes run in children, not counted).");
	fprintf(r->f, "jemattach_discovery_cpu_seconds %.9g\n", sc->scan_cpu);
	family(r, "jemattach_discovery_probes_total", COUNTER,
	       "Processes probed for a jemalloc (one per new program run).");
	fprintf(r->f, "jemattach_discovery_probes_total %llu\n", (unsigned long long)sc->probes);
	pthread_mutex_unlock(&sc->mu);
	family(r, "jemattach_http_requests_total", COUNTER, "HTTP requests received.");
	fprintf(r->f, "jemattach_http_requests_total %lu\n", atomic_load(&sc->requests));
	family(r, "jemattach_http_rejected_total", COUNTER,
	       "HTTP requests refused: malformed parameters, failed authentication.");
	fprintf(r->f, "jemattach_http_rejected_total %lu\n", atomic_load(&sc->rejected));
}

int metrics_render(struct serve_ctx *sc, struct target **v, struct op_result *res, size_t n,
		   int openmetrics, FILE *f)
{
	struct render r = { f, openmetrics, v, res, NULL, NULL, n, sc->cfg->arenas };

	r.smp = calloc(n ? n : 1, sizeof(*r.smp));
	r.ok = calloc(n ? n : 1, sizeof(*r.ok));
	if (!r.smp || !r.ok) {
		free(r.smp);
		free(r.ok);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		r.ok[i] = v[i]->state == T_JEMALLOC && op_sample_decode(&res[i], &r.smp[i]) == 0;
	jemalloc_series(&r);
	exporter_series(sc, &r);
	if (sc->cfg->census_metrics)
		census_metrics(sc, v, n, f);
	if (openmetrics)
		fputs("# EOF\n", f);
	free(r.smp);
	free(r.ok);
	return ferror(f) ? -EIO : 0;
}
