/* report.h -- helpers shared by the series reports (report.c) and the chart (svg.c). */
#ifndef JMA_REPORT_PRIV_H
#define JMA_REPORT_PRIV_H

#include <jemattach.h>

/* Check [*from, *to] against @ser: clamps *to to the last sample; -ERANGE
 * when nothing is left. */
int report_range(const struct jma_series *ser, unsigned *from, unsigned *to);
/* Every arena seen in [from, to]: JMA_ARENA_ALL first, then ascending.
 * *out is malloc'ed. */
int report_arenas(const struct jma_series *ser, unsigned from, unsigned to, int **out, size_t *n);
/* The greatest value of @m for @arena in [from, to] and its first iteration;
 * -ENOENT when the arena is in none of them. */
int report_peak(const struct jma_series *ser, int arena, enum jma_metric m, unsigned from,
		unsigned to, uint64_t *peak, unsigned *at);

#endif
