/* debuginfo.c -- separate debuginfo and compressed sections within bounds (see debuginfo.h). */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbols/debuginfo.h"

#define DEFAULT_PATH ":.debug:/usr/lib/debug"

/* Inflated bytes accepted so far by this command (sym_inflate_charge). */
static uint64_t inflated;

static void say(const struct sym_dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sym_dbg *d, const char *fmt, ...)
{
	char buf[4400];
	va_list ap;

	if (!d->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->warn(d->arg, buf);
}

int sym_debuglink_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > 255 || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

/* Is @dir an absolute directory name without "." or ".." components? */
static int plain_dir(const char *dir, size_t n)
{
	if (!n || dir[0] != '/')
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (dir[i] != '/')
			continue;
		while (i + 1 + k < n && dir[i + 1 + k] != '/')
			k++;
		if ((k == 1 && dir[i + 1] == '.') || (k == 2 && !strncmp(dir + i + 1, "..", 2)))
			return 0;
	}
	return 1;
}

int sym_open_host(void *arg, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	(void)arg;
	return fd < 0 ? -errno : fd;
}

/* The inflated size of section @scn if it is a compressed debug section, else 0. */
static uint64_t inflated_size(Elf *elf, Elf_Scn *scn, size_t shstrndx)
{
	GElf_Shdr sh;
	const char *name;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		/* Unreadable headers are libdw's to refuse: it cannot inflate them either. */
		return gelf_getchdr(scn, &ch) ? ch.ch_size : 0;
	}
	name = elf_strptr(elf, shstrndx, sh.sh_name);
	if (name && !strncmp(name, ".zdebug", 7)) {
		Elf_Data *raw = elf_rawdata(scn, NULL);
		const unsigned char *b = raw ? raw->d_buf : NULL;
		uint64_t v = 0;

		/* "ZLIB" and the size, big-endian (the GNU format). */
		if (!b || raw->d_size < 12 || memcmp(b, "ZLIB", 4))
			return 0;
		for (int i = 4; i < 12; i++)
			v = v << 8 | b[i];
		return v;
	}
	return 0;
}

int sym_inflate_charge(Elf *elf, int strip, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t sum = 0, had;

	if (size)
		*size = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		uint64_t n = inflated_size(elf, scn, shstrndx);

		sum = sum + n < sum ? UINT64_MAX : sum + n;
	}
	if (size)
		*size = sum;
	had = __atomic_load_n(&inflated, __ATOMIC_RELAXED);
	do {
		if (sum > SYM_INFLATE_MAX - had)
			goto over;
	} while (!__atomic_compare_exchange_n(&inflated, &had, had + sum, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
over:
	while (strip && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (inflated_size(elf, scn, shstrndx) && gelf_getshdr(scn, &sh)) {
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
		}
	}
	return -EFBIG;
}

/* Does the file open at @fd describe @mod: the same build-id when the module
 * has one (libdwfl's rule), else the debuglink's CRC over the whole file when
 * there is one to compare? */
static int matches(const struct sym_dbg *d, Dwfl_Module *mod, int fd, const char *path,
		   const struct stat *st, GElf_Word crc)
{
	const unsigned char *want;
	const void *got = NULL;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &want, &vaddr), m, ok;
	Elf *elf;
	unsigned char buf[65536];
	uLong sum = crc32(0, NULL, 0);
	ssize_t r;

	if (n > 0) {
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		m = elf ? (int)dwelf_elf_gnu_build_id(elf, &got) : -1;
		ok = m == n && !memcmp(want, got, (size_t)n);
		elf_end(elf);
		return ok;
	}
	if (!crc)
		return 1;
	if ((uint64_t)st->st_size > SYM_DEBUGLINK_CRC_MAX) {
		say(d, "%s: %llu bytes, more than the %llu MiB whose checksum is computed: not used",
		    path, (unsigned long long)st->st_size, SYM_DEBUGLINK_CRC_MAX >> 20);
		return 0;
	}
	/* Never more than the size seen: a file that grows is not read on. */
	for (off_t done = 0; done < st->st_size; done += r) {
		size_t want_n = (size_t)(st->st_size - done) < sizeof(buf) ?
				(size_t)(st->st_size - done) : sizeof(buf);

		r = pread(fd, buf, want_n, done);
		if (r <= 0)
			return 0;
		sum = crc32(sum, buf, (uInt)r);
	}
	return (GElf_Word)sum == crc;
}

/* Accept the file open at @fd (closed when refused): a regular file of @mod
 * whose compressed sections fit the budget. */
static int accept(const struct sym_dbg *d, Dwfl_Module *mod, int fd, const char *path,
		  GElf_Word crc, int check)
{
	struct stat st;
	Elf *elf;
	int ok;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		say(d, "%s: not a regular file: not used as debuginfo", path);
		goto refuse;
	}
	if (check && !matches(d, mod, fd, path, &st, crc))
		goto refuse;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = sym_inflate_charge(elf, 0, NULL);
	elf_end(elf);
	if (ok) {
		say(d, "%s: its compressed debug sections would pass the %llu MiB this command "
		    "inflates: not used", path, SYM_INFLATE_MAX >> 20);
		goto refuse;
	}
	/* libdwfl reads it with blocking reads from here on. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
refuse:
	close(fd);
	return -1;
}

/* The debuglink places for @link of module file @file_name, through @d. */
static int by_link(const struct sym_dbg *d, Dwfl_Module *mod, const char *file_name,
		   const char *link, GElf_Word crc, char **out)
{
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	const char *p = d->path ? d->path : DEFAULT_PATH;
	int dlen;

	if (!link || !slash)
		return -1;
	if (!sym_debuglink_name_ok(link)) {
		say(d, "%s: its .gnu_debuglink is not a plain file name: not followed", file_name);
		return -1;
	}
	dlen = (int)(slash - file_name);
	if (!plain_dir(file_name, (size_t)dlen + 1))
		return -1;
	while (1) {
		size_t n = strcspn(p, ":");
		char entry[1024], path[4096];
		int fd;

		snprintf(entry, sizeof(entry), "%.*s", (int)(n < sizeof(entry) ? n : 0), p);
		p += n;
		if (entry[0] == '+' || entry[0] == '-')
			memmove(entry, entry + 1, strlen(entry));
		if (n >= sizeof(entry))
			path[0] = '\0';
		else if (!entry[0])
			snprintf(path, sizeof(path), "%.*s/%s", dlen, file_name, link);
		else if (entry[0] == '/')
			snprintf(path, sizeof(path), "%s%.*s/%s", strcmp(entry, "/") ? entry : "",
				 dlen, file_name, link);
		else
			snprintf(path, sizeof(path), "%.*s/%s/%s", dlen, file_name, entry, link);
		if (path[0] && strcmp(path, file_name)) {
			fd = d->open(d->arg, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
			if (fd >= 0 && (fd = accept(d, mod, fd, path, crc, 1)) >= 0) {
				*out = strdup(path);
				return fd;
			}
		}
		if (!*p++)
			return -1;
	}
}

int sym_find_debuginfo(const struct sym_dbg *d, Dwfl_Module *mod, void **userdata,
		       const char *modname, Dwarf_Addr base, const char *file_name,
		       const char *debuglink, GElf_Word crc, char **out)
{
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					      crc, out);

	if (fd >= 0 && (fd = accept(d, mod, fd, *out, crc, 0)) < 0) {
		free(*out);
		*out = NULL;
	}
	if (fd < 0)
		fd = by_link(d, mod, file_name, debuglink, crc, out);
	/* With neither file name nor link, libdwfl's callback only asks debuginfod. */
	if (fd < 0 && d->debuginfod) {
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0, out);
		if (fd >= 0 && (fd = accept(d, mod, fd, *out ? *out : "debuginfod", crc, 0)) < 0) {
			free(*out);
			*out = NULL;
		}
	}
	return fd;
}
