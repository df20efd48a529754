/* tls.c -- where a thread's copy of one of jemalloc's TLS variables is, read from outside.
 *
 * The variable is at @off in jemalloc's module TLS block (its symbol's
 * value).  How the code reaches it decides how we do (x86_64, glibc):
 *
 * - initial-exec: a GOT slot relocated by R_X86_64_TPOFF64 (addend @off)
 *   holds the variable's offset from the thread pointer (fs_base).
 * - global-dynamic, as 3.6's configure chooses when its tls_model test
 *   fails (it does with today's compilers): a GOT pair (tls_index) of the
 *   module's id, relocated by R_X86_64_DTPMOD64, and @off.  The block is
 *   then dtv[id] of the thread's dynamic thread vector: tcbhead_t.dtv at
 *   fs_base + 8, 16-byte entries, dtv[-1] their number; an entry a thread
 *   has not touched (dlopen'ed library) is TLS_DTV_UNALLOCATED (-1).
 * - local-exec (jemalloc linked into the executable): no slot; the
 *   executable's TLS block ends at the thread pointer.
 */
#include <errno.h>
#include <gelf.h>

#include "census/chunks.h"

#define DTV_ENTRY	16
#define DTV_MAX		4096	/* modules: a larger count is not a dtv */

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

	return tls_phdr(jma_syms_jemalloc_elf(c->s->syms, &bias), &align);
}

int cen_tls_find(struct cen *c, uint64_t off, struct cen_tls *t)
{
	const struct jma_copy *je = jma_syms_jemalloc(c->s->syms);
	uint64_t bias = 0, memsz, align;
	Elf *e = jma_syms_jemalloc_elf(c->s->syms, &bias);
	Elf_Scn *scn = NULL;

	t->how = 0;
	t->var = off;
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
			int64_t v;

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			if (ELF64_R_TYPE(r.r_info) == R_X86_64_TPOFF64 && (uint64_t)r.r_addend == off &&
			    !cen_read(c, r.r_offset + bias, &v, sizeof(v)) && v < 0 && v > -(1LL << 32)) {
				t->how = CEN_TLS_TP;
				t->tpoff = v;
			} else if (ELF64_R_TYPE(r.r_info) == R_X86_64_DTPMOD64 &&
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
	if (t->how || !je->is_static)
		return t->how ? 0 : -ENOENT;
	memsz = tls_phdr(e, &align);
	if (!memsz || off >= memsz)
		return -ENOENT;
	t->how = CEN_TLS_TP;
	t->tpoff = (int64_t)off - (int64_t)((memsz + align - 1) / align * align);
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
	if (cen_read(c, t->modid_slot, &modid, sizeof(modid)) || cen_read(c, tp + 8, &dtv, sizeof(dtv)) ||
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

int chk_tls_range(struct cen *c, size_t t, uint64_t *lo, uint64_t *hi)
{
	const struct cen_chunks *k = c->ch;
	uint64_t a;

	if (!k->tls_memsz || cen_tls_addr(c, &k->tls_tcache, &c->th[t].regs, &a) ||
	    a < k->tls_tcache.var || !cen_ptr_ok(a - k->tls_tcache.var))
		return 0;
	*lo = a - k->tls_tcache.var;
	*hi = *lo + k->tls_memsz;
	return 1;
}
