/* syscalls.c -- system calls by number: what a thread asleep in one means for thread selection
 * and for the look for stuck lock holders, its name, EINTR after a stop.  One table for every
 * architecture: the host's numbers are the kernel headers' (<sys/syscall.h>, at build time:
 * only the host's threads are traced), its names attach/arch/<arch>/syscall_names.c.  The
 * generic table (arm64's) has no poll, select, epoll_wait, pause or accept's old forms: libc
 * uses ppoll, pselect6, epoll_pwait, and so on. */
#include <stddef.h>
#include <sys/syscall.h>

#include "attach/arch.h"

static const struct {
	long nr;
	enum arch_sc_class cls;
} classes[] = {
	{ SYS_read, ARCH_SC_IDLE },
	{ SYS_readv, ARCH_SC_IDLE },
	{ SYS_pread64, ARCH_SC_OTHER },
	{ SYS_write, ARCH_SC_OTHER },
#ifdef SYS_poll
	{ SYS_poll, ARCH_SC_IDLE },
#endif
	{ SYS_ppoll, ARCH_SC_IDLE },
#ifdef SYS_select
	{ SYS_select, ARCH_SC_IDLE },
#endif
	{ SYS_pselect6, ARCH_SC_IDLE },
#ifdef SYS_epoll_wait
	{ SYS_epoll_wait, ARCH_SC_IDLE },
#endif
	{ SYS_epoll_pwait, ARCH_SC_IDLE },
#ifdef SYS_epoll_pwait2
	{ SYS_epoll_pwait2, ARCH_SC_IDLE },
#endif
	{ SYS_accept, ARCH_SC_IDLE },
	{ SYS_accept4, ARCH_SC_IDLE },
	{ SYS_recvfrom, ARCH_SC_IDLE },
	{ SYS_recvmsg, ARCH_SC_IDLE },
	{ SYS_nanosleep, ARCH_SC_IDLE },
	{ SYS_clock_nanosleep, ARCH_SC_IDLE },
#ifdef SYS_pause
	{ SYS_pause, ARCH_SC_IDLE },
#endif
	{ SYS_wait4, ARCH_SC_IDLE },
	{ SYS_waitid, ARCH_SC_IDLE },
	{ SYS_rt_sigsuspend, ARCH_SC_IDLE },
	{ SYS_rt_sigtimedwait, ARCH_SC_IDLE },
	{ SYS_io_getevents, ARCH_SC_IDLE },
	{ SYS_io_uring_enter, ARCH_SC_IDLE },
	{ SYS_futex, ARCH_SC_FUTEX },
	{ SYS_restart_syscall, ARCH_SC_RESTART },
	{ SYS_sched_yield, ARCH_SC_OTHER },
	{ SYS_connect, ARCH_SC_OTHER },
	{ SYS_sendto, ARCH_SC_OTHER },
	{ SYS_sendmsg, ARCH_SC_OTHER },
	{ SYS_flock, ARCH_SC_OTHER },
	{ SYS_fcntl, ARCH_SC_OTHER },
	{ SYS_openat, ARCH_SC_OTHER },
	{ SYS_mmap, ARCH_SC_MEMORY },
	{ SYS_munmap, ARCH_SC_MEMORY },
	{ SYS_madvise, ARCH_SC_MEMORY },
	{ SYS_mremap, ARCH_SC_MEMORY },
	{ SYS_mprotect, ARCH_SC_MEMORY },
	{ SYS_brk, ARCH_SC_MEMORY },
};

/* man 7 signal, "Interruption of system calls and library functions by stop
 * signals": these fail with EINTR after any stop, ptrace's included, even
 * with no signal handler.  read() is there for inotify descriptors (a read
 * of anything else restarts by itself and never reports EINTR to a stop). */
static const long eintr[] = {
#ifdef SYS_epoll_wait
	SYS_epoll_wait,
#endif
	SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	SYS_accept, SYS_accept4, SYS_recvfrom, SYS_recvmsg, SYS_recvmmsg, SYS_connect, SYS_sendto,
	SYS_sendmsg, SYS_sendmmsg, SYS_semop, SYS_semtimedop, SYS_rt_sigtimedwait, SYS_io_getevents,
	SYS_read, SYS_readv,
};

enum arch_sc_class arch_syscall_class(long nr)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(*classes); i++)
		if (classes[i].nr == nr)
			return classes[i].cls;
	return ARCH_SC_OTHER;
}

const char *arch_syscall_name(long nr)
{
	return nr >= 0 && (size_t)nr < arch_sc_nnames ? arch_sc_names[nr] : NULL;
}

int arch_syscall_eintr_on_stop(long nr)
{
	for (size_t i = 0; i < sizeof(eintr) / sizeof(*eintr); i++)
		if (eintr[i] == nr)
			return 1;
	return 0;
}
