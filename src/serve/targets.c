/* targets.c -- which processes are served: discovery, probes, following restarts; /targets.
 *
 * Every discover_interval the scanner lists /proc.  A process the selectors
 * choose (all of them without --target; pinfo.c) and not yet known by its
 * PID and mark (its start time and auxiliary vector: a restarted service, a
 * PID reused or an exec is a new target) is probed once in a child: jma_open
 * finds jemalloc as `info` does (shared, preloaded, static, prefixed).  A process without jemalloc is remembered and
 * not probed again -- unless it is young (started less than YOUNG_S ago): it
 * may still be loading its libraries.  So a steady host costs one read of
 * /proc/PID/{stat,status,cgroup} per process per scan, and a probe per new
 * program run (measured: scan_secs, jemattach_discovery_duration_seconds).
 *
 * What the server reads of a process, and what not: pinfo.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve.h"

#define YOUNG_S		10.0
#define PROBE_WAIT_S	5.0	/* a scan (a request) waits this long for its probes */

/* Probe @t in a child: does it have jemalloc, and where. */
static void probe(struct serve_ctx *sc, struct target *t)
{
	struct op_arg a = { .kind = OP_PROBE, .pid = t->pid, .uid = t->uid, .opt = &sc->cfg->opt };
	struct op_result r = { 0 };

	if (slots_take(sc, &sc->probe_slots, t->uid)) {
		snprintf(r.msg, sizeof(r.msg), "the server stops");
		r.rc = -ECANCELED;
	} else {
		op_run(sc, &a, &r);
		slots_give(&sc->probe_slots, t->uid);
	}
	pthread_mutex_lock(&sc->mu);
	sc->probes++;
	if (!r.rc && r.len == sizeof(t->probe)) {
		memcpy(&t->probe, r.data, sizeof(t->probe));
		t->state = T_JEMALLOC;
	} else {
		t->state = T_NONE;
		snprintf(t->why, sizeof(t->why), "%s", r.msg[0] ? r.msg : "no answer");
	}
	t->probing = 0;
	pthread_cond_broadcast(&sc->probe_cv);
	pthread_mutex_unlock(&sc->mu);
	op_result_clear(&r);
}

static void *probe_main(void *arg)
{
	struct target *t = arg;
	struct serve_ctx *sc = t->sc;

	probe(sc, t);
	target_put(sc, t);
	pthread_mutex_lock(&sc->fmu);
	sc->inflight--;
	pthread_cond_broadcast(&sc->fcv);
	pthread_mutex_unlock(&sc->fmu);
	return NULL;
}

/* Probe @t in a thread of its own, unless one runs (caller holds sc->mu):
 * a probe stuck in the kernel holds that thread, never the scanner nor a
 * request.  Probes of one user's processes take half the probe slots at
 * most (slots_take). */
static void probe_start(struct serve_ctx *sc, struct target *t)
{
	pthread_attr_t at;
	pthread_t th;

	if (t->probing)
		return;
	t->probing = 1;
	t->sc = sc;
	t->refs++;
	pthread_mutex_lock(&sc->fmu);
	sc->inflight++;
	pthread_mutex_unlock(&sc->fmu);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 8 << 20);	/* as a flight's (cache.c) */
	if (pthread_create(&th, &at, probe_main, t)) {
		t->probing = 0;
		t->refs--;
		pthread_mutex_lock(&sc->fmu);
		sc->inflight--;
		pthread_mutex_unlock(&sc->fmu);
	}
	pthread_attr_destroy(&at);
}

/* Wait until none of @v (@n) is being probed, at most PROBE_WAIT_S (caller
 * holds sc->mu). */
static void probes_wait(struct serve_ctx *sc, struct target **v, size_t n)
{
	double end = jma_clock_s(CLOCK_MONOTONIC) + PROBE_WAIT_S;

	for (size_t i = 0; i < n; i++)
		while (v[i]->probing && !atomic_load(&sc->closing) &&
		       jma_clock_s(CLOCK_MONOTONIC) < end)
			cache_nap(&sc->probe_cv, &sc->mu, end);
}

/* Caller holds sc->mu. */
static int list_add(struct serve_ctx *sc, struct target *t)
{
	if (sc->nt == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 64;
		struct target **v = realloc(sc->tv, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sc->tv = v;
		sc->cap = cap;
	}
	sc->tv[sc->nt++] = t;
	return 0;
}

/* Caller holds sc->mu. */
static struct target *list_find(struct serve_ctx *sc, pid_t pid)
{
	for (size_t i = 0; i < sc->nt; i++)
		if (sc->tv[i]->pid == pid)
			return sc->tv[i];
	return NULL;
}

/* Caller holds sc->mu; drops the list's reference (freed later if in use). */
static void list_remove(struct serve_ctx *sc, size_t i)
{
	struct target *t = sc->tv[i];

	t->gone = 1;
	sc->tv[i] = sc->tv[--sc->nt];
	if (--t->refs == 0)
		target_free(t);
}

static void list_drop(struct serve_ctx *sc, struct target *t)
{
	for (size_t i = 0; i < sc->nt; i++)
		if (sc->tv[i] == t) {
			list_remove(sc, i);
			return;
		}
}

/* Look at process @p (its mark @mark), seen in scan @gen: a known target, a
 * new one to probe (returned, referenced), or one to leave?  Caller holds sc->mu. */
static struct target *consider(struct serve_ctx *sc, const struct pinfo *p, uint64_t mark, int how,
			       uint64_t gen)
{
	struct target *t = list_find(sc, p->pid);

	if (t && t->mark != mark) {
		/* Another program in that PID now: a new target. */
		list_drop(sc, t);
		t = NULL;
	}
	if (t) {
		t->seen = gen;
		snprintf(t->comm, sizeof(t->comm), "%s", p->comm);
		/* Without jemalloc: looked at again only while it may still be
		 * loading its libraries, or if the probe could not tell. */
		if (t->state == T_NONE && (p->age < YOUNG_S || !strstr(t->why, "no jemalloc"))) {
			t->state = T_UNKNOWN;
			t->refs++;
			return t;
		}
		return NULL;
	}
	t = target_new(p, mark, how == 2);
	if (!t || list_add(sc, t)) {
		free(t);
		return NULL;
	}
	t->seen = gen;
	t->refs++;
	return t;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int targets_scan(struct serve_ctx *sc)
{
	double t0 = jma_clock_s(CLOCK_MONOTONIC), c0 = thread_cpu(), up = pinfo_uptime(), c1;
	struct target **probe_v = NULL;
	size_t nprobe = 0, capprobe = 0;
	struct dirent *d;
	uint64_t gen;
	int nje = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	pthread_mutex_lock(&sc->mu);
	gen = ++sc->scans;
	pthread_mutex_unlock(&sc->mu);
	while ((d = readdir(dir))) {
		struct pinfo p;
		struct target *t;
		uint64_t mark;
		int how;
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		how = pinfo_read((pid_t)pid, up, sc->cfg->need_exe, &p) == 0 ? pinfo_selected(sc, &p) : 0;
		if (!how)
			continue;
		mark = pinfo_mark(p.pid, p.start);
		pthread_mutex_lock(&sc->mu);
		t = consider(sc, &p, mark, how, gen);
		pthread_mutex_unlock(&sc->mu);
		if (!t)
			continue;
		if (nprobe == capprobe) {
			struct target **v = realloc(probe_v, (capprobe = capprobe ? capprobe * 2 : 16) *
						    sizeof(*v));
			if (!v) {
				target_put(sc, t);
				break;
			}
			probe_v = v;
		}
		probe_v[nprobe++] = t;
	}
	closedir(dir);
	c1 = thread_cpu();
	pthread_mutex_lock(&sc->mu);
	for (size_t i = sc->nt; i-- > 0;) {
		if (sc->tv[i]->seen != gen) {
			list_remove(sc, i);
			continue;
		}
		/* What is kept and no longer fresh goes (BLOB_TOTAL_MAX). */
		pthread_mutex_lock(&sc->tv[i]->mu);
		cache_trim(sc, sc->tv[i]);
		pthread_mutex_unlock(&sc->tv[i]->mu);
	}
	for (size_t i = 0; i < nprobe; i++)
		if (!probe_v[i]->gone)
			probe_start(sc, probe_v[i]);
	probes_wait(sc, probe_v, nprobe);
	pthread_mutex_unlock(&sc->mu);
	child_reap();
	for (size_t i = 0; i < nprobe; i++)
		target_put(sc, probe_v[i]);
	free(probe_v);
	pthread_mutex_lock(&sc->mu);
	for (size_t i = 0; i < sc->nt; i++)
		nje += sc->tv[i]->state == T_JEMALLOC;
	sc->last_scan = jma_clock_s(CLOCK_MONOTONIC);
	sc->scan_secs = sc->last_scan - t0;
	sc->scan_cpu = c1 - c0;
	sc->scan_probes = nprobe;
	pthread_mutex_unlock(&sc->mu);
	return nje;
}

int targets_get(struct serve_ctx *sc, pid_t pid, struct target **out, char *why, size_t whylen)
{
	struct pinfo p;
	struct target *t;
	uint64_t mark;
	int how, err = 0;

	*out = NULL;
	if (pinfo_read(pid, pinfo_uptime(), sc->cfg->need_exe, &p))
		return -ESRCH;
	if (!(how = pinfo_selected(sc, &p)))
		return -EACCES;
	mark = pinfo_mark(pid, p.start);
	pthread_mutex_lock(&sc->mu);
	t = list_find(sc, pid);
	if (t && t->mark != mark)
		t = NULL;
	if (t) {
		t->refs++;
	} else {
		/* Not scanned yet: probe it now, as the scanner would. */
		pthread_mutex_unlock(&sc->mu);
		if (!(t = target_new(&p, mark, how == 2)))
			return -ESRCH;
		pthread_mutex_lock(&sc->mu);
		t->seen = sc->scans;
		if (list_find(sc, pid) || list_add(sc, t))
			t->refs--;	/* (not listed: ours alone) */
		t->refs++;
	}
	if (t->state == T_UNKNOWN) {
		probe_start(sc, t);
		probes_wait(sc, &t, 1);
	}
	if (t->state != T_JEMALLOC) {
		snprintf(why, whylen, "%s", t->state == T_NONE ? t->why : "not probed yet");
		err = -ENOENT;
	}
	pthread_mutex_unlock(&sc->mu);
	if (err)
		target_put(sc, t);
	else
		*out = t;
	return err;
}

struct target **targets_list(struct serve_ctx *sc, size_t *n)
{
	struct target **v;

	pthread_mutex_lock(&sc->mu);
	v = malloc((sc->nt ? sc->nt : 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < sc->nt; i++) {
		struct target *t = sc->tv[i];

		if (t->state == T_JEMALLOC || (t->named && t->state == T_NONE)) {
			t->refs++;
			v[(*n)++] = t;
		}
	}
	pthread_mutex_unlock(&sc->mu);
	return v;
}

void targets_put_all(struct serve_ctx *sc, struct target **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		target_put(sc, v[i]);
	free(v);
}

/* The first scan is serve_run's, before it listens: wait, then scan. */
static void *scanner(void *arg)
{
	struct serve_ctx *sc = arg;

	pthread_mutex_lock(&sc->mu);
	while (!sc->stopping) {
		double next = jma_clock_s(CLOCK_MONOTONIC) + sc->cfg->discover_interval;
		struct timespec ts = { (time_t)next, (long)((next - (double)(time_t)next) * 1e9) };

		while (!sc->stopping && jma_clock_s(CLOCK_MONOTONIC) < next)
			pthread_cond_timedwait(&sc->stop_cv, &sc->mu, &ts);
		if (sc->stopping)
			break;
		pthread_mutex_unlock(&sc->mu);
		targets_scan(sc);
		pthread_mutex_lock(&sc->mu);
	}
	pthread_mutex_unlock(&sc->mu);
	return NULL;
}

int targets_init(struct serve_ctx *sc)
{
	sc->self = getpid();
	pthread_mutex_init(&sc->mu, NULL);
	serve_cond_init(&sc->stop_cv);
	serve_cond_init(&sc->probe_cv);
	return 0;
}

int targets_start(struct serve_ctx *sc)
{
	int err = pthread_create(&sc->scanner, NULL, scanner, sc);

	sc->scanner_on = !err;
	return -err;
}

void targets_stop(struct serve_ctx *sc)
{
	pthread_mutex_lock(&sc->mu);
	sc->stopping = 1;
	pthread_cond_broadcast(&sc->stop_cv);
	pthread_mutex_unlock(&sc->mu);
	if (sc->scanner_on)
		pthread_join(sc->scanner, NULL);
	sc->scanner_on = 0;
}

void targets_fini(struct serve_ctx *sc)
{
	pthread_mutex_lock(&sc->mu);
	while (sc->nt)
		list_remove(sc, sc->nt - 1);
	pthread_mutex_unlock(&sc->mu);
	free(sc->tv);
	sc->tv = NULL;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

int targets_json(struct serve_ctx *sc, FILE *f)
{
	pthread_mutex_lock(&sc->mu);
	fprintf(f, "{\"scan_seconds\": %.6f, \"scan_cpu_seconds\": %.6f, \"scan_probes\": %zu, "
		"\"scans\": %llu, \"probes\": %llu, \"targets\": [", sc->scan_secs, sc->scan_cpu,
		sc->scan_probes, (unsigned long long)sc->scans, (unsigned long long)sc->probes);
	for (size_t i = 0, k = 0; i < sc->nt; i++) {
		struct target *t = sc->tv[i];
		const struct op_result *r;

		if (t->state != T_JEMALLOC && !t->named)
			continue;
		fprintf(f, "%s\n {\"pid\": %d, \"comm\": ", k++ ? "," : "", (int)t->pid);
		json_str(f, t->comm);
		fprintf(f, ", \"uid\": %u, \"cgroup\": ", (unsigned)t->uid);
		json_str(f, t->cgroup);
		fprintf(f, ", \"unit\": ");
		json_str(f, t->unit);
		if (t->state != T_JEMALLOC) {
			fprintf(f, ", \"jemalloc\": false, \"why\": ");
			json_str(f, t->state == T_NONE ? t->why : "not probed yet");
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ", \"jemalloc\": true, \"module\": ");
		json_str(f, t->probe.module);
		fprintf(f, ", \"prefix\": ");
		json_str(f, t->probe.prefix);
		fprintf(f, ", \"static\": %s", t->probe.is_static ? "true" : "false");
		pthread_mutex_lock(&t->mu);
		r = &t->fl[OP_SAMPLE].res;
		fprintf(f, ", \"attaches\": %llu", (unsigned long long)t->attaches);
		if (t->fl[OP_SAMPLE].kept) {
			fprintf(f, ", \"up\": %d, \"age_seconds\": %.3f, \"held_seconds\": %.6f, "
				"\"reason\": ", r->rc == 0, jma_clock_s(CLOCK_MONOTONIC) - r->started,
				(double)r->held_ns / 1e9);
			json_str(f, r->rc ? r->msg : "");
		}
		pthread_mutex_unlock(&t->mu);
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
	pthread_mutex_unlock(&sc->mu);
	return 0;
}
