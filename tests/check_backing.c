/* check_backing.c -- which file systems are refused, and a process of ours passes. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "attach/backing.h"
#include "attach/mem.h"

START_TEST(test_backing_remote_types)
{
	static const char *const remote[] = { "fuse", "fuseblk", "fuse.sshfs", "fuse.hangfs", "nfs",
					      "nfs4", "cifs", "smb3", "9p", "ceph", "afs", "glusterfs" };
	static const char *const local[] = { "ext4", "xfs", "btrfs", "tmpfs", "overlay", "proc",
					     "fusectl", "nfsd", "squashfs", "vfat" };

	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		ck_assert_msg(att_backing_remote(remote[i]), "%s not refused", remote[i]);
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		ck_assert_msg(!att_backing_remote(local[i]), "%s refused", local[i]);
}
END_TEST

/* Our own heap, stack and code: nothing remote, read through the helper. */
START_TEST(test_backing_own_memory_passes)
{
	char why[256] = "";
	int *heap = malloc(sizeof(*heap)), v = 0;

	*heap = 4242;
	att_backing_forget();
	ck_assert_int_eq(att_backing_check(getpid(), (uintptr_t)heap, sizeof(*heap), why, sizeof(why)), 0);
	ck_assert_int_eq(att_backing_check(getpid(), (uintptr_t)&v, sizeof(v), why, sizeof(why)), 0);
	ck_assert_int_eq(att_backing_check(getpid(), (uintptr_t)test_backing_remote_types, 16, why,
					   sizeof(why)), 0);
	ck_assert_int_eq(att_mem_read(getpid(), (uintptr_t)heap, &v, sizeof(v)), 0);
	ck_assert_int_eq(v, 4242);
	free(heap);
}
END_TEST

Suite *suite_backing(void)
{
	Suite *s = suite_create("backing");
	TCase *t = tcase_create("backing");

	tcase_add_test(t, test_backing_remote_types);
	tcase_add_test(t, test_backing_own_memory_passes);
	suite_add_tcase(s, t);
	return s;
}
