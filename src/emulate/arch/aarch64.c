/* aarch64.c -- the emulator on arm64 code: AAPCS64 calls (x0-x7, the return
 * address in x30), TPIDR_EL0 as the thread pointer.
 *
 * unicorn's "max" CPU model: Debian's arm64 jemalloc (gcc's outline atomics)
 * uses LSE atomics (ldadd, cas...) when the real CPU has them, and the default
 * model (Cortex-A72, ARMv8.0) faults on those.  PAC (paciasp/autiasp) and BTI
 * (bti c) are HINT-space instructions: the model signs and authenticates x30
 * with the same keys within a call, so a function's return is unchanged, and
 * with its MMU off there are no guarded pages.
 */
#include <errno.h>

#include "emulate/arch.h"
#include "emulate/image.h"

static const int zero[] = {
	UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2, UC_ARM64_REG_X3, UC_ARM64_REG_X4,
	UC_ARM64_REG_X5, UC_ARM64_REG_X6, UC_ARM64_REG_X7, UC_ARM64_REG_X8, UC_ARM64_REG_X9,
	UC_ARM64_REG_X10, UC_ARM64_REG_X11, UC_ARM64_REG_X12, UC_ARM64_REG_X13, UC_ARM64_REG_X14,
	UC_ARM64_REG_X15, UC_ARM64_REG_X16, UC_ARM64_REG_X17, UC_ARM64_REG_X18, UC_ARM64_REG_X19,
	UC_ARM64_REG_X20, UC_ARM64_REG_X21, UC_ARM64_REG_X22, UC_ARM64_REG_X23, UC_ARM64_REG_X24,
	UC_ARM64_REG_X25, UC_ARM64_REG_X26, UC_ARM64_REG_X27, UC_ARM64_REG_X28, UC_ARM64_REG_X29,
};

/* sp 16-byte aligned at entry, the return address in x30, no frame above. */
static int enter(struct emu_image *im, uint64_t top, uint64_t ret)
{
	uint64_t sp = top;

	if (emu_uc.reg_write(im->uc, UC_ARM64_REG_SP, &sp) != UC_ERR_OK ||
	    emu_uc.reg_write(im->uc, UC_ARM64_REG_X30, &ret) != UC_ERR_OK)
		return -EINVAL;
	return 0;
}

/* A stub is reached by a branch (bl, or br x17 from the PLT): x30 says from where. */
static uint64_t caller(struct emu_image *im)
{
	uint64_t lr = 0;

	emu_uc.reg_read(im->uc, UC_ARM64_REG_X30, &lr);
	return lr;
}

const struct emu_arch emu_arch_aarch64 = {
	.m = &att_machine_aarch64,
	.uc_arch = UC_ARCH_ARM64,
	.uc_mode = UC_MODE_ARM,
	.uc_cpu = UC_CPU_ARM64_MAX,
	.args = { UC_ARM64_REG_X0, UC_ARM64_REG_X1, UC_ARM64_REG_X2, UC_ARM64_REG_X3,
		  UC_ARM64_REG_X4, UC_ARM64_REG_X5 },
	.sp = UC_ARM64_REG_SP,
	.pc = UC_ARM64_REG_PC,
	.ret = UC_ARM64_REG_X0,
	.tp = UC_ARM64_REG_TPIDR_EL0,
	.fpret = UC_ARM64_REG_D0,
	.zero = zero,
	.nzero = sizeof(zero) / sizeof(*zero),
	.stub = { 0xc0, 0x03, 0x5f, 0xd6 },	/* ret (x30), 0xd65f03c0 */
	.stub_len = 4,
	.enter = enter,
	.caller = caller,
};
