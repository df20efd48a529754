/* safepath.c -- a path walked without another user's symbolic links (see safepath.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "process/safepath.h"

#define MAX_LINKS	40	/* the kernel's limit too */
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* Run by root through sudo: the user who ran sudo, whose own files (a home
 * directory, ~/out) are as much the invoker's as root's.  -1 when not. */
static long sudo_id(const char *var)
{
	const char *v = getuid() == 0 ? secure_getenv(var) : NULL;
	char *end;
	long id;

	if (!v || !*v)
		return -1;
	errno = 0;
	id = strtol(v, &end, 10);
	return errno || *end || id < 0 || id > 0x7fffffffL ? -1 : id;
}

int proc_path_trusted_uid(uid_t uid)
{
	return uid == 0 || uid == getuid() || uid == geteuid() || (long)uid == sudo_id("SUDO_UID");
}

static int trusted_gid(gid_t gid)
{
	return gid == 0 || gid == getgid() || gid == getegid() || (long)gid == sudo_id("SUDO_GID");
}

static int on_proc(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && sf.f_type == PROC_SUPER_MAGIC;
}

/* Append "/@c" (or @c to an empty one) to @shown, truncating quietly: it is
 * for messages only. */
static void show(char *shown, size_t len, const char *c, size_t clen)
{
	size_t n = strlen(shown);

	snprintf(shown + n, len - n, "%s%.*s", n && shown[n - 1] != '/' ? "/" : "", (int)clen, c);
}

/* The walk's state: the directory reached and what is left of the path. */
struct walk {
	int cur;
	char *rest;		/* heap: 2 * PATH_MAX */
	int links;
};

/* Restart at "/" or the working directory. */
static int walk_from(struct walk *w, int absolute, char *shown, size_t slen)
{
	int fd = open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (w->cur >= 0)
		close(w->cur);
	w->cur = fd;
	if (absolute)
		snprintf(shown, slen, "/");
	return 0;
}

/* Trusted link @c (of @clen bytes) in w->cur, with @after left of the
 * path: go on with its text in place of @c.  0, or -errno with @msg. */
static int follow(struct walk *w, struct jma_path_at *at, const char *c, size_t clen,
		  const char *after, char *msg, size_t len)
{
	char name[NAME_MAX + 1], target[PATH_MAX], *next;
	ssize_t n;
	int err;

	snprintf(name, sizeof(name), "%.*s", (int)clen, c);
	if (++w->links > MAX_LINKS) {
		snprintf(msg, len, "%s: more than %d symbolic links", at->shown, MAX_LINKS);
		return -ELOOP;
	}
	n = readlinkat(w->cur, name, target, sizeof(target));
	if (n < 0 || n == (ssize_t)sizeof(target)) {
		err = n < 0 ? -errno : -ENAMETOOLONG;
		snprintf(msg, len, "reading link %s/%s: %s", at->shown, name, strerror(-err));
		return err;
	}
	target[n] = '\0';
	if (!(next = malloc(2 * PATH_MAX)))
		return -ENOMEM;
	if (snprintf(next, 2 * PATH_MAX, "%s%s%s", target, *after ? "/" : "", after) >= 2 * PATH_MAX) {
		free(next);
		snprintf(msg, len, "%s/%s: path too long after its link", at->shown, name);
		return -ENAMETOOLONG;
	}
	free(w->rest);
	w->rest = next;
	if (target[0] == '/' && (err = walk_from(w, 1, at->shown, sizeof(at->shown)))) {
		snprintf(msg, len, "/: %s", strerror(-err));
		return err;
	}
	return 0;
}

int proc_path_walk(const char *path, struct jma_path_at *at, char *msg, size_t len)
{
	struct walk w = { .cur = -1, .rest = malloc(2 * PATH_MAX) };
	const char *p;
	int err;

	memset(at, 0, sizeof(*at));
	at->dirfd = -1;
	if (!w.rest)
		return -ENOMEM;
	if (!*path || snprintf(w.rest, 2 * PATH_MAX, "%s", path) >= PATH_MAX) {
		free(w.rest);
		snprintf(msg, len, "%s", *path ? "path too long" : "empty path");
		return *path ? -ENAMETOOLONG : -ENOENT;
	}
	if ((err = walk_from(&w, path[0] == '/', at->shown, sizeof(at->shown)))) {
		snprintf(msg, len, "%s: %s", path[0] == '/' ? "/" : ".", strerror(-err));
		goto fail;
	}
	for (p = w.rest;;) {
		const char *c, *after;
		size_t clen;
		struct stat st;
		char name[NAME_MAX + 1];
		int fd, last;

		while (*p == '/')
			p++;
		if (!*p) {
			/* "/" alone, or a link to it: the directory itself. */
			snprintf(at->name, sizeof(at->name), ".");
			at->slash = 1;
			break;
		}
		c = p;
		clen = strcspn(c, "/");
		after = c + clen;
		while (*after == '/')
			after++;
		last = !*after;
		if (clen > NAME_MAX) {
			err = -ENAMETOOLONG;
			snprintf(msg, len, "%s: a name longer than %d bytes", at->shown, NAME_MAX);
			goto fail;
		}
		snprintf(name, sizeof(name), "%.*s", (int)clen, c);
		if (fstatat(w.cur, name, &st, AT_SYMLINK_NOFOLLOW)) {
			/* A missing last component is what we are to create. */
			if (last && errno == ENOENT) {
				snprintf(at->name, sizeof(at->name), "%s", name);
				at->slash = c[clen] == '/';
				break;
			}
			err = -errno;
			show(at->shown, sizeof(at->shown), c, clen);
			snprintf(msg, len, "%s: %s", at->shown, strerror(-err));
			goto fail;
		}
		if (S_ISLNK(st.st_mode) && !proc_path_trusted_uid(st.st_uid)) {
			err = -EPERM;
			show(at->shown, sizeof(at->shown), c, clen);
			snprintf(msg, len, "%s is a symlink owned by another user (uid %u): not "
				 "followed", at->shown, (unsigned)st.st_uid);
			goto fail;
		}
		if (S_ISLNK(st.st_mode) && on_proc(w.cur)) {
			if (last) {
				snprintf(at->name, sizeof(at->name), "%s", name);
				at->proc_link = 1;
				at->slash = c[clen] == '/';
				break;
			}
			/* The kernel's link (/proc/self, /proc/PID/cwd): followed by it. */
			fd = openat(w.cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else if (S_ISLNK(st.st_mode)) {
			/* The rest of the path moves to a new buffer: copy before. */
			char *tail = strdup(after);

			if (!tail) {
				err = -ENOMEM;
				goto fail;
			}
			err = follow(&w, at, c, clen, tail, msg, len);
			free(tail);
			if (err)
				goto fail;
			p = w.rest;
			continue;
		} else if (last) {
			snprintf(at->name, sizeof(at->name), "%s", name);
			at->slash = c[clen] == '/';
			break;
		} else {
			/* O_NOFOLLOW: a link put there since the fstatat fails here. */
			fd = openat(w.cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		show(at->shown, sizeof(at->shown), c, clen);
		if (fd < 0) {
			err = -errno;
			snprintf(msg, len, "%s: %s", at->shown, strerror(-err));
			goto fail;
		}
		close(w.cur);
		w.cur = fd;
		p = after;
	}
	free(w.rest);
	at->dirfd = w.cur;
	return 0;
fail:
	free(w.rest);
	if (w.cur >= 0)
		close(w.cur);
	return err;
}

int proc_path_dir_private(int dirfd, const char *shown, int *sticky, char *msg, size_t len)
{
	struct stat st;

	if (sticky)
		*sticky = 0;
	if (fstat(dirfd, &st)) {
		snprintf(msg, len, "%s: %s", shown, strerror(errno));
		return -errno;
	}
	if (!proc_path_trusted_uid(st.st_uid)) {
		snprintf(msg, len, "directory %s belongs to another user (uid %u): refused, as "
			 "that user could put anything in place of the file", shown, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & S_ISVTX) {
		if (sticky)
			*sticky = 1;
		return 0;
	}
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && !trusted_gid(st.st_gid))) {
		snprintf(msg, len, "directory %s is writable by other users and not sticky: refused, "
			 "as they could put anything in place of the file", shown);
		return -EPERM;
	}
	return 0;
}

int proc_path_open(const char *path, int flags, mode_t mode, char *msg, size_t len)
{
	struct jma_path_at at;
	int fd, err = proc_path_walk(path, &at, msg, len);

	if (err)
		return err;
	fd = openat(at.dirfd, at.name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		err = errno == ELOOP ? -EPERM : -errno;
		snprintf(msg, len, "%s%s%s: %s", at.shown, at.shown[0] ? "/" : "", at.name,
			 err == -EPERM ? "a symlink put there while it was looked at" : strerror(-err));
	}
	close(at.dirfd);
	return fd < 0 ? err : fd;
}
