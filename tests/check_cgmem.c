/* check_cgmem.c -- the headroom decision on a cgroup tree built in a temp dir. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The room as our view reads it, checked against the same read as a process
 * (ourselves) through targetfs, the way a target's own mount is read. */
static uint64_t room_of(int v2, char *which)
{
	char dir[512], which2[4400];
	uint64_t room, room2;

	snprintf(dir, sizeof(dir), "%s/a/b", top);
	ck_assert_int_eq(proc_cgmem_room_dir(0, dir, top, v2, &room, which, 4400), 0);
	ck_assert_int_eq(proc_cgmem_room_dir(getpid(), dir, top, v2, &room2, which2, 4400), 0);
	ck_assert_uint_eq(room2, room);
	if (room != UINT64_MAX)
		ck_assert_ptr_nonnull(strstr(which2, " in process "));
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

/* Which line of /proc/PID/cgroup is the memory cgroup's: cgroup2's "0::"
 * line was once never recognized, so no cgroup2 limit was ever checked. */
START_TEST(test_cgmem_line)
{
	static const struct { const char *line; int kind; const char *cg; } c[] = {
		{ "0::/system.slice/redis-server.service", 1, "/system.slice/redis-server.service" },
		{ "0::/", 1, "/" },
		{ "4:memory:/process_api/x", 0, "/process_api/x" },
		{ "3:cpu,memory:/y", 0, "/y" },
		{ "5:cpuset:/", -1, NULL },
		{ "9:name=systemd:/", -1, NULL },
		{ "7:memory_other:/", -1, NULL },
		{ "1:", -1, NULL },
		{ "garbage", -1, NULL },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char line[128], *cg = NULL;

		snprintf(line, sizeof(line), "%s", c[i].line);
		ck_assert_msg(proc_cgmem_line(line, &cg) == c[i].kind, "%s", c[i].line);
		if (c[i].cg)
			ck_assert_str_eq(cg, c[i].cg);
	}
}
END_TEST

/* Which mount shows a cgroup.  A jemattach in a container with a cgroup
 * namespace of its own sees a target's cgroup above its root ("/../x"): its
 * own mount cannot show it, and joining the path to it once read a file that
 * was not there, so the target's limit went unseen and our call got it
 * OOM-killed. */
START_TEST(test_cgmem_under)
{
	static const struct { const char *cg, *root, *rest; } c[] = {
		{ "/system.slice/redis.service", "/", "/system.slice/redis.service" },
		{ "/", "/", "" },
		{ "/docker/abc", "/docker/abc", "" },
		{ "/docker/abc/x", "/docker/abc", "/x" },
		{ "/docker/abcd", "/docker/abc", NULL },
		{ "/other", "/docker/abc", NULL },
		{ "/../jtA", "/", NULL },
		{ "/../../a/b", "/", NULL },
		{ "/../jtA", "/..", "/jtA" },
		{ "/../jtA/x", "/../jtA", "/x" },
		{ "/a/..b", "/", "/a/..b" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		const char *rest = proc_cgmem_under(c[i].cg, c[i].root);

		if (!c[i].rest)
			ck_assert_msg(!rest, "%s under %s: %s", c[i].cg, c[i].root, rest);
		else
			ck_assert_msg(rest && !strcmp(rest, c[i].rest), "%s under %s: %s, not %s",
				      c[i].cg, c[i].root, rest ? rest : "(none)", c[i].rest);
	}
}
END_TEST

/* The mount table of a hybrid host (v1 memory, cgroup2 unified) and of a
 * container that sees a subtree. */
START_TEST(test_cgmem_mount)
{
	static const char hybrid[] =
		"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	static const char container[] =
		"700 690 0:32 /docker/abc /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n";
	char text[512], point[1024], root[1024];

	snprintf(text, sizeof(text), "%s", hybrid);
	ck_assert_int_eq(proc_cgmem_mount(text, 0, point, sizeof(point), root, sizeof(root)), 0);
	ck_assert_str_eq(point, "/sys/fs/cgroup/memory");
	ck_assert_str_eq(root, "/");
	snprintf(text, sizeof(text), "%s", hybrid);
	ck_assert_int_eq(proc_cgmem_mount(text, 1, point, sizeof(point), root, sizeof(root)), 0);
	ck_assert_str_eq(point, "/sys/fs/cgroup/unified");
	snprintf(text, sizeof(text), "%s", container);
	ck_assert_int_eq(proc_cgmem_mount(text, 1, point, sizeof(point), root, sizeof(root)), 0);
	ck_assert_str_eq(point, "/sys/fs/cgroup");
	ck_assert_str_eq(root, "/docker/abc");
	snprintf(text, sizeof(text), "%s", container);
	ck_assert_int_eq(proc_cgmem_mount(text, 0, point, sizeof(point), root, sizeof(root)), -ENOENT);
}
END_TEST

Suite *suite_cgmem(void)
{
	Suite *s = suite_create("cgmem");
	TCase *tc = tcase_create("fake_tree");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cgmem_v2_max_high_and_ancestors);
	tcase_add_test(tc, test_cgmem_v1_unlimited_is_huge);
	tcase_add_test(tc, test_cgmem_line);
	tcase_add_test(tc, test_cgmem_mount);
	tcase_add_test(tc, test_cgmem_under);
	suite_add_tcase(s, tc);
	return s;
}
