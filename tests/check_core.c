/* check_core.c -- the ELF core parser: what it reads from a well-formed core,
 * the errors for bad ones, and the fuzzing corpus replayed (tests/fuzz/core_corpus). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* check_heap_fuzz.c links the heap harness's entry point into the same runner. */
#define LLVMFuzzerTestOneInput core_fuzz_one_input
#include "fuzz/core_fuzz.c"
#include "tutil.h"

#define CORPUS "tests/fuzz/core_corpus"

/* The corpus's cores are x86_64's, but for "aarch64": a core is read on the
 * machine it comes from only, so on arm64 "minimal" is the other machine's. */
#ifdef __x86_64__
#define OTHER_MACHINE "aarch64"
#else
#define OTHER_MACHINE "minimal"
#endif

static unsigned char *slurp(const char *name, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", CORPUS, name);
	return tu_slurp(path, len);
}

static int parse(const char *name, struct emu_core *c, char *msg, size_t mlen)
{
	size_t len;
	unsigned char *buf = slurp(name, &len);
	int err = emu_core_parse(c, buf, len, msg, mlen);

	if (err)
		free(buf);
	return err;
}

/* The files a core names, opened plainly by the name shown (with the sysroot). */
static int open_shown(void *arg, const char *path, char *shown, size_t len)
{
	int fd = open(shown, O_RDONLY | O_NONBLOCK);

	(void)arg;
	(void)path;
	(void)len;
	return fd < 0 ? -errno : fd;
}

START_TEST(test_core_wellformed)
{
	struct emu_core c;
	char msg[512], *maps;
	unsigned char page[4096];
	size_t len;
	const unsigned char *data;

#ifndef __x86_64__
	ck_assert_int_eq(parse("minimal", &c, msg, sizeof(msg)), -EXDEV);
	return;	/* an arm64 core's parse: 55-core and smoke.sh in the arm64 guest */
#endif
	ck_assert_int_eq(parse("minimal", &c, msg, sizeof(msg)), 0);
	data = c.data;
	ck_assert_uint_eq(c.nthreads, 1);
	ck_assert_int_eq(c.threads[0].tid, 1234);
	ck_assert_uint_eq(c.threads[0].tp, 0x7f0000001000ULL);
	ck_assert_str_eq(c.comm, "jemfix");
	ck_assert_uint_eq(c.nsegs, 1);
	ck_assert_uint_eq(c.nfiles, 2);
	ck_assert_str_eq(c.files[1].path, "/bin/x");
	ck_assert_uint_eq(c.files[1].offset, 4096);
	/* Dumped bytes come from the core... */
	ck_assert_int_eq(emu_core_page(&c, 0x400000, page), 0);
	ck_assert_uint_eq(page[1], 7);
	ck_assert_uint_eq(page[100], (100 * 7) & 255);
	/* ...the undumped rest of a segment no file backs is zero... */
	ck_assert_int_eq(emu_core_page(&c, 0x401000, page), 0);
	ck_assert_uint_eq(page[1], 0);
	/* ...a mapping whose file is missing fails, saying why... */
	c.sysroot = "/nonexistent-root";
	c.open_file = open_shown;
	ck_assert_int_eq(emu_core_page(&c, 0x500000, page), -EFAULT);
	ck_assert_ptr_nonnull(strstr(c.err, "/nonexistent-root/bin/x is missing"));
	/* ...and so does an address nothing maps. */
	ck_assert_int_eq(emu_core_page(&c, 0x900000, page), -EFAULT);
	ck_assert_int_eq(emu_core_maps_text(&c, &maps, &len), 0);
	ck_assert_ptr_nonnull(strstr(maps, "400000-401000 rw-p 00000000 00:00 0 /nonexistent/libjemalloc.so.2\n"));
	ck_assert_ptr_nonnull(strstr(maps, "500000-502000 r-xp 00001000 00:00 0 /bin/x\n"));
	free(maps);
	emu_core_close(&c);
	free((void *)data);
}
END_TEST

START_TEST(test_core_bad)
{
	static const struct { const char *name; int err; const char *msg; } bad[] = {
		{ "text", -ENOEXEC, "not an ELF file" },
		{ "not-core", -ENOEXEC, "not a core" },
		{ OTHER_MACHINE, -EXDEV, "another architecture" },
#ifdef __x86_64__	/* x86_64 cores: elsewhere refused as the other machine's first */
		{ "truncated", -EIO, "truncated" },
		{ "headers-only", -EIO, "truncated" },
#endif
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct emu_core c;
		char msg[512] = "";
		ck_assert_int_eq(parse(bad[i].name, &c, msg, sizeof(msg)), bad[i].err);
		ck_assert_msg(strstr(msg, bad[i].msg), "%s: \"%s\"", bad[i].name, msg);
	}
}
END_TEST

START_TEST(test_core_fuzz_corpus)
{
	ck_assert_int_ge(tu_replay_corpus(CORPUS, LLVMFuzzerTestOneInput), 7);
}
END_TEST

Suite *suite_core(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("parse");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_core_wellformed);
	tcase_add_test(tc, test_core_bad);
	tcase_add_test(tc, test_core_fuzz_corpus);
	suite_add_tcase(s, tc);
	return s;
}
