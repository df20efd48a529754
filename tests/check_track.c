/* check_track.c -- per-site tracking over synthetic heap profiles (pure logic, no target). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jemattach.h>

#include "series/track_priv.h"

/* Snapshot @k of three sites, sample period 1 (values exact):
 *   0x1000: leaks 10 objects (1000 bytes) per snapshot
 *   0x1100: holds 5 objects, allocates (and frees) 100 (10000 bytes) per snapshot
 *   0x1200: 3 objects allocated once
 * Without @accum the accumulated counts are 0, as without opt.prof_accum. */
static char *profile(unsigned k, int accum, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	unsigned lo = 10 * (k + 1), co = 5 + 100 * k;

	fprintf(f, "heap_v2/1\n  t*: %u: %u [0: 0]\n", lo + 5 + 3, 100 * (lo + 5 + 3));
	fprintf(f, "@ 0x1000 0x2000\n  t*: %u: %u [%u: %u]\n", lo, 100 * lo, accum ? lo : 0,
		accum ? 100 * lo : 0);
	fprintf(f, "@ 0x1100 0x2100\n  t*: 5: 500 [%u: %u]\n", accum ? co : 0, accum ? 100 * co : 0);
	fprintf(f, "@ 0x1200\n  t*: 3: 300 [%u: %u]\n", accum ? 3 : 0, accum ? 300 : 0);
	fprintf(f, "\nMAPPED_LIBRARIES:\n");
	fclose(f);
	return buf;
}

static jma_track *track_of(unsigned n, int accum, FILE *log)
{
	jma_track *t = jma_track_new(NULL);

	ck_assert_ptr_nonnull(t);
	for (unsigned k = 0; k < n; k++) {
		struct jma_track_meta m = { .time = 1000 + 2.0 * k, .allocated = 1 << 20, .hold_ns = 1000 };
		size_t len;
		char *p = profile(k, accum, &len);

		ck_assert_msg(jma_track_add(t, p, len, "synthetic", &m) == 0, "%s", jma_track_errmsg(t));
		free(p);
		if (log)
			ck_assert_int_eq(jma_track_write_last(t, JMA_TRACK_JSONL, log), 0);
	}
	return t;
}

static const struct jma_track_rank *find(const struct jma_track_rank *r, size_t n, const char *nm)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, nm))
			return &r[i];
	ck_abort_msg("no site %s", nm);
	return NULL;
}

START_TEST(test_track_ranking)
{
	jma_track *t = track_of(5, 1, NULL);
	struct jma_track_rank *r;
	const struct jma_track_rank *x;
	size_t n;

	ck_assert_int_eq(jma_track_ranking(t, &r, &n), 0);
	ck_assert_uint_eq(n, 3);
	/* The leak first, growing every interval, 1000 bytes per 2 s. */
	ck_assert_str_eq(r[0].name, "0x1000");
	ck_assert(r[0].growing);
	ck_assert_uint_eq(r[0].grew, 4);
	ck_assert_uint_eq(r[0].intervals, 4);
	ck_assert_double_eq_tol(r[0].bytes_per_s, 500, 1e-6);
	ck_assert_double_eq_tol(r[0].objs_per_s, 5, 1e-6);
	ck_assert_double_eq_tol(r[0].r2, 1, 1e-9);
	/* The churner: 40000 bytes allocated and freed over the track, flat. */
	x = find(r, n, "0x1100");
	ck_assert(!x->growing);
	ck_assert_uint_eq(x->grew, 0);
	ck_assert_double_eq_tol(x->alloc_total, 40000, 1e-6);
	ck_assert_double_eq_tol(x->free_total, 40000, 1e-6);
	ck_assert(!x->estimated);
	x = find(r, n, "0x1200");
	ck_assert(!x->growing);
	ck_assert_double_eq_tol(x->live_last, 300, 1e-6);
	ck_assert_str_eq(x->confidence, "low: 3 samples");
	free(r);
	jma_track_free(t);
}
END_TEST

START_TEST(test_track_estimates_without_accum)
{
	jma_track *t = track_of(5, 0, NULL);
	struct jma_track_rank *r;
	size_t n;

	ck_assert_int_eq(jma_track_ranking(t, &r, &n), 0);
	ck_assert_str_eq(r[0].name, "0x1000");
	ck_assert(r[0].estimated);
	/* Only live growth is seen: the leak's, none of the churner's. */
	ck_assert_double_eq_tol(r[0].alloc_total, 4000, 1e-6);
	ck_assert_double_eq_tol(find(r, n, "0x1100")->alloc_total, 0, 1e-6);
	free(r);
	jma_track_free(t);
}
END_TEST

START_TEST(test_track_text_log)
{
	jma_track *t = track_of(2, 1, NULL);
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(jma_track_write_last(t, JMA_TRACK_TEXT, f), 0);
	fclose(f);
	static const char head[] =
		"[1]==== +2.00s churn 10.7 KiB allocated 1.0 MiB hold 0.00 ms sites 3\n";

	ck_assert_msg(!strncmp(buf, head, sizeof(head) - 1), "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "alloc_curr 9.8 KiB alloc_total 10.3 KiB free_curr 9.8 KiB "
				     "free_total 9.8 KiB\n    #0 0x1100\n    #1 0x20ff\n"));
	free(buf);
	jma_track_free(t);
}
END_TEST

/* What the sampler cannot know (no stats read, no thread held) is written as
 * unknown, not as a zero that reads like a measurement. */
START_TEST(test_track_unknown_meta)
{
	jma_track *t = jma_track_new(NULL);
	struct jma_track_meta m = { .time = 1000 };
	char *buf = NULL, *p;
	size_t len, plen;
	FILE *f = open_memstream(&buf, &len);

	p = profile(0, 1, &plen);
	ck_assert_int_eq(jma_track_add(t, p, plen, "sampled", &m), 0);
	ck_assert_int_eq(jma_track_write_last(t, JMA_TRACK_TEXT, f), 0);
	ck_assert_int_eq(jma_track_write_last(t, JMA_TRACK_JSONL, f), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, " allocated - hold - sites ") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "\"allocated\":null") && strstr(buf, "\"hold_ns\":null"), "%s", buf);
	free(p);
	free(buf);
	jma_track_free(t);
}
END_TEST

START_TEST(test_track_jsonl_round_trip)
{
	char path[] = "/tmp/check_track.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	jma_track *t = track_of(5, 1, f), *u = jma_track_new(NULL);
	struct jma_track_rank *r, *s;
	size_t n, m;

	fclose(f);
	ck_assert_msg(jma_track_load(u, path) == 0, "%s", jma_track_errmsg(u));
	ck_assert_uint_eq(jma_track_nsnapshots(u), 5);
	ck_assert_int_eq(jma_track_ranking(t, &r, &n), 0);
	ck_assert_int_eq(jma_track_ranking(u, &s, &m), 0);
	ck_assert_uint_eq(n, m);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(r[i].id, s[i].id);
		ck_assert_str_eq(r[i].name, s[i].name);
		ck_assert_double_eq_tol(r[i].bytes_per_s, s[i].bytes_per_s, 1e-6);
		ck_assert_double_eq_tol(r[i].alloc_total, s[i].alloc_total, 1e-6);
	}
	free(r);
	free(s);
	jma_track_free(t);
	jma_track_free(u);
	unlink(path);
}
END_TEST

/* A long track keeps its memory bounded: the chart history is thinned, the
 * fit is still over every snapshot. */
START_TEST(test_track_long)
{
	jma_track *t = track_of(600, 1, NULL);
	struct jma_track_rank *r;
	char *buf = NULL;
	size_t n, len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_uint_eq(jma_track_nsnapshots(t), 600);
	ck_assert_int_eq(jma_track_ranking(t, &r, &n), 0);
	ck_assert_str_eq(r[0].name, "0x1000");
	ck_assert_uint_eq(r[0].grew, 599);
	ck_assert_double_eq_tol(r[0].bytes_per_s, 500, 1e-6);
	ck_assert_double_eq_tol(r[0].alloc_total, 599000, 1e-6);
	ck_assert_int_eq(jma_track_svg(t, 3, "t", f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "600 snapshots over 1198.0 s (every few shown)"));
	ck_assert_ptr_nonnull(strstr(buf, ">560</text>"));	/* x labels count snapshots */
	free(buf);
	free(r);
	jma_track_free(t);
}
END_TEST

/* A new stack symbolizes only its addresses not seen before. */
START_TEST(test_track_symbolizes_each_address_once)
{
	static const char *const p[] = {
		"heap_v2/1\n  t*: 1: 8 [0: 0]\n@ 0x1000 0x2000\n  t*: 1: 8 [0: 0]\n\nMAPPED_LIBRARIES:\n",
		"heap_v2/1\n  t*: 2: 16 [0: 0]\n@ 0x1000 0x2000\n  t*: 1: 8 [0: 0]\n"
		"@ 0x1000 0x3000\n  t*: 1: 8 [0: 0]\n\nMAPPED_LIBRARIES:\n",
	};
	jma_track *t = jma_track_new(NULL);

	for (int k = 0; k < 2; k++) {
		struct jma_track_meta m = { .time = k };
		ck_assert_int_eq(jma_track_add(t, p[k], strlen(p[k]), "p", &m), 0);
	}
	ck_assert_uint_eq(t->nsites, 2);
	ck_assert_uint_eq(t->naddrs, 3);	/* 0x1000, and the callers 0x1fff, 0x2fff */
	ck_assert_str_eq(t->sites[1].frames[0], "0x1000");
	ck_assert_str_eq(t->sites[1].frames[1], "0x2fff");
	jma_track_free(t);
}
END_TEST

/* A site's function is read from its frame's end: a demangled C++ name has
 * spaces and parentheses of its own. */
START_TEST(test_track_cxx_site_names)
{
	static const char *const fr[] = {
		"Allocator<false>::realloc(void*, unsigned long) (cxxsites.cc:39) [cxxsites]",
		"(anonymous namespace)::run(int (*)(int)) [libx.so]",
		"keep_big (heapsites.c:45)",
	};
	jma_track *t = jma_track_new(NULL);

	for (int k = 0; k < 2; k++) {
		ck_assert_int_ge(track_site(t, (uint64_t)k + 1), 0);
		ck_assert_int_eq(track_site_name(t, (size_t)k, fr + k, 2, NULL), 0);
	}
	ck_assert_str_eq(t->sites[0].name, "Allocator<false>::realloc(void*, unsigned long)");
	ck_assert_str_eq(t->sites[0].caller, "(anonymous namespace)::run(int (*)(int))");
	ck_assert_str_eq(t->sites[1].name, "(anonymous namespace)::run(int (*)(int))");
	ck_assert_str_eq(t->sites[1].caller, "keep_big");
	jma_track_free(t);
}
END_TEST

START_TEST(test_track_load_errors)
{
	char path[] = "/tmp/check_track.XXXXXX";
	int fd = mkstemp(path);
	jma_track *t = jma_track_new(NULL);

	ck_assert_int_eq(write(fd, "{\"snapshot\": 0}\n", 16), 16);
	close(fd);
	ck_assert_int_eq(jma_track_load(t, path), -EINVAL);
	ck_assert_ptr_nonnull(strstr(jma_track_errmsg(t), ":1: not a prof track record"));
	ck_assert_int_eq(jma_track_load(t, "/nonexistent/x"), -ENOENT);
	ck_assert_int_eq(jma_track_format_from_name("xml"), -EINVAL);
	jma_track_free(t);
	unlink(path);
}
END_TEST

Suite *suite_track(void)
{
	Suite *s = suite_create("track");
	TCase *tc = tcase_create("logic");

	tcase_add_test(tc, test_track_ranking);
	tcase_add_test(tc, test_track_estimates_without_accum);
	tcase_add_test(tc, test_track_text_log);
	tcase_add_test(tc, test_track_unknown_meta);
	tcase_add_test(tc, test_track_jsonl_round_trip);
	tcase_add_test(tc, test_track_long);
	tcase_add_test(tc, test_track_symbolizes_each_address_once);
	tcase_add_test(tc, test_track_load_errors);
	tcase_add_test(tc, test_track_cxx_site_names);
	suite_add_tcase(s, tc);
	return s;
}
