/* bpf_regs.h -- x86_64: the registers a BPF program at a uprobe copies for a later unwind
 * (the sampler's), in libunwind's numbering (DWARF 0-16: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
 * r8-r15, rip).  Included by BPF programs (clang -target bpf, ctx a struct pt_regs of
 * <linux/ptrace.h>) and by their user side (the numbers only). */
#ifndef ATTACH_ARCH_X86_64_BPF_REGS_H
#define ATTACH_ARCH_X86_64_BPF_REGS_H

#define ARCH_BPF_NREGS	17
#define ARCH_BPF_REG_SP	7
#define ARCH_BPF_REG_PC	16

#define ARCH_BPF_COPY_REGS(out, ctx) do {					\
	(out)[0] = (ctx)->rax; (out)[1] = (ctx)->rdx; (out)[2] = (ctx)->rcx;	\
	(out)[3] = (ctx)->rbx; (out)[4] = (ctx)->rsi; (out)[5] = (ctx)->rdi;	\
	(out)[6] = (ctx)->rbp; (out)[7] = (ctx)->rsp; (out)[8] = (ctx)->r8;	\
	(out)[9] = (ctx)->r9; (out)[10] = (ctx)->r10; (out)[11] = (ctx)->r11;	\
	(out)[12] = (ctx)->r12; (out)[13] = (ctx)->r13; (out)[14] = (ctx)->r14;	\
	(out)[15] = (ctx)->r15; (out)[16] = (ctx)->rip;				\
} while (0)

#endif
