/* modsym.h -- the functions of one module, built once, searched per address
 * (see modsym.c). */
#ifndef JMA_HEAP_MODSYM_H
#define JMA_HEAP_MODSYM_H

#include <elfutils/libdwfl.h>

#include "heap/heap.h"

struct modsym;

/* The tables of @dm (NULL with errno set when out of memory); valid while
 * its Dwfl lives.  Without @use_dwarf only ELF symbols and FDEs name
 * addresses: no inlined frames, no lines. */
struct modsym *modsym_new(jma_heap *h, Dwfl_Module *dm, int use_dwarf);
void modsym_free(struct modsym *t);
/* Name @l (an address of module @m): its frames appended to h->frames,
 * l->symbol, l->named and l->alloc set.  0 or -ENOMEM. */
int modsym_name(jma_heap *h, struct modsym *t, const struct heap_module *m, struct heap_loc *l);

#endif
