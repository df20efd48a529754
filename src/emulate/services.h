/* services.h -- the native stand-ins for the functions jemalloc imports
 * (string and memory functions, clocks, locks as no-ops, file I/O captured). */
#ifndef JMA_EMULATE_SERVICES_H
#define JMA_EMULATE_SERVICES_H

#include "emulate/cpu.h"

/* The index of the service for imported function @name, or -1. */
int emu_service_find(const char *name);
/* Run service @idx with the call's integer arguments @a; its result in *ret. */
int emu_service_run(struct emu_cpu *c, int idx, const uint64_t a[6], uint64_t *ret);

#endif
