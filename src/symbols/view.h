/* view.h -- a module's file opened as the process that maps it sees it.
 *
 * The one way the symbol service opens a module file.  A live process's
 * files are reached through /proc/PID/map_files/<range> first (deleted or
 * replaced files, containers), else by the path resolved inside
 * /proc/PID/root with the target's rights (attach/targetfs.h): never a host
 * path, never root's rights on a name the target chose.  Files of no live
 * process (a core's, a profile's) are this host's, under a sysroot when one
 * is given, opened with our own rights -- or, for a core, with its owner's
 * (attach/targetfs.h: a core is data its writer chose, names included).
 * Only a regular file is opened, and never an open that blocks (a FIFO).
 */
#ifndef JMA_SYMBOLS_VIEW_H
#define JMA_SYMBOLS_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/procfs.h"

struct sym_view {
	pid_t pid;			/* > 0: that live process's view */
	const struct att_map *maps;	/* its maps, for map_files (NULL: by path only) */
	size_t nmaps;
	const char *sysroot;		/* pid 0: prefixed to every path (NULL: none) */
	int as_owner;			/* pid 0: opened with the rights of ... */
	uid_t uid;			/* ... this user */
	gid_t gid;			/* ... and group, not ours */
};

/* Open module file @path (absolute) whose mapping starts at @start (0 when
 * unknown): a regular file, read with blocking reads.  @shown gets the path
 * opened as the view names it (a " (deleted)" the kernel appended dropped,
 * the sysroot prepended): where its debuglinks are looked for.  An fd or
 * -errno. */
int sym_view_module(const struct sym_view *v, const char *path, uint64_t start, char *shown,
		    size_t len);

/* Open another file of the view (separate debuginfo: a sym_dbg opener, @arg
 * the struct sym_view): with the live process's rights in its root, else on
 * this host with the owner's or ours (@path already carries any sysroot,
 * from @shown).  An fd or -errno. */
int sym_view_open(void *arg, const char *path, int flags);

#endif
