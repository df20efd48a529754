/* tpcode.c -- arm64: a pair of thread-pointer-relative loads read from code (see arch.h,
 * arch_tp_pair), and where the kernel keeps a task's thread pointer.
 *
 * jemalloc 5.3's inlined malloc fast path, for example (Debian's arm64 build):
 *
 *	adrp x7, GOT@page; ldr x7, [x7, #GOT@lo12]    initial-exec TLS: the offset, from the GOT
 *	mrs  x6, tpidr_el0
 *	add  x12, x6, x7
 *	ldr  x5, [x12, #D]                            thread_allocated
 *	ldr  x8, [x12, #D+8]                          the next event's threshold
 *
 * (linked into an executable, the linker makes the GOT load `movz xN, #hi, lsl #16; movk xN,
 * #lo`, the offset itself; or `add xN, xN, #hi, lsl #12; add xN, xN, #lo` on the thread
 * pointer; or one `ldp` of both).  The straight-line code up to the first unconditional branch or return is
 * followed with what each register holds: the thread pointer plus a known offset, a known
 * value (adrp, and 8-byte loads from known addresses: the GOT, read from the target), or
 * unknown.  An instruction not understood makes what it may write unknown: a wrong guess
 * finds no pair, never a wrong one.
 */
#include <errno.h>
#include <string.h>

#include "attach/arch.h"
#include "attach/machine/a64.h"
#include "attach/mem.h"

const char *const arch_tp_btf_path[] = { "task_struct", "thread", "uw", "tp_value", NULL };

enum { V_UNKNOWN, V_TP, V_CONST };

struct val {
	int kind;
	int64_t v;	/* V_TP: the offset from the thread pointer; V_CONST: the value */
};

/* x31 is sp or xzr by instruction: never tracked. */
static void set(struct val *r, unsigned i, int kind, int64_t v)
{
	if (i != 31)
		r[i] = (struct val){ kind, v };
}

/* A load of 8 bytes at the thread pointer plus @at: the pair is found when the one before
 * (or after) it was loaded too.  1 when *off is set. */
static int seen(int64_t *loads, size_t *n, size_t cap, int64_t at, int64_t *off)
{
	for (size_t k = 0; k < *n; k++)
		if (loads[k] == at - 8 || loads[k] == at + 8) {
			*off = loads[k] < at ? loads[k] : at;
			return 1;
		}
	if (*n < cap)
		loads[(*n)++] = at;
	return 0;
}

int arch_tp_pair(pid_t pid, uint64_t addr, const unsigned char *code, size_t len, int64_t *off)
{
	struct val r[32] = { { 0, 0 } };
	int64_t loads[16];
	size_t nloads = 0;

	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t w;
		uint64_t pc = addr + i, u;

		memcpy(&w, code + i, 4);
		if ((w & 0xffffffe0u) == 0xd53bd040u) {		/* mrs xd, tpidr_el0 */
			set(r, A64_RD(w), V_TP, 0);
		} else if (a64_adrp(w, pc, &u)) {
			set(r, A64_RD(w), V_CONST, (int64_t)u);
		} else if (a64_add_imm(w, &u)) {
			struct val s = A64_RN(w) == 31 ? (struct val){ V_UNKNOWN, 0 } : r[A64_RN(w)];

			set(r, A64_RD(w), s.kind, s.v + (int64_t)u);
		} else if ((w & 0xffe0fc00u) == 0x8b000000u) {	/* add xd, xn, xm (no shift) */
			struct val a = A64_RN(w) == 31 ? (struct val){ V_UNKNOWN, 0 } : r[A64_RN(w)];
			struct val b = A64_RM(w) == 31 ? (struct val){ V_UNKNOWN, 0 } : r[A64_RM(w)];
			int kind = V_UNKNOWN;

			if (a.kind == V_CONST && b.kind == V_CONST)
				kind = V_CONST;
			else if ((a.kind == V_TP && b.kind == V_CONST) || (a.kind == V_CONST && b.kind == V_TP))
				kind = V_TP;
			set(r, A64_RD(w), kind, a.v + b.v);
		} else if ((w & 0xff800000u) == 0xd2800000u) {	/* mov xd, #imm16{, lsl 16*hw} */
			set(r, A64_RD(w), V_CONST, (int64_t)((uint64_t)(w >> 5 & 0xffff) << (16 * (w >> 21 & 3))));
		} else if ((w & 0xff800000u) == 0xf2800000u) {	/* movk xd, #imm16{, lsl 16*hw} */
			unsigned sh = 16 * (w >> 21 & 3);
			uint64_t v = (uint64_t)r[A64_RD(w)].v & ~(0xffffull << sh);

			set(r, A64_RD(w), r[A64_RD(w)].kind == V_CONST ? V_CONST : V_UNKNOWN,
			    (int64_t)(v | (uint64_t)(w >> 5 & 0xffff) << sh));
		} else if ((w & 0xff000000u) == 0x58000000u) {	/* ldr xt, label */
			int64_t imm = (int64_t)(w >> 5 & 0x7ffff), v;

			imm = (imm ^ 0x40000) - 0x40000;
			if (att_mem_read(pid, pc + (uint64_t)(imm * 4), &v, sizeof(v)))
				set(r, A64_RD(w), V_UNKNOWN, 0);
			else
				set(r, A64_RD(w), V_CONST, v);
		} else if ((w & 0xffe0ffe0u) == 0xaa0003e0u) {	/* mov xd, xm (orr xd, xzr, xm) */
			unsigned m = A64_RM(w);

			set(r, A64_RD(w), m == 31 ? V_CONST : r[m].kind, m == 31 ? 0 : r[m].v);
		} else if (a64_ldr_imm(w, &u)) {
			struct val s = A64_RN(w) == 31 ? (struct val){ V_UNKNOWN, 0 } : r[A64_RN(w)];
			int64_t at = s.v + (int64_t)u;
			int64_t v;

			if (s.kind == V_TP && seen(loads, &nloads, 16, at, off))
				return *off ? 0 : -ENOENT;
			if (s.kind == V_CONST && !att_mem_read(pid, (uint64_t)at, &v, sizeof(v)))
				set(r, A64_RD(w), V_CONST, v);
			else
				set(r, A64_RD(w), V_UNKNOWN, 0);
		} else if ((w & 0xffc00000u) == 0xa9400000u) {	/* ldp xt, xt2, [xn|sp, #imm] */
			struct val s = A64_RN(w) == 31 ? (struct val){ V_UNKNOWN, 0 } : r[A64_RN(w)];
			int64_t imm = (int64_t)(w >> 15 & 0x7f);

			if (s.kind == V_TP) {
				*off = s.v + ((imm ^ 0x40) - 0x40) * 8;
				return *off ? 0 : -ENOENT;
			}
			set(r, A64_RD(w), V_UNKNOWN, 0);
			set(r, A64_RT2(w), V_UNKNOWN, 0);
		} else if ((w & 0x7c000000u) == 0x14000000u || (w & 0xfe1f0000u) == 0xd61f0000u) {
			break;	/* b, bl, br, blr, ret...: the straight line ends */
		} else if ((w & 0x0a000000u) == 0x08000000u) {
			/* Other loads and stores: the registers they may write, the base
			 * too unless the form has no writeback (a register's unsigned
			 * offset, a pair's signed offset). */
			unsigned cls = w >> 27 & 7;

			set(r, A64_RD(w), V_UNKNOWN, 0);
			set(r, A64_RT2(w), V_UNKNOWN, 0);
			if (!(cls == 7 && (w >> 24 & 1)) && !(cls == 5 && (w >> 23 & 3) == 2))
				set(r, A64_RN(w), V_UNKNOWN, 0);
		} else {
			set(r, A64_RD(w), V_UNKNOWN, 0);
		}
	}
	return -ENOENT;
}
