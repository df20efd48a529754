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

Suite *suite_sampler(void)
{
	Suite *s = suite_create("sampler");
	TCase *t = tcase_create("model");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_sampling_is_unbiased);
	tcase_add_test(t, test_unbias_limits);
	tcase_add_test(t, test_profile_parses);
	suite_add_tcase(s, t);
	return s;
}
