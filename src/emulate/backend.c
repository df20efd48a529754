/* backend.c -- the emulation backend's operations (core/backend.h).
 *
 * begin builds a fresh copy-on-write image (so each attachment of watch sees
 * new numbers), with jemalloc's imports pointed at the services; call runs the
 * function in unicorn; end throws the image away.  Nothing of the real
 * process is written, and none of its threads runs jemalloc code for us.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/clock.h"
#include "emulate/backend.h"
#include "emulate/imports.h"
#include "emulate/services.h"
#include "emulate/uc.h"
#include "symbols/symbols.h"

struct emu_be {
	struct jma_backend be;
	struct emu_origin *o;
	struct emu_cpu cpu;
	int open;
	int64_t began_ns;
};

static int emu_begin(struct jma_backend *b)
{
	struct emu_be *e = (struct emu_be *)b;
	jma_session *s = b->s;
	struct emu_source src;
	uint64_t *lo = NULL, *hi = NULL, tp = 0, base, bias;
	const struct emu_arch *arch;
	size_t n = 0;
	char msg[512] = "";
	GElf_Ehdr eh;
	Elf *elf;
	int err;

	if (!syms_jemalloc(s->syms))
		return sess_fail(s, JMA_ERR_MISSING, -ENOENT, "no jemalloc found in %s", e->o->what);
	/* The CPU is the jemalloc module's machine. */
	elf = syms_jemalloc_elf(s->syms, &bias);
	if (!elf || !gelf_getehdr(elf, &eh))
		return sess_fail(s, JMA_ERR_MISSING, -ENOEXEC, "preparing jemalloc's imports in the "
				"image: no ELF file for the jemalloc module");
	if (!(arch = emu_arch_of(eh.e_machine)))
		return sess_fail(s, JMA_ERR_MISSING, -ENOTSUP, "the jemalloc module of %s is code of "
				"ELF machine %u, which the emulator does not run (x86_64 and arm64 "
				"only)", e->o->what, (unsigned)eh.e_machine);
	if (emu_uc_load(msg, sizeof(msg)))
		return sess_fail(s, JMA_ERR_MISSING, -ELIBACC, "emulation needs libunicorn (Debian "
				"package libunicorn2): %s", msg);
	e->began_ns = att_now_ns();
	err = e->o->prepare(e->o, s, &src, &lo, &hi, &n, &tp);
	if (err)
		return err;
	base = emu_find_gap(lo, hi, n, EMU_TOOL_SIZE);
	free(lo);
	free(hi);
	if (!base) {
		e->o->finish(e->o);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "no free address range for the emulator's "
				"own memory in %s", e->o->what);
	}
	err = emu_cpu_open(&e->cpu, arch, &src, base, tp, s->pid);
	if (err) {
		e->o->finish(e->o);
		return sess_fail(s, JMA_ERR_TARGET, err, "starting the emulator: %s", strerror(-err));
	}
	e->cpu.service_find = emu_service_find;
	e->cpu.service_run = emu_service_run;
	e->cpu.maps_text = e->o->maps_text;
	e->cpu.maps_arg = e->o;
	e->open = 1;
	err = emu_imports_redirect(&e->cpu, elf, bias, msg, sizeof(msg));
	if (err < 0) {
		emu_cpu_close(&e->cpu);
		e->open = 0;
		e->o->finish(e->o);
		return sess_fail(s, JMA_ERR_MISSING, err, "preparing jemalloc's imports in the image: %s",
				msg[0] ? msg : "writing a GOT slot");
	}
	sess_logf(s, JMA_LOG_INFO, "emulating %s jemalloc on a copy of %s (%d imports serviced, "
		 "thread pointer 0x%llx)", arch->m->name, e->o->what, err, (unsigned long long)tp);
	return 0;
}

static int emu_end(struct jma_backend *b)
{
	struct emu_be *e = (struct emu_be *)b;

	if (!e->open)
		return 0;
	sess_logf(b->s, JMA_LOG_INFO, "emulation: %zu pages copied, %.1f ms", e->cpu.im.copied,
		 (double)(att_now_ns() - e->began_ns) / 1e6);
	emu_cpu_close(&e->cpu);
	e->open = 0;
	e->o->finish(e->o);
	return 0;
}

/* The timeout bounds every call of one attachment together, not each: a
 * crafted core (or a copy of a process that loops) would otherwise cost a
 * timeout per call, and a command makes several (info: six). */
static int emu_call(struct jma_backend *b, const struct jma_bcall *bc, uint64_t *ret)
{
	struct emu_be *e = (struct emu_be *)b;
	int64_t left = e->began_ns + (int64_t)sess_timeout_ms(b->s) * 1000000 - att_now_ns();
	int err;

	if (left <= 0)
		return sess_fail(b->s, JMA_ERR_UNSAFE, -ETIMEDOUT, "emulation: the calls so far took "
				"the whole timeout (%d ms): no other call is started",
				sess_timeout_ms(b->s));
	err = emu_cpu_run(&e->cpu, bc, (int)((left + 999999) / 1000000), ret);

	emu_cpu_scratch_reset(&e->cpu);
	if (err)
		return sess_fail(b->s, err == -ETIMEDOUT ? JMA_ERR_UNSAFE :
				err == -ENOSYS ? JMA_ERR_MISSING : JMA_ERR_TARGET, err,
				"emulation: %s", e->cpu.msg);
	return 0;
}

static uint64_t emu_scratch(struct jma_backend *b, const void *data, size_t len, size_t align)
{
	struct emu_be *e = (struct emu_be *)b;
	uint64_t r = e->open ? emu_cpu_scratch(&e->cpu, data, len, align) : 0;

	if (!r)
		sess_fail(b->s, JMA_ERR_TARGET, -ENOSPC, "emulation: no scratch memory left");
	return r;
}

static int emu_read(struct jma_backend *b, uint64_t addr, void *buf, size_t len)
{
	struct emu_be *e = (struct emu_be *)b;

	return e->open ? emu_image_read(&e->cpu.im, addr, buf, len) : -EINVAL;
}

static int emu_read_str(struct jma_backend *b, uint64_t addr, size_t max, char **out, int *trunc)
{
	struct emu_be *e = (struct emu_be *)b;

	return e->open ? emu_image_read_str(&e->cpu.im, addr, max, out, trunc) : -EINVAL;
}

/* The copy's writes never reach a disk: the file is the one it captured. */
static int emu_dump(struct jma_backend *b, const char *dir, const char *name, size_t max,
		    jma_dump_fn write, void *arg, char **buf, size_t *len)
{
	struct emu_be *e = (struct emu_be *)b;
	int err;

	(void)dir;
	err = write(b->s, name, arg);
	if (err)
		return err;
	if (!e->open || !e->cpu.dump)
		return sess_fail(b->s, JMA_ERR_TARGET, -ENOENT, "prof.dump wrote no file");
	if (e->cpu.dump_len > max)
		return sess_fail(b->s, JMA_ERR_TARGET, -EFBIG, "prof.dump wrote %zu bytes, more "
				"than a heap profile", e->cpu.dump_len);
	*buf = e->cpu.dump;
	*len = e->cpu.dump_len;
	e->cpu.dump = NULL;
	return 0;
}

static void emu_describe(struct jma_backend *b, struct jma_target_info *info)
{
	struct emu_be *e = (struct emu_be *)b;

	e->o->status(e->o, info);
	if (!e->o->tid)
		return;
	info->tid = e->o->tid;
	snprintf(info->tid_comm, sizeof(info->tid_comm), "%s", e->o->tid_comm);
	info->tid_why = e->o->tid_why;
}

static int emu_threads(struct jma_backend *b, pid_t **tids, struct arch_gpregs **regs, size_t *n)
{
	struct emu_be *e = (struct emu_be *)b;

	return e->o->threads ? e->o->threads(e->o, tids, regs, n) : -ENOTSUP;
}

static int emu_maps_text(struct jma_backend *b, char **text, size_t *len)
{
	struct emu_be *e = (struct emu_be *)b;

	return e->o->maps_text(e->o, text, len);
}

static void emu_destroy(struct jma_backend *b)
{
	struct emu_be *e = (struct emu_be *)b;

	emu_end(b);
	e->o->destroy(e->o);
	free(e);
}

static const struct jma_backend_ops emu_ops = {
	.name = "emulate",
	.begin = emu_begin,
	.end = emu_end,
	.call = emu_call,
	.scratch = emu_scratch,
	.read = emu_read,
	.read_str = emu_read_str,
	.dump = emu_dump,
	.describe = emu_describe,
	.threads = emu_threads,
	.maps_text = emu_maps_text,
	.destroy = emu_destroy,
};

int emu_backend_install(jma_session *s, struct emu_origin *o)
{
	struct emu_be *e = calloc(1, sizeof(*e));

	if (!e) {
		o->destroy(o);
		return sess_fail(s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	}
	e->be.ops = &emu_ops;
	e->o = o;
	return sess_set_backend(s, &e->be);
}
