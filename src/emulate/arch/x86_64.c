/* x86_64.c -- the emulator on x86_64 code: System V calls, the return address
 * pushed on the stack, fs_base as the thread pointer. */
#include <errno.h>

#include "emulate/arch.h"
#include "emulate/image.h"

static const int zero[] = { UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RBP, UC_X86_REG_R10,
			    UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
			    UC_X86_REG_R15 };

/* At entry rsp % 16 == 8: the return address sits just below a 16-aligned top. */
static int enter(struct emu_image *im, uint64_t top, uint64_t ret)
{
	uint64_t sp = top - 8;
	int err = emu_image_write(im, sp, &ret, sizeof(ret));

	if (!err && emu_uc.reg_write(im->uc, UC_X86_REG_RSP, &sp) != UC_ERR_OK)
		err = -EINVAL;
	return err;
}

/* A stub is reached by a call (or a jmp from the PLT): its return address on top. */
static uint64_t caller(struct emu_image *im)
{
	uint64_t sp = 0, from = 0;

	emu_uc.reg_read(im->uc, UC_X86_REG_RSP, &sp);
	emu_image_read(im, sp, &from, sizeof(from));
	return from;
}

const struct emu_arch emu_arch_x86_64 = {
	.m = &att_machine_x86_64,
	.uc_arch = UC_ARCH_X86,
	.uc_mode = UC_MODE_64,
	.uc_cpu = -1,
	.args = { UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX, UC_X86_REG_RCX, UC_X86_REG_R8,
		  UC_X86_REG_R9 },
	.sp = UC_X86_REG_RSP,
	.pc = UC_X86_REG_RIP,
	.ret = UC_X86_REG_RAX,
	.tp = UC_X86_REG_FS_BASE,
	.fpret = UC_X86_REG_XMM0,
	.zero = zero,
	.nzero = sizeof(zero) / sizeof(*zero),
	.stub = { 0xc3 },	/* ret */
	.stub_len = 1,
	.enter = enter,
	.caller = caller,
};
