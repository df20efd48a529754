/* arch.h -- what the emulator needs of the emulated code's architecture.
 *
 * The image, the stubs, the services and the GOT rewriting are the same for
 * every machine; this table holds what differs: unicorn's CPU, the calling
 * convention (argument, return, stack and thread-pointer registers; where a
 * call's return address lives), the stub instruction, the relocation types of
 * GOT slots and the system call numbers jemalloc may pass to syscall().  It is
 * chosen by the ELF machine of the jemalloc module emulated (the data), not by
 * the host's: src/emulate/arch/<machine>.c each define one.
 */
#ifndef JMA_EMULATE_ARCH_H
#define JMA_EMULATE_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "emulate/uc.h"

#define EMU_ARCH_NARGS	6
#define EMU_STUB_MAX	4	/* bytes of one stub instruction, at most */

struct emu_image;

/* The system calls the services answer, by this machine's numbers; -1: none. */
struct emu_arch_sys {
	long read, write, open, openat, close, getpid, gettid;
};

struct emu_arch {
	unsigned machine;		/* EM_* of the emulated code */
	const char *name;
	uc_arch uc_arch;
	uc_mode uc_mode;
	int uc_cpu;			/* UC_CPU_* model, -1: unicorn's default */
	int args[EMU_ARCH_NARGS];	/* integer argument registers, in ABI order */
	int sp, pc, ret;		/* stack pointer, pc, integer return value */
	int tp;				/* the thread pointer: jemalloc's TLS */
	int fpret;			/* a double's argument and result (read as 16 bytes) */
	const int *zero;		/* registers cleared before each call */
	size_t nzero;
	/* One stub: an instruction that returns to the caller, @stub_len bytes. */
	unsigned char stub[EMU_STUB_MAX];
	unsigned stub_len;
	/* Relocations of GOT slots: a PLT slot, a data reference to a function,
	 * an ifunc resolved at load (static libc). */
	unsigned rel_jump_slot, rel_glob_dat, rel_irelative;
	struct emu_arch_sys sys;
	/* glibc's pthread_t (its struct pthread) of a thread whose pointer is @tp. */
	uint64_t (*pthread_self)(uint64_t tp);
	/* Enter a function returning to @ret with its stack just under @top
	 * (16-byte aligned): the stack pointer and return address set up. */
	int (*enter)(struct emu_image *im, uint64_t top, uint64_t ret);
	/* Where the function a stub stands for was called from (its return address). */
	uint64_t (*caller)(struct emu_image *im);
};

extern const struct emu_arch emu_arch_x86_64;
extern const struct emu_arch emu_arch_aarch64;

/* The table for ELF machine @machine, or NULL when none is built in. */
const struct emu_arch *emu_arch_of(unsigned machine);

#endif
