/* symbols.c -- finding jemalloc in a live process, and naming its code, with libdwfl.
 *
 * Files are opened as the target sees them: /proc/PID/map_files/<range> first
 * (works for deleted or replaced files and inside containers), then the path
 * resolved inside /proc/PID/root with openat2(RESOLVE_IN_ROOT), never a host
 * path.  Debuginfo is searched on the local disk only (build-id under
 * /usr/lib/debug, the .gnu_debuglink places in the target's view,
 * MiniDebugInfo): see find_debuginfo.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/procfs.h"
#include "attach/restorer.h"
#include "process/fdes.h"
#include "process/symcache.h"
#include "process/symbols.h"
#include "symbols/dnames.h"
#include "process/targetfs.h"
#include "symbols/debuginfo.h"

/* Names already looked up, by pc: dwfl_module_addrinfo scans a module's
 * whole symbol table per address, and the threads of a process mostly share
 * their frames (a thousand workers in the same wait). */
#define NAME_CACHE	4096
struct named {
	uint64_t pc;		/* 0: empty */
	uint64_t off;
	const char *name, *module, *file;	/* owned by libdwfl */
	int line, with_line;
};

struct fde_table {
	Dwfl_Module *mod;
	struct jma_fdes f;
};

struct jma_syms {
	struct named *names;	/* NAME_CACHE entries, allocated on first use */
	struct fde_table *fdes;	/* per module, loaded on first need (fde_name) */
	size_t nfdes;
	char **fde_names;	/* names made for stripped functions, owned */
	size_t nfde_names;
	struct sym_dnames *dnames;	/* C++ names demangled, made on first need */
	int no_demangle;	/* jma_syms_set_demangle(sy, 0) */
	pid_t pid;
	Dwfl *dwfl;		/* made on first need (syms_dwfl) */
	char *code_maps;	/* the maps lines libdwfl reports modules from */
	int cached;		/* jemalloc found by the cache, libdwfl not loaded for it */
	struct jma_range *waits;	/* pthread_cond_*wait code, sorted (find_cond_waits) */
	size_t nwaits;
	int waits_known;
	uint64_t message;	/* <prefix>malloc_message (jma_syms_malloc_message) */
	int message_known;
	uint64_t restorer;	/* the rt_sigreturn trampoline (jma_syms_restorer) */
	int restorer_known;
	struct att_map *maps;
	size_t nmaps;
	struct jma_copy *copies;
	size_t ncopies;
	size_t chosen;
};

/* libdwfl's find_elf callback has no user argument; it runs inside our calls only. */
static __thread struct jma_syms *cur;

static const char *const public_names[] = {
	"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "mallocx", "rallocx", "xallocx", "sallocx", "dallocx", "sdallocx", "nallocx",
	"mallctl", "mallctlnametomib", "mallctlbymib", "malloc_stats_print",
	"malloc_usable_size", "malloc_message", "malloc_conf",
};

/* jemalloc's source files (3.x-5.x), as STT_FILE symbols name them. */
static const char *const jemalloc_files[] = {
	"arena.c", "background_thread.c", "base.c", "bin.c", "bin_info.c", "bitmap.c",
	"buf_writer.c", "cache_bin.c", "ckh.c", "counter.c", "ctl.c", "decay.c", "div.c",
	"ecache.c", "edata.c", "edata_cache.c", "ehooks.c", "emap.c", "eset.c", "exp_grow.c",
	"extent.c", "extent_dss.c", "extent_mmap.c", "fxp.c", "san.c", "san_bump.c", "hook.c",
	"hpa.c", "hpa_hooks.c", "hpdata.c", "inspect.c", "jemalloc.c", "large.c", "log.c",
	"malloc_io.c", "mutex.c", "nstime.c", "pa.c", "pa_extra.c", "pai.c", "pac.c", "pages.c",
	"peak_event.c", "prof.c", "prof_data.c", "prof_log.c", "prof_recent.c", "prof_stats.c",
	"prof_sys.c", "psset.c", "rtree.c", "safety_check.c", "sc.c", "sec.c", "stats.c", "sz.c",
	"tcache.c", "test_hooks.c", "thread_event.c", "ticker.c", "tsd.c", "witness.c",
	"chunk.c", "chunk_dss.c", "chunk_mmap.c", "huge.c", "quarantine.c", "prng.c", "spin.c",
	"mb.c", "atomic.c", "valgrind.c", "jemalloc_cpp.cpp",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int open_in_target(struct jma_syms *sy, const char *path)
{
	char mf[96];
	int fd;

	for (size_t i = 0; i < sy->nmaps; i++) {
		if (!sy->maps[i].path || strcmp(sy->maps[i].path, path))
			continue;
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)sy->pid,
			 (unsigned long long)sy->maps[i].start, (unsigned long long)sy->maps[i].end);
		fd = open(mf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		break;
	}
	return jma_tfs_open(sy->pid, path, O_RDONLY);
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	int fd;

	if (!name || name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	if (!cur)
		return -1;
	fd = open_in_target(cur, name);
	if (fd < 0)
		return -1;
	/* Private: sections whose DWARF would pass the budget are made NOBITS. */
	*elfp = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!*elfp) {
		close(fd);
		return -1;
	}
	sym_inflate_charge(*elfp, 1, NULL);
	*file_name = strdup(name);
	return fd;
}

static int open_as_target(void *arg, const char *path, int flags)
{
	return jma_tfs_open(((struct jma_syms *)arg)->pid, path, flags);
}

/* Separate debuginfo: build-id under /usr/lib/debug on this host, then the
 * .gnu_debuglink places in the target's view and with its rights
 * (symbols/debuginfo.h).  dwfl_standard_find_debuginfo would, when nothing
 * is found -- the usual case for a stripped libjemalloc.so.2 -- dlopen the
 * debuginfod client (curl, TLS, LDAP, Kerberos: ~30 libraries, 10-20 ms of
 * start-up) even when no server is configured.  A live command must not pay
 * that, nor wait on a network. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
	struct sym_dbg d = { .open = open_as_target, .arg = cur };

	if (!cur)
		return -1;
	return sym_find_debuginfo(&d, mod, userdata, modname, base, file_name, debuglink, crc, out);
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct scan {
	struct jma_syms *sy;
	const char *want_prefix;
	const char *want_module;
	int pass;		/* 1: by symbols; 2: by .rodata (see scan_module) */
	int found_stripped;
	char stripped_in[256];
	int err;
};

static int is_func(const GElf_Sym *s)
{
	int t = GELF_ST_TYPE(s->st_info);
	return (t == STT_FUNC || t == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF;
}

/* In a static copy, jemalloc's code is: its public functions (with the prefix),
 * its private namespace (je_*, or <prefix>je_* when renamed), and local
 * functions of its source files. */
static int static_code_ranges(Dwfl_Module *mod, struct jma_copy *c)
{
	int n = dwfl_module_getsymtab(mod), in_je_file = 0;
	size_t cap = 0, plen = strlen(c->prefix);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &addr, NULL, NULL, NULL);
		int take;

		if (!nm)
			continue;
		if (GELF_ST_TYPE(s.st_info) == STT_FILE) {
			in_je_file = in_list(base_name(nm), jemalloc_files,
					     sizeof(jemalloc_files) / sizeof(*jemalloc_files));
			continue;
		}
		if (GELF_ST_BIND(s.st_info) != STB_LOCAL)
			in_je_file = 0;
		if (!is_func(&s))
			continue;
		take = in_je_file || !strncmp(nm, "je_", 3) ||
		       (plen && !strncmp(nm, c->prefix, plen) &&
			(!strncmp(nm + plen, "je_", 3) ||
			 in_list(nm + plen, public_names, sizeof(public_names) / sizeof(*public_names)))) ||
		       (!plen && in_list(nm, public_names, sizeof(public_names) / sizeof(*public_names)));
		if (take && jma_ranges_add(&c->code, &c->ncode, &cap, addr, addr + s.st_size))
			return -ENOMEM;
	}
	jma_ranges_merge(c->code, &c->ncode, 64);
	return 0;
}

static Elf_Data *rodata(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && !strcmp(nm, ".rodata"))
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

static int has_jemalloc_strings(Dwfl_Module *mod)
{
	Elf_Data *d = rodata(mod);

	return d && d->d_buf && memmem(d->d_buf, d->d_size, "<jemalloc>: ", 12);
}

/* jemalloc reads its options from JEMALLOC_CPREFIX "MALLOC_CONF", a string
 * literal in its .rodata: "MALLOC_CONF", "JE_MALLOC_CONF", "_RJEM_MALLOC_CONF".
 * Without it, fall back to the convention: the upper-cased prefix. */
static void conf_env(Dwfl_Module *mod, const char *prefix, char *out, size_t len)
{
	Elf_Data *d = rodata(mod);
	const char *p = d ? d->d_buf : NULL, *end = p ? p + d->d_size : NULL;

	while (p && (p = memmem(p, (size_t)(end - p), "MALLOC_CONF", 12))) {
		const char *s = p;

		/* Whole string: NUL after, only [A-Z0-9_] back to the previous NUL. */
		while (s > (const char *)d->d_buf && (s[-1] == '_' || (s[-1] >= 'A' && s[-1] <= 'Z') ||
						      (s[-1] >= '0' && s[-1] <= '9')))
			s--;
		if ((s == (const char *)d->d_buf || s[-1] == '\0') && (size_t)(p + 11 - s) < len) {
			memcpy(out, s, (size_t)(p + 11 - s));
			out[p + 11 - s] = '\0';
			return;
		}
		p += 12;
	}
	{
		size_t i = 0;
		for (; prefix[i] && i + 12 < len; i++)
			out[i] = (char)(prefix[i] >= 'a' && prefix[i] <= 'z' ? prefix[i] - 32 : prefix[i]);
		snprintf(out + i, len - i, "MALLOC_CONF");
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Visit the defined symbols of @elf's tables of type @type (SHT_DYNSYM;
 * 0: .symtab and .dynsym) whose string table holds the @nlen bytes of
 * @needle: one memmem over a string table rules out most modules (libc's
 * thousands of names) without a look at each symbol.  The first nonzero
 * @fn returns is returned; @fn names a symbol with elf_strptr(@elf, @strtab,
 * st_name) only when it needs to. */
static int each_symbol(Elf *elf, Elf64_Word type, const char *needle, size_t nlen,
		       int (*fn)(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg), void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d, *str;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)) ||
		    (type ? sh.sh_type != type
			  : sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		str = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
		if (str && str->d_buf && !memmem(str->d_buf, str->d_size, needle, nlen))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			int r;

			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (r = fn(elf, sh.sh_link, &sym, arg)))
				return r;
		}
	}
	return 0;
}

static int is_mallctl(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	const char *nm = elf_strptr(elf, strtab, sym->st_name);

	(void)arg;
	return nm && ends_with(nm, "mallctl");
}

/* Does the module's main file define a *mallctl symbol (.dynsym or
 * .symtab)?  Asked before anything else so that separate debuginfo is searched
 * only where it may be needed: loading libc's debuginfo for its symbol table
 * would cost more than the rest of the start-up together. */
static int has_mallctl_symbol(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	/* "mallctl" and its NUL: a name ending so. */
	return !elf || each_symbol(elf, 0, "mallctl", 8, is_mallctl, NULL);
}

/* Could this module hold jemalloc: by its symbols, or by jemalloc's messages
 * in its .rodata (a stripped copy that debuginfo may name)? */
static int maybe_jemalloc(Dwfl_Module *mod)
{
	return has_mallctl_symbol(mod) || has_jemalloc_strings(mod);
}

/* The prefix of a symbol named <prefix><suffix>, if plausible. */
static int prefix_of(const char *nm, const char *suffix, char *out, size_t len)
{
	size_t n = strlen(nm), sl = strlen(suffix);

	if (n < sl || strcmp(nm + n - sl, suffix) || n - sl >= len || n - sl > 32)
		return 0;
	for (size_t i = 0; i < n - sl; i++)
		if (!(nm[i] == '_' || (nm[i] >= 'a' && nm[i] <= 'z') || (nm[i] >= 'A' && nm[i] <= 'Z') ||
		      (nm[i] >= '0' && nm[i] <= '9')))
			return 0;
	memcpy(out, nm, n - sl);
	out[n - sl] = '\0';
	return 1;
}

static int scan_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	struct scan *sc = arg;
	struct jma_syms *sy = sc->sy;
	int n;
	struct { char prefix[40]; uint64_t ctl, print; } cand[8];
	size_t ncand = 0;
	int any_ctl = 0;	/* a <prefix>mallctl of any prefix: not stripped */

	(void)ud;
	(void)low;
	/* A core's modules (no maps) are named by soname: use their file. */
	if (!name || (name[0] != '/' && sy->maps))
		return DWARF_CB_OK;
	/* First pass: modules whose own symbols name mallctl.  Second, only when
	 * the first found no copy: the others whose .rodata holds jemalloc's
	 * messages (a stripped static copy, named by its debuginfo if any).
	 * Searching every library's .rodata -- libcrypto's alone is a megabyte
	 * -- was most of a live command's start-up. */
	if (sc->pass == 1 ? !has_mallctl_symbol(mod)
			  : has_mallctl_symbol(mod) || !has_jemalloc_strings(mod))
		return DWARF_CB_OK;
	if (name[0] != '/')
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &name, NULL);
	if (!name)
		return DWARF_CB_OK;
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &addr, NULL, NULL, NULL);
		char p[40];
		int is_ctl;
		size_t k;

		if (!nm || !is_func(&s))
			continue;
		is_ctl = prefix_of(nm, "mallctl", p, sizeof(p));
		if (!is_ctl && !prefix_of(nm, "malloc_stats_print", p, sizeof(p)))
			continue;
		any_ctl |= is_ctl;
		if (sc->want_prefix && strcmp(p, sc->want_prefix))
			continue;
		for (k = 0; k < ncand && strcmp(cand[k].prefix, p); k++)
			;
		if (k == ncand) {
			if (ncand == sizeof(cand) / sizeof(*cand))
				continue;
			memset(&cand[k], 0, sizeof(cand[k]));
			strcpy(cand[k].prefix, p);
			ncand++;
		}
		if (is_ctl)
			cand[k].ctl = addr;
		else
			cand[k].print = addr;
	}
	for (size_t k = 0; k < ncand; k++) {
		struct jma_copy *c, *t;

		if (!cand[k].ctl)
			continue;
		if (sc->want_module && strcmp(sc->want_module, name) &&
		    strcmp(sc->want_module, base_name(name)))
			continue;
		t = realloc(sy->copies, (sy->ncopies + 1) * sizeof(*t));
		if (!t)
			goto oom;
		sy->copies = t;
		c = &sy->copies[sy->ncopies];
		memset(c, 0, sizeof(*c));
		c->path = strdup(name);
		c->prefix = strdup(cand[k].prefix);
		if (!c->path || !c->prefix) {
			free(c->path);
			free(c->prefix);
			goto oom;
		}
		sy->ncopies++;
		conf_env(mod, c->prefix, c->conf_env, sizeof(c->conf_env));
		c->fn_mallctl = cand[k].ctl;
		c->fn_stats_print = cand[k].print;
		c->is_static = strncmp(base_name(name), "libjemalloc", 11) != 0;
		if (c->is_static) {
			if (static_code_ranges(mod, c))
				goto oom;
		} else {
			Dwarf_Addr lo, hi;
			size_t cap = 0;
			dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
			if (jma_ranges_add(&c->code, &c->ncode, &cap, lo, hi))
				goto oom;
		}
	}
	if (!any_ctl && !sc->found_stripped && has_jemalloc_strings(mod)) {
		sc->found_stripped = 1;
		snprintf(sc->stripped_in, sizeof(sc->stripped_in), "%s", name);
	}
	return DWARF_CB_OK;
oom:
	sc->err = -ENOMEM;
	return DWARF_CB_ABORT;
}

static void scan_modules(Dwfl *dwfl, struct scan *sc)
{
	for (sc->pass = 1; sc->pass <= 2 && !sc->err && !sc->sy->ncopies; sc->pass++)
		dwfl_getmodules(dwfl, scan_module, sc, 0);
}

void jma_syms_close(struct jma_syms *sy)
{
	if (!sy)
		return;
	if (sy->dwfl)
		dwfl_end(sy->dwfl);
	free(sy->names);
	for (size_t i = 0; i < sy->nfde_names; i++)
		free(sy->fde_names[i]);
	free(sy->fde_names);
	sym_dnames_free(sy->dnames);
	for (size_t i = 0; i < sy->nfdes; i++)
		jma_fdes_free(&sy->fdes[i].f);
	free(sy->fdes);
	for (size_t i = 0; i < sy->ncopies; i++) {
		free(sy->copies[i].path);
		free(sy->copies[i].prefix);
		free(sy->copies[i].code);
	}
	free(sy->copies);
	free(sy->waits);
	att_maps_free(sy->maps, sy->nmaps);
	free(sy->code_maps);
	free(sy);
}

static int choose_copy(struct jma_syms *sy, pid_t pid, const struct scan *sc, char *msg, size_t len)
{
	if (sy->ncopies == 1)
		return 0;
	if (sy->ncopies > 1) {
		size_t off = (size_t)snprintf(msg, len, "process %d has %zu copies of jemalloc; choose "
					      "one with --module PATH:", (int)pid, sy->ncopies);
		for (size_t i = 0; i < sy->ncopies && off < len; i++)
			off += (size_t)snprintf(msg + off, len - off, " %s (prefix \"%s\")%s",
						sy->copies[i].path, sy->copies[i].prefix,
						i + 1 < sy->ncopies ? "," : "");
		return -EEXIST;
	}
	if (sc->found_stripped) {
		snprintf(msg, len, "jemalloc is statically linked into %s but its symbols are "
			 "stripped; install its debuginfo (matched by build-id under /usr/lib/debug) "
			 "or use an unstripped binary", sc->stripped_in);
		return -ENOEXEC;
	}
	if (sc->want_module)
		snprintf(msg, len, "no jemalloc%s%s%s found in module %s of process %d",
			 sc->want_prefix ? " with prefix \"" : "", sc->want_prefix ? sc->want_prefix : "",
			 sc->want_prefix ? "\"" : "", sc->want_module, (int)pid);
	else if (sc->want_prefix)
		snprintf(msg, len, "no jemalloc with symbol prefix \"%s\" (no %smallctl) in process %d",
			 sc->want_prefix, sc->want_prefix, (int)pid);
	else
		snprintf(msg, len, "no jemalloc found in process %d (no mallctl, je_mallctl or "
			 "<prefix>mallctl in any of its modules)", (int)pid);
	return -ENOENT;
}

/* Is the mapping starting at @start part of a loaded module with code (its
 * run of mappings, att_maps_run, holds an executable one)? */
static int in_code_module(const struct att_map *maps, size_t n, uint64_t start)
{
	const struct att_map *m = att_maps_find(maps, n, start);
	size_t first, last;

	if (!m || !m->path || m->start != start)
		return 0;
	att_maps_run(maps, n, (size_t)(m - maps), &first, &last);
	for (size_t i = first; i <= last; i++)
		if (maps[i].perms[2] == 'x')
			return 1;
	return 0;
}

/* Keep, in place, the lines of maps @text that belong to a module holding
 * code: libdwfl parses each line with sscanf, and a process with a thousand
 * threads has two thousand anonymous ones (stacks, guard pages); files
 * without code (locale archives, gconv caches, mapped data) would each cost
 * an open and an ELF parse for nothing.  Another mapping of a code file, made
 * by the program itself (reading its own libraries), is left out too:
 * libdwfl would take it for a second module of that name, and a second
 * jemalloc.  Returns the new length. */
static size_t code_files_only(char *text, const struct att_map *maps, size_t n)
{
	char *w = text;

	for (char *l = text, *nl; *l; l = nl) {
		size_t k;
		char *path;

		nl = strchr(l, '\n');
		nl = nl ? nl + 1 : l + strlen(l);
		k = (size_t)(nl - l);
		path = memchr(l, '/', k);
		if (path && in_code_module(maps, n, strtoull(l, NULL, 16))) {
			memmove(w, l, k);
			w += k;
		}
	}
	*w = '\0';
	return (size_t)(w - text);
}

/* Report the modules of the maps lines kept at open to a new libdwfl.
 * -errno (-EIO: libdwfl's own error). */
static int report_modules(struct jma_syms *sy)
{
	size_t n = strlen(sy->code_maps);
	FILE *f;
	int err;

	if (!(sy->dwfl = dwfl_begin(&callbacks)))
		return -ENOMEM;
	f = fmemopen(sy->code_maps, n ? n : 1, "r");
	err = f ? dwfl_linux_proc_maps_report(sy->dwfl, f) : errno;
	if (f)
		fclose(f);
	if (err) {
		dwfl_end(sy->dwfl);
		sy->dwfl = NULL;
		return err > 0 ? -err : -EIO;
	}
	dwfl_report_end(sy->dwfl, NULL, NULL);
	return 0;
}

/* libdwfl's view of the process, made on first need: a command whose
 * jemalloc came from the cache may never need it.  NULL when it cannot be
 * made (not tried again). */
static Dwfl *syms_dwfl(struct jma_syms *sy)
{
	if (!sy->dwfl && sy->code_maps && report_modules(sy)) {
		free(sy->code_maps);
		sy->code_maps = NULL;
	}
	return sy->dwfl;
}

struct waits {
	struct jma_range *v;
	size_t n, cap;
	uint64_t bias;
	int err;
};

/* Note @sym when it is a pthread_cond_*wait function. */
static int add_cond_wait(Elf *elf, size_t strtab, const GElf_Sym *sym, void *arg)
{
	struct waits *w = arg;
	const char *nm;

	if (!sym->st_size || !is_func(sym))
		return 0;
	nm = elf_strptr(elf, strtab, sym->st_name);
	if (!nm || (strncmp(nm, "pthread_cond_", 13) && strncmp(nm, "__pthread_cond_", 15)) ||
	    !strstr(nm, "wait"))
		return 0;
	w->err = jma_ranges_add(&w->v, &w->n, &w->cap, w->bias + sym->st_value,
			   w->bias + sym->st_value + sym->st_size);
	return w->err;
}

static int module_cond_waits(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low,
			     void *arg)
{
	struct waits *w = arg;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	(void)ud;
	(void)name;
	(void)low;
	w->bias = bias;
	if (elf && each_symbol(elf, SHT_DYNSYM, "pthread_cond_", 13, add_cond_wait, w))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Where the process's pthread_cond_*wait functions are, by the exported
 * symbols of every module's own file (.dynsym), which span what those
 * functions inline: no symbol table or debuginfo is loaded.  Found once,
 * from libdwfl or the cache; none when neither can say. */
static int find_cond_waits(struct jma_syms *sy)
{
	struct waits w = { 0 };

	if (sy->waits_known)
		return 0;
	sy->waits_known = 1;
	cur = sy;
	if (syms_dwfl(sy))
		dwfl_getmodules(sy->dwfl, module_cond_waits, &w, 0);
	cur = NULL;
	if (w.err) {
		free(w.v);
		return w.err;
	}
	jma_ranges_merge(w.v, &w.n, 0);
	sy->waits = w.v;
	sy->nwaits = w.n;
	return 0;
}

/* From the cache when it has this process's code files (one copy, found
 * before). */
static int from_cache(struct jma_syms *sy, const char *dir, const char *key)
{
	struct jma_found f;

	if (!(sy->copies = calloc(1, sizeof(*sy->copies))))
		return -ENOMEM;
	if (jma_symcache_load(dir, key, sy->maps, sy->nmaps, &f))
		return -ENOENT;
	sy->copies[0] = f.copy;
	sy->ncopies = 1;
	sy->cached = 1;
	sy->waits = f.waits;
	sy->nwaits = f.nwaits;
	sy->waits_known = 1;
	sy->message = f.message;
	sy->message_known = 1;
	/* A kept trampoline only while its bytes are still there; else it is
	 * searched for on need. */
	sy->restorer = f.restorer;
	sy->restorer_known = !f.restorer || !att_restorer_check(sy->pid, f.restorer);
	return 0;
}

/* One read of @pid's maps, for us and for libdwfl. */
static int read_maps(struct jma_syms *sy, pid_t pid, char *msg, size_t len)
{
	char path[64];
	size_t tlen = 0;
	int err;

	sy->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = att_proc_read(path, &sy->code_maps, &tlen);
	if (!err)
		err = att_maps_parse(sy->code_maps, &sy->maps, &sy->nmaps);
	if (err) {
		snprintf(msg, len, "reading /proc/%d/maps: %s", (int)pid, strerror(-err));
		return err;
	}
	code_files_only(sy->code_maps, sy->maps, sy->nmaps);
	return 0;
}

int jma_syms_open(pid_t pid, const char *prefix, const char *module, int allow_none,
		  const char *cache_dir, struct jma_syms **out, char *msg, size_t len)
{
	struct jma_syms *sy = calloc(1, sizeof(*sy));
	struct scan sc = { .sy = sy, .want_prefix = prefix, .want_module = module };
	char *key = NULL;
	int err;

	*out = NULL;
	if (!sy) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	if ((err = read_maps(sy, pid, msg, len)))
		goto fail;
	key = cache_dir ? jma_symcache_key(pid, sy->maps, sy->nmaps, prefix, module) : NULL;
	if (key && !(err = from_cache(sy, cache_dir, key)))
		goto done;
	if (err == -ENOMEM) {
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	cur = sy;
	err = report_modules(sy);
	if (err) {
		snprintf(msg, len, "reading the modules of process %d: %s", (int)pid,
			 err == -EIO ? dwfl_errmsg(-1) : strerror(-err));
		goto fail;
	}
	scan_modules(sy->dwfl, &sc);
	if (sc.err) {
		err = sc.err;
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	err = choose_copy(sy, pid, &sc, msg, len);
	if (err == -ENOENT && allow_none)
		err = 0;
	if (err)
		goto fail;
	/* A cache that cannot be written is only a slower next start. */
	if (key && sy->ncopies == 1 && !find_cond_waits(sy)) {
		struct jma_found f = { sy->copies[0], sy->waits, sy->nwaits,
				       jma_syms_malloc_message(sy), jma_syms_restorer(sy) };

		jma_symcache_save(cache_dir, key, sy->maps, sy->nmaps, &f);
	}
done:
	cur = NULL;
	free(key);
	*out = sy;
	return 0;
fail:
	cur = NULL;
	free(key);
	jma_syms_close(sy);
	return err;
}

int jma_syms_cached(const struct jma_syms *sy)
{
	return sy->cached;
}

void jma_syms_prepare(struct jma_syms *sy)
{
	syms_dwfl(sy);
}

int jma_syms_refresh_maps(struct jma_syms *sy)
{
	struct att_map *m;
	size_t n;
	int err = att_proc_maps(sy->pid, &m, &n);

	if (err)
		return err;
	att_maps_free(sy->maps, sy->nmaps);
	sy->maps = m;
	sy->nmaps = n;
	return 0;
}

const struct att_map *jma_syms_maps(const struct jma_syms *sy, size_t *n)
{
	*n = sy->nmaps;
	return sy->maps;
}

const struct jma_copy *jma_syms_jemalloc(const struct jma_syms *sy)
{
	return sy->ncopies ? &sy->copies[sy->chosen] : NULL;
}

int jma_syms_in_jemalloc(const struct jma_syms *sy, uint64_t pc)
{
	const struct jma_copy *c = jma_syms_jemalloc(sy);

	return c && jma_ranges_has(c->code, c->ncode, pc);
}

int jma_syms_in_cond_wait(struct jma_syms *sy, uint64_t pc)
{
	find_cond_waits(sy);
	return jma_ranges_has(sy->waits, sy->nwaits, pc);
}

/* A function without a symbol, named by where its frame description says
 * it starts, as analyze names it: "fn_0xSTART", START the address nm would
 * show.  Each module's table is loaded on first need.  NULL when none. */
/* @mod's table of function starts, loaded on first need; NULL on failure. */
static struct fde_table *fde_table_of(struct jma_syms *sy, Dwfl_Module *mod)
{
	struct fde_table *t, *v;

	for (size_t i = 0; i < sy->nfdes; i++)
		if (sy->fdes[i].mod == mod)
			return &sy->fdes[i];
	if (!(v = realloc(sy->fdes, (sy->nfdes + 1) * sizeof(*v))))
		return NULL;
	sy->fdes = v;
	t = &sy->fdes[sy->nfdes];
	t->mod = mod;
	if (jma_fdes_load(&t->f, mod))
		return NULL;
	sy->nfdes++;
	return t;
}

int jma_syms_func_start(struct jma_syms *sy, uint64_t pc, uint64_t *start)
{
	Dwfl_Module *mod;
	struct fde_table *t;
	uint64_t s;

	cur = sy;
	mod = syms_dwfl(sy) ? dwfl_addrmodule(sy->dwfl, pc) : NULL;
	t = mod ? fde_table_of(sy, mod) : NULL;
	cur = NULL;
	if (!t || jma_fdes_start(&t->f, pc, &s))
		return -ENOENT;
	*start = s + t->f.bias;
	return 0;
}

static const char *fde_name(struct jma_syms *sy, Dwfl_Module *mod, uint64_t pc, GElf_Off *off)
{
	struct fde_table *t = fde_table_of(sy, mod);
	uint64_t start;
	char buf[40], **nv;

	if (!t || jma_fdes_start(&t->f, pc, &start) ||
	    !(nv = realloc(sy->fde_names, (sy->nfde_names + 1) * sizeof(*nv))))
		return NULL;
	sy->fde_names = nv;
	snprintf(buf, sizeof(buf), "fn_0x%llx", (unsigned long long)start);
	if (!(nv[sy->nfde_names] = strdup(buf)))
		return NULL;
	*off = pc - t->f.bias - start;
	return nv[sy->nfde_names++];
}

const char *jma_syms_name(struct jma_syms *sy, uint64_t pc, uint64_t *off, const char **module,
			  const char **file, int *line)
{
	Dwfl_Module *mod;
	const char *nm = NULL;
	GElf_Off o = 0;
	GElf_Sym s;
	struct named *e = NULL;

	if (!sy->names)
		sy->names = calloc(NAME_CACHE, sizeof(*sy->names));
	if (sy->names && pc) {
		e = &sy->names[(pc ^ (pc >> 12)) % NAME_CACHE];
		if (e->pc == pc && (e->with_line || !file || !line)) {
			*off = e->off;
			*module = e->module;
			if (file)
				*file = e->file;
			if (line)
				*line = e->line;
			return e->name;
		}
	}
	cur = sy;
	*off = 0;
	*module = NULL;
	if (file)
		*file = NULL;
	if (line)
		*line = 0;
	mod = syms_dwfl(sy) ? dwfl_addrmodule(sy->dwfl, pc) : NULL;
	if (mod) {
		*module = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		nm = dwfl_module_addrinfo(mod, pc, &o, &s, NULL, NULL, NULL);
		if (!nm)
			nm = fde_name(sy, mod, pc, &o);
		*off = o;
		if (file && line) {
			Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
			if (l)
				*file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
		}
	}
	cur = NULL;
	if (e)
		*e = (struct named){ .pc = pc, .off = *off, .name = nm, .module = *module,
				     .file = file ? *file : NULL, .line = line ? *line : 0,
				     .with_line = file && line };
	return nm;
}

void jma_syms_set_demangle(struct jma_syms *sy, int on)
{
	sy->no_demangle = !on;
}

const char *jma_syms_demangled(struct jma_syms *sy, const char *name)
{
	if (sy->no_demangle || !name)
		return name;
	if (!sy->dnames)
		sy->dnames = sym_dnames_new();
	return sym_dnames_get(sy->dnames, name);
}

void jma_syms_describe(struct jma_syms *sy, uint64_t pc, char *buf, size_t len)
{
	uint64_t off;
	const char *module, *nm = jma_syms_demangled(sy, jma_syms_name(sy, pc, &off, &module, NULL, NULL));

	if (nm)
		snprintf(buf, len, "%s+0x%llx (%s)", nm, (unsigned long long)off,
			 module ? base_name(module) : "?");
	else if (module)
		snprintf(buf, len, "0x%llx (%s)", (unsigned long long)pc, base_name(module));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
}

Elf *jma_syms_jemalloc_elf(struct jma_syms *sy, uint64_t *bias)
{
	const struct jma_copy *c = jma_syms_jemalloc(sy);
	Dwfl_Module *mod;
	Dwarf_Addr b = 0;
	Elf *e;

	cur = sy;
	mod = c && syms_dwfl(sy) ? dwfl_addrmodule(sy->dwfl, c->fn_mallctl) : NULL;
	e = mod ? dwfl_module_getelf(mod, &b) : NULL;
	cur = NULL;
	*bias = b;
	return e;
}

int jma_syms_given(pid_t pid, const struct jma_copy *c, struct jma_syms **out, char *msg, size_t len)
{
	struct jma_syms *sy = calloc(1, sizeof(*sy));
	struct jma_copy *k = sy ? calloc(1, sizeof(*k)) : NULL;
	int err = -ENOMEM;

	*out = NULL;
	if (!k) {
		free(sy);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	sy->copies = k;
	sy->ncopies = 1;
	*k = *c;
	k->path = strdup(c->path);
	k->prefix = strdup(c->prefix);
	k->code = calloc(c->ncode ? c->ncode : 1, sizeof(*k->code));
	if (!k->path || !k->prefix || !k->code)
		goto nomem;
	memcpy(k->code, c->code, c->ncode * sizeof(*k->code));
	/* No malloc_message or trampoline to look for: nothing runs. */
	sy->message_known = sy->restorer_known = 1;
	if (pid > 0 && (err = read_maps(sy, pid, msg, len)))
		goto fail;
	*out = sy;
	return 0;
nomem:
	snprintf(msg, len, "out of memory");
fail:
	jma_syms_close(sy);
	return err;
}

int jma_syms_from_dwfl(Dwfl *dwfl, pid_t pid, const char *prefix, const char *module,
		       struct jma_syms **out, char *msg, size_t len)
{
	struct jma_syms *sy = calloc(1, sizeof(*sy));
	struct scan sc = { .sy = sy, .want_prefix = prefix, .want_module = module };
	int err;

	*out = NULL;
	if (!sy) {
		dwfl_end(dwfl);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	sy->dwfl = dwfl;
	scan_modules(dwfl, &sc);
	err = sc.err ? sc.err : choose_copy(sy, pid, &sc, msg, len);
	if (err) {
		if (sc.err)
			snprintf(msg, len, "out of memory");
		jma_syms_close(sy);
		return err;
	}
	*out = sy;
	return 0;
}

struct obj_find {
	const char *name;
	int type;		/* STT_OBJECT or STT_FUNC */
	struct jma_syms *sy;	/* STT_FUNC: only jemalloc's own code */
	uint64_t addr, size;
	int in_jemalloc;	/* found only in jemalloc's own module so far */
};

static int find_object(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	struct obj_find *of = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)ud;
	(void)low;
	(void)name;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &addr, NULL, NULL, NULL);

		if (!nm || s.st_shndx == SHN_UNDEF || GELF_ST_TYPE(s.st_info) != of->type ||
		    strcmp(nm, of->name))
			continue;
		if (of->type == STT_FUNC) {
			if (!jma_syms_in_jemalloc(of->sy, addr))
				continue;
			of->addr = addr;
			of->size = s.st_size;
			return DWARF_CB_ABORT;
		}
		/* A copy relocation in the executable is the live variable; the
		 * library's own definition is then unused. */
		if (!of->addr || (of->in_jemalloc && !maybe_jemalloc(mod))) {
			of->addr = addr;
			of->in_jemalloc = maybe_jemalloc(mod);
		}
		break;
	}
	return DWARF_CB_OK;
}

static uint64_t syms_find(struct jma_syms *sy, const char *name, int type, uint64_t *size)
{
	struct obj_find of = { name, type, sy, 0, 0, 0 };

	cur = sy;
	if (syms_dwfl(sy))
		dwfl_getmodules(sy->dwfl, find_object, &of, 0);
	cur = NULL;
	if (size)
		*size = of.size;
	return of.addr;
}

int jma_syms_jemalloc_sym(struct jma_syms *sy, const char *name, uint64_t *addr, uint64_t *size,
			  int *is_tls)
{
	const struct jma_copy *c = jma_syms_jemalloc(sy);
	Dwfl_Module *mod;
	int n, found = 0;

	cur = sy;
	mod = c && syms_dwfl(sy) ? dwfl_addrmodule(sy->dwfl, c->fn_mallctl) : NULL;
	n = mod ? dwfl_module_getsymtab(mod) : 0;
	for (int i = 1; i < n && !found; i++) {
		GElf_Sym s;
		GElf_Addr a;
		const char *nm = dwfl_module_getsym_info(mod, i, &s, &a, NULL, NULL, NULL);

		if (!nm || s.st_shndx == SHN_UNDEF ||
		    (strcmp(nm, name) && (strncmp(nm, "je_", 3) || strcmp(nm + 3, name))))
			continue;
		*is_tls = GELF_ST_TYPE(s.st_info) == STT_TLS;
		*addr = *is_tls ? s.st_value : a;
		*size = s.st_size;
		found = 1;
	}
	cur = NULL;
	return found;
}

uint64_t jma_syms_malloc_message(struct jma_syms *sy)
{
	const struct jma_copy *c = jma_syms_jemalloc(sy);
	char name[96];

	if (!sy->message_known && c) {
		snprintf(name, sizeof(name), "%smalloc_message", c->prefix);
		sy->message = syms_find(sy, name, STT_OBJECT, NULL);
		sy->message_known = 1;
	}
	return sy->message;
}

uint64_t jma_syms_func(struct jma_syms *sy, const char *name, uint64_t *size)
{
	return jma_syms_jemalloc(sy) ? syms_find(sy, name, STT_FUNC, size) : 0;
}

uint64_t jma_syms_restorer(struct jma_syms *sy)
{
	if (!sy->restorer_known) {
		if (att_restorer_find(sy->pid, sy->maps, sy->nmaps, &sy->restorer))
			sy->restorer = 0;
		sy->restorer_known = 1;
	}
	return sy->restorer;
}
