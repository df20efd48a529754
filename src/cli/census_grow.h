/* census_grow.h -- census over time (census_grow.c): snapshots, the difference
 * with a base, pprof output, and a series ranked by growth. */
#ifndef JMA_CLI_CENSUS_GROW_H
#define JMA_CLI_CENSUS_GROW_H

#include <stdint.h>

#include <jemattach.h>

struct cli;

/* What census's options about time asked for. */
struct census_grow {
	const char *save;	/* --save FILE */
	int addresses;		/* --addresses: every block's address in the snapshot */
	const char *base_path;	/* --base FILE */
	const char *born;	/* --born FILE: the blocks born since the base */
	const char *out;	/* -o FILE */
	const char *svg;	/* --svg FILE (a series) */
	int format;		/* enum census_format */
	double every;		/* --every SEC: a series; 0: one census */
	unsigned long count;	/* -n COUNT: censuses in the series; 0: until Ctrl-C */
	struct jma_census *base;	/* loaded by census_grow_prepare */
	struct jma_census_meta bmeta;
};

enum census_format { CF_TEXT, CF_JSON, CF_PPROF, CF_JSONL };

/* The options census_grow_opt takes, for getopt_long (ended by a zero entry
 * of its own: append before census's terminator). */
#define CENSUS_GROW_OPTIONS \
	{ "save", required_argument, NULL, 0x100 }, \
	{ "addresses", no_argument, NULL, 0x101 }, \
	{ "base", required_argument, NULL, 0x102 }, \
	{ "born", required_argument, NULL, 0x103 }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "svg", required_argument, NULL, 0x104 }, \
	{ "format", required_argument, NULL, 0x105 }, \
	{ "every", required_argument, NULL, 0x106 }, \
	{ "count", required_argument, NULL, 'n' }
#define CENSUS_GROW_SHORT "o:n:"

/* One option of those above (-n is census's own short form of --count);
 * 0, or census's usage error (EXIT_USAGE). */
int census_grow_opt(struct cli *c, int opt, const char *arg, struct census_grow *g);
/* After parsing: the combinations checked, the base loaded, and the census
 * flags they need added to *@flags (@by: --by's word). */
int census_grow_prepare(struct cli *c, struct census_grow *g, const char *by, unsigned *flags);
void census_grow_free(struct census_grow *g);

/* A series of censuses every g->every seconds: one line each (or JSON
 * lines), then types, owners or sizes (@by) ranked by growth as prof track
 * ranks sites. */
int census_series(struct cli *c, struct census_grow *g, const struct jma_census_opts *o,
		  const char *by, unsigned top);

/* After one census: --save; then, with --base, the difference, or the census
 * as pprof.  *@done: the output is written (census's own table is not);
 * returns an exit code. */
int census_grow_output(struct cli *c, struct census_grow *g, const struct jma_census *r,
		       unsigned flags, unsigned top, int *done);

#endif
