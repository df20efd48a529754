/* arch.h -- what the emulator needs of the emulated code's architecture.
 *
 * The image, the stubs, the services and the GOT rewriting are the same for
 * every machine; what differs is the machine's descriptor (attach/machine.h:
 * the relocation types of GOT slots, the system call numbers jemalloc may pass
 * to syscall(), where glibc's struct pthread is) and, in this table, unicorn's
 * side of it: the CPU, the calling convention (argument, return, stack and
 * thread-pointer registers; where a call's return address lives), the stub
 * instruction.  It is chosen by the ELF machine of the jemalloc module emulated
 * (the data), not by the host's: src/emulate/arch/<machine>.c each extend one
 * descriptor.
 */
#ifndef JMA_EMULATE_ARCH_H
#define JMA_EMULATE_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "attach/machine.h"
#include "emulate/uc.h"

#define EMU_ARCH_NARGS	6
#define EMU_STUB_MAX	4	/* bytes of one stub instruction, at most */

struct emu_image;

struct emu_arch {
	const struct att_machine *m;	/* the emulated code's machine */
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
	/* Enter a function returning to @ret with its stack just under @top
	 * (16-byte aligned): the stack pointer and return address set up. */
	int (*enter)(struct emu_image *im, uint64_t top, uint64_t ret);
	/* Where the function a stub stands for was called from (its return address). */
	uint64_t (*caller)(struct emu_image *im);
};

extern const struct emu_arch emu_arch_x86_64;
extern const struct emu_arch emu_arch_aarch64;

/* The table for ELF machine @machine (att_machine_of's, extended), or NULL when
 * none is built in. */
const struct emu_arch *emu_arch_of(unsigned machine);

#endif
