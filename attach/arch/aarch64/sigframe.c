/* sigframe.c -- arm64 kernel-format signal frames for the self-restoring call.
 *
 * The frame is what the kernel itself writes when it delivers a signal
 * (arch/arm64/kernel/signal.c): rt_sigreturn on it puts back x0-x30, sp, pc,
 * pstate, FP/SIMD (and SVE) state and the signal mask.  Layout and magic
 * numbers are the kernel's ABI (uapi asm/sigcontext.h, asm/ucontext.h).
 *
 * System call restart is the kernel's own on arm64: before any stop of a
 * thread interrupted in a system call, do_signal() has already set it up for
 * the -ERESTART* results (x0 back to orig_x0, pc back on the svc), so what
 * rt_sigreturn puts back re-executes the call.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#include "attach/arch.h"
#include "attach/procfs.h"
#include "extregs.h"

#define FPSIMD_MAGIC	0x46508001U
#define SVE_MAGIC	0x53564501U

/* The vDSO's __kernel_rt_sigreturn: mov x8, #139; svc #0.  glibc gives
 * sigaction no restorer on arm64; the kernel returns through this one. */
const unsigned char arch_restorer_code[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };
const size_t arch_restorer_len = sizeof(arch_restorer_code);
const int arch_restorer_in_vdso = 1;

struct k_ctx {
	uint32_t magic, size;
};

struct k_fpsimd {
	struct k_ctx head;
	uint32_t fpsr, fpcr;
	__uint128_t vregs[32];
};

struct k_sve {
	struct k_ctx head;
	uint16_t vl, flags;
	uint16_t reserved[2];
};

struct k_sigcontext {
	uint64_t fault_address;
	uint64_t regs[31];
	uint64_t sp, pc, pstate;
	unsigned char reserved[4096] __attribute__((aligned(16)));
};

struct k_stack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

struct k_ucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct k_stack uc_stack;
	uint64_t uc_sigmask;
	unsigned char unused[120];	/* glibc's sigset_t is 1024 bits */
	struct k_sigcontext uc_mcontext;
};

struct k_rt_sigframe {
	unsigned char info[128];
	struct k_ucontext uc;
};

_Static_assert(sizeof(struct k_fpsimd) == 528, "fpsimd_context is 528 bytes");
_Static_assert(offsetof(struct k_sigcontext, reserved) == 288, "__reserved at 288");
_Static_assert(offsetof(struct k_ucontext, uc_mcontext) == 176, "uc_mcontext at 176");
_Static_assert(sizeof(struct k_rt_sigframe) == 4688, "rt_sigframe is 4688 bytes");

void arch_syscall_note(pid_t pid, pid_t tid, struct arch_sc_note *n)
{
	n->nr = att_proc_syscall_args(pid, tid, n->args, &n->sp, &n->pc);
}

/* -ERESTART* needs nothing: the kernel restarted those calls before the stop
 * (see above).  An -EINTR that our stop caused is undone when the thread is
 * still at the call noted before the stop -- the same number in x8, the pc
 * just after its svc, the same stack pointer and arguments 2-6 (x1-x5 are
 * not written by a system call) -- by putting its first argument back and
 * the pc on the svc. */
int arch_restart_adjust(struct arch_gpregs *r, const struct arch_sc_note *n, int all, int eintr)
{
	(void)all;
	if (!eintr || (int64_t)r->r.regs[0] != -EINTR || n->nr < 0 ||
	    !arch_syscall_eintr_on_stop(n->nr))
		return 0;
	if (r->r.regs[8] != (uint64_t)n->nr || r->r.pc != n->pc || r->r.sp != n->sp ||
	    memcmp(&r->r.regs[1], &n->args[1], 5 * sizeof(uint64_t)))
		return 0;
	r->r.regs[0] = n->args[0];
	r->r.pc -= 4;
	return 1;
}

/* A thread stopped in restart_syscall is left on its svc with x8 = 128;
 * rt_sigreturn resets the restart block, so re-executing it would return
 * EINTR.  x8 is a scratch register elsewhere: a false match only means the
 * fallback engine. */
int arch_sigframe_refuses(const struct arch_gpregs *r)
{
	return r->r.regs[8] == SYS_restart_syscall;
}

size_t arch_sigframe_build(const struct arch_gpregs *r, const struct arch_extregs *x, uint64_t sigmask,
			   uint64_t top, uint64_t restorer, unsigned char *buf, size_t cap, uint64_t *base)
{
	struct k_rt_sigframe f;
	struct k_fpsimd fp;
	struct a64_ext e;
	uint64_t record, frame, rec[2];
	size_t len, at = 0;

	(void)restorer;	/* the call's x30 (arch_call_prepare), not a frame slot on arm64 */
	if (x->len < sizeof(e))
		return 0;
	memcpy(&e, x->buf, sizeof(e));
	/* As get_sigframe(): a frame record (x29, x30) at the top, 16-byte
	 * aligned, the rt_sigframe 16-byte aligned below it; rt_sigreturn finds
	 * the frame at sp. */
	record = (top - 16) & ~(uint64_t)15;
	frame = record - sizeof(f);
	len = (size_t)(top - frame);
	if (len > cap)
		return 0;
	memset(buf, 0, len);
	memset(&f, 0, sizeof(f));
	/* An invalid mode: rt_sigreturn's restore_altstack ignores the EINVAL
	 * and the thread's alternate stack stays as it is. */
	f.uc.uc_stack.ss_flags = 3;
	f.uc.uc_sigmask = sigmask;
	memcpy(f.uc.uc_mcontext.regs, r->r.regs, sizeof(f.uc.uc_mcontext.regs));
	f.uc.uc_mcontext.sp = r->r.sp;
	f.uc.uc_mcontext.pc = r->r.pc;
	f.uc.uc_mcontext.pstate = r->r.pstate;
	/* __reserved: fpsimd_context first, then sve_context when the thread
	 * has live SVE state, then the terminator (zeroes). */
	memset(&fp, 0, sizeof(fp));
	fp.head = (struct k_ctx){ FPSIMD_MAGIC, sizeof(fp) };
	fp.fpsr = e.fp.fpsr;
	fp.fpcr = e.fp.fpcr;
	memcpy(fp.vregs, e.fp.vregs, sizeof(fp.vregs));
	memcpy(f.uc.uc_mcontext.reserved, &fp, sizeof(fp));
	at = sizeof(fp);
	if (e.sve_len) {
		const unsigned char *blob = x->buf + sizeof(e);
		struct k_sve sve;
		uint16_t vl;
		uint32_t regs, size;

		memcpy(&vl, blob + 8, sizeof(vl));
		regs = A64_SVE_REGS_SIZE((uint32_t)vl / 16);
		/* Records start 16-byte aligned: the size says so (as the kernel's). */
		size = (uint32_t)((sizeof(sve) + regs + 15) & ~(size_t)15);
		/* Longer vectors need the kernel's extra_context: not written here,
		 * so no call rather than a thread that loses its SVE state. */
		if (e.sve_len < A64_SVE_HDR + regs ||
		    at + size + sizeof(struct k_ctx) > sizeof(f.uc.uc_mcontext.reserved))
			return 0;
		memset(&sve, 0, sizeof(sve));
		sve.head = (struct k_ctx){ SVE_MAGIC, size };
		sve.vl = vl;
		memcpy(f.uc.uc_mcontext.reserved + at, &sve, sizeof(sve));
		memcpy(f.uc.uc_mcontext.reserved + at + sizeof(sve), blob + A64_SVE_HDR, regs);
		at += size;
	}
	memcpy(buf, &f, sizeof(f));
	/* The record the kernel links the handler's frame chain through. */
	rec[0] = r->r.regs[29];
	rec[1] = r->r.regs[30];
	memcpy(buf + (record - frame), rec, sizeof(rec));
	*base = frame;
	return len;
}

uint64_t arch_sigframe_ret_sp(uint64_t base)
{
	return base;
}

int arch_at_sigreturn(const struct arch_gpregs *r, uint64_t restorer, uint64_t base)
{
	return r->syscallno == SYS_rt_sigreturn && r->r.pc == restorer + arch_restorer_len &&
	       r->r.sp == base;
}

/* The trampoline sets x8 only, and the kernel reads x0 at the svc without
 * changing it before this stop. */
int arch_sigreturn_retval(const struct arch_gpregs *r, uint64_t *val)
{
	*val = r->r.regs[0];
	return 1;
}

long arch_syscall_arg(const struct arch_gpregs *r, int i)
{
	return (long)r->r.regs[i];
}

void arch_syscall_set_arg(struct arch_gpregs *r, int i, long v)
{
	r->r.regs[i] = (uint64_t)v;
}

void arch_set_retval(struct arch_gpregs *r, uint64_t v)
{
	r->r.regs[0] = v;
}

long arch_syscall_write_nr(void)
{
	return SYS_write;
}

/* perf_event register numbers (asm/perf_regs.h): X0 = 0, SP = 31. */
const uint64_t arch_perf_regs = (1ULL << 0) | (1ULL << 31);

int arch_same_state(const struct arch_gpregs *a, const struct arch_gpregs *b)
{
	struct user_pt_regs x = a->r, y = b->r;

	/* At a syscall stop the kernel shows x7 as the entry/exit marker (and
	 * puts the real one back after); pstate: the condition flags. */
	x.regs[7] = y.regs[7] = 0;
	x.pstate &= 0xf0000000ULL;
	y.pstate &= 0xf0000000ULL;
	return memcmp(&x, &y, sizeof(x)) == 0;
}
