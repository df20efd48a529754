/* arch.c -- the emulator's architecture tables, chosen by ELF machine through its descriptor. */
#include "emulate/arch.h"

const struct emu_arch *emu_arch_of(unsigned machine)
{
	static const struct emu_arch *const all[] = { &emu_arch_x86_64, &emu_arch_aarch64 };
	const struct att_machine *m = att_machine_of(machine);

	for (size_t i = 0; m && i < sizeof(all) / sizeof(*all); i++)
		if (all[i]->m == m)
			return all[i];
	return NULL;
}
