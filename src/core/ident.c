/* ident.c -- the process a session opened, told apart from a later one with its PID (ident.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/ident.h"

/* Field 22 of /proc/@pid/stat, when the process started; 0 when unknown. */
static uint64_t start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	/* "pid (comm) S ...": comm may hold anything, ')' and spaces too. */
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p, " %llu", &t) == 1 ? t : 0;
}

int sess_exec_ident_take(pid_t pid, struct jma_exec_ident *id)
{
	id->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	id->start = start_time(pid);
	if (id->pidfd < 0 && errno == ESRCH)
		return -ESRCH;
	return id->pidfd < 0 && !id->start ? -ESRCH : 0;
}

int sess_exec_ident_same(pid_t pid, const struct jma_exec_ident *id)
{
	struct pollfd p = { .fd = id->pidfd, .events = POLLIN };

	/* Readable once the process exited (a zombie keeps its PID: none can
	 * reuse it before); then the PID may be anyone's. */
	if (id->pidfd >= 0)
		return poll(&p, 1, 0) == 0 ? 0 : -ESRCH;
	return id->start && start_time(pid) == id->start ? 0 : -ESRCH;
}

void sess_exec_ident_release(struct jma_exec_ident *id)
{
	if (id->pidfd >= 0)
		close(id->pidfd);
	id->pidfd = -1;
}
