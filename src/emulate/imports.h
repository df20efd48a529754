/* imports.h -- pointing jemalloc's calls out of itself at the emulator's services. */
#ifndef JMA_EMULATE_IMPORTS_H
#define JMA_EMULATE_IMPORTS_H

#include <gelf.h>

#include "emulate/cpu.h"

/* Rewrite, in the image only, every GOT slot of the module @elf (loaded at
 * @bias) that holds an imported function: each gets the stub of that
 * function's service.  Slots of the module's own functions that lazy binding
 * has not resolved yet get the function itself, so the dynamic linker is
 * never emulated.  Returns the number of slots rewritten, or -errno with a
 * message in @msg. */
int emu_imports_redirect(struct emu_cpu *c, Elf *elf, uint64_t bias, char *msg, size_t len);

#endif
