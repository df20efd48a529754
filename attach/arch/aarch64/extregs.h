/* extregs.h -- how the arm64 hooks pack a thread's FP/SIMD, TLS and SVE state
 * into struct arch_extregs (regs.c fills it, sigframe.c builds frames from it). */
#ifndef ATTACH_ARCH_AARCH64_EXTREGS_H
#define ATTACH_ARCH_AARCH64_EXTREGS_H

#include <stdint.h>
#include <asm/ptrace.h>

struct a64_ext {
	struct user_fpsimd_state fp;	/* NT_PRFPREG: v0-v31, fpsr, fpcr */
	uint64_t tpidr;			/* NT_ARM_TLS: the thread pointer */
	/* Bytes of NT_ARM_SVE that follow when the thread has live SVE state
	 * (a thread stopped in a system call has none: the kernel drops it at
	 * every system call, and FP/SIMD alone is its state); else 0. */
	uint32_t sve_len;
	uint32_t pad;
};

/* struct user_sve_header, and the SVE register block that follows it both in
 * NT_ARM_SVE (at offset 16) and in a signal frame's sve_context (at 16):
 * z0-z31, p0-p15, ffr, for vq = vector length / 16 (asm/sve_context.h). */
#define A64_SVE_HDR		16
#define A64_SVE_REGS_SIZE(vq)	((vq) * (32u * 16u + 16u * 2u + 2u))
#define A64_SVE_FLAG_LIVE	1	/* SVE_PT_REGS_SVE */

#endif
