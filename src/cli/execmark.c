/* execmark.c -- did the process exec() a new program during our session?
 *
 * An exec keeps the PID but replaces every mapping; with address-space
 * randomization the vDSO lands elsewhere each time.  Its address, read when
 * the session starts and again when a command fails, tells an error caused by
 * the program changing under us (no jemalloc found mid-exec, a stack pointer in
 * no known stack, a call to the old program's addresses) from a real one.
 */
#include <elf.h>
#include <stdio.h>

#include "cli/cli.h"

/* From the auxiliary vector (AT_SYSINFO_EHDR): a few hundred bytes, where
 * /proc/PID/maps of a thousand-thread process is a hundred kilobytes. */
unsigned long long cli_exec_mark(pid_t pid)
{
	char path[64];
	Elf64_auxv_t av;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fread(&av, sizeof(av), 1, f) == 1 && av.a_type != AT_NULL)
		if (av.a_type == AT_SYSINFO_EHDR) {
			start = av.a_un.a_val;
			break;
		}
	fclose(f);
	return start;
}
