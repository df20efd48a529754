/* check_emuarch.c -- the emulator's arm64 table, on any host: a hand-assembled
 * arm64 function (BTI landing pad, PAC-signed return, TPIDR_EL0 TLS, an LSE
 * atomic, a call out through a GOT slot) run on an image in unicorn, its call
 * out served by the same service stubs jemalloc's imports get. */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate/cpu.h"
#include "emulate/services.h"

#define IMG	0x400000ULL	/* code, then a string page, then a TLS page */
#define IMG_LEN	0x10000ULL
#define CODE	IMG
#define GOT	(IMG + 0x50)
#define STR	(IMG + 0x1000)
#define TP	(IMG + 0x2000)

/* long f(const char *s, long add) (aarch64-linux-gnu-as -march=armv8.5-a+lse):
 *	bti c; paciasp; stp x29, x30, [sp, #-32]!; mov x29, sp; str x19, [sp, #16]
 *	mrs x2, tpidr_el0; ldr x3, [x2, #16]; add x19, x1, x3	// add + a TLS word
 *	add x6, x2, #24; mov x7, #1; ldaddal x7, x5, [x6]	// ++ another, atomically
 *	adr x16, got; ldr x16, [x16]; blr x16			// strlen(s) through the GOT
 *	add x0, x0, x19; ldr x19, [sp, #16]; ldp x29, x30, [sp], #32; autiasp; ret
 * got:	.quad 0 */
static const uint32_t code[] = {
	0xd503245f, 0xd503233f, 0xa9be7bfd, 0x910003fd, 0xf9000bf3, 0xd53bd042, 0xf9400843,
	0x8b030033, 0x91006046, 0xd2800027, 0xf8e700c5, 0x10000130, 0xf9400210, 0xd63f0200,
	0x8b130000, 0xf9400bf3, 0xa8c27bfd, 0xd50323bf, 0xd65f03c0, 0xd503201f,
};
#define CALL_RET (CODE + 14 * 4)	/* after the blr */

static unsigned char *mem;

static int page(void *arg, uint64_t addr, void *buf)
{
	(void)arg;
	if (addr < IMG || addr >= IMG + IMG_LEN)
		return -EFAULT;
	memcpy(buf, mem + (addr - IMG), EMU_PAGE);
	return 0;
}

/* A cpu of @arch over the test image, its GOT slot at the stub of @import. */
static void open_cpu(struct emu_cpu *c, const char *import)
{
	struct emu_source src = { page, NULL };
	uint64_t lo = IMG, hi = IMG + IMG_LEN, base, stub;
	const char *s = "hello, arm64";
	uint64_t tls[4] = { 0, 0, 1000, 41 };
	char msg[256];

	ck_assert_msg(!emu_uc_load(msg, sizeof(msg)), "%s", msg);
	mem = calloc(1, IMG_LEN);
	ck_assert_ptr_nonnull(mem);
	memcpy(mem, code, sizeof(code));
	memcpy(mem + (STR - IMG), s, strlen(s) + 1);
	memcpy(mem + (TP - IMG), tls, sizeof(tls));
	base = emu_find_gap(&lo, &hi, 1, EMU_TOOL_SIZE);
	ck_assert_uint_ne(base, 0);
	ck_assert_int_eq(emu_cpu_open(c, emu_arch_of(EM_AARCH64), &src, base, TP, 42), 0);
	c->service_find = emu_service_find;
	c->service_run = emu_service_run;
	stub = emu_cpu_stub(c, import);
	ck_assert_uint_ne(stub, 0);
	ck_assert_int_eq(emu_image_write(&c->im, GOT, &stub, sizeof(stub)), 0);
}

static void close_cpu(struct emu_cpu *c)
{
	emu_cpu_close(c);
	free(mem);
	mem = NULL;
}

START_TEST(test_emuarch_aarch64_call)
{
	struct emu_cpu c;
	struct jma_bcall bc = { .fn = CODE, .args = { STR, 7 }, .nargs = 2, .text_arg = -1 };
	uint64_t ret = 0, counter = 0;

	ck_assert_ptr_eq(emu_arch_of(EM_AARCH64), &emu_arch_aarch64);
	ck_assert_ptr_eq(emu_arch_of(EM_X86_64), &emu_arch_x86_64);
	ck_assert_ptr_null(emu_arch_of(EM_RISCV));
	/* One registry: the emulator's table extends the machine's descriptor. */
	ck_assert_ptr_eq(emu_arch_of(EM_AARCH64)->m, att_machine_of(EM_AARCH64));
	ck_assert_ptr_eq(emu_arch_of(EM_X86_64)->m, att_machine_of(EM_X86_64));
	open_cpu(&c, "strlen");
	/* Twice: the state a call leaves (x30, sp, the PAC keys) serves the next. */
	for (int i = 1; i <= 2; i++) {
		ck_assert_msg(!emu_cpu_run(&c, &bc, 10000, &ret), "run %d: %s", i, c.msg);
		ck_assert_uint_eq(ret, strlen("hello, arm64") + 7 + 1000);
		ck_assert_int_eq(emu_image_read(&c.im, TP + 24, &counter, sizeof(counter)), 0);
		ck_assert_uint_eq(counter, 41 + (uint64_t)i);
	}
	/* Nothing reached the source: the image is a copy. */
	ck_assert_uint_eq(((uint64_t *)(void *)(mem + (TP - IMG)))[3], 41);
	close_cpu(&c);
}
END_TEST

START_TEST(test_emuarch_aarch64_unserviced_import)
{
	struct emu_cpu c;
	struct jma_bcall bc = { .fn = CODE, .args = { STR, 0 }, .nargs = 2, .text_arg = -1 };
	char want[64];
	uint64_t ret;

	open_cpu(&c, "frobnicate");
	ck_assert_int_eq(emu_cpu_run(&c, &bc, 10000, &ret), -ENOSYS);
	/* The caller is where x30 points: just after the blr. */
	snprintf(want, sizeof(want), "frobnicate() from 0x%llx", (unsigned long long)CALL_RET);
	ck_assert_msg(strstr(c.msg, want), "%s", c.msg);
	close_cpu(&c);
}
END_TEST

Suite *suite_emuarch(void)
{
	Suite *s = suite_create("emuarch");
	TCase *tc = tcase_create("aarch64");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_emuarch_aarch64_call);
	tcase_add_test(tc, test_emuarch_aarch64_unserviced_import);
	suite_add_tcase(s, tc);
	return s;
}
