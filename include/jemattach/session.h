/* jemattach/session.h -- a session with one target process.
 *
 *   jma_session *s = jma_new(&opts);
 *   jma_open(s, pid);          find jemalloc in the process (nothing is stopped)
 *   jma_attach(s);             stop and take over one thread
 *   ... jma_get / jma_set / jma_stats_print ...
 *   jma_detach(s);             put the thread back exactly as it was
 *   jma_free(s);               (detaches too)
 *
 * Calls made while not attached attach and detach around themselves
 * (jma_hold_begin/jma_hold_end, the same bracket for the caller's own).
 * Keep attachments short: the chosen thread is stopped for their whole
 * length.
 */
#ifndef JEMATTACH_SESSION_H
#define JEMATTACH_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include <jemattach/api.h>

JMA_API_BEGIN

#define JMA_MUST_CHECK __attribute__((warn_unused_result))

typedef struct jma_session jma_session;

/* What kind of failure the last error was; the values are jemattach's exit codes. */
enum jma_errkind {
	JMA_OK = 0,
	JMA_ERR_TARGET = 1,	/* the operation failed inside the target (mallctl errno) */
	JMA_ERR_USAGE = 2,	/* bad arguments */
	JMA_ERR_ATTACH = 3,	/* cannot attach: no process, permission, traced, zombie... */
	JMA_ERR_MISSING = 4,	/* the target lacks what is needed: no jemalloc, feature off */
	JMA_ERR_UNSAFE = 5,	/* timed out or refused as unsafe; the target was restored */
};

enum jma_loglevel { JMA_LOG_ERR, JMA_LOG_WARN, JMA_LOG_INFO, JMA_LOG_DEBUG };
typedef void (*jma_log_fn)(void *arg, int level, const char *msg);

#define JMA_F_FORCE	0x1	/* use a forced thread even if its stack is inside jemalloc;
				 * call even with less memory headroom than a first call needs,
				 * or while a thread stays asleep inside jemalloc holding a lock */
#define JMA_F_FREEZE	0x2	/* stop every thread while attached (refused if one is inside jemalloc) */
#define JMA_F_ANY_PROCESS 0x4	/* jma_open succeeds without jemalloc (for jma_threads) */
#define JMA_F_NO_DEMANGLE 0x8	/* C++ function names as the symbol tables spell them */
#define JMA_F_DEBUGINFOD 0x10	/* may ask the debuginfod servers of $DEBUGINFOD_URLS for a
				 * module's file or debuginfo (network); off: local files only */
#define JMA_F_STRIPPED	0x20	/* take a jemalloc linked into a program stripped of every
				 * symbol: its memory can be read (jma_census_run), nothing in
				 * it called (its entry points are unknown: -ENOTSUP) */

struct jma_options {
	double timeout;		/* seconds one in-target call may take; <= 0: 10 */
	const char *prefix;	/* jemalloc symbol prefix ("", "je_", "_rjem_"); NULL: detect */
	const char *module;	/* path of the jemalloc copy to use when there are several */
	pid_t thread;		/* thread to use; 0: choose one */
	unsigned flags;		/* JMA_F_* */
	jma_log_fn log;		/* NULL: silent */
	void *log_arg;
	int log_level;		/* highest enum jma_loglevel passed to log */
	/* Directory keeping where jemalloc was found in a program, by the
	 * build-ids of its code files, so that the next open need not search
	 * them; NULL: none.  Made (mode 0700) when missing; used only when it
	 * and its entries are ours and writable by nobody else. */
	const char *cache_dir;
};

/* NULL with errno = ENOMEM.  @opts may be NULL (defaults). */
jma_session *jma_new(const struct jma_options *opts);
/* Detaches (restoring the target) if attached, then frees. */
void jma_free(jma_session *s);

/* Check the process can be attached and find jemalloc in it.  Stops nothing. */
int jma_open(jma_session *s, pid_t pid) JMA_MUST_CHECK;

/* Like jma_open, but every call runs jemalloc's code in an emulator over a
 * copy of the process's memory: nothing in the process is written or run, so
 * it works while a thread holds a jemalloc lock forever.  Read-only: writes
 * change only the copy.  Threads are stopped only to read one's TLS base
 * (all of them, while the copy is made, with JMA_F_FREEZE). */
int jma_open_emulated(jma_session *s, pid_t pid) JMA_MUST_CHECK;

/* The same on an ELF core file (kernel core or gcore) of a process of the
 * machine the library runs on (x86_64 or arm64: a core of the other is refused):
 * mappings the core omits are read from the files its NT_FILE note names,
 * under @sysroot when given (NULL: their own paths), build-ids checked.
 * @exe (NULL: from the core) is the executable.  Only reads make sense. */
int jma_open_core(jma_session *s, const char *core, const char *exe,
		  const char *sysroot) JMA_MUST_CHECK;

/* Stop one suitable thread and prepare it for calls. */
int jma_attach(jma_session *s) JMA_MUST_CHECK;
/* Restore the thread and let it go.  A failure to restore is returned. */
int jma_detach(jma_session *s);
int jma_attached(const jma_session *s);

/* One operation's attachment, for code that may run attached or not.
 * jma_hold_begin attaches unless the session is attached already; *@own
 * says whether it did.  jma_hold_end detaches only then, and returns @err
 * (the operation's: 0 or -errno) with its message kept -- unless restoring
 * the target failed: that failure is returned then, as it matters most,
 * and its message goes on with @err's ("before that: ...").
 *
 *   int own, err = jma_hold_begin(s, &own);
 *   if (!err)
 *           err = ...calls...;
 *   err = jma_hold_end(s, own, err);
 */
int jma_hold_begin(jma_session *s, int *own) JMA_MUST_CHECK;
int jma_hold_end(jma_session *s, int own, int err);
/* How long the last jma_attach..jma_detach kept the thread from its own work:
 * from just before it was asked to stop to just after it was let go (both
 * measured at the ptrace calls, so an upper bound of the real stop).  0 before
 * the first detach. */
uint64_t jma_held_ns(const jma_session *s);

/* What program process @pid runs now, as a number that changes when it
 * exec()s (drawn from the random bytes the kernel gives each exec); 0 when
 * unknown (gone, unreadable, or those bytes overwritten with zeros: a
 * session then refuses to call into it).  Needs no session. */
uint64_t jma_exec_mark(pid_t pid);

/* 1 when the process the session opened has exited, whether or not its PID
 * is now another process's (jma_attach then fails with JMA_ERR_ATTACH,
 * "process N exited"): a pidfd, or its start time, says so. */
int jma_exited(const jma_session *s);

const char *jma_errmsg(const jma_session *s);
enum jma_errkind jma_errkind(const jma_session *s);

/* What the caller could change for the last error to go otherwise: a set of
 * JMA_HINT_* bits (0: nothing to suggest), kept with its message.
 * The messages name no option of any program: a program words these hints
 * in its own terms (jemattach as its command-line options). */
#define JMA_HINT_FORCE		0x1	/* JMA_F_FORCE does it anyway, at the risk the message names */
#define JMA_HINT_EMULATE	0x2	/* jma_open_emulated reads the numbers from a copy of the
					 * process: nothing called in it, no lock taken */
#define JMA_HINT_TIMEOUT	0x4	/* a longer jma_options.timeout gives the call more time */
#define JMA_HINT_NO_FREEZE	0x8	/* without JMA_F_FREEZE only the borrowed thread stops */
#define JMA_HINT_RETRY		0x10	/* the same again in a moment may succeed */
#define JMA_HINT_MODULE		0x20	/* several copies of jemalloc (the message lists them):
					 * choose one with jma_options.module */
#define JMA_HINT_SYSROOT	0x40	/* jma_open_core: the files the core names, read under a
					 * sysroot (a core from another machine) */
#define JMA_HINT_TYPE		0x80	/* say the value's type (jma_get_typed, jma_set) */
#define JMA_HINT_TEXT		0x100	/* ask for the plain-text form: this jemalloc has no JSON */
#define JMA_HINT_LOG		0x200	/* the log (jma_options.log, JMA_LOG_INFO) says why */
#define JMA_HINT_SAMPLE		0x400	/* the sampler (jemattach/sampler.h) samples without
					 * jemalloc's profiling: no restart (uprobes, root) */
unsigned jma_errhints(const jma_session *s);

/* Where jemalloc was found and which thread is (or would be) used. */
struct jma_target_info {
	pid_t pid;
	char comm[64];
	int nthreads;
	const char *module;	/* file of the jemalloc copy, as the target sees it */
	const char *prefix;	/* its public symbol prefix, "" for none */
	int is_static;		/* linked into a larger object, not libjemalloc.so */
	const char *conf_env;	/* where it reads options: MALLOC_CONF, _RJEM_MALLOC_CONF... */
	pid_t tid;		/* thread chosen for calls (0 until jma_attach) */
	char tid_comm[64];
	const char *tid_why;	/* why that one */
};
int jma_target_info(jma_session *s, struct jma_target_info *info) JMA_MUST_CHECK;

JMA_API_END

#endif
