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
#include "core/errors.h"
#include "core/ident.h"
#include "core/log.h"

struct jma_syms;

struct jma_session {
	struct jma_options opt;
	char *opt_prefix, *opt_module, *opt_cache_dir;	/* owned copies of the option strings */
	pid_t pid;
	int offline;			/* a core file: pid names a process that is gone */
	struct jma_exec_ident ident;	/* the process opened, whatever its PID becomes */
	uint64_t exec_mark;	/* jma_exec_mark(pid) before its symbols were read */
	struct jma_exec_where exec_where;	/* where that mark's inputs are */
	/* The symbols (symbols/symbols.h), NULL until open succeeded, and how
	 * jma_free closes them: set by proc_set_syms (process/open.h). */
	struct jma_syms *syms;
	void (*syms_close)(struct jma_syms *sy);
	const struct jma_copy *je;	/* the jemalloc copy in syms, NULL when none */
	struct jma_backend *be;		/* runs the calls; set by jma_open */

	int attached;
	int epoch_fresh;		/* "epoch" already written in this attachment */
	uint32_t jever;			/* jemalloc's version (JMA_JEVERSION), 0 until read */
	uint64_t page;			/* arenas.page, 0 until read */

	enum jma_errkind kind;
	unsigned hints;			/* JMA_HINT_* of that error */
	char err[4096];
};

/* Install @be (the session owns it from now on, also on failure: -EALREADY
 * when one is installed already). */
int sess_set_backend(jma_session *s, struct jma_backend *be);

/* The options' timeout of one call, in ms (10 s when unset, at most a day). */
int sess_timeout_ms(const jma_session *s);

/* jma_detach, the error recorded last (message, kind, hints) kept for the
 * caller, whatever the backend's end noted meanwhile.  Returns 0, or the
 * failure to restore the target: that is the error then, as it matters
 * most, and when @err says an error was recorded before, its message
 * follows, "before that: ...".  (jma_hold_end's end.) */
int sess_detach_keep(jma_session *s, int err);

#endif
