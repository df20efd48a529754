/* arch.c -- the emulator's architecture tables, chosen by ELF machine. */
#include "emulate/arch.h"

const struct emu_arch *emu_arch_of(unsigned machine)
{
	static const struct emu_arch *const all[] = { &emu_arch_x86_64, &emu_arch_aarch64 };

	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		if (all[i]->machine == machine)
			return all[i];
	return NULL;
}
