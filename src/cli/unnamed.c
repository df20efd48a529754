/* unnamed.c -- after a heap report: how much of it sits in code without a
 * name, where, and how to get the names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* On stderr: how much sits at sites without a symbol, in which modules, and
 * how to get their names.  Offline: nothing is fetched. */
void cli_hint_unnamed(jma_heap *h, const struct jma_heap_report_opts *o)
{
	struct jma_heap_report_opts r = *o;
	struct jma_heap_site *s;
	size_t n, shown = 0;
	double total, unnamed = 0;
	int objs = r.sample == JMA_HEAP_INUSE_OBJECTS || r.sample == JMA_HEAP_ALLOC_OBJECTS;

	r.top = 0;
	r.lines = 0;
	if (jma_heap_sites(h, &r, &s, &n, &total))
		return;
	for (size_t i = 0; i < n; i++)
		if (s[i].named != JMA_HEAP_NAMED_SYMBOL)
			unnamed += s[i].flat;
	/* Under 1% is no reason to go looking for debug symbols. */
	if (total > 0 && unnamed * 100 >= total) {
		fprintf(stderr, "jemattach: %.0f%% of %s (%.1f %s) sit in functions without a name:\n",
			unnamed * 100 / total, objs ? "the objects" : "the bytes",
			objs ? unnamed : unnamed / 1048576, objs ? "objects" : "MB");
		/* One line per module, in order of first appearance (largest first). */
		for (size_t i = 0; i < n && shown < 5; i++) {
			double m = 0;
			int seen = 0;

			if (s[i].named == JMA_HEAP_NAMED_SYMBOL || !s[i].module)
				continue;
			for (size_t k = 0; k < i && !seen; k++)
				seen = s[k].named != JMA_HEAP_NAMED_SYMBOL && s[k].module &&
				       !strcmp(s[k].module, s[i].module);
			if (seen)
				continue;
			for (size_t k = i; k < n; k++)
				if (s[k].named != JMA_HEAP_NAMED_SYMBOL && s[k].module &&
				    !strcmp(s[k].module, s[i].module))
					m += s[k].flat;
			if (m * 1000 < total)
				continue;
			fprintf(stderr, "  %.1f%% in %s (build-id %s)\n", m * 100 / total,
				cli_esc(s[i].module), cli_esc(s[i].build_id ? s[i].build_id : "unknown"));
			shown++;
		}
		fputs("  fn_0xSTART is a function known by its start address only (from .eh_frame).\n"
		      "  For names, install the module's debug symbols (Debian/Ubuntu: the -dbgsym\n"
		      "  package of the one `dpkg -S FILE` names; they land under\n"
		      "  /usr/lib/debug/.build-id/), or fetch them by build-id where the network may\n"
		      "  be used (analyze --debuginfod, or `debuginfod-find debuginfo BUILD-ID` and\n"
		      "  analyze --debuginfo-path DIR).\n",
		      stderr);
	}
	free(s);
}

