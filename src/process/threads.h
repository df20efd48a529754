/* threads.h -- every thread of the process, and the likely holders of a lock. */
#ifndef JMA_PROCESS_THREADS_H
#define JMA_PROCESS_THREADS_H

#include "core/session.h"

/* After a call timed out: append to the session's error the threads whose
 * stacks are inside jemalloc -- the likely lock holders -- with their
 * backtraces. */
void proc_explain_stall(jma_session *s);

#endif
