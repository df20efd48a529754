/* machine.h -- what a target's machine is, chosen at run time by the ELF e_machine of its code.
 *
 * An architecture enters jemattach in two ways, each by one rule:
 * - the host's, at build time, only where ptrace needs it: attach/arch.h's hooks, from
 *   attach/arch/$(ARCH)/ (registers, signal frames, the system call a stopped thread is in).
 *   Only the host's processes can be traced, and a core's threads are read as the host's
 *   registers, so nothing else could be chosen there.
 * - the target's (the code read, the core read, the code emulated), at run time, by its
 *   e_machine: this descriptor, every machine built in (attach/machine/<machine>.c).  The
 *   census reads by it; the emulator runs by it (src/emulate/arch.h adds unicorn's side).
 * Code above never tests EM_* or __x86_64__ itself: it asks the descriptor.
 */
#ifndef ATTACH_MACHINE_H
#define ATTACH_MACHINE_H

#include <stddef.h>
#include <stdint.h>

/* System calls by this machine's numbers (what jemalloc may pass to syscall()); -1: none. */
struct att_machine_sys {
	long read, write, open, openat, close, getpid, gettid;
};

struct att_machine {
	unsigned em;			/* EM_* */
	const char *name;		/* "x86_64", "arm64" */
	/* The largest base page its kernels may use: what its distributions build for
	 * (x86_64 4 KiB; arm64 64 KiB, as Debian's jemalloc is configured). */
	unsigned lg_page_max;
	/* glibc's ABI: sizeof(pthread_mutex_t); struct pthread (pthread_self) this far
	 * below the thread pointer (x86_64: at it, the TCB at fs_base). */
	uint64_t pthread_mutex_size;
	uint64_t pthread_below_tp;
	/* TLS ("ELF Handling For Thread-Local Storage"): variant I (arm64) places the
	 * blocks above the thread pointer, past a TCB of @tcb_size bytes; variant II
	 * (x86_64) below it.  tcbhead_t.dtv is at the thread pointer plus @dtv_off. */
	int tls_above;
	uint64_t tcb_size;
	uint64_t dtv_off;
	/* Relocation types: a GOT slot holding a TLS variable's offset from the thread
	 * pointer (initial-exec); a tls_index's module id (global-dynamic; 0: not read on
	 * this machine); a PLT slot; a data reference to a function; an ifunc resolved at
	 * load (static libc). */
	unsigned rel_tpoff, rel_dtpmod;
	unsigned rel_jump_slot, rel_glob_dat, rel_irelative;
	struct att_machine_sys sys;
	/* Addresses the code @code (@len bytes at @pc) computes pc-relatively (x86_64
	 * `lea disp(%rip), %reg`; arm64 `adrp xN, page; add xM, xN, #imm`), each once, in
	 * order, at most @max in @out. */
	size_t (*addr_refs)(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out,
			    size_t max);
	/* The GOT slots it loads from pc-relatively the same way (arm64 `adrp; ldr xM, [xN,
	 * #imm]`); NULL where none are decoded (x86_64). */
	size_t (*slot_refs)(const unsigned char *code, size_t len, uint64_t pc, uint64_t *out,
			    size_t max);
};

extern const struct att_machine att_machine_x86_64;
extern const struct att_machine att_machine_aarch64;

/* The descriptor of ELF machine @em, or NULL when none is built in. */
const struct att_machine *att_machine_of(unsigned em);

/* A variable at @off in an executable's TLS block (local-exec: PT_TLS of @memsz bytes
 * aligned to @align, at least 1): its offset from the thread pointer. */
int64_t att_machine_tls_exec(const struct att_machine *m, uint64_t memsz, uint64_t align,
			     uint64_t off);
/* @v read from a TP-offset GOT slot is one for @m: on its side of the thread pointer,
 * within 4 GiB. */
int att_machine_tpoff_ok(const struct att_machine *m, int64_t v);

/* Collects what a decoder finds: @t into @out (@n of @max) unless already there. */
void att_machine_ref_add(uint64_t *out, size_t *n, size_t max, uint64_t t);

#endif
