/* retcap.h -- catching a remote function's return value without a trap.
 *
 * The self-restoring call returns into the target's own rt_sigreturn
 * trampoline, whose first instruction overwrites the return value register.
 * A perf_event hardware breakpoint on that instruction, owned by us, samples
 * the registers just before it runs.  It stops nothing and sends no signal:
 * when we die, its file descriptor closes and the breakpoint goes with it
 * (a ptrace-set debug register would outlive us and kill the target with
 * SIGTRAP).
 */
#ifndef ATTACH_RETCAP_H
#define ATTACH_RETCAP_H

#include <stdint.h>

#include "thread.h"

/* Arm the breakpoint at @addr for thread @t, stopped or not (att_thread_seize
 * arms it before the stop: perf_event_open can take milliseconds).  -errno with t->err set (perf
 * unavailable, no free debug register...). */
int att_retcap_open(struct att_thread *t, uint64_t addr);
/* The return value sampled with stack pointer @sp since the last take:
 * 0, or -ENOENT when none was. */
int att_retcap_take(struct att_thread *t, uint64_t sp, uint64_t *val);
/* Forget what was sampled so far (the thread's own signal handlers returning
 * through the trampoline before our call): a full buffer would drop the
 * call's sample. */
void att_retcap_drain(struct att_thread *t);
void att_retcap_close(struct att_thread *t);

#endif
