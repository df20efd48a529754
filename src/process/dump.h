/* dump.h -- a file jemalloc writes in the live target (prof.dump), read back safely.
 *
 * The file goes into a directory of our own that the target creates (0700,
 * unguessable name, see targetfs.h): nobody else can plant a FIFO or a
 * symlink at the name the target opens, and we read back only the regular
 * file it wrote.  The ptrace backend's dump operation (core/backend.h).
 */
#ifndef JMA_PROCESS_DUMP_H
#define JMA_PROCESS_DUMP_H

#include <stddef.h>

#include "core/session.h"

/* As the backend's dump: @write makes jemalloc write @name into a private
 * directory made in @dir (NULL: /tmp, /var/tmp, /dev/shm), whose path (in the
 * target's view) goes to @used (@usedlen bytes; "" when none was made) for
 * proc_dump_sweep; the directory is removed before this returns. */
int proc_dump_private(jma_session *s, const char *dir, const char *name, size_t max,
		     jma_dump_fn write, void *arg, char **buf, size_t *len, char *used,
		     size_t usedlen);

/* Remove what a jemattach killed during a dump left beside @used (the
 * private directory a dump used, holding at most a file @name): after the
 * thread is given back, as the sweep reads the whole parent directory. */
void proc_dump_sweep(jma_session *s, const char *used, const char *name);

#endif
