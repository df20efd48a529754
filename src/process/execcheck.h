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

#include "attach/procfs.h"

/* 0 when @pid still runs the program whose exec mark (jma_exec_mark) was
 * @mark and whose jemalloc was found at @fn in @path, and @fn lies in an
 * executable mapping of @path in @snap, the maps snapshot the symbols were
 * read with (not so when read in the middle of an exec); -ENOEXEC when not,
 * -errno when /proc cannot say.  After the snapshot, the mark decides when
 * there is one (auxv and 16 bytes of memory); without, the current maps do
 * (a read of every line: a millisecond with a thousand threads). */
int jma_exec_check(pid_t pid, uint64_t mark, const struct att_map *snap, size_t nsnap,
		   const char *path, uint64_t fn);

#endif
