/* branch.c -- x86_64: direct branches read from code (see arch.h, arch_direct_branch). */
#include <string.h>

#include "attach/arch.h"

const size_t arch_insn_align = 1;

int arch_direct_branch(const unsigned char *code, size_t len, size_t i, uint64_t addr, uint64_t *target)
{
	size_t at = i + 1;
	int32_t rel;

	if (i + 5 > len)
		return 0;
	if (code[i] == 0x0f && i + 6 <= len && (code[i + 1] & 0xf0) == 0x80)
		at = i + 2;	/* jcc rel32 */
	else if (code[i] != 0xe8 && code[i] != 0xe9)
		return 0;	/* call rel32, jmp rel32 */
	memcpy(&rel, code + at, sizeof(rel));
	*target = addr + at + 4 + (uint64_t)(int64_t)rel;
	return 1;
}
