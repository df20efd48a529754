/* session.h -- the private side of jma_session, shared by the src/ modules.
 *
 * The session is the handle: options, the process opened and its symbols,
 * the backend that runs jemalloc's code (backend.h), and the last error.  It
 * knows no engine and nothing above the core: jma_open (process/ptrace.c)
 * installs the live-process backend, process/open.h the symbols.
 */
#ifndef JMA_CORE_SESSION_H
#define JMA_CORE_SESSION_H

#include <jemattach.h>

#include "core/backend.h"
#include "core/copy.h"
#include "core/ident.h"

struct jma_syms;

struct jma_session {
	struct jma_options opt;
	char *opt_prefix, *opt_module, *opt_cache_dir;	/* owned copies of the option strings */
	pid_t pid;
	int offline;			/* a core file: pid names a process that is gone */
	struct jma_exec_ident ident;	/* the process opened, whatever its PID becomes */
	uint64_t exec_mark;	/* jma_exec_mark(pid) before its symbols were read */
	struct jma_exec_where exec_where;	/* where that mark's inputs are */
	/* The symbols (process/symbols.h), NULL until open succeeded, and how
	 * jma_free closes them: set by jma_set_syms (process/open.h). */
	struct jma_syms *syms;
	void (*syms_close)(struct jma_syms *sy);
	const struct jma_copy *je;	/* the jemalloc copy in syms, NULL when none */
	struct jma_backend *be;		/* runs the calls; set by jma_open */

	int attached;
	int epoch_fresh;		/* "epoch" already written in this attachment */
	uint32_t jever;			/* jemalloc's version (JMA_JEVERSION), 0 until read */
	uint64_t page;			/* arenas.page, 0 until read */

	enum jma_errkind kind;
	char err[4096];
};

/* Install @be (the session owns it from now on, also on failure: -EALREADY
 * when one is installed already). */
int jma_set_backend(jma_session *s, struct jma_backend *be);

/* Record an error: returns -|err| so callers write `return jma_fail(...)`. */
int jma_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The kind an engine error falls into (timeouts are JMA_ERR_UNSAFE, ...). */
enum jma_errkind jma_kind_of(int err);
void jma_logf(const jma_session *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int jma_timeout_ms(const jma_session *s);

/* Attach for the duration of one operation when the caller has not; pair with
 * jma_auto_end, which detaches only if jma_auto_begin attached.  A failure to
 * restore the target overrides @err. */
int jma_auto_begin(jma_session *s, int *attached_here);
int jma_auto_end(jma_session *s, int attached_here, int err);

/* The thread calls run in while attached, 0 when not attached. */
pid_t jma_call_tid(jma_session *s);

/* The backend's operations, for the jemalloc layer (see backend.h). */
void jma_expect_text(jma_session *s);
int jma_call(jma_session *s, const struct jma_bcall *c, uint64_t *ret);
uint64_t jma_scratch(jma_session *s, const void *data, size_t len, size_t align);
int jma_read(jma_session *s, uint64_t addr, void *buf, size_t len);
int jma_read_str(jma_session *s, uint64_t addr, size_t max, char **out, int *trunc);
int jma_dump(jma_session *s, const char *dir, const char *name, size_t max, jma_dump_fn write,
	     void *arg, char **buf, size_t *len);

#endif
