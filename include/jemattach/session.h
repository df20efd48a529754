/* jemattach/session.h -- a session with one target process.
 *
 *   jma_session *s = jma_new(&opts);
 *   jma_open(s, pid);          find jemalloc in the process (nothing is stopped)
 *   jma_attach(s);             stop and take over one thread
 *   ... jma_get / jma_set / jma_stats_print ...
 *   jma_detach(s);             put the thread back exactly as it was
 *   jma_free(s);               (detaches too)
 *
 * Calls made while not attached attach and detach around themselves.  Keep
 * attachments short: the chosen thread is stopped for their whole length.
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

/* The same on an ELF core file (kernel core or gcore) of an x86_64 process:
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
