/* cgmem.c -- memory headroom of the target's cgroup (see cgmem.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "attach/procfs.h"
#include "process/cgmem.h"
#include "attach/targetfs.h"

/* One number from a cgroup file, in our view (@view 0) or in process @view's
 * (targetfs.h: its user controls that view, so it is opened as the target and
 * must be a regular file -- never a FIFO that would hang us).  "max" (v2) and
 * v1's huge "no limit" value are UINT64_MAX.  -ENOENT when it is not there. */
static int read_u64(pid_t view, const char *dir, const char *file, uint64_t *v)
{
	char path[4200], buf[32], *end;
	struct stat st;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = view ? att_tfs_open(view, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW) :
		    open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return view ? fd : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : n ? 0 : -EINVAL;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	if (!strncmp(buf, "max", 3)) {
		*v = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	/* v1 says "no limit" with PAGE_COUNTER_MAX pages: anything past 2^62. */
	if (*v >= (1ULL << 62))
		*v = UINT64_MAX;
	return 0;
}

/* The limit first: most levels of a hierarchy have none, and then their
 * usage need not be read. */
static void room_under(pid_t view, const char *dir, const char *limit, const char *usage,
		       uint64_t *room, char *which, size_t len)
{
	uint64_t max, used;

	if (read_u64(view, dir, limit, &max) || max == UINT64_MAX ||
	    read_u64(view, dir, usage, &used))
		return;
	if ((max > used ? max - used : 0) < *room) {
		char in[48] = "";

		if (view)
			snprintf(in, sizeof(in), " in process %d's view", (int)view);
		*room = max > used ? max - used : 0;
		snprintf(which, len, "%s/%s%s = %llu, %llu in use", dir, limit, in,
			 (unsigned long long)max, (unsigned long long)used);
	}
}

int proc_cgmem_room_dir(pid_t view, const char *dir, const char *top, int v2, uint64_t *room,
		       char *which, size_t len)
{
	char cur[4096];
	size_t toplen = strlen(top);
	const char *usage = v2 ? "memory.current" : "memory.usage_in_bytes";

	*room = UINT64_MAX;
	which[0] = '\0';
	if (strlen(dir) >= sizeof(cur) || strncmp(dir, top, toplen))
		return -EINVAL;
	snprintf(cur, sizeof(cur), "%s", dir);
	for (;;) {
		char *slash;

		room_under(view, cur, v2 ? "memory.max" : "memory.limit_in_bytes", usage, room,
			   which, len);
		if (v2)
			room_under(view, cur, "memory.high", usage, room, which, len);
		if (strlen(cur) <= toplen)
			return 0;
		slash = strrchr(cur, '/');
		if (!slash || (size_t)(slash - cur) < toplen)
			return 0;
		*slash = '\0';
	}
}

/* The usual mounts, from their hierarchy's root: cgroup2 on /sys/fs/cgroup,
 * v1's memory controller on /sys/fs/cgroup/memory.  Taken when that file
 * system is there and holds the cgroup's directory; a mount of a subtree (a
 * container without its own cgroup namespace) does not hold it, and is found
 * in the mount table instead, which costs a read of every mount (about 0.1 ms
 * of a 1.6 ms `get`). */
static int usual_mount(int v2, const char *cg, char *point, size_t plen, char *root, size_t rlen)
{
	const char *at = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
	char dir[4200];
	struct statfs fs;

	if (statfs(at, &fs) || fs.f_type != (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s%s", at, cg);
	if (access(dir, F_OK))
		return -ENOENT;
	snprintf(point, plen, "%s", at);
	snprintf(root, rlen, "/");
	return 0;
}

int proc_cgmem_mount(char *mountinfo, int v2, char *point, size_t plen, char *root, size_t rlen)
{
	char *line, *save = NULL;
	int found = -ENOENT;

	for (line = strtok_r(mountinfo, "\n", &save); line && found;
	     line = strtok_r(NULL, "\n", &save)) {
		char r[1024], p[1024], type[64], opts[1024];
		char *dash = strstr(line, " - ");

		/* Most lines are other file systems or v1 controllers: sscanf
		 * only the candidates. */
		if (!dash || strncmp(dash + 3, v2 ? "cgroup2 " : "cgroup ", v2 ? 8 : 7) ||
		    (!v2 && !strstr(dash + 3, "memory")) ||
		    sscanf(line, "%*s %*s %*s %1023s %1023s", r, p) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", type, opts) != 2)
			continue;
		if (v2 ? strcmp(type, "cgroup2") :
		    strcmp(type, "cgroup") || !strstr(opts, "memory"))
			continue;
		snprintf(point, plen, "%s", p);
		snprintf(root, rlen, "%s", r);
		found = 0;
	}
	return found;
}

int proc_cgmem_line(char *line, char **cg)
{
	char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL, *tok, *save;

	if (!path)
		return -1;
	*ctl++ = '\0';
	*path++ = '\0';
	*cg = path;
	if (!strcmp(line, "0") && !*ctl)
		return 1;
	for (tok = strtok_r(ctl, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "memory"))
			return 0;
	return -1;
}

const char *proc_cgmem_under(const char *cg, const char *root)
{
	size_t rl = strcmp(root, "/") ? strlen(root) : 0;
	const char *rest = cg + rl, *up;

	if (strncmp(cg, root, rl) || (*rest && *rest != '/'))
		return NULL;
	for (up = strstr(rest, "/.."); up; up = strstr(up + 1, "/.."))
		if (up[3] == '/' || !up[3])
			return NULL;
	return strcmp(rest, "/") ? rest : "";
}

/* The mount point and root of @v2's hierarchy in the mount table at @path. */
static int mount_in(const char *path, int v2, char *point, size_t plen, char *root, size_t rlen)
{
	char *mounts;
	int err = att_proc_read(path, &mounts, NULL);

	if (err)
		return err;
	err = proc_cgmem_mount(mounts, v2, point, plen, root, rlen);
	free(mounts);
	return err;
}

/* The room under process @pid's memory cgroup @cg (a path relative to our
 * cgroup namespace) of a v1 (@v2 = 0) or cgroup2 hierarchy.  Through our own
 * mount when it shows that cgroup; else through the target's (a jemattach in
 * a container, with a cgroup namespace and mount of its own: the target's
 * cgroup is above our root, "/../x").  Both mount tables give their root
 * relative to our cgroup namespace, as /proc/PID/cgroup does. */
static int room_in(pid_t pid, int v2, const char *cg, uint64_t *room, char *which, size_t len)
{
	char point[1024], root[1024], dir[4096], path[64];
	const char *rest;

	if (!usual_mount(v2, cg, point, sizeof(point), root, sizeof(root)) ||
	    !mount_in("/proc/self/mountinfo", v2, point, sizeof(point), root, sizeof(root))) {
		if ((rest = proc_cgmem_under(cg, root))) {
			snprintf(dir, sizeof(dir), "%s%s", point, rest);
			return proc_cgmem_room_dir(0, dir, point, v2, room, which, len);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (mount_in(path, v2, point, sizeof(point), root, sizeof(root)) ||
	    !(rest = proc_cgmem_under(cg, root)))
		return 0;	/* mounted nowhere that shows it: no limit we can see */
	snprintf(dir, sizeof(dir), "%s%s", point, rest);
	return proc_cgmem_room_dir(pid, dir, point, v2, room, which, len);
}

int proc_cgmem_room(pid_t pid, uint64_t *room, char *which, size_t len)
{
	char path[64], *buf, *line, *save = NULL, *v1 = NULL, *v2 = NULL;
	int err;

	*room = UINT64_MAX;
	which[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	err = att_proc_read(path, &buf, NULL);
	if (err)
		return err;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *cg;

		switch (proc_cgmem_line(line, &cg)) {
		case 0: v1 = cg; break;
		case 1: v2 = cg; break;
		}
	}
	/* A controller sits in one hierarchy: memory in a v1 one (a "hybrid"
	 * system) leaves cgroup2 without memory.max. */
	if (v1 || v2)
		err = room_in(pid, !v1, v1 ? v1 : v2, room, which, len);
	free(buf);
	return err;
}
