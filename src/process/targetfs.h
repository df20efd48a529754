/* targetfs.h -- files as the target process sees them, reached safely from outside.
 *
 * Paths are resolved inside /proc/PID/root with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS): a symlink planted in a container can never lead us
 * out to the host's files.
 */
#ifndef JMA_TARGETFS_H
#define JMA_TARGETFS_H

#include <stddef.h>
#include <sys/types.h>

/* Open @path (absolute, in the target's mount namespace) with @flags.
 * Returns an fd or -errno. */
int jma_tfs_open(pid_t pid, const char *path, int flags);

/* Read the regular file @path whole (at most @max bytes) into a malloc'ed
 * buffer.  -EFBIG past @max, -EINVAL if it is not a regular file. */
int jma_tfs_read(pid_t pid, const char *path, size_t max, char **buf, size_t *len);

/* Remove @path (its parent resolved in the target's root). */
int jma_tfs_unlink(pid_t pid, const char *path);

/* Pick a directory the target (running as @uid) can create files in:
 * @preferred first (may be NULL), then /tmp, /var/tmp, /dev/shm.  Writes the
 * path into @out.  -EROFS when none is writable (read-only root). */
int jma_tfs_writable_dir(pid_t pid, uid_t uid, const char *preferred, char *out, size_t len);

#endif
