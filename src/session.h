/* session.h -- the private side of jma_session, shared by the src/ modules. */
#ifndef JMA_SESSION_PRIV_H
#define JMA_SESSION_PRIV_H

#include <jemattach.h>

#include "call.h"
#include "procfs.h"
#include "select.h"
#include "symbols.h"
#include "thread.h"

struct jma_session {
	struct jma_options opt;
	char *opt_prefix, *opt_module;	/* owned copies of the option strings */
	pid_t pid;
	struct att_status st;
	struct jma_syms *syms;		/* NULL until jma_open succeeded */

	struct att_thread th;
	struct att_thread *frozen;	/* --freeze: the other threads, all stopped */
	size_t nfrozen;
	int attached;
	int64_t attached_ns;		/* when the thread was stopped, for the hold time */
	int epoch_fresh;		/* "epoch" already written in this attachment */
	char tid_why[160];
	char tid_comm[64];

	enum jma_errkind kind;
	char err[4096];
};

/* Record an error: returns -|err| so callers write `return jma_fail(...)`. */
int jma_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Record the attach engine's message for @err. */
int jma_fail_att(jma_session *s, enum jma_errkind kind, int err);
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

/* Stop @tid just long enough to unwind it (threads.c).  Returns the number of
 * frames or -errno with a message in @err. */
int jma_stack_of(jma_session *s, pid_t tid, uint64_t *pcs, int max, char *err, size_t errlen);
/* Symbolize @n program counters into @f (threads.c). */
void jma_frames_fill(jma_session *s, const uint64_t *pcs, int n, struct jma_frame *f);

/* --freeze (freeze.c): stop every candidate thread, refusing (and undoing)
 * if one is inside jemalloc; move one frozen thread into s->th; let them go. */
int jma_freeze_all(jma_session *s, const struct att_candidate *c, size_t n);
int jma_take_frozen(jma_session *s, pid_t tid);
void jma_thaw_all(jma_session *s);

/* After a call timed out: append to the error the threads whose stacks are
 * inside jemalloc -- the likely lock holders -- with their backtraces. */
void jma_explain_stall(jma_session *s);

/* Call a jemalloc function in the attached thread (session.c). */
int jma_call(jma_session *s, struct att_call *c, uint64_t *ret);

#endif
