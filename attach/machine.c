/* machine.c -- the target machine's descriptor by ELF e_machine, and what follows from it alike
 * on every machine (machine.h). */
#include "attach/machine.h"

const struct att_machine *att_machine_of(unsigned em)
{
	static const struct att_machine *const all[] = { &att_machine_x86_64, &att_machine_aarch64 };

	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		if (all[i]->em == em)
			return all[i];
	return NULL;
}

/* Variant II: the executable's block ends at the thread pointer (its size rounded up to its
 * alignment); variant I: it starts past the TCB, aligned. */
int64_t att_machine_tls_exec(const struct att_machine *m, uint64_t memsz, uint64_t align,
			     uint64_t off)
{
	if (m->tls_above)
		return (int64_t)((m->tcb_size + align - 1) / align * align + off);
	return (int64_t)off - (int64_t)((memsz + align - 1) / align * align);
}

int att_machine_tpoff_ok(const struct att_machine *m, int64_t v)
{
	return m->tls_above ? v > 0 && v < (1LL << 32) : v < 0 && v > -(1LL << 32);
}

void att_machine_ref_add(uint64_t *out, size_t *n, size_t max, uint64_t t)
{
	for (size_t k = 0; k < *n; k++)
		if (out[k] == t)
			return;
	if (*n < max)
		out[(*n)++] = t;
}
