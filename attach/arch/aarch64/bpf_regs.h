/* bpf_regs.h -- arm64: the registers a BPF program at a uprobe copies for a later unwind
 * (the sampler's), in libunwind's numbering (x0-x30, sp 31, pc 32).  Included by BPF programs
 * (clang -target bpf; a uprobe's ctx is the kernel's pt_regs, which begins with
 * struct user_pt_regs of <asm/ptrace.h>) and by their user side (the numbers only). */
#ifndef ATTACH_ARCH_AARCH64_BPF_REGS_H
#define ATTACH_ARCH_AARCH64_BPF_REGS_H

#define ARCH_BPF_NREGS	33
#define ARCH_BPF_REG_SP	31
#define ARCH_BPF_REG_PC	32

#define ARCH_BPF_COPY_REGS(out, ctx) do {					\
	const struct user_pt_regs *r_ = (const void *)(ctx);			\
	_Pragma("unroll")							\
	for (int i_ = 0; i_ < 31; i_++)						\
		(out)[i_] = r_->regs[i_];					\
	(out)[31] = r_->sp;							\
	(out)[32] = r_->pc;							\
} while (0)

#endif
