/* session.h -- the private side of jma_session, shared by the src/ modules.
 *
 * The session is the handle: options, the process and its symbols, the
 * backend that runs jemalloc's code (backend.h), and the last error.  It
 * knows no engine: jma_open (ptrace.c) installs the live-process one.
 */
#ifndef JMA_PROCESS_SESSION_H
#define JMA_PROCESS_SESSION_H

#include <jemattach.h>

#include "attach/procfs.h"
#include "attach/thread.h"
#include "process/backend.h"
#include "process/execcheck.h"
#include "symbols/symbols.h"

struct jma_session {
	struct jma_options opt;
	char *opt_prefix, *opt_module, *opt_cache_dir;	/* owned copies of the option strings */
	pid_t pid;
	int offline;			/* a core file: pid names a process that is gone */
	struct att_status st;
	struct jma_exec_ident ident;	/* the process opened, whatever its PID becomes */
	uint64_t exec_mark;	/* jma_exec_mark(pid) before its symbols were read */
	struct jma_exec_where exec_where;	/* where that mark's inputs are */
	struct jma_syms *syms;		/* NULL until jma_open succeeded */
	struct jma_backend *be;		/* runs the calls; set by jma_open */

	int attached;
	int epoch_fresh;		/* "epoch" already written in this attachment */
	uint32_t jever;			/* jemalloc's version (JMA_JEVERSION), 0 until read */
	uint64_t page;			/* arenas.page, 0 until read */
	/* The thread calls run in (for info, threads and -v). */
	pid_t tid;
	char tid_why[160];
	char tid_comm[64];
	uint64_t held_ns;		/* the last attachment's hold (jma_held_ns) */

	enum jma_errkind kind;
	char err[4096];
};

/* jma_open's first half, shared by every backend on a live process: check it
 * can be attached and find jemalloc in it (s->pid, s->st, s->syms). */
int jma_open_process(jma_session *s, pid_t pid);

/* Open @s over the backend @be (the session owns it from now on, also on
 * failure) and the jemalloc copy @je of process @pid (0: none, no maps):
 * for backends that serve no real process (tests/fake_backend.c).  Not
 * exported. */
int jma_open_backend(jma_session *s, pid_t pid, struct jma_backend *be, const struct jma_copy *je);

/* Record an error: returns -|err| so callers write `return jma_fail(...)`. */
int jma_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Record the attach engine's message for @err (from @t->err when set). */
int jma_fail_att(jma_session *s, const struct att_thread *t, enum jma_errkind kind, int err);
/* The kind an engine error falls into (timeouts are JMA_ERR_UNSAFE, ...). */
enum jma_errkind jma_kind_of(int err);
void jma_logf(const jma_session *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int jma_timeout_ms(const jma_session *s);

/* A thread of the session's process, ready to seize, logging through the
 * session's callback. */
void jma_thread_setup(jma_session *s, struct att_thread *t, pid_t tid);

/* Attach for the duration of one operation when the caller has not; pair with
 * jma_auto_end, which detaches only if jma_auto_begin attached.  A failure to
 * restore the target overrides @err. */
int jma_auto_begin(jma_session *s, int *attached_here);
int jma_auto_end(jma_session *s, int attached_here, int err);

/* The backend's operations, for the jemalloc layer (see backend.h). */
void jma_expect_text(jma_session *s);
int jma_call(jma_session *s, const struct jma_bcall *c, uint64_t *ret);
uint64_t jma_scratch(jma_session *s, const void *data, size_t len, size_t align);
int jma_read(jma_session *s, uint64_t addr, void *buf, size_t len);
int jma_read_str(jma_session *s, uint64_t addr, size_t max, char **out, int *trunc);
/* The backend's captured file (take_file), or -ENOTSUP when its files are real. */
int jma_take_file(jma_session *s, char **buf, size_t *len);

#endif
