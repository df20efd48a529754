/* arch.h -- the hooks each architecture implements for the call engine.
 *
 * Generic code in attach/ never tests the architecture; it calls these.  The
 * Makefile puts attach/arch/$(ARCH) on the include path and compiles its .c files.
 */
#ifndef ATTACH_ARCH_H
#define ATTACH_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch_regs.h"	/* struct arch_gpregs, struct arch_sc_note, ARCH_RED_ZONE */

/* Saved FP/vector state; opaque to generic code. */
struct arch_extregs {
	size_t len;
	unsigned char buf[ARCH_EXTREGS_MAX];
};

int arch_gpregs_get(pid_t tid, struct arch_gpregs *r);
int arch_gpregs_set(pid_t tid, const struct arch_gpregs *r);
int arch_extregs_get(pid_t tid, struct arch_extregs *x);
int arch_extregs_set(pid_t tid, const struct arch_extregs *x);
/* The thread pointer (x86_64 fs_base, arm64 TPIDR_EL0): jemalloc's TLS. */
int arch_tls_base(pid_t tid, uint64_t *tp);

/* @r from a core's NT_PRSTATUS pr_reg (@len bytes, the kernel's register
 * set: x86_64 user_regs_struct, with fs_base; arm64 user_pt_regs, whose
 * thread pointer is in another note, 0 here): 0, or -EINVAL for another size. */
int arch_gpregs_from_core(struct arch_gpregs *r, const void *pr_reg, size_t len);
/* A core's "LINUX" note of type @type that follows a thread's NT_PRSTATUS (kernel
 * and gcore cores write each thread's other register sets after it): read
 * into @r what arch_gpregs keeps of it (arm64: NT_ARM_TLS, the thread
 * pointer; x86_64 none: fs_base is in pr_reg). */
void arch_gpregs_core_note(struct arch_gpregs *r, unsigned type, const void *desc, size_t len);

/* What an unwind from a sleeping thread's sp and pc alone (/proc's view, no
 * ptrace stop) may assume of its other registers, set in @regs[0..n) in
 * libunwind's numbering: x86_64 nothing (its CFI finds frames from the stack
 * pointer); arm64 the frame pointer x29 = sp, where glibc's system call
 * wrappers leave it (stp x29, x30, [sp, #-N]!; mov x29, sp), for CFI that
 * finds the frame from x29, and the pc where libunwind's aarch64 reads it
 * (UNW_AARCH64_PC: its UNW_REG_IP is x30, the link register).  A wrong
 * guess only ends the walk.  @n is ARCH_UNW_NREGS (arch_regs.h). */
void arch_unwind_from_sp(uint64_t sp, uint64_t pc, uint64_t *regs, size_t n);

uint64_t arch_pc(const struct arch_gpregs *r);
uint64_t arch_sp(const struct arch_gpregs *r);
/* The thread pointer read with the general registers (x86_64: fs_base;
 * arm64: TPIDR_EL0, from NT_ARM_TLS): where its TLS is. */
uint64_t arch_regs_tls_base(const struct arch_gpregs *r);
uint64_t arch_retval(const struct arch_gpregs *r);
/* Integer argument registers, in ABI order. */
#define ARCH_NARGS 6
void arch_args(const struct arch_gpregs *r, uint64_t args[ARCH_NARGS]);

/* Turn @r into the state of a function entry: @fn called with @args, returning
 * to @ret_addr, with its stack at or below @stack_top.  When the ABI passes the
 * return address on the stack, *push_addr and *push_val say which word the caller must
 * write before resuming (and *npush = 1).  Any interrupted system call is
 * cancelled so the kernel does not restart it into the call. */
void arch_call_prepare(struct arch_gpregs *r, uint64_t fn, const uint64_t *args, unsigned nargs,
		       uint64_t stack_top, uint64_t ret_addr,
		       uint64_t *push_addr, uint64_t *push_val, int *npush);

/* Return from a function the tracer emulated: @ret_word is the word at the stack
 * pointer (read by the caller when arch_ret_from_stack is true), @retval the
 * value to return. */
extern const int arch_ret_from_stack;
void arch_emulate_return(struct arch_gpregs *r, uint64_t ret_word, uint64_t retval);

/* The system call of a syscall stop, or -1. */
long arch_syscall_nr(const struct arch_gpregs *r);
/* The system call a thread we interrupted is in, given @n (arch_syscall_note,
 * taken just before that stop), or -1.  x86_64: arch_syscall_nr (orig_rax
 * survives the stop); arm64 forgets it before an interrupt stop: the note's,
 * while the registers still show that call. */
long arch_stopped_syscall(const struct arch_gpregs *r, const struct arch_sc_note *n);

/* How a blocking system call ranks as a place to borrow a thread from. */
enum arch_sc_class {
	ARCH_SC_IDLE,		/* an event loop or sleep: epoll_wait, poll, read, nanosleep... */
	ARCH_SC_FUTEX,		/* waiting on a lock or condition */
	ARCH_SC_MEMORY,		/* mapping or returning memory: mmap, munmap, madvise, brk... */
	ARCH_SC_OTHER,
	/* resuming a timed wait an earlier stop cut short (restart_syscall): its
	 * call is unknown, the self-restoring call cannot resume it */
	ARCH_SC_RESTART,
};
/* One table for every architecture, by the host's numbers (attach/syscalls.c);
 * each architecture gives the names (arch/<arch>/syscall_names.c). */
enum arch_sc_class arch_syscall_class(long nr);
/* Name of system call @nr, or NULL. */
const char *arch_syscall_name(long nr);
/* Interfaces that fail with EINTR after any stop (man 7 signal). */
int arch_syscall_eintr_on_stop(long nr);

extern const char *const arch_sc_names[];	/* by number; NULL: unused */
extern const size_t arch_sc_nnames;

/* --- the self-restoring call (sigframe.c) --- */

/* The bytes of the rt_sigreturn trampoline (libc's __restore_rt on x86_64,
 * the vDSO's __kernel_rt_sigreturn on arm64), searched for in the target's
 * code; the vDSO first when arch_restorer_in_vdso. */
extern const unsigned char arch_restorer_code[];
extern const size_t arch_restorer_len;
extern const int arch_restorer_in_vdso;
#define ARCH_SIGFRAME_MAX (ARCH_EXTREGS_MAX + 1024)

/* Taken just before a thread is stopped: what arch_restart_adjust may need
 * that the stop destroys (arm64: a system call's first argument, which its
 * result overwrites; x86_64: nothing). */
void arch_syscall_note(pid_t pid, pid_t tid, struct arch_sc_note *n);
/* The kernel's restart adjustment for a thread stopped in a system call:
 * with @all, any -ERESTART* result becomes a restart of the same call (what
 * the kernel does when no handler runs); with @eintr, so does an -EINTR from
 * an interface of arch_syscall_eintr_on_stop (our stop caused it), given @n
 * from before that stop.  Returns 1 when @r was changed. */
int arch_restart_adjust(struct arch_gpregs *r, const struct arch_sc_note *n, int all, int eintr);
/* @r cannot be resumed through rt_sigreturn without the application seeing
 * EINTR (stopped in restart_syscall, or about to enter it). */
int arch_sigframe_refuses(const struct arch_gpregs *r);
/* Build, in @buf, a kernel rt_sigframe whose rt_sigreturn resumes @r with FP
 * state @x and signal mask @sigmask, ending at or below @top, its return slot
 * holding @restorer.  Returns its length and its address in *base (the stack
 * pointer of a function entered with it as return address), 0 if @cap is too
 * small. */
size_t arch_sigframe_build(const struct arch_gpregs *r, const struct arch_extregs *x, uint64_t sigmask,
			   uint64_t top, uint64_t restorer, unsigned char *buf, size_t cap, uint64_t *base);
/* The stack pointer at the trampoline when a function entered on the frame at
 * @base returns (x86_64: the return address popped; arm64: @base itself). */
uint64_t arch_sigframe_ret_sp(uint64_t base);
/* @r is the syscall-entry stop of rt_sigreturn on the frame at @base. */
int arch_at_sigreturn(const struct arch_gpregs *r, uint64_t restorer, uint64_t base);
/* At that stop, the return value of the function, when the trampoline left it
 * in the registers: 1 and *@val.  arm64's (mov x8, #139; svc #0) keeps x0;
 * x86_64's (mov $15, %rax; syscall) overwrites rax: 0, the perf breakpoint's
 * sample is its only source. */
int arch_sigreturn_retval(const struct arch_gpregs *r, uint64_t *val);
/* The same user-visible state (what rt_sigreturn restores). */
int arch_same_state(const struct arch_gpregs *a, const struct arch_gpregs *b);
long arch_syscall_arg(const struct arch_gpregs *r, int i);
void arch_syscall_set_arg(struct arch_gpregs *r, int i, long v);
void arch_set_retval(struct arch_gpregs *r, uint64_t v);
long arch_syscall_write_nr(void);
/* --- the text sink (sink.c) --- */

/* The first place in @buf where code, started there, makes a system call
 * that changes nothing, cannot fail and ignores its arguments (getpid,
 * gettid...), then returns: its whole length (arch_sink_len) inside @buf.
 * NULL if none. */
const unsigned char *arch_sink_match(const unsigned char *buf, size_t len);
extern const size_t arch_sink_len;
/* @r is the syscall-entry stop of the sink found at @sink. */
int arch_at_sink(const struct arch_gpregs *r, uint64_t sink);

/* --- thread-pointer-relative data read from code (tpcode.c) --- */

/* The first pair of 8-byte loads at the thread pointer plus D and plus D + 8 in the
 * straight-line code @code (@len bytes at @addr in process @pid, which is read for what
 * the code loads from its GOT): jemalloc's inlined malloc fast path reading tsd's
 * thread_allocated and the next event's threshold.  0 and D in *off, or -ENOENT. */
int arch_tp_pair(pid_t pid, uint64_t addr, const unsigned char *code, size_t len, int64_t *off);
/* Where the kernel saves a task's thread pointer, as a BTF member path from task_struct
 * (x86_64 thread.fsbase, arm64 thread.uw.tp_value), NULL-terminated. */
extern const char *const arch_tp_btf_path[];

/* --- direct branches read from code (branch.c) --- */

/* Instructions start at multiples of this (x86_64 1, arm64 4). */
extern const size_t arch_insn_align;
/* A jump, call or conditional branch with a displacement (rel32 on x86_64; b, bl, b.cond,
 * cb(n)z, tb(n)z on arm64) starting at @code[i] (@code at @addr, @len bytes): 1 and its
 * target in *target, else 0. */
int arch_direct_branch(const unsigned char *code, size_t len, size_t i, uint64_t addr, uint64_t *target);

/* perf_event sample_regs_user: the return value register, then the stack
 * pointer, in perf's order. */
extern const uint64_t arch_perf_regs;

#endif
