/* aarch64.c -- an arm64 target: glibc's AAPCS64 ABI (TLS variant I, TPIDR_EL0), the generic
 * system call numbers, adrp-relative references (machine.h). */
#include <elf.h>
#include <string.h>

#include "attach/machine.h"
#include "attach/machine/a64.h"

/* Targets of `adrp xN, page; add xM, xN, #imm` (the two not necessarily adjacent) or, with
 * @got, the addresses `adrp xN, page; ldr xM, [xN, #imm]` loads from. */
static size_t adrp_refs(const unsigned char *code, size_t len, uint64_t pc, int got,
			uint64_t *out, size_t max)
{
	uint64_t page[32], v;
	uint32_t known = 0;	/* registers whose page an adrp set */
	size_t n = 0;

	for (size_t i = 0; i + 4 <= len && n < max; i += 4) {
		uint32_t w;
		unsigned rn;

		memcpy(&w, code + i, 4);
		rn = A64_RN(w);
		if (a64_adrp(w, pc + i, &v)) {
			page[A64_RD(w)] = v;
			known |= 1u << A64_RD(w);
		} else if (rn != 31 && known >> rn & 1 &&
			   (got ? a64_ldr_imm(w, &v) : a64_add_imm(w, &v))) {
			att_machine_ref_add(out, &n, max, page[rn] + v);
		}
	}
	return n;
}

static size_t addr_refs(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out,
			size_t max)
{
	return adrp_refs(code, len, pc, 0, out, max);
}

static size_t slot_refs(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out,
			size_t max)
{
	return adrp_refs(code, len, pc, 1, out, max);
}

const struct att_machine att_machine_aarch64 = {
	.em = EM_AARCH64,
	.name = "arm64",
	.lg_page_max = 16,
	.pthread_mutex_size = 48,
	/* sizeof(struct pthread), glibc 2.36's (Debian bookworm) on arm64 */
	.pthread_below_tp = 0x740,
	.tls_above = 1,
	.tcb_size = 16,
	.dtv_off = 0,		/* tcbhead_t { dtv, private } */
	.rel_tpoff = R_AARCH64_TLS_TPREL,
	.rel_dtpmod = 0,	/* 3.6's global-dynamic builds were read on x86_64 only */
	.rel_jump_slot = R_AARCH64_JUMP_SLOT,
	.rel_glob_dat = R_AARCH64_GLOB_DAT,
	.rel_irelative = R_AARCH64_IRELATIVE,
	/* asm-generic/unistd.h: no open */
	.sys = { .read = 63, .write = 64, .open = -1, .close = 57, .getpid = 172, .gettid = 178,
		 .openat = 56 },
	.addr_refs = addr_refs,
	.slot_refs = slot_refs,
};
