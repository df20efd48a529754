/* view.c -- a module's file opened as the process that maps it sees it (see view.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach/backing.h"
#include "attach/targetfs.h"
#include "symbols/debuginfo.h"
#include "symbols/view.h"

#define DELETED " (deleted)"

/* @fd (or -errno) kept when it is a regular file, made blocking. */
static int regular(int fd)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* The live process's mapping of @path: the one at @start, else its first. */
static const struct att_map *mapping_of(const struct sym_view *v, const char *path, uint64_t start)
{
	const struct att_map *first = NULL;

	for (size_t i = 0; i < v->nmaps; i++) {
		if (!v->maps[i].path || strcmp(v->maps[i].path, path))
			continue;
		if (v->maps[i].start == start)
			return &v->maps[i];
		if (!first)
			first = &v->maps[i];
	}
	return first;
}

int sym_view_open(void *arg, const char *path, int flags)
{
	const struct sym_view *v = arg;

	if (v->pid > 0)
		return att_tfs_open(v->pid, path, flags);
	return v->as_owner ? att_tfs_open_as(v->uid, v->gid, path, flags) :
			     sym_open_host(NULL, path, flags);
}

int sym_view_module(const struct sym_view *v, const char *path, uint64_t start, char *shown,
		    size_t len)
{
	const int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK;
	size_t n = strlen(path);
	int fd;

	snprintf(shown, len, "%s", path);
	if (path[0] != '/')
		return -EINVAL;
	if (v->pid > 0) {
		const struct att_map *m = mapping_of(v, path, start);
		char why[256];

		/* A file of FUSE or a network file system: a read of it may never
		 * end (attach/backing.h), so it is not opened at all. */
		if (m && att_backing_check(v->pid, m->start, (size_t)(m->end - m->start), why,
					   sizeof(why)))
			return -EREMOTE;
		if (m) {
			char mf[96];

			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)v->pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
			fd = regular(sym_open_host(NULL, mf, flags));
			if (fd >= 0)
				return fd;
		}
	}
	/* The kernel marks unlinked files; the name is all that is left of them. */
	if (n > strlen(DELETED) && !strcmp(path + n - strlen(DELETED), DELETED))
		n -= strlen(DELETED);
	if ((size_t)snprintf(shown, len, "%s%.*s", v->pid > 0 || !v->sysroot ? "" : v->sysroot,
			     (int)n, path) >= len)
		return -ENAMETOOLONG;
	return regular(sym_view_open((void *)v, shown, flags));
}
