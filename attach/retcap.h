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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One thread's breakpoint: closed, fd is -1 (att_retcap_init). */
struct att_retcap {
	int fd;
	void *map;
	size_t len;
};

void att_retcap_init(struct att_retcap *rc);
/* Arm the breakpoint at @addr for thread @tid, stopped or not (att_thread_seize
 * arms it before the stop: perf_event_open can take milliseconds).  -errno
 * with a message in @msg (perf unavailable, no free debug register...). */
int att_retcap_open(struct att_retcap *rc, pid_t tid, uint64_t addr, char *msg, size_t len);
/* The return value sampled with stack pointer @sp since the last take:
 * 0, or -ENOENT when none was. */
int att_retcap_take(struct att_retcap *rc, uint64_t sp, uint64_t *val);
/* Forget what was sampled so far (the thread's own signal handlers returning
 * through the trampoline before our call): a full buffer would drop the
 * call's sample. */
void att_retcap_drain(struct att_retcap *rc);
void att_retcap_close(struct att_retcap *rc);

#endif
