/* check_targetfs.c -- files reached inside a target's root never lead out of it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/targetfs.h"

static char root[] = "/tmp/jemattach-root.XXXXXX";
static pid_t child = -1;

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void link_in(const char *rel, const char *target)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

/* A process chrooted into a directory we built, standing in for a container. */
static void setup(void)
{
	char p[512];
	int go[2];

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/tmp", root);
	mkdir(p, 0700);
	chmod(p, 01777);
	snprintf(p, sizeof(p), "%s/etc", root);
	mkdir(p, 0755);
	put("/etc/hostname", "inside\n");
	link_in("/tmp/abs", "/etc/hostname");
	link_in("/tmp/etc", "/etc");
	link_in("/tmp/up", "../../../../../../etc");
	snprintf(p, sizeof(p), "%s/tmp/fifo", root);
	mkfifo(p, 0600);
	ck_assert_int_eq(pipe(go), 0);
	child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (chroot(root) || chdir("/"))
			_exit(1);
		/* Parked until the test ends. */
		while (read(go[0], &c, 1) < 0)
			;
		_exit(0);
	}
	close(go[0]);
	/* Wait until the chroot happened. */
	for (int i = 0; i < 1000; i++) {
		char l[64], t[512];
		ssize_t n;
		snprintf(l, sizeof(l), "/proc/%d/root", (int)child);
		n = readlink(l, t, sizeof(t) - 1);
		if (n > 0 && (t[n] = '\0', !strcmp(t, root)))
			break;
		usleep(1000);
	}
}

static void teardown(void)
{
	char cmd[600];

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(root, "/tmp/jemattach-root.XXXXXX");
}

START_TEST(test_targetfs_symlinks_stay_inside)
{
	char *buf;
	size_t len;

	/* Directory symlinks, absolute or climbing, resolve inside the root. */
	ck_assert_int_eq(jma_tfs_read(child, "/tmp/etc/hostname", 4096, &buf, &len), 0);
	ck_assert_str_eq(buf, "inside\n");
	free(buf);
	ck_assert_int_eq(jma_tfs_read(child, "/tmp/up/hostname", 4096, &buf, &len), 0);
	ck_assert_str_eq(buf, "inside\n");
	free(buf);
	/* The host has /etc/passwd; the target's root does not. */
	ck_assert_int_eq(jma_tfs_read(child, "/tmp/etc/passwd", 4096, &buf, &len), -ENOENT);
	ck_assert_int_eq(jma_tfs_read(child, "/etc/passwd", 4096, &buf, &len), -ENOENT);
	/* What we read is a file the target wrote: a symlink in its place is refused. */
	ck_assert_int_eq(jma_tfs_read(child, "/tmp/abs", 4096, &buf, &len), -ELOOP);
}
END_TEST

START_TEST(test_targetfs_refuses_non_regular_and_large)
{
	char *buf;
	size_t len;

	/* A FIFO would block a plain open; it is refused at once. */
	ck_assert_int_eq(jma_tfs_read(child, "/tmp/fifo", 4096, &buf, &len), -EINVAL);
	ck_assert_int_eq(jma_tfs_read(child, "/etc/hostname", 3, &buf, &len), -EFBIG);
	ck_assert_int_eq(jma_tfs_read(child, "relative", 10, &buf, &len), -EINVAL);
}
END_TEST

START_TEST(test_targetfs_writable_dir_and_unlink)
{
	char dir[256], p[512];
	struct stat st;

	ck_assert_int_eq(jma_tfs_writable_dir(child, 1000, NULL, dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/tmp");
	/* /etc is not writable for uid 1000, and /var/tmp, /dev/shm do not exist. */
	ck_assert_int_eq(jma_tfs_writable_dir(child, 1000, "/etc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/tmp");
	ck_assert_int_eq(jma_tfs_writable_dir(child, 0, "/etc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/etc");
	put("/tmp/x", "x");
	ck_assert_int_eq(jma_tfs_unlink(child, "/tmp/x"), 0);
	snprintf(p, sizeof(p), "%s/tmp/x", root);
	ck_assert_int_ne(stat(p, &st), 0);
	/* Removing through a symlinked directory stays inside too. */
	put("/etc/y", "y");
	ck_assert_int_eq(jma_tfs_unlink(child, "/tmp/etc/y"), 0);
	snprintf(p, sizeof(p), "%s/etc/y", root);
	ck_assert_int_ne(stat(p, &st), 0);
}
END_TEST

Suite *suite_targetfs(void)
{
	Suite *s = suite_create("targetfs");
	TCase *tc = tcase_create("chroot");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_targetfs_symlinks_stay_inside);
	tcase_add_test(tc, test_targetfs_refuses_non_regular_and_large);
	tcase_add_test(tc, test_targetfs_writable_dir_and_unlink);
	suite_add_tcase(s, tc);
	return s;
}
