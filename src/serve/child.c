/* child.c -- one operation on a target, run in a child process.
 *
 * Why a process and not a thread: serve.h.  The child's argument is sent to
 * it as bytes (the operation packs it: ops.c); its result comes back the
 * same way: a fixed header, then the payload, read straight into a blob.
 *
 * Why not fork the server: a fork copies whatever lock another thread held
 * at that instant.  glibc takes malloc's and stdio's locks around fork, but
 * nothing else does -- GCC 12's libasan does not (SANITIZE=1): a worker
 * forked while another thread refilled its cache (every connection thread
 * does) waited for that lock until its hard limit, with a target's thread
 * borrowed (seen in CI).  So the workers come from the forker, a process
 * forked at the server's start before any thread, single-threaded for ever:
 * it forks a go-between that forks the worker and ends, and the worker is
 * adopted by the server (a child subreaper).  The server waits for it,
 * kills it and reads how it ended exactly as for a child of its own.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

/* All of @len bytes to @fd (@out) or from it; -1 at its end or an error.
 * send(): a worker that died is EPIPE, not a SIGPIPE for the whole server. */
static int io_all(int fd, void *buf, size_t len, int out)
{
	char *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return io_all(fd, (void *)buf, len, 1);
}

static int read_all(int fd, void *buf, size_t len)
{
	return io_all(fd, buf, len, 0);
}

volatile sig_atomic_t child_cancelled;

static void on_cancel(int sig)
{
	child_cancelled = sig;
}

/* What the server asks the forker for, with the socket to the server. */
struct request {
	child_fn fn;
	int cancellable;
};

/* The worker: adopted by the server once the go-between ended; then its
 * argument, the operation, the answer. */
static void __attribute__((noreturn)) worker_main(const struct request *q, int fd, pid_t server)
{
	struct sigaction sa = { .sa_handler = on_cancel };
	struct op_result r = { 0 };
	struct wire w = { 0 };
	double end = jma_clock_s(CLOCK_MONOTONIC) + 5;
	uint64_t len;
	char *arg, ready = 1;
	sigset_t none;

	/* A worker never outlives the server, however the server ends (SIGKILL
	 * included).  Its parent-death signal is the server's from the moment
	 * it is the server's child; the go-between ends at once.  Killed
	 * mid-call, the call restores the target's thread itself. */
	while (getppid() != server) {
		struct timespec nap = { 0, 1000 * 1000 };

		if (jma_clock_s(CLOCK_MONOTONIC) > end)
			_exit(1);
		nanosleep(&nap, NULL);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != server)
		_exit(1);
	if (dup2(fd, 3) == 3)
		fd = 3;
	close_range(4, ~0U, 0);
	if (write_all(fd, &ready, 1) || read_all(fd, &len, sizeof(len)) || !(arg = malloc(len + 1)) ||
	    read_all(fd, arg, len))
		_exit(1);
	arg[len] = '\0';

	/* SIGTERM is blocked here (forker_main), so one sent at once waits
	 * for the handler set here; the library holds the termination signals
	 * back itself while a thread is borrowed. */
	sigemptyset(&none);
	sigemptyset(&sa.sa_mask);
	signal(SIGPIPE, SIG_IGN);
	if (q->cancellable)
		sigaction(SIGTERM, &sa, NULL);
	else
		signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	q->fn(arg, len, &r);
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

/* --- the forker ------------------------------------------------------------- */

static int forker_fd = -1;	/* the server's end of the forker's socket */

/* One request: @q and the socket to the server (-1: none came with it).
 * 0 when the server is gone. */
static ssize_t take_request(int ctl, struct request *q, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { q, sizeof(*q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n > 0 && (n != sizeof(*q) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	return n;
}

static void __attribute__((noreturn)) forker_main(int ctl, pid_t server)
{
	sigset_t held;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != server)
		_exit(1);
	/* Held back in every worker until it set its own (worker_main). */
	sigemptyset(&held);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGHUP);
	sigaddset(&held, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &held, NULL);
	signal(SIGCHLD, SIG_DFL);
	if (dup2(ctl, 3) != 3)
		_exit(1);
	close_range(4, ~0U, 0);
	for (;;) {
		struct request q;
		int fd;
		ssize_t n = take_request(3, &q, &fd);
		pid_t mid;

		if (n == 0)
			_exit(0);
		if (n < 0 && errno != EINTR)
			_exit(1);
		if (fd < 0)
			continue;
		/* The go-between: it forks the worker, says its PID and ends,
		 * and the worker goes to the server (the nearest subreaper). */
		mid = fork();
		if (mid == 0) {
			pid_t pid;
			int32_t said;

			close(3);
			pid = fork();
			if (pid == 0)
				worker_main(&q, fd, server);
			said = pid > 0 ? pid : -errno;
			_exit(write_all(fd, &said, sizeof(said)) ? 1 : 0);
		}
		close(fd);
		while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

int child_forker_start(void)
{
	pid_t server = getpid(), pid;
	int sv[2];

	if (forker_fd >= 0)
		return 0;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return -errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0)
		forker_main(sv[1], server);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	forker_fd = sv[0];
	return 0;
}

/* A worker for @fn: its PID, once it is the server's child, and in *@sock
 * the socket to it; -errno when there is none. */
static pid_t worker_start(child_fn fn, int cancellable, int *sock)
{
	struct request q = { .fn = fn, .cancellable = cancellable };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &q, sizeof(q) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int sv[2], err;
	int32_t pid;
	char ready;

	if (forker_fd < 0)
		return -ECHILD;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	err = sendmsg(forker_fd, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(q) ? 0 : -errno;
	close(sv[1]);
	/* The go-between says the PID, then ends; the worker says it is ours. */
	if (!err && (read_all(sv[0], &pid, sizeof(pid)) || pid == 0))
		err = -ECHILD;
	if (!err && pid < 0)
		err = pid;
	if (!err && read_all(sv[0], &ready, 1)) {
		/* It died before: ours all the same, to reap. */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		err = -ECHILD;
	}
	if (err) {
		close(sv[0]);
		return err;
	}
	*sock = sv[0];
	return pid;
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

int child_run(child_fn fn, const struct iovec *arg, int narg, const struct child_opts *o,
	      struct op_result *out)
{
	struct waiting wt = { .o = o };
	struct wire w;
	uint64_t arglen = 0;
	int fd = -1, status = 0, err, ended;
	double t0 = jma_clock_s(CLOCK_MONOTONIC), end = t0 + o->hard_limit;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	out->started = t0;
	pid = worker_start(fn, o->cancellable, &fd);
	if (pid < 0) {
		fail(out, pid, JMA_ERR_TARGET, "no worker process: %s", pid == -ECHILD ?
		     "the forker has ended" : strerror(-pid));
		return out->rc;
	}
	wt.pid = pid;
	/* It reads all of it before anything else: the writes end. */
	for (int i = 0; i < narg; i++)
		arglen += arg[i].iov_len;
	err = write_all(fd, &arglen, sizeof(arglen)) ? -EIO : 0;
	for (int i = 0; i < narg && !err; i++)
		err = write_all(fd, arg[i].iov_base, arg[i].iov_len) ? -EIO : 0;
	if (!err)
		err = read_until(fd, &w, sizeof(w), end, &wt);
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
		} else if (w.len && !(err = read_until(fd, out->blob->data, w.len, end, &wt))) {
			out->data = out->blob->data;
			out->len = w.len;
		}
	}
	if (err == -ETIMEDOUT)
		end_child(&wt);
	close(fd);
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
