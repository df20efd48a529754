/* ident.h -- the process a session opened, whatever its PID becomes, and the
 * program it ran (where its exec mark was read: execcheck.h).
 *
 * Below every backend: the session keeps them for jma_exited and for the
 * checks of process/ and the sampler.
 */
#ifndef JMA_CORE_IDENT_H
#define JMA_CORE_IDENT_H

#include <stdint.h>
#include <sys/types.h>

/* The process itself, for a whole session: after it exits, another process
 * may get its PID -- of the same program, even with the same exec mark when
 * it zeroes its AT_RANDOM bytes and runs without address randomization.
 * A pidfd (Linux 5.3) names the process, not the number; where there is
 * none, its start time (/proc/PID/stat) tells one process from the next. */
struct jma_exec_ident {
	int pidfd;		/* -1: none */
	uint64_t start;		/* start time in clock ticks after boot, 0 unknown */
};

/* Take @pid's identity into @id (release it with sess_exec_ident_release).
 * 0, or -ESRCH when there is no such process. */
int sess_exec_ident_take(pid_t pid, struct jma_exec_ident *id);
/* 0 while @pid is still the process @id was taken of; -ESRCH once that one
 * exited (a zombie, gone, or its PID now another process's). */
int sess_exec_ident_same(pid_t pid, const struct jma_exec_ident *id);
void sess_exec_ident_release(struct jma_exec_ident *id);

/* Where jma_exec_mark found its inputs: read once, before anything stops
 * (with the one other entry of the same auxv read that a command needs). */
struct jma_exec_where {
	uint64_t rnd_at;	/* AT_RANDOM: its 16 bytes' address, 0 unknown */
	uint64_t vdso;		/* AT_SYSINFO_EHDR */
	uint64_t ld_base;	/* AT_BASE: the dynamic loader's, 0 for a static program */
};

#endif
