/* codescan.c -- finding code by its bytes (see codescan.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codescan.h"
#include "mem.h"
#include "procfs.h"

/* glibc's __restore_rt sits some 80 KiB into libc's code: small chunks
 * read little past it. */
#define CHUNK		(64 * 1024)
#define SCAN_MAX	(64 * 1024 * 1024)
#define CHECK_MAX	64

static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-musl", 7);
}

/* Search one executable mapping, chunk by chunk: 1 found, 0 not there,
 * -errno when it could not be read. */
static int scan(pid_t pid, const struct att_map *m, att_code_match_fn match, size_t overlap,
		unsigned char *buf, uint64_t *addr)
{
	for (uint64_t a = m->start; a < m->end; a += CHUNK - overlap) {
		size_t len = m->end - a < CHUNK ? (size_t)(m->end - a) : CHUNK;
		const unsigned char *hit;
		int err = att_mem_read(pid, a, buf, len);

		if (err)
			return err;
		hit = match(buf, len);
		if (hit) {
			*addr = a + (uint64_t)(hit - buf);
			return 1;
		}
		if (len < CHUNK)
			break;
	}
	return 0;
}

int att_code_search(pid_t pid, const struct att_map *maps, size_t n, att_code_match_fn match,
		    size_t overlap, int vdso_first, uint64_t *addr)
{
	struct att_map *own = NULL;
	uint64_t scanned = 0;
	unsigned char *buf;
	int found = 0, unread = 0;

	if (overlap >= CHUNK)
		return -EINVAL;
	if (!maps) {
		int err = att_proc_maps(pid, &own, &n);

		if (err)
			return err;
		maps = own;
	}
	buf = malloc(CHUNK);
	if (!buf) {
		att_maps_free(own, own ? n : 0);
		return -ENOMEM;
	}
	/* Pass 0 the vDSO, 1 libc, 2 the rest of the file-backed code. */
	for (int pass = vdso_first ? 0 : 1; pass < 3 && !found; pass++)
		for (size_t i = 0; i < n && !found && scanned < SCAN_MAX; i++) {
			const struct att_map *m = &maps[i];

			if (m->perms[2] != 'x' || !m->path)
				continue;
			if (pass == 0 ? strcmp(m->path, "[vdso]") != 0 :
			    m->path[0] != '/' || is_libc(m->path) != (pass == 1))
				continue;
			scanned += m->end - m->start;
			found = scan(pid, m, match, overlap, buf, addr);
			if (found < 0) {
				unread = 1;
				found = 0;
			}
		}
	free(buf);
	att_maps_free(own, own ? n : 0);
	/* A mapping that cannot be read is one the process no longer has (an
	 * exec since the maps were read): what it held is not known. */
	return found ? 0 : unread ? -ESTALE : -ENOENT;
}

int att_code_check(pid_t pid, uint64_t addr, size_t len, att_code_match_fn match)
{
	unsigned char code[CHECK_MAX];
	int err;

	if (len > sizeof(code))
		return -EINVAL;
	err = att_mem_read(pid, addr, code, len);
	if (err)
		return err;
	return match(code, len) == code ? 0 : -ENOENT;
}
