/* unwind.h -- the call stack of a stopped thread, with libunwind. */
#ifndef ATTACH_UNWIND_H
#define ATTACH_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

/* A copy of part of a thread's memory (its stack above the stack pointer),
 * read in one call by the caller; the unwinder reads from it instead of the
 * target. */
struct att_stack {
	uint64_t lo;		/* target address of buf[0] */
	const void *buf;
	size_t len;
};

/* Fill @pcs with up to @max program counters of ptrace-stopped thread @tid of
 * process @pid, innermost first.  Memory comes from @stk where it covers the address
 * (NULL: nowhere), else from the target a page at a time by
 * process_vm_readv, each page read once per walk; registers by ptrace.
 * @maps (the process's, sorted, possibly older than the stop) locates each
 * module's unwind table in memory; a module not in it costs libunwind-ptrace's
 * own search (a read of /proc/PID/maps and of the file).
 * Returns the number of frames (>= 1 when the first pc could be read) or
 * -errno.  *complete tells whether the walk reached the outermost frame
 * (rather than stopping for lack of unwind information or at @max). */
int att_unwind(pid_t pid, pid_t tid, const struct att_stack *stk, const struct att_map *maps,
	       size_t nmaps, uint64_t *pcs, int max, int *complete);

/* The same from registers the caller copied (@regs[0..@nregs), indexed by
 * libunwind's register numbers: the DWARF ones) and its copy of the stack
 * (@stk) -- a sample taken by the kernel while the thread ran on (the
 * sampler).  Memory outside @stk is read from process @pid as it is now. */
int att_unwind_regs(pid_t pid, const uint64_t *regs, size_t nregs, const struct att_stack *stk,
		    const struct att_map *maps, size_t nmaps, uint64_t *pcs, int max, int *complete);

/* The same for a thread that is NOT stopped but blocked in a system call it
 * entered with stack pointer @sp at @pc (/proc/PID/task/TID/syscall): its last
 * known stack, good for deciding before stopping it and for warming the
 * rules the walk on the stopped thread will need.  Frames that need other
 * registers than sp and pc end the walk early.  Not a safety check: the
 * thread may have moved on. */
int att_unwind_at(pid_t pid, pid_t tid, uint64_t sp, uint64_t pc, const struct att_map *maps,
		  size_t nmaps, uint64_t *pcs, int max);

#endif
