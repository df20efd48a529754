/* open.c -- making a symbols handle: a live process's (its maps read once, a cache's answer, or its modules searched), a core's, or one given copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/procfs.h"
#include "attach/restorer.h"
#include "symbols/handle.h"

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

/* From the cache when it has this process's code files (one copy, found
 * before). */
static int from_cache(struct jma_syms *sy, const struct jma_syms_cache *cache)
{
	struct jma_found f;

	if (!(sy->copies = calloc(1, sizeof(*sy->copies))))
		return -ENOMEM;
	if (cache->load(cache->arg, sy->pid, sy->maps, sy->nmaps, &f))
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

int syms_open(pid_t pid, const struct jma_syms_opts *o, struct jma_syms **out, char *msg,
		  size_t len)
{
	static const struct jma_syms_opts defaults;
	struct jma_syms *sy = calloc(1, sizeof(*sy));
	struct sym_dwfl *prev = NULL;
	Dwfl *dwfl;
	int err;

	*out = NULL;
	o = o ? o : &defaults;
	if (!sy) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	sy->debuginfod = o->debuginfod;
	if ((err = read_maps(sy, pid, msg, len)))
		goto fail;
	if (o->cache && !(err = from_cache(sy, o->cache)))
		goto done;
	if (err == -ENOMEM) {
		snprintf(msg, len, "out of memory");
		goto fail;
	}
	err = syms_report_modules(sy);
	if (err) {
		snprintf(msg, len, "reading the modules of process %d: %s", (int)pid,
			 err == -EIO ? dwfl_errmsg(-1) : strerror(-err));
		goto fail;
	}
	dwfl = syms_enter(sy, &prev);
	if ((err = syms_find_jemalloc(sy, dwfl, pid, o, msg, len)))
		goto fail;
	/* A cache that cannot be written is only a slower next start.  Nothing
	 * is kept when whether the process has a trampoline is not known (it
	 * executed a program meanwhile): a "none" kept would refuse every later
	 * run on this program.  Nor a stripped copy: what the cache holds is
	 * callable. */
	if (o->cache && sy->ncopies == 1 && sy->copies[0].fn_mallctl && !syms_find_cond_waits(sy)) {
		struct jma_found f = { sy->copies[0], sy->waits, sy->nwaits,
				       syms_malloc_message(sy), syms_restorer(sy) };

		if (sy->restorer_known)
			o->cache->save(o->cache->arg, pid, sy->maps, sy->nmaps, &f);
	}
done:
	sym_dwfl_leave(prev);
	*out = sy;
	return 0;
fail:
	sym_dwfl_leave(prev);
	syms_close(sy);
	return err;
}

int syms_from_core(struct sym_dwfl *d, pid_t pid, const struct jma_syms_opts *o,
		       struct jma_syms **out, char *msg, size_t len)
{
	struct jma_syms *sy = calloc(1, sizeof(*sy));
	struct sym_dwfl *prev;
	int err;

	*out = NULL;
	if (!sy) {
		sym_dwfl_free(d);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	sy->sd = d;
	prev = sym_dwfl_enter(d);
	err = syms_find_jemalloc(sy, sym_dwfl_get(d), pid, o, msg, len);
	sym_dwfl_leave(prev);
	if (err) {
		syms_close(sy);
		return err;
	}
	*out = sy;
	return 0;
}

int syms_given(pid_t pid, const struct jma_copy *c, struct jma_syms **out, char *msg, size_t len)
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
	syms_close(sy);
	return err;
}
