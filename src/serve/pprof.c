/* pprof.c -- /debug/pprof/heap and /allocs, as Go's net/http/pprof serves them.
 *
 * A fresh heap profile (prof.dump, shared and kept --min-interval like every
 * answer) is named from the live process and encoded by the library's pprof
 * writer (src/heap/pprof.c: gzip'd profile.proto with Function and Line
 * records, so `go tool pprof` never asks for /debug/pprof/symbol).
 * ?debug=1 is the text `analyze` prints; ?seconds=N the change over N seconds
 * (two dumps, the first subtracted, as `prof window`).  The naming runs in a
 * child too: it parses the target's own ELF files.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void pprof_heap(struct serve_ctx *sc, struct target *t, int allocs, int debug, unsigned seconds,
		struct reply *r)
{
	const struct serve_cfg *cfg = sc->cfg;
	struct op_result d1, d2 = { 0 }, rep;
	struct op_arg a = { .kind = OP_REPORT, .pid = t->pid,
			    .format = debug ? JMA_HEAP_TEXT : JMA_HEAP_PPROF,
			    .sample = allocs ? JMA_HEAP_ALLOC_SPACE : JMA_HEAP_INUSE_SPACE,
			    .need_alloc = allocs };
	double now = serve_now();

	if (cache_wait(sc, t, OP_DUMP, now - cfg->min_interval, now + cfg->timeout, &d1)) {
		reply_failed(r, t, "a heap profile", &d1);
		op_result_clear(&d1);
		return;
	}
	a.heap = d1.data;
	a.heap_len = d1.len;
	if (seconds) {
		sleep_s(seconds);
		now = serve_now();
		if (cache_wait(sc, t, OP_DUMP, now, now + cfg->timeout, &d2)) {
			reply_failed(r, t, "the second heap profile", &d2);
			goto out;
		}
		a.base = d1.data;
		a.base_len = d1.len;
		a.heap = d2.data;
		a.heap_len = d2.len;
	}
	sem_take(&sc->report_sem);
	op_run(cfg, &a, &rep);
	sem_give(&sc->report_sem);
	if (rep.rc) {
		reply_failed(r, t, "the profile's report", &rep);
	} else {
		r->status = 200;
		r->type = debug ? "text/plain; charset=utf-8" : "application/octet-stream";
		r->filename = debug ? NULL : allocs ? "allocs" : "heap";
		r->body = rep.data;
		r->len = rep.len;
		rep.data = NULL;
	}
	op_result_clear(&rep);
out:
	op_result_clear(&d1);
	op_result_clear(&d2);
}
