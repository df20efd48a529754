/* cmd_census.c -- "census": every live block, by size class or C++ type, and what leaked. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jemattach/census.h>

#include "cli.h"
#include "census_grow.h"
#include "esc.h"

struct census_args {
	const char *by;		/* "size", "type", "root" */
	int leaks, json, stats;
	long top;
	const char *blocks;
	struct census_grow g;	/* --save, --base, --every... (census_grow.c) */
};

static void progress(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	(void)arg;
	fprintf(stderr, "\rcensus: %s %llu/%llu%s", phase, (unsigned long long)done,
		(unsigned long long)total, done >= total ? "\r\033[K" : "");
}

static int cmp_size_bytes(const void *a, const void *b)
{
	const struct jma_census_size *x = a, *y = b;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : (x->size > y->size) - (x->size < y->size);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *type_name(const struct jma_census *r, uint32_t t)
{
	return t && t < r->ntypes ? r->types[t].name : "";
}

struct type_row {
	const char *name;	/* NULL: untyped blocks of one usable size */
	uint64_t size, blocks, bytes;
};

static int cmp_row(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : (x->size > y->size) - (x->size < y->size);
}

/* Types, and blocks without one by their usable size, in one table by bytes. */
static void print_types(const struct jma_census *r, const struct census_args *a, uint64_t whole)
{
	struct type_row *row = malloc((r->ntypes + r->nuntyped + 1) * sizeof(*row));
	size_t n = 0;

	if (!row)
		return;
	for (size_t i = 1; i < r->ntypes; i++)
		if (r->types[i].blocks)
			row[n++] = (struct type_row){ r->types[i].name, 0, r->types[i].blocks, r->types[i].bytes };
	for (size_t i = 0; i < r->nuntyped; i++)
		row[n++] = (struct type_row){ NULL, r->untyped[i].size, r->untyped[i].blocks,
					      r->untyped[i].bytes };
	qsort(row, n, sizeof(*row), cmp_row);
	printf("\n%12s %14s %7s  %s\n", "BLOCKS", "BYTES", "SHARE", "TYPE");
	for (size_t i = 0; i < n && (!a->top || i < (size_t)a->top); i++) {
		printf("%12llu %14llu %6.1f%%  ", (unsigned long long)row[i].blocks,
		       (unsigned long long)row[i].bytes, share(row[i].bytes, whole));
		if (row[i].name)
			printf("%s\n", cli_esc(row[i].name));
		else
			printf("(no vtable) %llu bytes\n", (unsigned long long)row[i].size);
	}
	free(row);
}

static void text_roots(const struct jma_census *r, const struct census_args *a, uint64_t whole)
{
	printf("\nwhat holds the heap (the top of the dominator tree: each root, and each block "
	       "several roots reach):\n%12s %14s %7s  %s\n", "BLOCKS", "RETAINED", "SHARE", "HELD BY");
	for (size_t i = 0; i < r->nroots && (!a->top || i < (size_t)a->top); i++) {
		const struct jma_census_root *x = &r->roots[i];
		const char *t = type_name(r, x->type);

		printf("%12llu %14llu %6.1f%%  ", (unsigned long long)x->blocks,
		       (unsigned long long)x->bytes, share(x->bytes, whole));
		if (x->shared)
			printf("0x%llx %llu%s%s, reached from several roots, as\n%37s%s\n",
			       (unsigned long long)x->addr, (unsigned long long)x->size, t[0] ? " " : "",
			       t[0] ? cli_esc(t) : "", "", cli_esc(x->name));
		else
			printf("%s\n", cli_esc(x->name));
	}
	if (r->nholders)
		printf("\nthe blocks at the top of the tree that retain most, and how each is reached:\n"
		       "%12s %14s %7s  %s\n", "BLOCKS", "RETAINED", "SHARE", "BLOCK, REACHED AS");
	for (size_t i = 0; i < r->nholders && (!a->top || i < (size_t)a->top); i++) {
		const struct jma_census_holder *h = &r->holders[i];
		const char *t = type_name(r, h->type);

		printf("%12llu %14llu %6.1f%%  0x%llx %llu%s%s\n%37s%s\n",
		       (unsigned long long)h->blocks, (unsigned long long)h->bytes,
		       share(h->bytes, whole), (unsigned long long)h->addr,
		       (unsigned long long)h->size, t[0] ? " " : "", t[0] ? cli_esc(t) : "", "",
		       cli_esc(h->path));
	}
	if (r->dominators_unsettled)
		printf("note: the dominators had not settled after the rounds allowed: retained sizes "
		       "are approximate\n");
}

static void text_sizes(const struct jma_census *r, const struct census_args *a, uint64_t whole)
{
	struct jma_census_size *s = malloc((r->nsizes ? r->nsizes : 1) * sizeof(*s));
	size_t k = r->nsizes;

	if (s) {
		memcpy(s, r->sizes, r->nsizes * sizeof(*s));
		if (a->top) {
			qsort(s, k, sizeof(*s), cmp_size_bytes);
			if (k > (size_t)a->top)
				k = (size_t)a->top;
		}
		printf("\n%12s %12s %14s %7s\n", "SIZE", "BLOCKS", "BYTES", "SHARE");
		for (size_t i = 0; i < k; i++)
			printf("%12llu %12llu %14llu %6.1f%%\n", (unsigned long long)s[i].size,
			       (unsigned long long)s[i].blocks, (unsigned long long)s[i].bytes,
			       share(s[i].bytes, whole));
		free(s);
	}
}

static void text_leaks(const struct jma_census *r)
{
	printf("\nanchored: %llu blocks, %llu bytes\n", (unsigned long long)r->anchored.blocks,
	       (unsigned long long)r->anchored.bytes);
	printf("jemalloc's own: %llu blocks, %llu bytes (thread-cache stacks and other arrays "
	       "only its data reaches)\n", (unsigned long long)r->jemalloc_own.blocks,
	       (unsigned long long)r->jemalloc_own.bytes);
	printf("leaked: %llu blocks, %llu bytes (%.1f%% of live)\n", (unsigned long long)r->leaked.blocks,
	       (unsigned long long)r->leaked.bytes, share(r->leaked.bytes, r->live.bytes));
	printf("unreferenced: %llu blocks, %llu bytes\n", (unsigned long long)r->unreferenced.blocks,
	       (unsigned long long)r->unreferenced.bytes);
	if (r->stop_ns && r->rechecked)
		printf("(contents read while the program ran: %llu blocks unreferenced after a first "
		       "read, checked again with every thread stopped for %.1f ms%s: %llu freed since; "
		       "%llu in use: written to, or pointed to when the roots and the %llu blocks there "
		       "were then were read again, %s)\n", (unsigned long long)r->rechecked,
		       (double)r->confirm_stop_ns / 1e6,
		       r->confirmed < r->rechecked ? " (not all of them: the rest unconfirmed)" : "",
		       (unsigned long long)r->gone.blocks, (unsigned long long)r->found_again,
		       (unsigned long long)r->reread_blocks,
		       r->reread_stopped ? "as copied in that stop" : "live");
	else if (r->stop_ns)
		printf("(contents read while the program ran)\n");
	else
		printf("(contents read from the core: as they were when it was dumped)\n");
	for (unsigned i = 0; i < r->nexamples; i++) {
		const struct jma_census_example *x = &r->examples[i];
		const char *t = type_name(r, x->type);

		printf("  0x%llx %llu%s%s:", (unsigned long long)x->addr, (unsigned long long)x->size,
		       t[0] ? " " : "", t[0] ? cli_esc(t) : "");
		for (unsigned k = 0; k < x->nhead; k++)
			printf(" %02x", x->head[k]);
		printf("\n");
	}
}

/* What the sum says.  "exact" only when the thread caches were read (none
 * is when jemalloc's thread data was not found: their blocks then count
 * as live, and the sum matches all the same); a core does not change. */
static const char *verdict(const struct jma_census *r, uint64_t alloc)
{
	if (!r->threads)
		return "(not checked: no thread's cache was read, so the blocks they hold count as live)";
	if (alloc == r->live.bytes + r->cached.bytes)
		return "(exact)";
	return r->stop_ns ? "(differs: the heap changed between the census and the read, or blocks "
			    "were missed)" : "(differs: blocks were missed)";
}

static void print_text(const struct jma_census *r, const struct census_args *a, int have_alloc,
		       uint64_t alloc)
{
	char b1[32], b2[32];
	uint64_t whole = have_alloc ? alloc : r->live.bytes;

	printf("jemalloc %s (layout %s); map at 0x%llx, %s\n", cli_esc(r->version), r->layout,
	       (unsigned long long)r->map_addr, r->map_how);
	printf("live: %llu blocks, %s (%llu bytes) in %llu extents (%llu slabs)\n",
	       (unsigned long long)r->live.blocks, cli_bytes(r->live.bytes, b1, sizeof(b1)),
	       (unsigned long long)r->live.bytes, (unsigned long long)r->extents,
	       (unsigned long long)r->slabs);
	printf("thread caches: %llu blocks, %s (%u threads%s)\n", (unsigned long long)r->cached.blocks,
	       cli_bytes(r->cached.bytes, b2, sizeof(b2)), r->threads,
	       r->explicit_known ? "" : "; tcache.create caches unknown without symbols");
	if (have_alloc)
		printf("stats.allocated: %llu = live + thread-cached %s\n", (unsigned long long)alloc,
		       verdict(r, alloc));
	printf("threads stopped %.1f ms (metadata read %.1f ms); total %.1f ms\n",
	       (double)r->stop_ns / 1e6, (double)r->meta_ns / 1e6, (double)r->total_ns / 1e6);
	if (!strcmp(a->by, "root")) {
		text_roots(r, a, whole);
	} else if (!strcmp(a->by, "type")) {
		print_types(r, a, whole);
	} else {
		text_sizes(r, a, whole);
	}
	if (a->leaks)
		text_leaks(r);
	if (r->warn[0])
		printf("note: %s\n", r->warn);
}

/* --blocks: one line a block, in address order, into @o (opened before the
 * census, so that a bad path costs the target nothing); closed. */
static int write_blocks(const struct jma_census *r, struct cli_out *o, const char *path, int leaks)
{
	static const char *const cls[] = { "", " [leaked]", " [unreferenced]", " [jemalloc]" };
	struct jma_census_block b;
	int err = 0;

	for (struct jma_census_cursor k = { 0 }; !err && jma_census_next(r, &k, &b);) {
		const char *t = type_name(r, b.type);

		if (fprintf(o->f, "0x%llx %llu%s%s%s\n", (unsigned long long)b.addr,
			    (unsigned long long)b.size, t[0] ? " " : "", t[0] ? cli_esc(t) : "",
			    leaks && b.cls < 4 ? cls[b.cls] : "") < 0)
			err = -EIO;
	}
	if ((err = cli_out_close(o, !err) ?: err))
		return cli_error(EXIT_TARGET, "census: writing %s: %s", cli_esc(path), cli_out_strerror(err));
	return EXIT_OK;
}

/* --json: the library's document (the one serve's /debug/census gives). */
static int print_json(const struct jma_census *r, const struct census_args *a, int have_alloc,
		      uint64_t alloc)
{
	struct jma_census_report_opts ro = { .format = JMA_CENSUS_JSON, .top = (unsigned)a->top,
					     .have_allocated = have_alloc, .allocated = alloc,
					     .leaks = a->leaks };
	int err = jma_census_report(r, NULL, &ro, cli_write_file, stdout);

	if (err || fflush(stdout) || ferror(stdout))
		return cli_error(EXIT_TARGET, "census: writing the output: %s", strerror(err ? -err : EIO));
	return EXIT_OK;
}

static const struct option census_opts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "leaks", no_argument, NULL, 'l' },
	{ "top", required_argument, NULL, 't' },
	{ "json", no_argument, NULL, 'j' },
	{ "blocks", required_argument, NULL, 'B' },
	{ "no-stats", no_argument, NULL, 'S' },
	CENSUS_GROW_OPTIONS,
	{ 0 },
};

static int parse_census(struct cli *c, int argc, char **argv, struct census_args *a)
{
	long long top;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "b:ljB:S" CENSUS_GROW_SHORT, census_opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (strcmp(optarg, "size") && strcmp(optarg, "type") && strcmp(optarg, "root"))
				return cli_usage(c, "census", "invalid --by \"%s\": size, type or root",
						 optarg);
			a->by = optarg;
			break;
		case 'l': a->leaks = 1; break;
		case 't':
			if ((rc = cli_arg_int(c, "census", "--top", optarg, 1, 1000000, &top)))
				return rc;
			a->top = top;
			break;
		case 'j': a->json = 1; break;
		case 'B': a->blocks = optarg; break;
		case 'S': a->stats = 0; break;
		case '?': return cli_usage(c, "census", "invalid option");
		default:
			if ((rc = census_grow_opt(c, opt, optarg, &a->g)))
				return rc;
			a->json |= a->g.format == CF_JSON;
			break;
		}
	}
	if (optind != argc)
		return cli_usage(c, "census", "unexpected argument \"%s\"", argv[optind]);
	return EXIT_OK;
}

/* stats.allocated, after the threads went on: one short call (emulated on
 * a core); 1 when read into *@alloc, 0 (said) when not. */
static int read_allocated(struct cli *c, uint64_t *alloc)
{
	struct jma_value v;
	char *why;

	if (jma_get(c->s, "stats.allocated", &v) == 0) {
		*alloc = v.z;
		return 1;
	}
	why = cli_errmsg(c->s);
	fprintf(stderr, "%s: census: stats.allocated not read: %s\n", cli_prog,
		why ? why : jma_errmsg(c->s));
	free(why);
	return 0;
}

int cmd_census(struct cli *c, int argc, char **argv)
{
	struct census_args a = { .by = "size", .stats = 1 };
	struct jma_census_opts o = { 0 };
	struct jma_census *r;
	struct cli_out bo;
	uint64_t alloc = 0;
	int have_alloc = 0, done = 0, err, rc = parse_census(c, argc, argv, &a);

	if (rc)
		return rc;
	o.flags = (a.blocks ? JMA_CENSUS_LIST : 0) | (a.leaks ? JMA_CENSUS_LEAKS : 0) |
		  (!strcmp(a.by, "type") || a.blocks || a.leaks ? JMA_CENSUS_TYPES : 0) |
		  (!strcmp(a.by, "root") ? JMA_CENSUS_ROOTS : 0);
	if (a.json && a.g.format != CF_TEXT && a.g.format != CF_JSON)
		return cli_usage(c, "census", "--json is --format json");
	if (a.json)
		a.g.format = CF_JSON;
	if (a.g.every && a.blocks)
		return cli_usage(c, "census", "--blocks lists one census's blocks, not a series'");
	if ((rc = census_grow_prepare(c, &a.g, a.by, &o.flags)))
		return rc;
	if (isatty(2) && !a.g.every)
		o.progress = progress;
	if (a.g.every)
		return census_series(c, &a.g, &o, a.by, (unsigned)a.top);
	if (a.blocks && (err = cli_out_open(a.blocks, true, &bo))) {
		census_grow_free(&a.g);
		return cli_error(EXIT_USAGE, "census: --blocks %s: %s", cli_esc(a.blocks),
				 cli_out_strerror(err));
	}
	if (jma_census_run(c->s, &o, &r)) {
		if (a.blocks)
			cli_out_close(&bo, false);
		census_grow_free(&a.g);
		return cli_fail_session(c);
	}
	/* For the census's own table only. */
	if (a.stats && !a.g.base && a.g.format != CF_PPROF)
		have_alloc = read_allocated(c, &alloc);
	if (a.blocks)
		rc = write_blocks(r, &bo, a.blocks, a.leaks);
	if (!rc)
		rc = census_grow_output(c, &a.g, r, o.flags, (unsigned)a.top, &done);
	if (!rc && !done && a.json)
		rc = print_json(r, &a, have_alloc, alloc);
	else if (!rc && !done)
		print_text(r, &a, have_alloc, alloc);
	census_grow_free(&a.g);
	jma_census_free(r);
	return rc;
}
