/* execmark.c -- did the process exec() a new program during our session?
 *
 * An exec keeps the PID but replaces every mapping; with address-space
 * randomization the vDSO lands elsewhere each time.  Its address, read when
 * the session starts and again when a command fails, tells an error caused by
 * the program changing under us (no jemalloc found mid-exec, a stack pointer in
 * no known stack, a call to the old program's addresses) from a real one.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

unsigned long long cli_exec_mark(pid_t pid)
{
	char path[64], line[512];
	unsigned long long start = 0, a;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-", &a) == 1) {
			start = a;
			break;
		}
	fclose(f);
	return start;
}
