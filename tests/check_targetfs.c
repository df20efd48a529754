/* check_targetfs.c -- files reached inside a target's root never lead out of it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"
#include "attach/targetfs.h"

/* The target's user, and another local user. */
#define TEST_UID 65534
#define TEST_EVIL 65533

static char root[] = "/tmp/jemattach-root.XXXXXX";
static pid_t child = -1;

static void put(const char *rel, const char *text)
{
	tput(root, rel, text);
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
	mkfifo(p, 0666);
	chmod(root, 0755);
	put("/etc/secret", "root only\n");
	snprintf(p, sizeof(p), "%s/etc/secret", root);
	chmod(p, 0600);
	snprintf(p, sizeof(p), "%s/home", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/home/evil", root);
	mkdir(p, 0777);
	chmod(p, 0777);
	ck_assert_int_eq(chown(p, TEST_EVIL, TEST_EVIL), 0);
	ck_assert_int_eq(pipe(go), 0);
	child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		/* Its own mount namespace (bind mounts in it are the attack of
		 * issue 17), then the uid and gid of an unprivileged user. */
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    chroot(root) || chdir("/") || setgroups(0, NULL) ||
		    setresgid(TEST_UID, TEST_UID, TEST_UID) || setresuid(TEST_UID, TEST_UID, TEST_UID))
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
	ck_assert_int_eq(att_tfs_read(child, "/tmp/etc/hostname", 4096, &buf, &len), 0);
	ck_assert_str_eq(buf, "inside\n");
	free(buf);
	ck_assert_int_eq(att_tfs_read(child, "/tmp/up/hostname", 4096, &buf, &len), 0);
	ck_assert_str_eq(buf, "inside\n");
	free(buf);
	/* The host has /etc/passwd; the target's root does not. */
	ck_assert_int_eq(att_tfs_read(child, "/tmp/etc/passwd", 4096, &buf, &len), -ENOENT);
	ck_assert_int_eq(att_tfs_read(child, "/etc/passwd", 4096, &buf, &len), -ENOENT);
	/* What we read is a file the target wrote: a symlink in its place is refused. */
	ck_assert_int_eq(att_tfs_read(child, "/tmp/abs", 4096, &buf, &len), -ELOOP);
}
END_TEST

START_TEST(test_targetfs_refuses_non_regular_and_large)
{
	char *buf;
	size_t len;

	/* A FIFO would block a plain open; it is refused at once. */
	ck_assert_int_eq(att_tfs_read(child, "/tmp/fifo", 4096, &buf, &len), -EINVAL);
	ck_assert_int_eq(att_tfs_read(child, "/etc/hostname", 3, &buf, &len), -EFBIG);
	ck_assert_int_eq(att_tfs_read(child, "relative", 10, &buf, &len), -EINVAL);
}
END_TEST

START_TEST(test_targetfs_opens_with_the_targets_rights)
{
	char *buf;
	size_t len;

	/* Root could read it; the target's user cannot, so neither do we for it. */
	ck_assert_int_eq(att_tfs_read(child, "/etc/secret", 4096, &buf, &len), -EACCES);
	ck_assert_int_eq(att_tfs_read(child, "/etc/hostname", 4096, &buf, &len), 0);
	free(buf);
	/* And our own rights are back afterwards. */
	ck_assert_int_eq(access("/etc/shadow", R_OK), 0);
}
END_TEST

/* The target writes @text as @name into the private directory. */
static void target_writes(const struct jma_tfs_dir *d, const char *name, const char *text)
{
	char rel[700], p[1300];

	snprintf(rel, sizeof(rel), "%s/%s", d->path, name);
	put(rel, text);
	snprintf(p, sizeof(p), "%s%s", root, rel);
	ck_assert_int_eq(chown(p, TEST_UID, TEST_UID), 0);
}

START_TEST(test_targetfs_private_dir)
{
	struct jma_tfs_dir d;
	char p[1300], *buf;
	size_t len;
	struct stat st;

	ck_assert_int_eq(att_tfs_private(child, NULL, &d), 0);
	ck_assert_int_eq(strncmp(d.path, "/tmp/jemattach.", 15), 0);
	ck_assert_uint_ge(strlen(d.path), 15 + 24);
	snprintf(p, sizeof(p), "%s%s", root, d.path);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, TEST_UID);
	target_writes(&d, "dump.heap", "heap_v2/1\n");
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), 0);
	ck_assert_str_eq(buf, "heap_v2/1\n");
	free(buf);
	ck_assert_int_eq(att_tfs_private_remove(&d, "dump.heap"), 0);
	ck_assert_int_ne(lstat(p, &st), 0);
	ck_assert_int_eq(att_tfs_private_remove(&d, "dump.heap"), 0);
}
END_TEST

START_TEST(test_targetfs_private_refuses_what_was_swapped_in)
{
	struct jma_tfs_dir d;
	char p[1300], q[1300], cmd[3000], *buf;
	size_t len;

	ck_assert_int_eq(att_tfs_private(child, NULL, &d), 0);
	snprintf(p, sizeof(p), "%s%s/dump.heap", root, d.path);
	/* A file of another owner (root's, as a root-owned copy would be). */
	put(p + strlen(root), "x");
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), -EPERM);
	unlink(p);
	/* A hard link (to the target's own file; to others' protected_hardlinks says no). */
	target_writes(&d, "other", "x");
	snprintf(q, sizeof(q), "%s%s/other", root, d.path);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), -EPERM);
	unlink(p);
	unlink(q);
	/* A symlink, and a FIFO. */
	ck_assert_int_eq(symlink("/etc/hostname", p), 0);
	ck_assert_int_lt(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), 0);
	unlink(p);
	ck_assert_int_eq(mkfifo(p, 0666), 0);
	ck_assert_int_eq(chown(p, TEST_UID, TEST_UID), 0);
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), -EPERM);
	unlink(p);
	/* The attack of issue 17 row 1: a bind mount over the dump in the
	 * target's mount namespace (its own file, so that only the mount differs). */
	target_writes(&d, "dump.heap", "heap_v2/1\n");
	target_writes(&d, "mine", "secret of the target's user\n");
	snprintf(cmd, sizeof(cmd), "nsenter -t %d -m mount --bind '%s%s/mine' '%s%s/dump.heap'",
		 (int)child, root, d.path, root, d.path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), -EPERM);
	snprintf(cmd, sizeof(cmd), "nsenter -t %d -m umount '%s%s/dump.heap'", (int)child, root,
		 d.path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(att_tfs_private_read(&d, "dump.heap", 4096, &buf, &len), 0);
	free(buf);
	/* Files added by the target's user stay (and the directory with them). */
	ck_assert_int_eq(att_tfs_private_remove(&d, "dump.heap"), -ENOTEMPTY);
}
END_TEST

START_TEST(test_targetfs_private_skips_unsafe_dirs)
{
	struct jma_tfs_dir d;

	/* /etc: not writable for the target's user; /home/evil: another user's. */
	ck_assert_int_eq(att_tfs_private(child, "/etc", &d), 0);
	ck_assert_int_eq(strncmp(d.path, "/tmp/", 5), 0);
	ck_assert_int_eq(att_tfs_private_remove(&d, NULL), 0);
	ck_assert_int_eq(att_tfs_private(child, "/home/evil", &d), 0);
	ck_assert_int_eq(strncmp(d.path, "/tmp/", 5), 0);
	ck_assert_int_eq(att_tfs_private_remove(&d, NULL), 0);
}
END_TEST

/* A directory in the target's /tmp, made as a dead jemattach would leave it
 * (or not quite); returns its path on our side in @p. */
static void left_dir(const char *name, uid_t uid, mode_t mode, const char *file, char *p, size_t n)
{
	char rel[300];

	snprintf(p, n, "%s/tmp/%s", root, name);
	ck_assert_int_eq(mkdir(p, mode), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	if (file) {
		snprintf(rel, sizeof(rel), "/tmp/%s/%s", name, file);
		put(rel, "heap_v2/1\n");
		snprintf(rel, sizeof(rel), "%s/%s", p, file);
		ck_assert_int_eq(chown(rel, uid, uid), 0);
	}
	ck_assert_int_eq(chown(p, uid, uid), 0);
}

#define HEX24(c) c c c c c c c c c c c c c c c c c c c c c c c c

START_TEST(test_targetfs_sweep_removes_only_what_a_dead_jemattach_left)
{
	struct jma_tfs_dir live;
	char dead[600], foreign[600], other[600], open_mode[600], young[600], q[700];
	struct stat st;

	/* A live one: made and held (flock) by att_tfs_private. */
	ck_assert_int_eq(att_tfs_private(child, NULL, &live), 0);
	left_dir("jemattach." HEX24("a"), TEST_UID, 0700, "dump.heap", dead, sizeof(dead));
	left_dir("jemattach." HEX24("b"), TEST_EVIL, 0700, "dump.heap", foreign, sizeof(foreign));
	left_dir("jemattach." HEX24("c"), TEST_UID, 0700, "notes", other, sizeof(other));
	left_dir("jemattach." HEX24("d"), TEST_UID, 0755, NULL, open_mode, sizeof(open_mode));
	left_dir("jemattach." HEX24("x"), TEST_UID, 0700, NULL, q, sizeof(q));
	/* Older than the sweep's 2 s, all but the next one. */
	sleep(3);
	left_dir("jemattach." HEX24("e"), TEST_UID, 0700, NULL, young, sizeof(young));
	ck_assert_int_eq(att_tfs_sweep(child, "/tmp", "dump.heap"), 1);
	ck_assert_int_ne(lstat(dead, &st), 0);
	/* Another user's, one with a file we never name, one not 0700, a name
	 * we never make, a young one, and the live one. */
	ck_assert_int_eq(lstat(foreign, &st), 0);
	ck_assert_int_eq(lstat(other, &st), 0);
	ck_assert_int_eq(lstat(open_mode, &st), 0);
	ck_assert_int_eq(lstat(q, &st), 0);
	ck_assert_int_eq(lstat(young, &st), 0);
	snprintf(q, sizeof(q), "%s%s", root, live.path);
	ck_assert_int_eq(lstat(q, &st), 0);
	ck_assert_int_eq(att_tfs_private_remove(&live, NULL), 0);
	ck_assert_int_eq(att_tfs_sweep(child, "relative", NULL), -EINVAL);
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
	tcase_add_test(tc, test_targetfs_opens_with_the_targets_rights);
	tcase_add_test(tc, test_targetfs_private_dir);
	tcase_add_test(tc, test_targetfs_private_refuses_what_was_swapped_in);
	tcase_add_test(tc, test_targetfs_private_skips_unsafe_dirs);
	tcase_add_test(tc, test_targetfs_sweep_removes_only_what_a_dead_jemattach_left);
	suite_add_tcase(s, tc);
	return s;
}
