/* check_debuginfo.c -- debuglinks as plain names to regular files; compressed
 * sections charged before libdw inflates them (src/symbols/debuginfo.c). */
#include <check.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/debuginfo.h"

START_TEST(test_debuginfo_link_names)
{
	char big[300];

	ck_assert(sym_debuglink_name_ok("libc.so.6.debug"));
	ck_assert(sym_debuglink_name_ok("..x"));
	ck_assert(!sym_debuglink_name_ok(""));
	ck_assert(!sym_debuglink_name_ok(NULL));
	ck_assert(!sym_debuglink_name_ok("."));
	ck_assert(!sym_debuglink_name_ok(".."));
	ck_assert(!sym_debuglink_name_ok("../../dev/zero"));
	ck_assert(!sym_debuglink_name_ok("/etc/shadow"));
	ck_assert(!sym_debuglink_name_ok("a\x1b[2J"));
	ck_assert(!sym_debuglink_name_ok("a\x7f"));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert(!sym_debuglink_name_ok(big));
}
END_TEST

static char warned[4400];

static void keep_warning(void *arg, const char *msg)
{
	(void)arg;
	snprintf(warned, sizeof(warned), "%s", msg);
}

/* Look for the separate debuginfo of @path by its own debuglink, as libdwfl
 * would ask; returns the fd (closed) >= 0 or -1, *out the file used. */
static int lookup(const char *path, char **out)
{
	static const Dwfl_Callbacks cb = { .find_elf = dwfl_build_id_find_elf,
					   .find_debuginfo = dwfl_standard_find_debuginfo };
	struct sym_dbg d = { .open = sym_open_host, .warn = keep_warning };
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod = dwfl_report_offline(dwfl, "m", path, -1);
	GElf_Addr bias;
	GElf_Word crc;
	Elf *elf;
	const char *link;
	int fd;

	ck_assert_ptr_nonnull(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = dwfl_module_getelf(mod, &bias);
	ck_assert_ptr_nonnull(elf);
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	ck_assert_ptr_nonnull(link);
	*out = NULL;
	warned[0] = '\0';
	fd = sym_find_debuginfo(&d, mod, NULL, "m", 0, path, link, crc, out);
	if (fd >= 0)
		close(fd);
	dwfl_end(dwfl);
	return fd;
}

static const char *fixture(void)
{
	static char path[4096];
	const char *dir = getenv("FIXTURES");
	char rel[512];

	/* Absolute, as libdwfl names modules: a relative directory is refused. */
	snprintf(rel, sizeof(rel), "%s/jemfix-static-debuglink", dir ? dir : "build/fixtures");
	ck_assert_ptr_nonnull(realpath(rel, path));
	return path;
}

START_TEST(test_debuginfo_found_next_to_the_module)
{
	char *out;
	char want[4200];

	snprintf(want, sizeof(want), "%s.debug", fixture());
	ck_assert_int_ge(lookup(fixture(), &out), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(out, want);
	free(out);
}
END_TEST

/* A FIFO (or a device) where the debuglink points is never read: the open
 * does not block, the candidate is refused and the next place is tried. */
START_TEST(test_debuginfo_fifo_refused)
{
	char dir[] = "/tmp/check_debuginfo.XXXXXX", mod[600], fifo[700], cmd[6000];
	char *out;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(mod, sizeof(mod), "%s/jemfix-static-debuglink", dir);
	snprintf(fifo, sizeof(fifo), "%s.debug", mod);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", fixture(), mod);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	alarm(20);
	ck_assert_int_eq(lookup(mod, &out), -1);
	alarm(0);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(warned, "not a regular file"), "warned: %s", warned);
	unlink(fifo);
	unlink(mod);
	rmdir(dir);
}
END_TEST

Suite *suite_debuginfo(void)
{
	Suite *s = suite_create("debuginfo");
	TCase *tc = tcase_create("files");

	tcase_add_test(tc, test_debuginfo_link_names);
	tcase_add_test(tc, test_debuginfo_found_next_to_the_module);
	tcase_add_test(tc, test_debuginfo_fifo_refused);
	suite_add_tcase(s, tc);
	return s;
}
