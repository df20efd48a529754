/* sym.c -- naming a heap profile's addresses with libdwfl.
 *
 * Modules come from the profile's MAPPED_LIBRARIES (files opened on this
 * host, checked against the inode the profile recorded) or from a live
 * process's /proc/PID/maps (files opened through /proc/PID/map_files, which
 * works for deleted and replaced files, else resolved inside /proc/PID/root
 * with the target's rights, process/targetfs.h, so a container's symlinks
 * cannot point us at host files).  Debuginfo: build-id under
 * /usr/lib/debug/.build-id, .gnu_debuglink (symbols/debuginfo.h: plain
 * names, regular files, bounded), MiniDebugInfo (.gnu_debugdata, read when
 * libdw is built with lzma), debuginfod when DEBUGINFOD_URLS is set.  Naming
 * itself is modsym.c's.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap/heap.h"
#include "heap/modsym.h"
#include "attach/procfs.h"
#include "process/targetfs.h"
#include "symbols/debuginfo.h"

struct symctx;

/* What libdwfl's find_elf callback gets for each module it asks about. */
struct modref {
	struct symctx *c;
	size_t mod;
	int warned;
};

struct symctx {
	jma_heap *h;
	const struct jma_heap_symopts *o;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	struct modref *refs;
};

static void warn(struct symctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct symctx *c, const char *fmt, ...)
{
	char buf[PATH_MAX + 256];
	va_list ap;

	if (!c->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->o->log(c->o->log_arg, JMA_LOG_WARN, buf);
}

static int open_regular(int fd)
{
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

/* The file of module @m as the live process maps it, else as it sees @path,
 * with its rights. */
static int open_live(struct symctx *c, const struct heap_module *m, const char *path)
{
	char mf[96];
	int fd;

	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)c->o->pid,
		 (unsigned long long)m->lo, (unsigned long long)m->first_end);
	fd = open_regular(open(mf, O_RDONLY | O_CLOEXEC));
	if (fd >= 0)
		return fd;
	fd = jma_tfs_open(c->o->pid, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	errno = -fd;
	return open_regular(fd);
}

/* The file of module @m as the profile names it, on this host. */
static int open_offline(struct symctx *c, const struct heap_module *m, const char *path)
{
	int fd = open_regular(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
	struct stat st;

	if (fd >= 0 && m->inode && !fstat(fd, &st) && st.st_ino != m->inode)
		warn(c, "%s is not the file the profile was taken with (inode %llu, now %llu): "
		     "its names may be wrong; use --pid while the process runs", path,
		     (unsigned long long)m->inode, (unsigned long long)st.st_ino);
	return fd;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct modref *r = *userdata;
	struct symctx *c = r->c;
	const struct heap_module *m = &c->h->modules[r->mod];
	char path[PATH_MAX];
	size_t n;
	int fd;

	(void)mod;
	(void)name;
	(void)base;
	snprintf(path, sizeof(path), "%s", c->h->str.str[m->path]);
	/* The kernel marks unlinked files; the name is all that is left of them. */
	n = strlen(path);
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		path[n - 10] = '\0';
	fd = c->o->pid ? open_live(c, m, path) : open_offline(c, m, path);
	if (fd < 0) {
		if (!r->warned++)
			warn(c, "cannot read %s: %s; its frames stay addresses%s", path, strerror(-fd),
			     c->o->pid ? "" : " (with --pid, files are read through the live process)");
		return -1;
	}
	/* Private: sections whose DWARF would pass the budget are made NOBITS. */
	*elfp = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (*elfp && sym_inflate_charge(*elfp, 1, NULL))
		warn(c, "%s: its compressed debug sections would pass the %llu MiB a command "
		     "inflates: its DWARF is not read", path, SYM_INFLATE_MAX >> 20);
	*file_name = strdup(path);
	if (!*elfp || !*file_name) {
		if (*elfp)
			elf_end(*elfp);
		*elfp = NULL;
		free(*file_name);
		*file_name = NULL;
		close(fd);
		return -1;
	}
	return fd;
}

static int open_as_target(void *arg, const char *path, int flags)
{
	return jma_tfs_open(((struct symctx *)arg)->o->pid, path, flags);
}

static void dbg_warn(void *arg, const char *msg)
{
	warn(arg, "%s", msg);
}

/* Separate debuginfo (symbols/debuginfo.h): debuglinks in the live process's
 * view with its rights, or on this host with ours; then debuginfod. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **out)
{
	struct modref *r = *userdata;
	struct sym_dbg d = { .path = NULL, .debuginfod = 1, .warn = dbg_warn };

	if (!r)
		return -1;
	d.arg = r->c;
	d.path = r->c->debuginfo_path;
	d.open = r->c->o->pid ? open_as_target : sym_open_host;
	return sym_find_debuginfo(&d, mod, userdata, modname, base, file_name, debuglink, crc, out);
}

/* Whether @elf carries DWARF itself (a -g build), rather than in a separate file. */
static int has_own_dwarf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return 1;
	}
	return 0;
}

/* The build-id of @dm, and whether its DWARF is to be read (*use_dwarf):
 * always when the file has it; from a separate debuginfo file (a -dbgsym
 * package: large, compressed, all read at once -- three quarters of the
 * time on a Redis profile, for the few libc frames at the root) only when
 * the caller asked for lines.  Separate files name functions either way. */
static void module_identity(struct symctx *c, Dwfl_Module *dm, struct heap_module *m,
			    int *use_dwarf)
{
	jma_heap *h = c->h;
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	/* The build-id is known once the ELF file is. */
	Elf *elf = dwfl_module_getelf(dm, &m->bias);
	int n = elf ? dwfl_module_build_id(dm, &bits, &vaddr) : 0;

	if (n > 0 && n <= 64) {
		char hex[129];
		for (int i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
		m->build_id = heap_str(&h->str, hex);
		if (m->build_id == UINT32_MAX)
			m->build_id = 0;
	}
	*use_dwarf = c->o->lines || has_own_dwarf(elf);
	m->has_dwarf = *use_dwarf && dwfl_module_getdwarf(dm, &bias) != NULL;
}

static int report_modules(struct symctx *c)
{
	jma_heap *h = c->h;

	c->refs = calloc(h->nmodules ? h->nmodules : 1, sizeof(*c->refs));
	if (!c->refs)
		return -ENOMEM;
	dwfl_report_begin(c->dwfl);
	for (size_t i = 0; i < h->nmodules; i++) {
		const char *path = h->str.str[h->modules[i].path];
		Dwfl_Module *dm = dwfl_report_module(c->dwfl, path, h->modules[i].lo, h->modules[i].hi);
		void **ud;

		if (!dm) {
			warn(c, "%s at 0x%llx: %s", path, (unsigned long long)h->modules[i].lo,
			     dwfl_errmsg(-1));
			continue;
		}
		c->refs[i].c = c;
		c->refs[i].mod = i;
		dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = &c->refs[i];
	}
	return dwfl_report_end(c->dwfl, NULL, NULL) ? -EIO : 0;
}

/* Name every location, module by module; each module's tables are built
 * once, when its first address is met. */
static int name_all(struct symctx *c)
{
	jma_heap *h = c->h;
	struct modsym **tabs = calloc(h->nmodules ? h->nmodules : 1, sizeof(*tabs));
	int err = tabs ? 0 : -ENOMEM;

	for (size_t i = 0; i < h->nlocs && !err; i++) {
		struct heap_loc *l = &h->locs[i];
		Dwfl_Module *dm;

		if (l->module < 0 || !(dm = dwfl_addrmodule(c->dwfl, l->addr)))
			continue;
		if (!tabs[l->module]) {
			int use_dwarf;

			module_identity(c, dm, &h->modules[l->module], &use_dwarf);
			tabs[l->module] = modsym_new(h, dm, use_dwarf);
			if (!tabs[l->module]) {
				err = -ENOMEM;
				break;
			}
		}
		err = modsym_name(h, tabs[l->module], &h->modules[l->module], l);
	}
	for (size_t i = 0; tabs && i < h->nmodules; i++)
		modsym_free(tabs[i]);
	free(tabs);
	return err;
}

/* Use the live process's mappings instead of the profile's. */
static int live_modules(struct symctx *c)
{
	struct heap_maps live = { 0 };
	char path[64], msg[256];
	char *text;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->o->pid);
	err = att_proc_read(path, &text, &len);
	if (err)
		return heap_fail(c->h, err, "reading %s: %s", path,
				 err == -ESRCH ? "no such process" : strerror(-err));
	err = heap_parse_maps(c->h, &live, text, len, path, msg, sizeof(msg));
	free(text);
	if (!err)
		err = heap_modules_build(c->h, &live);
	free(live.v);
	if (err)
		return heap_fail(c->h, err, "%s", err == -ENOMEM ? "out of memory" : msg);
	return 0;
}

int jma_heap_symbolize(jma_heap *h, const struct jma_heap_symopts *o)
{
	static const struct jma_heap_symopts none;
	struct symctx c = { .h = h, .o = o ? o : &none };
	int err;

	err = heap_index(h);
	if (err)
		return heap_fail(h, err, "out of memory");
	if (c.o->pid) {
		err = live_modules(&c);
		if (err)
			return err;
	}
	c.debuginfo_path = c.o->debuginfo_path ? strdup(c.o->debuginfo_path) : NULL;
	c.cb.find_elf = find_elf;
	c.cb.find_debuginfo = find_debuginfo;
	c.cb.debuginfo_path = &c.debuginfo_path;
	c.dwfl = dwfl_begin(&c.cb);
	if (!c.dwfl) {
		err = heap_fail(h, -ENOMEM, "libdwfl: %s", dwfl_errmsg(-1));
		goto out;
	}
	err = report_modules(&c);
	if (err) {
		err = heap_fail(h, err, "libdwfl: %s", err == -ENOMEM ? "out of memory" : dwfl_errmsg(-1));
		goto out;
	}
	err = name_all(&c);
	if (err)
		err = heap_fail(h, err, "out of memory");
	else
		h->symbolized = 1;
out:
	if (c.dwfl)
		dwfl_end(c.dwfl);
	free(c.refs);
	free(c.debuginfo_path);
	return err;
}
