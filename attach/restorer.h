/* restorer.h -- the target's rt_sigreturn trampoline (libc's __restore_rt).
 *
 * The self-restoring call returns through it.  It is found by its bytes
 * (arch_restorer_code) in the target's executable file mappings, libc first;
 * any copy of those bytes does the same thing.
 */
#ifndef ATTACH_RESTORER_H
#define ATTACH_RESTORER_H

#include <stdint.h>
#include <sys/types.h>

/* 0 and the address in *addr, -ENOENT when the process has none. */
int att_restorer_find(pid_t pid, uint64_t *addr);

#endif
