/* ctltable.h -- the name table's private side, for mallctl.c. */
#ifndef JMA_JEMALLOC_CTLTABLE_H
#define JMA_JEMALLOC_CTLTABLE_H

#include <stdint.h>

/* Does @name have rows for particular versions (so that its type depends on
 * the target's version)? */
int ctl_is_versioned(const char *name);

/* The versions that have @name: [*since, *until), 0 for open ends.  Returns
 * 0 when the table does not know. */
int ctl_span_find(const char *name, uint32_t *since, uint32_t *until);

#endif
