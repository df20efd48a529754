/* backing.c -- what backs a process's memory, from /proc without touching a file system (see backing.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "attach/backing.h"
#include "attach/clock.h"
#include "attach/procfs.h"

#define SLOTS		4	/* processes (or threads: a tid's maps are its process's) */
#define MAX_AGE_NS	1000000000LL
#define MISS_AGE_NS	50000000LL
#define FUSECTL_DIR	"/sys/fs/fuse/connections"
#define FUSECTL_MAGIC	0x65735543

/* User-space and network or cluster file systems: a read of theirs waits for
 * a daemon or a server that need never answer.  FUSE's own types and every
 * "fuse.NAME" (sshfs, glusterfs, s3fs... as mountinfo shows them). */
static const char *const remote_types[] = {
	"fuse", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "afs",
	"glusterfs", "lustre", "gfs2", "ocfs2", "orangefs", "pvfs2", "beegfs", "coda", "ncpfs",
};

struct hazard {
	uint64_t start, end;
	char what[200];
};

struct snapshot {
	pid_t pid;
	int64_t at_ns;			/* when read; 0: empty slot */
	int64_t used_ns;		/* for replacement */
	struct att_map *maps;		/* every mapping, to tell a range outside them */
	size_t nmaps;
	struct hazard *hz;		/* the refused ones */
	size_t nhz;
};

static __thread struct snapshot slots[SLOTS];

int att_backing_remote(const char *t)
{
	if (!strncmp(t, "fuse.", 5))
		return 1;
	for (size_t i = 0; i < sizeof(remote_types) / sizeof(remote_types[0]); i++)
		if (!strcmp(t, remote_types[i]))
			return 1;
	return 0;
}

struct mount {
	uint64_t dev;		/* major << 32 | minor, as struct att_map's */
	char type[64];
};

/* Each mount's device and type from the mountinfo text @mi (malloc'd array).
 * A line: "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - TYPE SOURCE SUPER". */
static struct mount *mounts_of(char *mi, size_t *n)
{
	size_t cap = 0;
	struct mount *m = NULL;

	*n = 0;
	for (char *l = mi, *nl; l && *l; l = nl) {
		unsigned long maj, min;
		char *sep, *p;

		if ((nl = strchr(l, '\n')))
			*nl++ = '\0';
		p = strchr(l, ' ');
		p = p ? strchr(p + 1, ' ') : NULL;
		if (!p || !(sep = strstr(p, " - ")))
			continue;
		maj = strtoul(p + 1, &p, 10);
		if (*p != ':')
			continue;
		min = strtoul(p + 1, NULL, 10);
		if (*n == cap) {
			struct mount *more = realloc(m, (cap = cap ? 2 * cap : 64) * sizeof(*m));
			if (!more)
				break;
			m = more;
		}
		m[*n].dev = (uint64_t)maj << 32 | min;
		snprintf(m[*n].type, sizeof(m[*n].type), "%.*s", (int)strcspn(sep + 3, " "), sep + 3);
		(*n)++;
	}
	return m;
}

static const char *type_of(const struct mount *m, size_t n, uint64_t dev)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].dev == dev)
			return m[i].type;
	return NULL;
}

/* Is there a FUSE connection with device @dev?  fusectl names each by the
 * kernel's dev_t (MINORBITS 20).  -1 when fusectl is not mounted. */
static int fuse_conn(uint64_t dev)
{
	char path[96];
	struct statfs sf;

	if (statfs(FUSECTL_DIR, &sf) || sf.f_type != FUSECTL_MAGIC)
		return -1;
	snprintf(path, sizeof(path), FUSECTL_DIR "/%llu",
		 (unsigned long long)((dev >> 32) << 20 | (dev & 0xfffff)));
	return access(path, F_OK) == 0;
}

static void drop(struct snapshot *s)
{
	att_maps_free(s->maps, s->nmaps);
	free(s->hz);
	memset(s, 0, sizeof(*s));
}

static int refresh(struct snapshot *s, pid_t pid)
{
	char path[64], *mi = NULL;
	struct mount *mounts = NULL;
	size_t milen, nmounts = 0;
	uint64_t dev = 0;
	int err, fuse = 0;

	drop(s);
	s->pid = pid;
	s->at_ns = att_now_ns();
	if ((err = att_proc_maps(pid, &s->maps, &s->nmaps)))
		return err;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (!att_proc_read(path, &mi, &milen))
		mounts = mounts_of(mi, &nmounts);
	free(mi);
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct att_map *m = &s->maps[i];
		const char *type = type_of(mounts, nmounts, m->dev);
		struct hazard *h;

		if (!m->dev && !m->inode)
			continue;	/* anonymous memory */
		if (m->dev != dev || !i) {
			dev = m->dev;
			fuse = type ? att_backing_remote(type) : fuse_conn(dev) == 1;
		}
		if (!fuse)
			continue;
		if (!(h = realloc(s->hz, (s->nhz + 1) * sizeof(*h)))) {
			free(mounts);
			return -ENOMEM;
		}
		s->hz = h;
		h += s->nhz++;
		h->start = m->start;
		h->end = m->end;
		snprintf(h->what, sizeof(h->what), "0x%llx-0x%llx %.120s (%s)",
			 (unsigned long long)m->start, (unsigned long long)m->end,
			 m->path ? m->path : "", type ? type : "a FUSE connection");
	}
	free(mounts);
	return 0;
}

/* Is [addr, end) inside the snapshot's mappings, one after another? */
static int known(const struct snapshot *s, uint64_t addr, uint64_t end)
{
	const struct att_map *m = att_maps_find(s->maps, s->nmaps, addr);

	while (m && m->end < end) {
		const struct att_map *next = att_maps_find(s->maps, s->nmaps, m->end);
		if (!next)
			return 0;
		m = next;
	}
	return m != NULL;
}

static struct snapshot *slot_of(pid_t pid, int64_t now)
{
	struct snapshot *old = &slots[0];

	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].at_ns && slots[i].pid == pid)
			return &slots[i];
		if (slots[i].used_ns < old->used_ns)
			old = &slots[i];
	}
	old->at_ns = 0;		/* to be read */
	old->used_ns = now;
	return old;
}

int att_backing_check(pid_t pid, uint64_t addr, size_t len, char *why, size_t wlen)
{
	int64_t now = att_now_ns();
	struct snapshot *s = slot_of(pid, now);
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;

	s->used_ns = now;
	if (!s->at_ns || now - s->at_ns > MAX_AGE_NS ||
	    (now - s->at_ns > MISS_AGE_NS && !known(s, addr, end))) {
		if (refresh(s, pid)) {
			drop(s);
			return 0;
		}
	}
	for (size_t i = 0; i < s->nhz; i++) {
		if (s->hz[i].start >= end || s->hz[i].end <= addr)
			continue;
		snprintf(why, wlen, "%s", s->hz[i].what);
		return -EREMOTE;
	}
	return 0;
}

void att_backing_forget(void)
{
	for (int i = 0; i < SLOTS; i++)
		drop(&slots[i]);
}
