/* uc.c -- libunicorn, loaded when the first emulation starts (see uc.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "emulate/uc.h"

/* The soname Debian's libunicorn2 installs; the development symlink
 * (libunicorn.so) may be absent where the tool is installed. */
#define UC_SONAME "libunicorn.so.2"

struct emu_uc_api emu_uc;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_err[256];

static void load(void)
{
	struct {
		void **slot;
		const char *name;
	} fns[] = {
		{ (void **)&emu_uc.open, "uc_open" },
		{ (void **)&emu_uc.close, "uc_close" },
		{ (void **)&emu_uc.emu_start, "uc_emu_start" },
		{ (void **)&emu_uc.emu_stop, "uc_emu_stop" },
		{ (void **)&emu_uc.hook_add, "uc_hook_add" },
		{ (void **)&emu_uc.mem_map, "uc_mem_map" },
		{ (void **)&emu_uc.mem_read, "uc_mem_read" },
		{ (void **)&emu_uc.mem_write, "uc_mem_write" },
		{ (void **)&emu_uc.reg_read, "uc_reg_read" },
		{ (void **)&emu_uc.reg_write, "uc_reg_write" },
		{ (void **)&emu_uc.strerror, "uc_strerror" },
		{ (void **)&emu_uc.ctl, "uc_ctl" },
	};
	/* Never closed: the library stays for the life of the process. */
	void *h = dlopen(UC_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(load_err, sizeof(load_err), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!(*fns[i].slot = dlsym(h, fns[i].name))) {
			snprintf(load_err, sizeof(load_err), "%s: no %s", UC_SONAME, fns[i].name);
			return;
		}
}

int emu_uc_load(char *msg, size_t len)
{
	pthread_once(&once, load);
	if (!load_err[0])
		return 0;
	snprintf(msg, len, "%s", load_err);
	return -ELIBACC;
}
