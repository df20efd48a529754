/* cmd_census.c -- "census": every live block, by size class or C++ type, and what leaked. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jemattach/census.h>

#include "cli.h"
#include "esc.h"

struct census_args {
	const char *by;		/* "size", "type", "root" */
	int leaks, json, stats;
	long top;
	const char *blocks;
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
		       alloc == r->live.bytes + r->cached.bytes ? "(exact)" : "(differs: the heap "
		       "changed between the census and the read, or blocks were missed)");
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

static void json_count(const char *name, const struct jma_census_count *k)
{
	printf(", \"%s\": {\"blocks\": %llu, \"bytes\": %llu}", name, (unsigned long long)k->blocks,
	       (unsigned long long)k->bytes);
}

static void json_types(const struct jma_census *r)
{
	printf(", \"types\": [");
	for (size_t i = 0; i < r->ntypes; i++) {
		printf("%s{\"type\": ", i ? ", " : "");
		if (i)
			cli_json_string(stdout, r->types[i].name);
		else
			printf("null");
		printf(", \"blocks\": %llu, \"bytes\": %llu}", (unsigned long long)r->types[i].blocks,
		       (unsigned long long)r->types[i].bytes);
	}
	printf("]");
}

static void json_leaks(const struct jma_census *r)
{
	json_count("anchored", &r->anchored);
	json_count("jemalloc_own", &r->jemalloc_own);
	json_count("leaked", &r->leaked);
	json_count("unreferenced", &r->unreferenced);
	json_count("gone", &r->gone);
	printf(", \"reads\": {\"live\": %s, \"unreferenced_first\": %llu, \"confirmed\": %llu, "
	       "\"confirm_stop_ns\": %llu, \"found_again\": %llu, \"reread_blocks\": %llu, "
	       "\"reread_stopped_bytes\": %llu}",
	       r->stop_ns ? "true" : "false", (unsigned long long)r->rechecked,
	       (unsigned long long)r->confirmed, (unsigned long long)r->confirm_stop_ns,
	       (unsigned long long)r->found_again, (unsigned long long)r->reread_blocks,
	       (unsigned long long)r->reread_stopped);
	printf(", \"examples\": [");
	for (unsigned i = 0; i < r->nexamples; i++) {
		printf("%s{\"addr\": \"0x%llx\", \"size\": %llu, \"head\": \"", i ? ", " : "",
		       (unsigned long long)r->examples[i].addr,
		       (unsigned long long)r->examples[i].size);
		for (unsigned k = 0; k < r->examples[i].nhead; k++)
			printf("%02x", r->examples[i].head[k]);
		printf("\"}");
	}
	printf("]");
}

static void json_roots(const struct jma_census *r, const struct census_args *a)
{
	printf(", \"roots\": [");
	for (size_t i = 0; i < r->nroots && (!a->top || i < (size_t)a->top); i++) {
		const struct jma_census_root *x = &r->roots[i];

		printf("%s{\"%s\": ", i ? ", " : "", x->shared ? "path" : "root");
		cli_json_string(stdout, x->name);
		if (x->shared)
			printf(", \"addr\": \"0x%llx\", \"size\": %llu", (unsigned long long)x->addr,
			       (unsigned long long)x->size);
		printf(", \"blocks\": %llu, \"bytes\": %llu}", (unsigned long long)x->blocks,
		       (unsigned long long)x->bytes);
	}
	printf("], \"holders\": [");
	for (size_t i = 0; i < r->nholders && (!a->top || i < (size_t)a->top); i++) {
		printf("%s{\"addr\": \"0x%llx\", \"size\": %llu, \"blocks\": %llu, \"bytes\": %llu, "
		       "\"path\": ", i ? ", " : "", (unsigned long long)r->holders[i].addr,
		       (unsigned long long)r->holders[i].size,
		       (unsigned long long)r->holders[i].blocks,
		       (unsigned long long)r->holders[i].bytes);
		cli_json_string(stdout, r->holders[i].path);
		printf("}");
	}
	printf("]");
}

static void print_json(const struct jma_census *r, const struct census_args *a, int have_alloc,
		       uint64_t alloc)
{
	printf("{\"version\": ");
	cli_json_string(stdout, r->version);
	printf(", \"layout\": \"%s\", \"map\": \"0x%llx\", \"map_how\": ", r->layout,
	       (unsigned long long)r->map_addr);
	cli_json_string(stdout, r->map_how);
	printf(", \"blocks\": %llu, \"bytes\": %llu", (unsigned long long)r->live.blocks,
	       (unsigned long long)r->live.bytes);
	json_count("thread_cached", &r->cached);
	if (r->explicit_known)
		json_count("explicit_cached", &r->explicit_cached);
	printf(", \"threads\": %u, \"extents\": %llu, \"slabs\": %llu", r->threads,
	       (unsigned long long)r->extents, (unsigned long long)r->slabs);
	if (have_alloc)
		printf(", \"stats_allocated\": %llu", (unsigned long long)alloc);
	printf(", \"stop_ns\": %llu, \"meta_ns\": %llu, \"total_ns\": %llu",
	       (unsigned long long)r->stop_ns, (unsigned long long)r->meta_ns,
	       (unsigned long long)r->total_ns);
	printf(", \"sizes\": [");
	for (size_t i = 0; i < r->nsizes; i++)
		printf("%s{\"size\": %llu, \"blocks\": %llu, \"bytes\": %llu}", i ? ", " : "",
		       (unsigned long long)r->sizes[i].size, (unsigned long long)r->sizes[i].blocks,
		       (unsigned long long)r->sizes[i].bytes);
	printf("]");
	if (r->ntypes)
		json_types(r);
	if (a->leaks)
		json_leaks(r);
	if (r->nroots)
		json_roots(r, a);
	if (r->warn[0]) {
		printf(", \"warning\": ");
		cli_json_string(stdout, r->warn);
	}
	printf("}\n");
}

/* --blocks: one line a block, written as the census hands them over. */
struct blocks_out {
	struct cli_out o;
	int leaks;
};

static int write_block(void *arg, const struct jma_census *r, const struct jma_census_block *b)
{
	struct blocks_out *w = arg;
	const char *t = type_name(r, b->type);
	static const char *const cls[] = { "", " [leaked]", " [unreferenced]", " [jemalloc]" };

	return fprintf(w->o.f, "0x%llx %llu%s%s%s\n", (unsigned long long)b->addr,
		       (unsigned long long)b->size, t[0] ? " " : "", t[0] ? cli_esc(t) : "",
		       w->leaks && b->cls < 4 ? cls[b->cls] : "") < 0;
}

static const struct option census_opts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "leaks", no_argument, NULL, 'l' },
	{ "top", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "blocks", required_argument, NULL, 'B' },
	{ "no-stats", no_argument, NULL, 'S' },
	{ 0 },
};

static int parse_census(struct cli *c, int argc, char **argv, struct census_args *a)
{
	long long top;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "b:ln:jB:S", census_opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (strcmp(optarg, "size") && strcmp(optarg, "type") && strcmp(optarg, "root"))
				return cli_usage(c, "census", "invalid --by \"%s\": size, type or root",
						 optarg);
			a->by = optarg;
			break;
		case 'l': a->leaks = 1; break;
		case 'n':
			if ((rc = cli_arg_int(c, "census", "--top", optarg, 1, 1000000, &top)))
				return rc;
			a->top = top;
			break;
		case 'j': a->json = 1; break;
		case 'B': a->blocks = optarg; break;
		case 'S': a->stats = 0; break;
		default: return cli_usage(c, "census", "invalid option");
		}
	}
	if (optind != argc)
		return cli_usage(c, "census", "unexpected argument \"%s\"", argv[optind]);
	return EXIT_OK;
}

int cmd_census(struct cli *c, int argc, char **argv)
{
	struct census_args a = { .by = "size", .stats = 1 };
	struct jma_census_opts o = { 0 };
	struct blocks_out bo = { .leaks = 0 };
	struct jma_census *r;
	struct jma_value v;
	uint64_t alloc = 0;
	int have_alloc = 0, err, rc = parse_census(c, argc, argv, &a);

	if (rc)
		return rc;
	o.flags = (a.blocks ? JMA_CENSUS_LIST : 0) | (a.leaks ? JMA_CENSUS_LEAKS : 0) |
		  (!strcmp(a.by, "type") || a.blocks || a.leaks ? JMA_CENSUS_TYPES : 0) |
		  (!strcmp(a.by, "root") ? JMA_CENSUS_ROOTS : 0);
	if (isatty(2))
		o.progress = progress;
	if (a.blocks) {
		if ((err = cli_out_open(a.blocks, true, &bo.o)))
			return cli_error(EXIT_USAGE, "census: --blocks %s: %s", cli_esc(a.blocks),
					 cli_out_strerror(err));
		bo.leaks = a.leaks;
		o.block = write_block;
		o.block_arg = &bo;
	}
	if (jma_census_run(c->s, &o, &r)) {
		if (a.blocks)
			cli_out_close(&bo.o, false);
		return cli_fail_session(c);
	}
	if (a.blocks && (err = cli_out_close(&bo.o, true)))
		rc = cli_error(EXIT_TARGET, "census: writing %s: %s", cli_esc(a.blocks), cli_out_strerror(err));
	/* After the threads went on: one short call (emulated on a core). */
	if (a.stats) {
		if (jma_get(c->s, "stats.allocated", &v) == 0) {
			alloc = v.z;
			have_alloc = 1;
		} else {
			char *why = cli_errmsg(c->s);

			fprintf(stderr, "%s: census: stats.allocated not read: %s\n", cli_prog,
				why ? why : jma_errmsg(c->s));
			free(why);
		}
	}
	if (a.json)
		print_json(r, &a, have_alloc, alloc);
	else
		print_text(r, &a, have_alloc, alloc);
	jma_census_free(r);
	return rc;
}
