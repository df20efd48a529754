/* collect.c -- which probes go where: each site of the target's jemalloc (sites.c)
 * into the probe groups (probes.c) by what it is -- an allocation entry (and its
 * return), a free, a free's slow path; an allocation entry the program hardly
 * calls goes with the slow paths, in place all the time -- through the file the
 * target maps it from.  sampler.c collects them all at the start; window.c
 * again for a burst's sites.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <jemattach/sampler.h>

#include "attach/procfs.h"
#include "core/session.h"
#include "sampler/events.h"
#include "sampler/run.h"

/* Where the probe for @addr goes: the file the target maps it from (its
 * map_files entry, else its path in the target's root) into @path, and the
 * offset in that file into *@off; -ENOENT when no executable mapping of a
 * file holds it. */
static int probe_place(struct run *u, uint64_t addr, char *path, size_t len, uint64_t *off)
{
	const struct att_map *m = att_maps_find(u->maps, u->nmaps, addr);
	int fd;

	if (!m || !m->path || m->perms[2] != 'x')
		return -ENOENT;
	snprintf(path, len, "/proc/%d/map_files/%llx-%llx", (int)u->s->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
	} else if (snprintf(path, len, "/proc/%d/root%s", (int)u->s->pid, m->path) >= (int)len) {
		/* Following map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE:
		 * with CAP_BPF and CAP_PERFMON alone, the file by its path in the
		 * target's root. */
		return -ENAMETOOLONG;
	}
	*off = addr - m->start + m->offset;
	return 0;
}

int smp_collect(struct run *u, uint64_t only, uint64_t exact, int base)
{
	char path[4200];
	uint64_t off;
	int err = 0;

	for (size_t i = 0; i < u->nsites && i < SMP_SITES_MAX && !err; i++) {
		const struct smp_site *st = &u->sites[i];
		int track = !u->o->alloc_only;
		uint64_t cookie = st->cookie | SMP_COOKIE(0, 0, 0, 0, track, i);
		int in = only >> i & 1, ex = exact >> i & 1 && !st->frees;

		if (!in && !ex && !base)
			continue;
		if (probe_place(u, st->addr, path, sizeof(path), &off)) {
			sess_logf(u->s, JMA_LOG_INFO, "%s at 0x%llx: not in a mapped file; not probed",
				 st->name, (unsigned long long)st->addr);
			continue;
		}
		if (ex || (in && !st->frees)) {
			/* An allocation entry: in bursts, or probed all the time. */
			struct smp_probes *g = &u->grp[ex ? SMP_G_BASE : SMP_G_CALLS];

			err = smp_probes_add(g, ex ? SMP_P_EXACT : SMP_P_ENTRY, path, off, st->addr, cookie);
			if (!err && track && !g->session)
				err = smp_probes_add(g, SMP_P_RETURN, path, off, st->addr, cookie);
		} else if (in && !u->o->alloc_only) {
			err = smp_probes_add(&u->grp[SMP_G_FREES], SMP_P_FREE, path, off, st->addr, cookie);
		}
		/* The free slow paths: every large block's free; jemalloc's counter
		 * (for --alloc-only too). */
		if (err || !base || !st->frees || !st->slow || st->skip_slow ||
		    probe_place(u, st->slow, path, sizeof(path), &off))
			continue;
		err = smp_probes_add(&u->grp[SMP_G_BASE], SMP_P_FREE_SLOW, path, off, st->slow, cookie);
	}
	return err;
}
