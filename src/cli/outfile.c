/* outfile.c -- our own output files (-o, --svg, prof window -o DIR), safe in
 * shared directories.
 *
 * jemattach runs as root.  In a sticky world-writable directory (/tmp) another
 * user may have planted a symlink at the name we are given: we refuse to follow
 * a symlink there unless its owner is us or the directory's owner -- the
 * kernel's protected_symlinks rule, applied whatever the sysctl says.  A path
 * that is not a regular file (/dev/null, a FIFO, a terminal) is written into,
 * never replaced.  Replacing a regular file atomically goes through a sibling
 * created O_EXCL|O_NOFOLLOW with an unguessable suffix, then rename().
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* Is @path a symlink we must not follow (see above)?  -EPERM if so. */
int cli_out_check_link(const char *path)
{
	char copy[PATH_MAX];
	struct stat l, d;

	if (lstat(path, &l) || !S_ISLNK(l.st_mode))
		return 0;
	snprintf(copy, sizeof(copy), "%s", path);
	if (stat(dirname(copy), &d))
		return -errno;
	if ((d.st_mode & S_ISVTX) && (d.st_mode & S_IWOTH) && l.st_uid != geteuid() &&
	    l.st_uid != d.st_uid)
		return -EPERM;
	return 0;
}

int cli_out_open(const char *path, bool atomic, struct cli_out *o)
{
	struct stat st;
	int fd, err, nofollow = O_NOFOLLOW;

	memset(o, 0, sizeof(*o));
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	err = cli_out_check_link(path);
	if (err)
		return err;
	/* Resolve an allowed symlink once: what we check is what we open. */
	if (!realpath(path, o->path)) {
		if (errno != ENOENT)
			return -errno;
		snprintf(o->path, sizeof(o->path), "%s", path);
		/* A dangling symlink the check above allowed: create its target. */
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			nofollow = 0;
	}
	if (!stat(o->path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);	/* into it, kept */
	} else if (atomic) {
		for (int i = 0;; i++) {
			unsigned long long r = 0;

			if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
				return -EIO;
			if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%016llx", o->path, r) >=
			    (int)sizeof(o->tmp))
				return -ENAMETOOLONG;
			fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
			if (fd >= 0 || errno != EEXIST || i == 8)
				break;
		}
		if (fd < 0)
			o->tmp[0] = '\0';
	} else {
		fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | nofollow | O_NOCTTY | O_CLOEXEC,
			  0666);
	}
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
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
		if (ok && !err && rename(o->tmp, o->path))
			err = -errno;
		if (!ok || err)
			unlink(o->tmp);
		o->tmp[0] = '\0';
	}
	return err;
}

const char *cli_out_strerror(int err)
{
	return err == -EPERM ? "a symlink owned by another user in a sticky world-writable "
			       "directory (not followed)" : strerror(-err);
}
