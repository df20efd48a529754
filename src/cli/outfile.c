/* outfile.c -- our own output files (-o, --svg, prof window's directory), safe
 * against another local user.
 *
 * jemattach runs as root, often on a process of a user who shares /tmp with
 * it (doc/safety.md, "Output files").  So, for every file we write:
 * - the path is walked one component at a time, following only symbolic
 *   links owned by root or the invoking user (process/safepath.h): another
 *   user's link, in any component, is refused;
 * - the directory that receives the file must be one no other user can
 *   change: owned by root or the invoking user, and writable by nobody else
 *   unless sticky (/tmp), where nobody else can rename or remove what we
 *   create.  Anything else is refused: another user could swap the file;
 * - a regular file (or none) is never opened for writing: a new file is
 *   created O_EXCL under an unguessable name relative to the directory we
 *   checked, then renameat() over the name -- at close (@atomic), or at once
 *   for a file written as it goes;
 * - a FIFO or device is written into, opened non-blocking (a FIFO with no
 *   reader fails at once instead of hanging): only when root or the invoking
 *   user owns it, and in a sticky directory never a device nor a hard link
 *   (another user may have linked one of root's there);
 * - /dev/stdout, /dev/stderr and /dev/fd/N are our own descriptors, duplicated.
 * Refusals are -EPERM, their message in cli_out_strerror.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "process/safepath.h"

/* The last failure's message (one command at a time: the CLI is one thread). */
static char out_msg[1024];
static int out_err;

static int fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out_msg, sizeof(out_msg), fmt, ap);
	va_end(ap);
	out_err = err;
	return err;
}

/* "dir/name" for messages. */
static const char *shown(const struct jma_path_at *at, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", at->shown, at->shown[0] && strcmp(at->shown, "/") ? "/" : "",
		 at->name);
	return buf;
}

/* A link in /proc in last place: one of our own descriptors (/dev/stdout is
 * /proc/self/fd/1), duplicated; anything else there is refused. */
static int open_proc_link(const struct jma_path_at *at)
{
	char self[64], dir[64], link[64], buf[PATH_MAX];
	ssize_t n;
	char *end;
	long fd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", at->dirfd);
	snprintf(self, sizeof(self), "/proc/%d/fd", (int)getpid());
	snprintf(dir, sizeof(dir), "/proc/%d/task/%d/fd", (int)getpid(), (int)gettid());
	n = readlink(link, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	errno = 0;
	fd = strtol(at->name, &end, 10);
	if ((strcmp(buf, self) && strcmp(buf, dir)) || errno || *end || fd < 0 || fd > INT_MAX)
		return fail(-EPERM, "%s: a link in /proc that is not one of jemattach's own "
			    "descriptors: refused", shown(at, buf, sizeof(buf)));
	/* The walk's own descriptor is no descriptor of the caller's. */
	n = fd == at->dirfd ? (errno = EBADF, -1) : fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
	return n < 0 ? fail(-errno, "%s: %s", shown(at, buf, sizeof(buf)), strerror(errno)) : (int)n;
}

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) || S_ISBLK(m) ? "a device" :
	       S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "a symlink";
}

/* Existing non-regular @st at @at: written into, never replaced, never
 * waited for. */
static int open_special(const struct jma_path_at *at, const struct stat *st, int sticky)
{
	char b[PATH_MAX + 256];
	struct stat now;
	int fd, fl;

	if (S_ISDIR(st->st_mode))
		return fail(-EISDIR, "%s: %s", shown(at, b, sizeof(b)), strerror(EISDIR));
	if (!proc_path_trusted_uid(st->st_uid))
		return fail(-EPERM, "%s is %s owned by another user (uid %u): refused",
			    shown(at, b, sizeof(b)), kind_of(st->st_mode), (unsigned)st->st_uid);
	if (sticky && (S_ISLNK(st->st_mode) || S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ||
		       st->st_nlink > 1))
		return fail(-EPERM, "%s is %s%s in a directory other users write: refused",
			    shown(at, b, sizeof(b)), st->st_nlink > 1 ? "hard-linked " : "",
			    kind_of(st->st_mode));
	fd = openat(at->dirfd, at->name, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail(errno == ELOOP ? -EPERM : -errno, "%s: %s", shown(at, b, sizeof(b)),
			    errno == ENXIO && S_ISFIFO(st->st_mode) ? "a FIFO with no reader (not "
			    "waiting for one)" : errno == ELOOP ? "a symlink put there meanwhile: "
			    "not followed" : strerror(errno));
	/* What was checked is what was opened. */
	if (fstat(fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		close(fd);
		return fail(-EAGAIN, "%s: replaced while it was opened", shown(at, b, sizeof(b)));
	}
	return fd;
}

/* A new file beside @at->name, O_EXCL under an unguessable name (o->tmp). */
static int create_sibling(const struct jma_path_at *at, struct cli_out *o)
{
	char b[PATH_MAX + 256];
	int fd = -1;

	for (int i = 0; i < 8 && fd < 0; i++) {
		unsigned long long r = 0;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return fail(-EIO, "getrandom: %s", strerror(errno));
		snprintf(o->tmp, sizeof(o->tmp), ".jemattach.%016llx.tmp", r);
		fd = openat(at->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
			    O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		o->tmp[0] = '\0';
		return fail(-errno, "%s: %s", shown(at, b, sizeof(b)), strerror(errno));
	}
	return fd;
}

int cli_out_open(const char *path, bool atomic, struct cli_out *o)
{
	struct jma_path_at at;
	struct stat st;
	int fd = -1, err, sticky = 0;
	char b[PATH_MAX + 256];

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	out_err = 0;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if ((err = proc_path_walk(path, &at, out_msg, sizeof(out_msg))))
		return out_err = err;
	if (at.proc_link)
		fd = open_proc_link(&at);
	else if (at.slash || !strcmp(at.name, ".") || !strcmp(at.name, ".."))
		fd = fail(-EISDIR, "%s: %s", path, strerror(EISDIR));
	else if ((err = proc_path_dir_private(at.dirfd, at.shown[0] ? at.shown : ".", &sticky,
					     out_msg, sizeof(out_msg))))
		fd = out_err = err;
	else if (!fstatat(at.dirfd, at.name, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode))
		fd = open_special(&at, &st, sticky);
	else if ((fd = create_sibling(&at, o)) >= 0 && !atomic) {
		/* Written as it goes: in place at once. */
		if (renameat(at.dirfd, o->tmp, at.dirfd, at.name)) {
			err = fail(-errno, "%s: %s", shown(&at, b, sizeof(b)), strerror(errno));
			unlinkat(at.dirfd, o->tmp, 0);
			close(fd);
			fd = err;
		}
		o->tmp[0] = '\0';
	}
	if (fd < 0) {
		o->tmp[0] = '\0';
		close(at.dirfd);
		return fd;
	}
	o->dirfd = at.dirfd;
	snprintf(o->name, sizeof(o->name), "%s", at.name);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = fail(-errno, "%s", strerror(errno));
		close(fd);
		cli_out_close(o, false);
		return err;
	}
	return 0;
}

int cli_out_close(struct cli_out *o, bool ok)
{
	int err = 0;

	if (o->f && o->f != stdout && fclose(o->f))
		err = -errno;
	else if (o->f == stdout && fflush(stdout))
		err = -errno;
	o->f = NULL;
	if (o->tmp[0]) {
		if (ok && !err && renameat(o->dirfd, o->tmp, o->dirfd, o->name))
			err = -errno;
		if (!ok || err)
			unlinkat(o->dirfd, o->tmp, 0);
		o->tmp[0] = '\0';
	}
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	return err;
}

int cli_out_mkdir(const char *path, bool fresh, char *out, size_t len, bool *made)
{
	struct jma_path_at at;
	struct stat st;
	char name[PATH_MAX];
	int err, fd;

	*made = false;
	out_err = 0;
	for (int i = 0;; i++) {
		unsigned long long r = 0;

		if (fresh && getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return fail(-EIO, "getrandom: %s", strerror(errno));
		/* Fresh: never one that exists, whoever made it. */
		if (snprintf(name, sizeof(name), fresh ? "%s.%08llx" : "%s", path,
			     r & 0xffffffffULL) >= (int)sizeof(name) || (int)strlen(name) >= (int)len)
			return fail(-ENAMETOOLONG, "%s: %s", path, strerror(ENAMETOOLONG));
		if ((err = proc_path_walk(name, &at, out_msg, sizeof(out_msg))))
			return out_err = err;
		if (at.proc_link) {
			err = fail(-EPERM, "%s: a link in /proc: refused", name);
		} else if ((err = proc_path_dir_private(at.dirfd, at.shown[0] ? at.shown : ".", NULL,
						       out_msg, sizeof(out_msg)))) {
			out_err = err;
		} else if (!mkdirat(at.dirfd, at.name, 0755)) {
			*made = true;
		} else if (errno == EEXIST && fresh) {
			err = i < 8 ? 1 : fail(-EEXIST, "%s: %s", name, strerror(EEXIST));
		} else if (errno != EEXIST) {
			err = fail(-errno, "%s: %s", name, strerror(errno));
		} else if ((fd = openat(at.dirfd, at.name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			err = fail(-errno, "%s: %s", name, strerror(errno));
		} else if (fstat(fd, &st) || !S_ISDIR(st.st_mode)) {
			err = !proc_path_trusted_uid(st.st_uid) ?
			      fail(-EPERM, "%s is %s owned by another user (uid %u): refused", name,
				   kind_of(st.st_mode), (unsigned)st.st_uid) :
			      fail(-ENOTDIR, "%s: %s", name, strerror(ENOTDIR));
			close(fd);
		} else {
			/* An existing directory of -o DIR: it too must be ours alone. */
			err = proc_path_dir_private(fd, name, NULL, out_msg, sizeof(out_msg));
			out_err = err;
			close(fd);
		}
		close(at.dirfd);
		if (err != 1)
			break;
	}
	if (!err)
		snprintf(out, len, "%s", name);
	return err;
}

void cli_out_remove(const char *path, bool dir)
{
	struct jma_path_at at;
	char msg[256];

	if (proc_path_walk(path, &at, msg, sizeof(msg)))
		return;
	if (!at.proc_link)
		unlinkat(at.dirfd, at.name, dir ? AT_REMOVEDIR : 0);
	close(at.dirfd);
}

const char *cli_out_strerror(int err)
{
	return err == out_err && out_msg[0] ? out_msg : strerror(-err);
}

int cli_write_file(void *arg, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, arg) == len ? 0 : -EIO;
}
