/* perm.h -- why ptrace refused, in words an operator can act on. */
#ifndef ATTACH_PERM_H
#define ATTACH_PERM_H

#include <stddef.h>
#include <sys/types.h>

/* Checks that need no ptrace: the process exists, is not a zombie, not a
 * kernel thread, not ourselves, not already traced.  Returns 0, or -errno with
 * a message in @msg (-ESRCH, -EPERM for the rest). */
int att_precheck(pid_t pid, char *msg, size_t len);

/* After PTRACE_SEIZE failed with EPERM: say which rule refused it
 * (capability, Yama ptrace_scope, other user, non-dumpable target). */
void att_explain_eperm(pid_t pid, char *msg, size_t len);

#endif
