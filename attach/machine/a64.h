/* a64.h -- arm64 instructions decoded where more than one reader needs them: the register
 * fields, and the forms that compute or load an address relative to the pc (adrp, then
 * add or ldr on its page).  Read by attach/machine/aarch64.c (references in any target's
 * code, at run time) and attach/arch/aarch64/tpcode.c (the host's thread-pointer pairs). */
#ifndef ATTACH_MACHINE_A64_H
#define ATTACH_MACHINE_A64_H

#include <stdint.h>

#define A64_RD(w)	((w) & 31)
#define A64_RN(w)	((w) >> 5 & 31)
#define A64_RM(w)	((w) >> 16 & 31)
#define A64_RT2(w)	((w) >> 10 & 31)

/* adrp xd, label: 1 and the 4 KiB page it sets xd to (a 21-bit signed count of pages from
 * @pc's), else 0. */
static inline int a64_adrp(uint32_t w, uint64_t pc, uint64_t *page)
{
	int64_t imm;

	if ((w & 0x9f000000u) != 0x90000000u)
		return 0;
	imm = (int64_t)((w >> 5 & 0x7ffff) << 2 | (w >> 29 & 3));
	imm = (imm ^ 0x100000) - 0x100000;
	*page = (pc & ~0xfffull) + (uint64_t)(imm * 4096);
	return 1;
}

/* add xd, xn|sp, #imm{, lsl 12}: 1 and the immediate, else 0. */
static inline int a64_add_imm(uint32_t w, uint64_t *imm)
{
	if ((w & 0xff800000u) != 0x91000000u)
		return 0;
	*imm = (uint64_t)(w >> 10 & 0xfff) << (w >> 22 & 1 ? 12 : 0);
	return 1;
}

/* ldr xt, [xn|sp, #imm] (8 bytes, unsigned offset): 1 and the offset in bytes, else 0. */
static inline int a64_ldr_imm(uint32_t w, uint64_t *off)
{
	if ((w & 0xffc00000u) != 0xf9400000u)
		return 0;
	*off = (uint64_t)(w >> 10 & 0xfff) * 8;
	return 1;
}

#endif
