/* check_view.c -- module files opened as their process sees them (src/symbols/view.c)
 * and found by build-id without the network (src/symbols/dwfl.c). */
#include <check.h>
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/dwfl.h"
#include "symbols/view.h"

static char root[64];

static void make_root(void)
{
	char p[128];
	int fd;

	snprintf(root, sizeof(root), "/tmp/check_view.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/lib", root);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/lib/x.so", root);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	snprintf(p, sizeof(p), "%s/lib/fifo", root);
	ck_assert_int_eq(mkfifo(p, 0644), 0);
}

static void remove_root(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_view_host_under_sysroot)
{
	struct sym_view v = { .sysroot = root };
	char shown[256], want[256];
	int fd;

	make_root();
	snprintf(want, sizeof(want), "%s/lib/x.so", root);
	fd = sym_view_module(&v, "/lib/x.so", 0, shown, sizeof(shown));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(shown, want);
	/* Blocking reads from here on. */
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	/* The kernel's mark of an unlinked file is not part of its name. */
	fd = sym_view_module(&v, "/lib/x.so (deleted)", 0, shown, sizeof(shown));
	ck_assert_int_ge(fd, 0);
	ck_assert_str_eq(shown, want);
	close(fd);
	/* A FIFO is refused without blocking on its open; so is a directory. */
	ck_assert_int_eq(sym_view_module(&v, "/lib/fifo", 0, shown, sizeof(shown)), -ENOEXEC);
	ck_assert_int_eq(sym_view_module(&v, "/lib", 0, shown, sizeof(shown)), -ENOEXEC);
	ck_assert_int_eq(sym_view_module(&v, "lib/x.so", 0, shown, sizeof(shown)), -EINVAL);
	ck_assert_int_eq(sym_view_module(&v, "/lib/none", 0, shown, sizeof(shown)), -ENOENT);
	remove_root();
}
END_TEST

/* A file of ours mapped and then unlinked is still read, through
 * map_files: the live view never looks for it by name on this host. */
START_TEST(test_view_live_deleted_through_map_files)
{
	struct sym_view v = { .pid = getpid() };
	char path[] = "/tmp/check_view_map.XXXXXX", shown[256], want[300];
	struct att_map *maps;
	struct stat a, b;
	const struct att_map *m = NULL;
	void *p;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4096), 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(fstat(fd, &a), 0);
	close(fd);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(att_proc_maps(getpid(), &maps, &v.nmaps), 0);
	v.maps = maps;
	snprintf(want, sizeof(want), "%s (deleted)", path);
	for (size_t i = 0; i < v.nmaps && !m; i++)
		if (maps[i].start == (uint64_t)(uintptr_t)p)
			m = &maps[i];
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->path, want);
	fd = sym_view_module(&v, m->path, m->start, shown, sizeof(shown));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	ck_assert_str_eq(shown, want);
	close(fd);
	/* Not mapped and not in the process's root: nothing. */
	ck_assert_int_lt(sym_view_module(&v, path, 0, shown, sizeof(shown)), 0);
	att_maps_free(maps, v.nmaps);
	munmap(p, 4096);
}
END_TEST

/* libelf's file (a library of ours that has a build-id: Debian's do) and
 * its build-id, *@id (static); the id's length. */
static int lib_build_id(const char **path, const void **id)
{
	static unsigned char copy[64];
	Dl_info info;
	int fd, n;
	Elf *e;

	elf_version(EV_CURRENT);
	ck_assert(dladdr((void *)elf_begin, &info) && info.dli_fname);
	*path = info.dli_fname;
	fd = open(*path, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = (int)dwelf_elf_gnu_build_id(e, id);
	ck_assert_int_gt(n, 1);
	ck_assert_int_le(n, (int)sizeof(copy));
	memcpy(copy, *id, (size_t)n);
	*id = copy;
	elf_end(e);
	close(fd);
	return n;
}

/* A module named by build-id only (a core's file that is missing), found
 * where libdwfl looks locally -- here with debuginfod off, whatever
 * $DEBUGINFOD_URLS says. */
static Elf *module_by_id(const char *dbgpath, const char *exe, const unsigned char *id, int n,
			 int debuginfod)
{
	struct sym_policy pol = { .debuginfo_path = dbgpath, .executable = exe,
				  .debuginfod = debuginfod };
	struct sym_view v = { 0 };
	struct sym_dwfl *d, *prev;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Elf *e;

	ck_assert_int_eq(sym_dwfl_new(&v, &pol, &d), 0);
	prev = sym_dwfl_enter(d);
	dwfl_report_begin(sym_dwfl_get(d));
	mod = dwfl_report_module(sym_dwfl_get(d), "m", 0x400000, 0x800000);
	ck_assert_ptr_nonnull(mod);
	ck_assert_int_eq(dwfl_module_report_build_id(mod, id, (size_t)n, 0), 0);
	dwfl_report_end(sym_dwfl_get(d), NULL, NULL);
	e = dwfl_module_getelf(mod, &bias);
	sym_dwfl_leave(prev);
	sym_dwfl_free(d);
	return e;
}

START_TEST(test_dwfl_build_id_local_without_network)
{
	const char *lib;
	const void *id;
	int n = lib_build_id(&lib, &id);
	char hex[130], dir[160], link[300];
	unsigned char other[64];

	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	make_root();
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
	snprintf(dir, sizeof(dir), "%s/.build-id", root);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", root, hex);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(link, sizeof(link), "%s/%s", dir, hex + 2);
	ck_assert_int_eq(symlink(lib, link), 0);
	/* Under the debuginfo path's .build-id, and as the executable named. */
	ck_assert_ptr_nonnull(module_by_id(root, NULL, id, n, 0));
	ck_assert_ptr_nonnull(module_by_id("/nonexistent", lib, id, n, 0));
	/* Another build-id: neither is taken for it, and the debuginfod
	 * client is not even loaded. */
	memcpy(other, id, (size_t)n);
	other[0] ^= 0xff;
	ck_assert_ptr_null(module_by_id(root, lib, other, n, 0));
	ck_assert_ptr_null(dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD));
	/* Allowed, libdwfl asks it (the server here refuses at once). */
	ck_assert_ptr_null(module_by_id(root, NULL, other, n, 1));
	if (!dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD))
		ck_assert_msg(!dlopen("libdebuginfod.so.1", RTLD_LAZY),
			      "libdebuginfod is installed but was not asked");
	remove_root();
}
END_TEST

Suite *suite_view(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("files");

	tcase_add_test(tc, test_view_host_under_sysroot);
	tcase_add_test(tc, test_view_live_deleted_through_map_files);
	tcase_add_test(tc, test_dwfl_build_id_local_without_network);
	suite_add_tcase(s, tc);
	return s;
}
