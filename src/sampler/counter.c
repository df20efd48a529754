/* counter.c -- where BPF finds jemalloc's own per-thread allocation counter.
 *
 * jemalloc 5.3+ counts the bytes each thread allocates (tsd's
 * thread_allocated) and keeps the next thread event's threshold beside it
 * (thread_allocated_next_event_fast, the next 8 bytes); its inlined malloc
 * fast path reads both, at fixed offsets from the thread pointer:
 *
 *	mov  GOT(%rip),%rcx          (initial-exec TLS; a static copy: mov $imm,%rcx)
 *	mov  %fs:D(%rcx),%rdx        thread_allocated
 *	...
 *	cmp  %fs:D+8(%rcx),%rdx      the next event's threshold
 *
 * so the pair is read from that code (no symbols, no call into the target).
 * In BPF the thread pointer is the task's saved fs base, at an offset of
 * the kernel's task_struct that its BTF gives.  Older versions (no thread
 * events) have no such pair: -ENOENT, and the sampler probes entries.
 */
#include <bpf/btf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/mem.h"
#include "sampler/counter.h"

#define SCAN	256	/* bytes of malloc's fast path searched */

/* A 64-bit fs-relative operand at @c: `64 REX.W op ModRM disp32` with a
 * base register (mod 10) or absolute (mod 00, SIB 0x25).  Its length, the
 * base register (-1 absolute) and disp; 0 when @c is not one. */
static size_t fs_operand(const unsigned char *c, size_t n, unsigned char op, int *base,
			 int32_t *disp)
{
	unsigned mod, rm;

	if (n < 8 || c[0] != 0x64 || (c[1] & 0xf8) != 0x48 || c[2] != op)
		return 0;
	mod = c[3] >> 6;
	rm = c[3] & 7;
	if (mod == 2 && rm != 4) {
		*base = (int)(rm | (c[1] & 1) << 3);
		memcpy(disp, c + 4, 4);
		return 8;
	}
	if (mod == 0 && rm == 4 && n >= 9 && c[4] == 0x25) {
		*base = -1;
		memcpy(disp, c + 5, 4);
		return 9;
	}
	return 0;
}

/* The thread pointer offset register @reg was loaded with before @end: the
 * last `mov GOT(%rip),%reg` (the slot read from the target) or
 * `mov $imm32,%reg`.  0, or -ENOENT. */
static int base_value(pid_t pid, uint64_t addr, const unsigned char *c, size_t end, int reg,
		      int64_t *v)
{
	for (size_t i = end; i-- > 0;) {
		int32_t x;

		if (i + 7 > end || (c[i] & 0xf8) != 0x48)
			continue;
		if (c[i + 1] == 0x8b && (c[i + 2] & 0xc7) == 0x05 &&
		    (int)((c[i + 2] >> 3 & 7) | (c[i] & 4) << 1) == reg) {
			memcpy(&x, c + i + 3, 4);
			return att_mem_read(pid, addr + i + 7 + (uint64_t)(int64_t)x, v, sizeof(*v)) ? -ENOENT : 0;
		}
		if (c[i + 1] == 0xc7 && (c[i + 2] & 0xf8) == 0xc0 &&
		    (int)((c[i + 2] & 7) | (c[i] & 1) << 3) == reg) {
			memcpy(&x, c + i + 3, 4);
			*v = x;
			return 0;
		}
	}
	return -ENOENT;
}

int smp_counter_find(pid_t pid, uint64_t malloc_addr, uint64_t malloc_size, int64_t *off)
{
	unsigned char c[SCAN];
	size_t len = malloc_size && malloc_size < SCAN ? (size_t)malloc_size : SCAN;

	if (att_mem_read(pid, malloc_addr, c, len))
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		int base, base2;
		int32_t disp, disp2;
		size_t n = fs_operand(c + i, len - i, 0x8b, &base, &disp);
		int64_t tp = 0;

		if (!n)
			continue;
		/* The threshold's compare, with the same base, 8 bytes on. */
		for (size_t j = i + n; j < len; j++) {
			if ((!fs_operand(c + j, len - j, 0x3b, &base2, &disp2) &&
			     !fs_operand(c + j, len - j, 0x39, &base2, &disp2)) ||
			    base2 != base || disp2 != disp + 8)
				continue;
			if (base >= 0 && base_value(pid, malloc_addr, c, i, base, &tp))
				return -ENOENT;
			*off = tp + disp;
			return *off ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

int smp_counter_fsbase(uint32_t *off)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *path[] = { "task_struct", "thread", "fsbase" };
	uint64_t bits = 0;
	int id, err = -ENOENT;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, path[0], BTF_KIND_STRUCT);
	for (size_t k = 1; id > 0 && k < 3; k++) {
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
		else if (k == 2 && !(bits % 8) && bits / 8 < 65536)
			err = 0;
	}
	btf__free(btf);
	if (!err)
		*off = (uint32_t)(bits / 8);
	return err;
}
