/* dump.c -- a file jemalloc writes in the live target, read back safely (dump.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "process/dump.h"
#include "attach/targetfs.h"

void proc_dump_sweep(jma_session *s, const char *used, const char *name)
{
	char parent[sizeof(((struct jma_tfs_dir *)0)->path)];
	char *slash;
	int n;

	snprintf(parent, sizeof(parent), "%s", used);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	slash[slash == parent] = '\0';
	n = att_tfs_sweep(s->pid, parent, name);
	if (n > 0)
		sess_logf(s, JMA_LOG_INFO, "removed %d private dump director%s in %s that a killed "
			 "jemattach had left", n, n == 1 ? "y" : "ies", parent);
}

int proc_dump_private(jma_session *s, const char *dir, const char *name, size_t max,
		     jma_dump_fn write, void *arg, char **buf, size_t *len, char *used,
		     size_t usedlen)
{
	struct jma_tfs_dir d = { .fd = -1, .pfd = -1 };
	const char *pref = dir ? dir : "";
	char file[640];
	int err, rm;

	used[0] = '\0';
	err = att_tfs_private(s->pid, dir, &d);
	if (err)
		return sess_fail(s, JMA_ERR_TARGET, err, "process %d has no directory it can write "
				"the dump to (tried %s%s/tmp, /var/tmp, /dev/shm: read-only, not "
				"writable for its user, or writable by another user)", (int)s->pid, pref,
				pref[0] ? ", " : "");
	snprintf(used, usedlen, "%s", d.path);
	snprintf(file, sizeof(file), "%s/%s", d.path, name);
	err = write(s, file, arg);
	if (err)
		goto remove;
	sess_logf(s, JMA_LOG_DEBUG, "prof.dump wrote %s (in process %d's own filesystem view; a "
		 "private directory in %s)", file, (int)s->pid, pref[0] ?
		 "the directory of opt.prof_prefix" : "the first of /tmp, /var/tmp, /dev/shm");
	/* The file is complete: prof.dump returned after closing it. */
	err = att_tfs_private_read(&d, name, max, buf, len);
	if (err == -EPERM)
		err = sess_fail(s, JMA_ERR_UNSAFE, err, "the dump %s in process %d's view was "
			       "replaced: not a regular file of uid %u with one link on its "
			       "directory's mount; not read", file, (int)s->pid, (unsigned)d.uid);
	else if (err)
		err = sess_fail(s, JMA_ERR_TARGET, err, "reading the dump %s in process %d's root: %s",
			       file, (int)s->pid, strerror(-err));
	else
		sess_logf(s, JMA_LOG_DEBUG, "read %zu bytes of it back through /proc/%d/root with "
			 "uid %u's rights", *len, (int)s->pid, (unsigned)d.uid);
remove:
	rm = att_tfs_private_remove(&d, name);
	if (!rm)
		sess_logf(s, JMA_LOG_DEBUG, "removed %s and the dump", d.path);
	else
		sess_logf(s, JMA_LOG_WARN, "could not remove %s in process %d's root: %s", d.path,
			 (int)s->pid, strerror(-rm));
	return err;
}
