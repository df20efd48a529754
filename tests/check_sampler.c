/* check_sampler.c -- the sampler's model and profile: thresholds drawn from
 * the exponential table and counted down as the BPF program does give
 * unbiased byte estimates once jeprof's formula is applied; the heap_v2 it
 * writes parses, with the counts it was given, and samples of other rates
 * and of bursts weigh what they stand for; the guard keeps a quiet process
 * probed at every call and moves a busy one to bursts within its budget. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach.h>

#include <unistd.h>

#include "sampler/counter.h"
#include "sampler/events.h"
#include "sampler/guard.h"
#include "sampler/profile.h"
#include "sampler/sites.h"

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
		ck_assert_int_eq(smp_profile_add(p, id, 4096, 0, 0, a, 4), 0);
		smp_profile_returned(p, id, 0x7f0000000000 + id * 4096);
		if (id % 2)
			smp_profile_freed(p, id);
	}
	/* Ids from the BPF side: a lost one leaves a hole. */
	for (uint64_t id = 101; id < 111; id++)
		ck_assert_int_eq(smp_profile_add(p, id, 100, 0, 0, b, 2), 0);
	ck_assert_int_eq(smp_profile_add(p, SMP_MAX_RECORDS, 1, 0, 0, b, 2), -E2BIG);
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

/* The estimate of a parsed profile's bytes (jeprof's unbiasing), in use or all. */
static double parsed_bytes(const char *text, size_t len, int alloc)
{
	struct jma_heap_report_opts ro = { .sz = sizeof(ro), .format = JMA_HEAP_TEXT,
					   .sample = alloc ? JMA_HEAP_ALLOC_SPACE : JMA_HEAP_INUSE_SPACE };
	struct jma_heap_site *s = NULL;
	double total = 0;
	size_t n = 0;
	char msg[256];
	jma_heap *h;

	ck_assert_msg(jma_heap_parse(text, len, "sampled", &h, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(jma_heap_sites(h, &ro, &s, &n, &total), 0);
	free(s);
	jma_heap_free(h);
	return total;
}

/* Samples of a finer rate and of bursts standing for more: the profile's
 * period is the finest, and readers' unbiasing gives back the estimate. */
START_TEST(test_profile_weights)
{
	struct smp_profile *p = smp_profile_new(1 << 19);
	const uint64_t a[] = { 0x401000, 0x402010 }, b[] = { 0x401000, 0x405000 }, c[] = { 0x406000 };
	double alloc, inuse;
	uint64_t live, id = 0, ptr;
	struct smp_unfreed *v;
	char *text;
	size_t len, n;

	ck_assert_ptr_nonnull(p);
	for (int i = 0; i < 300; i++, id++) {
		/* Every call at 2^14 and 2^15, then bursts at 2^10. */
		ck_assert_int_eq(smp_profile_add(p, id, 4096 + (uint64_t)(i % 3) * 16, i < 200 ? 5 : 9,
						 0, i % 2 ? a : b, 2), 0);
		smp_profile_returned(p, id, 0x10000 + id * 16);
		if (i % 4 == 0)
			smp_profile_freed(p, id);
	}
	ck_assert_int_eq(smp_profile_add(p, id, 100, 9, 0, c, 1), 0);	/* never returned */
	smp_profile_scale(p, 200, 37.5);
	smp_profile_totals(p, &alloc, &inuse, &live);
	ck_assert_uint_eq(live, 225);
	ck_assert_int_eq(smp_profile_write(p, "", &text, &len), 0);
	ck_assert_msg(!strncmp(text, "heap_v2/1024\n", 13), "%s", text);
	ck_assert_msg(fabs(parsed_bytes(text, len, 1) / alloc - 1) < 0.01, "%s", text);
	ck_assert_msg(fabs(parsed_bytes(text, len, 0) / inuse - 1) < 0.01, "%s", text);
	ck_assert_int_eq(smp_profile_unfreed(p, &v, &n), 0);
	ck_assert_uint_eq(n, 225);
	ptr = v[0].ptr;
	ck_assert_uint_eq(ptr, 0x10000 + 16);
	free(v);
	free(text);
	smp_profile_free(p);
}
END_TEST

/* A sample of an entry probed all the time (Redis's calloc: its dict tables)
 * stands for itself among bursts' samples: a 16 MiB table sampled in a burst
 * of scale 2000 read as 32 GiB, 98% of the profile. */
START_TEST(test_profile_exact_not_scaled)
{
	struct smp_profile *p = smp_profile_new(1 << 19);
	const uint64_t a[] = { 0x401000 }, b[] = { 0x402000 };
	double alloc, inuse, w = smp_unbias(1000, 1 << 9);
	uint64_t live;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(smp_profile_add(p, 0, 1000, 10, 0, a, 1), 0);
	ck_assert_int_eq(smp_profile_add(p, 1, 16 << 20, 10, 1, b, 1), 0);
	smp_profile_returned(p, 0, 0x10000);
	smp_profile_returned(p, 1, 0x20000);
	smp_profile_scale(p, 0, 2000);
	smp_profile_totals(p, &alloc, &inuse, &live);
	ck_assert_uint_eq(live, 2);
	ck_assert_msg(fabs(inuse - (2000 * w + smp_unbias(16 << 20, 1 << 9))) < 1, "%f", inuse);
	smp_profile_free(p);
}
END_TEST

/* A period of the window, as window.c measures it. */
static struct smp_period period(double wall, double calls, double frees, double base, double run,
				double busiest)
{
	return (struct smp_period){ .wall = wall, .calls = calls, .frees = frees, .base = base,
				    .calls_on = wall, .run = run, .busiest = busiest };
}

static void guard_init(struct smp_guard *g)
{
	memset(g, 0, sizeof(*g));
	g->budget = 0.05;
	g->level = SMP_EVERY_CALL;
	g->frees = g->base = 1;
	g->max_shift = 13;
}

/* Half a second of a busy target with one burst of @cost CPU seconds in it
 * (30 ms in place, 2 ms of slow paths), its progress @lost. */
static struct smp_period one_burst(double cost, double lost)
{
	struct smp_period p = period(0.5, cost, 0, 0.002, 0.45, 1);

	p.calls_on = 0.03;
	p.bursts = 1;
	p.lost = lost;
	return p;
}

/* The period the bursts began in: its hits are mostly every call's last ones
 * (Redis: 40 ms against 6-11 ms a burst after), nothing is learned from it. */
static void bursts_begun(struct smp_guard *g)
{
	struct smp_period p = one_burst(0.040, 0.3);

	ck_assert(g->fresh);
	smp_guard_check(g, &p, 1, 0);
	ck_assert(g->burst_cost == 0 && g->burst_len == 0 && g->k == 0 && !g->fresh);
}

/* leakfix as measured: 10 ms of its own CPU and 8 of probes in 0.5 s, its
 * thread busy 10%: 5% of a CPU could go to probes; every call stays probed. */
START_TEST(test_guard_quiet_process_keeps_every_call)
{
	struct smp_guard g;
	struct smp_period p = period(0.5, 0.006, 0.002, 0, 0.018, 0.10);

	guard_init(&g);
	ck_assert(fabs(smp_guard_allowed(0.05, &p) - 0.045) < 1e-9);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(smp_guard_check(&g, &p, 1, i == 0), 0);
	ck_assert_int_eq(g.level, SMP_EVERY_CALL);
}
END_TEST

/* Redis under load: its thread always runnable, every call probed costs most
 * of its CPU: bursts, at a rate whose measured cost stays within 5% of the
 * CPU it gets; the free slow paths go when they alone pass it; with nothing
 * left, the end. */
START_TEST(test_guard_busy_process_degrades)
{
	struct smp_guard g;
	struct smp_period p = period(0.1, 0.045, 0.035, 0, 0.09, 1);
	int ch;

	guard_init(&g);
	ch = smp_guard_check(&g, &p, 1, 1);
	ck_assert_int_eq(ch, SMP_G_BURSTS | SMP_G_FREES_OFF | SMP_G_RATE);
	ck_assert_int_eq(g.level, SMP_BURSTS);
	ck_assert(fabs(g.full_rate - 0.8) < 1e-9 && fabs(g.full_allowed - 0.045) < 1e-9);
	/* Planned: half the room, at a burst's guessed length. */
	ck_assert(g.rate * g.calls_rate * SMP_BURST_GUESS_S <= g.allowed / 2 + 1e-9);
	ck_assert_uint_gt(g.shift, 0);
	bursts_begun(&g);
	/* Two bursts of 30 ms each cost 20 ms: at 60% of the room, 0.6 * 0.045 / 0.02. */
	p = period(0.5, 0.040, 0, 0.002, 0.45, 1);
	p.calls_on = 0.06;
	p.bursts = 2;
	ch = smp_guard_check(&g, &p, 1, 0);
	ck_assert(fabs(g.burst_cost - 0.02) < 1e-9 && fabs(g.burst_len - 0.03) < 1e-9);
	ck_assert(fabs(g.rate - 0.6 * (0.045 - 0.004) / 0.02) < 1e-6);
	ck_assert(fabs(g.duty - g.rate * 0.03) < 1e-9);
	ck_assert_int_eq(ch, SMP_G_RATE);
	/* The slow paths alone past the budget: removed. */
	p = period(0.5, 0, 0, 0.03, 0.45, 1);
	p.calls_on = 0;
	ck_assert_int_eq(smp_guard_check(&g, &p, 1, 0) & SMP_G_BASE_OFF, SMP_G_BASE_OFF);
	ck_assert_int_eq(g.base, 0);
	/* A burst costing a CPU second, over at the slowest rate, nothing else to
	 * give up: the end. */
	g.rate = SMP_RATE_MIN;
	p = period(10, 2.0, 0, 0, 9, 1);
	p.calls_on = 5;
	p.bursts = 1;
	ck_assert_int_eq(smp_guard_check(&g, &p, 1, 0) & SMP_G_OVER, SMP_G_OVER);
}
END_TEST

/* What the target lost of its progress (its counter) against the hits'
 * direct share of its CPU: k, which the planned cost of a burst is scaled
 * by; not on a target with room (an idle one does not lose throughput). */
START_TEST(test_guard_learns_k)
{
	struct smp_guard g;
	struct smp_period p = period(0.1, 0.045, 0.035, 0, 0.09, 1);
	double rate;

	guard_init(&g);
	smp_guard_check(&g, &p, 1, 1);
	bursts_begun(&g);
	/* One burst costing 20 ms of 450 (4.4%, 0.4% slow paths), the progress 13% less. */
	p = one_burst(0.020, 0.13);
	smp_guard_check(&g, &p, 1, 0);
	ck_assert(fabs(g.k - 0.13 / (0.022 / 0.45)) < 1e-6);
	rate = g.rate;
	ck_assert(fabs(rate - 0.6 * (0.045 - 0.004 * g.k) / (0.02 * g.k)) < 1e-6);
	/* The same on a target with room: k as it was. */
	p.busiest = 0.3;
	p.lost = 0.5;
	smp_guard_check(&g, &p, 1, 0);
	ck_assert(fabs(g.k - 0.13 / (0.022 / 0.45)) < 1e-6);
}
END_TEST

/* A loss read from one burst's period (36%: k held at SMP_K_MAX) does not
 * push the bursts below the few a window needs for a profile while their
 * direct cost fits the plan (one in a 10 s window of Redis before, its top
 * site missed); when it does not fit, the plan's direct cost bounds them. */
START_TEST(test_guard_k_keeps_the_bursts_a_profile_needs)
{
	struct smp_guard g;
	struct smp_period p = period(0.1, 0.045, 0.035, 0, 0.09, 1);

	guard_init(&g);
	g.min_rate = SMP_BURSTS_MIN / 10.0;
	smp_guard_check(&g, &p, 1, 1);
	bursts_begun(&g);
	p = one_burst(0.020, 0.36);
	smp_guard_check(&g, &p, 1, 0);
	ck_assert(fabs(g.k - SMP_K_MAX) < 1e-9);
	/* By k alone: 0.6 * (0.045 - 0.004 * 5) / (0.02 * 5) = 0.15 a second;
	 * the floor's 0.5 instead (or the rate before, within the quarter
	 * that counts as noise). */
	ck_assert(g.rate >= 0.75 * g.min_rate - 1e-9);
	/* Bursts of 100 ms of CPU: 0.6 * 0.025 / 0.1 = 0.15 a second fit, no more. */
	p = one_burst(0.100, 0.36);
	for (int i = 0; i < 8; i++)
		smp_guard_check(&g, &p, 1, 0);
	ck_assert(g.rate < g.min_rate);
	ck_assert(g.rate * g.burst_cost <= 0.6 * (0.045 - 0.004 * g.k) * 1.25 + 1e-9);
}
END_TEST

/* A busy thread that is not always runnable has room; a starved one (always
 * runnable, a quarter of a CPU) only 5% of what it gets; no budget, no
 * change. */
START_TEST(test_guard_allowed)
{
	struct smp_period half = period(1, 0, 0, 0, 0.5, 0.5), starved = period(1, 0, 0, 0, 0.25, 1);
	struct smp_guard g;

	ck_assert(fabs(smp_guard_allowed(0.05, &half) - 0.025) < 1e-9);
	ck_assert(fabs(smp_guard_allowed(0.05, &starved) - 0.0125) < 1e-9);
	guard_init(&g);
	g.budget = 0;
	starved.calls = 0.25;
	ck_assert_int_eq(smp_guard_check(&g, &starved, 1, 0), 0);
	ck_assert_int_eq(g.level, SMP_EVERY_CALL);
}
END_TEST

/* An automatic rate: 2^5 finer to start with, sparser at once past 200
 * samples a second (800 -> two steps), finer again a step at a time. */
START_TEST(test_guard_sample_rate)
{
	struct smp_guard g;
	struct smp_period p = period(0.5, 0, 0, 0, 0.01, 0.02);

	guard_init(&g);
	g.budget = 0;
	g.auto_rate = 1;
	g.fine = g.fine_max = 5;
	g.shift = smp_guard_shift(&g);
	ck_assert_uint_eq(g.shift, 5);
	p.samples = 800;
	ck_assert_int_eq(smp_guard_check(&g, &p, 1, 0), SMP_G_RATE);
	ck_assert_uint_eq(g.shift, 3);
	p.samples = 20;
	ck_assert_int_eq(smp_guard_check(&g, &p, 1, 0), SMP_G_RATE);
	ck_assert_uint_eq(g.shift, 4);
	/* Not while following frees only. */
	ck_assert_int_eq(smp_guard_check(&g, &p, 0, 0), 0);
}
END_TEST

/* The bursts' sites: the most hit, up to 99% of each kind's hits, the C
 * library's four, and the realloc-like ones hit at all. */
START_TEST(test_sites_hot)
{
	struct smp_site v[7] = { { .frees = 0 }, { .frees = 0 }, { .frees = 1 }, { .frees = 0 },
				 { .frees = 1 }, { .frees = 0, .cookie = SMP_COOKIE(2, 0, 1, 0, 0, 0) },
				 { .frees = 0, .core = 1 } };
	uint64_t hits[7] = { 9000, 20, 9500, 980, 0, 3, 0 }, none[7] = { 0 };

	/* rallocx (5) with 3 hits of 10003: in, as it moves blocks; calloc (6),
	 * not hit in the tenth of a second: in. */
	ck_assert_uint_eq(smp_sites_hot(v, 7, hits, 0.99), 0x1 | 0x8 | 0x4 | 0x20 | 0x40);
	ck_assert_uint_eq(smp_sites_hot(v, 7, none, 0.99), 0x7f);
}
END_TEST

/* The allocation entries hit at most 0.1% of the allocation entries' hits
 * (10003 here): rallocx's 3, calloc's none, not 20 of 10003; no free; none
 * when nothing was hit. */
START_TEST(test_sites_cold)
{
	struct smp_site v[7] = { { .frees = 0 }, { .frees = 0 }, { .frees = 1 }, { .frees = 0 },
				 { .frees = 1 }, { .frees = 0, .cookie = SMP_COOKIE(2, 0, 1, 0, 0, 0) },
				 { .frees = 0, .core = 1 } };
	uint64_t hits[7] = { 9000, 20, 9500, 980, 0, 3, 0 }, none[7] = { 0 };

	ck_assert_uint_eq(smp_sites_cold(v, 7, hits, 0.001), 0x20 | 0x40);
	ck_assert_uint_eq(smp_sites_cold(v, 7, none, 0.001), 0);
}
END_TEST

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
	tcase_add_test(t, test_profile_weights);
	tcase_add_test(t, test_profile_exact_not_scaled);
	tcase_add_test(t, test_guard_quiet_process_keeps_every_call);
	tcase_add_test(t, test_guard_busy_process_degrades);
	tcase_add_test(t, test_guard_learns_k);
	tcase_add_test(t, test_guard_k_keeps_the_bursts_a_profile_needs);
	tcase_add_test(t, test_guard_allowed);
	tcase_add_test(t, test_guard_sample_rate);
	tcase_add_test(t, test_sites_hot);
	tcase_add_test(t, test_sites_cold);
#if defined(__x86_64__) || defined(__aarch64__)
	tcase_add_test(t, test_counter_from_code);
#endif
	suite_add_tcase(s, t);
	return s;
}
