/* cmd_info.c -- "info": what jemalloc is in the process and how we would talk to it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const info_names[] = {
	"version", "config.prof", "config.stats", "opt.prof", "prof.active", "arenas.narenas",
};
#define NINFO (sizeof(info_names) / sizeof(*info_names))

static void print_json(const struct jma_target_info *ti, const struct jma_value *v, const int *have)
{
	printf("{\"pid\": %d, \"comm\": ", (int)ti->pid);
	cli_json_string(stdout, ti->comm);
	printf(", \"threads\": %d, \"module\": ", ti->nthreads);
	cli_json_string(stdout, ti->module);
	printf(", \"prefix\": ");
	cli_json_string(stdout, ti->prefix);
	printf(", \"static\": %s", ti->is_static ? "true" : "false");
	cli_json_values(stdout, info_names, v, have, NINFO);
	printf(", \"thread\": {\"tid\": %d, \"comm\": ", (int)ti->tid);
	cli_json_string(stdout, ti->tid_comm);
	printf(", \"why\": ");
	cli_json_string(stdout, ti->tid_why ? ti->tid_why : "");
	printf("}}\n");
}

static void print_text(const struct jma_target_info *ti, const struct jma_value *v, const int *have)
{
	char buf[4200];

	printf("%-16s %d (%s), %d thread%s\n", "process", (int)ti->pid, cli_esc(ti->comm),
	       ti->nthreads, ti->nthreads == 1 ? "" : "s");
	printf("%-16s %s (%s, %s%s%s)\n", "module", cli_esc(ti->module),
	       ti->is_static ? "static" : "shared", ti->prefix[0] ? "prefix " : "no prefix",
	       cli_esc(ti->prefix), "");
	for (size_t i = 0; i < NINFO; i++) {
		if (have[i])
			jma_value_format(&v[i], buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "n/a");
		printf("%-16s %s\n", info_names[i], cli_esc(buf));
	}
	printf("%-16s %d (%s), %s\n", "call thread", (int)ti->tid, cli_esc(ti->tid_comm),
	       cli_esc(ti->tid_why ? ti->tid_why : ""));
}

int cmd_info(struct cli *c, int argc, char **argv)
{
	static const struct option longopts[] = { { "json", no_argument, NULL, 'j' }, { 0 } };
	struct jma_value v[NINFO];
	int have[NINFO] = { 0 };
	struct jma_target_info ti = { .sz = sizeof(ti) };
	int json = 0, opt, own, rc = EXIT_OK;

	while ((opt = getopt_long(argc, argv, "j", longopts, NULL)) != -1) {
		if (opt != 'j')
			return cli_usage(c, "info", "invalid option");
		json = 1;
	}
	if (optind != argc)
		return cli_usage(c, "info", "unexpected argument \"%s\"", argv[optind]);
	if (jma_hold_begin(c->s, &own))
		return cli_fail_session(c);
	for (size_t i = 0; i < NINFO; i++) {
		/* prof.* are ENOENT without --enable-prof: show them as absent. */
		have[i] = jma_get(c->s, info_names[i], &v[i]) == 0;
		if (!have[i] && !jma_attached(c->s))
			break;
	}
	if (!jma_attached(c->s)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (jma_hold_end(c->s, own, jma_target_info(c->s, &ti))) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (json)
		print_json(&ti, v, have);
	else
		print_text(&ti, v, have);
out:
	for (size_t i = 0; i < NINFO; i++)
		if (have[i])
			jma_value_clear(&v[i]);
	return rc;
}
