/* symbols.c -- the symbols handle: its maps, its libdwfl made on first need, its jemalloc copy; closing it.
 *
 * A live process's modules are reported to libdwfl (dwfl.h: files opened as
 * the target sees them) only when something needs them: a process whose
 * jemalloc a cache knows may never need them.  open.c makes handles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/procfs.h"
#include "symbols/dnames.h"
#include "symbols/handle.h"

const char *syms_base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

void syms_close(struct jma_syms *sy)
{
	if (!sy)
		return;
	sym_dwfl_free(sy->sd);
	free(sy->names);
	for (size_t i = 0; i < sy->nfde_names; i++)
		free(sy->fde_names[i]);
	free(sy->fde_names);
	sym_dnames_free(sy->dnames);
	for (size_t i = 0; i < sy->nfdes; i++)
		syms_fdes_free(&sy->fdes[i].f);
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

int syms_report_modules(struct jma_syms *sy)
{
	struct sym_view v = { .pid = sy->pid, .maps = sy->maps, .nmaps = sy->nmaps };
	struct sym_policy p = { .debuginfod = sy->debuginfod };
	int err = sym_dwfl_new(&v, &p, &sy->sd);

	if (!err && (err = sym_dwfl_report_maps(sy->sd, sy->code_maps))) {
		sym_dwfl_free(sy->sd);
		sy->sd = NULL;
	}
	return err;
}

Dwfl *syms_enter(struct jma_syms *sy, struct sym_dwfl **prev)
{
	if (!sy->sd && sy->code_maps && syms_report_modules(sy)) {
		free(sy->code_maps);
		sy->code_maps = NULL;
	}
	*prev = sym_dwfl_enter(sy->sd);
	return sym_dwfl_get(sy->sd);
}

int syms_cached(const struct jma_syms *sy)
{
	return sy->cached;
}

void syms_prepare(struct jma_syms *sy)
{
	struct sym_dwfl *prev;

	syms_enter(sy, &prev);
	sym_dwfl_leave(prev);
}

int syms_refresh_maps(struct jma_syms *sy)
{
	struct att_map *m;
	size_t n;
	int err = att_proc_maps(sy->pid, &m, &n);

	if (err)
		return err;
	att_maps_free(sy->maps, sy->nmaps);
	sy->maps = m;
	sy->nmaps = n;
	sym_dwfl_set_maps(sy->sd, m, n);
	return 0;
}

const struct att_map *syms_maps(const struct jma_syms *sy, size_t *n)
{
	*n = sy->nmaps;
	return sy->maps;
}

const struct jma_copy *syms_jemalloc(const struct jma_syms *sy)
{
	return sy->ncopies ? &sy->copies[sy->chosen] : NULL;
}

int syms_in_jemalloc(const struct jma_syms *sy, uint64_t pc)
{
	const struct jma_copy *c = syms_jemalloc(sy);

	return c && syms_ranges_has(c->code, c->ncode, pc);
}
