/* tls.c -- where a thread's copy of one of jemalloc's TLS variables is, read from outside.
 *
 * The variable is at @off in jemalloc's module TLS block (its symbol's
 * value).  How the code reaches it decides how we do (glibc):
 *
 * - initial-exec: a GOT slot relocated by R_X86_64_TPOFF64 (arm64:
 *   R_AARCH64_TLS_TPREL; addend @off) holds the variable's offset from the
 *   thread pointer: negative on x86_64, whose TLS lies below it, positive on
 *   arm64.  What differs by machine is its descriptor's (attach/machine.h).  Every 5.x library (tsd_tls), and 3.6/4.5 built so.
 * - global-dynamic, as 3.6's configure chooses when its tls_model test
 *   fails (it does with today's compilers; x86_64): a GOT pair (tls_index)
 *   of the module's id, relocated by R_X86_64_DTPMOD64, and @off.  The block
 *   is then dtv[id] of the thread's dynamic thread vector: tcbhead_t.dtv at
 *   fs_base + 8, 16-byte entries, dtv[-1] their number; an entry a thread
 *   has not touched (dlopen'ed library) is TLS_DTV_UNALLOCATED (-1).
 * - local-exec (jemalloc linked into the executable: Redis, a Rust
 *   program): no slot; the executable's TLS block ends at the thread
 *   pointer on x86_64, starts past the 16-byte TCB on arm64 (aligned).
 *
 * 5.x has one TLS variable, tsd (tsd.c); 3.6 and 4.5 several (chunklayout.c:
 * the tcache's and the quarantine's).
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>

#include "census/census.h"

#define DTV_ENTRY	16
#define DTV_MAX		4096	/* modules: a larger count is not a dtv */
#define TLS_SLOTS	8	/* TP-offset slots looked at, at most */

/* @e's PT_TLS: its size, and its alignment (at least 1); 0 when none. */
static uint64_t tls_phdr(Elf *e, uint64_t *align)
{
	uint64_t memsz = 0;
	size_t nph = 0;

	*align = 1;
	if (!e || elf_getphdrnum(e, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_TLS) {
			memsz = ph.p_memsz;
			*align = ph.p_align ? ph.p_align : 1;
		}
	}
	return memsz;
}

uint64_t cen_tls_memsz(struct cen *c)
{
	uint64_t bias = 0, align;

	return tls_phdr(syms_jemalloc_elf(c->s->syms, &bias), &align);
}

int cen_tls_exec(struct cen *c, uint64_t off, int64_t *tpoff)
{
	const struct jma_copy *je = syms_jemalloc(c->s->syms);
	uint64_t bias = 0, align, memsz;
	Elf *e = syms_jemalloc_elf(c->s->syms, &bias);

	if (!je || !je->is_static || !e || !(memsz = tls_phdr(e, &align)) || off >= memsz)
		return -ENOENT;
	*tpoff = att_machine_tls_exec(c->b.mach, memsz, align, off);
	return 0;
}

int cen_tls_find(struct cen *c, uint64_t off, struct cen_tls *t)
{
	uint64_t bias = 0, slot[TLS_SLOTS];
	int64_t addend[TLS_SLOTS];
	size_t nslot = 0;
	int same = 1;
	Elf *e = syms_jemalloc_elf(c->s->syms, &bias);
	Elf_Scn *scn = NULL;
	const struct att_machine *m = c->b.mach;

	t->how = 0;
	t->in_block = 0;
	t->var = off == CEN_TLS_ANY ? 0 : off;
	if (!e)
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn)) && !t->how) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !t->how; i++) {
			GElf_Rela r;
			uint64_t w[2];

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			/* The module's own variables' slots name no symbol (one
			 * that does is another module's: libc's errno). */
			if (ELF64_R_TYPE(r.r_info) == m->rel_tpoff && !ELF64_R_SYM(r.r_info) &&
			    nslot < TLS_SLOTS) {
				same &= !nslot || r.r_addend == addend[0];
				slot[nslot] = r.r_offset + bias;
				addend[nslot++] = r.r_addend;
			} else if (m->rel_dtpmod && off != CEN_TLS_ANY && ELF64_R_TYPE(r.r_info) == m->rel_dtpmod &&
				   !cen_read(c, r.r_offset + bias, w, sizeof(w)) && w[1] == off &&
				   w[0] && w[0] < DTV_MAX) {
				/* The offset word is constant (a local symbol) or
				 * relocated by DTPOFF64: either way it reads @off. */
				t->how = CEN_TLS_DTV;
				t->modid_slot = r.r_offset + bias;
				t->off = off;
			}
		}
	}
	/* The slot for @off; without it (no symbol), the module's one
	 * variable when every slot is for one offset (Debian's arm64 library
	 * has two, both for tsd_tls). */
	for (size_t i = 0; i < nslot && !t->how; i++) {
		int64_t v;

		if (off == CEN_TLS_ANY ? !same : addend[i] != (int64_t)off)
			continue;
		if (!cen_read(c, slot[i], &v, sizeof(v)) && att_machine_tpoff_ok(m, v)) {
			t->how = CEN_TLS_TP;
			t->tpoff = v;
			t->var = (uint64_t)addend[i];
		}
	}
	if (t->how)
		return 0;
	/* Linked into the program: its block's layout places it. */
	if (off == CEN_TLS_ANY || cen_tls_exec(c, off, &t->tpoff))
		return -ENOENT;
	t->how = CEN_TLS_TP;
	t->in_block = 1;
	return 0;
}

int cen_tls_addr(struct cen *c, const struct cen_tls *t, const struct arch_gpregs *r, uint64_t *addr)
{
	uint64_t tp = arch_regs_tls_base(r), dtv, n, modid, block;

	if (!cen_ptr_ok(tp))
		return -EFAULT;
	if (t->how == CEN_TLS_TP) {
		*addr = tp + (uint64_t)t->tpoff;
		return cen_ptr_ok(*addr) ? 0 : -EFAULT;
	}
	if (t->how != CEN_TLS_DTV)
		return -ENOENT;
	if (cen_read(c, t->modid_slot, &modid, sizeof(modid)) || cen_read(c, tp + c->b.mach->dtv_off, &dtv, sizeof(dtv)) ||
	    !cen_ptr_ok(dtv) || cen_read(c, dtv - DTV_ENTRY, &n, sizeof(n)))
		return -EFAULT;
	if (!modid || modid > n || n > DTV_MAX)
		return 1;
	if (cen_read(c, dtv + modid * DTV_ENTRY, &block, sizeof(block)))
		return -EFAULT;
	if (block == UINT64_MAX || !block)
		return 1;
	*addr = block + t->off;
	return cen_ptr_ok(*addr) ? 0 : -EFAULT;
}
