/* execcheck.h -- has the process executed a new program since its symbols were read?
 *
 * Symbols are read at jma_open; the thread is borrowed later.  A process that
 * exec()s in between keeps its PID but not its addresses: a call to the old
 * mallctl address would fault in the new program.  Checked in two halves so
 * that the borrowed thread is stopped for no read of /proc/PID/maps: before
 * anything stops, proc_exec_check looks for jemalloc in the command's maps
 * snapshot (not there when the symbols were read in the middle of an exec);
 * once the thread is stopped, proc_exec_same compares the exec mark taken
 * before the symbols were read (jma_exec_mark: auxv and 16 bytes of memory;
 * on the stopped thread only the 16 bytes, at the address auxv gave), which
 * covers an exec at any moment since.
 */
#ifndef JMA_EXECCHECK_H
#define JMA_EXECCHECK_H

#include <stdint.h>
#include <sys/types.h>

#include "attach/procfs.h"
#include "core/ident.h"

/* jma_exec_mark, and where its inputs were (@w may be NULL). */
uint64_t proc_exec_mark_at(pid_t pid, struct jma_exec_where *w);
/* 0 when @fn lies in an executable mapping of @path in @maps, -ENOEXEC when
 * not (another program, or one still being loaded). */
int proc_exec_check(const struct att_map *maps, size_t n, const char *path, uint64_t fn);
/* 0 when @pid still has exec mark @mark, -ENOEXEC when it executed a program
 * since or when that cannot be told: a mark of 0, then or now (AT_RANDOM
 * unreadable, or all zeros, which no kernel draws: a process that overwrote
 * them), -errno when /proc cannot say.  With @w (from proc_exec_mark_at), one
 * read of 16 bytes of its memory; without, auxv is read too. */
int proc_exec_same(pid_t pid, uint64_t mark, const struct jma_exec_where *w);
/* 1 when @pid is seen loading code: it executed a program since mark @mark,
 * the code files it maps are not those of @read (the maps read for its
 * symbols, may be NULL), or they change over @wait_ms (the dynamic loader at
 * work after an exec, or a dlopen).  Symbols read at such a moment may miss
 * a jemalloc about to be mapped; maps read then miss libc, and with it the
 * trampoline and the frames of a thread that runs in it now. */
int proc_exec_loading(pid_t pid, uint64_t mark, const struct att_map *read, size_t nread,
		     int wait_ms);

#endif
