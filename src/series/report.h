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

/* A line chart of byte values over points from..to (svg.c): line @l's value
 * at point @i comes from value() (nonzero: no value there, the pen lifts). */
struct chart_line {
	const char *label;	/* legend text */
	const char *color;
	int width;
};
struct chart {
	const char *title, *subtitle, *xlabel;
	unsigned from, to;
	unsigned xstep;		/* the x axis labels point i as i * xstep (0: as i) */
	const struct chart_line *lines;
	size_t nlines;
	uint64_t top;		/* greatest value of any line */
	int (*value)(const void *arg, size_t l, unsigned i, uint64_t *v);
	const void *arg;
};
int chart_svg(FILE *f, const struct chart *c);
/* The i-th of the chart's colors (cycling). */
const char *chart_color(size_t i);

#endif
