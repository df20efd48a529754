/* child.c -- one operation on a target, run in a forked child process.
 *
 * Why a process and not a thread: serve.h.  The child is a copy of the
 * server, so the operation's arguments need no transport; only the result
 * comes back, over a pipe: a fixed header, then the payload, read straight
 * into a blob.  The child touches nothing the server's other threads may have
 * locked at the fork but malloc and stdio, which glibc makes safe across fork.
 *
 * A child is waited for within bounds, always: its answer until its hard
 * limit (or at once when the server stops), then its end for CHILD_REAP_S
 * after SIGKILL.  One that does not end then sleeps in the kernel where
 * SIGKILL does not reach (a read of a page of a FUSE file whose server never
 * answers: the kernel waits for the answer once the request was taken) and
 * is left behind: listed, reaped when it ends (child_reap), and it keeps
 * new children from its process and, past CHILD_STUCK_PER_UID, from its
 * user's processes -- so a process that traps workers traps one, and the
 * server's threads are never trapped with it.
 *
 * Not so under ASan (SANITIZE=1): GCC 12's libasan takes no allocator lock
 * around fork, so a child forked while another thread refills its cache
 * (every new connection thread does, for libmicrohttpd's 32 KiB pool) waits
 * for that size class's lock forever -- seen in 75-serve's fuzz, inside a
 * stats call with the target's thread borrowed, and in its 50 scrapes at
 * once (CI), until the hard limit's SIGKILL (the call restores the thread).
 * The release build is not exposed.  Tests tell that cause from others by
 * the worker's stack (asan_worker_deadlocked, tests/lib-serve.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve.h"

struct wire {
	int32_t rc, kind, attached;
	uint64_t held_ns;
	uint64_t len;
	char msg[512];
};

void op_result_clear(struct op_result *r)
{
	if (r->blob)
		blob_put(r->blob);
	else
		free(r->data);
	memset(r, 0, sizeof(*r));
}

void op_result_share(struct op_result *dst, const struct op_result *src)
{
	*dst = *src;
	dst->blob = blob_get(src->blob);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

volatile sig_atomic_t child_cancelled;

static void on_cancel(int sig)
{
	child_cancelled = sig;
}

static void __attribute__((noreturn)) child_main(child_fn fn, const void *arg, int fd,
						 int cancellable, pid_t server)
{
	struct sigaction sa = { .sa_handler = on_cancel };
	struct op_result r = { 0 };
	struct wire w = { 0 };
	sigset_t none;

	/* A worker never outlives the server, however the server ends (SIGKILL
	 * included): the thread that forked it waits for it in child_run, so
	 * only the server's end ends that thread.  Killed mid-call, the call
	 * restores the target's thread itself.  getppid: the server may have
	 * died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != server)
		_exit(1);

	/* SIGTERM is blocked here (child_run), so one sent at once waits for
	 * the handler set here; the library holds the termination signals back
	 * itself while a thread is borrowed. */
	sigemptyset(&none);
	sigemptyset(&sa.sa_mask);
	signal(SIGPIPE, SIG_IGN);
	if (cancellable)
		sigaction(SIGTERM, &sa, NULL);
	else
		signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	/* Keep nothing of the server's: its listening socket, connections. */
	if (dup2(fd, 3) == 3)
		fd = 3;
	close_range(4, ~0U, 0);
	fn(arg, &r);
	w.rc = r.rc;
	w.kind = r.kind;
	w.attached = r.attached;
	w.held_ns = r.held_ns;
	w.len = r.data ? r.len : 0;
	memcpy(w.msg, r.msg, sizeof(w.msg));
	w.msg[sizeof(w.msg) - 1] = '\0';
	if (write_all(fd, &w, sizeof(w)) == 0 && w.len)
		write_all(fd, r.data, w.len);
	_exit(0);
}

/* --- children left behind ------------------------------------------------- */

#define STUCK_MAX 64

static struct {
	pthread_mutex_t mu;
	struct { pid_t child, target; uid_t owner; } v[STUCK_MAX];
	unsigned n;
} stuck = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void stuck_add(pid_t child, pid_t target, uid_t owner)
{
	pthread_mutex_lock(&stuck.mu);
	/* Full (STUCK_MAX users' worth): forgotten, a zombie once it ends. */
	if (stuck.n < STUCK_MAX)
		stuck.v[stuck.n++] = (typeof(stuck.v[0])){ child, target, owner };
	pthread_mutex_unlock(&stuck.mu);
}

unsigned child_reap(void)
{
	unsigned n;

	pthread_mutex_lock(&stuck.mu);
	for (unsigned i = 0; i < stuck.n;) {
		if (waitpid(stuck.v[i].child, NULL, WNOHANG) != 0)
			stuck.v[i] = stuck.v[--stuck.n];
		else
			i++;
	}
	n = stuck.n;
	pthread_mutex_unlock(&stuck.mu);
	return n;
}

int child_refused(pid_t pid, uid_t uid, char *why, size_t whylen)
{
	unsigned of_uid = 0, of_pid = 0, all;

	child_reap();
	pthread_mutex_lock(&stuck.mu);
	for (unsigned i = 0; i < stuck.n; i++) {
		of_pid += stuck.v[i].target == pid;
		of_uid += stuck.v[i].owner == uid;
	}
	all = stuck.n;
	pthread_mutex_unlock(&stuck.mu);
	if (of_pid)
		snprintf(why, whylen, "a worker for this process is stuck in the kernel (a file "
			 "system that does not answer?): none other until it ends");
	else if (of_uid >= CHILD_STUCK_PER_UID)
		snprintf(why, whylen, "%u workers for processes of uid %u are stuck in the kernel "
			 "(a file system that does not answer?): none other for that user until "
			 "they end", of_uid, (unsigned)uid);
	else if (all >= STUCK_MAX)
		snprintf(why, whylen, "%u workers are stuck in the kernel: none other until they end",
			 all);
	else
		return 0;
	return -EBUSY;
}

/* Wait up to CHILD_REAP_S for @pid to end; 1 when it did (*@status). */
static int reap_within(pid_t pid, int *status)
{
	double end = jma_clock_s(CLOCK_MONOTONIC) + CHILD_REAP_S;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		struct timespec nap = { 0, 10 * 1000 * 1000 };

		if (r == pid || (r < 0 && errno != EINTR))
			return 1;
		if (jma_clock_s(CLOCK_MONOTONIC) >= end)
			return 0;
		nanosleep(&nap, NULL);
	}
}

/* --- the server's side ------------------------------------------------------- */

/* While a child works: the server's stop asks it to end. */
struct waiting {
	pid_t pid;
	const struct child_opts *o;
	int asked;			/* SIGTERM sent (cancellable) */
	double kill_at;			/* then SIGKILL at this time */
	int killed;
};

static void end_child(struct waiting *w)
{
	if (!w->killed)
		kill(w->pid, SIGKILL);
	w->killed = 1;
}

/* Read exactly @len bytes before @end (monotonic s); 0, -ETIMEDOUT,
 * -ECANCELED (the server stops and the child was killed), -EIO. */
static int read_until(int fd, void *buf, size_t len, double end, struct waiting *w)
{
	char *p = buf;

	while (len) {
		struct pollfd pf = { fd, POLLIN, 0 };
		double now = jma_clock_s(CLOCK_MONOTONIC), left = end - now;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (w->o->stop && atomic_load(w->o->stop)) {
			if (!w->o->cancellable) {
				end_child(w);
				return -ECANCELED;
			}
			if (!w->asked) {
				kill(w->pid, SIGTERM);
				w->asked = 1;
				w->kill_at = now + CHILD_GRACE_S;
			} else if (now >= w->kill_at) {
				end_child(w);
				return -ECANCELED;
			}
		}
		/* The server's stop is looked at every quarter second. */
		if (w->o->stop && left > 0.25)
			left = 0.25;
		n = poll(&pf, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			continue;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fail(struct op_result *out, int rc, int kind, const char *fmt, const char *arg)
{
	out->rc = rc;
	out->kind = kind;
	snprintf(out->msg, sizeof(out->msg), fmt, arg);
}

int child_run(child_fn fn, const void *arg, const struct child_opts *o, struct op_result *out)
{
	struct waiting wt = { .o = o };
	sigset_t term, old;
	int fork_errno;
	struct wire w;
	int fds[2], status = 0, err, ended;
	double t0 = jma_clock_s(CLOCK_MONOTONIC), end = t0 + o->hard_limit;
	pid_t pid, server;

	memset(out, 0, sizeof(*out));
	out->started = t0;
	if (pipe2(fds, O_CLOEXEC)) {
		fail(out, -errno, JMA_ERR_TARGET, "pipe: %s", strerror(errno));
		return out->rc;
	}
	/* A cancellation's SIGTERM must find the child's handler: the child
	 * starts with it blocked (as the server's threads have it anyway). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	server = getpid();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_main(fn, arg, fds[1], o->cancellable, server);
	}
	fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		fail(out, -fork_errno, JMA_ERR_TARGET, "fork: %s", strerror(fork_errno));
		return out->rc;
	}
	wt.pid = pid;
	err = read_until(fds[0], &w, sizeof(w), end, &wt);
	if (!err && w.len > o->max)
		err = -EFBIG;
	if (!err) {
		out->rc = w.rc;
		out->kind = w.kind;
		out->attached = w.attached;
		out->held_ns = w.held_ns;
		memcpy(out->msg, w.msg, sizeof(out->msg));
		out->msg[sizeof(out->msg) - 1] = '\0';
		if (w.len && !(out->blob = blob_new(w.len))) {
			err = errno == ENOSPC ? -ENOSPC : -ENOMEM;
		} else if (w.len && !(err = read_until(fds[0], out->blob->data, w.len, end, &wt))) {
			out->data = out->blob->data;
			out->len = w.len;
		}
	}
	if (err == -ETIMEDOUT)
		end_child(&wt);
	close(fds[0]);
	/* Its answer is in (or it was killed): it ends at once, or is stuck. */
	ended = reap_within(pid, &status);
	if (!ended && !wt.killed) {
		end_child(&wt);
		ended = reap_within(pid, &status);
	}
	if (!ended)
		stuck_add(pid, o->target, o->owner);
	out->killed = wt.killed;
	out->secs = jma_clock_s(CLOCK_MONOTONIC) - t0;
	if (err) {
		if (out->blob)
			blob_put(out->blob);
		out->blob = NULL;
		out->data = NULL;
		out->len = 0;
		out->rc = err == -ETIMEDOUT || err == -EFBIG || err == -ECANCELED || err == -ENOSPC
			  || err == -ENOMEM ? err : -EIO;
		out->kind = err == -ETIMEDOUT || err == -ECANCELED || err == -ENOSPC ? JMA_ERR_UNSAFE
			    : JMA_ERR_TARGET;
		if (err == -ETIMEDOUT)
			snprintf(out->msg, sizeof(out->msg), "the worker gave no answer within %.0f s "
				 "and was killed (the target restores itself)", o->hard_limit);
		else if (err == -ECANCELED)
			snprintf(out->msg, sizeof(out->msg), "the server stops: the worker was killed "
				 "(the target restores itself)");
		else if (err == -EFBIG)
			snprintf(out->msg, sizeof(out->msg), "the answer is larger than %zu bytes", o->max);
		else if (err == -ENOSPC)
			snprintf(out->msg, sizeof(out->msg), "the server holds %zu MiB of answers already "
				 "(at most %lu MiB): try again when they are sent", blob_total() >> 20,
				 BLOB_TOTAL_MAX >> 20);
		else if (err == -ENOMEM)
			snprintf(out->msg, sizeof(out->msg), "out of memory");
		else if (ended && WIFSIGNALED(status))
			snprintf(out->msg, sizeof(out->msg), "the worker process died of signal %d",
				 WTERMSIG(status));
		else
			snprintf(out->msg, sizeof(out->msg), "the worker's answer was cut short");
	}
	if (!ended) {
		size_t n = strlen(out->msg);

		snprintf(out->msg + n, sizeof(out->msg) - n, "%sits process %d is stuck in the "
			 "kernel and left behind", n ? "; " : "", (int)pid);
	}
	return out->rc;
}
