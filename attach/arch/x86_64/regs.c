/* regs.c -- x86_64 register access and the System V call convention. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "attach/arch.h"

int arch_gpregs_get(pid_t tid, struct arch_gpregs *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, &r->r) < 0 ? -errno : 0;
}

int arch_gpregs_set(pid_t tid, const struct arch_gpregs *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, &r->r) < 0 ? -errno : 0;
}

/* NT_X86_XSTATE covers x87, SSE, AVX and later state; the kernel shortens
 * iov_len to what this CPU has, and setting back the same length restores it. */
int arch_extregs_get(pid_t tid, struct arch_extregs *x)
{
	struct iovec iov = { x->buf, sizeof(x->buf) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	x->len = iov.iov_len;
	return 0;
}

int arch_extregs_set(pid_t tid, const struct arch_extregs *x)
{
	struct iovec iov = { (void *)x->buf, x->len };

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0 ? -errno : 0;
}

int arch_tls_base(pid_t tid, uint64_t *tp)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return -errno;
	*tp = r.fs_base;
	return 0;
}

int arch_gpregs_from_core(struct arch_gpregs *r, const void *pr_reg, size_t len)
{
	if (len != sizeof(r->r))
		return -EINVAL;
	memcpy(&r->r, pr_reg, len);
	return 0;
}

void arch_gpregs_core_note(struct arch_gpregs *r, unsigned type, const void *desc, size_t len)
{
	(void)r;
	(void)type;
	(void)desc;
	(void)len;
}

void arch_unwind_from_sp(uint64_t sp, uint64_t pc, uint64_t *regs, size_t n)
{
	(void)sp;
	(void)pc;
	(void)regs;
	(void)n;
}

uint64_t arch_pc(const struct arch_gpregs *r) { return r->r.rip; }
uint64_t arch_sp(const struct arch_gpregs *r) { return r->r.rsp; }
uint64_t arch_regs_tls_base(const struct arch_gpregs *r) { return r->r.fs_base; }
uint64_t arch_retval(const struct arch_gpregs *r) { return r->r.rax; }

void arch_args(const struct arch_gpregs *r, uint64_t a[ARCH_NARGS])
{
	a[0] = r->r.rdi; a[1] = r->r.rsi; a[2] = r->r.rdx;
	a[3] = r->r.rcx; a[4] = r->r.r8;  a[5] = r->r.r9;
}

void arch_call_prepare(struct arch_gpregs *r, uint64_t fn, const uint64_t *args, unsigned nargs,
		       uint64_t stack_top, uint64_t ret_addr,
		       uint64_t *push_addr, uint64_t *push_val, int *npush)
{
	uint64_t a[ARCH_NARGS] = { 0 };
	uint64_t sp;

	memcpy(a, args, (nargs > ARCH_NARGS ? ARCH_NARGS : nargs) * sizeof(*a));
	r->r.rdi = a[0]; r->r.rsi = a[1]; r->r.rdx = a[2];
	r->r.rcx = a[3]; r->r.r8 = a[4];  r->r.r9 = a[5];
	/* %al = number of vector registers used by a variadic call: none. */
	r->r.rax = 0;
	/* At function entry (%rsp + 8) is 16-byte aligned: the return address
	 * occupies the word just below an aligned boundary.  jemalloc uses aligned
	 * SSE stores on the stack; getting this wrong faults inside it. */
	sp = (stack_top & ~(uint64_t)15) - 8;
	r->r.rsp = sp;
	r->r.rip = fn;
	/* The ABI requires DF clear on entry; TF would single-step the call. */
	r->r.eflags &= ~((1ULL << 10) | (1ULL << 8));
	/* orig_rax = -1: the kernel will not treat the resume as a syscall
	 * restart and rewind %rip into our call. */
	r->r.orig_rax = (unsigned long long)-1;
	*push_addr = sp;
	*push_val = ret_addr;
	*npush = 1;
}

const int arch_ret_from_stack = 1;

void arch_emulate_return(struct arch_gpregs *r, uint64_t ret_word, uint64_t retval)
{
	r->r.rip = ret_word;
	r->r.rsp += 8;
	r->r.rax = retval;
}

long arch_syscall_nr(const struct arch_gpregs *r)
{
	return (long)r->r.orig_rax;
}

long arch_stopped_syscall(const struct arch_gpregs *r, const struct arch_sc_note *n)
{
	(void)n;
	return arch_syscall_nr(r);
}
