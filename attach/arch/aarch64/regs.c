/* regs.c -- arm64 register access and the AAPCS64 call convention. */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "attach/arch.h"
#include "extregs.h"

#define PSR_SS		(1ULL << 21)	/* software step */
#define PSR_BTYPE	(3ULL << 10)	/* branch type, checked by BTI at the target */

_Static_assert(sizeof(struct a64_ext) % 16 == 0, "the SVE blob stays aligned");

static int regset(int req, pid_t tid, int type, void *buf, size_t len, size_t *got)
{
	struct iovec iov = { buf, len };

	if (ptrace(req, tid, (void *)(long)type, &iov) < 0)
		return -errno;
	if (got)
		*got = iov.iov_len;
	return 0;
}

int arch_gpregs_get(pid_t tid, struct arch_gpregs *r)
{
	int nr = -1, err = regset(PTRACE_GETREGSET, tid, NT_PRSTATUS, &r->r, sizeof(r->r), NULL);

	if (err)
		return err;
	if (regset(PTRACE_GETREGSET, tid, NT_ARM_SYSTEM_CALL, &nr, sizeof(nr), NULL))
		nr = -1;
	r->syscallno = nr;
	return regset(PTRACE_GETREGSET, tid, NT_ARM_TLS, &r->tp, sizeof(r->tp), NULL);
}

int arch_gpregs_set(pid_t tid, const struct arch_gpregs *r)
{
	return regset(PTRACE_SETREGSET, tid, NT_PRSTATUS, (void *)&r->r, sizeof(r->r), NULL);
}

int arch_extregs_get(pid_t tid, struct arch_extregs *x)
{
	struct a64_ext e;
	unsigned char *sve = x->buf + sizeof(e);
	size_t cap = sizeof(x->buf) - sizeof(e), got = 0;
	uint16_t flags;
	int err;

	memset(&e, 0, sizeof(e));
	if ((err = regset(PTRACE_GETREGSET, tid, NT_PRFPREG, &e.fp, sizeof(e.fp), NULL)))
		return err;
	if ((err = regset(PTRACE_GETREGSET, tid, NT_ARM_TLS, &e.tpidr, sizeof(e.tpidr), NULL)))
		return err;
	/* No SVE on this CPU (EINVAL) is no state to keep. */
	if (!regset(PTRACE_GETREGSET, tid, NT_ARM_SVE, sve, cap, &got) && got >= A64_SVE_HDR) {
		uint32_t size;

		memcpy(&size, sve, sizeof(size));
		/* user_sve_header: size, max_size, vl, max_vl, then flags (at 12). */
		memcpy(&flags, sve + offsetof(struct user_sve_header, flags), sizeof(flags));
		if (size > cap)
			return -E2BIG;
		if (flags & A64_SVE_FLAG_LIVE)
			e.sve_len = (uint32_t)got;
	}
	memcpy(x->buf, &e, sizeof(e));
	x->len = sizeof(e) + e.sve_len;
	return 0;
}

int arch_extregs_set(pid_t tid, const struct arch_extregs *x)
{
	struct a64_ext e;
	int err;

	if (x->len < sizeof(e))
		return -EINVAL;
	memcpy(&e, x->buf, sizeof(e));
	/* The SVE block holds the FP/SIMD registers too (their low 128 bits). */
	if (e.sve_len)
		err = regset(PTRACE_SETREGSET, tid, NT_ARM_SVE, (void *)(x->buf + sizeof(e)), e.sve_len,
			     NULL);
	else
		err = regset(PTRACE_SETREGSET, tid, NT_PRFPREG, &e.fp, sizeof(e.fp), NULL);
	if (err)
		return err;
	return regset(PTRACE_SETREGSET, tid, NT_ARM_TLS, &e.tpidr, sizeof(e.tpidr), NULL);
}

int arch_tls_base(pid_t tid, uint64_t *tp)
{
	return regset(PTRACE_GETREGSET, tid, NT_ARM_TLS, tp, sizeof(*tp), NULL);
}

int arch_gpregs_from_core(struct arch_gpregs *r, const void *pr_reg, size_t len)
{
	if (len != sizeof(r->r))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	memcpy(&r->r, pr_reg, len);
	r->syscallno = -1;
	return 0;
}

/* NT_ARM_TLS: TPIDR_EL0, then TPIDR2_EL0 on kernels that know SME. */
void arch_gpregs_core_note(struct arch_gpregs *r, unsigned type, const void *desc, size_t len)
{
	if (type == NT_ARM_TLS && len >= sizeof(r->tp))
		memcpy(&r->tp, desc, sizeof(r->tp));
}

void arch_unwind_from_sp(uint64_t sp, uint64_t pc, uint64_t *regs, size_t n)
{
	if (n > 29)
		regs[29] = sp;
	/* UNW_AARCH64_PC: the walk starts from it (UNW_REG_IP is x30 there). */
	if (n > 32)
		regs[32] = pc;
}

uint64_t arch_pc(const struct arch_gpregs *r) { return r->r.pc; }
uint64_t arch_sp(const struct arch_gpregs *r) { return r->r.sp; }
uint64_t arch_regs_tls_base(const struct arch_gpregs *r) { return r->tp; }
uint64_t arch_retval(const struct arch_gpregs *r) { return r->r.regs[0]; }

void arch_args(const struct arch_gpregs *r, uint64_t a[ARCH_NARGS])
{
	memcpy(a, r->r.regs, ARCH_NARGS * sizeof(*a));
}

/* The return address goes in x30, nothing on the stack; sp is 16-byte aligned
 * at every instant (the CPU faults on a misaligned sp-relative access). An
 * interrupted system call is not restarted into the call: the kernel restarts
 * only when the pc it left (the svc) is still there, and the pc changes. */
void arch_call_prepare(struct arch_gpregs *r, uint64_t fn, const uint64_t *args, unsigned nargs,
		       uint64_t stack_top, uint64_t ret_addr,
		       uint64_t *push_addr, uint64_t *push_val, int *npush)
{
	uint64_t a[ARCH_NARGS] = { 0 };

	memcpy(a, args, (nargs > ARCH_NARGS ? ARCH_NARGS : nargs) * sizeof(*a));
	memcpy(r->r.regs, a, sizeof(a));
	r->r.regs[30] = ret_addr;
	r->r.sp = stack_top & ~(uint64_t)15;
	r->r.pc = fn;
	/* Not single-stepping, and no branch type pending: a BTI-guarded page
	 * would fault on entry at an instruction that is not a landing pad. */
	r->r.pstate &= ~(PSR_SS | PSR_BTYPE);
	*push_addr = 0;
	*push_val = 0;
	*npush = 0;
}

const int arch_ret_from_stack = 0;

void arch_emulate_return(struct arch_gpregs *r, uint64_t ret_word, uint64_t retval)
{
	(void)ret_word;
	r->r.pc = r->r.regs[30];
	r->r.regs[0] = retval;
}

long arch_syscall_nr(const struct arch_gpregs *r)
{
	return (long)r->syscallno;
}

/* The note's call while x8, sp and x1-x5 still hold it and the pc is just
 * after its svc, or back on it (the kernel's restart); x0 may be its result. */
long arch_stopped_syscall(const struct arch_gpregs *r, const struct arch_sc_note *n)
{
	if (r->syscallno >= 0)
		return (long)r->syscallno;
	if (n->nr < 0 || r->r.regs[8] != (uint64_t)n->nr || r->r.sp != n->sp ||
	    (r->r.pc != n->pc && r->r.pc != n->pc - 4) ||
	    memcmp(&r->r.regs[1], &n->args[1], 5 * sizeof(uint64_t)))
		return -1;
	return n->nr;
}
