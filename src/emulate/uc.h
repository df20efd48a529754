/* uc.h -- libunicorn, loaded when the first emulation starts.
 *
 * Linked normally, libunicorn's relocations cost every command about 6 ms of
 * start-up (19 MB, some 50 000 relocations), though only --emulate and core
 * use it.  emu_uc_load dlopens it once and fills emu_uc; the emulator calls
 * unicorn only through emu_uc, after a successful load.
 */
#ifndef JMA_EMULATE_UC_H
#define JMA_EMULATE_UC_H

#include <stddef.h>
#include <unicorn/unicorn.h>

struct emu_uc_api {
	__typeof__(uc_open) *open;
	__typeof__(uc_close) *close;
	__typeof__(uc_emu_start) *emu_start;
	__typeof__(uc_emu_stop) *emu_stop;
	__typeof__(uc_hook_add) *hook_add;
	__typeof__(uc_mem_map) *mem_map;
	__typeof__(uc_mem_read) *mem_read;
	__typeof__(uc_mem_write) *mem_write;
	__typeof__(uc_reg_read) *reg_read;
	__typeof__(uc_reg_write) *reg_write;
	__typeof__(uc_strerror) *strerror;
	__typeof__(uc_ctl) *ctl;
};

extern struct emu_uc_api emu_uc;

/* Load libunicorn (once per process; thread-safe).  0, or -ELIBACC with
 * what the dynamic loader said in @msg. */
int emu_uc_load(char *msg, size_t len);

#endif
