/* cmd_stats.c -- "stats": malloc_stats_print output, brought out of the target. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_stats(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "opts", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};
	const char *letters = "", *out = NULL;
	char opts[40];
	FILE *f = stdout, *esc;
	struct cli_out o;
	int err;
	int json = 0, opt, rc = EXIT_OK;

	while ((opt = getopt_long(argc, argv, "jO:o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = 1; break;
		case 'O': letters = optarg; break;
		case 'o': out = optarg; break;
		default: return cli_usage(c, "stats", "invalid option");
		}
	}
	if (optind != argc)
		return cli_usage(c, "stats", "unexpected argument \"%s\"", argv[optind]);
	if (strlen(letters) > 30 || jma_stats_opts_valid(letters) || strchr(letters, 'J'))
		return cli_usage(c, "stats", "invalid --opts \"%s\": letters among g m d a b l x e h "
				 "(J is --json)", letters);
	snprintf(opts, sizeof(opts), "%s%s", json ? "J" : "", letters);
	if (out && (err = cli_out_open(out, false, &o)))
		return cli_error(EXIT_USAGE, "cannot create %s: %s", out, cli_out_strerror(err));
	if (out)
		f = o.f;
	/* The report is the target's text (jemalloc's JSON is not escaped). */
	esc = cli_esc_open(f, json);
	if (!esc)
		rc = cli_error(EXIT_TARGET, "out of memory");
	else if (jma_stats_print(c->s, opts, cli_write_file, esc))
		rc = cli_fail_session(c);
	if (esc && fclose(esc) && rc == EXIT_OK)
		rc = cli_error(EXIT_TARGET, "writing %s: %s", out ? out : "standard output",
			       strerror(errno));
	if (out && (err = cli_out_close(&o, true)) && rc == EXIT_OK)
		rc = cli_error(EXIT_TARGET, "writing %s: %s", out, strerror(-err));
	return rc;
}
