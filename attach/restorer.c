/* restorer.c -- finding the target's own rt_sigreturn trampoline (see restorer.h). */
#include <string.h>

#include "arch.h"
#include "codescan.h"
#include "restorer.h"

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

int att_restorer_find(pid_t pid, const struct att_map *maps, size_t n, uint64_t *addr)
{
	return att_code_search(pid, maps, n, find_code, arch_restorer_len, arch_restorer_in_vdso, addr);
}

int att_restorer_check(pid_t pid, uint64_t addr)
{
	return att_code_check(pid, addr, arch_restorer_len, find_code);
}
