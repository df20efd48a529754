/* x86_64.c -- an x86_64 target: glibc's System V ABI (TLS variant II, fs_base), its system
 * call numbers, rip-relative references (machine.h). */
#include <elf.h>
#include <string.h>

#include "attach/machine.h"

/* Targets of `lea disp32(%rip), %reg` (REX.W 8d, mod 00 r/m 101). */
static size_t addr_refs(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out,
			size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i + 7 <= len && n < max; i++) {
		int32_t disp;

		if ((code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8d ||
		    (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, 4);
		att_machine_ref_add(out, &n, max, pc + i + 7 + (uint64_t)(int64_t)disp);
	}
	return n;
}

const struct att_machine att_machine_x86_64 = {
	.em = EM_X86_64,
	.name = "x86_64",
	.lg_page_max = 12,
	.pthread_mutex_size = 40,
	.pthread_below_tp = 0,	/* pthread_t is the thread pointer: the TCB at fs_base */
	.tls_above = 0,
	.tcb_size = 0,
	.dtv_off = 8,		/* tcbhead_t { tcb, dtv, ... } */
	.rel_tpoff = R_X86_64_TPOFF64,
	.rel_dtpmod = R_X86_64_DTPMOD64,
	.rel_jump_slot = R_X86_64_JUMP_SLOT,
	.rel_glob_dat = R_X86_64_GLOB_DAT,
	.rel_irelative = R_X86_64_IRELATIVE,
	/* asm/unistd_64.h */
	.sys = { .read = 0, .write = 1, .open = 2, .close = 3, .getpid = 39, .gettid = 186,
		 .openat = 257 },
	.addr_refs = addr_refs,
	.slot_refs = NULL,	/* mov disp(%rip) from a GOT slot: not decoded */
};
