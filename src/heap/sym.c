/* sym.c -- naming a heap profile's addresses with libdwfl.
 *
 * Modules come from the profile's MAPPED_LIBRARIES (files opened on this
 * host, checked against the inode the profile recorded) or from a live
 * process's /proc/PID/maps (files opened through /proc/PID/map_files, which
 * works for deleted and replaced files, else resolved inside /proc/PID/root
 * with openat2(RESOLVE_IN_ROOT) so a container's symlinks cannot point us at
 * host files).  Debuginfo is libdwfl's standard search: build-id under
 * /usr/lib/debug/.build-id, .gnu_debuglink, MiniDebugInfo.  Each address
 * becomes its chain of inlined frames from DWARF scopes, innermost first.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap/heap.h"
#include "attach/procfs.h"

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
	int root_fd;
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

/* Functions that only hand out memory for their caller (the malloc API,
 * C++'s operator new in all its variants, Rust's global allocator shims):
 * the site is whoever called them. */
static int is_alloc_name(const char *nm)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "cfree", "memalign",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc", "mallocx", "rallocx",
		"xallocx", "dallocx", "sdallocx", "sdallocx_noflags", "__libc_malloc",
		"__libc_calloc", "__libc_realloc", "__libc_memalign", "__rust_alloc",
		"__rust_alloc_zeroed", "__rust_realloc", "__rg_alloc", "__rg_alloc_zeroed",
		"__rg_realloc",
	};

	/* jemalloc's private namespace (je_*) and tikv-jemallocator's prefix. */
	if (!strncmp(nm, "je_", 3) || !strncmp(nm, "_rjem_", 6))
		return 1;
	if (!strncmp(nm, "_Znw", 4) || !strncmp(nm, "_Zna", 4))
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(nm, names[i]))
			return 1;
	return 0;
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

/* The file of module @m as the live process maps it. */
static int open_live(struct symctx *c, const struct heap_module *m, const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char mf[96];
	int fd;

	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)c->o->pid,
		 (unsigned long long)m->lo, (unsigned long long)m->first_end);
	fd = open_regular(open(mf, O_RDONLY | O_CLOEXEC));
	if (fd >= 0 || c->root_fd < 0)
		return fd;
	return open_regular((int)syscall(SYS_openat2, c->root_fd, path, &how, sizeof(how)));
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
	*elfp = elf_begin(fd, ELF_C_READ_MMAP, NULL);
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

static int add_frame(jma_heap *h, const char *func, const char *file, int line)
{
	struct heap_frame *f;

	if (h->nframes == h->frames_cap) {
		size_t ncap = h->frames_cap ? h->frames_cap * 2 : 1024;
		f = realloc(h->frames, ncap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		h->frames = f;
		h->frames_cap = ncap;
	}
	f = &h->frames[h->nframes];
	f->func = heap_str(&h->str, func);
	f->file = file ? heap_str(&h->str, file) : 0;
	f->line = line > 0 ? line : 0;
	if (f->func == UINT32_MAX || f->file == UINT32_MAX)
		return -ENOMEM;
	h->nframes++;
	return 0;
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
	return n;
}

/* Where an inlined call sits in its caller: DW_AT_call_file/line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word idx = 0, ln = 0;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &ln) == 0 && ln < (1U << 30))
		*line = (int)ln;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

/* Frames of one address: the inlined chain from DWARF, else the ELF symbol. */
static int name_loc(jma_heap *h, Dwfl_Module *dm, struct heap_loc *l, const char *sym)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(dm, l->addr, &bias), *scopes = NULL;
	Dwfl_Line *dl = dwfl_module_getsrc(dm, l->addr);
	const char *file = NULL;
	int line = 0, n = 0, err = 0;

	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	l->frame = (uint32_t)h->nframes;
	if (cu)
		n = dwarf_getscopes(cu, l->addr - bias, &scopes);
	/* dwarf_getscopes continues an inlined instance with its abstract
	 * definition's scopes; the DIE tree above the innermost scope is the
	 * concrete chain of callers it was inlined into. */
	if (n > 0) {
		Dwarf_Die inner = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
	}
	for (int i = 0; i < n && !err; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *nm;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		nm = die_name(&scopes[i]);
		/* The outermost function is the ELF symbol: the name the linker knows. */
		if (tag == DW_TAG_subprogram && sym)
			nm = sym;
		err = add_frame(h, nm ? nm : "??", file, line);
		if (tag == DW_TAG_subprogram)
			break;
		call_site(cu, &scopes[i], &file, &line);
	}
	free(scopes);
	if (!err && h->nframes == l->frame && sym)
		err = add_frame(h, sym, file, line);
	l->nframe = (uint32_t)(h->nframes - l->frame);
	return err;
}

static void module_identity(jma_heap *h, Dwfl_Module *dm, struct heap_module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	int n = dwfl_module_build_id(dm, &bits, &vaddr);

	if (dwfl_module_getelf(dm, &m->bias) && n > 0 && n <= 64) {
		char hex[129];
		for (int i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
		m->build_id = heap_str(&h->str, hex);
		if (m->build_id == UINT32_MAX)
			m->build_id = 0;
	}
	m->has_dwarf = dwfl_module_getdwarf(dm, &bias) != NULL;
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

static int name_all(struct symctx *c)
{
	jma_heap *h = c->h;
	int32_t last = -1;

	for (size_t i = 0; i < h->nlocs; i++) {
		struct heap_loc *l = &h->locs[i];
		Dwfl_Module *dm;
		GElf_Off off;
		GElf_Sym es;
		const char *sym;
		int err;

		if (l->module < 0)
			continue;
		dm = dwfl_addrmodule(c->dwfl, l->addr);
		if (!dm)
			continue;
		if (l->module != last) {
			module_identity(h, dm, &h->modules[l->module]);
			last = l->module;
		}
		sym = dwfl_module_addrinfo(dm, l->addr, &off, &es, NULL, NULL, NULL);
		if (sym) {
			/* .dynsym names carry their version ("__libc_start_main@@GLIBC_2.34"). */
			char *bare = strndup(sym, strcspn(sym, "@"));
			l->symbol = bare ? heap_str(&h->str, bare) : UINT32_MAX;
			free(bare);
			if (l->symbol == UINT32_MAX)
				return -ENOMEM;
			sym = h->str.str[l->symbol];
			l->alloc |= is_alloc_name(sym);
		}
		err = name_loc(h, dm, l, sym);
		if (err)
			return err;
	}
	return 0;
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
	snprintf(path, sizeof(path), "/proc/%d/root", (int)c->o->pid);
	c->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

int jma_heap_symbolize(jma_heap *h, const struct jma_heap_symopts *o)
{
	static const struct jma_heap_symopts none;
	struct symctx c = { .h = h, .o = o ? o : &none, .root_fd = -1 };
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
	c.cb.find_debuginfo = dwfl_standard_find_debuginfo;
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
	if (c.root_fd >= 0)
		close(c.root_fd);
	return err;
}
