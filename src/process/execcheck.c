/* execcheck.c -- the process still runs the program we read (see execcheck.h). */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attach/mem.h"
#include "jemattach/session.h"
#include "process/execcheck.h"

/* The 16 bytes the kernel draws for each exec (AT_RANDOM, for the stack
 * protector and pointer guard; programs read them, never write them), mixed
 * with the vDSO's address: it changes at every exec, randomization or not.
 * 0 when they cannot be read or are all zeros: a program that zeroed them
 * (the target is not trusted) would otherwise keep its mark across an exec
 * of the same program without randomization. */
static uint64_t mark_of(pid_t pid, uint64_t rnd_at, uint64_t vdso)
{
	uint64_t rnd[2] = { 0, 0 };

	if (!rnd_at || att_mem_read(pid, rnd_at, rnd, sizeof(rnd)) || !(rnd[0] | rnd[1]))
		return 0;
	return (rnd[0] ^ rnd[1] ^ vdso) ?: 1;
}

uint64_t proc_exec_mark_at(pid_t pid, struct jma_exec_where *w)
{
	static const uint64_t types[3] = { AT_RANDOM, AT_SYSINFO_EHDR, AT_BASE };
	uint64_t at[3];

	att_proc_auxv(pid, types, at, 3);
	if (w) {
		w->rnd_at = at[0];
		w->vdso = at[1];
		w->ld_base = at[2];
	}
	return mark_of(pid, at[0], at[1]);
}

uint64_t jma_exec_mark(pid_t pid)
{
	return proc_exec_mark_at(pid, NULL);
}

int proc_exec_check(const struct att_map *maps, size_t n, const char *path, uint64_t fn)
{
	const struct att_map *m = att_maps_find(maps, n, fn);

	return m && m->perms[2] == 'x' && m->path && !strcmp(m->path, path) ? 0 : -ENOEXEC;
}

int proc_exec_same(pid_t pid, uint64_t mark, const struct jma_exec_where *w)
{
	/* The 16 bytes where they were: a new program has new ones (drawn at
	 * each exec), there or elsewhere, so auxv need not be read again. */
	uint64_t now = w && w->rnd_at ? mark_of(pid, w->rnd_at, w->vdso) : jma_exec_mark(pid);

	if (!now && kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	return mark && now == mark ? 0 : -ENOEXEC;
}

/* The code files in @maps and where, hashed (FNV-1a). */
static uint64_t code_hash(const struct att_map *maps, size_t n)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < n; i++) {
		if (maps[i].perms[2] != 'x' || !maps[i].path)
			continue;
		h = (h ^ maps[i].start) * 1099511628211ULL;
		for (const char *c = maps[i].path; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	}
	return h;
}

/* The same for what @pid maps now, 0 when unreadable. */
static uint64_t code_files(pid_t pid)
{
	struct att_map *maps;
	uint64_t h;
	size_t n;

	if (att_proc_maps(pid, &maps, &n))
		return 0;
	h = code_hash(maps, n);
	att_maps_free(maps, n);
	return h;
}

int proc_exec_loading(pid_t pid, uint64_t mark, const struct att_map *read, size_t nread,
		     int wait_ms)
{
	uint64_t before = code_files(pid);

	/* (Unreadable now: gone, which the caller tells apart, not loading.) */
	if (read && before && before != code_hash(read, nread))
		return 1;
	if (wait_ms > 0)
		usleep((useconds_t)wait_ms * 1000);
	return jma_exec_mark(pid) != mark || (wait_ms > 0 && code_files(pid) != before);
}
