/* restorer.c -- finding the target's own rt_sigreturn trampoline (see restorer.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "mem.h"
#include "procfs.h"
#include "restorer.h"

#define CHUNK		(256 * 1024)
#define SCAN_MAX	(64 * 1024 * 1024)

static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-musl", 7);
}

/* Search one executable mapping, chunk by chunk (overlapping by the code's
 * length so a match across two chunks is found). */
static int scan(pid_t pid, const struct att_map *m, unsigned char *buf, uint64_t *addr)
{
	for (uint64_t a = m->start; a < m->end; a += CHUNK - arch_restorer_len) {
		size_t len = m->end - a < CHUNK ? (size_t)(m->end - a) : CHUNK;
		unsigned char *hit;

		if (att_mem_read(pid, a, buf, len))
			return 0;
		hit = memmem(buf, len, arch_restorer_code, arch_restorer_len);
		if (hit) {
			*addr = a + (uint64_t)(hit - buf);
			return 1;
		}
		if (len < CHUNK)
			break;
	}
	return 0;
}

int att_restorer_find(pid_t pid, uint64_t *addr)
{
	struct att_map *maps;
	size_t n;
	uint64_t scanned = 0;
	unsigned char *buf;
	int err = att_proc_maps(pid, &maps, &n), found = 0;

	if (err)
		return err;
	buf = malloc(CHUNK);
	if (!buf) {
		att_maps_free(maps, n);
		return -ENOMEM;
	}
	/* libc first: that is where sigaction's restorer lives; then the rest
	 * of the file-backed code (a static binary carries its own libc). */
	for (int pass = 0; pass < 2 && !found; pass++)
		for (size_t i = 0; i < n && !found && scanned < SCAN_MAX; i++) {
			const struct att_map *m = &maps[i];

			if (m->perms[2] != 'x' || !m->path || m->path[0] != '/' ||
			    is_libc(m->path) != (pass == 0))
				continue;
			scanned += m->end - m->start;
			found = scan(pid, m, buf, addr);
		}
	free(buf);
	att_maps_free(maps, n);
	return found ? 0 : -ENOENT;
}
