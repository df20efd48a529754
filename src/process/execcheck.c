/* execcheck.c -- the process still runs the program we read (see execcheck.h). */
#include <errno.h>
#include <string.h>

#include "attach/procfs.h"
#include "process/execcheck.h"

int jma_exec_check(pid_t pid, const char *path, uint64_t fn)
{
	struct att_map *maps;
	const struct att_map *m;
	size_t n;
	int err = att_proc_maps(pid, &maps, &n);

	if (err)
		return err;
	m = att_maps_find(maps, n, fn);
	err = m && m->perms[2] == 'x' && m->path && !strcmp(m->path, path) ? 0 : -ENOEXEC;
	att_maps_free(maps, n);
	return err;
}
