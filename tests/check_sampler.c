/* check_sampler.c -- the sampler's model and profile: thresholds drawn from
 * the exponential table and counted down as the BPF program does give
 * unbiased byte estimates once jeprof's formula is applied; the heap_v2 it
 * writes parses, with the counts it was given. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#include <unistd.h>

#include "sampler/counter.h"
#include "sampler/events.h"
#include "sampler/profile.h"

static uint64_t table[SMP_EXPO_N];

/* What sampler.bpf.c does per allocation of @size: sampled or not. */
static int countdown(int64_t *left, uint64_t size, unsigned *seed)
{
	if (*left > (int64_t)size) {
		*left -= (int64_t)size;
		return 0;
	}
	*left = (int64_t)table[rand_r(seed) & (SMP_EXPO_N - 1)];
	return 1;
}

/* Sizes below, at and far above the period: each estimate within 2%. */
START_TEST(test_sampling_is_unbiased)
{
	static const uint64_t sizes[] = { 64, 4096, 16384, 100000, 1 << 20 };
	const uint64_t period = 16384;
	unsigned seed = 42;

	smp_expo_fill(table, SMP_EXPO_N, period);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		int64_t left = (int64_t)table[0] / 2;
		double est = 0, truth = 0;

		for (long i = 0; i < 2000000; i++) {
			truth += (double)sizes[k];
			if (countdown(&left, sizes[k], &seed))
				est += smp_unbias(sizes[k], period);
		}
		ck_assert_msg(fabs(est / truth - 1) < 0.02, "size %llu: estimate %.0f, truth %.0f",
			      (unsigned long long)sizes[k], est, truth);
	}
}
END_TEST

START_TEST(test_unbias_limits)
{
	ck_assert(fabs(smp_unbias(1, 524288) - 524288) < 1);
	ck_assert(fabs(smp_unbias(1 << 30, 524288) - (1 << 30)) < 1);
	ck_assert(smp_unbias(0, 524288) == 0);
}
END_TEST

START_TEST(test_profile_parses)
{
	struct smp_profile *p = smp_profile_new(16384);
	const uint64_t a[] = { 0x401000, 0x402010, 0x403020, 0x404030 }, b[] = { 0x401000, 0x405000 };
	double alloc, inuse;
	uint64_t live;
	char *text, msg[256];
	size_t len;
	jma_heap *h;

	ck_assert_ptr_nonnull(p);
	for (uint64_t id = 0; id < 100; id++) {
		ck_assert_int_eq(smp_profile_add(p, id, 4096, a, 4), 0);
		smp_profile_returned(p, id);
		if (id % 2)
			smp_profile_freed(p, id);
	}
	/* Ids from the BPF side: a lost one leaves a hole. */
	for (uint64_t id = 101; id < 111; id++)
		ck_assert_int_eq(smp_profile_add(p, id, 100, b, 2), 0);
	ck_assert_int_eq(smp_profile_add(p, SMP_MAX_RECORDS, 1, b, 2), -E2BIG);
	smp_profile_totals(p, &alloc, &inuse, &live);
	ck_assert_uint_eq(live, 50);
	ck_assert(fabs(inuse - 50 * smp_unbias(4096, 16384)) < 1);
	ck_assert_int_eq(smp_profile_write(p, "00400000-00410000 r-xp 00000000 08:01 1 /bin/x\n",
					   &text, &len), 0);
	ck_assert_msg(!strncmp(text, "heap_v2/16384\n  t*: 50: 204800 [110: 410600]\n", 45), "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "@ 0x401000 0x402010 0x403020 0x404030\n  t*: 50: 204800 "
					   "[100: 409600]\n"));
	ck_assert_ptr_nonnull(strstr(text, "@ 0x401000 0x405000\n  t*: 0: 0 [10: 1000]\n"));
	ck_assert_msg(jma_heap_parse(text, len, "sampled", &h, msg, sizeof(msg)) == 0, "%s", msg);
	jma_heap_free(h);
	free(text);
	smp_profile_free(p);
}
END_TEST

/* jemalloc 5.3's malloc fast path as Debian's library has it: the TLS offset
 * from a GOT slot, then thread_allocated and the event threshold beside it
 * (the instructions are the machine's: attach/arch/ARCH/tpcode.c). */
static int64_t got_slot = -0x5b8;

#if defined(__x86_64__)
START_TEST(test_counter_from_code)
{
	/* Static, as the slot: within a rel32 of each other. */
	static unsigned char code[64] = {
		0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00,	/* cmp $0x1000,%rdi */
		0x48, 0x8b, 0x0d, 0, 0, 0, 0,			/* mov GOT(%rip),%rcx */
		0x64, 0x48, 0x8b, 0x91, 0x38, 0x03, 0, 0,	/* mov %fs:0x338(%rcx),%rdx */
		0x48, 0x03, 0x14, 0xf0,				/* add (%rax,%rsi,8),%rdx */
		0x64, 0x48, 0x3b, 0x91, 0x40, 0x03, 0, 0,	/* cmp %fs:0x340(%rcx),%rdx */
		0xc3,
	};
	uint64_t at = (uint64_t)(uintptr_t)code;
	int32_t rel = (int32_t)((int64_t)(uintptr_t)&got_slot - (int64_t)(at + 14));
	int64_t off = 0;

	memcpy(code + 10, &rel, 4);
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), 0);
	ck_assert_int_eq(off, -0x5b8 + 0x338);

	/* A static copy: mov $imm32,%rcx. */
	memcpy(code + 7, (unsigned char[]){ 0x48, 0xc7, 0xc1, 0x48, 0xf0, 0xff, 0xff }, 7);
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), 0);
	ck_assert_int_eq(off, -0xfb8 + 0x338);

	/* The compare 16 bytes on (not the pair): no counter. */
	code[30] = 0x48;
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), -ENOENT);
}
END_TEST
#elif defined(__aarch64__)
START_TEST(test_counter_from_code)
{
	/* Debian bookworm's arm64 libjemalloc.so.2, malloc's first instructions. */
	static uint32_t code[16] = {
		0xf140041f,	/* cmp x0, #0x1, lsl #12 */
		0,		/* adrp x7, GOT page (set below) */
		0,		/* ldr x7, [x7, #GOT lo12] */
		0xd53bd046,	/* mrs x6, tpidr_el0 */
		0x8b0700cc,	/* add x12, x6, x7 */
		0xf941bd85,	/* ldr x5, [x12, #888] */
		0xf86b7822,	/* ldr x2, [x1, x11, lsl #3] */
		0xf941c188,	/* ldr x8, [x12, #896] */
		0xd65f03c0,	/* ret */
	};
	uint64_t at = (uint64_t)(uintptr_t)code, slot = (uint64_t)(uintptr_t)&got_slot;
	int64_t pages = (int64_t)(slot >> 12) - (int64_t)((at + 4) >> 12), off = 0;

	code[1] = 0x90000007u | (uint32_t)(pages & 3) << 29 | (uint32_t)(pages >> 2 & 0x7ffff) << 5;
	code[2] = 0xf94000e7u | (uint32_t)((slot & 0xfff) / 8) << 10;
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), 0);
	ck_assert_int_eq(off, -0x5b8 + 888);

	/* Linked into an executable: the GOT load made movz, movk (IE to LE). */
	code[1] = 0xd2a00007u;	/* movz x7, #0x0, lsl #16 */
	code[2] = 0xf2800207u;	/* movk x7, #0x10 */
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), 0);
	ck_assert_int_eq(off, 0x10 + 888);

	/* A static copy: the offset added to the thread pointer itself. */
	code[1] = 0xd53bd04cu;	/* mrs x12, tpidr_el0 */
	code[2] = 0x9100418cu;	/* add x12, x12, #0x10 */
	code[3] = 0xd503201fu;	/* nop */
	code[4] = 0xd503201fu;
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), 0);
	ck_assert_int_eq(off, 0x10 + 888);

	/* The second load 16 bytes on (not the pair): no counter. */
	code[7] = 0xf941c588;	/* ldr x8, [x12, #904] */
	ck_assert_int_eq(smp_counter_find(getpid(), at, sizeof(code), &off), -ENOENT);
}
END_TEST
#endif

Suite *suite_sampler(void)
{
	Suite *s = suite_create("sampler");
	TCase *t = tcase_create("model");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_sampling_is_unbiased);
	tcase_add_test(t, test_unbias_limits);
	tcase_add_test(t, test_profile_parses);
#if defined(__x86_64__) || defined(__aarch64__)
	tcase_add_test(t, test_counter_from_code);
#endif
	suite_add_tcase(s, t);
	return s;
}
