/* perm.h -- why ptrace refused, in words an operator can act on. */
#ifndef ATTACH_PERM_H
#define ATTACH_PERM_H

#include <stddef.h>
#include <sys/types.h>

struct att_status;

/* Checks that need no ptrace: the process exists, is not a zombie, not a
 * kernel thread, not ourselves, not already traced.  Returns 0 and the
 * process's status in *@st, or -errno with a message in @msg (-ESRCH, -EPERM
 * for the rest). */
int att_precheck(pid_t pid, struct att_status *st, char *msg, size_t len);

/* How long to wait for another jemattach to finish with the process. */
#define ATT_TRACER_WAIT_MS 2000

/* Thread @tid of @pid (0: the process) traced by someone else: wait up to
 * @timeout_ms while that is another jemattach (it holds a thread for a few
 * milliseconds; the wait restarts when the next one takes over, up to five
 * times @timeout_ms in all), else at once -EBUSY with "traced by process M (name)" in @msg.
 * 0 when it is not traced (or no longer readable). */
int att_wait_tracer(pid_t pid, pid_t tid, int timeout_ms, char *msg, size_t len);

/* After PTRACE_SEIZE failed with EPERM: say which rule refused it
 * (capability, Yama ptrace_scope, other user, non-dumpable target). */
void att_explain_eperm(pid_t pid, char *msg, size_t len);

#endif
