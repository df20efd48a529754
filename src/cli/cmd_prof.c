/* cmd_prof.c -- "prof": heap-profiling status, on/off, dump, reset, gdump, window. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli/esc.h"

static const char *const status_names[] = {
	"config.prof", "opt.prof", "prof.active", "prof.thread_active_init", "prof.gdump",
	"prof.lg_sample", "prof.interval", "opt.lg_prof_interval", "opt.prof_prefix",
	"opt.prof_accum", "opt.lg_prof_sample",
};
enum { ST_OPT_PROF = 1, ST_LG_SAMPLE = 5, ST_OPT_LG_SAMPLE = 10 };
#define NSTATUS (sizeof(status_names) / sizeof(*status_names))

static void status_json(const struct jma_value *v, const int *have, int avail, const char *why,
			int off, size_t lg)
{
	printf("{\"available\": %s", avail ? "true" : "false");
	if (!avail) {
		printf(", \"why\": ");
		cli_json_string(stdout, why);
	}
	cli_json_values(stdout, status_names, v, have, NSTATUS);
	if (have[lg])
		printf(", \"sample_bytes\": %llu", 1ULL << (v[lg].z & 63));
	printf(", \"profiling\": %s", off ? "false" : "true");
	printf("}\n");
}

static void status_text(const struct jma_value *v, const int *have, int avail, const char *why,
			int off)
{
	char buf[4200];

	printf("%-24s %s\n", "available", avail ? "yes" : "no");
	if (!avail)
		printf("%-24s %s\n", "why", cli_esc(why));
	for (size_t i = 0; i < NSTATUS; i++) {
		if (have[i])
			jma_value_format(&v[i], buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "n/a");
		if (i == ST_LG_SAMPLE && off && have[ST_OPT_LG_SAMPLE])
			printf("%-24s profiling is off (opt.prof false); configured sample period "
			       "%llu bytes (opt.lg_prof_sample %zu)\n", status_names[i],
			       1ULL << (v[ST_OPT_LG_SAMPLE].z & 63), v[ST_OPT_LG_SAMPLE].z);
		else if (i == ST_LG_SAMPLE && have[i])
			printf("%-24s %s (sample period %llu bytes)\n", status_names[i], cli_esc(buf),
			       1ULL << (v[i].z & 63));
		else
			printf("%-24s %s\n", status_names[i], cli_esc(buf));
	}
}

static int prof_status(struct cli *c, int argc, char **argv)
{
	struct jma_value v[NSTATUS];
	int have[NSTATUS] = { 0 }, json = 0, own, rc = EXIT_OK, avail, off;
	size_t lg;
	char why[1024] = "";

	if (argc == 2 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc != 1)
		return cli_usage(c, "prof", "invalid arguments to prof status");
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	for (size_t i = 0; i < NSTATUS; i++)
		have[i] = jma_get(c->s, status_names[i], &v[i]) == 0;
	/* With opt.prof false jemalloc reports prof.lg_sample as 0 (one byte):
	 * the period that applies is the configured one, and it is off. */
	off = have[ST_OPT_PROF] && !v[ST_OPT_PROF].b;
	lg = off ? ST_OPT_LG_SAMPLE : ST_LG_SAMPLE;
	avail = jma_prof_check(c->s) == 0;
	if (!avail) {
		char *m = cli_errmsg(c->s);

		snprintf(why, sizeof(why), "%s", m ? m : jma_errmsg(c->s));
		free(m);
	}
	if (!jma_attached(c->s) || jma_hold_end(c->s, own, 0)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (json)
		status_json(v, have, avail, why, off, lg);
	else
		status_text(v, have, avail, why, off);
out:
	for (size_t i = 0; i < NSTATUS; i++)
		if (have[i])
			jma_value_clear(&v[i]);
	return rc;
}

static int parse_onoff(const char *s, bool *on)
{
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1"))
		*on = true;
	else if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0"))
		*on = false;
	else
		return -1;
	return 0;
}

static int prof_active(struct cli *c, bool on)
{
	bool was;

	if (jma_prof_set_active(c->s, on, &was))
		return cli_fail_session(c);
	printf("prof.active: %s -> %s\n", was ? "true" : "false", on ? "true" : "false");
	return EXIT_OK;
}

static int prof_gdump(struct cli *c, int argc, char **argv)
{
	struct jma_value in = { .type = JMA_T_BOOL }, old;
	bool on;
	int own, rc = EXIT_OK;

	if (argc != 2 || parse_onoff(argv[1], &on))
		return cli_usage(c, "prof", "prof gdump needs on or off");
	in.b = on;
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	if (jma_prof_check(c->s) || jma_set(c->s, "prof.gdump", &in, &old))
		rc = cli_fail_session(c);
	if (jma_hold_end(c->s, own, 0))
		rc = cli_fail_session(c);
	if (rc == EXIT_OK)
		printf("prof.gdump: %s -> %s\n", old.b ? "true" : "false", on ? "true" : "false");
	return rc;
}

static int prof_reset(struct cli *c, int argc, char **argv)
{
	long long v = 0;
	size_t lg;

	if (argc > 2)
		return cli_usage(c, "prof", "too many arguments to prof reset");
	if (argc == 2 && cli_parse_int(argv[1], 0, 62, &v))
		return cli_usage(c, "prof", "invalid LG_SAMPLE \"%s\": 0..62 (sample every "
				 "2^LG_SAMPLE bytes)", argv[1]);
	lg = (size_t)v;
	if (jma_prof_reset(c->s, argc == 2 ? &lg : NULL))
		return cli_fail_session(c);
	if (argc == 2)
		printf("prof.reset: samples cleared, sample period now 2^%zu = %llu bytes\n", lg,
		       1ULL << lg);
	else
		printf("prof.reset: samples cleared\n");
	return EXIT_OK;
}

/* Write the profile @buf (@len bytes) to @path, saying where on stdout. */
static int save_to(const char *path, const char *buf, size_t len)
{
	int err = prof_save(path, buf, len);

	if (err)
		return cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", path,
				 cli_out_strerror(err));
	if (strcmp(path, "-"))
		printf("%s (%zu bytes)\n", path, len);
	return EXIT_OK;
}

static int dump_to(struct cli *c, const char *path)
{
	char *buf;
	size_t len;
	int rc;

	if (jma_prof_dump(c->s, &buf, &len))
		return cli_fail_session(c);
	rc = save_to(path, buf, len);
	free(buf);
	return rc;
}

/* One section of the window's report: the sites whose flat change has the
 * sign @sign, largest first, with percentages of that section's own total. */
static void window_section(const struct jma_heap_site *s, size_t n, int sign, unsigned top,
			   const char *title)
{
	double total = 0, running = 0;
	unsigned shown = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i].flat * sign > 0)
			total += s[i].flat;
	printf("\n%s:\nTotal: %.1f MB\n", title, total / 1048576);
	/* Sites come largest flat first: shrinkage is read from the end. */
	for (size_t k = 0; k < n && (!top || shown < top); k++) {
		const struct jma_heap_site *x = &s[sign > 0 ? k : n - 1 - k];

		if (x->flat * sign <= 0)
			continue;
		running += x->flat;
		printf("%8.1f %5.1f%% %5.1f%% %8.1f %5.1f%% %s\n", x->flat / 1048576,
		       x->flat * 100 / total, running * 100 / total, x->cum / 1048576,
		       x->cum * 100 / total, cli_esc(x->name));
		shown++;
	}
	if (!shown)
		printf("(none)\n");
}

/* What changed in the window: growth and shrinkage apart, each with its own
 * total, so that freed memory does not hide (or negate) what grew. */
static int window_report(struct cli *c, const char *final, const char *base, unsigned top)
{
	struct jma_heap_report_opts ro = { .format = JMA_HEAP_TEXT,
					   .no_demangle = !!(c->opt.flags & JMA_F_NO_DEMANGLE) };
	struct jma_heap_site *s = NULL;
	char title[8600];
	size_t n = 0, i;
	double total;
	jma_heap *h;
	int rc = prof_load(c, final, NULL, 0, base, &h);

	if (rc)
		return rc;
	if (jma_heap_sites(h, &ro, &s, &n, &total)) {
		rc = cli_error(EXIT_TARGET, "analysing %s: %s", final, jma_heap_errmsg(h));
	} else {
		printf("net change during the window: %+.1f MB\n", total / 1048576);
		snprintf(title, sizeof(title), "allocation sites that grew during the window (%s minus %s)",
			 final, base);
		window_section(s, n, 1, top, title);
		window_section(s, n, -1, top, "allocation sites that shrank (memory freed during the window)");
		/* Nothing sampled in the window is live: say why. */
		for (i = 0; i < n && !(s[i].flat > 0); i++)
			;
		if (i == n)
			cli_hint_empty(c, h, &ro, "nothing sampled during the window is still live");
	}
	free(s);
	jma_heap_free(h);
	return rc;
}

/* prof dump --analyze without -o: the dump is read and analyzed, never saved. */
static int dump_analyze(struct cli *c, unsigned top)
{
	char *buf;
	size_t len;
	int rc;

	if (jma_prof_dump(c->s, &buf, &len))
		return cli_fail_session(c);
	rc = prof_analyze_buf(c, "the dump", buf, len, top, 0, NULL);
	free(buf);
	return rc;
}

static int prof_dump(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "analyze", no_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'n' },
		{ 0 },
	};
	char name[256];
	const char *out = NULL;
	unsigned top = 20;
	int opt, rc, an = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'a': an = 1; break;
		case 'n':
			if ((rc = prof_parse_top(c, optarg, &top)))
				return rc;
			break;
		default: return cli_usage(c, "prof", "invalid option to prof dump");
		}
	}
	if (optind != argc)
		return cli_usage(c, "prof", "unexpected argument \"%s\"", argv[optind]);
	if (an && out && !strcmp(out, "-"))
		return cli_usage(c, "prof", "--analyze needs the dump in a file, not -o -");
	/* Analyzed without -o: in memory, no copy left in the current directory. */
	if (an && !out)
		return dump_analyze(c, top);
	if (!out) {
		prof_default_name(c->pid, name, sizeof(name));
		out = name;
	}
	rc = dump_to(c, out);
	if (rc == EXIT_OK && an) {
		fflush(stdout);
		rc = prof_analyze(c, out, top, 0);
	}
	return rc;
}

struct window_args {
	const char *outdir;	/* -o DIR; NULL: a fresh jemattach-window.PID.XXXXXXXX */
	unsigned top;
	bool sampler;		/* --sampler, or jemalloc's profiler is off */
	double budget;		/* --max-overhead, percent */
	unsigned lg;		/* --lg-sample, 0 none */
	const char *sampler_opt;	/* a sampler's option given (for its error) */
	double secs;
};

static int parse_window(struct cli *c, int argc, char **argv, struct window_args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "sampler", no_argument, NULL, 's' },
		{ "max-overhead", required_argument, NULL, 'm' },
		{ "lg-sample", required_argument, NULL, 'l' },
		{ 0 },
	};
	int opt, rc = EXIT_OK;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (opt == 'o')
			a->outdir = optarg;
		else if (opt == 's')
			a->sampler = true;
		else if (opt == 'm' && !(rc = cli_parse_percent(c, optarg, &a->budget)))
			a->sampler_opt = "--max-overhead";
		else if (opt == 'l' && !(rc = cli_parse_lg(c, optarg, &a->lg)))
			a->sampler_opt = "--lg-sample";
		else if (opt == 'm' || opt == 'l')
			;
		else if (opt == 'n')
			rc = prof_parse_top(c, optarg, &a->top);
		else
			rc = cli_usage(c, "prof", "invalid option to prof window");
		if (rc)
			return rc;
	}
	if (argc - optind != 1)
		return cli_usage(c, "prof", "prof window needs SECONDS");
	if (cli_parse_num(argv[optind], 0, 86400, &a->secs) || !(a->secs > 0))
		return cli_usage(c, "prof", "invalid SECONDS \"%s\"", argv[optind]);
	return EXIT_OK;
}

/* The window's directory into @dir: -o DIR, or without it a fresh one with
 * a random name (never one that exists: another user may have made it);
 * *@made when made here. */
static int window_dir(struct cli *c, const char *outdir, char *dir, size_t len, bool *made)
{
	int rc;

	if (outdir)
		snprintf(dir, len, "%s", outdir);
	else
		snprintf(dir, len, "jemattach-window.%d", (int)c->pid);
	if ((rc = cli_out_mkdir(dir, !outdir, dir, len, made)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", dir, cli_out_strerror(rc));
	if (access(dir, W_OK | X_OK)) {
		rc = cli_error(EXIT_USAGE, "cannot write in %s: %s", dir, strerror(errno));
		if (*made)
			cli_out_remove(dir, true);
		return rc;
	}
	return EXIT_OK;
}

static void window_step(void *arg, enum jma_prof_window_step k, bool was)
{
	double secs = *(const double *)arg;

	if (k == JMA_PROF_WINDOW_BASE)
		fprintf(stderr, "jemattach: base dump\n");
	else if (k == JMA_PROF_WINDOW_ACTIVE)
		fprintf(stderr, "jemattach: profiling active for %g s (was %s)\n", secs,
			was ? "active" : "inactive");
	else if (k == JMA_PROF_WINDOW_SETTLE)
		fprintf(stderr, "jemattach: profiling inactive; waiting %g s for short-lived objects "
			"to be freed\n", secs);
	else
		fprintf(stderr, "jemattach: prof.active restored to %s\n", was ? "true" : "false");
}

/* jemalloc's own window (the library sets and restores prof.active), its two
 * profiles saved in @dir: base.heap, window.heap. */
static int jemalloc_window(struct cli *c, const struct window_args *a, const char *dir)
{
	struct jma_prof_window_opts o = { .seconds = a->secs, .stop = &cli_stop,
					  .step = window_step, .arg = (void *)&a->secs };
	struct jma_prof_window w;
	struct cli_stop_saved sv;
	char base[4200], final[4200];
	int err, rc = EXIT_OK;

	snprintf(base, sizeof(base), "%s/base.heap", dir);
	snprintf(final, sizeof(final), "%s/window.heap", dir);
	cli_stop_catch(&sv, false);
	err = jma_prof_window(c->s, &o, &w);
	cli_stop_release(&sv);
	if (err && !(cli_stop && err == -EINTR))
		rc = cli_fail_session(c);
	if (cli_stop) {
		fprintf(stderr, "jemattach: interrupted\n");
		rc = 128 + cli_stop;
	}
	if (err || cli_stop) {
		jma_prof_window_free(&w);
		return rc;
	}
	rc = save_to(base, w.base, w.base_len);
	if (rc == EXIT_OK && (rc = save_to(final, w.final, w.final_len)))
		cli_out_remove(base, false);
	jma_prof_window_free(&w);
	if (rc == EXIT_OK) {
		/* What was allocated in the window and is still live after the
		 * second wait: the long-lived growth. */
		fflush(stdout);
		rc = window_report(c, final, base, a->top);
	}
	return rc;
}

static int prof_window(struct cli *c, int argc, char **argv)
{
	struct window_args a = { .top = 20, .budget = CLI_BUDGET_DEFAULT };
	char dir[4096], final[4200];
	bool made = false;
	int rc = parse_window(c, argc, argv, &a);

	/* Everything that can fail before the target is touched is checked
	 * first: a failed window leaves nothing behind. */
	if (rc || (rc = cli_sampler_instead(c, "prof window", &a.sampler)))
		return rc;
	if (!a.sampler && a.sampler_opt)
		return cli_usage(c, "prof", "%s is the sampler's: process %d has jemalloc's profiler "
				 "(add --sampler, or prof reset N for its own rate)", a.sampler_opt,
				 (int)c->pid);
	if ((rc = window_dir(c, a.outdir, dir, sizeof(dir), &made)))
		return rc;
	if (!a.sampler) {
		rc = jemalloc_window(c, &a, dir);
		/* Half a window is no result: nothing of it stays. */
		if ((rc != EXIT_OK || cli_stop) && made)
			cli_out_remove(dir, true);
		return rc;
	}
	/* Nothing from before the window is seen: no base to subtract. */
	snprintf(final, sizeof(final), "%s/window.heap", dir);
	rc = cli_sample_window(c, a.secs, final, a.top, a.budget / 100, a.lg);
	if (rc != EXIT_OK && made) {
		unlink(final);
		rmdir(dir);
	}
	return rc;
}

int cmd_prof(struct cli *c, int argc, char **argv)
{
	bool on;

	if (argc < 2)
		return cli_usage(c, "prof", "missing subcommand");
	argc--;
	argv++;
	if (!strcmp(argv[0], "status"))
		return prof_status(c, argc, argv);
	if ((!strcmp(argv[0], "on") || !strcmp(argv[0], "off")) && argc == 1) {
		parse_onoff(argv[0], &on);
		return prof_active(c, on);
	}
	if (!strcmp(argv[0], "dump"))
		return prof_dump(c, argc, argv);
	if (!strcmp(argv[0], "reset"))
		return prof_reset(c, argc, argv);
	if (!strcmp(argv[0], "gdump"))
		return prof_gdump(c, argc, argv);
	if (!strcmp(argv[0], "window"))
		return prof_window(c, argc, argv);
	if (!strcmp(argv[0], "track"))
		return cmd_prof_track(c, argc, argv);
	if (!strcmp(argv[0], "sample"))
		return cmd_prof_sample(c, argc, argv);
	return cli_usage(c, "prof", "unknown subcommand \"%s\"", argv[0]);
}
