/* prof.c -- heap-profiling control: availability, prof.active, dumps, reset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process/session.h"
#include "attach/targetfs.h"

/* Profiles of large processes run to tens of MB; more than this is not a
 * heap profile jemalloc wrote. */
#define DUMP_MAX (1024UL * 1024 * 1024)
#define DUMP_FILE "dump.heap"

static int get_bool(jma_session *s, const char *name, bool *out)
{
	struct jma_value v;
	int err = jma_get(s, name, &v);

	if (!err)
		*out = v.b;
	return err;
}

int jma_prof_check(jma_session *s)
{
	const struct jma_copy *c = jma_syms_jemalloc(s->syms);
	bool on = false;
	int err = get_bool(s, "config.prof", &on);

	/* ENOENT from the target: a jemalloc without that name, so without prof. */
	if (err && !(err == -ENOENT && s->kind == JMA_ERR_TARGET))
		return err;
	if (err || !on)
		return jma_fail(s, JMA_ERR_MISSING, -ENOTSUP, "jemalloc in %s was built without "
				"--enable-prof: heap profiling is not available; `prof sample SECONDS` samples "
				"without it (uprobes, root)", c->path);
	err = get_bool(s, "opt.prof", &on);
	if (err && !(err == -ENOENT && s->kind == JMA_ERR_TARGET))
		return err;
	if (err || !on)
		return jma_fail(s, JMA_ERR_MISSING, -ENOTSUP, "opt.prof is false; profiling can only "
				"be enabled at start: restart with %s=prof:true,prof_active:false, "
				"or use `prof sample SECONDS` (uprobes, no restart)",
				c->conf_env);
	return 0;
}

/* jemalloc 5.2.x: a thread that allocated while prof.active was false keeps a
 * sampling state that never samples again once it is true (upstream issues
 * 1605 and 2231, fixed in 5.3.0).  Resetting that per-thread state would need
 * each thread's own tsd, so say so instead of pretending. */
static void warn_stale_threads(jma_session *s)
{
	uint32_t v = jma_jemalloc_version(s);

	if (v >= JMA_JEVERSION(5, 2, 0) && v < JMA_JEVERSION(5, 3, 0))
		jma_logf(s, JMA_LOG_WARN, "jemalloc %u.%u.%u does not sample threads that allocated "
			 "while prof.active was false (upstream issues 1605, 2231; fixed in 5.3.0): "
			 "their sites will be missing; start with prof_active:true to profile them",
			 v >> 16, (v >> 8) & 0xff, v & 0xff);
}

int jma_prof_set_active(jma_session *s, bool on, bool *was)
{
	struct jma_value in = { .type = JMA_T_BOOL, .b = on }, old;
	int here, err = jma_auto_begin(s, &here);

	if (!err)
		err = jma_prof_check(s);
	if (!err)
		err = jma_set(s, "prof.active", &in, &old);
	if (!err && was)
		*was = old.b;
	if (!err && on)
		warn_stale_threads(s);
	return jma_auto_end(s, here, err);
}

/* The directory part of opt.prof_prefix ("/var/tmp/jeprof" -> "/var/tmp"). */
static void prefix_dir(jma_session *s, char *out, size_t len)
{
	struct jma_value v;
	char *slash;

	out[0] = '\0';
	if (jma_get(s, "opt.prof_prefix", &v) || !v.str)
		return;
	slash = strrchr(v.str, '/');
	if (v.str[0] == '/' && slash) {
		*slash = '\0';
		snprintf(out, len, "%s", v.str[0] ? v.str : "/");
	}
	jma_value_clear(&v);
}

/* Remove what a jemattach killed during a dump left beside @dir (the private
 * directory this dump used); after the thread is given back, as the sweep
 * reads the whole parent directory. */
static void sweep(jma_session *s, const char *dir)
{
	char parent[sizeof(((struct jma_tfs_dir *)0)->path)];
	char *slash;
	int n;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	slash[slash == parent] = '\0';
	n = jma_tfs_sweep(s->pid, parent, DUMP_FILE);
	if (n > 0)
		jma_logf(s, JMA_LOG_INFO, "removed %d private dump director%s in %s that a killed "
			 "jemattach had left", n, n == 1 ? "y" : "ies", parent);
}

/* The dump goes into a directory of our own that the target creates (0700,
 * unguessable name, see targetfs.h): nobody else can plant a FIFO or a symlink
 * at the name the target opens, and we read back only the regular file it wrote. */
int jma_prof_dump(jma_session *s, char **buf, size_t *len)
{
	struct jma_value path = { .type = JMA_T_STRING };
	struct jma_tfs_dir d = { .fd = -1, .pfd = -1 };
	char pref[512], file[640];
	int here, err, rm;

	*buf = NULL;
	*len = 0;
	err = jma_auto_begin(s, &here);
	if (err)
		return err;
	err = jma_prof_check(s);
	if (err)
		goto out;
	if (s->be->ops->take_file) {
		/* The backend keeps what jemalloc writes: no file in the target. */
		path.str = "jemattach.captured.heap";
		err = jma_set(s, "prof.dump", &path, NULL);
		if (!err && (err = jma_take_file(s, buf, len)))
			err = jma_fail(s, JMA_ERR_TARGET, err, "prof.dump wrote no file");
		goto out;
	}
	prefix_dir(s, pref, sizeof(pref));
	err = jma_tfs_private(s->pid, pref[0] ? pref : NULL, &d);
	if (err) {
		err = jma_fail(s, JMA_ERR_TARGET, err, "process %d has no directory it can write "
			       "the dump to (tried %s%s/tmp, /var/tmp, /dev/shm: read-only, not "
			       "writable for its user, or writable by another user)", (int)s->pid, pref, pref[0] ? ", " : "");
		goto out;
	}
	snprintf(file, sizeof(file), "%s/" DUMP_FILE, d.path);
	path.str = file;
	err = jma_set(s, "prof.dump", &path, NULL);
	if (err)
		goto remove;
	jma_logf(s, JMA_LOG_DEBUG, "prof.dump wrote %s (in process %d's own filesystem view; a "
		 "private directory in %s)", file, (int)s->pid, pref[0] ?
		 "the directory of opt.prof_prefix" : "the first of /tmp, /var/tmp, /dev/shm");
	/* The file is complete: prof.dump returned after closing it. */
	err = jma_tfs_private_read(&d, DUMP_FILE, DUMP_MAX, buf, len);
	if (err == -EPERM)
		err = jma_fail(s, JMA_ERR_UNSAFE, err, "the dump %s in process %d's view was "
			       "replaced: not a regular file of uid %u with one link on its "
			       "directory's mount; not read", file, (int)s->pid, (unsigned)d.uid);
	else if (err)
		err = jma_fail(s, JMA_ERR_TARGET, err, "reading the dump %s in process %d's root: %s",
			       file, (int)s->pid, strerror(-err));
	else
		jma_logf(s, JMA_LOG_DEBUG, "read %zu bytes of it back through /proc/%d/root with "
			 "uid %u's rights", *len, (int)s->pid, (unsigned)d.uid);
remove:
	rm = jma_tfs_private_remove(&d, DUMP_FILE);
	if (!rm)
		jma_logf(s, JMA_LOG_DEBUG, "removed %s and the dump", d.path);
	else
		jma_logf(s, JMA_LOG_WARN, "could not remove %s in process %d's root: %s", d.path,
			 (int)s->pid, strerror(-rm));
out:
	err = jma_auto_end(s, here, err);
	if (here && d.path[0])
		sweep(s, d.path);
	return err;
}

int jma_prof_reset(jma_session *s, const size_t *lg_sample)
{
	int here, err = jma_auto_begin(s, &here);

	if (!err)
		err = jma_prof_check(s);
	if (!err)
		err = jma_mallctl(s, "prof.reset", NULL, NULL, lg_sample,
				  lg_sample ? sizeof(*lg_sample) : 0);
	return jma_auto_end(s, here, err);
}
