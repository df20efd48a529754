/* check_cgmem.c -- the headroom decision on a cgroup tree built in a temp dir. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tutil.h"
#include "process/cgmem.h"

static char top[] = "/tmp/jemattach-cg.XXXXXX";

static void put(const char *rel, const char *text)
{
	tput(top, rel, text);
}

static void setup(void)
{
	char p[512];

	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/a", top);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/b", top);
	mkdir(p, 0755);
}

static void teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(top, "/tmp/jemattach-cg.XXXXXX");
}

static uint64_t room_of(int v2, char *which)
{
	char dir[512];
	uint64_t room;

	snprintf(dir, sizeof(dir), "%s/a/b", top);
	ck_assert_int_eq(jma_cgmem_room_dir(dir, top, v2, &room, which, 4400), 0);
	return room;
}

START_TEST(test_cgmem_v2_max_high_and_ancestors)
{
	char which[4400];

	put("a/b/memory.current", "1000000\n");
	put("a/b/memory.max", "max\n");
	put("a/b/memory.high", "max\n");
	ck_assert(room_of(1, which) == UINT64_MAX);
	/* A parent's limit counts, with the parent's own usage. */
	put("a/memory.current", "5000000\n");
	put("a/memory.max", "5100000\n");
	ck_assert_uint_eq(room_of(1, which), 100000);
	ck_assert_ptr_nonnull(strstr(which, "/a/memory.max = 5100000, 5000000 in use"));
	/* memory.high throttles: it is a limit too. */
	put("a/b/memory.high", "1050000\n");
	ck_assert_uint_eq(room_of(1, which), 50000);
	ck_assert(room_of(1, which) < JMA_CGMEM_FIRST_CALL);
	/* Over the limit already: no room at all. */
	put("a/b/memory.max", "900000\n");
	ck_assert_uint_eq(room_of(1, which), 0);
}
END_TEST

START_TEST(test_cgmem_v1_unlimited_is_huge)
{
	char which[4400];

	put("a/b/memory.usage_in_bytes", "1000000\n");
	put("a/b/memory.limit_in_bytes", "9223372036854771712\n");
	ck_assert(room_of(0, which) == UINT64_MAX);
	put("a/b/memory.limit_in_bytes", "1131072\n");
	ck_assert_uint_eq(room_of(0, which), 131072);
	ck_assert(room_of(0, which) < JMA_CGMEM_FIRST_CALL);
	put("a/b/memory.limit_in_bytes", "67108864\n");
	ck_assert(room_of(0, which) >= JMA_CGMEM_FIRST_CALL);
}
END_TEST

Suite *suite_cgmem(void)
{
	Suite *s = suite_create("cgmem");
	TCase *tc = tcase_create("fake_tree");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cgmem_v2_max_high_and_ancestors);
	tcase_add_test(tc, test_cgmem_v1_unlimited_is_huge);
	suite_add_tcase(s, tc);
	return s;
}
