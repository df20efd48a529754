/* select.h -- which thread of a process to borrow for calls, in order of preference.
 *
 * Order: threads asleep in an idle system call (event loop, read, sleep),
 * then threads waiting on a futex, then in any other system call, then
 * running threads, then threads in restart_syscall (resuming a timed wait
 * an earlier stop cut short: only the fallback engine can borrow them), then
 * stopped ones; the main thread first among equals and ahead of every
 * thread that is busy (see cmp_cand).  Threads in uninterruptible sleep (D)
 * come last: they cannot be stopped until the kernel lets go of them.
 */
#ifndef ATTACH_SELECT_H
#define ATTACH_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	ATT_RANK_IDLE, ATT_RANK_FUTEX, ATT_RANK_OTHER, ATT_RANK_RUNNING, ATT_RANK_RESTART,
	ATT_RANK_STOPPED, ATT_RANK_ELSE,
};

struct att_candidate {
	pid_t tid;
	int rank;		/* ATT_RANK_* */
	char state;
	long syscall;		/* -1 running, -2 unknown */
	uint64_t sp, pc;	/* where it entered that system call (0: unknown) */
	char comm[64];
	char why[96];		/* "asleep in epoll_wait", "running", ... */
};

/* Candidates of @pid in preference order: returns 0.  With @only != 0, that
 * thread alone (-ESRCH if it is not a thread of @pid).  With @first_idle,
 * stop at the best candidate when it is idle (the main thread, else the
 * lowest tid asleep in an idle system call) and return 1 with that one alone:
 * the rest are not even looked at, which matters with thousands of threads. */
int att_select_threads(pid_t pid, pid_t only, int first_idle, struct att_candidate **out,
		       size_t *n);

#endif
