/* serve.h -- `jemattach serve`: an HTTP exporter of the host's jemalloc processes.
 *
 * Built on the public API (include/) like the command line, one concept per file:
 *   child.c    one operation on a target, run in a child process (from the forker)
 *   ops.c      the operations a child runs: probe, sample, dump, stats, census, control,
 *              report
 *   blob.c     an answer's payload, shared by the requests it serves, bounded in all
 *   pinfo.c    a process as /proc shows it (never its memory); the selectors (--target)
 *   targets.c  which processes are served: discovery, probes, following restarts
 *   cache.c    one attach per target at a time; answers shared and kept; each target's
 *              budget (--max-duty); attach slots shared fairly between users
 *   metrics.c  /metrics: Prometheus text 0.0.4, or OpenMetrics 1.0 when asked
 *   pprof.c    /debug/pprof/heap and /allocs: gzip'd profile.proto, ?debug=1, ?seconds=N;
 *              the sampler's window when the process runs without opt.prof
 *   census.c   /debug/census: a census (JSON or pprof), budgeted; per-type gauges
 *   webcfg.c   --web-config: TLS files and basic-auth users (bcrypt), exporter-toolkit's YAML
 *   peer.c     who is at the other end of a connection: a local user, or an address
 *   conns.c    connections: per-client limits, deadlines for a request and its answer
 *   http.c     a request through libmicrohttpd: parameters, who may do what, the reply
 *   routes.c   what each path answers, and the table of routes
 *   server.c   the server's life: the daemon started with its limits, stopped on SIGTERM;
 *              the module's entry point (module.h: its interface with the tool)
 *
 * Why a child process per operation (child.c): the library borrows a target's
 * thread with ptrace and waits for it on SIGCHLD, and it holds back SIGTERM &
 * co. while a thread is borrowed (attach/defer.c).  Both are per-process
 * facilities: in one process with many threads, one thread's sigtimedwait can
 * take the SIGCHLD another thread's target sent, and a deferred SIGTERM is
 * raised again in whichever thread happened to hold it.  A child per operation
 * is single-threaded, so the library runs exactly as under the CLI; a crash in
 * it (or in parsing a target's hostile ELF files) costs one answer, never the
 * server; the server's threads never ptrace anything -- nor read a target's
 * memory, nor any /proc file that waits for its memory (maps, cmdline): a
 * page of a file system that never answers (FUSE) would hold that thread in
 * the kernel, SIGKILL included.  A child stuck so is left behind (child.c),
 * never waited for.
 */
#ifndef JMA_SERVE_H
#define JMA_SERVE_H

#include <limits.h>
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
#include <microhttpd.h>

#include "core/clock.h"

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines. */
static inline void serve_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* --- configuration (filled by src/cli/cmd_serve.c) ------------------------- */

enum serve_sel_kind { SEL_PID, SEL_COMM, SEL_UID, SEL_CGROUP, SEL_UNIT, SEL_EXE };

struct serve_cond {
	enum serve_sel_kind kind;
	pid_t pid;
	uid_t uid;
	regex_t re;		/* SEL_COMM: extended, matched against /proc/PID/comm */
	char path[512];		/* SEL_CGROUP: a cgroup path prefix, on a component boundary;
				 * SEL_UNIT: a unit's name; SEL_EXE: an executable's path */
};

/* One --target: conditions that must all hold ("uid=redis,exe=/usr/bin/redis-server"). */
#define SEL_CONDS 4
struct serve_sel {
	struct serve_cond c[SEL_CONDS];
	size_t n;
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
	char dummy[64];		/* a bcrypt setting of the users' highest cost: what an
				 * unknown user's password is checked against */
	int mixed_costs;	/* the users' hashes differ in cost (a warning) */
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
	int allow_sampler;		/* sampler windows for unauthenticated clients */
	double max_duty;		/* share of each target's time serve's work may take:
					 * its thread held, sampler windows (0..1] */
	int need_exe;			/* a selector reads /proc/PID/exe */
	double census_interval;		/* census answers are kept this long (s) */
	int census_owners;		/* censuses find what each root retains */
	unsigned census_metrics;	/* /metrics: gauges of this many types; 0: none */
	int verbose;
	const char *web_config;		/* --web-config, read by serve_run */
	struct webcfg web;
};

/* --- shared answers (blob.c) ---------------------------------------------- */

/* An answer's payload in the server: made once, never changed, shared by
 * every request it serves (a reference each) and freed with the last.  All
 * that are alive at once take at most BLOB_TOTAL_MAX bytes: 16 requests for
 * one profile hold one copy of it, and a new payload past the bound is
 * refused, not allocated. */
#define BLOB_TOTAL_MAX	(512ul << 20)

struct blob {
	atomic_uint refs;
	size_t len;
	char data[];		/* len bytes, then a NUL */
};

/* A blob of @len bytes (and a NUL), one reference; NULL with errno ENOSPC
 * past the bound, ENOMEM. */
struct blob *blob_new(size_t len);
struct blob *blob_get(struct blob *b);
void blob_put(struct blob *b);
/* Bytes in blobs alive now. */
size_t blob_total(void);

/* --- a child per operation (child.c) ---------------------------------------- */

/* A result's kind past enum jma_errkind's: the target's budget (--max-duty)
 * allows no attach yet (rc -EAGAIN; 429). */
#define OP_ERR_BUDGET 100

/* What one operation brought back. */
struct op_result {
	int rc;			/* 0 or -errno */
	int kind;		/* enum jma_errkind, or OP_ERR_BUDGET */
	char msg[512];		/* why, when rc != 0; a note otherwise */
	uint64_t held_ns;	/* how long the target's thread was held */
	double secs;		/* the child's wall time */
	double started;		/* monotonic time the operation started */
	int attached;		/* the child attached (counted in jemattach_attaches_total) */
	int killed;		/* the child was killed (its hard limit, or the server stops) */
	double retry_at;	/* kind OP_ERR_BUDGET: when to ask again */
	uint64_t seq;		/* a kept answer: its number in its flight (flight.seq) */
	/* The payload: in the child, malloc'ed (blob NULL); in the server, the
	 * bytes of @blob, shared.  NULL when none. */
	char *data;
	size_t len;
	struct blob *blob;
};

void op_result_clear(struct op_result *r);
/* @dst: @src, its payload shared (one more reference). */
void op_result_share(struct op_result *dst, const struct op_result *src);

/* Runs in the child on the @len bytes the server gave (a NUL after them):
 * fills @r (r->data malloc'ed). */
typedef void (*child_fn)(const void *arg, size_t len, struct op_result *r);

struct child_opts {
	double hard_limit;		/* s; then the child is killed */
	size_t max;			/* bytes of payload at most */
	int cancellable;		/* @stop asks it to finish (SIGTERM), not SIGKILL */
	const atomic_int *stop;		/* set: the server stops (NULL: never) */
	pid_t target;			/* what it works on: a child left behind */
	uid_t owner;			/* counts against its process and user */
};

/* The forker, the process every child comes from (child.c): started
 * before the server's first thread, and before child_run.  0 or -errno. */
int child_forker_start(void);

/* Run @fn on a copy of the @narg pieces of @arg, one after the other, in a
 * child process and collect its result in @out: at most
 * o->max bytes of payload (in a blob); a child still running after
 * o->hard_limit seconds is killed (SIGKILL: the library's calls restore the
 * target by themselves).  A child that dies is an -EIO result saying how.
 * Once *o->stop is set, a cancellable child is sent SIGTERM (once), which it
 * must take as "finish now with what you have" (the sampler's window), and
 * SIGKILL CHILD_GRACE_S later; any other is killed at once.  A killed child
 * that does not end within CHILD_REAP_S (asleep in the kernel on a file
 * system that does not answer) is left behind, never waited for: reaped
 * later (child_reap), and no new child is started for its process, nor for
 * its user past CHILD_STUCK_PER_UID (child_refused).  Returns out->rc. */
#define CHILD_GRACE_S		3.0
#define CHILD_REAP_S		2.0
#define CHILD_STUCK_PER_UID	2
struct iovec;
int child_run(child_fn fn, const struct iovec *arg, int narg, const struct child_opts *o,
	      struct op_result *out);
/* In a child run cancellable: set (to SIGTERM) when it is asked to finish. */
extern volatile sig_atomic_t child_cancelled;
/* Reap the children left behind that have ended; returns how many are left. */
unsigned child_reap(void);
/* 0 when a child may be started for process @pid of user @uid; else -EBUSY
 * with the reason in @why. */
int child_refused(pid_t pid, uid_t uid, char *why, size_t whylen);

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
	uid_t uid;			/* the process's owner (for fairness) */
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
	const char *why;		/* how the profile was made (the dump's or the sampler's
					 * note): an empty report says it in its pprof comment
					 * and its msg */
	/* OP_SAMPLER */
	double seconds;			/* the window */
	int alloc_only;			/* follow no frees */
	double max_overhead;		/* 0..1; 0: none */
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

/* Run @a in a child (given a copy of it and what it points to), bounded by
 * the configured timeout, ended when the server stops. */
struct serve_ctx;
int op_run(struct serve_ctx *sc, const struct op_arg *a, struct op_result *r);
/* Decode an OP_SAMPLE payload: *out points into @r (arenas too); -EINVAL. */
int op_sample_decode(const struct op_result *r, struct op_sample *out);
/* "attach", "missing", ... for enum jma_errkind, and "timeout", "budget". */
const char *op_kind_reason(int kind, int rc);

/* --- targets (target.c, targets.c) ------------------------------------------ */

enum target_state { T_UNKNOWN, T_JEMALLOC, T_NONE };

/* Which budget clock an operation of @kind runs on: 0 scrapes, 1 the rest. */
#define BUDGET_OF(kind) ((kind) != OP_SAMPLE)

struct flight {
	int running;			/* a child works on it now */
	uint64_t seq;			/* answers so far */
	int kept;			/* res holds the last one (cache_trim drops it) */
	struct op_result res;
};

/* A profile's report (pprof.c), shared by the requests that want the same
 * one: keyed by the dumps it is made of and what is asked. */
#define REPORTS_KEPT 4
struct report_flight {
	int used, running;
	uint64_t heap_seq, base_seq;	/* the OP_DUMP answers (base 0: none) */
	int format, sample, need_alloc;
	struct op_result res;
};

struct target {
	int refs;			/* under the list's lock */
	pid_t pid;
	uint64_t mark;			/* what program it runs (targets.c: start time, auxv) */
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
	int probing;			/* a probe runs (under the list's lock) */
	struct serve_ctx *sc;		/* (for the probe's thread) */

	pthread_mutex_t mu;		/* everything below */
	pthread_cond_t cv;
	int busy;			/* a child is attached or about to be */
	struct flight fl[OP_NCACHED];
	uint64_t attaches;		/* children that attached */
	int have_fixed;			/* fixed holds a first sample's version and options */
	struct op_sample fixed;
	/* The budget (--max-duty): no attach before next_attach[BUDGET_OF(kind)],
	 * no sampler window before next_window (monotonic s).  Scrapes have a
	 * clock of their own: a costly dump does not freeze the process's metrics. */
	double next_attach[2], next_window;
	int sampling;			/* a sampler window runs on it (pprof.c) */
	struct report_flight rep[REPORTS_KEPT];
};

/* What a process looks like from /proc, for selectors and labels (pinfo.c). */
struct pinfo {
	pid_t pid, ppid;
	uid_t uid;
	char comm[64];
	char cgroup[512];
	char exe[PATH_MAX];	/* when a selector asks (cfg->need_exe); "" unknown */
	unsigned long long start;	/* clock ticks after boot */
	double age;		/* seconds since it started, at uptime @up */
	int kthread;
};

/* The system's uptime (s), for pinfo_read. */
double pinfo_uptime(void);
/* Process @pid from /proc/PID/{stat,status,cgroup} (and its exe link when
 * @need_exe): 0, or -ESRCH. */
int pinfo_read(pid_t pid, double up, int need_exe, struct pinfo *p);
/* What program process @pid (started at @start) runs: its mark (never 0). */
uint64_t pinfo_mark(pid_t pid, unsigned long long start);
/* The unit or container of @cgroup: its path's last component. */
void pinfo_unit(const char *cgroup, char *out, size_t len);
/* 0: not served; 1: chosen by the selectors; 2: chosen by its PID (shown
 * even without jemalloc). */
int pinfo_selected(const struct serve_ctx *sc, const struct pinfo *p);

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
/* target.c: a target of process @p (its exec @mark; @named: chosen by a
 * selector), one reference; that reference released, the target freed
 * with the last. */
struct target *target_new(const struct pinfo *p, uint64_t mark, int named);
void target_put(struct serve_ctx *sc, struct target *t);
/* @t freed: its last reference gone (counted under sc->mu by the caller). */
void target_free(struct target *t);

/* The target with PID @pid, referenced, for a request: 0; -EACCES when the
 * selectors do not allow it (or it is this server or one of its children);
 * -ESRCH when there is no such process; -ENOENT when it has no jemalloc (the
 * probe's reason in @why). */
int targets_get(struct serve_ctx *sc, pid_t pid, struct target **out, char *why, size_t whylen);
/* 1 when every uid of process @pid (real, effective, saved, file system) is
 * @uid and its /proc entry is @uid's (it is dumpable: not setuid, not made
 * unreadable): the process is @uid's own, as ptrace sees it (pinfo.c). */
int target_owned_by(pid_t pid, uid_t uid);

/* --- one attach per target; answers shared and kept (cache.c) --------------- */

/* Children at once, shared fairly: at most @n in all, and at most
 * max(1, n / 2) for the processes of one user, so that a few processes of
 * one user (answering slowly, on purpose or not) leave room for others. */
struct serve_slots {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned n, left, per_uid;
	struct { uid_t uid; unsigned held; } u[256];
	unsigned nu;
};

void slots_init(struct serve_slots *s, unsigned n);
/* Take a slot for a process of @uid, waiting while there is none (or @uid
 * holds its share); 0, or -ECANCELED once the server stops. */
int slots_take(struct serve_ctx *sc, struct serve_slots *s, uid_t uid);
void slots_give(struct serve_slots *s, uid_t uid);

/* An answer of @kind is fresh when it started at or after @fresh -- or,
 * while the target's budget allows no new attach (t->next_attach), whatever
 * its age.  Start one unless fresh or running.  Never blocks. */
void cache_start(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh);
/* Wait until @t has a fresh answer of @kind, at most until @deadline; share
 * it in @out.  0, or -ETIMEDOUT (a result saying so, and when to try again). */
int cache_wait(struct serve_ctx *sc, struct target *t, enum op_kind kind, double fresh,
	       double deadline, struct op_result *out);
/* Run an unshared operation (control) on @t once it is free, waiting at most
 * until @deadline for it to be; the answer is in @out.  The answers kept
 * (they describe the process as it was) are dropped. */
int cache_run(struct serve_ctx *sc, struct target *t, const struct op_arg *a, double deadline,
	      struct op_result *out);
/* Wait on @cv (with @mu) until @until (monotonic s; 0: none), a quarter
 * second at most, so that the server's stop is seen. */
void cache_nap(pthread_cond_t *cv, pthread_mutex_t *mu, double until);
/* Drop what @t keeps that is no longer fresh (its payloads), so that
 * BLOB_TOTAL_MAX holds what is in use.  Caller holds t->mu. */
void cache_trim(struct serve_ctx *sc, struct target *t);
/* The cost of an operation to its target, in seconds of its time: how long
 * its thread was held -- the child's whole time when it was killed. */
double cache_cost(const struct op_result *r);
/* After @cost seconds of the target's time ending at @end, when the next
 * such use may start: the budget --max-duty over time. */
double cache_next_ok(const struct serve_ctx *sc, double end, double cost);

/* --- connections (conns.c, peer.c) ---------------------------------------- */

/* Who is at the other end of connection socket @fd: a process of this host
 * (its socket's owner, from the kernel: sock_diag), whatever loopback or local
 * address it came from; else the remote address (IPv6 by its /64). */
struct peer {
	int local;			/* a process of this host: @uid is its user */
	uid_t uid;
	char name[64];			/* "uid 1000", "192.0.2.7", "2001:db8:1:2::/64" */
};
int peer_of(int fd, struct peer *p);

/* A connection's phase, for its deadlines. */
enum conn_phase { CONN_RECEIVING, CONN_WORKING, CONN_SENDING };

struct conn {
	struct conn *prev, *next;
	int fd;
	struct peer peer;
	enum conn_phase phase;
	double since;			/* the phase started (monotonic s) */
	int refused;			/* over its client's limit: closed at once */
};

#define CONN_MAX	256	/* connections at once, all clients */
#define CONN_PER_CLIENT	64	/* from one local user, or one remote address */
#define CONN_REQUEST_S	10	/* to send a request, headers and body (or between two) */
#define CONN_SEND_S	60	/* for an answer to be read */

struct conns {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct conn *head;
	unsigned n;
	int stop;
	pthread_t guard;
	int guard_on;
	atomic_ulong refused, expired;
};

int conns_start(struct serve_ctx *sc);
void conns_stop(struct serve_ctx *sc);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION. */
void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code);
/* The phase of @c's connection changes. */
void conns_phase(struct serve_ctx *sc, struct conn *c, enum conn_phase phase);

/* --- the server's state ------------------------------------------------------ */

struct auth_cache {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char key[16][32];	/* SHA-256 of user NUL password, verified */
	unsigned n, next;
	int hashing;			/* a bcrypt check runs (one at a time) */
};

struct serve_ctx {
	struct serve_cfg *cfg;
	pid_t self;

	pthread_mutex_t mu;		/* the target list; no file is read under it */
	struct target **tv;
	size_t nt, cap;
	double last_scan, scan_secs;	/* when, and how long the last scan took */
	double scan_cpu;		/* its CPU time reading /proc (probes are children's) */
	size_t scan_probes;		/* probes it made */
	uint64_t scans, probes;
	pthread_t scanner;
	int scanner_on, stopping;
	pthread_cond_t stop_cv;

	struct serve_slots attach_slots;	/* cfg->max_attaches */
	struct serve_slots probe_slots;		/* probes of new processes */
	pthread_cond_t probe_cv;		/* a probe ended (with mu) */
	struct serve_slots report_slots;	/* profile reports (CPU work, no attach) */
	struct serve_slots census_slots;	/* censuses at once (CENSUS_MAX) */
	pthread_mutex_t fmu;
	pthread_cond_t fcv;
	unsigned inflight;		/* flight threads running */

	unsigned samplers;		/* sampler windows running (under fmu) */
	atomic_int closing;		/* the server stops: waits end, workers are ended */

	struct conns conns;
	struct auth_cache auth;
	atomic_ulong requests, rejected;	/* HTTP requests; refused ones (400, 401) */
};

/* --- answers (http.c builds them into libmicrohttpd responses) ------------- */

struct reply {
	int status;
	const char *type;		/* Content-Type */
	char *body;			/* malloc'ed, or in @blob */
	size_t len;
	const char *filename;		/* Content-Disposition: attachment; filename="..." */
	struct blob *blob;		/* body points into it (shared), or NULL */
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
/* Who asks: a sampler window needs --allow-sampler or an authenticated client. */
struct asker {
	int authenticated;		/* basic auth configured, and passed */
	const struct peer *peer;	/* NULL: unknown */
};
void pprof_heap(struct serve_ctx *sc, struct target *t, int allocs, int debug, unsigned seconds,
		const struct asker *who, struct reply *r);

/* --- requests and routes (http.c, routes.c) -------------------------------- */

#define REQ_PARAMS	6	/* query parameters of a request, at most */
#define REQ_PARAM_LEN	64	/* a value's bytes and its NUL, at most */

/* A request, from its headers to its reply (libmicrohttpd's con_cls). */
struct req {
	struct conn *conn;		/* its connection (conns.c) */
	struct asker who;		/* who.peer: the connection's */
	size_t body;			/* bytes of body seen */
	int bad;			/* a parameter was refused: reason in why */
	char why[160];
	size_t np;
	char key[REQ_PARAMS][16];
	char val[REQ_PARAMS][REQ_PARAM_LEN];
};

/* A path the server answers: a row of routes.c's table.  Its handler fills
 * @r; the method and the query keys were checked before (http.c). */
struct route {
	const char *path;
	const char *method;		/* GET routes take HEAD too */
	const char *params;		/* allowed query keys, space-separated */
	void (*run)(struct serve_ctx *sc, struct MHD_Connection *c, struct req *q, struct reply *r);
};

/* The route of @url; NULL when none. */
const struct route *route_find(const char *url);
/* libmicrohttpd's request handler and MHD_OPTION_NOTIFY_COMPLETED (@cls: the
 * struct serve_ctx). */
enum MHD_Result http_handle(void *cls, struct MHD_Connection *c, const char *url,
			   const char *method, const char *version, const char *upload,
			   size_t *upload_size, void **con_cls);
void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode code);
/* /debug/census for @t (census.c): the last census if younger than
 * --census-interval, else a new one, waited for until @deadline; @pprof:
 * gzip'd profile.proto, else JSON. */
#define CENSUS_MAX	2	/* censuses at once, all targets; one user's processes: 1 */
void census_reply(struct serve_ctx *sc, struct target *t, int pprof, double deadline,
		  struct reply *r);
/* /metrics' census gauges (--census-metrics): from each target's last
 * census, a new one started when it is older than --census-interval. */
void census_metrics(struct serve_ctx *sc, struct target **v, size_t n, FILE *f);

/* --- rendering ----------------------------------------------------------------- */

/* /metrics for @v (the targets, each with its OP_SAMPLE answer in @res). */
int metrics_render(struct serve_ctx *sc, struct target **v, struct op_result *res, size_t n,
		   int openmetrics, FILE *f);
/* prom.c: a label value as both formats want it: \\ \" \n escaped, and bytes outside
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
