/* cmd_analyze.c -- "analyze": a heap profile read offline, symbolized, reported.
 *
 * Exit codes: 0 done; 2 usage error or a profile that cannot be read or
 * parsed (the message names the line); 3 the --pid process cannot be read;
 * 1 anything else (the output could not be written, out of memory).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct analyze {
	const char *profile, *base, *out;
	struct jma_heap_report_opts r;
	struct jma_heap_symopts sym;
	long top;		/* -1: the format's default */
	int list_folds;
};

enum { O_BASE = 256, O_INUSE_SPACE, O_INUSE_OBJECTS, O_ALLOC_SPACE, O_ALLOC_OBJECTS,
       O_LINES, O_FOCUS, O_IGNORE, O_FOLD, O_DEBUGINFO, O_LIST_FOLDS, O_NO_DEFAULT_FOLDS,
       O_DEBUGINFOD, O_NO_DEMANGLE };

static const struct option longopts[] = {
	{ "base", required_argument, NULL, O_BASE },
	{ "top", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "inuse-space", no_argument, NULL, O_INUSE_SPACE },
	{ "inuse-objects", no_argument, NULL, O_INUSE_OBJECTS },
	{ "alloc-space", no_argument, NULL, O_ALLOC_SPACE },
	{ "alloc-objects", no_argument, NULL, O_ALLOC_OBJECTS },
	{ "lines", no_argument, NULL, O_LINES },
	{ "focus", required_argument, NULL, O_FOCUS },
	{ "ignore", required_argument, NULL, O_IGNORE },
	{ "fold", required_argument, NULL, O_FOLD },
	{ "list-folds", no_argument, NULL, O_LIST_FOLDS },
	{ "no-default-folds", no_argument, NULL, O_NO_DEFAULT_FOLDS },
	{ "no-demangle", no_argument, NULL, O_NO_DEMANGLE },
	{ "debuginfod", no_argument, NULL, O_DEBUGINFOD },
	{ "pid", required_argument, NULL, 'P' },
	{ "debuginfo-path", required_argument, NULL, O_DEBUGINFO },
	{ NULL, 0, NULL, 0 },
};

/* Option @opt (its argument in optarg) into @a. */
static int one_option(struct cli *c, int opt, struct analyze *a)
{
	long long v;
	int fmt;

	switch (opt) {
	case O_BASE: a->base = optarg; break;
	case 'n':
		if (cli_parse_int(optarg, 0, INT_MAX, &v))
			return cli_usage(c, "analyze", "invalid --top \"%s\": a count, 0 for all", optarg);
		a->top = v;
		break;
	case 'F':
		if ((fmt = jma_heap_format_from_name(optarg)) < 0)
			return cli_usage(c, "analyze", "unknown --format \"%s\"", optarg);
		a->r.format = (enum jma_heap_format)fmt;
		break;
	/* "-": standard output, as everywhere else. */
	case 'o': a->out = strcmp(optarg, "-") ? optarg : NULL; break;
	case O_INUSE_SPACE:
	case O_INUSE_OBJECTS:
	case O_ALLOC_SPACE:
	case O_ALLOC_OBJECTS: a->r.sample = (enum jma_heap_sample)(opt - O_INUSE_SPACE); break;
	case O_LINES: a->r.lines = a->sym.lines = 1; break;
	case O_FOCUS: a->r.focus = optarg; break;
	case O_IGNORE: a->r.ignore = optarg; break;
	case O_FOLD: a->r.fold = optarg; break;
	case O_LIST_FOLDS: a->list_folds = 1; break;
	case O_NO_DEFAULT_FOLDS: a->r.no_default_folds = 1; break;
	case O_DEBUGINFOD: a->sym.debuginfod = 1; break;
	case O_NO_DEMANGLE: a->r.no_demangle = 1; break;
	case 'P':
		if (cli_parse_int(optarg, 1, INT_MAX, &v))
			return cli_usage(c, "analyze", "invalid --pid \"%s\"", optarg);
		a->sym.pid = (pid_t)v;
		break;
	case O_DEBUGINFO: a->sym.debuginfo_path = optarg; break;
	default: return cli_usage(c, "analyze", "invalid option");
	}
	return EXIT_OK;
}

static int parse_args(struct cli *c, int argc, char **argv, struct analyze *a)
{
	int opt, rc;

	a->top = -1;
	a->r.no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE);
	/* 0, not 1: main() scanned with "+" (stop at the first operand); start over so
	 * that options may follow PROFILE. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "n:F:o:", longopts, NULL)) != -1)
		if ((rc = one_option(c, opt, a)))
			return rc;
	if (a->list_folds && optind == argc)
		return EXIT_OK;
	if (optind + 1 != argc)
		return cli_usage(c, "analyze", optind < argc ? "one PROFILE only" : "missing PROFILE");
	a->profile = argv[optind];
	/* A screenful by default where people read it; everything where tools do. */
	a->r.top = a->top >= 0 ? (unsigned)a->top
				: a->r.format == JMA_HEAP_TEXT || a->r.format == JMA_HEAP_JSON ? 20 : 0;
	if (a->r.format == JMA_HEAP_PPROF && !a->out && isatty(STDOUT_FILENO))
		return cli_usage(c, "analyze", "pprof output is binary: write it with -o FILE");
	return EXIT_OK;
}

/* --list-folds: what is folded away before sites are counted. */
static int list_folds(void)
{
	const struct jma_heap_fold *r;
	const char *fn;
	size_t n;
	int prefix;

	fputs("always:", stdout);
	for (size_t i = 0; (fn = jma_heap_alloc_fn(i, &prefix)) != NULL; i++)
		printf(" %s%s", fn, prefix ? "*" : "");
	fputs(", and every frame in libjemalloc*\n", stdout);
	r = jma_heap_default_folds(&n);
	for (size_t i = 0; i < n; i++)
		printf("%s: %s\n", r[i].program, r[i].re);
	puts("(the rules above: unless --no-default-folds; add your own with --fold RE)");
	return EXIT_OK;
}

static int load(const char *path, jma_heap **h)
{
	char msg[1024];

	if (jma_heap_load(path, h, msg, sizeof(msg)))
		return cli_error(EXIT_USAGE, "%s", msg);
	return EXIT_OK;
}

static int run(struct analyze *a, jma_heap *h, FILE *out)
{
	int err;

	if (a->base) {
		jma_heap *base;
		int rc = load(a->base, &base);

		if (rc)
			return rc;
		err = jma_heap_subtract(h, base);
		jma_heap_free(base);
		if (err)
			return cli_error(EXIT_TARGET, "%s", jma_heap_errmsg(h));
	}
	if (jma_heap_symbolize(h, &a->sym))
		return cli_error(a->sym.pid ? EXIT_ATTACH : EXIT_TARGET, "%s", jma_heap_errmsg(h));
	err = cli_heap_report(h, &a->r, out);
	/* Bad regexes and missing alloc_* counts are the caller's to fix. */
	if (err)
		return cli_error(err == -EINVAL || err == -ENODATA ? EXIT_USAGE : EXIT_TARGET, "%s",
				 jma_heap_errmsg(h));
	cli_hint_unnamed(h, &a->r);
	if (cli_heap_empty(h, &a->r))
		cli_hint_empty(NULL, h, &a->r, NULL);
	return EXIT_OK;
}

int cmd_analyze(struct cli *c, int argc, char **argv)
{
	struct analyze a = { .r.sz = sizeof(a.r), .sym.sz = sizeof(a.sym) };
	jma_heap *h = NULL;
	FILE *out = stdout;
	struct cli_out o;
	int err2;
	int rc;

	rc = parse_args(c, argc, argv, &a);
	if (rc) {
		/* The command table's synopsis is kept short for --help. */
		fputs("       [--inuse-space|--inuse-objects|--alloc-space|--alloc-objects] [--focus RE]\n"
		      "       [--ignore RE] [--fold RE] [--no-default-folds] [--list-folds] [--no-demangle]\n"
		      "       [--debuginfo-path PATH] [--debuginfod]   (jemattach help analyze)\n",
		      stderr);
		return rc;
	}
	if (a.list_folds)
		return list_folds();
	a.sym.log = c->opt.log;
	a.sym.log_arg = c->opt.log_arg;
	rc = load(a.profile, &h);
	if (rc)
		return rc;
	if (a.out) {
		int err = cli_out_open(a.out, false, &o);

		if (err) {
			jma_heap_free(h);
			return cli_error(EXIT_USAGE, "%s: %s", a.out, cli_out_strerror(err));
		}
		out = o.f;
	}
	rc = run(&a, h, out);
	if (a.out && (err2 = cli_out_close(&o, true)) && !rc)
		rc = cli_error(EXIT_TARGET, "%s: %s", a.out, strerror(-err2));
	jma_heap_free(h);
	return rc;
}
