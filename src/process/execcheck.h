/* execcheck.h -- has the process executed a new program since its symbols were read?
 *
 * Symbols are read at jma_open; the thread is borrowed later.  A process that
 * exec()s in between keeps its PID but not its addresses: a call to the old
 * mallctl address would fault in the new program.  Checked with the thread
 * stopped, so that it cannot exec any more before the call.
 */
#ifndef JMA_EXECCHECK_H
#define JMA_EXECCHECK_H

#include <stdint.h>
#include <sys/types.h>

/* 0 when @fn lies in an executable mapping of @path in @pid, -ENOEXEC when
 * not (another program now), -errno when /proc cannot say. */
int jma_exec_check(pid_t pid, const char *path, uint64_t fn);

#endif
