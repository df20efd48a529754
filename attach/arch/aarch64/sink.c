/* sink.c -- arm64: the code a text sink is (see attach/sink.h).
 *
 * `nop` or `bti c`; `mov x8, #NR; svc #0; ret` with NR a system call that only reads who the
 * caller is: glibc's getpid, getppid, getuid... (Debian bookworm: d503201f d2801588 d4000001
 * d65f03c0 for getpid).  The first word is where jemalloc's blr lands: a landing pad (`bti c`)
 * or, in a library built without BTI (whose pages are not guarded), the `nop` that stands in
 * its place; code without either is not taken, as entering a guarded page elsewhere faults.
 */
#include <string.h>
#include <sys/syscall.h>

#include "attach/arch.h"

#define SINK_LEN	16
#define SYSCALL_END	12	/* the pc at its syscall stops: just past `svc` */
#define W_NOP		0xd503201fu
#define W_BTI_C		0xd503245fu
#define W_MOV_X8	0xd2800008u	/* movz x8, #imm16 (imm16 at bit 5) */
#define W_SVC0		0xd4000001u
#define W_RET		0xd65f03c0u

const size_t arch_sink_len = SINK_LEN;

static int is_harmless(long nr)
{
	return nr == SYS_getpid || nr == SYS_gettid || nr == SYS_getppid || nr == SYS_getuid ||
	       nr == SYS_geteuid || nr == SYS_getgid || nr == SYS_getegid;
}

const unsigned char *arch_sink_match(const unsigned char *buf, size_t len)
{
	uint32_t w[4];

	/* Instructions are 4-byte aligned in the file as in memory. */
	for (size_t at = 0; at + SINK_LEN <= len; at += 4) {
		memcpy(w, buf + at, sizeof(w));
		if (w[3] == W_RET && w[2] == W_SVC0 && (w[1] & ~(0xffffu << 5)) == W_MOV_X8 &&
		    (w[0] == W_NOP || w[0] == W_BTI_C) && is_harmless((long)((w[1] >> 5) & 0xffff)))
			return buf + at;
	}
	return NULL;
}

int arch_at_sink(const struct arch_gpregs *r, uint64_t sink)
{
	return r->r.pc == sink + SYSCALL_END && is_harmless((long)r->syscallno);
}
