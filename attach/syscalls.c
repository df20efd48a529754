/* syscalls.c -- system calls by number: class, name, EINTR after a stop.  The lookups are one
 * for every architecture; the tables are each architecture's (attach/arch/<arch>/syscalls.c,
 * syscall_names.c). */
#include <stddef.h>

#include "attach/arch.h"

enum arch_sc_class arch_syscall_class(long nr)
{
	for (size_t i = 0; i < arch_sc_nclasses; i++)
		if (arch_sc_classes[i].nr == nr)
			return arch_sc_classes[i].cls;
	return ARCH_SC_OTHER;
}

const char *arch_syscall_name(long nr)
{
	return nr >= 0 && (size_t)nr < arch_sc_nnames ? arch_sc_names[nr] : NULL;
}

int arch_syscall_eintr_on_stop(long nr)
{
	for (size_t i = 0; i < arch_sc_neintr; i++)
		if (arch_sc_eintr[i] == nr)
			return 1;
	return 0;
}
