/* fdes.h -- where each function of a module starts, from its frame descriptions.
 *
 * Every function has an FDE in .eh_frame, stripped or not, and .eh_frame_hdr
 * lists their starts sorted: enough to name code that has no symbol by its
 * function ("fn_0xSTART"), never by a neighbour's name.
 */
#ifndef JMA_SYMBOLS_FDES_H
#define JMA_SYMBOLS_FDES_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

struct jma_fdes {
	Dwarf_CFI *cfi;		/* NULL: the module has no .eh_frame */
	Dwarf_Addr bias;	/* run-time address = file address + bias */
	uint64_t *start;	/* the FDEs' starts (file addresses), sorted */
	size_t n;
};

/* Load @dm's table into @f (empty when it has none).  0 or -ENOMEM. */
int syms_fdes_load(struct jma_fdes *f, Dwfl_Module *dm);
/* The start (file address) of the function whose FDE covers run-time
 * address @addr: 0, or -1 when no FDE does. */
int syms_fdes_start(const struct jma_fdes *f, uint64_t addr, uint64_t *start);
void syms_fdes_free(struct jma_fdes *f);

#endif
