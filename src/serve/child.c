/* child.c -- one operation on a target, run in a forked child process.
 *
 * Why a process and not a thread: serve.h.  The child is a copy of the
 * server, so the operation's arguments need no transport; only the result
 * comes back, over a pipe: a fixed header, then the payload.  The child
 * touches nothing the server's other threads may have locked at the fork but
 * malloc and stdio, which glibc makes safe across fork.
 *
 * Not so under ASan (SANITIZE=1): GCC 12's libasan takes no allocator lock
 * around fork, so a child forked while another thread refills its cache
 * (every new connection thread does, for libmicrohttpd's 32 KiB pool) waits
 * for that size class's lock forever -- seen in 75-serve's fuzz, inside a
 * stats call with the target's thread borrowed, until the hard limit's
 * SIGKILL (the call restores the thread).  The release build is not exposed.
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
	free(r->data);
	memset(r, 0, sizeof(*r));
}

int op_result_copy(struct op_result *dst, const struct op_result *src)
{
	*dst = *src;
	dst->data = NULL;
	if (src->data) {
		dst->data = malloc(src->len + 1);
		if (!dst->data) {
			dst->rc = -ENOMEM;
			snprintf(dst->msg, sizeof(dst->msg), "out of memory");
			dst->len = 0;
			return -ENOMEM;
		}
		memcpy(dst->data, src->data, src->len);
		dst->data[src->len] = '\0';
	}
	return 0;
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

/* While a child works: a cancellation asks it once (SIGTERM) to finish now. */
struct waiting {
	pid_t pid;
	const atomic_int *cancel;
	int asked;
};

/* Read exactly @len bytes before @end (monotonic s); 0, -ETIMEDOUT, -EIO. */
static int read_until(int fd, void *buf, size_t len, double end, struct waiting *w)
{
	char *p = buf;

	while (len) {
		struct pollfd pf = { fd, POLLIN, 0 };
		double left = end - jma_clock_s(CLOCK_MONOTONIC);
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (w->cancel && !w->asked && atomic_load(w->cancel)) {
			kill(w->pid, SIGTERM);
			w->asked = 1;
		}
		/* A cancellable child's wait is looked at every quarter second. */
		if (w->cancel && !w->asked && left > 0.25)
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

int child_run(child_fn fn, const void *arg, double hard_limit, size_t max,
	      const atomic_int *cancel, struct op_result *out)
{
	struct waiting wt = { .cancel = cancel };
	sigset_t term, old;
	int fork_errno;
	struct wire w;
	int fds[2], status, err;
	double t0 = jma_clock_s(CLOCK_MONOTONIC), end = t0 + hard_limit;
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
		child_main(fn, arg, fds[1], cancel != NULL, server);
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
	if (!err && w.len > max)
		err = -EFBIG;
	if (!err) {
		out->rc = w.rc;
		out->kind = w.kind;
		out->attached = w.attached;
		out->held_ns = w.held_ns;
		memcpy(out->msg, w.msg, sizeof(out->msg));
		out->msg[sizeof(out->msg) - 1] = '\0';
		if (w.len) {
			out->data = malloc(w.len + 1);
			if (!out->data)
				err = -ENOMEM;
			else if (!(err = read_until(fds[0], out->data, w.len, end, &wt))) {
				out->data[w.len] = '\0';
				out->len = w.len;
			}
		}
	}
	if (err == -ETIMEDOUT)
		kill(pid, SIGKILL);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out->secs = jma_clock_s(CLOCK_MONOTONIC) - t0;
	if (err) {
		free(out->data);
		out->data = NULL;
		out->len = 0;
		out->rc = err == -ETIMEDOUT || err == -EFBIG ? err : -EIO;
		out->kind = err == -ETIMEDOUT ? JMA_ERR_UNSAFE : JMA_ERR_TARGET;
		if (err == -ETIMEDOUT)
			snprintf(out->msg, sizeof(out->msg), "the worker gave no answer within %.0f s "
				 "and was killed (the target restores itself)", hard_limit);
		else if (err == -EFBIG)
			snprintf(out->msg, sizeof(out->msg), "the answer is larger than %zu bytes", max);
		else if (WIFSIGNALED(status))
			snprintf(out->msg, sizeof(out->msg), "the worker process died of signal %d",
				 WTERMSIG(status));
		else
			snprintf(out->msg, sizeof(out->msg), "the worker's answer was cut short");
	}
	return out->rc;
}
