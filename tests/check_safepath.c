/* check_safepath.c -- paths walked for our output never follow another user's symlink. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/safepath.h"

/* Another local user (nobody's neighbour in /etc/passwd: any uid will do). */
#define EVIL 65533

static char root[] = "/tmp/jemattach-sp.XXXXXX";
static char msg[4096];

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(chmod(root, 0755), 0);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *at(const char *rel)
{
	static char p[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}

static void mkdir_at(const char *rel, mode_t mode, uid_t uid)
{
	ck_assert_int_eq(mkdir(at(rel), mode), 0);
	ck_assert_int_eq(chmod(at(rel), mode), 0);
	ck_assert_int_eq(chown(at(rel), uid, uid), 0);
}

/* A symbolic link @rel -> @target owned by @uid. */
static void link_at(const char *rel, const char *target, uid_t uid)
{
	ck_assert_int_eq(symlink(target, at(rel)), 0);
	ck_assert_int_eq(lchown(at(rel), uid, uid), 0);
}

/* Is @fd the directory @rel? */
static int is_dir(int fd, const char *rel)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(at(rel), &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

START_TEST(test_safepath_follows_trusted_links)
{
	struct jma_path_at w;

	mkdir_at("real", 0755, 0);
	mkdir_at("real/sub", 0755, 0);
	link_at("abs", at("real"), 0);
	link_at("rel", "real/sub/..", 0);
	link_at("real/sub/up", "../../rel", 0);
	link_at("last", "real/new", 0);
	ck_assert_int_eq(proc_path_walk(at("abs/f"), &w, msg, sizeof(msg)), 0);
	ck_assert_str_eq(w.name, "f");
	ck_assert(is_dir(w.dirfd, "real"));
	close(w.dirfd);
	/* Relative links resolve from the directory that holds them. */
	ck_assert_int_eq(proc_path_walk(at("real/sub/up/sub/g"), &w, msg, sizeof(msg)), 0);
	ck_assert_str_eq(w.name, "g");
	ck_assert(is_dir(w.dirfd, "real/sub"));
	close(w.dirfd);
	/* A link in last place: what it names (to be created). */
	ck_assert_int_eq(proc_path_walk(at("last"), &w, msg, sizeof(msg)), 0);
	ck_assert_str_eq(w.name, "new");
	ck_assert(is_dir(w.dirfd, "real"));
	ck_assert(!w.proc_link);
	close(w.dirfd);
	/* Relative to the working directory. */
	ck_assert_int_eq(chdir(at("real")), 0);
	ck_assert_int_eq(proc_path_walk("sub/../x", &w, msg, sizeof(msg)), 0);
	ck_assert_str_eq(w.name, "x");
	ck_assert(is_dir(w.dirfd, "real"));
	close(w.dirfd);
}
END_TEST

START_TEST(test_safepath_refuses_another_users_link_in_any_component)
{
	static const char *const paths[] = {
		"evil/f",		/* the first component */
		"d/evil/f",		/* in the middle */
		"d/evil",		/* in last place */
		"ours/f",		/* behind a trusted link, in its text */
		"d/deep/x/y",		/* a trusted link to a path through an untrusted one */
	};
	struct jma_path_at w;

	mkdir_at("d", 01777, 0);
	mkdir_at("target", 0755, 0);
	link_at("evil", at("target"), EVIL);
	link_at("d/evil", at("target/victim"), EVIL);
	link_at("ours", "evil", 0);
	link_at("d/deep", at("d/evil/.."), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		w.dirfd = 12345;
		ck_assert_msg(proc_path_walk(at(paths[i]), &w, msg, sizeof(msg)) == -EPERM, "%s",
			      paths[i]);
		ck_assert_int_eq(w.dirfd, -1);
		ck_assert_msg(strstr(msg, "is a symlink owned by another user (uid 65533): not followed"),
			      "%s", msg);
	}
	/* The message names the link. */
	proc_path_walk(at("d/evil/f"), &w, msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "/d/evil is a symlink"), "%s", msg);
}
END_TEST

START_TEST(test_safepath_loops_and_errors)
{
	struct jma_path_at w;
	char longname[300];

	link_at("loop", "loop", 0);
	ck_assert_int_eq(proc_path_walk(at("loop/f"), &w, msg, sizeof(msg)), -ELOOP);
	ck_assert_int_eq(proc_path_walk(at("missing/f"), &w, msg, sizeof(msg)), -ENOENT);
	ck_assert_int_eq(close(open(at("file"), O_CREAT | O_WRONLY, 0600)), 0);
	ck_assert_int_eq(proc_path_walk(at("file/f"), &w, msg, sizeof(msg)), -ENOTDIR);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(proc_path_walk(at(longname), &w, msg, sizeof(msg)), -ENAMETOOLONG);
	ck_assert_int_eq(proc_path_walk("", &w, msg, sizeof(msg)), -ENOENT);
	/* A trailing slash means a directory. */
	ck_assert_int_eq(proc_path_walk(at("new/"), &w, msg, sizeof(msg)), 0);
	ck_assert(w.slash);
	ck_assert_str_eq(w.name, "new");
	close(w.dirfd);
}
END_TEST

START_TEST(test_safepath_dir_private)
{
	static const struct { const char *name; mode_t mode; uid_t uid; gid_t gid; int ok, sticky; } d[] = {
		{ "mine", 0755, 0, 0, 1, 0 },
		{ "mine-group", 0775, 0, 0, 1, 0 },
		{ "tmp", 01777, 0, 0, 1, 1 },
		{ "theirs", 0755, EVIL, EVIL, 0, 0 },
		{ "their-tmp", 01777, EVIL, EVIL, 0, 0 },
		{ "world", 0777, 0, 0, 0, 0 },
		{ "group", 0775, 0, EVIL, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(*d); i++) {
		int fd, sticky = -1, err;

		ck_assert_int_eq(mkdir(at(d[i].name), 0700), 0);
		ck_assert_int_eq(chmod(at(d[i].name), d[i].mode), 0);
		ck_assert_int_eq(chown(at(d[i].name), d[i].uid, d[i].gid), 0);
		fd = open(at(d[i].name), O_PATH | O_DIRECTORY);
		err = proc_path_dir_private(fd, d[i].name, &sticky, msg, sizeof(msg));
		ck_assert_msg(d[i].ok ? err == 0 : err == -EPERM, "%s: %d %s", d[i].name, err, msg);
		if (d[i].ok)
			ck_assert_int_eq(sticky, d[i].sticky);
		close(fd);
	}
	/* Root run through sudo by that user: its directory is the invoker's. */
	{
		int fd = open(at("theirs"), O_PATH | O_DIRECTORY), err;

		ck_assert_int_eq(setenv("SUDO_UID", "65533", 1), 0);
		err = proc_path_dir_private(fd, "theirs", NULL, msg, sizeof(msg));
		ck_assert_int_eq(getuid() == 0 ? err : 0, 0);
		unsetenv("SUDO_UID");
		close(fd);
	}
}
END_TEST

/* /dev/stdout: a trusted link to /proc/self/fd/1, a link of the kernel's. */
START_TEST(test_safepath_proc_links)
{
	struct jma_path_at w;
	char link[64], buf[256], want[64];
	ssize_t n;

	ck_assert_int_eq(proc_path_walk("/dev/stdout", &w, msg, sizeof(msg)), 0);
	ck_assert(w.proc_link);
	ck_assert_str_eq(w.name, "1");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", w.dirfd);
	n = readlink(link, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	snprintf(want, sizeof(want), "/proc/%d/fd", (int)getpid());
	ck_assert_str_eq(buf, want);
	close(w.dirfd);
	/* An intermediate one is followed by the kernel. */
	ck_assert_int_eq(chdir(root), 0);
	ck_assert_int_eq(proc_path_walk("/proc/self/cwd/x", &w, msg, sizeof(msg)), 0);
	ck_assert_str_eq(w.name, "x");
	ck_assert(is_dir(w.dirfd, "."));
	close(w.dirfd);
}
END_TEST

START_TEST(test_safepath_open)
{
	int fd;

	mkdir_at("cache", 0700, 0);
	link_at("mine", "cache", 0);
	link_at("theirs", "cache", EVIL);
	fd = proc_path_open(at("mine"), O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg));
	ck_assert_int_ge(fd, 0);
	ck_assert(is_dir(fd, "cache"));
	close(fd);
	ck_assert_int_eq(proc_path_open(at("theirs"), O_RDONLY | O_DIRECTORY, 0, msg, sizeof(msg)),
			 -EPERM);
	ck_assert_int_eq(proc_path_open(at("theirs/x"), O_RDONLY, 0, msg, sizeof(msg)), -EPERM);
}
END_TEST

Suite *suite_safepath(void)
{
	Suite *s = suite_create("safepath");
	TCase *tc = tcase_create("walk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_safepath_follows_trusted_links);
	tcase_add_test(tc, test_safepath_refuses_another_users_link_in_any_component);
	tcase_add_test(tc, test_safepath_loops_and_errors);
	tcase_add_test(tc, test_safepath_dir_private);
	tcase_add_test(tc, test_safepath_proc_links);
	tcase_add_test(tc, test_safepath_open);
	suite_add_tcase(s, tc);
	return s;
}
