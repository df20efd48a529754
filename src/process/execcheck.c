/* execcheck.c -- the process still runs the program we read (see execcheck.h). */
#include <errno.h>
#include <string.h>

#include "process/execcheck.h"

int jma_exec_check(const struct att_map *maps, size_t n, const char *path, uint64_t fn)
{
	const struct att_map *m = att_maps_find(maps, n, fn);

	return m && m->perms[2] == 'x' && m->path && !strcmp(m->path, path) ? 0 : -ENOEXEC;
}

int jma_exec_same(pid_t pid, const struct att_mm_id *id)
{
	struct att_mm_id now;
	int err = att_proc_mm_id(pid, &now);

	if (err)
		return err;
	return memcmp(&now, id, sizeof(now)) ? -ENOEXEC : 0;
}
