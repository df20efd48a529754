/* sym.c -- naming a heap profile's addresses with the symbol service's libdwfl.
 *
 * Modules come from the profile's MAPPED_LIBRARIES (files opened on this
 * host, checked against the inode the profile recorded) or from a live
 * process's /proc/PID/maps (its files as it sees them, with its rights:
 * symbols/view.h).  Debuginfo: build-id under /usr/lib/debug/.build-id,
 * .gnu_debuglink (symbols/debuginfo.h: plain names, regular files, bounded),
 * MiniDebugInfo (.gnu_debugdata, read when libdw is built with lzma),
 * debuginfod only when the caller allows it (symbols/dwfl.h).  Naming
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

#include "core/sized.h"
#include "heap/heap.h"
#include "heap/modsym.h"
#include "attach/procfs.h"
#include "symbols/dwfl.h"

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
	struct sym_dwfl *sd;
	Dwfl *dwfl;
	struct modref *refs;
	struct att_map *maps;	/* the live process's (--pid), for its map_files */
	size_t nmaps;
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

/* A module's file opened, or not: said once per module; a profile's file
 * on this host is checked against the inode the profile recorded. */
static void opened(void *arg, void *ud, const char *path, int fd)
{
	struct symctx *c = arg;
	struct modref *r = ud;
	const struct heap_module *m;
	struct stat st;

	if (!r)
		return;
	m = &c->h->modules[r->mod];
	if (fd < 0) {
		if (!r->warned++)
			warn(c, "cannot read %s: %s; its frames stay addresses%s", path, strerror(-fd),
			     c->o->pid ? "" : " (given the pid of the process, while it runs, its "
			     "files are read through it)");
		return;
	}
	if (!c->o->pid && m->inode && !fstat(fd, &st) && st.st_ino != m->inode)
		warn(c, "%s is not the file the profile was taken with (inode %llu, now %llu): "
		     "its names may be wrong (given the pid of the process, while it runs, its "
		     "own file is read)", path,
		     (unsigned long long)m->inode, (unsigned long long)st.st_ino);
}

static void dbg_warn(void *arg, const char *msg)
{
	warn(arg, "%s", msg);
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
	if (!err && att_maps_parse(text, &c->maps, &c->nmaps))
		err = -ENOMEM;
	free(text);
	if (!err)
		err = heap_modules_build(c->h, &live);
	free(live.v);
	if (err)
		return heap_fail(c->h, err, "%s", err == -ENOMEM ? "out of memory" : msg);
	return 0;
}

int jma_heap_symbolize(jma_heap *h, const struct jma_heap_symopts *opts)
{
	struct jma_heap_symopts o;
	struct symctx c = { .h = h, .o = &o };
	struct sym_dwfl *prev = NULL;
	struct sym_view v;
	struct sym_policy pol;
	int err;

	if ((err = SIZED_IN(opts, &o)))
		return heap_fail(h, err, "symbolize: its options' sz is not that of a "
				 "struct jma_heap_symopts this library knows");
	err = heap_index(h);
	if (err)
		return heap_fail(h, err, "out of memory");
	if (c.o->pid && (err = live_modules(&c)))
		goto out;
	v = (struct sym_view){ .pid = c.o->pid, .maps = c.maps, .nmaps = c.nmaps };
	pol = (struct sym_policy){ .debuginfo_path = c.o->debuginfo_path, .debuginfod = c.o->debuginfod,
				   .opened = opened, .warn = dbg_warn, .arg = &c };
	if (sym_dwfl_new(&v, &pol, &c.sd)) {
		err = heap_fail(h, -ENOMEM, "out of memory");
		goto out;
	}
	c.dwfl = sym_dwfl_get(c.sd);
	prev = sym_dwfl_enter(c.sd);
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
	sym_dwfl_leave(prev);
	sym_dwfl_free(c.sd);
	free(c.refs);
	att_maps_free(c.maps, c.nmaps);
	return err;
}
