/* prom.c -- the Prometheus text format's pieces every exposition writes: a label
 * value escaped, a target's labels, a gauge family's HELP and TYPE (metrics.c's
 * /metrics, census.c's census gauges).
 */
#include <stdio.h>

#include "serve/serve.h"

void metrics_label(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', f);
	}
}

void metrics_labels(FILE *f, const struct target *t)
{
	fprintf(f, "{pid=\"%d\",comm=\"", (int)t->pid);
	metrics_label(f, t->comm);
	fputs("\",unit=\"", f);
	metrics_label(f, t->unit);
	fputc('"', f);
}

void metrics_family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}
