/* cmd_report.c -- "report abs|del|eff SERIES": the seed's per-arena analyses of a recorded
 * series, and its chart; "report sites": the allocation sites of a saved track ranked. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What the seed's tools looked at when no --metric is given. */
static const enum jma_metric seed_metrics[] = { JMA_M_ALLOCATED, JMA_M_ACTIVE, JMA_M_MAPPED };

struct report {
	const char *kind, *path, *svg;
	uint64_t threshold;
	int auto_threshold;	/* no -t: 5% of the process's peak of each metric */
	unsigned from, to;
	int metric;		/* enum jma_metric, or -1: the seed's three */
	struct jma_series ser;
};

static void arena_name(int arena, char *buf, size_t len)
{
	if (arena == JMA_ARENA_ALL)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "%d", arena);
}

/* Without -t, the threshold follows the data: 5% of the whole process's peak
 * of @m in the range, so that a daemon of 50 MiB shows its arenas as one of
 * 50 GiB does.  0 when the process's row is missing (everything shown). */
static int data_threshold(struct report *r, enum jma_metric m)
{
	struct jma_abs_row *rows;
	size_t n;
	int err;

	if (!r->auto_threshold)
		return 0;
	err = jma_report_abs(&r->ser, m, 0, r->from, r->to, &rows, &n);
	if (err)
		return err;
	r->threshold = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].arena == JMA_ARENA_ALL)
			r->threshold = rows[i].value / 20;
	free(rows);
	return 0;
}

/* "abs: allocated, the greatest per arena >= 200.0 MiB, iterations 0-9 of 10" */
static void heading(const struct report *r, const char *metric, const char *what)
{
	char thr[32];

	jma_format_size((int64_t)r->threshold, thr, sizeof(thr));
	printf("%s: %s, %s >= %s%s, iterations %u-%u of %zu\n", r->kind, metric, what, thr,
	       r->auto_threshold ? " (5% of the process's peak; -t SIZE to choose)" : "", r->from,
	       r->to < r->ser.n ? r->to : (unsigned)r->ser.n - 1, r->ser.n);
}

/* Say what the threshold left out: @shown of @all rows. */
static void hidden(size_t shown, size_t all, const char *what)
{
	if (all > shown)
		printf("(%zu %s below the threshold not shown; -t 0 shows all)\n", all - shown, what);
}

static int print_abs(struct report *r, enum jma_metric m)
{
	struct jma_abs_row *rows;
	size_t n, all = 0;
	int err = data_threshold(r, m);

	if (!err)
		err = jma_report_abs(&r->ser, m, r->threshold, r->from, r->to, &rows, &n);
	if (err)
		return err;
	heading(r, jma_metric_name(m), "the greatest per arena");
	printf("%-6s %12s %10s\n", "arena", "peak", "iteration");
	for (size_t i = 0; i < n; i++) {
		char a[16], v[32];

		arena_name(rows[i].arena, a, sizeof(a));
		jma_format_size((int64_t)rows[i].value, v, sizeof(v));
		printf("%-6s %12s %10u\n", a, v, rows[i].iter);
	}
	if (!n)
		printf("(no arena reaches the threshold)\n");
	free(rows);
	if (!jma_report_abs(&r->ser, m, 0, r->from, r->to, &rows, &all)) {
		free(rows);
		hidden(n, all, "arenas");
	}
	return 0;
}

static int print_del(struct report *r, enum jma_metric m)
{
	struct jma_del_row *rows;
	size_t n, all = 0;
	int err = data_threshold(r, m);

	if (!err)
		err = jma_report_del(&r->ser, m, r->threshold, r->from, r->to, &rows, &n);
	if (err)
		return err;
	heading(r, jma_metric_name(m), "changes between consecutive iterations");
	printf("%-6s %12s %12s %12s %13s\n", "arena", "iterations", "before", "after", "change");
	for (size_t i = 0; i < n; i++) {
		char a[16], it[32], b[32], af[32], d[32];

		arena_name(rows[i].arena, a, sizeof(a));
		snprintf(it, sizeof(it), "%u -> %u", rows[i].iter - 1, rows[i].iter);
		jma_format_size((int64_t)rows[i].before, b, sizeof(b));
		jma_format_size((int64_t)rows[i].after, af, sizeof(af));
		d[0] = '+';
		jma_format_size(rows[i].change, d + (rows[i].change > 0), sizeof(d) - 1);
		printf("%-6s %12s %12s %12s %13s\n", a, it, b, af, d);
	}
	if (!n)
		printf("(no change reaches the threshold)\n");
	free(rows);
	/* Changes of 0 are no rows: -t 1 counts every real change. */
	if (!jma_report_del(&r->ser, m, 1, r->from, r->to, &rows, &all)) {
		free(rows);
		hidden(n, all, "changes");
	}
	return 0;
}

static int print_eff(struct report *r)
{
	struct jma_eff e, every;
	int err = data_threshold(r, JMA_M_MAPPED);

	if (!err)
		err = jma_report_eff(&r->ser, r->threshold, r->from, r->to, &e);
	if (err)
		return err;
	r->to = e.from + (unsigned)e.niters - 1;
	heading(r, "active / mapped", "arenas whose mapped peaks");
	printf("%-9s", "iteration");
	for (size_t a = 0; a < e.narenas; a++) {
		char name[16];
		arena_name(e.arenas[a], name, sizeof(name));
		printf(" %7s", name);
	}
	putchar('\n');
	for (size_t i = 0; i < e.niters; i++) {
		int any = 0;

		/* An iteration where no shown arena maps anything is no row. */
		for (size_t a = 0; a < e.narenas; a++)
			any |= !isnan(e.ratio[i * e.narenas + a]);
		if (!any)
			continue;
		printf("%-9zu", e.from + i);
		for (size_t a = 0; a < e.narenas; a++) {
			double v = e.ratio[i * e.narenas + a];
			if (isnan(v))
				printf(" %7s", "-");
			else
				printf(" %6.1f%%", v * 100);
		}
		putchar('\n');
	}
	if (!e.narenas)
		printf("(no arena maps as much as the threshold)\n");
	if (!jma_report_eff(&r->ser, 0, r->from, r->to, &every)) {
		hidden(e.narenas, every.narenas, "arenas");
		jma_eff_free(&every);
	}
	jma_eff_free(&e);
	return 0;
}

static int write_svg(struct report *r)
{
	enum jma_metric m = r->metric >= 0 ? (enum jma_metric)r->metric : JMA_M_ALLOCATED;
	const struct jma_sample *s0 = &r->ser.v[0];
	char title[256];
	struct cli_out o;
	int err = cli_out_open(r->svg, false, &o);
	FILE *f = o.f;

	if (err)
		return cli_error(EXIT_USAGE, "cannot create %s: %s", r->svg, cli_out_strerror(err));
	if (s0->pid)
		snprintf(title, sizeof(title), "%s (pid %d): %s", cli_esc(s0->comm), (int)s0->pid,
			 jma_metric_name(m));
	else
		snprintf(title, sizeof(title), "%s: %s", r->path, jma_metric_name(m));
	err = jma_report_svg(f, &r->ser, m, r->from, r->to, title);
	err = cli_out_close(&o, !err) ?: err;
	if (err)
		return cli_error(EXIT_TARGET, "writing %s: %s", r->svg, strerror(-err));
	return EXIT_OK;
}

static int parse_iter(const char *s, unsigned *v)
{
	long long x;

	if (cli_parse_int(s, 0, UINT_MAX, &x))
		return -1;
	*v = (unsigned)x;
	return 0;
}

static int parse_args(struct cli *c, int argc, char **argv, struct report *r)
{
	static const struct option longopts[] = {
		{ "threshold", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 'T' },
		{ "metric", required_argument, NULL, 'm' },
		{ "svg", required_argument, NULL, 's' },
		{ 0 },
	};
	enum jma_metric m;
	int opt;

	/* Options may follow the operands ("report abs FILE -t 1G"): 0 makes
	 * GNU getopt start afresh in permuting mode, whatever main() parsed. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "t:m:", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			r->auto_threshold = 0;
			if (jma_parse_size(optarg, &r->threshold))
				return cli_usage(c, "report", "invalid --threshold \"%s\": a size such "
						 "as 200M, 1.5G, 512K (a bare number is MiB)", optarg);
			break;
		case 'f':
		case 'T':
			if (parse_iter(optarg, opt == 'f' ? &r->from : &r->to))
				return cli_usage(c, "report", "invalid --%s \"%s\": an iteration number",
						 opt == 'f' ? "from" : "to", optarg);
			break;
		case 'm':
			if (jma_metric_parse(optarg, &m))
				return cli_usage(c, "report", "invalid --metric \"%s\": allocated (or "
						 "total), active, mapped, dirty, muzzy, retained, resident",
						 optarg);
			r->metric = (int)m;
			break;
		case 's': r->svg = optarg; break;
		default: return cli_usage(c, "report", "invalid option");
		}
	}
	if (argc - optind != 2)
		return cli_usage(c, "report", "need a report (abs, del or eff) and a SERIES file");
	r->kind = argv[optind];
	r->path = argv[optind + 1];
	if (strcmp(r->kind, "abs") && strcmp(r->kind, "del") && strcmp(r->kind, "eff"))
		return cli_usage(c, "report", "unknown report \"%s\": abs, del or eff", r->kind);
	if (r->from > r->to)
		return cli_usage(c, "report", "--from %u is after --to %u", r->from, r->to);
	return EXIT_OK;
}

int cli_sites_ranking(jma_track *t, unsigned top, const char *svg, const char *title, FILE *rank)
{
	struct cli_out o;
	FILE *esc;
	int err;

	if (!jma_track_nsnapshots(t))
		return EXIT_OK;
	/* Site names are the target's symbols: escaped (esc.h). */
	if (!(esc = cli_esc_open(rank, 0)))
		return cli_error(EXIT_TARGET, "out of memory");
	err = jma_track_write_ranking(t, top, esc);
	if (fclose(esc) && !err)
		err = -EIO;
	if (err)
		return cli_error(EXIT_TARGET, "%s", jma_track_errmsg(t));
	if (!svg)
		return EXIT_OK;
	if ((err = cli_out_open(svg, true, &o)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", svg, cli_out_strerror(err));
	err = jma_track_svg(t, top ? top : 8, title, o.f);
	err = cli_out_close(&o, !err) ?: err;
	if (err)
		return cli_error(EXIT_TARGET, "%s: %s", svg, strerror(-err));
	return EXIT_OK;
}

/* "report sites TRACK.jsonl|DIR": the ranking of a saved track, or of a directory of
 * jemalloc's own heap profiles. */
static int report_sites(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "svg", required_argument, NULL, 's' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ 0 },
	};
	unsigned ntop = 10;
	const char *svg = NULL;
	int no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE);
	jma_track *t;
	long long top;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (opt == 's') {
			svg = optarg;
		} else if (opt == 'M') {
			no_demangle = 1;
		} else if (opt == 't') {
			if ((rc = cli_arg_int(c, "report", "--top", optarg, 0, 100000, &top)))
				return rc;
			ntop = (unsigned)top;
		} else {
			return cli_usage(c, "report", "invalid option to report sites");
		}
	}
	if (argc - optind != 1)
		return cli_usage(c, "report", "report sites needs a FILE (prof track --format jsonl) "
				 "or a DIR of *.heap profiles");
	/* A saved track keeps the names it was written with. */
	t = jma_track_new(&(struct jma_track_opts){ .no_demangle = no_demangle });
	if (!t)
		return cli_error(EXIT_TARGET, "out of memory");
	if (jma_track_load(t, argv[optind]))
		rc = cli_error(EXIT_USAGE, "%s", jma_track_errmsg(t));
	else
		rc = cli_sites_ranking(t, ntop, svg, "live bytes per allocation site", stdout);
	jma_track_free(t);
	return rc;
}

int cmd_report(struct cli *c, int argc, char **argv)
{
	struct report r = { .auto_threshold = 1, .to = UINT_MAX, .metric = -1 };
	char err[512];
	int rc, e = 0;

	if (argc >= 2 && !strcmp(argv[1], "sites"))
		return report_sites(c, argc - 1, argv + 1);
	if ((rc = parse_args(c, argc, argv, &r)))
		return rc;
	if (jma_series_load(r.path, &r.ser, err, sizeof(err)))
		return cli_error(EXIT_USAGE, "%s: %s", r.path, err);
	if (r.from >= r.ser.n) {
		rc = cli_error(EXIT_USAGE, "--from %u: %s has %zu samples (iterations 0-%zu)", r.from,
			       r.path, r.ser.n, r.ser.n - 1);
		goto out;
	}
	if (!strcmp(r.kind, "eff")) {
		e = print_eff(&r);
	} else {
		for (size_t i = 0; i < sizeof(seed_metrics) / sizeof(*seed_metrics) && !e; i++) {
			enum jma_metric m = r.metric >= 0 ? (enum jma_metric)r.metric : seed_metrics[i];

			if (i)
				putchar('\n');
			e = !strcmp(r.kind, "abs") ? print_abs(&r, m) : print_del(&r, m);
			if (r.metric >= 0)
				break;
		}
	}
	if (e)
		rc = cli_error(EXIT_TARGET, "report: %s", strerror(-e));
	else if (r.svg)
		rc = write_svg(&r);
out:
	jma_series_free(&r.ser);
	return rc;
}
