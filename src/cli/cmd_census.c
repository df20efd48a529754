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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Types, and blocks without one by their usable size, in one table by bytes. */
static void print_types(const struct jma_census *r, const struct census_args *a, uint64_t whole)
{
	uint64_t *sz = malloc((r->nlist ? r->nlist : 1) * sizeof(*sz));
	struct type_row *row = malloc((r->ntypes + r->nlist + 1) * sizeof(*row));
	size_t nsz = 0, n = 0;

	if (!sz || !row) {
		free(sz);
		free(row);
		return;
	}
	for (size_t i = 1; i < r->ntypes; i++)
		row[n++] = (struct type_row){ r->types[i].name, 0, r->types[i].blocks, r->types[i].bytes };
	for (size_t i = 0; i < r->nlist; i++)
		if (!r->list[i].type)
			sz[nsz++] = r->list[i].size;
	qsort(sz, nsz, sizeof(*sz), cmp_u64);
	for (size_t i = 0; i < nsz; i++) {
		if (!i || sz[i] != sz[i - 1])
			row[n++] = (struct type_row){ NULL, sz[i], 0, 0 };
		row[n - 1].blocks++;
		row[n - 1].bytes += sz[i];
	}
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
	free(sz);
	free(row);
}

static void text_roots(const struct jma_census *r, const struct census_args *a, uint64_t whole)
{
	printf("\n%12s %14s %7s  %s\n", "BLOCKS", "RETAINED", "SHARE", "ROOT");
	for (size_t i = 0; i < r->nroots && (!a->top || i < (size_t)a->top); i++)
		printf("%12llu %14llu %6.1f%%  %s\n", (unsigned long long)r->roots[i].blocks,
		       (unsigned long long)r->roots[i].bytes, share(r->roots[i].bytes, whole),
		       cli_esc(r->roots[i].name));
	if (r->nholders)
		printf("\nthe largest blocks at the top of the dominator tree (as MAT lists them):\n"
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
	printf("leaked: %llu blocks, %llu bytes (%.1f%% of live)\n", (unsigned long long)r->leaked.blocks,
	       (unsigned long long)r->leaked.bytes, share(r->leaked.bytes, r->live.bytes));
	printf("unreferenced: %llu blocks, %llu bytes\n", (unsigned long long)r->unreferenced.blocks,
	       (unsigned long long)r->unreferenced.bytes);
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
	json_count("leaked", &r->leaked);
	json_count("unreferenced", &r->unreferenced);
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
		printf("%s{\"root\": ", i ? ", " : "");
		cli_json_string(stdout, r->roots[i].name);
		printf(", \"blocks\": %llu, \"bytes\": %llu}", (unsigned long long)r->roots[i].blocks,
		       (unsigned long long)r->roots[i].bytes);
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
	printf(", \"threads\": %u, \"thread_caches_read\": %s, \"extents\": %llu, \"slabs\": %llu",
	       r->threads, r->threads ? "true" : "false",
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

static int write_blocks(const struct jma_census *r, const char *path, int leaks)
{
	struct cli_out o;
	int err = cli_out_open(path, true, &o);

	if (err)
		return cli_error(EXIT_USAGE, "census: --blocks %s: %s", cli_esc(path), cli_out_strerror(err));
	for (size_t i = 0; i < r->nlist; i++) {
		const char *t = type_name(r, r->list[i].type);
		fprintf(o.f, "0x%llx %llu%s%s%s\n", (unsigned long long)r->list[i].addr,
			(unsigned long long)r->list[i].size, t[0] ? " " : "", t[0] ? cli_esc(t) : "",
			!leaks || r->list[i].cls == JMA_CENSUS_ANCHORED ? "" :
			r->list[i].cls == JMA_CENSUS_LEAKED ? " [leaked]" : " [unreferenced]");
	}
	err = cli_out_close(&o, true);
	if (err)
		return cli_error(EXIT_TARGET, "census: writing %s: %s", cli_esc(path), cli_out_strerror(err));
	return EXIT_OK;
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
	struct jma_census *r;
	struct jma_value v;
	uint64_t alloc = 0;
	int have_alloc = 0, rc = parse_census(c, argc, argv, &a);

	if (rc)
		return rc;
	o.flags = (a.blocks ? JMA_CENSUS_LIST : 0) | (a.leaks ? JMA_CENSUS_LEAKS : 0) |
		  (!strcmp(a.by, "type") || a.blocks || a.leaks ? JMA_CENSUS_TYPES : 0) |
		  (!strcmp(a.by, "root") ? JMA_CENSUS_ROOTS : 0);
	if (isatty(2))
		o.progress = progress;
	if (jma_census_run(c->s, &o, &r))
		return cli_fail_session(c);
	/* After the threads went on: one short call (emulated on a core). */
	if (a.stats) {
		if (jma_get(c->s, "stats.allocated", &v) == 0) {
			alloc = v.z;
			have_alloc = 1;
		} else {
			fprintf(stderr, "%s: census: stats.allocated not read: %s\n", cli_prog,
				jma_errmsg(c->s));
		}
	}
	if (a.blocks)
		rc = write_blocks(r, a.blocks, a.leaks);
	if (a.json)
		print_json(r, &a, have_alloc, alloc);
	else
		print_text(r, &a, have_alloc, alloc);
	jma_census_free(r);
	return rc;
}
