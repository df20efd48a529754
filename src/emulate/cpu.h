/* cpu.h -- running one jemalloc function on the image, in unicorn.
 *
 * Only jemalloc's own code is emulated.  Every call that leaves it through
 * its GOT lands on a stub in the tool's service page, one return instruction
 * of the emulated machine (x86_64 `ret`, arm64 `ret`); a code hook on that
 * page does the work natively on the image (services.c) and the stub returns
 * to jemalloc.  The call's return address is another stub, and write_cb
 * callbacks a third: no address of the real process is involved.  What differs
 * by machine (registers, the return address, relocation types) is in arch.h.
 */
#ifndef JMA_EMULATE_CPU_H
#define JMA_EMULATE_CPU_H

#include <sys/types.h>

#include "emulate/image.h"
#include "core/backend.h"

#define EMU_TOOL_SIZE	0x20000000ULL	/* stubs, errno, stack, scratch, mmap arena */
#define EMU_MAXFILES	8
#define EMU_MAXSTUBS	1024

/* A file jemalloc opened: /proc/PID/maps to read, or a dump it writes (captured). */
struct emu_file {
	int used, writing;
	char *path;
	char *buf;
	size_t len, cap, pos;
};

/* Where a function linked into the module (a static libc) sends execution. */
struct emu_redirect {
	uint64_t to;
	int pc;				/* the machine's pc register */
	uc_hook hook;
};
#define EMU_MAXREDIRECTS 128

struct emu_cpu {
	struct emu_image im;
	const struct emu_arch *arch;	/* the emulated code's machine */
	uint64_t base;			/* the tool's regions (EMU_TOOL_SIZE bytes) */
	uint64_t tp;			/* the thread pointer of the thread whose TLS jemalloc sees */
	pid_t pid;			/* what getpid() answers */
	uint64_t scratch_cur, mmap_cur;
	uc_hook stub_hook;

	/* Stubs: index -> service (>= 0) or name of a function without one.  The
	 * services are installed by whoever opens the cpu (services.h): they use
	 * the cpu, so the cpu knows them only through these. */
	int (*service_find)(const char *name);
	int (*service_run)(struct emu_cpu *c, int idx, const uint64_t a[EMU_ARCH_NARGS],
			   uint64_t *ret);
	int stub_service[EMU_MAXSTUBS];
	char *stub_name[EMU_MAXSTUBS];
	unsigned nstubs;

	/* The /proc/PID/maps text jemalloc's prof dump reads. */
	int (*maps_text)(void *arg, char **text, size_t *len);
	void *maps_arg;
	struct emu_file files[EMU_MAXFILES];
	char *dump;			/* the last file written and closed, and its name */
	size_t dump_len;
	char *dump_path;

	struct emu_redirect redirects[EMU_MAXREDIRECTS];
	unsigned nredirects;

	const struct jma_bcall *call;	/* the running call, for write_cb */
	int err;			/* a service's failure stops the run */
	char msg[512];
};

/* A CPU of @arch over @src, the tool's regions at @base, jemalloc's TLS at
 * thread pointer @tp, getpid() answering @pid. */
int emu_cpu_open(struct emu_cpu *c, const struct emu_arch *arch, const struct emu_source *src,
		 uint64_t base, uint64_t tp, pid_t pid);
void emu_cpu_close(struct emu_cpu *c);

/* The stub address standing for imported function @name (a service, or a
 * fatal "not provided" stub).  0 when the stub table is full. */
uint64_t emu_cpu_stub(struct emu_cpu *c, const char *name);

/* Send every call of the function at @addr (linked into the module: no GOT
 * slot to rewrite) to the stub of @name.  0, or -E2BIG when full. */
int emu_cpu_redirect(struct emu_cpu *c, uint64_t addr, const char *name);

/* @len bytes of scratch in the image, @data copied in (zeroed when NULL). */
uint64_t emu_cpu_scratch(struct emu_cpu *c, const void *data, size_t len, size_t align);
void emu_cpu_scratch_reset(struct emu_cpu *c);

/* Fresh zeroed memory of @len bytes for jemalloc's mmap; 0 when the arena is full. */
uint64_t emu_cpu_mmap(struct emu_cpu *c, uint64_t len);

/* Run @bc to its return.  -errno with the reason in c->msg. */
int emu_cpu_run(struct emu_cpu *c, const struct jma_bcall *bc, int timeout_ms, uint64_t *ret);

/* Fail the run from inside a service. */
int emu_cpu_fail(struct emu_cpu *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Where the thread's errno lives (for services that set it). */
uint64_t emu_errno_addr(const struct emu_cpu *c);

#endif
