/* engine.h -- the attach engine (attach/thread.h) on a session's process:
 * threads that log through the session, the engine's errors recorded on it. */
#ifndef JMA_PROCESS_ENGINE_H
#define JMA_PROCESS_ENGINE_H

#include "attach/thread.h"
#include "core/session.h"

/* A thread of the session's process, ready to seize, logging through the
 * session's callback. */
void proc_thread_setup(jma_session *s, struct att_thread *t, pid_t tid);

/* Record the attach engine's message for @err (from @t->err when set). */
int proc_fail_att(jma_session *s, const struct att_thread *t, enum jma_errkind kind, int err);

#endif
