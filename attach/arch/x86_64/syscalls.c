/* syscalls.c -- x86_64 system calls by what a thread asleep in them means for thread selection
 * and for the look for stuck lock holders (their names: syscall_names.c). */
#include <stddef.h>
#include <sys/syscall.h>

#include "attach/arch.h"

const struct arch_sc_class_entry arch_sc_classes[] = {
	{ SYS_read, ARCH_SC_IDLE },
	{ SYS_readv, ARCH_SC_IDLE },
	{ SYS_pread64, ARCH_SC_OTHER },
	{ SYS_write, ARCH_SC_OTHER },
	{ SYS_poll, ARCH_SC_IDLE },
	{ SYS_ppoll, ARCH_SC_IDLE },
	{ SYS_select, ARCH_SC_IDLE },
	{ SYS_pselect6, ARCH_SC_IDLE },
	{ SYS_epoll_wait, ARCH_SC_IDLE },
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
	{ SYS_pause, ARCH_SC_IDLE },
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

const size_t arch_sc_nclasses = sizeof(arch_sc_classes) / sizeof(*arch_sc_classes);

/* man 7 signal, "Interruption of system calls and library functions by stop
 * signals": these fail with EINTR after any stop, ptrace's included, even
 * with no signal handler.  read() is there for inotify descriptors (a read
 * of anything else restarts by itself and never reports EINTR to a stop). */
const long arch_sc_eintr[] = {
	SYS_epoll_wait, SYS_epoll_pwait,
#ifdef SYS_epoll_pwait2
	SYS_epoll_pwait2,
#endif
	SYS_accept, SYS_accept4, SYS_recvfrom, SYS_recvmsg, SYS_recvmmsg, SYS_connect, SYS_sendto,
	SYS_sendmsg, SYS_sendmmsg, SYS_semop, SYS_semtimedop, SYS_rt_sigtimedwait, SYS_io_getevents,
	SYS_read, SYS_readv,
};

const size_t arch_sc_neintr = sizeof(arch_sc_eintr) / sizeof(*arch_sc_eintr);
