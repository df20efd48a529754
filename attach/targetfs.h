/* targetfs.h -- files as the target process sees them, reached safely from outside.
 *
 * Paths are resolved inside /proc/PID/root with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS): a symlink planted in a container can never lead us
 * out to the host's files.  Every open, create and remove in that view runs
 * with the target's file-system rights (its fsuid, fsgid and supplementary
 * groups, switched for the calling thread only and always switched back): the
 * target's user controls its mount namespace (unshare -Urm, bind mounts), so
 * whatever it can make a path name, root must not be the one opening it.
 */
#ifndef ATT_TARGETFS_H
#define ATT_TARGETFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open @path (absolute, in the target's mount namespace) with @flags, as the
 * target.  Returns an fd or -errno. */
int att_tfs_open(pid_t pid, const char *path, int flags);

/* Open @path of this host with the file-system rights of user @uid, group
 * @gid and no supplementary group (the owner of a file that names it, such
 * as a core), no magic link followed; as ourselves when we are not root (we
 * can read no more than we could).  An fd or -errno. */
int att_tfs_open_as(uid_t uid, gid_t gid, const char *path, int flags);

/* Read the regular file @path whole (at most @max bytes) into a malloc'ed
 * buffer, as the target.  -EFBIG past @max, -EINVAL if it is not a regular file. */
int att_tfs_read(pid_t pid, const char *path, size_t max, char **buf, size_t *len);

/* A directory of our own in the target's view: created 0700 by the target's
 * fsuid with an unguessable name, so no other user can enter it, plant a file
 * in it or rename it away.  The target writes into it; we read back only what
 * is a regular file owned by the target, with one link, on the directory's mount. */
struct jma_tfs_dir {
	pid_t pid;
	int fd;			/* the directory we created, -1 when none */
	int pfd;		/* its parent (O_PATH), to remove it from */
	uint64_t mnt;		/* its mount id (statx) */
	uid_t uid;		/* the target's fsuid: owner of all it writes */
	char path[512];		/* absolute, in the target's view */
};

/* Create the private directory in @preferred (may be NULL), else the first of
 * /tmp, /var/tmp, /dev/shm where the target can create it and no other user
 * can replace a directory on the path (each one owned by root or the target,
 * and sticky when others may write it).  -EROFS when there is none.
 * Until att_tfs_private_remove our SIGINT, SIGTERM and SIGHUP are held back
 * (att_defer_block): a Ctrl-C cuts the call that fills the directory short,
 * and ends us once the directory is gone. */
int att_tfs_private(pid_t pid, const char *preferred, struct jma_tfs_dir *d);

/* Read @name in @d (see above for what is accepted; -EPERM otherwise). */
int att_tfs_private_read(struct jma_tfs_dir *d, const char *name, size_t max,
			 char **buf, size_t *len);

/* Remove @name (may be NULL) and the directory itself, then close it.
 * Idempotent.  Returns the first error (e.g. -ENOTEMPTY: someone added files). */
int att_tfs_private_remove(struct jma_tfs_dir *d, const char *name);

/* A private directory is flock(2)ed while in use.  Remove those in @parent
 * (absolute, in the target's view) that a jemattach killed before it could
 * remove them left: the target's, unlocked, and old enough not to be one
 * being made -- with @file in them (may be NULL), nothing else.  As the
 * target; returns how many were removed or -errno. */
int att_tfs_sweep(pid_t pid, const char *parent, const char *file);

#endif
