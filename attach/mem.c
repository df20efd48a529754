/* mem.c -- remote memory I/O: checked against what backs it (backing.h), done
 * by a helper process that can be given up on, through process_vm_readv/writev
 * or /proc/PID/mem.
 *
 * Even memory that passed the check can block: a mapping replaced since, a
 * page registered with a privileged userfaultfd that is never served (that
 * wait is killable but no other signal ends it).  A wait of ours that no
 * signal ends would keep the target's threads stopped for as long (the
 * kernel detaches them only once we are gone), so the system calls are
 * made by a child of the calling thread (forked at its first access, its
 * descriptors closed, its signals blocked, killed when that thread ends),
 * over a shared page: one round trip costs about 5 us.  Past the deadline
 * (att_mem_set_timeout) the child is killed and left to die when its wait
 * ends; the next access forks another.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/backing.h"
#include "attach/clock.h"
#include "attach/procfs.h"
#include "mem.h"

#define PIECES_MAX	1024		/* IOV_MAX */
#define GONE_MAX	10		/* accesses given up on before a process is refused */
#define AFTER_MS	100		/* the bound on each access once one was given up on */
#define MIO_DATA	(1 << 20)	/* bytes per round trip */
#define ABANDONED_MAX	64
#define POLL_NS		100000000LL	/* how often a wait looks at the helper's health */

enum { OP_READ, OP_WRITE, OP_PIECES };

struct mio_piece {
	uint64_t addr;
	uint64_t len;
	int ok;
};

/* Shared with the helper: a request, its answer. */
struct mio {
	_Atomic uint32_t req, done;
	int op;
	pid_t pid;
	uint64_t addr;
	size_t len;
	int result;
	size_t npieces;
	struct mio_piece pieces[PIECES_MAX];
	unsigned char data[MIO_DATA];
};

static __thread struct mio *mio;
static __thread pid_t helper;
static __thread pid_t abandoned[ABANDONED_MAX];
static __thread int timeout_ms = 10000;
static __thread char why[320];
/* What was given up on since the timeout was set (a session's start): the
 * mapping of each access, not tried again; once one was, every access to
 * that process has AFTER_MS only, and after GONE_MAX none is made. */
static __thread struct gone {
	pid_t pid;
	uint64_t start, end;
} gone[GONE_MAX];
static __thread int ngone;

void att_mem_set_timeout(int ms)
{
	timeout_ms = ms > 0 ? ms : 10000;
	ngone = 0;
}

static int gone_count(pid_t pid)
{
	int n = 0;

	for (int i = 0; i < ngone; i++)
		n += gone[i].pid == pid;
	return n;
}

/* Remember the access at @addr of @pid as given up on: its mapping when
 * the maps say (0 for a batch of pieces: nothing in particular). */
static void gave_up(pid_t pid, uint64_t addr)
{
	struct att_map *maps = NULL;
	const struct att_map *m;
	size_t n = 0;

	if (ngone == GONE_MAX)
		return;
	gone[ngone] = (struct gone){ pid, 0, 0 };
	if (addr && !att_proc_maps(pid, &maps, &n) && (m = att_maps_find(maps, n, addr)))
		gone[ngone] = (struct gone){ pid, m->start, m->end };
	att_maps_free(maps, n);
	ngone++;
}

static int limit_ms(pid_t pid)
{
	return gone_count(pid) && timeout_ms > AFTER_MS ? AFTER_MS : timeout_ms;
}

const char *att_mem_why(void)
{
	return why;
}

/* --- the system calls, as the helper makes them -------------------------- */

static int procmem_io(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	char path[64];
	size_t done = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write ? pwrite(fd, (char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)n;
	}
	close(fd);
	return err == -EIO ? -EFAULT : err;
}

static int vm_io(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
				  : process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOSYS || errno == EPERM)
				return procmem_io(pid, addr + done, (char *)buf + done, len - done, write);
			return -errno;
		}
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

/* Pieces @p[0..n) into @data, one after another: as many system calls as
 * the kernel needs (it stops at the first piece it cannot read).  0, or
 * -errno when the process cannot be read at all. */
static int vm_pieces(pid_t pid, struct mio_piece *p, size_t n, unsigned char *data)
{
	struct iovec loc[PIECES_MAX], rem[PIECES_MAX];	/* 32 KiB of stack */
	size_t i = 0;

	for (size_t j = 0, off = 0; j < n; off += p[j].len, j++) {
		loc[j] = (struct iovec){ data + off, p[j].len };
		rem[j] = (struct iovec){ (void *)(uintptr_t)p[j].addr, p[j].len };
		p[j].ok = 0;
	}
	while (i < n) {
		ssize_t r = process_vm_readv(pid, loc + i, n - i, rem + i, n - i, 0);
		size_t j;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
			for (; i < n; i++)
				p[i].ok = vm_io(pid, p[i].addr, loc[i].iov_base, p[i].len, 0) == 0;
			return 0;
		}
		if (r < 0 && errno != EFAULT)
			return -errno;
		if (r < 0)
			r = 0;
		for (j = i; j < n && (size_t)r >= p[j].len; j++) {
			p[j].ok = 1;
			r -= (ssize_t)p[j].len;
		}
		i = j + 1;	/* that one failed (or all were read) */
	}
	return 0;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t v, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, v, ts, NULL, 0);
}

static void helper_main(struct mio *m, pid_t parent)
{
	uint32_t last = 0;
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "jemattach-mem");
	/* Nothing of ours kept open by a child that may outlive us. */
	close_range(0, ~0U, 0);
	if (chdir("/"))
		_exit(1);
	for (;;) {
		uint32_t r = atomic_load(&m->req);

		if (r == last) {
			futex(&m->req, FUTEX_WAIT, last, NULL);
			continue;
		}
		last = r;
		if (m->op == OP_PIECES)
			m->result = vm_pieces(m->pid, m->pieces, m->npieces, m->data);
		else
			m->result = vm_io(m->pid, m->addr, m->data, m->len, m->op == OP_WRITE);
		atomic_store(&m->done, last);
		futex(&m->done, FUTEX_WAKE, 1, NULL);
	}
}

/* --- the caller's side ---------------------------------------------------- */

static void reap(void)
{
	for (int i = 0; i < ABANDONED_MAX; i++)
		if (abandoned[i] && waitpid(abandoned[i], NULL, WNOHANG | __WALL) != 0)
			abandoned[i] = 0;
}

/* Give the helper up: killed, and reaped once its wait has ended (it may be
 * one no signal ends). */
static void abandon_helper(void)
{
	int i;

	kill(helper, SIGKILL);
	reap();
	for (i = 0; i < ABANDONED_MAX && abandoned[i]; i++)
		;
	if (i < ABANDONED_MAX)
		abandoned[i] = helper;
	munmap(mio, sizeof(*mio));
	mio = NULL;
	helper = 0;
}

static void register_atfork(void);

/* A child of ours forked by someone else starts without a helper: the
 * shared page and the helper are its parent's. */
static void forget_in_child(void)
{
	mio = NULL;
	helper = 0;
	memset(abandoned, 0, sizeof(abandoned));
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_in_child);
}

static int start_helper(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pid_t parent = getpid(), c;
	struct mio *m;

	pthread_once(&once, register_atfork);
	reap();
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	/* Exit status to nobody (no SIGCHLD): a waitpid(-1) of our caller's
	 * never takes it; reaped with __WALL. */
	c = (pid_t)syscall(SYS_clone, 0, NULL, NULL, NULL, NULL);
	if (c < 0) {
		int err = -errno;
		munmap(m, sizeof(*m));
		return err;
	}
	if (c == 0)
		helper_main(m, parent);
	mio = m;
	helper = c;
	return 0;
}

/* At exit the main thread's helper goes with us, not a moment after. */
__attribute__((destructor)) static void helper_exit(void)
{
	if (!mio)
		return;
	kill(helper, SIGKILL);
	waitpid(helper, NULL, __WALL);
	munmap(mio, sizeof(*mio));
	mio = NULL;
}

/* Run the request in *mio; 0, or -ETIMEDOUT once @ms passed. */
static int round_trip(int ms)
{
	uint32_t seq = atomic_load(&mio->req) + 1;
	int64_t deadline = att_now_ns() + (int64_t)ms * 1000000;

	atomic_store(&mio->req, seq);
	futex(&mio->req, FUTEX_WAKE, 1, NULL);
	while (atomic_load(&mio->done) != seq) {
		int64_t left = deadline - att_now_ns();
		struct timespec ts;

		if (left <= 0) {
			abandon_helper();
			return -ETIMEDOUT;
		}
		if (left > POLL_NS)
			left = POLL_NS;
		ts = (struct timespec){ left / 1000000000, left % 1000000000 };
		futex(&mio->done, FUTEX_WAIT, seq - 1, &ts);
		if (atomic_load(&mio->done) != seq && waitpid(helper, NULL, WNOHANG | __WALL) == helper) {
			/* Killed by someone: a new one for the next access. */
			munmap(mio, sizeof(*mio));
			mio = NULL;
			helper = 0;
			return -EIO;
		}
	}
	return 0;
}

/* One request of at most MIO_DATA bytes through the helper (started when
 * needed); where none can be had, the system calls are made here. */
static int helper_io(int op, pid_t pid, uint64_t addr, void *buf, size_t len)
{
	int err = -EIO;

	/* A second time when the helper was killed under us (-EIO). */
	for (int tries = 0; err == -EIO && tries < 2; tries++) {
		if (!mio && (err = start_helper()))
			return err;
		mio->op = op;
		mio->pid = pid;
		mio->addr = addr;
		mio->len = len;
		if (op == OP_WRITE)
			memcpy(mio->data, buf, len);
		err = round_trip(limit_ms(pid));
	}
	if (err) {
		if (err == -ETIMEDOUT) {
			snprintf(why, sizeof(why), "%s %zu bytes at 0x%llx of process %d did not end "
				 "within %d ms: given up (what backs that memory does not answer)",
				 op == OP_WRITE ? "writing" : "reading", len, (unsigned long long)addr,
				 (int)pid, limit_ms(pid));
			gave_up(pid, addr);
		}
		return err;
	}
	if (op == OP_READ && !mio->result)
		memcpy(buf, mio->data, len);
	return mio->result;
}

static int checked(pid_t pid, uint64_t addr, size_t len)
{
	char what[256];
	int err;

	if (gone_count(pid) == GONE_MAX) {
		snprintf(why, sizeof(why), "process %d: %d accesses to its memory were given up on: "
			 "no other one is made", (int)pid, GONE_MAX);
		return -ETIMEDOUT;
	}
	for (int i = 0; i < ngone; i++) {
		if (gone[i].pid != pid || gone[i].start >= addr + len || gone[i].end <= addr)
			continue;
		snprintf(why, sizeof(why), "process %d: an access to its mapping 0x%llx-0x%llx did "
			 "not end in time before: not tried again", (int)pid,
			 (unsigned long long)gone[i].start, (unsigned long long)gone[i].end);
		return -ETIMEDOUT;
	}
	err = att_backing_check(pid, addr, len, what, sizeof(what));

	if (err)
		snprintf(why, sizeof(why), "process %d: memory at 0x%llx is a mapping of a file on a "
			 "file system that may never answer, not read: %s", (int)pid,
			 (unsigned long long)addr, what);
	return err;
}

static int mem_io(pid_t pid, uint64_t addr, void *buf, size_t len, int op)
{
	int err = len ? checked(pid, addr, len) : 0;

	for (size_t done = 0; !err && done < len;) {
		size_t n = len - done < MIO_DATA ? len - done : MIO_DATA;

		err = helper_io(op, pid, addr + done, (char *)buf + done, n);
		done += n;
	}
	return err;
}

int att_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return mem_io(pid, addr, buf, len, OP_READ);
}

int att_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(pid, addr, (void *)buf, len, OP_WRITE);
}

int att_mem_read_pieces(pid_t pid, struct att_piece *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t cnt = 0, bytes = 0;
		int err;

		/* A piece too large for one trip, or refused, goes alone. */
		if (p[i].len > MIO_DATA || checked(pid, p[i].addr, p[i].len)) {
			err = p[i].len > MIO_DATA ? att_mem_read(pid, p[i].addr, p[i].buf, p[i].len) : -1;
			if (err == -ETIMEDOUT)
				return err;
			p[i].ok = err == 0;
			i++;
			continue;
		}
		while (i + cnt < n && cnt < PIECES_MAX && p[i + cnt].len <= MIO_DATA - bytes &&
		       (cnt == 0 || !checked(pid, p[i + cnt].addr, p[i + cnt].len))) {
			bytes += p[i + cnt].len;
			cnt++;
		}
		if (!mio && (err = start_helper()))
			return err;
		mio->op = OP_PIECES;
		mio->pid = pid;
		mio->npieces = cnt;
		for (size_t j = 0; j < cnt; j++)
			mio->pieces[j] = (struct mio_piece){ p[i + j].addr, p[i + j].len, 0 };
		if ((err = round_trip(limit_ms(pid)))) {
			if (err == -ETIMEDOUT) {
				snprintf(why, sizeof(why), "reading %zu pieces of process %d did not "
					 "end within %d ms: given up (what backs that memory does not "
					 "answer)", cnt, (int)pid, limit_ms(pid));
				gave_up(pid, 0);
			}
			return err;
		}
		if (mio->result)
			return mio->result;
		for (size_t j = 0, off = 0; j < cnt; off += p[i + j].len, j++)
			if ((p[i + j].ok = mio->pieces[j].ok))
				memcpy(p[i + j].buf, mio->data + off, p[i + j].len);
		i += cnt;
	}
	return 0;
}

int att_mem_read_str(pid_t pid, uint64_t addr, size_t max, char **out, int *truncated)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap + 1);

	*out = NULL;
	*truncated = 0;
	if (!s)
		return -ENOMEM;
	while (len < max) {
		/* Never read across a page boundary in one go: the next page may be
		 * unmapped even though the string ends before it. */
		size_t chunk = 4096 - ((addr + len) & 4095);
		char *nul;
		int err;

		if (chunk > max - len)
			chunk = max - len;
		if (len + chunk > cap) {
			char *t;
			while (len + chunk > cap)
				cap *= 2;
			t = realloc(s, cap + 1);
			if (!t) {
				free(s);
				return -ENOMEM;
			}
			s = t;
		}
		err = att_mem_read(pid, addr + len, s + len, chunk);
		if (err) {
			free(s);
			return err;
		}
		nul = memchr(s + len, '\0', chunk);
		if (nul) {
			*out = s;
			return 0;
		}
		len += chunk;
	}
	s[len] = '\0';
	*truncated = 1;
	*out = s;
	return 0;
}
