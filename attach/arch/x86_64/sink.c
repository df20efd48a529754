/* sink.c -- x86_64: the code a text sink is (see attach/sink.h).
 *
 * `mov $NR,%eax; syscall; ret` -- b8 NR 00 00 00 0f 05 c3 -- with NR a
 * system call that only reads who the caller is.  glibc's getpid, getppid,
 * getuid... are exactly these bytes, ld.so has a getpid, musl inlines the
 * same.  Other system calls of that shape in libc (futex, close, umask,
 * clock_gettime) would act on the arguments jemalloc passes its write
 * callback, so the number is checked against this list.
 */
#include <string.h>
#include <sys/syscall.h>

#include "attach/arch.h"

static const long harmless[] = {
	SYS_getpid, SYS_gettid, SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
};

#define SINK_LEN	8
#define SYSCALL_END	7	/* the pc at its syscall stops: just past `syscall` */

const size_t arch_sink_len = SINK_LEN;

static int is_harmless(long nr)
{
	for (size_t i = 0; i < sizeof(harmless) / sizeof(*harmless); i++)
		if (harmless[i] == nr)
			return 1;
	return 0;
}

const unsigned char *arch_sink_match(const unsigned char *buf, size_t len)
{
	const unsigned char *p, *end = buf + len;

	if (len < SINK_LEN)
		return NULL;
	/* On its last byte: memchr is ten times faster than memmem over libc. */
	for (p = buf + SINK_LEN - 1; p < end && (p = memchr(p, 0xc3, (size_t)(end - p))); p++) {
		const unsigned char *c = p - (SINK_LEN - 1);

		if (c[0] == 0xb8 && !c[2] && !c[3] && !c[4] && c[5] == 0x0f && c[6] == 0x05 &&
		    is_harmless(c[1]))
			return c;
	}
	return NULL;
}

int arch_at_sink(const struct arch_gpregs *r, uint64_t sink)
{
	return r->r.rip == sink + SYSCALL_END && is_harmless((long)r->r.orig_rax);
}
