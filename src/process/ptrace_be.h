/* ptrace_be.h -- the live-process backend's state, and what its files (src/process/ptrace*.c) share.
 *
 * Policy says whether and where calls may run; mechanism runs them:
 *
 *   ptrace.c         the backend: jma_open installs it, begin (the checks
 *                    before anything stops, then a thread chosen), its
 *                    operations table, reads, dumps, what it tells of itself
 *   ptrace_refuse.c  policy: the refusals (cgroup memory, a stuck lock holder,
 *                    the call engine, an exec or the loader at work)
 *   ptrace_choose.c  policy: which thread to borrow, in what order, and which
 *                    not (inside jemalloc or the loader, in restart_syscall)
 *   ptrace_frames.c  policy's eyes: is a thread inside jemalloc or the loader
 *   ptrace_borrow.c  mechanism: a thread stopped for calls and given back
 *   ptrace_call.c    mechanism: a call in the borrowed thread, its scratch
 *                    memory; a thread a call leaves in an unknown state
 *   ptrace_text.c    mechanism: how the text a call writes reaches the caller
 *                    (refused, unless forced, where nothing takes it safely)
 *
 * Every function returns 0 or -errno with the message recorded in the
 * session (sess_fail), unless it says otherwise; the thread choice's "try
 * the next" is > 0, its reason in a caller's buffer.
 */
#ifndef JMA_PROCESS_PTRACE_BE_H
#define JMA_PROCESS_PTRACE_BE_H

#include <stddef.h>
#include <stdint.h>

#include "attach/call.h"
#include "attach/procfs.h"
#include "attach/select.h"
#include "attach/thread.h"
#include "core/session.h"
#include "process/freeze.h"

struct ptrace_be {
	struct jma_backend be;
	struct att_thread th;		/* the borrowed thread */
	struct jma_freeze fz;		/* --freeze: the other threads, all stopped */
	uint64_t restorer;		/* the target's rt_sigreturn trampoline, 0 if none */
	int begun;			/* begin ran before: the maps snapshot is old */
	int text_checked;		/* malloc_message read for this command (expect_text) */
	int has_logger;			/* ... and the application had set it */
	uint64_t sink;			/* the text sink (sink.h), 0 if none */
	int sink_known;			/* looked for in this session */
	size_t stray;			/* bytes the last call wrote to fd 2 besides its text */
	pid_t restart_tid;		/* a thread this begin passed over for restart_syscall */
	char restart_why[200];		/* ... in words */
	char waited[96];		/* what begin waited for, for tid_why */
	struct att_status st;		/* the process's status (att_precheck, then describe) */
	/* The thread calls run in (for info, threads and -v), and why that one. */
	pid_t tid;
	char tid_why[160];
	char tid_comm[64];
	uint64_t held_ns;		/* the last attachment's hold (jma_held_ns) */
	char dumped[512];		/* the private directory of a dump, to sweep beside at end */
	char dump_name[64];		/* ... and the file it held */
	int told_mem;			/* a refused or abandoned read was logged */
};

/* ptrace_refuse.c.  At jma_open, before anything stops: the call sentinels'
 * pages and the memory left under the cgroup's limit (unless forced). */
int ptrace_refuse_open(jma_session *s);
/* Before any thread stops: one stays asleep inside jemalloc where it may hold
 * a lock (forced: a warning). */
int ptrace_refuse_stuck(jma_session *s);
/* Only the fallback call engine could serve, for the reason @why: the
 * process's exit, an exec or the loader at work when they are the cause. */
int ptrace_refuse_engine(jma_session *s, const char *why);
/* The process opened has exited (its PID may be another's by now): its
 * error, else 0. */
int ptrace_fail_exited(jma_session *s);
/* The process runs another program than the one whose symbols were read. */
int ptrace_fail_exec(jma_session *s);
/* Either of the two, as found now (one read of its exec mark): else 0. */
int ptrace_fail_changed(jma_session *s);
/* The command's maps were read while the process was loading code, or before
 * an exec: its error, or 0 when they were not (looking up to @wait_ms). */
int ptrace_fail_loading(jma_session *s, int wait_ms);

/* ptrace_choose.c.  Choose a thread, stop it and ready it for calls (under
 * --freeze with every other thread stopped), waiting a while for one that
 * only a restart_syscall keeps from use. */
int ptrace_choose(struct ptrace_be *p);

/* ptrace_frames.c.  Where a thread is, as far as calling from it goes. */
enum { PTRACE_FRAMES_OK, PTRACE_FRAMES_JEMALLOC, PTRACE_FRAMES_LOADER };
/* The stopped thread @t (its registers saved): PTRACE_FRAMES_JEMALLOC when
 * anything on its stack is inside jemalloc, _LOADER inside code the dynamic
 * loader called, the place named in @where. */
int ptrace_frames_unsafe(jma_session *s, const struct att_thread *t, char *where, size_t len);
/* Before stopping candidate @c: 1 when the stack it left its last system
 * call with is inside jemalloc (named in @where).  Advisory. */
int ptrace_frames_known_unsafe(jma_session *s, const struct att_candidate *c, char *where,
			       size_t len);

/* ptrace_borrow.c.  Stop thread @tid (under --freeze: take it from the frozen
 * ones) ready for a hijack.  0; > 0 when it cannot be stopped now (why in
 * @why); < 0 when nothing can be (recorded). */
int ptrace_seize(struct ptrace_be *p, pid_t tid, char *why, size_t len);
/* A candidate found unsuitable goes back to how it was: released, or under
 * --freeze restored but kept stopped with the others. */
void ptrace_give_back(struct ptrace_be *p);
/* The backend's end: the borrowed thread and the frozen ones let go. */
int ptrace_end(struct jma_backend *b);

/* ptrace_call.c: the backend's call and scratch operations. */
int ptrace_call(struct jma_backend *b, const struct jma_bcall *bc, uint64_t *ret);
uint64_t ptrace_scratch(struct jma_backend *b, const void *data, size_t len, size_t align);

/* ptrace_text.c.  The backend's expect_text: what serves a text callback,
 * looked up while nothing is stopped. */
void ptrace_expect_text(struct jma_backend *b);
/* Fill @c's text slots so that @bc's text reaches @bc->text. */
int ptrace_route_text(struct ptrace_be *p, const struct jma_bcall *bc, struct att_call *c);

#endif
