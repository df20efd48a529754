/* roots.c -- where the program's own pointers to the heap live: static data, stacks, registers.
 *
 * Static data: every writable mapping of a module file, and the anonymous
 * mapping right after one (its .bss).  jemalloc's own module is left out
 * when it is a library of its own: its globals point at its metadata, and
 * its metadata (edata's e_addr) points at every slab's region 0 -- a root
 * there would anchor blocks nothing of the program holds.  Nothing anonymous
 * beyond that counts (jemalloc's own mappings among them).  Stacks: from the
 * stack pointer, less the red zone, to the end of its mapping, at most
 * STACK_MAX.  Registers: every general-purpose register of every thread.
 * jemalloc's own roots, apart: its module's data and each thread's tsd
 * (where the thread's cache points at its stacks and jemalloc's other
 * arrays are found): what only they reach is jemalloc's, never a leak.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"
#include "symbols/demangle.h"

#define CHUNK		(1024 * 1024)
#define STACK_MAX	(64ULL << 20)
#define STATIC_MAX	(1ULL << 30)	/* per mapping */

static int scan_range(struct cen *c, pid_t tid, uint64_t lo, uint64_t hi, uint64_t *buf,
		      cen_words_fn fn, void *arg)
{
	int err = 0;

	lo = (lo + 7) & ~7ULL;
	for (uint64_t a = lo; a < hi && !err; a += CHUNK) {
		uint64_t n = hi - a < CHUNK ? hi - a : CHUNK;

		if (cen_read(c, a, buf, n))
			continue;	/* unreadable (a guard page): nothing there */
		err = fn(c, tid, a, buf, n / 8, arg);
	}
	return err;
}

/* Is @m (file-backed, or the .bss right after one) static data of a module other than jemalloc? */
static int is_static(const struct cen *c, size_t i, const char *je_path, int je_static)
{
	const struct att_map *m = &c->maps[i], *prev = i ? &c->maps[i - 1] : NULL;
	const char *path = m->path;

	if (m->perms[0] != 'r' || m->perms[1] != 'w')
		return 0;
	if (!path && prev && prev->end == m->start && prev->path && prev->path[0] == '/' &&
	    prev->perms[1] == 'w')
		path = prev->path;	/* .bss */
	if (!path || path[0] != '/')
		return 0;
	return je_static || strcmp(path, je_path);
}

/* Thread @t's tsd, jemalloc's: [*lo, *hi), or 0 when unknown (3.x/4.x:
 * its whole TLS block). */
static int tsd_range(struct cen *c, size_t t, uint64_t *lo, uint64_t *hi)
{
	uint64_t fs = arch_regs_tls_base(&c->th[t].regs);

	if (c->ch)
		return c->have_tpoff && chk_tls_range(c, t, lo, hi);
	if (!c->have_tpoff || !cen_ptr_ok(fs) || !cen_ptr_ok(fs + c->tpoff))
		return 0;
	*lo = (fs + c->tpoff) & ~7ULL;
	*hi = *lo + c->L->tls_size;
	return 1;
}

/* [lo, hi) less jemalloc's tsd [tlo, thi), if it lies there. */
static int scan_around(struct cen *c, pid_t tid, uint64_t lo, uint64_t hi, uint64_t tlo, uint64_t thi,
		       uint64_t *buf, cen_words_fn fn, void *arg)
{
	if (thi <= lo || tlo >= hi)
		return scan_range(c, tid, lo, hi, buf, fn, arg);
	if (tlo > lo) {
		int err = scan_range(c, tid, lo, tlo, buf, fn, arg);
		if (err)
			return err;
	}
	return thi < hi ? scan_range(c, tid, thi, hi, buf, fn, arg) : 0;
}

int cen_roots_scan(struct cen *c, cen_words_fn fn, void *arg)
{
	const struct jma_copy *je = syms_jemalloc(c->s->syms);
	uint64_t *buf = malloc(CHUNK);
	int err = 0;

	if (!buf)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nmaps && !err; i++) {
		const struct att_map *m = &c->maps[i];

		if (is_static(c, i, je->path, je->is_static) && m->end - m->start <= STATIC_MAX)
			err = scan_range(c, 0, m->start, m->end, buf, fn, arg);
	}
	for (size_t t = 0; t < c->nth && !err; t++) {
		const struct arch_gpregs *r = &c->th[t].regs;
		uint64_t sp = arch_sp(r), lo = sp > ARCH_RED_ZONE ? sp - ARCH_RED_ZONE : sp, hi;
		uint64_t tlo = 0, thi = 0;
		const struct att_map *m = att_maps_find(c->maps, c->nmaps, sp);

		_Static_assert(sizeof(*r) % 8 == 0, "registers are words");
		err = fn(c, c->th[t].tid, 0, (const uint64_t *)r, sizeof(*r) / 8, arg);
		if (err || !m)
			continue;
		if (lo < m->start)
			lo = m->start;
		hi = m->end - lo > STACK_MAX ? lo + STACK_MAX : m->end;
		/* A thread's TLS is at the top of its stack: jemalloc's part of it
		 * is jemalloc's root (cen_roots_jemalloc), not the thread's. */
		tsd_range(c, t, &tlo, &thi);
		err = scan_around(c, c->th[t].tid, lo, hi, tlo, thi, buf, fn, arg);
	}
	free(buf);
	return err;
}

int cen_roots_jemalloc(struct cen *c, cen_words_fn fn, void *arg)
{
	const struct jma_copy *je = syms_jemalloc(c->s->syms);
	uint64_t *buf = malloc(CHUNK);
	int err = 0;

	if (!buf)
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	/* Its module's data, when it is a library of its own (a static one's
	 * is the program's: roots already). */
	for (size_t i = 0; i < c->nmaps && !err && !je->is_static; i++) {
		const struct att_map *m = &c->maps[i];

		if (!is_static(c, i, je->path, 1) || is_static(c, i, je->path, 0) ||
		    m->end - m->start > STATIC_MAX)
			continue;
		err = scan_range(c, 0, m->start, m->end, buf, fn, arg);
	}
	for (size_t t = 0; t < c->nth && !err; t++) {
		uint64_t lo, hi;
		if (tsd_range(c, t, &lo, &hi))
			err = scan_range(c, c->th[t].tid, lo, hi, buf, fn, arg);
	}
	free(buf);
	return err;
}

void cen_root_name(struct cen *c, uint64_t at, char *buf, size_t len)
{
	const struct att_map *m = att_maps_find(c->maps, c->nmaps, at);
	const char *mod = NULL, *file, *name, *base;
	uint64_t off = 0, vaddr;
	char sec[64];
	int line;

	name = syms_name(c->s->syms, at, &off, &mod, &file, &line);
	if (m && m->path)
		mod = m->path;
	else if (m && m > c->maps && m[-1].path && m[-1].end == m->start)
		mod = m[-1].path;
	base = mod && strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod ? mod : "?";
	if (name) {
		char *dem = sym_demangle(name);
		snprintf(buf, len, "%s (%s)", dem ? dem : name, base);
		free(dem);
	} else if (!syms_section(c->s->syms, at, &vaddr, sec, sizeof(sec))) {
		/* A stripped module: where the word is in its file, to look up
		 * later (nm, readelf -S, gdb's info symbol on the unstripped one). */
		snprintf(buf, len, "%s+0x%llx (%s%sno symbol)", base, (unsigned long long)vaddr, sec,
			 sec[0] ? ", " : "");
	} else if (m) {
		/* Past what the module's file describes (the anonymous mapping
		 * after its .bss): from the start of its first mapping. */
		size_t first, last, i = (size_t)(m - c->maps);
		att_maps_run(c->maps, c->nmaps, m->path || !i ? i : i - 1, &first, &last);
		snprintf(buf, len, "%s+0x%llx (past its sections, no symbol)", base,
			 (unsigned long long)(at - c->maps[first].start));
	} else {
		snprintf(buf, len, "static data of %s (no symbol)", base);
	}
}
