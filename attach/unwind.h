/* unwind.h -- the call stack of a stopped thread, with libunwind-ptrace. */
#ifndef ATTACH_UNWIND_H
#define ATTACH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Fill @pcs with up to @max program counters of ptrace-stopped thread @tid,
 * innermost first.  Returns the number of frames (>= 1 when the first pc could
 * be read) or -errno.  *complete tells whether the walk reached the outermost
 * frame (rather than stopping for lack of unwind information or at @max). */
int att_unwind(pid_t tid, uint64_t *pcs, int max, int *complete);

#endif
