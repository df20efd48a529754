/* arch_regs.h -- arm64 register set for the call engine. */
#ifndef ATTACH_ARCH_AARCH64_REGS_H
#define ATTACH_ARCH_AARCH64_REGS_H

#include <stdint.h>
#include <asm/ptrace.h>

struct arch_gpregs {
	struct user_pt_regs r;	/* NT_PRSTATUS: x0-x30, sp, pc, pstate */
	/* NT_ARM_SYSTEM_CALL: the system call of a syscall-entry or -exit stop;
	 * -1 elsewhere (the kernel forgets it before any other stop). Read, never
	 * written: nothing here changes which call a thread makes. */
	int64_t syscallno;
	/* NT_ARM_TLS: TPIDR_EL0, the thread pointer (x86_64 keeps fs_base with its
	 * general registers); read, never written here (arch_extregs_set puts it back). */
	uint64_t tp;
};

/* The system call a thread sleeps in, read from /proc just before it is
 * stopped: an -EINTR result overwrites x0, its first argument, and the
 * kernel's copy (orig_x0) cannot be read through ptrace once it stopped. */
struct arch_sc_note {
	long nr;		/* -1: none */
	uint64_t args[6], sp, pc;
};

/* AAPCS64 has no red zone (signal delivery writes right below sp), but
 * leaving one costs nothing and spares hand-written code that is careless. */
#define ARCH_RED_ZONE 128
/* libunwind's aarch64 registers an unwind from sp and pc alone fills: up to
 * UNW_AARCH64_PC (32). */
#define ARCH_UNW_NREGS 33
/* Our own packing of FP/SIMD (528 bytes), TPIDR_EL0 and live SVE state
 * (vector length up to 2048 bits: under 9 KiB). */
#define ARCH_EXTREGS_MAX 16384
#define ARCH_ELF_MACHINE 183	/* EM_AARCH64 */

#endif
