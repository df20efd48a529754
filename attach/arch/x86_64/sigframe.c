/* sigframe.c -- x86_64 kernel-format signal frames for the self-restoring call.
 *
 * The frame is what the kernel itself writes when it delivers a signal
 * (arch/x86/kernel/signal_64.c): rt_sigreturn on it puts back every general
 * register, the full XSAVE state and the signal mask.  Layout and magic
 * numbers are the kernel's ABI (uapi asm/sigcontext.h, asm/ucontext.h).
 */
#include <cpuid.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#include "attach/arch.h"

#define FP_XSTATE_MAGIC1	0x46505853U
#define FP_XSTATE_MAGIC2	0x46505845U
#define FP_XSTATE_MAGIC2_SIZE	4
#define SW_BYTES_OFFSET		464	/* fxsave's sw_reserved */
#define UC_FP_XSTATE		0x1
#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

/* mov $15,%rax; syscall -- glibc's and musl's __restore_rt. */
const unsigned char arch_restorer_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
const size_t arch_restorer_len = sizeof(arch_restorer_code);
const int arch_restorer_in_vdso = 0;

struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate;
	uint64_t reserved1[8];
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
	struct k_sigcontext uc_mcontext;
	uint64_t uc_sigmask;
};

struct k_rt_sigframe {
	uint64_t pretcode;
	struct k_ucontext uc;
	unsigned char info[128];
};

struct k_fpx_sw_bytes {
	uint32_t magic1, extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext is 256 bytes");
_Static_assert(offsetof(struct k_ucontext, uc_mcontext) == 40, "uc_mcontext at 40");
_Static_assert(offsetof(struct k_ucontext, uc_sigmask) == 296, "uc_sigmask at 296");
_Static_assert(sizeof(struct k_rt_sigframe) == 440, "rt_sigframe is 440 bytes");

static int restart_code(int64_t rax)
{
	return rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
	       rax == -ERESTART_RESTARTBLOCK;
}

void arch_syscall_note(pid_t pid, pid_t tid, struct arch_sc_note *n)
{
	(void)pid;
	(void)tid;
	(void)n;
}

int arch_restart_adjust(struct arch_gpregs *r, const struct arch_sc_note *n, int all, int eintr)
{
	int64_t rax = (int64_t)r->r.rax;
	long nr = (long)r->r.orig_rax;

	(void)n;
	if (nr < 0)
		return 0;
	if (!(all && restart_code(rax)) && !(eintr && rax == -EINTR && arch_syscall_eintr_on_stop(nr)))
		return 0;
	/* Restart the system call itself, as the kernel does for -ERESTARTSYS.
	 * Also for -ERESTART_RESTARTBLOCK: rt_sigreturn resets the restart
	 * block, so restart_syscall would return EINTR; the original call with
	 * its original arguments restarts instead (a relative timeout starts
	 * again: the wait can only be longer, never shorter). */
	r->r.rip -= 2;
	r->r.rax = (uint64_t)nr;
	r->r.orig_rax = (uint64_t)-1;
	return 1;
}

int arch_sigframe_refuses(const struct arch_gpregs *r)
{
	/* Stopped in restart_syscall itself: its original call is unknown, and
	 * rt_sigreturn would turn the restart into EINTR.  Or stopped after the
	 * kernel already set a restart up (rax = restart_syscall, rip back on
	 * the syscall instruction: a second stop caught it between that and the
	 * return to user space; orig_rax still names the call): rt_sigreturn
	 * would make that restart_syscall fail with EINTR too.  Rarely, a
	 * call that just returned 219 looks the same: that thread is only
	 * passed over. */
	return ((long)r->r.orig_rax == SYS_restart_syscall && restart_code((int64_t)r->r.rax)) ||
	       ((long)r->r.orig_rax >= 0 && r->r.rax == SYS_restart_syscall);
}

/* The bytes of @x that rt_sigreturn is asked to restore: up to the end of
 * the last component its XSTATE_BV holds (CPUID leaf 0xd gives each one's
 * place in the standard format), at least the legacy area and the header.
 * Not PTRACE_GETREGSET's length, which is the CPU's largest state: with AMX
 * (Sapphire Rapids and later) 11008 bytes, while a thread that never asked
 * for AMX (arch_prctl ARCH_REQ_XCOMP_PERM) has a 2816-byte signal state;
 * rt_sigreturn then finds xstate_size past the thread's own size and
 * restores only the FXSAVE part: the AVX and AVX-512 upper halves, the opmask
 * registers and PKRU came back in their initial state (seen on this CPU
 * before: check_call's sigframe test failed). */
static size_t xstate_used(const struct arch_extregs *x, uint64_t bv)
{
	size_t end = SW_BYTES_OFFSET + 48 + 64;	/* 512 legacy + 64 header */

	for (unsigned i = 2; i < 64; i++) {
		unsigned size, off, ecx, edx;

		if (!(bv & (1ULL << i)) || !__get_cpuid_count(0xd, i, &size, &off, &ecx, &edx))
			continue;
		if (size && off && off + (size_t)size > end)	/* off 0: a supervisor state */
			end = off + (size_t)size;
	}
	return end < x->len ? end : x->len;
}

size_t arch_sigframe_build(const struct arch_gpregs *r, const struct arch_extregs *x, uint64_t sigmask,
			   uint64_t top, uint64_t restorer, unsigned char *buf, size_t cap, uint64_t *base)
{
	uint64_t fp, frame;
	struct k_rt_sigframe f;
	struct k_fpx_sw_bytes sw;
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	uint64_t bv;
	size_t len, xlen;

	if (x->len < SW_BYTES_OFFSET + sizeof(sw) + 64)
		return 0;
	memcpy(&bv, x->buf + 512, sizeof(bv));	/* XSTATE_BV of the header: what this state holds */
	xlen = xstate_used(x, bv);
	/* As get_sigframe(): the xstate 64-byte aligned at the top, the frame
	 * below it with (pretcode + 8) 16-byte aligned, as after a call. */
	fp = (top - xlen - FP_XSTATE_MAGIC2_SIZE) & ~(uint64_t)63;
	frame = ((fp - sizeof(f)) & ~(uint64_t)15) - 8;
	len = (size_t)(top - frame);
	if (len > cap)
		return 0;
	memset(buf, 0, len);
	memset(&f, 0, sizeof(f));
	f.pretcode = restorer;
	f.uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* An invalid mode: rt_sigreturn's do_sigaltstack fails with EINVAL,
	 * which it ignores, and the thread's alternate stack stays as it is
	 * (it cannot be read from outside to be written back). */
	f.uc.uc_stack.ss_flags = 3;
	f.uc.uc_mcontext = (struct k_sigcontext){
		.r8 = r->r.r8, .r9 = r->r.r9, .r10 = r->r.r10, .r11 = r->r.r11,
		.r12 = r->r.r12, .r13 = r->r.r13, .r14 = r->r.r14, .r15 = r->r.r15,
		.rdi = r->r.rdi, .rsi = r->r.rsi, .rbp = r->r.rbp, .rbx = r->r.rbx,
		.rdx = r->r.rdx, .rax = r->r.rax, .rcx = r->r.rcx, .rsp = r->r.rsp,
		.rip = r->r.rip, .eflags = r->r.eflags,
		.cs = (uint16_t)r->r.cs, .ss = (uint16_t)r->r.ss, .fpstate = fp,
	};
	f.uc.uc_sigmask = sigmask;
	memcpy(buf, &f, sizeof(f));
	memcpy(buf + (fp - frame), x->buf, xlen);
	/* The software bytes tell rt_sigreturn to restore the whole XSAVE
	 * area (AVX, AVX-512, PKRU), not just the legacy FXSAVE part. */
	memcpy(&sw, buf + (fp - frame) + SW_BYTES_OFFSET, sizeof(sw));
	sw.magic1 = FP_XSTATE_MAGIC1;
	sw.xstate_size = (uint32_t)xlen;
	sw.extended_size = (uint32_t)xlen + FP_XSTATE_MAGIC2_SIZE;
	if (!sw.xfeatures)
		sw.xfeatures = bv;
	memcpy(buf + (fp - frame) + SW_BYTES_OFFSET, &sw, sizeof(sw));
	memcpy(buf + (fp - frame) + xlen, &magic2, sizeof(magic2));
	*base = frame;
	return len;
}

uint64_t arch_sigframe_ret_sp(uint64_t base)
{
	return base + 8;
}

int arch_at_sigreturn(const struct arch_gpregs *r, uint64_t restorer, uint64_t base)
{
	return (long)r->r.orig_rax == SYS_rt_sigreturn && r->r.rip == restorer + arch_restorer_len &&
	       r->r.rsp == base + 8;
}

int arch_sigreturn_retval(const struct arch_gpregs *r, uint64_t *val)
{
	(void)r;
	(void)val;
	return 0;
}

long arch_syscall_arg(const struct arch_gpregs *r, int i)
{
	const unsigned long long *a[] = { &r->r.rdi, &r->r.rsi, &r->r.rdx, &r->r.r10, &r->r.r8, &r->r.r9 };
	return (long)*a[i];
}

void arch_syscall_set_arg(struct arch_gpregs *r, int i, long v)
{
	unsigned long long *a[] = { &r->r.rdi, &r->r.rsi, &r->r.rdx, &r->r.r10, &r->r.r8, &r->r.r9 };
	*a[i] = (unsigned long long)v;
}

void arch_set_retval(struct arch_gpregs *r, uint64_t v)
{
	r->r.rax = v;
}

long arch_syscall_write_nr(void)
{
	return SYS_write;
}

/* perf_event register numbers (asm/perf_regs.h): AX = 0, SP = 7; a sample
 * lists the chosen registers in that order. */
const uint64_t arch_perf_regs = (1ULL << 0) | (1ULL << 7);

int arch_same_state(const struct arch_gpregs *a, const struct arch_gpregs *b)
{
	struct user_regs_struct x = a->r, y = b->r;

	/* orig_rax is -1 after rt_sigreturn; flags are restored through a mask. */
	x.orig_rax = y.orig_rax = 0;
	x.eflags &= 0x40dd5;
	y.eflags &= 0x40dd5;
	return memcmp(&x, &y, sizeof(x)) == 0;
}
