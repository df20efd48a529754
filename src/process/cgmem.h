/* cgmem.h -- memory headroom of the target's cgroup.
 *
 * The first call into a process costs it memory charged to its cgroup: stack
 * pages below the borrowed thread's stack pointer, jemalloc's ctl_init, a
 * tcache (measured 0-508 KiB on jemalloc 5.3 here).  A process with less room
 * than that under its memory limit would be OOM-killed (memory.max, v1
 * memory.limit_in_bytes) or throttled (memory.high) by our call.
 */
#ifndef JMA_CGMEM_H
#define JMA_CGMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Room the first call needs (see above). */
#define JMA_CGMEM_FIRST_CALL (512UL * 1024)

/* The smallest room under a limit of @dir and its ancestors up to @top (a
 * cgroup mount point): limit minus current usage.  @v2: cgroup2 files
 * (memory.max, memory.high, memory.current), else v1 (memory.limit_in_bytes,
 * memory.usage_in_bytes).  *room = UINT64_MAX without a limit; @which gets the
 * limiting file.  0 or -errno. */
int jma_cgmem_room_dir(const char *dir, const char *top, int v2, uint64_t *room,
		       char *which, size_t len);

/* The same for process @pid's memory cgroup (found through /proc/PID/cgroup
 * and our mount table).  *room = UINT64_MAX when it has none we can see. */
int jma_cgmem_room(pid_t pid, uint64_t *room, char *which, size_t len);

#endif
