/* counter.c -- where BPF finds jemalloc's own per-thread allocation counter.
 *
 * jemalloc 5.3+ counts the bytes each thread allocates (tsd's
 * thread_allocated) and keeps the next thread event's threshold beside it
 * (thread_allocated_next_event_fast, the next 8 bytes); its inlined malloc
 * fast path reads both, at fixed offsets from the thread pointer, so the
 * pair is read from that code (no symbols, no call into the target): the
 * instructions are each architecture's (attach/arch/ARCH/tpcode.c).
 * In BPF the thread pointer is the one the kernel saved in the task_struct
 * (x86_64 thread.fsbase, arm64 thread.uw.tp_value), at the offset its BTF
 * gives.  Older versions (no thread events) have no such pair: -ENOENT, and
 * the sampler probes entries.
 */
#include <bpf/btf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/mem.h"
#include "sampler/counter.h"

#define SCAN	256	/* bytes of malloc's fast path searched */

int smp_counter_find(pid_t pid, uint64_t malloc_addr, uint64_t malloc_size, int64_t *off)
{
	unsigned char c[SCAN];
	size_t len = malloc_size && malloc_size < SCAN ? (size_t)malloc_size : SCAN;

	if (att_mem_read(pid, malloc_addr, c, len))
		return -ENOENT;
	return arch_tp_pair(pid, malloc_addr, c, len, off);
}

int smp_counter_tp(uint32_t *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *const *path = arch_tp_btf_path;
	uint64_t bits = 0;
	int id, err = -ENOENT;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, path[0], BTF_KIND_STRUCT);
	for (size_t k = 1; id > 0 && path[k]; k++) {
		const struct btf_type *t = btf__type_by_id(btf, (__u32)id);
		const struct btf_member *m = btf_members(t);
		int found = 0;

		for (unsigned i = 0; i < btf_vlen(t) && !found; i++, m++) {
			const char *nm = btf__name_by_offset(btf, m->name_off);

			if (nm && !strcmp(nm, path[k])) {
				bits += btf_member_bit_offset(t, i);
				id = (int)btf__resolve_type(btf, m->type);
				found = 1;
			}
		}
		if (!found)
			id = -1;
		else if (!path[k + 1] && !(bits % 8) && bits / 8 < 65536)
			err = 0;
	}
	btf__free(btf);
	if (!err)
		*off = (uint32_t)(bits / 8);
	return err;
}
