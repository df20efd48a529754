/* execcheck.h -- has the process executed a new program since its symbols were read?
 *
 * Symbols are read at jma_open; the thread is borrowed later.  A process that
 * exec()s in between keeps its PID but not its addresses: a call to the old
 * mallctl address would fault in the new program.  Checked in two halves so
 * that the borrowed thread is stopped for neither read of /proc/PID/maps:
 * before anything stops, att_proc_mm_id notes what only an execve changes and
 * jma_exec_check looks for jemalloc in a maps snapshot taken after it; once
 * the thread is stopped, jma_exec_same compares the note (one line of
 * /proc/PID/task/PID/stat), which covers an exec between the two.
 */
#ifndef JMA_EXECCHECK_H
#define JMA_EXECCHECK_H

#include <stdint.h>
#include <sys/types.h>

#include "attach/procfs.h"

/* 0 when @fn lies in an executable mapping of @path in @maps, -ENOEXEC when
 * not (another program now). */
int jma_exec_check(const struct att_map *maps, size_t n, const char *path, uint64_t fn);
/* 0 when @pid still has the layout noted in @id, -ENOEXEC when it executed
 * a program since, -errno when /proc cannot say. */
int jma_exec_same(pid_t pid, const struct att_mm_id *id);

#endif
