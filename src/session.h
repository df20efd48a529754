/* session.h -- the private side of jma_session, shared by the src/ modules. */
#ifndef JMA_SESSION_PRIV_H
#define JMA_SESSION_PRIV_H

#include <jemattach.h>

#include "call.h"
#include "procfs.h"
#include "symbols.h"
#include "thread.h"

struct jma_session {
	struct jma_options opt;
	char *opt_prefix, *opt_module;	/* owned copies of the option strings */
	pid_t pid;
	struct att_status st;
	struct jma_syms *syms;		/* NULL until jma_open succeeded */

	struct att_thread th;
	int attached;
	int64_t attached_ns;		/* when the thread was stopped, for the hold time */
	int epoch_fresh;		/* "epoch" already written in this attachment */
	char tid_why[160];
	char tid_comm[64];

	enum jma_errkind kind;
	char err[1024];
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

/* Call a jemalloc function in the attached thread (pick.c/session.c). */
int jma_call(jma_session *s, struct att_call *c, uint64_t *ret);

#endif
