/* syscalls.c -- x86_64 system call numbers the thread selection cares about. */
#include <stddef.h>
#include <sys/syscall.h>

#include "attach/arch.h"

static const struct { long nr; const char *name; enum arch_sc_class cls; } table[] = {
	{ SYS_read, "read", ARCH_SC_IDLE },
	{ SYS_readv, "readv", ARCH_SC_IDLE },
	{ SYS_pread64, "pread64", ARCH_SC_OTHER },
	{ SYS_write, "write", ARCH_SC_OTHER },
	{ SYS_poll, "poll", ARCH_SC_IDLE },
	{ SYS_ppoll, "ppoll", ARCH_SC_IDLE },
	{ SYS_select, "select", ARCH_SC_IDLE },
	{ SYS_pselect6, "pselect6", ARCH_SC_IDLE },
	{ SYS_epoll_wait, "epoll_wait", ARCH_SC_IDLE },
	{ SYS_epoll_pwait, "epoll_pwait", ARCH_SC_IDLE },
#ifdef SYS_epoll_pwait2
	{ SYS_epoll_pwait2, "epoll_pwait2", ARCH_SC_IDLE },
#endif
	{ SYS_accept, "accept", ARCH_SC_IDLE },
	{ SYS_accept4, "accept4", ARCH_SC_IDLE },
	{ SYS_recvfrom, "recvfrom", ARCH_SC_IDLE },
	{ SYS_recvmsg, "recvmsg", ARCH_SC_IDLE },
	{ SYS_nanosleep, "nanosleep", ARCH_SC_IDLE },
	{ SYS_clock_nanosleep, "clock_nanosleep", ARCH_SC_IDLE },
	{ SYS_pause, "pause", ARCH_SC_IDLE },
	{ SYS_wait4, "wait4", ARCH_SC_IDLE },
	{ SYS_waitid, "waitid", ARCH_SC_IDLE },
	{ SYS_rt_sigsuspend, "rt_sigsuspend", ARCH_SC_IDLE },
	{ SYS_rt_sigtimedwait, "rt_sigtimedwait", ARCH_SC_IDLE },
	{ SYS_io_getevents, "io_getevents", ARCH_SC_IDLE },
	{ SYS_io_uring_enter, "io_uring_enter", ARCH_SC_IDLE },
	{ SYS_futex, "futex", ARCH_SC_FUTEX },
	{ SYS_sched_yield, "sched_yield", ARCH_SC_OTHER },
	{ SYS_connect, "connect", ARCH_SC_OTHER },
	{ SYS_sendto, "sendto", ARCH_SC_OTHER },
	{ SYS_sendmsg, "sendmsg", ARCH_SC_OTHER },
	{ SYS_flock, "flock", ARCH_SC_OTHER },
	{ SYS_fcntl, "fcntl", ARCH_SC_OTHER },
	{ SYS_openat, "openat", ARCH_SC_OTHER },
	{ SYS_mmap, "mmap", ARCH_SC_OTHER },
	{ SYS_munmap, "munmap", ARCH_SC_OTHER },
	{ SYS_madvise, "madvise", ARCH_SC_OTHER },
};

enum arch_sc_class arch_syscall_class(long nr)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(*table); i++)
		if (table[i].nr == nr)
			return table[i].cls;
	return ARCH_SC_OTHER;
}

/* man 7 signal, "Interruption of system calls and library functions by stop
 * signals": these fail with EINTR after any stop, ptrace's included, even
 * with no signal handler.  read() is there for inotify descriptors (a read
 * of anything else restarts by itself and never reports EINTR to a stop). */
static const long eintr_on_stop[] = {
	SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	SYS_accept, SYS_accept4, SYS_recvfrom, SYS_recvmsg, SYS_recvmmsg, SYS_connect, SYS_sendto,
	SYS_sendmsg, SYS_sendmmsg, SYS_semop, SYS_semtimedop, SYS_rt_sigtimedwait, SYS_io_getevents,
	SYS_read, SYS_readv,
};

int arch_syscall_eintr_on_stop(long nr)
{
	for (size_t i = 0; i < sizeof(eintr_on_stop) / sizeof(*eintr_on_stop); i++)
		if (eintr_on_stop[i] == nr)
			return 1;
	return 0;
}

const char *arch_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(*table); i++)
		if (table[i].nr == nr)
			return table[i].name;
	return NULL;
}
