/* postmortem.c -- emulating on a core file: jma_open_core.
 *
 * The symbol service reports the core's modules (symbols/dwfl.h: NT_FILE and
 * the ELF headers in the dump, build-ids checked; files of this host, under
 * --sysroot) so jemalloc is found as in a live process; the image comes from
 * core.c.  Every file the core names, for symbols or for the memory it
 * omitted, is opened through one view (symbols/view.h): a regular file,
 * never a blocking open, with the rights of the core file's owner -- the
 * core is data its writer chose, the names in it included.  There is no
 * process: the session's pid is the dumped process's, for messages and
 * profiles only.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulate/backend.h"
#include "emulate/core.h"
#include "process/open.h"
#include "symbols/dwfl.h"
#include "symbols/symbols.h"
#include "symbols/view.h"

struct postmortem {
	struct emu_origin o;
	struct emu_core core;
	char what[600];
	char *sysroot;
	struct sym_view view;		/* how the core's files are opened */
	jma_session *s;			/* for what is not in the image */
	Elf *core_elf;			/* the core as libdwfl reads it */
};

static int pm_page(void *arg, uint64_t addr, void *page)
{
	struct postmortem *p = arg;
	int err = emu_core_page(&p->core, addr, page);
	const char *why = err ? emu_core_why(&p->core, addr) : NULL;

	if (why)
		sess_logf(p->s, JMA_LOG_WARN, "%s: 0x%llx is not in the image: %s", p->what,
			 (unsigned long long)addr, why);
	return err;
}

/* A file NT_FILE names, for the pages the core omitted: as the symbol
 * service opens it. */
static int pm_open_file(void *arg, const char *path, char *shown, size_t len)
{
	struct postmortem *p = arg;

	return sym_view_module(&p->view, path, 0, shown, len);
}

static int pm_maps_text(void *arg, char **text, size_t *len)
{
	struct postmortem *p = arg;
	return emu_core_maps_text(&p->core, text, len);
}

static int pm_prepare(struct emu_origin *o, jma_session *s, struct emu_source *src,
		      uint64_t **lo, uint64_t **hi, size_t *n, uint64_t *tp)
{
	struct postmortem *p = (struct postmortem *)o;
	const struct emu_core *c = &p->core;
	size_t k = 0, i;

	for (i = 0; s->opt.thread && i < c->nthreads && c->threads[i].tid != s->opt.thread; i++)
		;
	if (i == c->nthreads)
		return sess_fail(s, JMA_ERR_USAGE, -ESRCH, "thread %d is not in %s",
				(int)s->opt.thread, o->what);
	i = s->opt.thread ? i : 0;
	*tp = c->threads[i].tp;
	o->tid = c->threads[i].tid;
	snprintf(o->tid_comm, sizeof(o->tid_comm), "%s", c->comm);
	snprintf(o->tid_why, sizeof(o->tid_why), "emulated with its thread-local data%s",
		 i ? ", the one asked for" : " (the first thread in the core)");
	*lo = calloc(c->nsegs + c->nfiles + 1, sizeof(**lo));
	*hi = calloc(c->nsegs + c->nfiles + 1, sizeof(**hi));
	if (!*lo || !*hi) {
		free(*lo);
		free(*hi);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	for (i = 0; i < c->nsegs; i++, k++) {
		(*lo)[k] = c->segs[i].vaddr;
		(*hi)[k] = c->segs[i].vaddr + c->segs[i].memsz;
	}
	for (i = 0; i < c->nfiles; i++, k++) {
		(*lo)[k] = c->files[i].start;
		(*hi)[k] = c->files[i].end;
	}
	*n = k;
	src->read_page = pm_page;
	src->arg = p;
	return 0;
}

static int pm_threads(struct emu_origin *o, pid_t **tids, struct arch_gpregs **regs, size_t *n)
{
	struct postmortem *p = (struct postmortem *)o;
	const struct emu_core *c = &p->core;

	*tids = calloc(c->nthreads, sizeof(**tids));
	*regs = calloc(c->nthreads, sizeof(**regs));
	if (!*tids || !*regs) {
		free(*tids);
		free(*regs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->nthreads; i++) {
		(*tids)[i] = c->threads[i].tid;
		(*regs)[i] = c->threads[i].regs;
	}
	*n = c->nthreads;
	return 0;
}

static void pm_status(struct emu_origin *o, struct jma_target_info *info)
{
	struct postmortem *p = (struct postmortem *)o;

	snprintf(info->comm, sizeof(info->comm), "%s", p->core.comm);
	info->nthreads = (int)p->core.nthreads;
}

static void pm_finish(struct emu_origin *o)
{
	(void)o;
}

static void pm_destroy(struct emu_origin *o)
{
	struct postmortem *p = (struct postmortem *)o;

	if (p->core_elf)
		elf_end(p->core_elf);
	emu_core_close(&p->core);
	free(p->sysroot);
	free(p);
}

/* The core's modules, reported to the symbol service, and jemalloc among them. */
static int core_syms(jma_session *s, struct postmortem *p, const char *core, const char *exe)
{
	char msg[sizeof(s->err)];
	const struct sym_policy pol = { .debuginfod = !!(s->opt.flags & JMA_F_DEBUGINFOD),
					.executable = exe };
	const struct jma_syms_opts so = { .prefix = s->opt.prefix, .module = s->opt.module };
	struct sym_dwfl *d;
	struct jma_syms *sy;
	int err;

	if (sym_dwfl_new(&p->view, &pol, &d))
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	/* The file parsed, kept open until the session ends: libdwfl reads it
	 * through the modules. */
	p->core_elf = elf_begin(p->core.fd, ELF_C_READ_MMAP, NULL);
	if (!p->core_elf || sym_dwfl_report_core(d, p->core_elf)) {
		sym_dwfl_free(d);
		return sess_fail(s, JMA_ERR_USAGE, -ENOEXEC, "core %s: %s", core, dwfl_errmsg(-1));
	}
	err = syms_from_core(d, s->pid, &so, &sy, msg, sizeof(msg));
	if (!err)
		proc_set_syms(s, sy);
	if (err == -EEXIST)
		return sess_fail_hint(s, JMA_HINT_MODULE, JMA_ERR_USAGE, err, "%s", msg);
	/* Files the core names missing here: a core from another machine's? */
	if (err == -ENOENT && p->core.err[0])
		return sess_fail_hint(s, p->core.sysroot ? 0 : JMA_HINT_SYSROOT, JMA_ERR_MISSING, err,
				     "%s (%s)", msg, p->core.err);
	if (err)
		return sess_fail_hint(s, err == -ENOENT ? JMA_HINT_SYSROOT : 0, JMA_ERR_MISSING, err,
				     "%s%s", msg, err == -ENOENT ? "; are the files the core names "
				     "(NT_FILE) present?" : "");
	return 0;
}

int jma_open_core(jma_session *s, const char *core, const char *exe, const char *sysroot)
{
	struct postmortem *p;
	char msg[512];
	int err;

	if (s->syms)
		return sess_fail(s, JMA_ERR_USAGE, -EALREADY, "session already open");
	p = calloc(1, sizeof(*p));
	if (!p || (sysroot && !(p->sysroot = strdup(sysroot)))) {
		free(p);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	err = emu_core_open(&p->core, core, msg, sizeof(msg));
	if (err) {
		free(p->sysroot);
		free(p);
		return sess_fail(s, err == -ENOENT || err == -EACCES ? JMA_ERR_USAGE :
				err == -EIO || err == -EXDEV ? JMA_ERR_MISSING : JMA_ERR_USAGE, err,
				"core %s: %s", core, msg);
	}
	p->core.sysroot = p->sysroot;
	p->view = (struct sym_view){ .sysroot = p->sysroot, .as_owner = 1, .uid = p->core.uid,
				     .gid = p->core.gid };
	p->s = s;
	p->core.open_file = pm_open_file;
	p->core.open_arg = p;
	s->pid = p->core.threads[0].tid;
	s->offline = 1;
	snprintf(p->what, sizeof(p->what), "core %s", core);
	p->o.what = p->what;
	p->o.prepare = pm_prepare;
	p->o.finish = pm_finish;
	p->o.maps_text = pm_maps_text;
	p->o.threads = pm_threads;
	p->o.status = pm_status;
	p->o.destroy = pm_destroy;
	if (emu_core_check_files(&p->core) == -ESTALE) {
		sess_fail_hint(s, p->sysroot ? 0 : JMA_HINT_SYSROOT, JMA_ERR_MISSING, -ESTALE,
			      "core %s: %s", core, p->core.err);
		pm_destroy(&p->o);
		return -ESTALE;
	}
	err = core_syms(s, p, core, exe);
	if (err) {
		pm_destroy(&p->o);
		return err;
	}
	return emu_backend_install(s, &p->o);
}
