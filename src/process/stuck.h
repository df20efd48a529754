/* stuck.h -- a thread that stays asleep inside jemalloc where it may hold a lock, found without stopping anything.
 *
 * Our call would wait on that lock until the timeout, and then be left to
 * finish on its own.  Seen from /proc and the threads' stacks alone, before
 * any thread is stopped, so that a refusal leaves the target untouched.
 */
#ifndef JMA_PROCESS_STUCK_H
#define JMA_PROCESS_STUCK_H

#include "core/session.h"
#include "process/stacks.h"

/* Look at every thread of the session's process: 1 when one stays asleep in
 * the same system call at the same place (no context switch) for about
 * JMA_STUCK_MS (JMA_STUCK_FUTEX_MS when all such threads wait in futexes:
 * lock waiters, whose holder may be running), inside jemalloc where it may
 * hold a lock (proc_holder_of) -- described in @h, the one not waiting on a futex preferred (the holder
 * rather than its waiters) --, 0 when none does, -errno when the threads
 * cannot be listed.  Not counted: threads running or asleep outside a system
 * call, jemalloc's memory system calls (madvise, munmap... in a purge: they
 * finish), condition waits (background threads), and brief waits.  It only
 * waits when a thread looks stuck at the first look. */
#define JMA_STUCK_MS 100
#define JMA_STUCK_FUTEX_MS 1000
int proc_stuck_find(jma_session *s, struct jma_holder *h);

#endif
