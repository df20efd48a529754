/* defer.h -- hold back our own SIGINT/SIGTERM/SIGHUP/SIGPIPE and stop signals
 * (SIGTSTP/SIGTTIN/SIGTTOU) while a target is modified.
 *
 * While any thread is seized, these signals (and SIGCHLD, which att_wait
 * collects) are blocked in the calling thread.  If one arrives while we wait
 * for the target, the wait returns -EINTR so the caller abandons the call and
 * restores the target; the signal is raised again once the last thread is
 * released, so its usual action (or the caller's handler) runs afterwards.
 * A stop signal does not cut the call short: it stays pending until the last
 * thread is given back, so Ctrl-Z never leaves a borrowed thread frozen.
 * (SIGSTOP cannot be held back: jemattach stopped mid-call keeps that one
 * thread stopped until it is continued.)
 */
#ifndef ATTACH_DEFER_H
#define ATTACH_DEFER_H

#include <signal.h>
#include <stdint.h>

void att_defer_enter(void);
void att_defer_leave(void);

/* Wait for SIGCHLD or a deferred signal, at most @timeout_ns.  Returns the
 * signal taken, 0 on timeout. */
int att_defer_wait(int64_t timeout_ns);

/* The same signals held back while no thread need be: for a change of ours in
 * the target's view that must be undone before we may end (a private
 * directory, targetfs.h).  One that arrives meanwhile cuts calls short as
 * above (att_defer_pending) and takes effect once the outermost of these and
 * of att_defer_enter is left; they nest with each other. */
void att_defer_block(void);
void att_defer_unblock(void);

/* A thread is held (between the outermost att_defer_enter and its leave). */
int att_defer_active(void);

/* A deferred signal has arrived since the outermost att_defer_enter: no new
 * call should start.  Returns that signal or 0. */
int att_defer_pending(void);

#endif
