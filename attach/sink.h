/* sink.h -- a write callback that drops its text without us: the target's own getpid.
 *
 * malloc_stats_print hands its report to a write callback.  Given none, it
 * writes to the target's stderr; given a fault address, every piece needs
 * us.  The sink is code of the target's own that makes a harmless system
 * call and returns (glibc's getpid: `mov $39,%eax; syscall; ret`), found and
 * checked by its bytes like the rt_sigreturn trampoline.  While we follow
 * the call with PTRACE_SYSCALL, each call of it stops at that system call's
 * entry with the text's address in the argument registers: we read it there
 * (call.h).  Once we are gone, the remaining pieces go to getpid and are
 * dropped: nothing reaches any file descriptor of the target.
 *
 * Why not a bare `ret` with a perf breakpoint (as the return value is
 * taken, retcap.h): a breakpoint samples registers but does not stop the
 * thread, and the text lives in a buffer jemalloc refills as soon as the
 * callback returns.  A system call stop holds the thread while we read it,
 * and costs no other thread anything (PTRACE_SYSCALL is per thread; a
 * breakpoint on a shared function would cost every caller).
 */
#ifndef ATTACH_SINK_H
#define ATTACH_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The callback's first argument (jemalloc's cbopaque, which it only passes
 * on): a stop at the sink is ours only with this in it, not the function's
 * own getpid. */
#define ATT_SINK_COOKIE	0x6a656d6174746163ULL	/* "jemattac" */

struct att_map;

/* 0 and the sink's address in *addr, -ENOENT when the process has none.
 * @maps is a snapshot of its /proc/PID/maps (NULL: read it now).  Reads up
 * to a megabyte of code (glibc's getpid is 700 KiB into it). */
int att_sink_find(pid_t pid, const struct att_map *maps, size_t n, uint64_t *addr);

/* 0 when the sink's bytes are at @addr (one found before), else -ENOENT (or
 * -errno reading). */
int att_sink_check(pid_t pid, uint64_t addr);

#endif
