/* backend.h -- the emulation backend: jemalloc's code run on a copy of the process. */
#ifndef JMA_EMULATE_BACKEND_H
#define JMA_EMULATE_BACKEND_H

#include "emulate/cpu.h"
#include "core/session.h"

/* Where an emulated session's image and TLS come from. */
struct emu_origin {
	const char *what;		/* "process 42", "core FILE": for messages */
	/* Called at each attach: fill @src, the used address ranges (malloc'd
	 * lo/hi arrays) and the thread pointer of the thread jemalloc should see. */
	int (*prepare)(struct emu_origin *o, jma_session *s, struct emu_source *src, uint64_t **lo,
		       uint64_t **hi, size_t *n, uint64_t *tp);
	/* Undo prepare (let frozen threads go). */
	void (*finish)(struct emu_origin *o);
	int (*maps_text)(void *arg, char **text, size_t *len);
	/* Optional: the source's threads (a core's), as backend.h's threads. */
	int (*threads)(struct emu_origin *o, pid_t **tids, struct arch_gpregs **regs, size_t *n);
	/* The process's name and thread count (comm, nthreads of @info). */
	void (*status)(struct emu_origin *o, struct jma_target_info *info);
	void (*destroy)(struct emu_origin *o);
	/* Set by prepare: the thread whose TLS the calls see, and why. */
	pid_t tid;
	char tid_comm[64];
	char tid_why[160];
};

/* Install the emulation backend over @o (owned by the backend from now on). */
int emu_backend_install(jma_session *s, struct emu_origin *o);

#endif
