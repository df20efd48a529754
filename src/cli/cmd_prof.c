/* cmd_prof.c -- "prof": heap-profiling status, on/off, dump, reset, gdump, window. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

static int prof_status(struct cli *c, int argc, char **argv)
{
	struct jma_value v[NSTATUS];
	int have[NSTATUS] = { 0 }, json = 0, rc = EXIT_OK, avail, off;
	size_t lg;
	char why[1024] = "", buf[4200];

	if (argc == 2 && !strcmp(argv[1], "--json"))
		json = 1;
	else if (argc != 1)
		return cli_usage(c, "prof", "invalid arguments to prof status");
	if (jma_attach(c->s))
		return cli_fail_session(c);
	for (size_t i = 0; i < NSTATUS; i++)
		have[i] = jma_get(c->s, status_names[i], &v[i]) == 0;
	/* With opt.prof false jemalloc reports prof.lg_sample as 0 (one byte):
	 * the period that applies is the configured one, and it is off. */
	off = have[ST_OPT_PROF] && !v[ST_OPT_PROF].b;
	lg = off ? ST_OPT_LG_SAMPLE : ST_LG_SAMPLE;
	avail = jma_prof_check(c->s) == 0;
	if (!avail)
		snprintf(why, sizeof(why), "%s", jma_errmsg(c->s));
	if (!jma_attached(c->s) || jma_detach(c->s)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (json) {
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
		goto out;
	}
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
	int rc = EXIT_OK;

	if (argc != 2 || parse_onoff(argv[1], &on))
		return cli_usage(c, "prof", "prof gdump needs on or off");
	in.b = on;
	if (jma_attach(c->s))
		return cli_fail_session(c);
	if (jma_prof_check(c->s) || jma_set(c->s, "prof.gdump", &in, &old))
		rc = cli_fail_session(c);
	if (jma_detach(c->s) && rc == EXIT_OK)
		rc = cli_fail_session(c);
	if (rc == EXIT_OK)
		printf("prof.gdump: %s -> %s\n", old.b ? "true" : "false", on ? "true" : "false");
	return rc;
}

static int prof_reset(struct cli *c, int argc, char **argv)
{
	size_t lg;
	char *end;

	if (argc > 2)
		return cli_usage(c, "prof", "too many arguments to prof reset");
	if (argc == 2) {
		errno = 0;
		lg = strtoul(argv[1], &end, 10);
		if (errno || *end || !argv[1][0] || lg > 62)
			return cli_usage(c, "prof", "invalid LG_SAMPLE \"%s\": 0..62 (sample every "
					 "2^LG_SAMPLE bytes)", argv[1]);
	}
	if (jma_prof_reset(c->s, argc == 2 ? &lg : NULL))
		return cli_fail_session(c);
	if (argc == 2)
		printf("prof.reset: samples cleared, sample period now 2^%zu = %llu bytes\n", lg,
		       1ULL << lg);
	else
		printf("prof.reset: samples cleared\n");
	return EXIT_OK;
}

static int dump_to(struct cli *c, const char *path)
{
	char *buf;
	size_t len;
	int err;

	if (jma_prof_dump(c->s, &buf, &len))
		return cli_fail_session(c);
	err = prof_save(path, buf, len);
	free(buf);
	if (err)
		return cli_error(err == -EPERM ? EXIT_USAGE : EXIT_TARGET, "writing %s: %s", path,
				 cli_out_strerror(err));
	if (strcmp(path, "-"))
		printf("%s (%zu bytes)\n", path, len);
	return EXIT_OK;
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
	rc = prof_analyze_buf(c, "the dump", buf, len, top, 0);
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

static volatile sig_atomic_t window_stop;

static void on_stop(int sig)
{
	window_stop = sig;
}

/* Sleep @secs, or until SIGINT/SIGTERM/SIGHUP; returns 0 if the whole time passed. */
static int wait_window(double secs)
{
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	end.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	while (!window_stop) {
		struct timespec step = { 0, 100000000 };
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			return 0;
		nanosleep(&step, NULL);
	}
	return -1;
}

static int prof_window(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "sampler", no_argument, NULL, 's' },
		{ "max-overhead", required_argument, NULL, 'm' },
		{ 0 },
	};
	unsigned top = 20;
	bool sampler = false;
	double budget = 5;
	struct sigaction sa = { .sa_handler = on_stop }, old_int, old_term, old_hup;
	char dir[4096], base[4200], final[4200];
	const char *outdir = NULL;
	double secs;
	char *end;
	bool was = false, changed = false, made_dir = false, wrote = false;
	int opt, rc = EXIT_OK;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (opt == 'o')
			outdir = optarg;
		else if (opt == 's')
			sampler = true;
		else if (opt == 'm' && (rc = cli_parse_percent(c, optarg, &budget)))
			return rc;
		else if (opt != 'n' && opt != 'm')
			return cli_usage(c, "prof", "invalid option to prof window");
		else if ((rc = prof_parse_top(c, optarg, &top)))
			return rc;
	}
	if (argc - optind != 1)
		return cli_usage(c, "prof", "prof window needs SECONDS");
	errno = 0;
	secs = strtod(argv[optind], &end);
	if (errno || *end || !(secs > 0) || secs > 86400)
		return cli_usage(c, "prof", "invalid SECONDS \"%s\"", argv[optind]);
	if (outdir)
		snprintf(dir, sizeof(dir), "%s", outdir);
	else
		snprintf(dir, sizeof(dir), "jemattach-window.%d", (int)c->pid);
	/* Everything that can fail before the target is touched is checked
	 * first: a failed window leaves nothing behind. */
	if (!sampler && jma_prof_check(c->s))
		return cli_fail_session(c);
	/* Without -o, a fresh directory with a random name (never one that
	 * exists: another user may have made it). */
	if ((rc = cli_out_mkdir(dir, !outdir, dir, sizeof(dir), &made_dir)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", dir, cli_out_strerror(rc));
	if (access(dir, W_OK | X_OK)) {
		rc = cli_error(EXIT_USAGE, "cannot write in %s: %s", dir, strerror(errno));
		if (made_dir)
			cli_out_remove(dir, true);
		return rc;
	}
	snprintf(base, sizeof(base), "%s/base.heap", dir);
	snprintf(final, sizeof(final), "%s/window.heap", dir);
	if (sampler) {
		/* Nothing from before the window is seen: no base to subtract. */
		rc = cli_sample_window(c, secs, final, top, budget / 100);
		if (rc != EXIT_OK && made_dir) {
			unlink(final);
			rmdir(dir);
		}
		return rc;
	}

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	/* 1. base  2. activate  3. wait  4. deactivate  5. wait again so that
	 * short-lived objects sampled in the window are freed  6. dump. */
	fprintf(stderr, "jemattach: base dump\n");
	if ((rc = dump_to(c, base)) != EXIT_OK)
		goto out;
	wrote = true;
	if (window_stop)
		goto out;
	if (jma_prof_set_active(c->s, true, &was)) {
		rc = cli_fail_session(c);
		goto out;
	}
	changed = true;
	fprintf(stderr, "jemattach: profiling active for %g s (was %s)\n", secs,
		was ? "active" : "inactive");
	if (wait_window(secs))
		goto out;
	if (jma_prof_set_active(c->s, false, NULL)) {
		rc = cli_fail_session(c);
		goto out;
	}
	fprintf(stderr, "jemattach: profiling inactive; waiting %g s for short-lived objects to "
		"be freed\n", secs);
	if (wait_window(secs))
		goto out;
	rc = dump_to(c, final);
out:
	if (changed && jma_prof_set_active(c->s, was, NULL)) {
		rc = cli_fail_session(c);
	} else if (changed) {
		fprintf(stderr, "jemattach: prof.active restored to %s\n", was ? "true" : "false");
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (rc != EXIT_OK || window_stop) {
		/* Half a window is no result: remove what it wrote (the final
		 * dump is the last step: it cannot have been written). */
		if (wrote)
			cli_out_remove(base, false);
		if (made_dir)
			cli_out_remove(dir, true);
	}
	if (window_stop) {
		fprintf(stderr, "jemattach: interrupted\n");
		return 128 + window_stop;
	}
	if (rc == EXIT_OK) {
		/* What was allocated in the window and is still live after the
		 * second wait: the long-lived growth. */
		fflush(stdout);
		rc = window_report(c, final, base, top);
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
