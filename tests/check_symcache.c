/* check_symcache.c -- build-ids read where an image is mapped (our own, and
 * crafted ones), and the cache of where jemalloc, the condition waits,
 * malloc_message and the rt_sigreturn trampoline were found: kept, read back
 * relocated, refused under another key, outside the module's code or data,
 * or when others could have written it. */
#include <check.h>
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach/procfs.h"
#include "symbols/buildid.h"
#include "process/symcache.h"

static int self_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	(void)arg;
	memcpy(buf, (const void *)(uintptr_t)addr, n);
	return 0;
}

static int never_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	(void)arg;
	(void)addr;
	(void)buf;
	(void)n;
	return -1;
}

/* Our executable's path and where its ELF header is mapped (and, in
 * *@code when not NULL, where its code is). */
static uint64_t self_exe(char *path, size_t len, uint64_t *code)
{
	struct att_map *m;
	size_t n;
	uint64_t base = 0;
	ssize_t k = readlink("/proc/self/exe", path, len - 1);

	ck_assert_int_gt(k, 0);
	path[k] = '\0';
	ck_assert_int_eq(att_proc_maps(getpid(), &m, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (m[i].path && !strcmp(m[i].path, path) && m[i].offset == 0 && !base)
			base = m[i].start;
		if (code && m[i].path && !strcmp(m[i].path, path) && m[i].perms[2] == 'x')
			*code = m[i].start;
	}
	att_maps_free(m, n);
	ck_assert(base != 0);
	return base;
}

START_TEST(test_build_id_of_self_matches_the_file)
{
	char path[4096];
	uint64_t base = self_exe(path, sizeof(path), NULL);
	unsigned char id[64];
	const void *want;
	ssize_t got = syms_build_id_at(self_read, NULL, base, id, sizeof(id)), n;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = dwelf_elf_gnu_build_id(elf, &want);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(got, n);
	ck_assert(!memcmp(id, want, (size_t)n));
	elf_end(elf);
	close(fd);
	ck_assert_int_eq(syms_build_id_at(never_read, NULL, base, id, sizeof(id)), -1);
	/* Too small a buffer: not a truncated id. */
	ck_assert_int_eq(syms_build_id_at(self_read, NULL, base, id, (size_t)n - 1), -1);
}
END_TEST

/* An image of one page: header, a PT_LOAD at vaddr 0 and a PT_NOTE at 0x100
 * holding a note of @type whose name is "GNU" and whose descriptor is @desc
 * (@dsz bytes; @claimed_dsz in the header). */
struct image {
	unsigned char b[4096];
};

static void make_image(struct image *im, uint32_t type, const void *desc, uint32_t dsz,
		       uint32_t claimed_dsz)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->b;
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_vaddr = 0, .p_filesz = 4096, .p_memsz = 4096 },
		{ .p_type = PT_NOTE, .p_offset = 0x100, .p_vaddr = 0x100, .p_filesz = 16 + dsz },
	};
	uint32_t hdr[3] = { 4, claimed_dsz, type };

	memset(im, 0, sizeof(*im));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	memcpy(im->b + eh->e_phoff, ph, sizeof(ph));
	memcpy(im->b + 0x100, hdr, sizeof(hdr));
	memcpy(im->b + 0x10c, "GNU", 4);
	memcpy(im->b + 0x110, desc, dsz);
}

START_TEST(test_build_id_of_crafted_images)
{
	static const unsigned char want[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
						11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	struct image im;
	unsigned char id[64];
	uint64_t at = (uint64_t)(uintptr_t)im.b;

	make_image(&im, NT_GNU_BUILD_ID, want, 20, 20);
	ck_assert_int_eq(syms_build_id_at(self_read, NULL, at, id, sizeof(id)), 20);
	ck_assert(!memcmp(id, want, 20));
	/* Another note type, a length past the segment, a bad magic: none. */
	make_image(&im, NT_GNU_ABI_TAG, want, 20, 20);
	ck_assert_int_eq(syms_build_id_at(self_read, NULL, at, id, sizeof(id)), -1);
	make_image(&im, NT_GNU_BUILD_ID, want, 20, 0x7fffffff);
	ck_assert_int_eq(syms_build_id_at(self_read, NULL, at, id, sizeof(id)), -1);
	make_image(&im, NT_GNU_BUILD_ID, want, 20, 20);
	im.b[1] = 'X';
	ck_assert_int_eq(syms_build_id_at(self_read, NULL, at, id, sizeof(id)), -1);
}
END_TEST

/* A copy placed in our executable's code at @at, as the scan would report it. */
static void fake_copy(struct jma_copy *c, char *path, uint64_t at)
{
	static struct jma_range code[2];

	memset(c, 0, sizeof(*c));
	c->path = path;
	c->prefix = (char *)"je_";
	snprintf(c->conf_env, sizeof(c->conf_env), "JE_MALLOC_CONF");
	c->is_static = 1;
	c->fn_mallctl = at + 0x234;
	c->fn_stats_print = at + 0x400;
	code[0] = (struct jma_range){ at, at + 0x300 };
	code[1] = (struct jma_range){ at + 0x380, at + 0x500 };
	c->code = code;
	c->ncode = 2;
}

static void free_found(struct jma_found *f)
{
	free(f->copy.path);
	free(f->copy.prefix);
	free(f->copy.code);
	free(f->waits);
}

/* Rewrite entry file @path's first "@name=IDX:" line to "@name=IDX:@rest". */
static void rewrite_field(const char *path, const char *name, const char *rest)
{
	char buf[65536], pat[32], *w, *colon, *nl;
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	snprintf(pat, sizeof(pat), "\n%s=", name);
	ck_assert_ptr_nonnull(w = strstr(buf, pat));
	ck_assert_ptr_nonnull(colon = strchr(w, ':'));
	ck_assert_ptr_nonnull(nl = strchr(colon, '\n'));
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%.*s%s%s", (int)(colon + 1 - buf), buf, rest, nl);
	fclose(f);
}

/* Where a malloc_message variable could be: our .data, and the end of a
 * .bss larger than a page (the anonymous mapping after the file's). */
static long data_word = 1;
static char bss_tail[1 << 16];

START_TEST(test_symcache_keeps_and_refuses)
{
	char path[4096], dir[] = "/tmp/check_symcache.XXXXXX", sub[4200], entry[4300], off[64];
	uint64_t at, base = self_exe(path, sizeof(path), &at);
	uint64_t tail = (uint64_t)(uintptr_t)&bss_tail[sizeof(bss_tail) - 8];
	struct att_map *m;
	size_t n;
	struct jma_found f = { 0 }, got;
	struct jma_range waits[2];
	char *key, *other;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/a/jemattach", dir);
	ck_assert_int_eq(att_proc_maps(getpid(), &m, &n), 0);
	key = proc_symcache_key(getpid(), m, n, NULL, NULL);
	other = proc_symcache_key(getpid(), m, n, "", NULL);
	ck_assert_ptr_nonnull(key);
	ck_assert_ptr_nonnull(other);
	ck_assert_str_ne(key, other);
	/* The text after the ELF header's page (x86_64's separate read-only
	 * segment), or starting on it (arm64: headers, .rodata and text share one). */
	ck_assert_uint_ge(at, base);
	fake_copy(&f.copy, path, at);
	waits[0] = (struct jma_range){ at + 0x700, at + 0x740 };
	waits[1] = (struct jma_range){ at + 0x600, at + 0x680 };
	f.waits = waits;
	f.nwaits = 2;
	f.message = (uint64_t)(uintptr_t)&data_word;
	f.restorer = at + 0x800;

	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), 0);
	ck_assert_str_eq(got.copy.path, path);
	ck_assert_str_eq(got.copy.prefix, "je_");
	ck_assert_str_eq(got.copy.conf_env, "JE_MALLOC_CONF");
	ck_assert_int_eq(got.copy.is_static, 1);
	ck_assert_uint_eq(got.copy.fn_mallctl, at + 0x234);
	ck_assert_uint_eq(got.copy.fn_stats_print, at + 0x400);
	ck_assert_uint_eq(got.copy.ncode, 2);
	ck_assert_uint_eq(got.copy.code[1].lo, at + 0x380);
	ck_assert_uint_eq(got.copy.code[1].hi, at + 0x500);
	/* The condition waits come back sorted, relocated; the variable too. */
	ck_assert_uint_eq(got.nwaits, 2);
	ck_assert_uint_eq(got.waits[0].lo, at + 0x600);
	ck_assert_uint_eq(got.waits[0].hi, at + 0x680);
	ck_assert_uint_eq(got.waits[1].lo, at + 0x700);
	ck_assert_uint_eq(got.message, (uint64_t)(uintptr_t)&data_word);
	ck_assert_uint_eq(got.restorer, at + 0x800);
	free_found(&got);
	/* Another key (another prefix restriction): not this entry. */
	ck_assert_int_eq(proc_symcache_load(sub, other, m, n, &got), -ENOENT);

	/* Only ours alone: the entry, then the directory, writable by others. */
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	{
		char name[64];
		FILE *p;

		snprintf(entry, sizeof(entry), "ls %s", sub);
		p = popen(entry, "r");
		ck_assert(fgets(name, sizeof(name), p) != NULL);
		pclose(p);
		name[strcspn(name, "\n")] = '\0';
		snprintf(entry, sizeof(entry), "%s/%s", sub, name);
	}
	ck_assert_int_eq(chmod(entry, 0620), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	ck_assert_int_eq(chmod(entry, 0600), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), 0);
	free_found(&got);
	ck_assert_int_eq(chmod(sub, 0770), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), -EPERM);
	ck_assert_int_eq(chmod(sub, 0700), 0);

	/* A condition wait outside its module's code (its headers, past its
	 * end): the entry is not used; one that no module's code holds is not
	 * kept. */
	rewrite_field(entry, "wait", "10-20");
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	rewrite_field(entry, "wait", "600-ffffffffffff");
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	waits[0] = (struct jma_range){ base + 0x10, base + 0x20 };
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), -EINVAL);
	f.waits = NULL;
	f.nwaits = 0;

	/* The variable: in the .bss past the file's mapping, or none; one in
	 * code is not kept, and an entry that says so is not used. */
	f.message = tail;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), 0);
	ck_assert_uint_eq(got.message, tail);
	free_found(&got);
	snprintf(off, sizeof(off), "%llx", (unsigned long long)(at + 0x10 - base));
	rewrite_field(entry, "message", off);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	f.message = at + 0x10;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), -EINVAL);
	/* The trampoline is code: one in data is not kept. */
	f.message = 0;
	f.restorer = (uint64_t)(uintptr_t)&data_word;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), -EINVAL);
	/* Neither found: both kept as none. */
	f.restorer = 0;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), 0);
	ck_assert_uint_eq(got.message, 0);
	ck_assert_uint_eq(got.restorer, 0);
	free_found(&got);
	/* An entry that puts the trampoline in the headers is not used. */
	f.restorer = at + 0x800;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	rewrite_field(entry, "restorer", "10");
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);

	/* Ranges out of order (a search over them would miss): not used. */
	{
		struct jma_range r = f.copy.code[0];

		f.copy.code[0] = f.copy.code[1];
		f.copy.code[1] = r;
		ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
		ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
		f.copy.code[1] = f.copy.code[0];
		f.copy.code[0] = r;
	}

	/* mallctl outside the module's code (in its headers): not used. */
	f.copy.fn_mallctl = base + 0x10;
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
	ck_assert_int_eq(proc_symcache_load(sub, key, m, n, &got), -ENOENT);
	f.copy.fn_mallctl = at + 0x234;

	/* Reached through another user's symlink, in any component: neither
	 * read nor made; through one of ours, used. */
	{
		char link[4300], via[4400];
		struct stat st;

		ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), 0);
		snprintf(link, sizeof(link), "%s/evil", dir);
		ck_assert_int_eq(symlink(dir, link), 0);
		ck_assert_int_eq(lchown(link, 65533, 65533), 0);
		snprintf(via, sizeof(via), "%s/evil/a/jemattach", dir);
		ck_assert_int_eq(proc_symcache_load(via, key, m, n, &got), -ENOENT);
		ck_assert_int_eq(proc_symcache_save(via, key, m, n, &f), -EPERM);
		snprintf(via, sizeof(via), "%s/evil/b/jemattach", dir);
		ck_assert_int_eq(proc_symcache_save(via, key, m, n, &f), -EPERM);
		snprintf(via, sizeof(via), "%s/b", dir);
		ck_assert_int_ne(stat(via, &st), 0);
		ck_assert_int_eq(lchown(link, 0, 0), 0);
		snprintf(via, sizeof(via), "%s/evil/a/jemattach", dir);
		ck_assert_int_eq(proc_symcache_load(via, key, m, n, &got), 0);
		free_found(&got);
	}

	/* A copy in a file the key does not name is not kept. */
	f.copy.path = (char *)"/nonexistent";
	ck_assert_int_eq(proc_symcache_save(sub, key, m, n, &f), -EINVAL);

	snprintf(entry, sizeof(entry), "rm -rf %s", dir);
	ck_assert_int_eq(system(entry), 0);
	free(key);
	free(other);
	att_maps_free(m, n);
}
END_TEST

Suite *suite_symcache(void)
{
	Suite *s = suite_create("symcache");
	TCase *t = tcase_create("symcache");

	tcase_add_test(t, test_build_id_of_self_matches_the_file);
	tcase_add_test(t, test_build_id_of_crafted_images);
	tcase_add_test(t, test_symcache_keeps_and_refuses);
	suite_add_tcase(s, t);
	return s;
}
