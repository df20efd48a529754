/* backend.h -- the one interface through which src/jemalloc/ runs jemalloc's code.
 *
 * The jemalloc layer asks for four things: scratch memory holding its
 * arguments, a call of a jemalloc function (optionally with a text callback
 * such as malloc_stats_print's write_cb), reads of target memory, and the
 * file a call writes (prof.dump), however the engine keeps it.  It
 * never learns which engine serves them: the ptrace engine runs the call in a
 * borrowed thread of the live process (process/ptrace.c); an emulator can run
 * it over a copy of the process's memory or a core file (emulate/backend.c).
 * What only one engine knows (the thread it borrowed, how long it held it,
 * the process's status) stays in its private state; the session asks for it
 * here (describe, held_ns).
 *
 * Every operation returns 0 or -errno and records its message in the session
 * (sess_fail), so callers write `return err;`.
 */
#ifndef JMA_CORE_BACKEND_H
#define JMA_CORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <jemattach/session.h>

#define JMA_CALL_MAXARGS 6

/* Receives one piece of callback text (NUL-free, not NUL-terminated). */
typedef int (*jma_text_fn)(void *arg, const char *text, size_t len);

/* One call of a jemalloc function.  When @text is set, argument @text_arg is
 * a `void write_cb(void *opaque, const char *s)` slot: the backend fills it
 * with whatever makes each call of write_cb reach @text. */
struct jma_bcall {
	uint64_t fn;
	uint64_t args[JMA_CALL_MAXARGS];
	unsigned nargs;
	int text_arg;
	jma_text_fn text;
	void *text_ctx;
	/* With @text: the call's whole bound in ms, however much it writes (each
	 * piece of text restarts the session's timeout, up to this); 0: the
	 * timeout alone. */
	int total_ms;
};

struct jma_backend;
struct arch_gpregs;

/* jemalloc code that writes one file at @path (prof.dump), for the dump
 * operation. */
typedef int (*jma_dump_fn)(jma_session *s, const char *path, void *arg);

struct jma_backend_ops {
	const char *name;	/* "ptrace", ... for -v and info */
	/* Make calls possible (the ptrace engine borrows a thread) / undo that.
	 * end returns the first failure to restore the target. */
	int (*begin)(struct jma_backend *b);
	int (*end)(struct jma_backend *b);
	/* Optional, called before begin by an operation whose call will carry
	 * a text callback: what the engine must look up to serve it is looked
	 * up while nothing is stopped. */
	void (*expect_text)(struct jma_backend *b);
	/* Run @c; the function's return value in *ret.  Scratch memory handed
	 * out before the call is released by it. */
	int (*call)(struct jma_backend *b, const struct jma_bcall *c, uint64_t *ret);
	/* @len bytes of scratch memory for arguments, @data copied in (zeroed
	 * when NULL); 0 when there is no room (message recorded). */
	uint64_t (*scratch)(struct jma_backend *b, const void *data, size_t len, size_t align);
	int (*read)(struct jma_backend *b, uint64_t addr, void *buf, size_t len);
	/* A NUL-terminated string of at most @max bytes, malloc'd into *out;
	 * *trunc when it was longer. */
	int (*read_str)(struct jma_backend *b, uint64_t addr, size_t max, char **out, int *trunc);
	/* Have @write make jemalloc write one file named @name, preferably in
	 * @dir (the target's view; NULL: the engine's choice), and hand back its
	 * contents (malloc'd, at most @max bytes); nothing of it is left behind.
	 * The ptrace engine uses a private directory in the target's view,
	 * opened with the target's rights (process/dump.h); the emulator keeps
	 * the file its copy writes.  Called attached. */
	int (*dump)(struct jma_backend *b, const char *dir, const char *name, size_t max,
		    jma_dump_fn write, void *arg, char **buf, size_t *len);
	/* Optional, for engines over a source with no threads to stop (a
	 * core): its threads' ids and registers (malloc'd arrays), and its
	 * mappings as /proc/PID/maps text (malloc'd). */
	int (*threads)(struct jma_backend *b, pid_t **tids, struct arch_gpregs **regs, size_t *n);
	int (*maps_text)(struct jma_backend *b, char **text, size_t *len);
	/* Optional: the process's name and thread count, and the thread calls run in
	 * (info->tid 0 when none was chosen yet): fills those fields of @info,
	 * the rest is the session's. */
	void (*describe)(struct jma_backend *b, struct jma_target_info *info);
	/* Optional: how long the last begin..end kept a thread of the target
	 * from its own work (jma_held_ns); NULL: 0. */
	uint64_t (*held_ns)(struct jma_backend *b);
	void (*destroy)(struct jma_backend *b);
};

struct jma_backend {
	const struct jma_backend_ops *ops;
	jma_session *s;
};

/* The operations as the jemalloc layer calls them (backend.c): each records
 * its message in the session; calls and dumps need an attachment. */
void sess_expect_text(jma_session *s);
int sess_call(jma_session *s, const struct jma_bcall *c, uint64_t *ret);
uint64_t sess_scratch(jma_session *s, const void *data, size_t len, size_t align);
int sess_read(jma_session *s, uint64_t addr, void *buf, size_t len);
int sess_read_str(jma_session *s, uint64_t addr, size_t max, char **out, int *trunc);
int sess_dump(jma_session *s, const char *dir, const char *name, size_t max, jma_dump_fn write,
	     void *arg, char **buf, size_t *len);
/* The thread calls run in while attached, 0 when not attached. */
pid_t sess_call_tid(jma_session *s);

#endif
