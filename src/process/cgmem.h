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
 * memory.usage_in_bytes).  Paths in our view (@view 0) or in process @view's
 * (read as that process, targetfs.h).  *room = UINT64_MAX without a limit;
 * @which gets the limiting file.  0 or -errno. */
int proc_cgmem_room_dir(pid_t view, const char *dir, const char *top, int v2, uint64_t *room,
		       char *which, size_t len);

/* Where cgroup @cg lies below a mount of its hierarchy whose root is @root
 * (both as /proc/PID/cgroup and mountinfo give them): the rest of the path to
 * append to the mount point ("" for the root itself), or NULL when that mount
 * does not show it -- a sibling subtree, or above it ("/../x", a cgroup
 * outside our cgroup namespace). */
const char *proc_cgmem_under(const char *cg, const char *root);

/* A line of /proc/PID/cgroup, split in place: 1 for cgroup2's "0::PATH", 0
 * for a v1 hierarchy with memory among its controllers ("4:memory:PATH",
 * "3:cpu,memory:PATH"), -1 for any other line; *@cg = PATH. */
int proc_cgmem_line(char *line, char **cg);

/* From @mountinfo (the text of /proc/self/mountinfo, split in place): the
 * mount point of cgroup2 (@v2) or of v1's memory hierarchy, and the cgroup
 * path its root stands for.  0 or -ENOENT. */
int proc_cgmem_mount(char *mountinfo, int v2, char *point, size_t plen, char *root, size_t rlen);

/* The same for process @pid's memory cgroup (found through /proc/PID/cgroup
 * and our mounts, else the target's).  *room = UINT64_MAX when it has none we
 * can see. */
int proc_cgmem_room(pid_t pid, uint64_t *room, char *which, size_t len);

#endif
