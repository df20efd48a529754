/* tpcode.c -- x86_64: a pair of thread-pointer-relative loads read from code (see arch.h,
 * arch_tp_pair), and where the kernel keeps a task's thread pointer.
 *
 * jemalloc 5.3's inlined malloc fast path, for example:
 *
 *	mov  GOT(%rip),%rcx          (initial-exec TLS; a static copy: mov $imm,%rcx)
 *	mov  %fs:D(%rcx),%rdx        thread_allocated
 *	...
 *	cmp  %fs:D+8(%rcx),%rdx      the next event's threshold
 */
#include <errno.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/mem.h"

const char *const arch_tp_btf_path[] = { "task_struct", "thread", "fsbase", NULL };

/* A 64-bit fs-relative operand at @c: `64 REX.W op ModRM disp32` with a
 * base register (mod 10) or absolute (mod 00, SIB 0x25).  Its length, the
 * base register (-1 absolute) and disp; 0 when @c is not one. */
static size_t fs_operand(const unsigned char *c, size_t n, unsigned char op, int *base,
			 int32_t *disp)
{
	unsigned mod, rm;

	if (n < 8 || c[0] != 0x64 || (c[1] & 0xf8) != 0x48 || c[2] != op)
		return 0;
	mod = c[3] >> 6;
	rm = c[3] & 7;
	if (mod == 2 && rm != 4) {
		*base = (int)(rm | (c[1] & 1) << 3);
		memcpy(disp, c + 4, 4);
		return 8;
	}
	if (mod == 0 && rm == 4 && n >= 9 && c[4] == 0x25) {
		*base = -1;
		memcpy(disp, c + 5, 4);
		return 9;
	}
	return 0;
}

/* The thread pointer offset register @reg was loaded with before @end: the
 * last `mov GOT(%rip),%reg` (the slot read from the target) or
 * `mov $imm32,%reg`.  0, or -ENOENT. */
static int base_value(pid_t pid, uint64_t addr, const unsigned char *c, size_t end, int reg,
		      int64_t *v)
{
	for (size_t i = end; i-- > 0;) {
		int32_t x;

		if (i + 7 > end || (c[i] & 0xf8) != 0x48)
			continue;
		if (c[i + 1] == 0x8b && (c[i + 2] & 0xc7) == 0x05 &&
		    (int)((c[i + 2] >> 3 & 7) | (c[i] & 4) << 1) == reg) {
			memcpy(&x, c + i + 3, 4);
			return att_mem_read(pid, addr + i + 7 + (uint64_t)(int64_t)x, v, sizeof(*v)) ? -ENOENT : 0;
		}
		if (c[i + 1] == 0xc7 && (c[i + 2] & 0xf8) == 0xc0 &&
		    (int)((c[i + 2] & 7) | (c[i] & 1) << 3) == reg) {
			memcpy(&x, c + i + 3, 4);
			*v = x;
			return 0;
		}
	}
	return -ENOENT;
}

int arch_tp_pair(pid_t pid, uint64_t addr, const unsigned char *c, size_t len, int64_t *off)
{
	for (size_t i = 0; i < len; i++) {
		int base, base2;
		int32_t disp, disp2;
		size_t n = fs_operand(c + i, len - i, 0x8b, &base, &disp);
		int64_t tp = 0;

		if (!n)
			continue;
		/* The compare of the next 8 bytes, with the same base. */
		for (size_t j = i + n; j < len; j++) {
			if ((!fs_operand(c + j, len - j, 0x3b, &base2, &disp2) &&
			     !fs_operand(c + j, len - j, 0x39, &base2, &disp2)) ||
			    base2 != base || disp2 != disp + 8)
				continue;
			if (base >= 0 && base_value(pid, addr, c, i, base, &tp))
				return -ENOENT;
			*off = tp + disp;
			return *off ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}
