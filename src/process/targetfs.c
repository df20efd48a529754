/* targetfs.c -- files in the target's own filesystem view (see targetfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process/targetfs.h"

int jma_tfs_open(pid_t pid, const char *path, int flags)
{
	struct open_how how = { .flags = (unsigned)flags | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char root[64];
	int rfd, fd, err;

	if (path[0] != '/')
		return -EINVAL;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, rfd, path, &how, sizeof(how));
	err = errno;
	close(rfd);
	return fd < 0 ? -err : fd;
}

int jma_tfs_read(pid_t pid, const char *path, size_t max, char **bufp, size_t *lenp)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	int fd = jma_tfs_open(pid, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW), err = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

int jma_tfs_unlink(pid_t pid, const char *path)
{
	char *copy = strdup(path), *dir, *base;
	int dfd, err = 0;

	if (!copy)
		return -ENOMEM;
	base = strrchr(copy, '/');
	if (!base || !base[1]) {
		free(copy);
		return -EINVAL;
	}
	*base++ = '\0';
	dir = copy[0] ? copy : "/";
	dfd = jma_tfs_open(pid, dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		err = dfd;
	else if (unlinkat(dfd, base, 0))
		err = -errno;
	if (dfd >= 0)
		close(dfd);
	free(copy);
	return err;
}

/* Could a process running as @uid create a file in the directory @fd? */
static int writable_by(int fd, uid_t uid)
{
	struct stat st;
	struct statvfs vfs;

	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || fstatvfs(fd, &vfs))
		return 0;
	if (vfs.f_flag & ST_RDONLY)
		return 0;
	if (uid == 0)
		return 1;
	if (st.st_uid == uid)
		return !!(st.st_mode & S_IWUSR);
	/* Group membership is not known here; world-writable (like /tmp) is enough. */
	return !!(st.st_mode & S_IWOTH);
}

int jma_tfs_writable_dir(pid_t pid, uid_t uid, const char *preferred, char *out, size_t len)
{
	const char *cands[] = { preferred, "/tmp", "/var/tmp", "/dev/shm" };

	for (size_t i = 0; i < sizeof(cands) / sizeof(*cands); i++) {
		int fd, ok;

		if (!cands[i] || cands[i][0] != '/')
			continue;
		fd = jma_tfs_open(pid, cands[i], O_PATH | O_DIRECTORY);
		if (fd < 0)
			continue;
		/* O_PATH fds can be fstat'ed but not fstatvfs'ed on all kernels. */
		close(fd);
		fd = jma_tfs_open(pid, cands[i], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			continue;
		ok = writable_by(fd, uid);
		close(fd);
		if (ok) {
			snprintf(out, len, "%s", cands[i]);
			return 0;
		}
	}
	return -EROFS;
}
