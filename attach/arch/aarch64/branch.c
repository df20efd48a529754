/* branch.c -- arm64: direct branches read from code (see arch.h, arch_direct_branch):
 * b and bl (imm26), b.cond, cbz and cbnz (imm19), tbz and tbnz (imm14), in words. */
#include <string.h>

#include "attach/arch.h"

const size_t arch_insn_align = 4;

/* @v's low @bits bits, sign-extended, times 4. */
static int64_t words(uint32_t v, unsigned bits)
{
	int64_t x = (int64_t)(v & ((1u << bits) - 1));

	return ((x ^ (1ll << (bits - 1))) - (1ll << (bits - 1))) * 4;
}

int arch_direct_branch(const unsigned char *code, size_t len, size_t i, uint64_t addr, uint64_t *target)
{
	uint32_t w;
	int64_t rel;

	if (i % 4 || i + 4 > len)
		return 0;
	memcpy(&w, code + i, 4);
	if ((w & 0x7c000000u) == 0x14000000u)
		rel = words(w, 26);		/* b, bl */
	else if ((w & 0xff000010u) == 0x54000000u || (w & 0x7e000000u) == 0x34000000u)
		rel = words(w >> 5, 19);	/* b.cond; cbz, cbnz */
	else if ((w & 0x7e000000u) == 0x36000000u)
		rel = words(w >> 5, 14);	/* tbz, tbnz */
	else
		return 0;
	*target = addr + i + (uint64_t)rel;
	return 1;
}
