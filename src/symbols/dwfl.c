/* dwfl.c -- the one libdwfl set-up (see dwfl.h). */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/debuginfo.h"
#include "symbols/dwfl.h"

#define DEFAULT_PATH ":.debug:/usr/lib/debug"

struct sym_dwfl {
	Dwfl *dwfl;
	Dwfl_Callbacks cb;	/* libdwfl keeps a pointer to it */
	char *debuginfo_path;	/* libdwfl reads it through cb */
	struct sym_view view;
	struct sym_policy pol;
	char *sysroot, *executable;	/* the copies view and pol point to */
};

static __thread struct sym_dwfl *cur;

struct sym_dwfl *sym_dwfl_enter(struct sym_dwfl *d)
{
	struct sym_dwfl *prev = cur;

	cur = d;
	return prev;
}

void sym_dwfl_leave(struct sym_dwfl *prev)
{
	cur = prev;
}

Dwfl *sym_dwfl_get(const struct sym_dwfl *d)
{
	return d ? d->dwfl : NULL;
}

void sym_dwfl_set_maps(struct sym_dwfl *d, const struct att_map *maps, size_t n)
{
	if (d) {
		d->view.maps = maps;
		d->view.nmaps = n;
	}
}

static void warn(const struct sym_dwfl *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const struct sym_dwfl *d, const char *fmt, ...)
{
	char buf[PATH_MAX + 256];
	va_list ap;

	if (!d->pol.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->pol.warn(d->pol.arg, buf);
}

/* libdwfl's ELF of module file @fd, named @shown: private, so that debug
 * sections past the inflate budget can be made NOBITS.  @fd or -1 (closed). */
static int elf_of(const struct sym_dwfl *d, int fd, const char *shown, char **file_name, Elf **elfp)
{
	*elfp = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (*elfp && sym_inflate_charge(*elfp, 1, NULL))
		warn(d, "%s: its compressed debug sections would pass the %llu MiB a command "
		     "inflates: its DWARF is not read", shown, SYM_INFLATE_MAX >> 20);
	*file_name = strdup(shown);
	if (*elfp && *file_name)
		return fd;
	if (*elfp)
		elf_end(*elfp);
	*elfp = NULL;
	free(*file_name);
	*file_name = NULL;
	close(fd);
	return -1;
}

/* Host file @path when its build-id is @id (@n bytes). */
static int open_if_id(const struct sym_dwfl *d, const char *path, const unsigned char *id, int n,
		      char **file_name, Elf **elfp)
{
	const struct sym_view host = { 0 };
	char shown[PATH_MAX];
	const void *got = NULL;
	int fd = sym_view_module(&host, path, 0, shown, sizeof(shown)), ok;
	Elf *e;

	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = e && dwelf_elf_gnu_build_id(e, &got) == n && !memcmp(got, id, (size_t)n);
	elf_end(e);
	if (!ok) {
		close(fd);
		return -1;
	}
	return elf_of(d, fd, shown, file_name, elfp);
}

/* A module of no live process (a core's) whose named file cannot be read,
 * by its build-id: libdwfl's own lookup when the network is allowed (it ends
 * with debuginfod), else its local places without it: the executable the
 * user named, then <dir>/.build-id/NN/REST under each absolute entry of the
 * debuginfo path. */
static int by_build_id(const struct sym_dwfl *d, Dwfl_Module *mod, void **ud, const char *name,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const char *p = d->debuginfo_path ? d->debuginfo_path : DEFAULT_PATH;
	const unsigned char *id;
	GElf_Addr vaddr;
	char hex[130];
	int n, fd;

	if (d->pol.debuginfod)
		return dwfl_build_id_find_elf(mod, ud, name, base, file_name, elfp);
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n < 2 || n > 64)
		return -1;
	if (d->executable && (fd = open_if_id(d, d->executable, id, n, file_name, elfp)) >= 0)
		return fd;
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (;;) {
		size_t k = strcspn(p, ":");
		const char *e = p + (k && (*p == '+' || *p == '-'));
		char path[PATH_MAX];

		if (*e == '/' && (size_t)snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s",
						  (int)(p + k - e), e, hex, hex + 2) < sizeof(path) &&
		    (fd = open_if_id(d, path, id, n, file_name, elfp)) >= 0)
			return fd;
		if (!p[k])
			return -1;
		p += k + 1;
	}
}

static int find_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct sym_dwfl *d = cur;
	char shown[PATH_MAX];
	int fd;

	if (!d)
		return -1;
	if (name && name[0] == '/') {
		fd = sym_view_module(&d->view, name, base, shown, sizeof(shown));
		if (d->pol.opened)
			d->pol.opened(d->pol.arg, *ud, shown, fd);
		if (fd >= 0)
			return elf_of(d, fd, shown, file_name, elfp);
	} else if (d->view.pid > 0) {
		/* [vdso] and the like, from the process's memory. */
		return dwfl_linux_proc_find_elf(mod, ud, name, base, file_name, elfp);
	}
	/* A live process's files are never looked for on this host. */
	return d->view.pid > 0 ? -1 : by_build_id(d, mod, ud, name, base, file_name, elfp);
}

static void dbg_warn(void *arg, const char *msg)
{
	warn(arg, "%s", msg);
}

static int dbg_open(void *arg, const char *path, int flags)
{
	return sym_view_open(&((struct sym_dwfl *)arg)->view, path, flags);
}

/* Separate debuginfo by the rules of debuginfo.h, debuglinks opened in the
 * view: a live process's with its rights. */
static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
	struct sym_dwfl *d = cur;
	struct sym_dbg dbg;

	if (!d)
		return -1;
	dbg = (struct sym_dbg){ .open = dbg_open, .arg = d, .path = d->debuginfo_path,
				.debuginfod = d->pol.debuginfod, .warn = dbg_warn };
	return sym_find_debuginfo(&dbg, mod, ud, modname, base, file_name, debuglink, crc, out);
}

int sym_dwfl_new(const struct sym_view *v, const struct sym_policy *p, struct sym_dwfl **out)
{
	static const struct sym_policy defaults;
	struct sym_dwfl *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->view = *v;
	d->pol = p ? *p : defaults;
	d->cb.find_elf = find_elf;
	d->cb.find_debuginfo = find_debuginfo;
	d->cb.debuginfo_path = &d->debuginfo_path;
	if ((d->pol.debuginfo_path && !(d->debuginfo_path = strdup(d->pol.debuginfo_path))) ||
	    (v->sysroot && !(d->view.sysroot = d->sysroot = strdup(v->sysroot))) ||
	    (d->pol.executable && !(d->pol.executable = d->executable = strdup(d->pol.executable))) ||
	    !(d->dwfl = dwfl_begin(&d->cb))) {
		sym_dwfl_free(d);
		return -ENOMEM;
	}
	d->pol.debuginfo_path = NULL;
	*out = d;
	return 0;
}

void sym_dwfl_free(struct sym_dwfl *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->debuginfo_path);
	free(d->sysroot);
	free(d->executable);
	free(d);
}

int sym_dwfl_report_maps(struct sym_dwfl *d, const char *text)
{
	size_t n = strlen(text);
	struct sym_dwfl *prev = sym_dwfl_enter(d);
	/* fmemopen only reads: the cast does not let it write. */
	FILE *f = fmemopen((char *)text, n ? n : 1, "r");
	int err = f ? dwfl_linux_proc_maps_report(d->dwfl, f) : errno;

	if (f)
		fclose(f);
	if (!err)
		dwfl_report_end(d->dwfl, NULL, NULL);
	sym_dwfl_leave(prev);
	return err > 0 ? -err : err ? -EIO : 0;
}

int sym_dwfl_report_core(struct sym_dwfl *d, Elf *core)
{
	struct sym_dwfl *prev = sym_dwfl_enter(d);
	int err = dwfl_core_file_report(d->dwfl, core, d->executable);

	if (err >= 0)
		dwfl_report_end(d->dwfl, NULL, NULL);
	sym_dwfl_leave(prev);
	return err < 0 ? -EIO : 0;
}
