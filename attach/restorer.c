/* restorer.c -- finding the target's own rt_sigreturn trampoline (see restorer.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "mem.h"
#include "procfs.h"
#include "restorer.h"

/* glibc's __restore_rt sits some 80 KiB into libc's code: small chunks
 * read little past it. */
#define CHUNK		(64 * 1024)
#define SCAN_MAX	(64 * 1024 * 1024)

static int is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-musl", 7);
}

/* The code's first byte is an instruction prefix, among the commonest bytes
 * of x86 code: stepping memchr on its second byte is several times faster
 * than memmem over a megabyte of libc. */
static const unsigned char *find_code(const unsigned char *buf, size_t len)
{
	const unsigned char *p = buf + 1, *end = buf + len;

	if (len < arch_restorer_len)
		return NULL;
	while (p < end && (p = memchr(p, arch_restorer_code[1], (size_t)(end - p)))) {
		const unsigned char *c = p - 1;

		if ((size_t)(end - c) >= arch_restorer_len &&
		    !memcmp(c, arch_restorer_code, arch_restorer_len))
			return c;
		p++;
	}
	return NULL;
}

/* Search one executable mapping, chunk by chunk (overlapping by the code's
 * length so a match across two chunks is found). */
static int scan(pid_t pid, const struct att_map *m, unsigned char *buf, uint64_t *addr)
{
	for (uint64_t a = m->start; a < m->end; a += CHUNK - arch_restorer_len) {
		size_t len = m->end - a < CHUNK ? (size_t)(m->end - a) : CHUNK;
		const unsigned char *hit;

		if (att_mem_read(pid, a, buf, len))
			return 0;
		hit = find_code(buf, len);
		if (hit) {
			*addr = a + (uint64_t)(hit - buf);
			return 1;
		}
		if (len < CHUNK)
			break;
	}
	return 0;
}

int att_restorer_find(pid_t pid, const struct att_map *maps, size_t n, uint64_t *addr)
{
	struct att_map *own = NULL;
	uint64_t scanned = 0;
	unsigned char *buf;
	int found = 0;

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
	/* The vDSO where the kernel keeps it (arm64); libc, where sigaction's
	 * restorer lives (x86_64); then the rest of the file-backed code (a
	 * static binary carries its own libc). */
	for (int pass = arch_restorer_in_vdso ? 0 : 1; pass < 3 && !found; pass++)
		for (size_t i = 0; i < n && !found && scanned < SCAN_MAX; i++) {
			const struct att_map *m = &maps[i];

			if (m->perms[2] != 'x' || !m->path)
				continue;
			if (pass == 0 ? strcmp(m->path, "[vdso]") != 0 :
			    m->path[0] != '/' || is_libc(m->path) != (pass == 1))
				continue;
			scanned += m->end - m->start;
			found = scan(pid, m, buf, addr);
		}
	free(buf);
	att_maps_free(own, own ? n : 0);
	return found ? 0 : -ENOENT;
}

int att_restorer_check(pid_t pid, uint64_t addr)
{
	unsigned char code[64];
	int err;

	if (arch_restorer_len > sizeof(code))
		return -EINVAL;
	err = att_mem_read(pid, addr, code, arch_restorer_len);
	if (err)
		return err;
	return memcmp(code, arch_restorer_code, arch_restorer_len) ? -ENOENT : 0;
}
