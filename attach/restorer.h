/* restorer.h -- the target's rt_sigreturn trampoline (libc's __restore_rt; arm64: the vDSO's).
 *
 * The self-restoring call returns through it.  It is found by its bytes
 * (arch_restorer_code) in the target's executable file mappings, libc first;
 * any copy of those bytes does the same thing.
 */
#ifndef ATTACH_RESTORER_H
#define ATTACH_RESTORER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct att_map;

/* 0 and the address in *addr, -ENOENT when the process has none, -ESTALE
 * when @maps, a snapshot of the process's /proc/PID/maps (NULL: read it
 * now), is no longer its own and the search is no answer (codescan.h). */
int att_restorer_find(pid_t pid, const struct att_map *maps, size_t n, uint64_t *addr);

/* 0 when the trampoline's bytes are at @addr in @pid (one found before),
 * else -ENOENT (or -errno reading). */
int att_restorer_check(pid_t pid, uint64_t addr);

#endif
