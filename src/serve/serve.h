/* serve.h -- `jemattach serve`: an HTTP exporter of the host's jemalloc processes.
 *
 * Built on the public API (include/) like the command line, one concept per file:
 *   child.c    one operation on a target, run in a forked child process
 *   ops.c      the operations a child runs: probe, sample, dump, stats, census, control,
 *              report
 *   targets.c  which processes are served: discovery, selectors, following restarts
 *   cache.c    one attach per target at a time; answers shared and kept --min-interval
 *   metrics.c  /metrics: Prometheus text 0.0.4, or OpenMetrics 1.0 when asked
 *   pprof.c    /debug/pprof/heap and /allocs: gzip'd profile.proto, ?debug=1, ?seconds=N;
 *              the sampler's window when the process runs without opt.prof
 *   census.c   /debug/census: a census (JSON or pprof), budgeted; per-type gauges
 *   webcfg.c   --web-config: TLS files and basic-auth users (bcrypt), exporter-toolkit's YAML
 *   http.c     the libmicrohttpd daemon: limits, authentication, routing, parameters
 *
 * Why a child process per operation (child.c): the library borrows a target's
 * thread with ptrace and waits for it on SIGCHLD, and it holds back SIGTERM &
 * co. while a thread is borrowed (attach/defer.c).  Both are per-process
 * facilities: in one process with many threads, one thread's sigtimedwait can
 * take the SIGCHLD another thread's target sent, and a deferred SIGTERM is
 * raised again in whichever thread happened to hold it.  A child per operation
 * is single-threaded, so the library runs exactly as under the CLI; a crash in
 * it (or in parsing a target's hostile ELF files) costs one answer, never the
 * server; the server's threads never ptrace anything.
 */
#ifndef JMA_SERVE_H
#define JMA_SERVE_H

#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jemattach.h>

#include "core/clock.h"

/* --- configuration (filled by src/cli/cmd_serve.c) ------------------------- */

enum serve_sel_kind { SEL_PID, SEL_COMM, SEL_UID, SEL_CGROUP };

struct serve_sel {
	enum serve_sel_kind kind;
	pid_t pid;
	uid_t uid;
	regex_t re;		/* SEL_COMM: extended, matched against /proc/PID/comm */
	char path[512];		/* SEL_CGROUP: a cgroup path prefix, on a component boundary */
	char text[600];		/* as given, for messages */
};

struct webcfg_user {
	char *name;
	char *hash;		/* bcrypt, "$2y$..." */
};

struct webcfg {
	char *cert_pem, *key_pem;	/* NULL: no TLS */
	struct webcfg_user *users;
	size_t nusers;
};

struct serve_cfg {
	struct jma_options opt;		/* each child's session */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char listen[300];		/* as given, for messages */
	int loopback;			/* addr is 127.0.0.0/8 or ::1 */
	struct serve_sel *sel;		/* --target; none: every jemalloc process */
	size_t nsel;
	double min_interval;		/* answers are kept this long (s) */
	double timeout;			/* a request's answer for one target (s) */
	double discover_interval;	/* s between scans of /proc */
	unsigned max_attaches;		/* children attached at once, all targets */
	int allow_control;		/* POST /prof: on, off, reset */
	int insecure;			/* non-loopback without TLS allowed */
	int arenas;			/* per-arena series */
	double max_overhead;		/* a sampler window ends past this share of the
					 * target's CPU (0..1); 0: no limit */
	double census_interval;		/* census answers are kept this long (s) */
	int census_owners;		/* censuses find what each root retains */
	unsigned census_metrics;	/* /metrics: gauges of this many types; 0: none */
	int verbose;
	const char *web_config;		/* --web-config, read by serve_run */
	struct webcfg web;
};

/* Read the web config, refuse a non-loopback address without TLS (unless
 * insecure), then run the server until SIGINT/SIGTERM; returns the exit code:
 * 0, 2 (bad web config, or TLS missing), 3 (cannot listen) (http.c).  The
 * entry point of jemattach-serve.so, which src/cli/cmd_serve.c loads. */
int serve_run(struct serve_cfg *cfg);

/* --- a child per operation (child.c) ---------------------------------------- */

/* What one operation brought back. */
struct op_result {
	int rc;			/* 0 or -errno */
	int kind;		/* enum jma_errkind */
	char msg[512];		/* why, when rc != 0; a note otherwise */
	uint64_t held_ns;	/* how long the target's thread was held */
	double secs;		/* the child's wall time */
	double started;		/* monotonic time the operation started */
	int attached;		/* the child attached (counted in jemattach_attaches_total) */
	char *data;		/* malloc'ed payload; NULL when none */
	size_t len;
};

void op_result_clear(struct op_result *r);
/* A deep copy of @src into @dst; -ENOMEM. */
int op_result_copy(struct op_result *dst, const struct op_result *src);

/* Runs in the child: fills @r (r->data malloc'ed). */
typedef void (*child_fn)(const void *arg, struct op_result *r);

/* Run @fn(@arg) in a forked child and collect its result in @out: at most
 * @max bytes of payload; a child still running after @hard_limit seconds is
 * killed (SIGKILL: the library's calls restore the target by themselves).  A
 * child that dies is an -EIO result saying how.  With @cancel, once *@cancel
 * is set the child is sent SIGTERM (once), which it must take as "finish
 * now with what you have" (the sampler's window).  Returns out->rc. */
int child_run(child_fn fn, const void *arg, double hard_limit, size_t max,
	      const atomic_int *cancel, struct op_result *out);
/* In a child run with a @cancel: set (to SIGTERM) when it is asked to finish. */
extern volatile sig_atomic_t child_cancelled;

/* --- the operations (ops.c) ------------------------------------------------- */

enum op_kind {
	OP_SAMPLE,		/* stats.*, version, profiling state (struct op_sample) */
	OP_DUMP,		/* a heap profile (prof.dump), as text */
	OP_STATS,		/* malloc_stats_print JSON */
	OP_CENSUS,		/* every live block (a census snapshot, census_diff.h) */
	OP_NCACHED,		/* the kinds above are shared and cached per target */
	OP_PROBE = OP_NCACHED,	/* is there a jemalloc (struct op_probe); attaches nothing */
	OP_PROF_ON,
	OP_PROF_OFF,
	OP_PROF_RESET,
	OP_REPORT,		/* a heap profile (minus a base) symbolized and reported */
	OP_SAMPLER,		/* a heap profile by uprobes (no opt.prof): a window, no stop */
};

struct op_arg {
	enum op_kind kind;
	pid_t pid;
	const struct jma_options *opt;
	unsigned sample_flags;		/* OP_SAMPLE: JMA_SAMPLE_* */
	const struct op_sample *fixed;	/* OP_SAMPLE: version, config.prof and opt.prof
					 * from an earlier answer (they never change in
					 * a process): not read again; NULL: read them */
	/* OP_REPORT */
	const char *heap, *base;	/* base may be NULL */
	size_t heap_len, base_len;
	enum jma_heap_format format;
	enum jma_heap_sample sample;
	unsigned top;
	int need_alloc;			/* refuse a profile without alloc_* counts */
	/* OP_SAMPLER */
	double seconds;			/* the window */
	int alloc_only;			/* follow no frees */
	double max_overhead;		/* 0..1; 0: none */
	const atomic_int *cancel;	/* set: end the window now (the server stops) */
	/* OP_CENSUS */
	unsigned census_flags;		/* JMA_CENSUS_* */
};

/* OP_SAMPLE's payload: this, then narenas struct jma_arena_sample. */
struct op_sample {
	struct jma_sample smp;		/* smp.arenas is not meaningful here */
	char version[64];
	int config_prof, opt_prof, prof_active;	/* -1: unknown */
};

/* OP_PROBE's payload. */
struct op_probe {
	char module[256];
	char prefix[32];
	int is_static;
};

/* The child's side: runs @arg (a struct op_arg). */
void op_child(const void *arg, struct op_result *r);
/* The parent's: run @a in a child, bounded by the configured timeout. */
int op_run(const struct serve_cfg *cfg, const struct op_arg *a, struct op_result *r);
/* Decode an OP_SAMPLE payload: *out points into @r (arenas too); -EINVAL. */
int op_sample_decode(const struct op_result *r, struct op_sample *out);
/* "attach", "missing", ... for enum jma_errkind, and "timeout". */
const char *op_kind_reason(int kind, int rc);

/* --- targets (targets.c) ---------------------------------------------------- */

enum target_state { T_UNKNOWN, T_JEMALLOC, T_NONE };

struct flight {
	int running;			/* a child works on it now */
	uint64_t seq;			/* answers so far */
	struct op_result res;		/* the last one */
};

struct target {
	int refs;			/* under the list's lock */
	pid_t pid;
	uint64_t mark;			/* jma_exec_mark at discovery */
	uid_t uid;
	char comm[64];
	char unit[256];			/* last component of its cgroup path */
	char cgroup[512];
	int named;			/* chosen by --target pid=N: shown even without jemalloc */
	enum target_state state;
	char why[512];			/* T_NONE: what the probe said */
	struct op_probe probe;
	int gone;			/* no longer in /proc (or exec'd another program) */
	uint64_t seen;			/* the last scan that saw it (under the list's lock) */

	pthread_mutex_t mu;		/* everything below */
	pthread_cond_t cv;
	int busy;			/* a child is attached or about to be */
	struct flight fl[OP_NCACHED];
	uint64_t attaches;		/* children that attached */
	int have_fixed;			/* fixed holds a first sample's version and options */
	struct op_sample fixed;
	int sampling;			/* a sampler window runs on it (pprof.c) */
};

struct serve_ctx;

int targets_init(struct serve_ctx *sc);
void targets_fini(struct serve_ctx *sc);
/* Scan /proc now; returns the number of targets with jemalloc. */
int targets_scan(struct serve_ctx *sc);
/* Start / stop the thread that scans every discover_interval. */
int targets_start(struct serve_ctx *sc);
void targets_stop(struct serve_ctx *sc);
/* The targets as an array of references (release with targets_put_all). */
struct target **targets_list(struct serve_ctx *sc, size_t *n);
void targets_put_all(struct serve_ctx *sc, struct target **v, size_t n);
void target_put(struct serve_ctx *sc, struct target *t);

/* The target with PID @pid, referenced, for a request: 0; -EACCES when the
 * selectors do not allow it (or it is this server or one of its children);
 * -ESRCH when there is no such process; -ENOENT when it has no jemalloc (the
 * probe's reason in @why). */
int targets_get(struct serve_ctx *sc, pid_t pid, struct target **out, char *why, size_t whylen);

/* --- one attach per target; answers shared and cached (cache.c) ------------- */

struct serve_sem {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned left;
};

/* Start a shared operation @kind on @t unless an answer started at or after
 * @fresh (monotonic s) exists or one is running.  Never blocks. */
void cache_start(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh);
/* Wait until @t has an answer of @kind started at or after @fresh, at most
 * until @deadline; copy it to @out.  0, or -ETIMEDOUT (a result saying so). */
int cache_wait(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh,
	       double deadline, struct op_result *out);
/* Run an unshared operation (control) on @t once it is free, waiting at most
 * until @deadline for it to be; the answer is in @out. */
int cache_run(struct serve_ctx *sc, struct target *t, const struct op_arg *a, double deadline,
	      struct op_result *out);
/* Operations started and not yet finished (for a clean stop). */
unsigned cache_inflight(struct serve_ctx *sc);

/* --- the server's state ------------------------------------------------------ */

struct auth_cache {
	pthread_mutex_t mu;
	unsigned char key[16][32];	/* SHA-256 of user NUL password, verified */
	unsigned n, next;
};

struct serve_ctx {
	struct serve_cfg *cfg;
	pid_t self;

	pthread_mutex_t mu;		/* the target list */
	struct target **tv;
	size_t nt, cap;
	double last_scan, scan_secs;	/* when, and how long the last scan took */
	double scan_cpu;		/* its CPU time reading /proc (probes are children's) */
	size_t scan_probes;		/* probes it made */
	uint64_t scans, probes;
	pthread_t scanner;
	int scanner_on, stopping;
	pthread_cond_t stop_cv;

	struct serve_sem attach_sem;	/* cfg->max_attaches */
	struct serve_sem report_sem;	/* profile reports (CPU work, no attach) */
	struct serve_sem census_sem;	/* censuses at once (CENSUS_MAX) */
	pthread_mutex_t fmu;
	pthread_cond_t fcv;
	unsigned inflight;		/* flight threads running */

	unsigned samplers;		/* sampler windows running (under fmu) */
	atomic_int closing;		/* the server stops: sampler windows end now */

	struct auth_cache auth;
	atomic_ulong requests, rejected;	/* HTTP requests; refused ones (400, 401) */
};

void sem_init_n(struct serve_sem *s, unsigned n);
void sem_take(struct serve_sem *s);
void sem_give(struct serve_sem *s);

/* --- answers (http.c builds them into libmicrohttpd responses) ------------- */

struct reply {
	int status;
	const char *type;		/* Content-Type */
	char *body;			/* malloc'ed */
	size_t len;
	const char *filename;		/* Content-Disposition: attachment; filename="..." */
	int retry_after;		/* s; 0: no Retry-After */
	char note[256];			/* X-Jemattach-Profile: how a profile was made; "": none */
};

/* A plain-text error reply ("jemattach: ...\n"). */
void reply_error(struct reply *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The HTTP status for an operation's failure, and the error reply itself. */
int reply_status(const struct op_result *res);
void reply_failed(struct reply *r, const struct target *t, const char *what,
		  const struct op_result *res);

/* /debug/pprof/heap (@allocs: /allocs) for @t: a fresh dump, or with
 * @seconds the change over that many seconds; @debug: text, not pprof.
 * Without opt.prof in the target, the sampler's window of @seconds
 * (default PPROF_SAMPLER_DEFAULT_S, at most PPROF_SAMPLER_MAX_S). */
#define PPROF_SAMPLER_DEFAULT_S	30
#define PPROF_SAMPLER_MAX_S	120
#define PPROF_SAMPLERS_MAX	2	/* windows at once, all targets */
void pprof_heap(struct serve_ctx *sc, struct target *t, int allocs, int debug, unsigned seconds,
		struct reply *r);

/* /debug/census for @t (census.c): the last census if younger than
 * --census-interval, else a new one, waited for until @deadline; @pprof:
 * gzip'd profile.proto, else JSON. */
#define CENSUS_MAX	2	/* censuses at once, all targets */
void census_reply(struct serve_ctx *sc, struct target *t, int pprof, double deadline,
		  struct reply *r);
/* The census flags of the server's censuses. */
unsigned census_flags(const struct serve_cfg *cfg);
/* /metrics' census gauges (--census-metrics): from each target's last
 * census, a new one started when it is older than --census-interval. */
void census_metrics(struct serve_ctx *sc, struct target **v, size_t n, FILE *f);

/* --- rendering ----------------------------------------------------------------- */

/* /metrics for @v (the targets, each with its OP_SAMPLE answer in @res). */
int metrics_render(struct serve_ctx *sc, struct target **v, struct op_result *res, size_t n,
		   int openmetrics, FILE *f);
/* A label value as both formats want it: \\ \" \n escaped, and bytes outside
 * printable ASCII as '?' (a target's comm is its own choice). */
void metrics_label(FILE *f, const char *s);
/* "# HELP" and "# TYPE" of gauge @name; a target's labels, "{pid=...,unit=\"...\"",
 * left open for more. */
void metrics_family(FILE *f, const char *name, const char *help);
void metrics_labels(FILE *f, const struct target *t);

/* /targets as JSON. */
int targets_json(struct serve_ctx *sc, FILE *f);

/* --- web config (webcfg.c) ------------------------------------------------------ */

/* Read exporter-toolkit's web config at @path: -errno with a reason in @err. */
int webcfg_load(const char *path, struct webcfg *w, char *err, size_t errlen);
void webcfg_free(struct webcfg *w);
/* 1 when @user / @pass match a user's bcrypt hash, else 0. */
int webcfg_check(struct serve_ctx *sc, const char *user, const char *pass);

#endif
