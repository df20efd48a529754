/* buildid.c -- the GNU build-id of an ELF image, read where it is mapped (see buildid.h). */
#include <elf.h>
#include <string.h>

#include "symbols/buildid.h"

#define PAGE_MASK	4095ULL

/* The build-id among the notes @notes[0..n), or -1. */
static ssize_t in_notes(const unsigned char *notes, size_t n, unsigned char *id, size_t max)
{
	size_t off = 0;

	while (off + 12 <= n) {
		uint32_t nsz, dsz, type;

		memcpy(&nsz, notes + off, 4);
		memcpy(&dsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		off += 12;
		if (nsz > n || dsz > n)
			break;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && off + 4 + dsz <= n &&
		    !memcmp(notes + off, "GNU", 4) && dsz <= max) {
			memcpy(id, notes + off + 4, dsz);
			return dsz;
		}
		off += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
	}
	return -1;
}

ssize_t syms_build_id_at(jma_read_fn rd, void *arg, uint64_t start, unsigned char *id, size_t max)
{
	Elf64_Ehdr eh;
	uint64_t bias = 0;
	int have_bias = 0;

	if (rd(arg, start, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > 256)
		return -1;
	/* Addresses are the first PT_LOAD's, relative to where it is mapped. */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			unsigned char notes[1024];
			size_t n;
			ssize_t got;

			if (rd(arg, start + eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph)))
				return -1;
			if (pass == 0 && ph.p_type == PT_LOAD && !have_bias) {
				bias = start - (ph.p_vaddr & ~PAGE_MASK);
				have_bias = 1;
			}
			if (pass == 0 || ph.p_type != PT_NOTE)
				continue;
			n = ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes);
			if (!rd(arg, bias + ph.p_vaddr, notes, n) &&
			    (got = in_notes(notes, n, id, max)) > 0)
				return got;
		}
	return -1;
}
