/* fdes.c -- function starts from .eh_frame_hdr (see fdes.h). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/fdes.h"

/* The start of every FDE, from .eh_frame_hdr's binary-search table (found
 * by its program header, so section headers are not needed).  libdw answers
 * which FDE row covers an address (dwarf_frame_info's range is the row's,
 * not the function's), so the function's start is read here.  Only the
 * table encoding every toolchain emits (datarel | sdata4) is read; others
 * leave the module without boundaries. */
int syms_fdes_load(struct jma_fdes *f, Dwfl_Module *dm)
{
	enum { DATAREL_SDATA4 = 0x3b, UDATA4 = 0x03 };
	Dwarf_Addr bias;
	Elf *elf;

	memset(f, 0, sizeof(*f));
	f->cfi = dwfl_module_eh_cfi(dm, &f->bias);
	elf = f->cfi ? dwfl_module_getelf(dm, &bias) : NULL;
	size_t nph;
	GElf_Phdr ph;

	if (!elf || elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		const unsigned char *p;
		Elf_Data *d;
		size_t skip, count;
		int32_t v;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 12)
			return 0;
		p = d->d_buf;
		/* version, eh_frame_ptr encoding, fde_count encoding, table encoding */
		if (p[0] != 1 || p[2] != UDATA4 || p[3] != DATAREL_SDATA4)
			return 0;
		skip = (p[1] & 0x0f) == 0x03 || (p[1] & 0x0f) == 0x0b ? 4 : 8;
		if (4 + skip + 4 > d->d_size)
			return 0;
		memcpy(&v, p + 4 + skip, 4);
		count = (uint32_t)v;
		p += 4 + skip + 4;
		if (count > (d->d_size - (size_t)(p - (const unsigned char *)d->d_buf)) / 8)
			return 0;
		f->start = malloc((count ? count : 1) * sizeof(*f->start));
		if (!f->start)
			return -ENOMEM;
		for (size_t k = 0; k < count; k++) {
			memcpy(&v, p + 8 * k, 4);
			f->start[k] = ph.p_vaddr + (uint64_t)(int64_t)v;
		}
		f->n = count;
		return 0;
	}
	return 0;
}

int syms_fdes_start(const struct jma_fdes *f, uint64_t addr, uint64_t *start)
{
	uint64_t fa = addr - f->bias;
	size_t a = 0, b = f->n;
	Dwarf_Frame *fr;

	if (!f->n || dwarf_cfi_addrframe(f->cfi, fa, &fr) != 0)
		return -1;
	free(fr);
	while (a < b) {
		size_t m = (a + b) / 2;
		if (f->start[m] <= fa)
			a = m + 1;
		else
			b = m;
	}
	if (!a)
		return -1;
	*start = f->start[a - 1];
	return 0;
}

void syms_fdes_free(struct jma_fdes *f)
{
	free(f->start);
	memset(f, 0, sizeof(*f));
}
