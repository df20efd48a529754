/* cmd_purge.c -- "purge" and "decay": arena.<i>.purge|decay, with the effect shown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define ARENAS_ALL 4096	/* MALLCTL_ARENAS_ALL */

struct mem { size_t resident, retained, dirty; };

static int read_mem(struct cli *c, struct mem *m)
{
	struct jma_value v;

	if (jma_refresh(c->s) || jma_get(c->s, "stats.resident", &v))
		return -1;
	m->resident = v.z;
	if (jma_get(c->s, "stats.retained", &v))
		return -1;
	m->retained = v.z;
	m->dirty = 0;
	if (jma_get(c->s, "stats.arenas.4096.pdirty", &v) == 0)
		m->dirty = v.z;
	return 0;
}

static int arena_action(struct cli *c, int argc, char **argv, const char *action)
{
	char name[64], a[32], b[32];
	struct jma_value narenas;
	unsigned long idx = ARENAS_ALL;
	struct mem before, after;
	int rc = EXIT_OK;

	if (argc > 2)
		return cli_usage(c, action, "too many arguments");
	if (argc == 2 && strcmp(argv[1], "all")) {
		char *end;
		errno = 0;
		idx = strtoul(argv[1], &end, 10);
		if (errno || *end || !argv[1][0] || argv[1][0] == '-')
			return cli_usage(c, action, "invalid ARENA \"%s\": a number or \"all\"", argv[1]);
	}
	if (jma_attach(c->s))
		return cli_fail_session(c);
	if (jma_get(c->s, "arenas.narenas", &narenas)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (idx != ARENAS_ALL && idx >= narenas.u) {
		rc = cli_error(EXIT_USAGE, "arena %lu does not exist (arenas.narenas is %u)", idx,
			       narenas.u);
		goto out;
	}
	snprintf(name, sizeof(name), "arena.%lu.%s", idx, action);
	if (read_mem(c, &before) || jma_mallctl(c->s, name, NULL, NULL, NULL, 0) ||
	    read_mem(c, &after)) {
		rc = cli_fail_session(c);
		goto out;
	}
	if (idx == ARENAS_ALL)
		printf("%s all arenas:\n", action);
	else
		printf("%s arena %lu:\n", action, idx);
	printf("  resident  %10s -> %-10s (%zu -> %zu bytes)\n", cli_bytes(before.resident, a, sizeof(a)),
	       cli_bytes(after.resident, b, sizeof(b)), before.resident, after.resident);
	printf("  retained  %10s -> %-10s (%zu -> %zu bytes)\n", cli_bytes(before.retained, a, sizeof(a)),
	       cli_bytes(after.retained, b, sizeof(b)), before.retained, after.retained);
	printf("  dirty     %10zu -> %-10zu pages\n", before.dirty, after.dirty);
out:
	if (jma_detach(c->s) && rc == EXIT_OK)
		rc = cli_fail_session(c);
	return rc;
}

int cmd_purge(struct cli *c, int argc, char **argv)
{
	return arena_action(c, argc, argv, "purge");
}

int cmd_decay(struct cli *c, int argc, char **argv)
{
	return arena_action(c, argc, argv, "decay");
}
