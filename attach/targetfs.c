/* targetfs.c -- files in the target's own filesystem view (see targetfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach/defer.h"
#include "attach/procfs.h"
#include "attach/targetfs.h"

#define TFS_NGROUPS 1024
/* The private directories: the prefix and 24 hex digits (96 random bits),
 * made by tfs_mkprivate and recognized by the sweep. */
#define PRIVATE_PREFIX	"jemattach."
#define PRIVATE_HEX	24
/* Between mkdir and flock a directory is young and unlocked: the sweep
 * leaves directories younger than this alone. */
#define SWEEP_MIN_AGE_S	2

/* File-system credentials of one side: the target's, or ours saved. */
struct tfs_cred {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[TFS_NGROUPS];
};

/* The target's fsuid, fsgid and groups, from /proc/PID/status (host ids). */
static int tfs_target_cred(pid_t pid, struct tfs_cred *c)
{
	char path[64], *buf, *line;
	size_t len;
	int have = 0, err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = att_proc_read(path, &buf, &len);
	if (err)
		return err;
	c->ngroups = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned a, b, cc, d;

		if (sscanf(line, "Uid: %u %u %u %u", &a, &b, &cc, &d) == 4) {
			c->uid = d;
			have |= 1;
		} else if (sscanf(line, "Gid: %u %u %u %u", &a, &b, &cc, &d) == 4) {
			c->gid = d;
			have |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p)
					break;
				if (c->ngroups == TFS_NGROUPS) {
					free(buf);
					return -E2BIG;
				}
				c->groups[c->ngroups++] = (gid_t)g;
				p = end;
			}
		}
	}
	free(buf);
	return have == 3 ? 0 : -EIO;
}

/* Take on @to's file-system rights in this thread, keeping ours in @saved.
 * Raw system calls on purpose: glibc's setgroups changes every thread.  A
 * fsuid other than 0 also drops CAP_DAC_OVERRIDE and the other file
 * capabilities; they come back with fsuid 0 (capabilities(7)).  Returns 1
 * when switched, 0 when already the same (nothing to undo), -EPERM when we
 * may not become the target. */
static int tfs_become(const struct tfs_cred *to, struct tfs_cred *saved)
{
	long n;

	saved->uid = (uid_t)syscall(SYS_setfsuid, -1);
	saved->gid = (gid_t)syscall(SYS_setfsgid, -1);
	if (saved->uid == to->uid && saved->gid == to->gid && geteuid() != 0)
		return 0;	/* we are that user already: our groups stay */
	n = syscall(SYS_getgroups, TFS_NGROUPS, saved->groups);
	if (n < 0)
		return -errno;
	saved->ngroups = (int)n;
	if (syscall(SYS_setgroups, (size_t)to->ngroups, to->groups))
		return -EPERM;
	syscall(SYS_setfsgid, to->gid);
	syscall(SYS_setfsuid, to->uid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != to->uid ||
	    (gid_t)syscall(SYS_setfsgid, -1) != to->gid) {
		syscall(SYS_setfsuid, saved->uid);
		syscall(SYS_setfsgid, saved->gid);
		syscall(SYS_setgroups, (size_t)saved->ngroups, saved->groups);
		return -EPERM;
	}
	return 1;
}

/* Undo tfs_become (@switched: its return value); preserves errno. */
static void tfs_unbecome(int switched, const struct tfs_cred *saved)
{
	int e = errno;

	if (switched > 0) {
		syscall(SYS_setfsuid, saved->uid);
		syscall(SYS_setfsgid, saved->gid);
		syscall(SYS_setgroups, (size_t)saved->ngroups, saved->groups);
	}
	errno = e;
}

static int tfs_root(pid_t pid)
{
	char root[64];
	int fd;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* As the target, in its root: its credentials taken on in this thread and
 * its root opened, from tfs_enter (0 or -errno, then nothing to undo) until
 * tfs_leave. */
struct tfs_in {
	int rfd;			/* /proc/PID/root, O_PATH */
	struct tfs_cred *to;		/* the target's; to[1] keeps ours */
	int sw;				/* tfs_become's result */
};

static int tfs_enter(pid_t pid, struct tfs_in *in)
{
	int err;

	in->to = malloc(2 * sizeof(*in->to));
	if (!in->to)
		return -ENOMEM;
	err = tfs_target_cred(pid, in->to);
	in->rfd = err ? err : tfs_root(pid);
	if (in->rfd < 0) {
		err = in->rfd;
		free(in->to);
		return err;
	}
	in->sw = tfs_become(in->to, in->to + 1);
	if (in->sw < 0) {
		close(in->rfd);
		free(in->to);
		return in->sw;
	}
	return 0;
}

static void tfs_leave(struct tfs_in *in)
{
	tfs_unbecome(in->sw, in->to + 1);
	close(in->rfd);
	free(in->to);
}

static int tfs_openat2(int dfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = { .flags = (unsigned)flags | O_CLOEXEC, .resolve = resolve };
	int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* /proc/PID/root is opened with our own rights (reaching it needs ptrace
 * access to the target); everything under it with the target's. */
int att_tfs_open(pid_t pid, const char *path, int flags)
{
	struct tfs_in in;
	int fd;

	if (path[0] != '/')
		return -EINVAL;
	if ((fd = tfs_enter(pid, &in)))
		return fd;
	fd = tfs_openat2(in.rfd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	tfs_leave(&in);
	return fd;
}

int att_tfs_open_as(uid_t uid, gid_t gid, const char *path, int flags)
{
	struct tfs_cred *c = malloc(2 * sizeof(*c));
	int sw, fd;

	if (!c)
		return -ENOMEM;
	c[0] = (struct tfs_cred){ .uid = uid, .gid = gid, .ngroups = 1, .groups = { gid } };
	sw = tfs_become(&c[0], &c[1]);
	/* Not root: we can read no more than we could, as ourselves. */
	if (sw == -EPERM && geteuid() != 0)
		sw = 0;
	if (sw < 0) {
		free(c);
		return sw;
	}
	fd = tfs_openat2(AT_FDCWD, path, flags, RESOLVE_NO_MAGICLINKS);
	tfs_unbecome(sw, &c[1]);
	free(c);
	return fd;
}

/* Read the regular file open at @fd whole (at most @max bytes); closes @fd. */
static int tfs_slurp(int fd, size_t max, char **bufp, size_t *lenp)
{
	struct stat st;
	char *buf;
	size_t len = 0;
	int err = 0;

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

int att_tfs_read(pid_t pid, const char *path, size_t max, char **bufp, size_t *lenp)
{
	int fd = att_tfs_open(pid, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);

	return fd < 0 ? fd : tfs_slurp(fd, max, bufp, lenp);
}

static int tfs_mnt_id(int fd, uint64_t *mnt)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx))
		return -errno;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return -ENOTSUP;
	*mnt = sx.stx_mnt_id;
	return 0;
}

/* May no user other than root and @uid replace what is under this directory?
 * (The kernel's sticky rule: in a sticky directory only an entry's owner or
 * the directory's owner may rename or remove it.) */
static int tfs_dir_safe(int fd, uid_t uid)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid != 0 && st.st_uid != uid)
		return 0;
	return !(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX);
}

/* Every directory from the target's / down to @dir is safe (above); returns an
 * O_PATH fd of @dir or -errno (-EPERM when one is not). */
static int tfs_open_safe_dir(int rfd, const char *dir, uid_t uid)
{
	char prefix[512];
	size_t n = strlen(dir);

	if (n >= sizeof(prefix))
		return -ENAMETOOLONG;
	for (size_t i = 1; i <= n; i++) {
		int fd;

		if (i < n && dir[i] != '/')
			continue;
		memcpy(prefix, dir, i);
		prefix[i] = '\0';
		fd = tfs_openat2(rfd, i == 1 && dir[0] == '/' && n > 1 ? "/" : prefix,
				 O_PATH | O_DIRECTORY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		if (fd < 0)
			return fd;
		if (!tfs_dir_safe(fd, uid)) {
			close(fd);
			return -EPERM;
		}
		if (i == n)
			return fd;
		close(fd);
	}
	return -EINVAL;
}

/* Make the 0700 directory in @parent (an absolute path in the target's view),
 * as the target.  Fills @d on success. */
static int tfs_mkprivate(int rfd, const char *parent, const struct tfs_cred *to,
			 struct jma_tfs_dir *d)
{
	unsigned char rnd[PRIVATE_HEX / 2];
	char name[64];
	struct stat st;
	int pfd, fd, err;

	pfd = tfs_open_safe_dir(rfd, parent, to->uid);
	if (pfd < 0)
		return pfd;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		close(pfd);
		return -EIO;
	}
	strcpy(name, PRIVATE_PREFIX);
	for (size_t i = 0; i < sizeof(rnd); i++)
		sprintf(name + strlen(name), "%02x", rnd[i]);
	if (mkdirat(pfd, name, 0700)) {
		err = -errno;
		close(pfd);
		return err;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (!err && (fstat(fd, &st) || st.st_uid != to->uid || (st.st_mode & 07777) != 0700))
		err = -EPERM;
	/* Held until removed: what a dead jemattach leaves is unlocked
	 * (att_tfs_sweep).  Where flock is not supported nothing is swept. */
	if (!err)
		flock(fd, LOCK_EX | LOCK_NB);
	if (!err)
		err = tfs_mnt_id(fd, &d->mnt);
	if (err) {
		if (fd >= 0)
			close(fd);
		unlinkat(pfd, name, AT_REMOVEDIR);
		close(pfd);
		return err;
	}
	d->pfd = pfd;
	d->fd = fd;
	d->uid = to->uid;
	snprintf(d->path, sizeof(d->path), "%s/%s", strcmp(parent, "/") ? parent : "", name);
	return 0;
}

int att_tfs_private(pid_t pid, const char *preferred, struct jma_tfs_dir *d)
{
	const char *cands[] = { preferred, "/tmp", "/var/tmp", "/dev/shm" };
	struct tfs_in in;
	int err;

	d->pid = pid;
	d->fd = d->pfd = -1;
	att_defer_block();
	if (!(err = tfs_enter(pid, &in))) {
		err = -EROFS;
		for (size_t i = 0; i < sizeof(cands) / sizeof(*cands); i++) {
			if (!cands[i] || cands[i][0] != '/' || strlen(cands[i]) > 400)
				continue;
			if (!tfs_mkprivate(in.rfd, cands[i], in.to, d)) {
				err = 0;
				break;
			}
		}
		tfs_leave(&in);
	}
	if (err)
		att_defer_unblock();
	return err;
}

/* Run @fn as the target of @d (its credentials read again: they are the
 * target's at this moment, not at creation). */
static int tfs_as_target(struct jma_tfs_dir *d, int (*fn)(struct jma_tfs_dir *, void *), void *arg)
{
	struct tfs_cred *to = malloc(2 * sizeof(*to));
	int sw, err;

	if (!to)
		return -ENOMEM;
	err = tfs_target_cred(d->pid, to);
	/* A target that is gone: remove with the owner's rights we created with. */
	if (err == -ENOENT || err == -ESRCH) {
		to->uid = d->uid;
		to->gid = (gid_t)syscall(SYS_setfsgid, -1);
		to->ngroups = 0;
		err = 0;
	}
	sw = err ? err : tfs_become(to, to + 1);
	err = sw < 0 ? sw : fn(d, arg);
	tfs_unbecome(sw, to + 1);
	free(to);
	return err;
}

struct tfs_readarg {
	const char *name;
	size_t max;
	char **buf;
	size_t *len;
};

static int tfs_private_read_as(struct jma_tfs_dir *d, void *arg)
{
	const struct tfs_readarg *a = arg;
	struct stat st;
	uint64_t mnt;
	int fd;

	fd = tfs_openat2(d->fd, a->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW,
			 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			 RESOLVE_NO_XDEV);
	if (fd < 0)
		return fd == -EXDEV || fd == -ELOOP ? -EPERM : fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != d->uid ||
	    st.st_nlink != 1 || tfs_mnt_id(fd, &mnt) || mnt != d->mnt) {
		close(fd);
		return -EPERM;
	}
	return tfs_slurp(fd, a->max, a->buf, a->len);
}

int att_tfs_private_read(struct jma_tfs_dir *d, const char *name, size_t max,
			 char **buf, size_t *len)
{
	struct tfs_readarg a = { name, max, buf, len };

	if (d->fd < 0 || strchr(name, '/'))
		return -EINVAL;
	return tfs_as_target(d, tfs_private_read_as, &a);
}

static int tfs_private_remove_as(struct jma_tfs_dir *d, void *arg)
{
	const char *name = arg;
	int err = 0;

	if (name && unlinkat(d->fd, name, 0) && errno != ENOENT)
		err = -errno;
	if (unlinkat(d->pfd, strrchr(d->path, '/') + 1, AT_REMOVEDIR) && !err)
		err = -errno;
	return err;
}

int att_tfs_private_remove(struct jma_tfs_dir *d, const char *name)
{
	int err;

	if (d->fd < 0)
		return 0;
	err = tfs_as_target(d, tfs_private_remove_as, (void *)name);
	close(d->fd);
	close(d->pfd);
	d->fd = d->pfd = -1;
	att_defer_unblock();
	return err;
}

static int private_name(const char *name)
{
	size_t n = strlen(PRIVATE_PREFIX);

	if (strncmp(name, PRIVATE_PREFIX, n) || strlen(name + n) != PRIVATE_HEX)
		return 0;
	return strspn(name + n, "0123456789abcdef") == PRIVATE_HEX;
}

/* Remove @name in @pfd if it is a private directory of @uid that nobody
 * holds.  Returns 1 when removed. */
static int sweep_one(int pfd, const char *name, const char *file, uid_t uid, time_t now)
{
	struct stat st;
	int fd, gone = 0;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
	    st.st_uid != uid || (st.st_mode & 07777) != 0700 || now - st.st_ctime < SWEEP_MIN_AGE_S)
		return 0;
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!flock(fd, LOCK_EX | LOCK_NB)) {
		/* Only the name the target was told to write; anything else
		 * keeps the directory (rmdir fails on it). */
		if (file)
			unlinkat(fd, file, 0);
		gone = !unlinkat(pfd, name, AT_REMOVEDIR);
	}
	close(fd);
	return gone;
}

/* As the target: sweep_one every entry of @parent named like ours. */
static int sweep_in(int rfd, const char *parent, const char *file, uid_t uid)
{
	struct timespec now;
	struct dirent *e;
	DIR *dir;
	int pfd, fd, n = 0;

	pfd = tfs_open_safe_dir(rfd, parent, uid);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		close(pfd);
		return err;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(dir)))
		if (private_name(e->d_name))
			n += sweep_one(pfd, e->d_name, file, uid, now.tv_sec);
	closedir(dir);
	close(pfd);
	return n;
}

int att_tfs_sweep(pid_t pid, const char *parent, const char *file)
{
	struct tfs_in in;
	int n;

	if (parent[0] != '/' || (file && strchr(file, '/')))
		return -EINVAL;
	if ((n = tfs_enter(pid, &in)))
		return n;
	n = sweep_in(in.rfd, parent, file, in.to->uid);
	tfs_leave(&in);
	return n;
}
