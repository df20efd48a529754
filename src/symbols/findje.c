/* findje.c -- finding the copies of jemalloc among a process's modules.
 *
 * A copy is a module whose symbols name <prefix>mallctl (and
 * <prefix>malloc_stats_print): libjemalloc.so, or code linked statically
 * into an executable or another library, whose own code is then told apart
 * by its symbols' names and source files.  A stripped copy is known by
 * jemalloc's messages in .rodata, for its debuginfo to name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/elfsyms.h"
#include "symbols/handle.h"
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

struct scan {
	struct jma_syms *sy;
	const char *want_prefix;
	const char *want_module;
	int pass;		/* 1: by symbols; 2: by .rodata (see scan_module) */
	int found_stripped;
	char stripped_in[256];
	uint64_t stripped_base;
	int err;
};

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
			in_je_file = in_list(syms_base_name(nm), jemalloc_files,
					     sizeof(jemalloc_files) / sizeof(*jemalloc_files));
			continue;
		}
		if (GELF_ST_BIND(s.st_info) != STB_LOCAL)
			in_je_file = 0;
		if (!syms_is_func(&s))
			continue;
		take = in_je_file || !strncmp(nm, "je_", 3) ||
		       (plen && !strncmp(nm, c->prefix, plen) &&
			(!strncmp(nm + plen, "je_", 3) ||
			 in_list(nm + plen, public_names, sizeof(public_names) / sizeof(*public_names)))) ||
		       (!plen && in_list(nm, public_names, sizeof(public_names) / sizeof(*public_names)));
		if (take && syms_ranges_add(&c->code, &c->ncode, &cap, addr, addr + s.st_size))
			return -ENOMEM;
	}
	syms_ranges_merge(c->code, &c->ncode, 64);
	return 0;
}

/* jemalloc reads its options from JEMALLOC_CPREFIX "MALLOC_CONF", a string
 * literal in its .rodata: "MALLOC_CONF", "JE_MALLOC_CONF", "_RJEM_MALLOC_CONF".
 * Without it, fall back to the convention: the upper-cased prefix. */
static void conf_env(Dwfl_Module *mod, const char *prefix, char *out, size_t len)
{
	Elf_Data *d = syms_rodata(mod);
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
	/* A core's modules (no maps) are named by soname: use their file. */
	if (!name || (name[0] != '/' && sy->maps))
		return DWARF_CB_OK;
	/* First pass: modules whose own symbols name mallctl.  Second, only when
	 * the first found no copy: the others whose .rodata holds jemalloc's
	 * messages (a stripped static copy, named by its debuginfo if any).
	 * Searching every library's .rodata -- libcrypto's alone is a megabyte
	 * -- was most of a live command's start-up. */
	if (sc->pass == 1 ? !syms_has_mallctl_symbol(mod)
			  : syms_has_mallctl_symbol(mod) || !syms_has_jemalloc_strings(mod))
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

		if (!nm || !syms_is_func(&s))
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
		    strcmp(sc->want_module, syms_base_name(name)))
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
		c->is_static = strncmp(syms_base_name(name), "libjemalloc", 11) != 0;
		if (c->is_static) {
			if (static_code_ranges(mod, c))
				goto oom;
		} else {
			Dwarf_Addr lo, hi;
			size_t cap = 0;
			dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
			if (syms_ranges_add(&c->code, &c->ncode, &cap, lo, hi))
				goto oom;
		}
	}
	if (!any_ctl && !sc->found_stripped && syms_has_jemalloc_strings(mod)) {
		sc->found_stripped = 1;
		sc->stripped_base = low;
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

/* The stripped copy found, as the one copy: its module known, its functions
 * not.  -ENOMEM. */
static int take_stripped(struct jma_syms *sy, const struct scan *sc)
{
	struct jma_copy *c = calloc(1, sizeof(*c));

	if (!c || !(c->path = strdup(sc->stripped_in)) || !(c->prefix = strdup(""))) {
		if (c)
			free(c->path);
		free(c);
		return -ENOMEM;
	}
	c->is_static = 1;
	c->base = sc->stripped_base;
	free(sy->copies);	/* none in it: a cache's empty array */
	sy->copies = c;
	sy->ncopies = 1;
	return 0;
}

static int choose_copy(struct jma_syms *sy, pid_t pid, const struct scan *sc, char *msg, size_t len)
{
	if (sy->ncopies == 1)
		return 0;
	if (sy->ncopies > 1) {
		size_t off = (size_t)snprintf(msg, len, "process %d has %zu copies of jemalloc:",
					      (int)pid, sy->ncopies);
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

int syms_find_jemalloc(struct jma_syms *sy, Dwfl *dwfl, pid_t pid, const struct jma_syms_opts *o,
		       char *msg, size_t len)
{
	static const struct jma_syms_opts defaults;
	struct scan sc = { .sy = sy };
	int err;

	o = o ? o : &defaults;
	sc.want_prefix = o->prefix;
	sc.want_module = o->module;
	if (dwfl)
		scan_modules(dwfl, &sc);
	if (sc.err) {
		snprintf(msg, len, "out of memory");
		return sc.err;
	}
	err = choose_copy(sy, pid, &sc, msg, len);
	if (err == -ENOEXEC && o->stripped_ok && !sy->ncopies && (err = take_stripped(sy, &sc)))
		snprintf(msg, len, "out of memory");
	return err == -ENOENT && o->allow_none ? 0 : err;
}
