/* arch_regs.h -- x86_64 register set for the call engine. */
#ifndef ATTACH_ARCH_X86_64_REGS_H
#define ATTACH_ARCH_X86_64_REGS_H

#include <sys/user.h>

struct arch_gpregs {
	struct user_regs_struct r;
};

/* Nothing: a stopped thread's registers still hold its system call's arguments. */
struct arch_sc_note {
	int unused;
};

/* The System V ABI lets leaf code use 128 bytes below %rsp. */
#define ARCH_RED_ZONE 128
/* libunwind's x86_64 registers an unwind from sp and pc alone fills: up to
 * UNW_X86_64_RIP (16), its UNW_REG_IP. */
#define ARCH_UNW_NREGS 17
/* XSAVE area; AMX tile data needs about 11 KiB. */
#define ARCH_EXTREGS_MAX 16384
#define ARCH_ELF_MACHINE 62	/* EM_X86_64 */

#endif
