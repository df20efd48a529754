/* defer.c -- deferral of the tracer's termination signals (see defer.h). */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "defer.h"

static const int deferred[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };

/* Held back but not waited for: they neither end nor cut short a call.
 * SIGPIPE is synchronous to our own writes; a stop request (Ctrl-Z,
 * background tty I/O) lets the call finish and the thread go back first: it
 * takes effect when the mask is restored, the target untouched meanwhile. */
static int held_only(int sig)
{
	return sig == SIGPIPE || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static __thread int depth;	/* att_defer_enter and att_defer_block */
static __thread int held;	/* att_defer_enter alone: threads held */
static __thread sigset_t saved_mask;
static __thread sigset_t caught;	/* taken by sigtimedwait: must be raised again */
static __thread int first_caught;

static void deferred_set(sigset_t *s, int with_chld)
{
	sigemptyset(s);
	for (unsigned i = 0; i < sizeof(deferred) / sizeof(*deferred); i++)
		sigaddset(s, deferred[i]);
	if (with_chld)
		sigaddset(s, SIGCHLD);
}

void att_defer_block(void)
{
	sigset_t s;

	if (depth++)
		return;
	deferred_set(&s, 1);
	pthread_sigmask(SIG_BLOCK, &s, &saved_mask);
	sigemptyset(&caught);
	first_caught = 0;
}

void att_defer_unblock(void)
{
	if (depth == 0 || --depth)
		return;
	/* Raise while still blocked so each one is pending exactly once, then
	 * restore the caller's mask: the usual action happens now, target restored. */
	for (unsigned i = 0; i < sizeof(deferred) / sizeof(*deferred); i++)
		if (sigismember(&caught, deferred[i]))
			raise(deferred[i]);
	pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

void att_defer_enter(void)
{
	held++;
	att_defer_block();
}

void att_defer_leave(void)
{
	if (held == 0)
		return;
	held--;
	att_defer_unblock();
}

int att_defer_wait(int64_t timeout_ns)
{
	sigset_t s;
	struct timespec ts;
	int sig;

	deferred_set(&s, 1);
	for (unsigned i = 0; i < sizeof(deferred) / sizeof(*deferred); i++)
		if (held_only(deferred[i]))
			sigdelset(&s, deferred[i]);
	if (timeout_ns < 0)
		timeout_ns = 0;
	ts.tv_sec = timeout_ns / 1000000000;
	ts.tv_nsec = timeout_ns % 1000000000;
	for (;;) {
		struct sigaction sa;

		sig = sigtimedwait(&s, NULL, &ts);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig <= 0 || sig == SIGCHLD)
			return sig < 0 ? 0 : sig;
		/* A signal we ignore (SIGINT in a background job) changes nothing. */
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			continue;
		break;
	}
	sigaddset(&caught, sig);
	if (!first_caught)
		first_caught = sig;
	return sig;
}

int att_defer_active(void)
{
	return held > 0;
}

int att_defer_pending(void)
{
	sigset_t p;

	if (first_caught)
		return first_caught;
	if (sigpending(&p) == 0)
		for (unsigned i = 0; i < sizeof(deferred) / sizeof(*deferred); i++)
			if (!held_only(deferred[i]) && sigismember(&p, deferred[i]))
				return deferred[i];
	return 0;
}
