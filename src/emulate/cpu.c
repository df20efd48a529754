/* cpu.c -- one call of a jemalloc function, emulated on the image. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate/cpu.h"

/* Layout of the tool's regions, from c->base. */
#define STUBS		0x0ULL		/* one return instruction per stub */
#define STUB_DONE	0		/* the call's return address */
#define STUB_TEXT	1		/* write_cb */
#define STUB_FIRST	2
#define ERRNO_AT	0x1000ULL
#define STACK_LO	0x100000ULL
#define STACK_HI	0x400000ULL
#define SCRATCH_LO	0x400000ULL
#define SCRATCH_HI	0x800000ULL
#define MMAP_LO		0x1000000ULL
_Static_assert(EMU_MAXSTUBS * EMU_STUB_MAX <= EMU_PAGE, "every stub fits the stub page");
/* jemalloc hands write_cb at most 64 KiB (a line in old builds). */
#define TEXT_MAX	(4 * 1024 * 1024)

int emu_cpu_fail(struct emu_cpu *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	c->err = err < 0 ? err : -err;
	return c->err;
}

uint64_t emu_errno_addr(const struct emu_cpu *c)
{
	return c->base + ERRNO_AT;
}

/* write_cb(opaque, text): hand the text to the caller. */
static int on_text(struct emu_cpu *c, const uint64_t a[EMU_ARCH_NARGS])
{
	char *str;
	int trunc, err = emu_image_read_str(&c->im, a[1], TEXT_MAX, &str, &trunc);

	if (err)
		return emu_cpu_fail(c, err, "reading callback text at 0x%llx: %s",
				    (unsigned long long)a[1], strerror(-err));
	if (trunc)
		err = emu_cpu_fail(c, -E2BIG, "a callback text exceeded %d bytes", TEXT_MAX);
	else if ((err = c->call->text(c->call->text_ctx, str, strlen(str))))
		err = emu_cpu_fail(c, err, "passing on callback text: %s",
				   strerror(err < 0 ? -err : err));
	free(str);
	return err;
}

/* Execution reached a stub: do its work; its `ret` then returns to jemalloc. */
static void on_stub(uc_engine *uc, uint64_t addr, uint32_t size, void *arg)
{
	struct emu_cpu *c = arg;
	unsigned idx = (unsigned)((addr - c->base - STUBS) / c->arch->stub_len);
	uint64_t a[EMU_ARCH_NARGS], ret = 0;
	int err = 0;

	(void)size;
	if (idx == STUB_DONE) {
		emu_uc.emu_stop(uc);
		return;
	}
	for (int i = 0; i < EMU_ARCH_NARGS; i++)
		emu_uc.reg_read(uc, c->arch->args[i], &a[i]);
	if (idx == STUB_TEXT)
		err = c->call && c->call->text ? on_text(c, a)
					       : emu_cpu_fail(c, -EFAULT, "write_cb called unasked");
	else if (idx < c->nstubs && c->stub_service[idx] >= 0)
		err = c->service_run(c, c->stub_service[idx], a, &ret);
	else
		err = emu_cpu_fail(c, -ENOSYS, "jemalloc called %s() from 0x%llx, which emulation "
				   "does not provide", idx < c->nstubs ? c->stub_name[idx] : "?",
				   (unsigned long long)c->arch->caller(&c->im));
	if (err) {
		if (!c->err)
			emu_cpu_fail(c, err, "%s", strerror(-err));
		emu_uc.emu_stop(uc);
		return;
	}
	emu_uc.reg_write(uc, c->arch->ret, &ret);
}

int emu_cpu_open(struct emu_cpu *c, const struct emu_arch *arch, const struct emu_source *src,
		 uint64_t base, uint64_t tp, pid_t pid)
{
	unsigned char rets[EMU_PAGE];
	int err;

	memset(c, 0, sizeof(*c));
	c->arch = arch;
	c->base = base;
	c->tp = tp;
	c->pid = pid;
	c->scratch_cur = base + SCRATCH_LO;
	c->mmap_cur = base + MMAP_LO;
	c->nstubs = STUB_FIRST;
	err = emu_image_open(&c->im, arch, src, base, base + EMU_TOOL_SIZE);
	if (err)
		return err;
	for (size_t i = 0; i + arch->stub_len <= sizeof(rets); i += arch->stub_len)
		memcpy(rets + i, arch->stub, arch->stub_len);
	if (emu_uc.mem_map(c->im.uc, base + STUBS, EMU_PAGE, UC_PROT_READ | UC_PROT_EXEC) ||
	    emu_uc.mem_write(c->im.uc, base + STUBS, rets, sizeof(rets)) ||
	    emu_uc.hook_add(c->im.uc, &c->stub_hook, UC_HOOK_CODE, (void *)on_stub, c, base + STUBS,
			base + STUBS + EMU_PAGE - 1)) {
		emu_image_close(&c->im);
		return -ENOMEM;
	}
	return 0;
}

void emu_cpu_close(struct emu_cpu *c)
{
	emu_image_close(&c->im);
	for (unsigned i = 0; i < c->nstubs; i++)
		free(c->stub_name[i]);
	for (int i = 0; i < EMU_MAXFILES; i++) {
		free(c->files[i].path);
		free(c->files[i].buf);
	}
	free(c->dump);
	free(c->dump_path);
	memset(c, 0, sizeof(*c));
}

static uint64_t stub_addr(const struct emu_cpu *c, unsigned idx)
{
	return c->base + STUBS + idx * c->arch->stub_len;
}

uint64_t emu_cpu_stub(struct emu_cpu *c, const char *name)
{
	for (unsigned i = STUB_FIRST; i < c->nstubs; i++)
		if (!strcmp(c->stub_name[i], name))
			return stub_addr(c, i);
	if (c->nstubs >= EMU_MAXSTUBS || !(c->stub_name[c->nstubs] = strdup(name)))
		return 0;
	c->stub_service[c->nstubs] = c->service_find ? c->service_find(name) : -1;
	return stub_addr(c, c->nstubs++);
}

/* Execution reached a redirected function: continue at its stub instead (the
 * caller's return address stays where the call put it, for the stub's ret). */
static void on_redirect(uc_engine *uc, uint64_t addr, uint32_t size, void *arg)
{
	const struct emu_redirect *r = arg;

	(void)addr;
	(void)size;
	emu_uc.reg_write(uc, r->pc, &r->to);
}

int emu_cpu_redirect(struct emu_cpu *c, uint64_t addr, const char *name)
{
	struct emu_redirect *r = &c->redirects[c->nredirects];

	if (c->nredirects >= EMU_MAXREDIRECTS || !(r->to = emu_cpu_stub(c, name)))
		return -E2BIG;
	r->pc = c->arch->pc;
	if (emu_uc.hook_add(c->im.uc, &r->hook, UC_HOOK_CODE, (void *)on_redirect, r, addr, addr))
		return -ENOMEM;
	c->nredirects++;
	return 0;
}

uint64_t emu_cpu_scratch(struct emu_cpu *c, const void *data, size_t len, size_t align)
{
	uint64_t at;

	if (align < 8)
		align = 8;
	at = (c->scratch_cur + align - 1) & ~(uint64_t)(align - 1);
	if (at + len > c->base + SCRATCH_HI || at + len < at)
		return 0;
	if (data ? emu_image_write(&c->im, at, data, len) : 0)
		return 0;
	if (!data) {
		void *zero = calloc(1, len ? len : 1);
		int err = zero ? emu_image_write(&c->im, at, zero, len) : -ENOMEM;
		free(zero);
		if (err)
			return 0;
	}
	c->scratch_cur = at + len;
	return at;
}

void emu_cpu_scratch_reset(struct emu_cpu *c)
{
	c->scratch_cur = c->base + SCRATCH_LO;
}

/* The timeout: unicorn's own polls every 2 us from a second thread, which on
 * a busy machine costs more than the emulation.  This one sleeps until the
 * run ends or the time is up. */
struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, fired;
	int64_t deadline_ns;
	uc_engine *uc;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;
	struct timespec ts = { .tv_sec = w->deadline_ns / 1000000000,
			       .tv_nsec = w->deadline_ns % 1000000000 };

	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	if (!w->done) {
		w->fired = 1;
		emu_uc.emu_stop(w->uc);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* uc_emu_start under the watchdog; *fired when it stopped the run. */
static uc_err run_watched(uc_engine *uc, uint64_t from, uint64_t until, int timeout_ms, int *fired)
{
	struct watchdog w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, uc };
	pthread_condattr_t ca;
	pthread_t t;
	struct timespec now;
	uc_err ue;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &now);
	w.deadline_ns = now.tv_sec * 1000000000LL + now.tv_nsec + (int64_t)timeout_ms * 1000000;
	if (pthread_create(&t, NULL, watch, &w)) {
		pthread_cond_destroy(&w.cv);
		return emu_uc.emu_start(uc, from, until, (uint64_t)timeout_ms * 1000, 0);
	}
	ue = emu_uc.emu_start(uc, from, until, 0, 0);
	pthread_mutex_lock(&w.mu);
	w.done = 1;
	pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.mu);
	pthread_join(t, NULL);
	pthread_cond_destroy(&w.cv);
	*fired = w.fired;
	return ue;
}

int emu_cpu_run(struct emu_cpu *c, const struct jma_bcall *bc, int timeout_ms, uint64_t *ret)
{
	const struct emu_arch *a = c->arch;
	uint64_t done = stub_addr(c, STUB_DONE), pc = 0, zero = 0;
	uc_engine *uc = c->im.uc;
	uc_err ue;
	int err, fired = 0;

	for (size_t i = 0; i < a->nzero; i++)
		emu_uc.reg_write(uc, a->zero[i], &zero);
	err = a->enter(&c->im, c->base + STACK_HI, done);
	if (err)
		return emu_cpu_fail(c, err, "setting up the emulated stack");
	for (unsigned i = 0; i < JMA_CALL_MAXARGS && i < EMU_ARCH_NARGS; i++) {
		uint64_t v = i < bc->nargs ? bc->args[i] : 0;
		if (bc->text && (int)i == bc->text_arg)
			v = stub_addr(c, STUB_TEXT);
		emu_uc.reg_write(uc, a->args[i], &v);
	}
	emu_uc.reg_write(uc, a->tp, &c->tp);
	c->call = bc;
	c->err = 0;
	c->msg[0] = '\0';
	c->im.fault_addr = 0;
	ue = run_watched(uc, bc->fn, done, timeout_ms, &fired);
	c->call = NULL;
	emu_uc.reg_read(uc, a->pc, &pc);
	if (c->err)
		return c->err;
	if (ue != UC_ERR_OK) {
		if (c->im.fault_addr)
			return emu_cpu_fail(c, -EFAULT, "emulated code at 0x%llx touched 0x%llx, which "
					    "is not in the image (%s)", (unsigned long long)pc,
					    (unsigned long long)c->im.fault_addr, emu_uc.strerror(ue));
		return emu_cpu_fail(c, -EFAULT, "emulation stopped at 0x%llx: %s",
				    (unsigned long long)pc, emu_uc.strerror(ue));
	}
	if (pc != done || fired)
		return emu_cpu_fail(c, -ETIMEDOUT, "the emulated call did not return within %d ms "
				    "(stopped at 0x%llx)", timeout_ms, (unsigned long long)pc);
	emu_uc.reg_read(uc, a->ret, ret);
	return 0;
}

uint64_t emu_cpu_mmap(struct emu_cpu *c, uint64_t len)
{
	/* 2 MiB aligned: what jemalloc asks of its extents, so it never needs to trim. */
	uint64_t at = (c->mmap_cur + 0x1fffff) & ~0x1fffffULL;

	len = (len + EMU_PAGE - 1) & ~(EMU_PAGE - 1);
	if (at + len > c->base + EMU_TOOL_SIZE || at + len < at)
		return 0;
	c->mmap_cur = at + len;
	return at;
}
