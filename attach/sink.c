/* sink.c -- finding the target's harmless system call to serve as write callback (see sink.h). */
#include "arch.h"
#include "codescan.h"
#include "sink.h"

int att_sink_find(pid_t pid, const struct att_map *maps, size_t n, uint64_t *addr)
{
	return att_code_search(pid, maps, n, arch_sink_match, arch_sink_len, 0, addr);
}

int att_sink_check(pid_t pid, uint64_t addr)
{
	return att_code_check(pid, addr, arch_sink_len, arch_sink_match);
}
